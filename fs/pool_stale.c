/* pool_stale: the kernel's one retry (docs/design.md "The LOOKUP/OPEN race"). The kernel reaches
 * an entry through what it cached (a name, a walk under way, a descriptor) and the entry may be
 * gone by the time the request comes: removed, with only the kernel's references keeping its
 * data. An OPEN of such an entry is answered ESTALE, and the kernel walks the path again from
 * the names, once (path_openat): a program that closed a file and opens its name again creates
 * a new one rather than reopening the old. Only OPEN answers so: the kernel retries ESTALE from
 * an open, not from every call.
 *
 * What the retry looks up keeps its name until that thread's OPEN comes (POOL_RETRY_GRACE_MS at
 * most, for a thread killed in between), whoever else opens and closes it meanwhile: else a file
 * whose last user closes between the retry's LOOKUP and its OPEN would be opened without its
 * name, while the program asked for the file of that name. So the retry's OPEN meets a gone
 * entry only when it walked no name to it (a descriptor: `/proc/PID/fd/N`, which reaches the same
 * entry again) or the keep ran out: then the nameless file opens, as tmpfs opens a file unlinked
 * between two steps. Any other gone entry a thread meets is a new open, answered ESTALE again,
 * even if an earlier retry of that thread ended in an error (ENOENT: the name went).
 *
 * A slot is the last ESTALE of a thread: what was answered, and what its retry looked up. It
 * ends when the thread opens or makes an entry, or, only while every slot is live, when a newer
 * ESTALE needs it: a retry waiting between its LOOKUP and its OPEN must not lose its keep to
 * other threads' retries that came and went meanwhile. Every function runs with the pool lock
 * held. */
#include <errno.h>

#include "pool_internal.h"

/* The slot of `tid`'s ESTALE, or -1: no scan while no slot is live (most requests). */
static int stale_slot(const struct stale_threads *s, pid_t tid)
{
	for (unsigned i = 0; s->live && i < POOL_STALE_SLOTS; i++)
		if (s->tid[i] == tid)
			return (int)i;
	return -1;
}

/* The keep on `ino` is over unless another thread's retry looked it up too. */
static void end_keep(struct pool *p, uint64_t ino)
{
	struct node *n;

	for (unsigned i = 0; i < POOL_STALE_SLOTS; i++)
		if (p->stale.tid[i] && p->stale.found[i] == ino)
			return;
	n = pool_node(p, ino);
	if (n && n->retry_until_ms) {
		n->retry_until_ms = 0;
		pool_mark(p, n); /* unused meanwhile: it goes now, not when the keep runs out */
	}
}

/* Empty slot `i`, ending the keep its retry made. */
static void clear_slot(struct pool *p, int i)
{
	struct stale_threads *s = &p->stale;
	uint64_t found = s->found[i];

	s->tid[i] = 0;
	s->answered[i] = 0;
	s->found[i] = 0;
	s->answered_at[i] = 0;
	s->live--;
	if (found)
		end_keep(p, found);
}

/* A free slot, or the oldest live one emptied: 64 threads in a retry at once is a machine far
 * busier than a retry's few microseconds allow for. */
static int take_slot(struct pool *p)
{
	struct stale_threads *s = &p->stale;
	unsigned oldest = 0;

	for (unsigned i = 0; i < POOL_STALE_SLOTS; i++) {
		if (!s->tid[i])
			return (int)i;
		if (s->answered_at[i] < s->answered_at[oldest])
			oldest = i;
	}
	clear_slot(p, (int)oldest);
	return (int)oldest;
}

int pool_stale_answer(struct pool *p, pid_t tid, uint64_t ino)
{
	struct stale_threads *s = &p->stale;
	int i;

	/* A request without a thread (tid 0: a caller outside the daemon's pid namespace) has no
	 * retry to tell apart. */
	if (tid == 0)
		return 0;
	i = stale_slot(s, tid);
	if (i >= 0 && (s->answered[i] == ino || s->found[i] == ino))
		return 0; /* the retry, through a descriptor or after its keep ran out */
	if (i >= 0)
		clear_slot(p, i); /* an earlier retry of this thread is over */
	i = take_slot(p);
	s->tid[i] = tid;
	s->answered[i] = ino;
	s->found[i] = 0;
	s->answered_at[i] = ++s->answers;
	s->live++;
	return -ESTALE;
}

void pool_stale_lookup(struct pool *p, pid_t tid, struct node *n)
{
	/* A failed LOOKUP does not end the retry: the kernel revalidates a cached name with one
	 * LOOKUP and, when that fails, looks the name up afresh with another. */
	int i = n ? stale_slot(&p->stale, tid) : -1;

	if (i >= 0) {
		p->stale.found[i] = n->ino;
		n->retry_until_ms = pool_now_ms() + POOL_RETRY_GRACE_MS;
	}
}

void pool_stale_done(struct pool *p, pid_t tid)
{
	int i = stale_slot(&p->stale, tid);

	if (i >= 0)
		clear_slot(p, i);
}
