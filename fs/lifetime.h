/* lifetime: the removal rule of docs/interface.md "Lifetime", as a pure function of one node's counters.
 *
 * The pool feeds it what it knows about a node (open handles, a possibly-live mapping, holds on the
 * node and above it, children) and applies the verdict. Nothing here touches FUSE, files or locks,
 * so every transition is unit-tested without a mount (tests/unit/test_lifetime.c). */
#ifndef POOLFS_LIFETIME_H
#define POOLFS_LIFETIME_H

#include <stdbool.h>
#include <stdint.h>

struct lifetime {
	uint32_t opens;	   /* open file or folder handles (RELEASE not yet seen) */
	uint32_t holds;	   /* explicit holds on this node */
	uint32_t children; /* folders: entries below */
	/* The kernel's references: LOOKUP-type replies minus FORGETs. While any is left the kernel
	 * may still send requests for the node (a path walk that reached it before its last name
	 * went goes on to OPEN it), so its data stays (docs/design.md "The LOOKUP/OPEN race"). */
	uint64_t lookups;
	bool is_dir;
	bool is_root;	   /* the pool root: never removed */
	bool linked;	   /* has a name in the tree */
	bool armed;	   /* folders: has had a child or a hold, so emptiness now means "done" */
	bool maybe_mapped; /* the data path cannot yet rule out a live mapping */
	bool removed;	   /* destroyed: backing gone; freed in the same lock section */
};

enum lifetime_verdict {
	LIFETIME_KEEP,	  /* in use (or nothing to do) */
	LIFETIME_REMOVE,  /* unused and linked: unlink the name, then destroy */
	LIFETIME_DESTROY, /* unused, unlinked and forgotten by the kernel: destroy the data */
};

/* True while something listed in docs/interface.md "Lifetime" still uses the node. held_above: a hold on a
 * folder above it (a folder hold keeps its whole subtree). */
bool lifetime_in_use(const struct lifetime *l, bool held_above);

/* What the pool must do with the node now. */
enum lifetime_verdict lifetime_decide(const struct lifetime *l, bool held_above);

/* Destroyed, forgotten and closed: the node's memory can go. */
bool lifetime_can_free(const struct lifetime *l);

#endif
