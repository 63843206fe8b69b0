/* npy_v1: hand-made .npy 1.0 headers around any dict text, for the tests of the .npy reader
 * (test_npy_header, test_lib_local); numpy itself writes the well-formed ones elsewhere. */
#ifndef POOLFS_NPY_V1_H
#define POOLFS_NPY_V1_H

#include <stddef.h>

/* The magic, version 1.0, the header length, dict and spaces up to a multiple of align, then
 * '\n', into out: the header's length, or 0 if it would not fit in cap bytes. */
size_t npy_v1_wrap(const char *dict, size_t align, unsigned char *out, size_t cap);

#endif
