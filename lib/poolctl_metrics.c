/* poolctl_metrics: `poolctl metrics`: reads each pool's texts, has metrics_text.c write them, and
 * puts the result where node_exporter's textfile collector reads it (see poolctl_metrics.h). */
#include "poolctl_metrics.h"
#include "metrics_text.h"
#include "poolfs_names.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

/* xattr `name` of `path` as a string in `buf` (POOLFS_XATTR_VALUE_MAX + 1 bytes): 0 or -errno. */
static int read_text(const char *path, const char *name, char *buf)
{
	ssize_t n = getxattr(path, name, buf, POOLFS_XATTR_VALUE_MAX);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/* Read one pool into `p`: 0, or 1 if it did not answer (reported). */
static int read_pool(struct metrics_pool *p, char *buf)
{
	int r = read_text(p->mountpoint, POOLFS_XATTR_STAT, buf);

	if (r == -ENODATA || r == -EOPNOTSUPP) {
		fprintf(stderr, "poolctl: metrics: %s: not a poolfs pool\n", p->mountpoint);
		return 1;
	}
	if (r == 0 && (r = metrics_parse_stat(p, buf)) < 0)
		metrics_pool_clear(p);
	if (r < 0) {
		fprintf(stderr, "poolctl: metrics: %s: %s: %s\n", p->mountpoint, POOLFS_XATTR_STAT,
			strerror(-r));
		return 1;
	}
	/* The daemon's counters are the pool owner's (and root's) to read: others get their own
	 * usage only, as from poolctl stat. */
	static const char *const owner_texts[] = {POOLFS_XATTR_COUNTERS, POOLFS_XATTR_OPS};
	for (int i = 0; i < 2; i++) {
		r = read_text(p->mountpoint, owner_texts[i], buf);
		if (r == -EACCES || r == -EPERM || r == -ENODATA)
			continue;
		if (r == 0)
			r = i == 0 ? metrics_parse_counters(p, buf) : metrics_parse_ops(p, buf);
		if (r < 0) {
			fprintf(stderr, "poolctl: metrics: %s: %s: %s\n", p->mountpoint,
				owner_texts[i], strerror(-r));
			return 1;
		}
	}
	return 0;
}

/* Write to a new file next to `output`, then rename it over `output`. 0 or 1 (reported). */
static int write_file(const char *output, const struct metrics_pool *pools, size_t n)
{
	char tmp[PATH_MAX];
	const char *slash = strrchr(output, '/');
	int fd, r;
	FILE *f;

	/* A name the textfile collector skips (it reads *.prom only) in the same folder. */
	r = slash ? snprintf(tmp, sizeof(tmp), "%.*s/.%s.XXXXXX", (int)(slash - output), output,
			     slash + 1)
		  : snprintf(tmp, sizeof(tmp), ".%s.XXXXXX", output);
	if (r < 0 || (size_t)r >= sizeof(tmp)) {
		fprintf(stderr, "poolctl: metrics: %s: %s\n", output, strerror(ENAMETOOLONG));
		return 1;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		fprintf(stderr, "poolctl: metrics: %s: %s\n", tmp, strerror(errno));
		return 1;
	}
	f = fdopen(fd, "w");
	if (!f) {
		r = -errno;
		close(fd);
		goto fail;
	}
	/* Readable by node_exporter, which runs as its own user. */
	if (fchmod(fd, 0644) < 0) {
		r = -errno;
		fclose(f);
		goto fail;
	}
	r = metrics_write(f, pools, n);
	if (fclose(f) != 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, output) < 0)
		r = -errno;
	if (r == 0)
		return 0;
fail:
	fprintf(stderr, "poolctl: metrics: %s: %s\n", output, strerror(-r));
	unlink(tmp);
	return 1;
}

/* The mountpoints of every pool in this mount namespace, NULL-terminated; NULL if unreadable
 * (reported). */
static char **all_pools(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *text = NULL, **mounts = NULL;
	size_t len = 0;
	int r;

	if (!f) {
		fprintf(stderr, "poolctl: metrics: /proc/self/mountinfo: %s\n", strerror(errno));
		return NULL;
	}
	/* The whole file at once: mountinfo is made as it is read, and lines may be long. */
	if (getdelim(&text, &len, '\0', f) < 0) {
		free(text);
		text = strdup("");
	}
	fclose(f);
	r = text ? metrics_find_mounts(text, &mounts) : -ENOMEM;
	free(text);
	if (r < 0) {
		fprintf(stderr, "poolctl: metrics: /proc/self/mountinfo: %s\n", strerror(-r));
		return NULL;
	}
	return mounts;
}

int poolctl_metrics(int n, char **paths, bool all, const char *output)
{
	char **mounts = all ? all_pools() : NULL, *buf = malloc(POOLFS_XATTR_VALUE_MAX + 1);
	size_t nall = 0, count = 0;
	struct metrics_pool *pools = NULL;
	int status = 0;

	if (all && !mounts) {
		status = 1;
		goto out;
	}
	if (!buf)
		goto out_fail;
	while (mounts && mounts[nall])
		nall++;
	pools = calloc((size_t)n + nall + 1, sizeof(*pools));
	if (!pools)
		goto out_fail;
	for (int i = 0; i < n; i++)
		pools[count++].mountpoint = paths[i];
	for (size_t i = 0; i < nall; i++) {
		bool given = false; /* a pool named and found: once, or its series would repeat */
		for (int k = 0; k < n && !given; k++)
			given = strcmp(paths[k], mounts[i]) == 0;
		if (!given)
			pools[count++].mountpoint = mounts[i];
	}
	for (size_t i = 0; i < count; i++)
		status |= read_pool(&pools[i], buf);
	if (output)
		status |= write_file(output, pools, count);
	else if (metrics_write(stdout, pools, count) < 0 || fflush(stdout) != 0)
		status = 1;
	goto out;
out_fail:
	fprintf(stderr, "poolctl: metrics: %s\n", strerror(ENOMEM));
	status = 1;
out:
	for (size_t i = 0; pools && i < count; i++)
		metrics_pool_clear(&pools[i]);
	free(pools);
	free(buf);
	metrics_mounts_free(mounts);
	return status;
}
