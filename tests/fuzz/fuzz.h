/* Shared by the fuzz targets in tests/fuzz: the libFuzzer entry point every target defines, and the
 * oracle check. A target is one fuzz_<name>.c; it links with driver.c (gcc, the seed corpus as a
 * regression test) or with clang's libFuzzer (scripts/fuzz), unchanged.
 *
 * An oracle that fails aborts: libFuzzer then saves the input as a crasher, and the corpus driver
 * dies mid-run, which meson reports as a failed test.
 */
#ifndef POOLFS_FUZZ_H
#define POOLFS_FUZZ_H

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

#endif
