/* pool_stale: the kernel's one retry (docs/design.md "The LOOKUP/OPEN race"). The kernel reaches
 * an entry through what it cached (a name, a walk under way, a descriptor) and the entry may be
 * gone by the time the request comes: removed, with only the kernel's references keeping its
 * data. The first such request of a thread is answered ESTALE, and the kernel walks the path
 * again from the names, once: a program that closed a file and opens its name again creates a
 * new one rather than reopening the old. What that retry reaches is fresh, so if it is gone too,
 * it went after this thread looked, and the retry opens the nameless file, as tmpfs does for a
 * file unlinked between the two steps. Only OPEN answers so: the kernel retries ESTALE from an
 * open (path_openat), not from every call. But a file whose last user closes between the
 * retry's LOOKUP and its OPEN would then be opened without its name, while the program asked for
 * the file of that name: so what the retry looks up keeps its name until that thread's OPEN
 * comes (POOL_RETRY_GRACE_MS at most, for a thread killed in between), and the open finds it
 * named. Someone else's use does not end the keep: it may end again before the retry's OPEN.
 * A thread is in its retry until it opens or makes an entry, or 64 newer threads were answered
 * ESTALE; one whose retry ended in an error meets the nameless file at once the next time too,
 * which is what tmpfs gives a walk that raced an unlink, only less eager to look again. Every
 * function runs with the pool lock held. */
#include <errno.h>

#include "pool_internal.h"

/* The slot of `tid`'s ESTALE, or -1. */
static int stale_slot(const struct stale_threads *s, pid_t tid)
{
	for (unsigned i = 0; s->live && i < POOL_STALE_SLOTS; i++)
		if (s->tid[i] == tid)
			return (int)i;
	return -1;
}

int pool_stale_answer(struct pool *p, pid_t tid, int fresh)
{
	struct stale_threads *s = &p->stale;

	/* A request without a thread (tid 0) has no retry to tell apart. */
	if (tid == 0 || stale_slot(s, tid) >= 0)
		return fresh;
	if (!s->tid[s->next])
		s->live++;
	s->tid[s->next] = tid;
	s->found[s->next] = 0;
	s->next = (s->next + 1) % POOL_STALE_SLOTS;
	return -ESTALE;
}

void pool_stale_lookup(struct pool *p, pid_t tid, struct node *n)
{
	/* A failed LOOKUP does not end the retry: the kernel revalidates a cached name with one
	 * LOOKUP and, when that fails, looks the name up afresh with another. */
	int i = n && p->stale.live ? stale_slot(&p->stale, tid) : -1;

	if (i >= 0) {
		p->stale.found[i] = n->ino;
		n->retry_until_ms = pool_now_ms() + POOL_RETRY_GRACE_MS;
	}
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

void pool_stale_done(struct pool *p, pid_t tid)
{
	struct stale_threads *s = &p->stale;
	int i = stale_slot(s, tid);

	if (i >= 0) {
		uint64_t found = s->found[i];

		s->tid[i] = 0;
		s->found[i] = 0;
		s->live--;
		if (found)
			end_keep(p, found);
	}
}
