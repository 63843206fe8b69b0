/* poolstats: the pool's counters since the mount (see poolstats.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "poolstats.h"

static const char *const removal_names[REMOVED_COUNT] = {
	"other", "last_close", "last_unmap", "hold_ended", "unlink", "emptied",
};
static const char *const refusal_names[REFUSED_COUNT] = {"ENOSPC", "EDQUOT", "EACCES", "EPERM"};

const char *poolstats_removal_name(unsigned reason)
{
	return reason < REMOVED_COUNT ? removal_names[reason] : removal_names[REMOVED_OTHER];
}

void poolstats_removed(struct poolstats *s, unsigned reason)
{
	if (reason >= REMOVED_COUNT)
		reason = REMOVED_OTHER;
	atomic_fetch_add_explicit(&s->removed[reason], 1, memory_order_relaxed);
}

void poolstats_reply(struct poolstats *s, int err)
{
	int k;

	switch (err) {
	case ENOSPC:
		k = REFUSED_ENOSPC;
		break;
	case EDQUOT:
		k = REFUSED_EDQUOT;
		break;
	case EACCES:
		k = REFUSED_EACCES;
		break;
	case EPERM:
		k = REFUSED_EPERM;
		break;
	default:
		return;
	}
	atomic_fetch_add_explicit(&s->refused[k], 1, memory_order_relaxed);
}

void poolstats_gauge(atomic_int_fast64_t *g, int delta)
{
	atomic_fetch_add_explicit(g, delta, memory_order_relaxed);
}

/* Append one line; -ERANGE if it does not fit. */
static int put(char *buf, size_t len, size_t *used, const char *name, const char *key, int64_t v)
{
	int w = snprintf(buf + *used, len - *used, "%s%s%s %" PRId64 "\n", name, key ? " " : "",
			 key ? key : "", v);

	if (w < 0 || (size_t)w >= len - *used)
		return -ERANGE;
	*used += (size_t)w;
	return 0;
}

int poolstats_format(const struct poolstats *s, char *buf, size_t len)
{
	size_t used = 0;
	int r = 0;

	/* A gauge read between a rise and its fall on two threads may dip below 0 for a moment. */
	int64_t gauges[3] = {atomic_load(&s->open_handles), atomic_load(&s->maybe_mapped),
			     atomic_load(&s->held)};
	static const char *const gauge_names[3] = {"open_handles", "maybe_mapped", "held"};

	if (len)
		buf[0] = '\0';
	for (int i = 0; i < 3 && r == 0; i++)
		r = put(buf, len, &used, gauge_names[i], NULL, gauges[i] < 0 ? 0 : gauges[i]);
	for (int i = 0; i < REMOVED_COUNT && r == 0; i++)
		r = put(buf, len, &used, "removed", removal_names[i],
			(int64_t)atomic_load(&s->removed[i]));
	for (int i = 0; i < REFUSED_COUNT && r == 0; i++)
		r = put(buf, len, &used, "refused", refusal_names[i],
			(int64_t)atomic_load(&s->refused[i]));
	if (r == 0)
		r = put(buf, len, &used, "denied", NULL, (int64_t)atomic_load(&s->denied));
	if (r == 0)
		r = put(buf, len, &used, "denied_logged", NULL,
			(int64_t)atomic_load(&s->denied_logged));
	if (r == 0)
		r = put(buf, len, &used, "proof_probes", NULL,
			(int64_t)atomic_load(&s->proof_probes));
	return r < 0 ? r : (int)used;
}
