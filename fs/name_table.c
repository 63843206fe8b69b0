/* name_table: the name table (see name_table.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "name_table.h"

#define NAMES_FIRST_BUCKETS 1024

/* The name table's chains hold `struct name`s. */
#define NAME_OF_LINK(l) ((struct name *)((char *)(l)-offsetof(struct name, hash)))

/* FNV-1a over the folder's address and the text: a folder keeps its ends for its whole life. */
static size_t name_hash(const struct name_ends *dir, const char *text)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)(uintptr_t)dir;

	for (; *text; text++)
		h = (h ^ (unsigned char)*text) * 1099511628211ull;
	return (size_t)(h ^ (h >> 29));
}

int names_init(struct name_table *t, fault_alloc_fn alloc, void *alloc_ctx)
{
	t->dead = NULL;
	return hash_init(&t->hash, NAMES_FIRST_BUCKETS, alloc, alloc_ctx);
}

void names_destroy(struct name_table *t)
{
	if (t->hash.buckets)
		hash_settle(&t->hash);
	for (size_t b = 0; t->hash.buckets && b < t->hash.nbuckets; b++) {
		struct hash_link *l = t->hash.buckets[b], *next;
		for (; l; l = next) {
			next = l->next;
			free(NAME_OF_LINK(l));
		}
	}
	hash_destroy(&t->hash);
	names_free_list(names_take_dead(t));
}

struct name *name_new(const char *text, fault_alloc_fn alloc, void *ctx)
{
	size_t len = strlen(text);
	struct name *nm = alloc(ctx, FAULT_HERE, sizeof(*nm) + len + 1, false);

	if (!nm)
		return NULL;
	nm->len = len;
	memcpy(nm->text, text, len + 1);
	return nm;
}

/* A name is in two lists: its folder's (by_folder) and its entry's. */
enum { NEXT, PREV };

static struct name **links(struct name *nm, bool by_folder)
{
	return by_folder ? nm->sib : nm->alias;
}

static void list_push(struct name **head, struct name *nm, bool by_folder)
{
	links(nm, by_folder)[PREV] = NULL;
	links(nm, by_folder)[NEXT] = *head;
	if (*head)
		links(*head, by_folder)[PREV] = nm;
	*head = nm;
}

static void list_take(struct name **head, struct name *nm, bool by_folder)
{
	struct name **l = links(nm, by_folder);

	if (l[PREV])
		links(l[PREV], by_folder)[NEXT] = l[NEXT];
	else
		*head = l[NEXT];
	if (l[NEXT])
		links(l[NEXT], by_folder)[PREV] = l[PREV];
}

void names_attach(struct name_table *t, struct name *nm, struct name_ends *dir,
		  struct name_ends *entry)
{
	nm->dir = dir;
	nm->entry = entry;
	hash_insert(&t->hash, &nm->hash, name_hash(dir, nm->text));
	list_push(&dir->children, nm, true);
	dir->nchildren++;
	dir->gen++;
	dir->subdirs += entry->is_dir;
	list_push(&entry->names, nm, false);
	entry->nnames++;
}

void names_detach(struct name_table *t, struct name *nm)
{
	struct name_ends *dir = nm->dir, *entry = nm->entry;

	if (!dir)
		return;
	hash_remove(&t->hash, &nm->hash);
	list_take(&dir->children, nm, true);
	dir->nchildren--;
	dir->gen++;
	dir->subdirs -= entry->is_dir;
	list_take(&entry->names, nm, false);
	entry->nnames--;

	/* The links stay readable (a walk may still step from it) but lead nowhere new. */
	nm->dir = NULL;
	nm->alias_next = nm->alias_prev = NULL;
	nm->dead_next = t->dead;
	t->dead = nm;
}

struct name *names_find(const struct name_table *t, const struct name_ends *dir, const char *text)
{
	size_t hash = name_hash(dir, text);
	struct hash_walk w;

	for (struct hash_link *l = hash_first(&t->hash, hash, &w); l; l = hash_next(&w, l)) {
		struct name *nm = NAME_OF_LINK(l);

		if (l->hash == hash && nm->dir == dir && strcmp(nm->text, text) == 0)
			return nm;
	}
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
		struct name *next = list->dead_next;
		free(list);
		list = next;
	}
}
