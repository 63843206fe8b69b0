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

const uint64_t opstats_bucket_ns[OPSTATS_BUCKETS - 1] = {
	10000,	 25000,	  50000,    100000,   250000,	 500000,     1000000,
	2500000, 5000000, 10000000, 25000000, 100000000, 1000000000,
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

static void hist_add(struct opstats_hist *h, uint64_t ns)
{
	int b = 0;

	while (b < OPSTATS_BUCKETS - 1 && ns > opstats_bucket_ns[b])
		b++;
	atomic_fetch_add_explicit(&h->bucket[b], 1, memory_order_relaxed);
	if (ns)
		atomic_fetch_add_explicit(&h->sum_ns, ns, memory_order_relaxed);
}

static void hist_reset(struct opstats_hist *h)
{
	for (int i = 0; i < OPSTATS_BUCKETS; i++)
		atomic_store(&h->bucket[i], 0);
	atomic_store(&h->sum_ns, 0);
}

void opstats_time(struct opstats *s, enum opstat op, uint64_t start_ns)
{
	uint64_t took = opstats_now() - start_ns;

	atomic_fetch_add_explicit(&s->ns[op], took, memory_order_relaxed);
	hist_add(&s->latency, took);
}

void opstats_lock_wait(struct opstats *s, uint64_t ns)
{
	hist_add(&s->lock_wait, ns);
}

void opstats_reset(struct opstats *s)
{
	for (int i = 0; i < OPSTAT_COUNT; i++) {
		atomic_store(&s->count[i], 0);
		atomic_store(&s->ns[i], 0);
	}
	hist_reset(&s->latency);
	hist_reset(&s->lock_wait);
}

/* One histogram's lines (opstats_format_latency), appended at buf + *used. */
static int hist_format(const struct opstats_hist *h, const char *name, char *buf, size_t len,
		       size_t *used)
{
	uint64_t cumulative = 0;
	int w;

	for (int b = 0; b <= OPSTATS_BUCKETS; b++) {
		if (b < OPSTATS_BUCKETS)
			cumulative += atomic_load(&h->bucket[b]);
		if (b < OPSTATS_BUCKETS - 1)
			w = snprintf(buf + *used, len - *used, "%s %" PRIu64 " %" PRIu64 "\n", name,
				     opstats_bucket_ns[b], cumulative);
		else if (b == OPSTATS_BUCKETS - 1)
			w = snprintf(buf + *used, len - *used, "%s inf %" PRIu64 "\n", name,
				     cumulative);
		else
			w = snprintf(buf + *used, len - *used, "%s_sum_ns %" PRIu64 "\n", name,
				     (uint64_t)atomic_load(&h->sum_ns));
		if (w < 0 || (size_t)w >= len - *used)
			return -ERANGE;
		*used += (size_t)w;
	}
	return 0;
}

int opstats_format_latency(const struct opstats *s, char *buf, size_t len)
{
	size_t used = 0;
	int r = hist_format(&s->latency, "latency", buf, len, &used);

	if (r == 0)
		r = hist_format(&s->lock_wait, "lock_wait", buf, len, &used);
	return r < 0 ? r : (int)used;
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
