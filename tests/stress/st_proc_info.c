/* stress_support: what readdir tells about the pool (folder listings, waiting for a folder to
 * empty) and what the daemon's descriptors point at; its RSS and descriptor count are
 * fs/procfs.c's, as the daemon reads them. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "stress.h"

int list_dir(const char *dir, char *out, size_t outlen)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	size_t used = 0;

	if (out && outlen)
		out[0] = '\0';
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (out && used + strlen(e->d_name) + 2 < outlen) {
			used += (size_t)snprintf(out + used, outlen - used, "%s%s", n ? "," : "",
						 e->d_name);
		}
		n++;
	}
	closedir(d);
	return n;
}

int wait_dir_empty(const char *dir, int timeout_ms, char *left, size_t len)
{
	long long deadline = pool_now_ms() + timeout_ms;

	for (;;) {
		int n = list_dir(dir, left, len);

		if (n <= 0)
			return n;
		if (pool_now_ms() >= deadline)
			return n;
		sleep_us(10000);
	}
}

void proc_fd_dump(pid_t pid, const char *title)
{
	char path[64];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return;
	fprintf(stderr, "# %s: descriptors of daemon %d:\n", title, (int)pid);
	while ((e = readdir(d))) {
		char link[PATH_MAX + 64], target[PATH_MAX];
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", path, e->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		fprintf(stderr, "#   %s -> %s\n", e->d_name, target);
	}
	closedir(d);
}
