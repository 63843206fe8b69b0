/* Shared by the fuzz targets in tests/fuzz: the libFuzzer entry point every target defines, and the
 * oracle check. A target is one fuzz_<name>.c; it links with driver.c (gcc, the seed corpus as a
 * regression test) or with clang's libFuzzer (scripts/fuzz), unchanged.
 *
 * An oracle that fails aborts: libFuzzer then saves the input as a crasher, and the corpus driver
 * dies mid-run, which meson reports as a failed test.
 */
#ifndef POOLFS_FUZZ_H
#define POOLFS_FUZZ_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: oracle failed: %s\n", __FILE__, __LINE__, #cond);  \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* The input as a heap C string (an embedded NUL ends it early, as it would for a real caller).
 * Aborts when out of memory: a fuzz run has no better answer. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = calloc(size + 1, 1);

	FUZZ_CHECK(s != NULL);
	if (size)
		memcpy(s, data, size);
	return s;
}

/* A parser of one of the daemon's answers (user.poolfs.refs, user.poolfs.stat) and what its
 * oracles need. The parsed structure is a void * here; each target's functions know its type. */
struct fuzz_answer {
	size_t size;	 /* of the parsed structure */
	size_t text_max; /* room for any text format writes */
	int (*parse)(const char *text, size_t len, void *out);
	/* a and b hold the same; exact: also what a text written back leaves out */
	void (*same)(const void *a, const void *b, int exact);
	/* what was parsed from the input data is self-consistent */
	void (*consistent)(const void *parsed, const uint8_t *data, size_t size);
	/* the answer for parsed as the daemon writes it: its length */
	size_t (*format)(const void *parsed, char *buf, size_t cap);
	/* more oracles on the written-back answer parsed again (NULL: none) */
	void (*written_back)(const void *parsed);
};

/* The oracles of every answer's parser: only 0 or -EPROTO; the result does not depend on what
 * *out held before; an accepted answer is self-consistent; and written back the way the daemon
 * writes it, it parses to the same structure. */
static inline void fuzz_answer(const struct fuzz_answer *k, const uint8_t *data, size_t size)
{
	void *a = malloc(k->size), *b = malloc(k->size), *c = malloc(k->size);
	char *text = malloc(k->text_max);

	FUZZ_CHECK(a && b && c && text);
	memset(a, 0x00, k->size);
	memset(b, 0xa5, k->size);
	int ra = k->parse((const char *)data, size, a);
	int rb = k->parse((const char *)data, size, b);
	FUZZ_CHECK(ra == rb);
	FUZZ_CHECK(ra == 0 || ra == -EPROTO);
	if (ra == 0) {
		k->same(a, b, 1);
		k->consistent(a, data, size);
		size_t n = k->format(a, text, k->text_max);
		FUZZ_CHECK(k->parse(text, n, c) == 0);
		k->same(a, c, 0);
		if (k->written_back)
			k->written_back(c);
	}
	free(a);
	free(b);
	free(c);
	free(text);
}

#endif
