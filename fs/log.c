/* log: stderr or syslog lines (see log.h).
 *
 * The sink is process-wide like stderr itself (libfuse's log hook has no context argument), so it
 * lives here rather than in the pool object: one small struct, changed once by log_to_syslog()
 * before the helper threads start, its socket guarded by a mutex. */
#include <errno.h>
#include <fuse_log.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "log.h"

static struct {
	pthread_mutex_t lock;
	bool syslog;
	int fd; /* connected datagram socket, -1 until the first line */
	struct sockaddr_un addr;
} sink = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

static int syslog_connect(void)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)&sink.addr, sizeof(sink.addr)) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

/* RFC 3164 framing, as glibc's syslog() writes it: "<PRI>Mmm dd hh:mm:ss poolfs[PID]: text". */
static void syslog_send(int prio, const char *text)
{
	char msg[1200], stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	int n;

	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%b %e %H:%M:%S", &tm);
	n = snprintf(msg, sizeof(msg), "<%d>%s poolfs[%d]: %s", LOG_DAEMON | prio, stamp,
		     (int)getpid(), text);
	if (n < 0)
		return;
	pthread_mutex_lock(&sink.lock);
	for (int attempt = 0; attempt < 2; attempt++) {
		if (sink.fd < 0)
			sink.fd = syslog_connect();
		if (sink.fd < 0)
			break;
		if (send(sink.fd, msg, strnlen(msg, sizeof(msg)), MSG_NOSIGNAL) >= 0)
			break;
		/* The log daemon restarted (ECONNREFUSED, ENOTCONN): reconnect once. */
		close(sink.fd);
		sink.fd = -1;
	}
	pthread_mutex_unlock(&sink.lock);
}

/* One line to the sink; `text` may end in newlines (libfuse's do), which are dropped. */
static void log_line(int prio, const char *level, const char *text)
{
	int n = (int)strlen(text);

	while (n > 0 && text[n - 1] == '\n')
		n--;
	if (sink.syslog) {
		char line[1024];

		snprintf(line, sizeof(line), "%s%.*s", level, n, text);
		syslog_send(prio, line);
		return;
	}
	/* One fprintf per line so threads do not interleave inside a line. */
	fprintf(stderr, "poolfs: %s%.*s\n", level, n, text);
}

static void vlog(int prio, const char *level, const char *fmt, va_list ap)
{
	char line[1024];

	/* Every caller has done va_start (a clang-tidy 14 false positive when it checks several
	 * files in one run, llvm/llvm-project#40656). */
	vsnprintf(line, sizeof(line), fmt, ap); /* NOLINT(clang-analyzer-valist.Uninitialized) */
	log_line(prio, level, line);
}

/* The four levels, each vlog with its priority and prefix. */
#define LOG_AT(name, prio, prefix)                                                                 \
	void name(const char *fmt, ...)                                                            \
	{                                                                                          \
		va_list ap;                                                                        \
		va_start(ap, fmt);                                                                 \
		vlog(prio, prefix, fmt, ap);                                                       \
		va_end(ap);                                                                        \
	}

LOG_AT(log_error, LOG_ERR, "error: ")
LOG_AT(log_warn, LOG_WARNING, "warning: ")
LOG_AT(log_info, LOG_INFO, "")
LOG_AT(log_debug, LOG_DEBUG, "")

void log_to_syslog(const char *socket_path)
{
	const char *path = socket_path && *socket_path ? socket_path : "/dev/log";

	pthread_mutex_lock(&sink.lock);
	memset(&sink.addr, 0, sizeof(sink.addr));
	sink.addr.sun_family = AF_UNIX;
	snprintf(sink.addr.sun_path, sizeof(sink.addr.sun_path), "%s", path);
	sink.syslog = true;
	pthread_mutex_unlock(&sink.lock);
}

/* libfuse writes some lines in pieces (its "unknown option(s)" message takes four calls): each
 * thread gathers pieces until the newline, so the log gets whole lines. */
static void fuse_message(enum fuse_log_level level, const char *fmt, va_list ap)
{
	static const int prio[] = {LOG_EMERG,	LOG_ALERT,  LOG_CRIT, LOG_ERR,
				   LOG_WARNING, LOG_NOTICE, LOG_INFO, LOG_DEBUG};
	static _Thread_local char pending[1024];
	int p = (unsigned)level < ARRAY_SIZE(prio) ? prio[level] : LOG_INFO;
	size_t used = strnlen(pending, sizeof(pending));

	/* As in vlog(): the caller (libfuse's fuse_log) has started ap. */
	/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
	vsnprintf(pending + used, sizeof(pending) - used, fmt, ap);
	used = strnlen(pending, sizeof(pending));
	if (used == 0 || (pending[used - 1] != '\n' && used < sizeof(pending) - 1))
		return;
	/* libfuse's messages carry their own "fuse: " prefix where they need one. */
	log_line(p, p <= LOG_ERR ? "error: " : "", pending);
	pending[0] = '\0';
}

void log_take_fuse_messages(void)
{
	fuse_set_log_func(fuse_message);
}

void log_close(void)
{
	pthread_mutex_lock(&sink.lock);
	if (sink.fd >= 0)
		close(sink.fd);
	sink.fd = -1;
	pthread_mutex_unlock(&sink.lock);
}
