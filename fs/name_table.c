/* name_table: the name table (see name_table.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "name_table.h"

#define NAMES_FIRST_BUCKETS 1024

/* FNV-1a over the folder's address and the text: a folder keeps its ends for its whole life. */
static size_t name_hash(const struct name_ends *dir, const char *text)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)(uintptr_t)dir;

	for (; *text; text++)
		h = (h ^ (unsigned char)*text) * 1099511628211ull;
	return (size_t)(h ^ (h >> 29));
}

int names_init(struct name_table *t)
{
	memset(t, 0, sizeof(*t));
	t->buckets = calloc(NAMES_FIRST_BUCKETS, sizeof(struct name *));
	if (!t->buckets)
		return -ENOMEM;
	t->nbuckets = NAMES_FIRST_BUCKETS;
	return 0;
}

void names_destroy(struct name_table *t)
{
	for (size_t b = 0; t->buckets && b < t->nbuckets; b++)
		names_free_list(t->buckets[b]);
	free(t->buckets);
	t->buckets = NULL;
	t->nbuckets = t->count = 0;
	names_free_list(names_take_dead(t));
}

struct name *name_new(const char *text, void *(*alloc)(void *ctx, size_t size), void *ctx)
{
	size_t len = strlen(text);
	struct name *nm = alloc(ctx, sizeof(*nm) + len + 1);

	if (!nm)
		return NULL;
	nm->len = len;
	memcpy(nm->text, text, len + 1);
	return nm;
}

/* Double the buckets once the table is as full as it is wide. Failing is harmless: the old
 * table still works, with longer chains. */
static void names_grow(struct name_table *t)
{
	size_t nb = t->nbuckets * 2;
	struct name **grown;

	if (t->count < t->nbuckets)
		return;
	grown = calloc(nb, sizeof(struct name *));
	if (!grown)
		return;
	for (size_t b = 0; b < t->nbuckets; b++) {
		struct name *nm = t->buckets[b], *next;
		for (; nm; nm = next) {
			size_t to = name_hash(nm->dir, nm->text) & (nb - 1);
			next = nm->hash_next;
			nm->hash_next = grown[to];
			grown[to] = nm;
		}
	}
	free(t->buckets);
	t->buckets = grown;
	t->nbuckets = nb;
}

void names_attach(struct name_table *t, struct name *nm, struct name_ends *dir,
		  struct name_ends *entry)
{
	size_t b;

	names_grow(t);
	nm->dir = dir;
	nm->entry = entry;
	b = name_hash(dir, nm->text) & (t->nbuckets - 1);
	nm->hash_next = t->buckets[b];
	t->buckets[b] = nm;
	t->count++;

	nm->sib_prev = NULL;
	nm->sib_next = dir->children;
	if (dir->children)
		dir->children->sib_prev = nm;
	dir->children = nm;
	dir->nchildren++;
	dir->subdirs += entry->is_dir;

	nm->alias_prev = NULL;
	nm->alias_next = entry->names;
	if (entry->names)
		entry->names->alias_prev = nm;
	entry->names = nm;
	entry->nnames++;
}

void names_detach(struct name_table *t, struct name *nm)
{
	struct name_ends *dir = nm->dir, *entry = nm->entry;

	if (!dir)
		return;
	for (struct name **pp = &t->buckets[name_hash(dir, nm->text) & (t->nbuckets - 1)]; *pp;
	     pp = &(*pp)->hash_next) {
		if (*pp == nm) {
			*pp = nm->hash_next;
			t->count--;
			break;
		}
	}
	if (nm->sib_prev)
		nm->sib_prev->sib_next = nm->sib_next;
	else
		dir->children = nm->sib_next;
	if (nm->sib_next)
		nm->sib_next->sib_prev = nm->sib_prev;
	dir->nchildren--;
	dir->subdirs -= entry->is_dir;

	if (nm->alias_prev)
		nm->alias_prev->alias_next = nm->alias_next;
	else
		entry->names = nm->alias_next;
	if (nm->alias_next)
		nm->alias_next->alias_prev = nm->alias_prev;
	entry->nnames--;

	/* The links stay readable (a walk may still step from it) but lead nowhere new. */
	nm->dir = NULL;
	nm->alias_next = nm->alias_prev = NULL;
	nm->hash_next = t->dead;
	t->dead = nm;
}

struct name *names_find(const struct name_table *t, const struct name_ends *dir, const char *text)
{
	for (struct name *nm = t->buckets[name_hash(dir, text) & (t->nbuckets - 1)]; nm;
	     nm = nm->hash_next)
		if (nm->dir == dir && strcmp(nm->text, text) == 0)
			return nm;
	return NULL;
}

struct name *names_take_dead(struct name_table *t)
{
	struct name *dead = t->dead;

	t->dead = NULL;
	return dead;
}

void names_free_list(struct name *list)
{
	while (list) {
		struct name *next = list->hash_next;
		free(list);
		list = next;
	}
}
