/* hp_util: see hp_util.h. */
#include "hp_util.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#define TMPFS_MAGIC_NUMBER 0x01021994

long hp_pmd_kb(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	char line[512];
	int in = 0;
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		long v;
		char sp;

		if (sscanf(line, "%lx-%lx%c", &lo, &hi, &sp) == 3 && sp == ' ') {
			in = lo <= (unsigned long)addr && (unsigned long)addr < hi;
			if (in)
				kb = 0;
			continue;
		}
		if (in && (sscanf(line, "ShmemPmdMapped: %ld kB", &v) == 1 ||
			   sscanf(line, "FilePmdMapped: %ld kB", &v) == 1))
			kb += v;
	}
	fclose(f);
	return kb;
}

long hp_vmstat(const char *key)
{
	FILE *f = fopen("/proc/vmstat", "re");
	char name[64];
	long v, found = -1;

	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", name, &v) == 2)
		if (strcmp(name, key) == 0)
			found = v;
	fclose(f);
	return found;
}

int hp_store_holds(const struct pool_store *s, uint64_t ino)
{
	char path[96];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%016" PRIx64, s->path, ino);
	if (lstat(path, &st) == 0)
		return 1;
	return errno == ENOENT ? 0 : -errno;
}

long long hp_store_size(const struct pool_store *s)
{
	struct statfs sf;

	if (statfs(s->path, &sf) == -1)
		return -errno;
	return (long long)sf.f_blocks * sf.f_bsize;
}

int hp_store_watch(const struct pool_store *s)
{
	int fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);

	if (fd < 0)
		return -errno;
	if (inotify_add_watch(fd, s->path, IN_DELETE_SELF) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int hp_store_wait_gone(int watch, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	for (;;) {
		long long left = deadline - now_ms();
		struct pollfd pfd = {.fd = watch, .events = POLLIN};
		ssize_t n;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			return -errno;
		n = read(watch, buf, sizeof(buf));
		for (char *e = buf; n > 0 && e < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)e;

			if (ev->mask & (IN_UNMOUNT | IN_IGNORED))
				return 0;
			e += sizeof(*ev) + ev->len;
		}
	}
}
