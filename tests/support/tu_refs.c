/* test support: taking holds, reading user.poolfs.refs raw or parsed into counts and the
 * pool's entries from user.poolfs.stat (docs/interface.md "Extended attributes"), and the
 * closed files tests hold. One home for what the suites had each written. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "poolfs_names.h"
#include "testutil.h"

int hold(const char *path, const char *scope)
{
	return setxattr(path, POOLFS_XATTR_HOLD, scope, strlen(scope), 0);
}

ssize_t refs(const char *path, char *buf, size_t len)
{
	ssize_t n = getxattr(path, POOLFS_XATTR_REFS, buf, len - 1);

	if (n >= 0)
		buf[n] = '\0';
	return n;
}

int has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *s = text; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : NULL)
		if (strncmp(s, line, n) == 0 && (s[n] == '\n' || s[n] == '\0'))
			return 1;
	return 0;
}

int make_closed_file(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	if (write(fd, "hold me\n", 8) != 8) {
		int e = errno;

		close(fd);
		return -e;
	}
	return close(fd) == 0 ? 0 : -errno;
}

void tu_expect_refs_line(const char *path, int fd, const char *line, const char *file, int at)
{
	char text[8192];
	ssize_t n = fd >= 0 ? fgetxattr(fd, POOLFS_XATTR_REFS, text, sizeof(text) - 1)
			    : getxattr(path, POOLFS_XATTR_REFS, text, sizeof(text) - 1);
	const char *what = fd >= 0 ? "the descriptor" : path;

	if (n < 0)
		fail_msg("%s:%d: refs of %s: %s", file, at, what, errname(errno));
	text[n > 0 ? n : 0] = '\0';
	if (!has_line(text, line))
		fail_msg("%s:%d: refs of %s lack the line \"%s\":\n%s", file, at, what, line, text);
}

int refs_get(const char *path, struct refs *r)
{
	char copy[sizeof(r->text)];
	char *line, *save = NULL;

	r->opens = r->holds = 0;
	r->mapped = r->pins = r->others = 0;
	if (refs(path, r->text, sizeof(r->text)) < 0) {
		r->text[0] = '\0';
		return -errno;
	}
	memcpy(copy, r->text, sizeof(copy));
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char scope[256];

		if (sscanf(line, "opens %ld", &r->opens) == 1)
			continue;
		if (strcmp(line, "mapped yes") == 0) {
			r->mapped = 1;
			continue;
		}
		if (sscanf(line, "holds %ld", &r->holds) == 1)
			continue;
		if (sscanf(line, "hold %255s", scope) == 1) {
			if (strcmp(scope, POOLFS_SCOPE_WORD_PIN) == 0)
				r->pins++;
			else
				r->others++;
		}
	}
	return 0;
}

long long tu_pool_entries(const struct pool_fixture *p)
{
	char buf[8192] = ""; /* read into all but the last byte, so it stays a string */
	long long e;

	if (getxattr(p->mnt, POOLFS_XATTR_STAT, buf, sizeof(buf) - 1) < 0)
		fail_msg("getxattr(user.poolfs.stat): %s", errname(errno));
	if (strncmp(buf, "entries ", 8) != 0 || sscanf(buf + 8, "%lld", &e) != 1)
		fail_msg("user.poolfs.stat does not start with \"entries N\":\n%s", buf);
	return e;
}

void tu_wait_unused(const char *path, int timeout_ms)
{
	long long deadline = pool_now_ms() + timeout_ms;
	struct refs r;

	for (;;) {
		CHECK_0(refs_get(path, &r));
		if (r.opens == 0 && !r.mapped)
			return;
		if (pool_now_ms() >= deadline)
			fail_msg("%s: still in use after %d ms:\n%s", path, timeout_ms, r.text);
		pool_sleep_ms(2);
	}
}

void tu_wait_pool_entries(const struct pool_fixture *p, long long want, int timeout_ms)
{
	long long deadline = pool_now_ms() + timeout_ms;
	long long n;

	while ((n = tu_pool_entries(p)) != want) {
		if (pool_now_ms() >= deadline)
			fail_msg("the pool holds %lld entries after %d ms, want %lld", n,
				 timeout_ms, want);
		pool_sleep_ms(5);
	}
}
