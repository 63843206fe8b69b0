/* name_table: the name table. Every name in a pool names one entry in one folder; an entry may have
 * several names (hard links), a folder lists the names in it (docs/design.md "Names and
 * entries").
 *
 * The module knows folders and entries only by the `struct name_ends` each node embeds: it links
 * a name into its folder's list and its entry's list, finds a name by (folder, text) in the
 * daemon's hash table (hash_table.h), and keeps the counts those lists imply. It decides nothing (which names may exist, and
 * when an entry goes, are the pool's rules) and takes no lock (the pool lock covers it). Nothing
 * here calls up into the pool, so it is unit-tested on its own (tests/unit/test_name_table.c). */
#ifndef POOLFS_NAME_TABLE_H
#define POOLFS_NAME_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fault.h"
#include "hash_table.h"

/* The most names one entry may have: link() past it is EMLINK (ext4's bound). */
#define NAMES_MAX_PER_ENTRY 65000u

struct name;

/* The name side of a node: its own names, and (folders) the names in it. */
struct name_ends {
	struct name *names;    /* this entry's names, newest first */
	struct name *children; /* folders: the names in it, newest first */
	uint32_t nnames;
	uint32_t nchildren;
	uint32_t subdirs; /* folders: how many of the names in it name folders */
	bool is_dir;	  /* set at creation: a folder's name counts in its folder's subdirs */
	/* Folders: moved at every attach and detach in it, so that a walk of `children` that let
	 * go of the pool lock can tell that its place is still good (with nchildren). */
	uint16_t gen;
};

struct name {
	struct hash_link hash;	/* in the table by (folder, text) */
	struct name *dead_next; /* the dead list after detach */
	union {			/* the other names in the same folder */
		struct {
			struct name *sib_next, *sib_prev;
		};
		struct name *sib[2]; /* the same, for name_table.c's list functions */
	};
	union { /* the entry's other names */
		struct {
			struct name *alias_next, *alias_prev;
		};
		struct name *alias[2];
	};
	struct name_ends *dir;	 /* the folder it is in; NULL once detached */
	struct name_ends *entry; /* what it names */
	size_t len;
	char text[];
};

struct name_table {
	struct hash_table hash;
	/* Detached names, freed only once the caller says no pointer to them is left (after the
	 * pool lock is released): a walk over a folder may hold a pointer to a sibling that a
	 * removal elsewhere detached (docs/design.md "Names and entries"). */
	struct name *dead;
};

/* An empty table whose buckets come from `alloc` (fault.h). 0 or -ENOMEM. */
int names_init(struct name_table *t, fault_alloc_fn alloc, void *alloc_ctx);
/* Free every name, live or dead, and the table (accepts a table names_init never reached). */
void names_destroy(struct name_table *t);

/* A new, unattached name with a copy of `text` (at most 255 bytes, checked by the caller),
 * allocated by `alloc` (fault.h). NULL when out of memory. */
struct name *name_new(const char *text, fault_alloc_fn alloc, void *ctx);

/* Put `nm` (from name_new) in folder `dir`, naming `entry`. Cannot fail: a table that cannot
 * grow stays as it is, only slower. The caller made sure (dir, text) is free. */
void names_attach(struct name_table *t, struct name *nm, struct name_ends *dir,
		  struct name_ends *entry);
/* Take `nm` out of its folder and its entry's list; it goes to the dead list. */
void names_detach(struct name_table *t, struct name *nm);

/* The name `text` in `dir`, NULL if none. */
struct name *names_find(const struct name_table *t, const struct name_ends *dir, const char *text);

/* Hand over the dead names (the table forgets them), to be freed with names_free_list. */
struct name *names_take_dead(struct name_table *t);
void names_free_list(struct name *list);

#endif
