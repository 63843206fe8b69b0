/* log: stderr messages (see log.h). */
#include <stdarg.h>
#include <stdio.h>

#include "log.h"

static void vlog(const char *level, const char *fmt, va_list ap)
{
	char line[1024];

	/* Every caller has done va_start (a clang-tidy 14 false positive when it checks several
	 * files in one run, llvm/llvm-project#40656). */
	vsnprintf(line, sizeof(line), fmt, ap); /* NOLINT(clang-analyzer-valist.Uninitialized) */
	/* One fprintf per line so threads do not interleave inside a line. */
	fprintf(stderr, "poolfs: %s%s\n", level, line);
}

void log_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog("error: ", fmt, ap);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog("warning: ", fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}
