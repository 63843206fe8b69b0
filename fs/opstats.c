/* opstats: request counters (see opstats.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "opstats.h"

static const char *const names[OPSTAT_COUNT] = {
	"lookup",   "forget",	"getattr",     "setattr",     "access",	  "mknod",
	"mkdir",    "unlink",	"rmdir",       "rename",      "create",	  "open",
	"read",	    "write",	"flush",       "fsync",	      "release",  "fallocate",
	"opendir",  "readdir",	"readdirplus", "releasedir",  "fsyncdir", "statfs",
	"setxattr", "getxattr", "listxattr",   "removexattr", "other",
};

uint64_t opstats_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void opstats_count(struct opstats *s, enum opstat op)
{
	atomic_fetch_add_explicit(&s->count[op], 1, memory_order_relaxed);
}

void opstats_time(struct opstats *s, enum opstat op, uint64_t start_ns)
{
	atomic_fetch_add_explicit(&s->ns[op], opstats_now() - start_ns, memory_order_relaxed);
}

void opstats_reset(struct opstats *s)
{
	for (int i = 0; i < OPSTAT_COUNT; i++) {
		atomic_store(&s->count[i], 0);
		atomic_store(&s->ns[i], 0);
	}
}

int opstats_format(const struct opstats *s, char *buf, size_t len)
{
	uint64_t count[OPSTAT_COUNT], ns[OPSTAT_COUNT], total_count = 0, total_ns = 0;
	int order[OPSTAT_COUNT] = {0}, n = 0;
	size_t used = 0;
	int w;

	/* One snapshot, then sort by time spent (insertion sort: 29 entries). */
	for (int i = 0; i < OPSTAT_COUNT; i++) {
		count[i] = atomic_load(&s->count[i]);
		ns[i] = atomic_load(&s->ns[i]);
		if (!count[i])
			continue;
		int j = n++;
		while (j > 0 && ns[order[j - 1]] < ns[i]) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
		total_count += count[i];
		total_ns += ns[i];
	}
	for (int k = 0; k <= n; k++) {
		if (k < n)
			w = snprintf(buf + used, len - used, "%s %" PRIu64 " %" PRIu64 "\n",
				     names[order[k]], count[order[k]], ns[order[k]]);
		else
			w = snprintf(buf + used, len - used, "total %" PRIu64 " %" PRIu64 "\n",
				     total_count, total_ns);
		if (w < 0 || (size_t)w >= len - used)
			return -ERANGE;
		used += (size_t)w;
	}
	return (int)used;
}
