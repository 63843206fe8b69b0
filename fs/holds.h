/* holds: explicit holds on entries (docs/interface.md "Lifetime") and the scope language of user.poolfs.hold.
 *
 * A hold belongs to a user and to a node, and (except `pin`) to a *source*: the process, session
 * leader or cgroup whose end ends the hold. Sources are shared by every hold they end, so one pidfd
 * watches a process however many entries it holds. This module owns the hold records and their
 * two lists (per node, per source); it makes no system calls: the pool opens the watches. */
#ifndef POOLFS_HOLDS_H
#define POOLFS_HOLDS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "options.h"

enum hold_kind {
	HOLD_PIN,     /* until released, unlinked or unmounted */
	HOLD_PID,     /* until a process exits ("pid:N" and "process") */
	HOLD_SESSION, /* until a session leader exits */
	HOLD_CGROUP,  /* until a cgroup v2 group has no process left */
};

/* A parsed user.poolfs.hold value. For "process", kind is HOLD_PID and pid is 0: the pool fills in
 * the caller's process. */
struct hold_request {
	enum hold_kind kind;
	pid_t pid;
};

/* Parse a setxattr value ("pin", "process", "pid:N", "session", "cgroup"; one trailing NUL or
 * newline allowed). 0 or -EINVAL. */
int hold_request_parse(const char *value, size_t len, struct hold_request *out);

/* The autohold rule (mount option autohold=, docs/interface.md "Lifetime"): the holds a creator
 * gets on what it makes, in the order to try them; the first one that can be had is taken. A
 * session or cgroup hold falls back to the creator's process (a process in the root cgroup, or
 * one whose session cannot be watched): an entry made with autohold on should not depend on how
 * its creator was started. autohold=none gets none. Returns how many kinds are in `out`. */
size_t hold_autohold_kinds(enum autohold_choice choice, enum hold_kind out[2]);

struct hold;

struct hold_source {
	enum hold_kind kind; /* HOLD_PID, HOLD_SESSION or HOLD_CGROUP */
	pid_t pid;	     /* process or session leader */
	char *cgroup;	     /* cgroup v2 path relative to the cgroup2 root ("/a/b") */
	int fd;		     /* pidfd, or inotify fd watching cgroup.events; -1 if polled */
	unsigned long long
		start_time;	  /* polled processes: /proc/PID/stat start time, against reuse */
	bool ended;		  /* the process exited / the cgroup emptied */
	bool unchecked;		  /* cgroup: new, its first hold must check it is populated */
	struct hold *holds;	  /* holds this source ends */
	struct hold_source *next; /* in the pool's source list */
	void *pool;		  /* the pool, for the watch callback */
};

struct hold {
	void *node;		 /* the held entry (a struct node of the pool) */
	uid_t uid;		 /* who took it */
	struct hold_source *src; /* NULL for pin */
	struct hold *node_next;	 /* the node's holds */
	struct hold *src_next, *src_prev;
};

/* Link a new hold into its node's list and its source's list. */
void hold_link(struct hold **node_list, struct hold *h);
/* Unlink from both lists (the caller frees). */
void hold_unlink(struct hold **node_list, struct hold *h);
/* Count holds in a node's list. */
size_t hold_count(const struct hold *node_list);
/* Format a hold's scope for user.poolfs.refs ("pin", "pid:N", "session:N", "cgroup:/x"). */
int hold_format_scope(const struct hold *h, char *buf, size_t len);

#endif
