/* What only the tests/lib tests add to testutil.h: temporary directories, running a program and
 * capturing its output and exit status, and the .npy test patterns shared by the numpy round
 * trips on a plain directory and on a pool. Checks, the noreturn _fail and whole-binary TAP skips
 * (tu_skip_all) are testutil.h's.
 *
 * Declarations only: the bodies are in the libtest_support library (lt_fs.c, lt_run.c,
 * lt_npy.c, npy_roundtrip.c). */
#ifndef POOLFS_LIBTEST_H
#define POOLFS_LIBTEST_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "poolfs.h"
#include "poolfs_names.h"
#include "testutil.h"

#ifndef PYTHON
#define PYTHON "/usr/bin/python3" /* Debian's, with python3-numpy; the PATH one may lack numpy */
#endif

/* ---- paths and folders (lt_fs.c) ---- */

/* snprintf that must not truncate (aborts if it would): test paths are built with it. Going
 * through vsnprintf also keeps -Wformat-truncation from guessing at PATH_MAX-sized buffers. */
void libtest_fmt(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* mkdtemp under $TMPDIR (default /tmp): 0 or -errno. */
int libtest_tmpdir(char *buf, size_t len);
/* rm -rf path: 0 or -errno. */
int libtest_rmtree(const char *path);

/* ---- programs (lt_run.c) ---- */

struct run_result {
	int status;	 /* exit code; 128 + signal if killed; -1 if it could not run */
	char out[16384]; /* stdout, NUL-terminated (cut if longer) */
	char err[16384]; /* stderr, likewise */
};

/* Run argv[0] (a path) with argv, stdin from /dev/null, capturing stdout and stderr in memory
 * files (no pipes, so no deadlock however much it writes). Returns 0 (see r->status) or -errno. */
int libtest_run(char *const argv[], struct run_result *r);
/* Run prog with up to LIBTEST_RUNL_MAX arguments, ended by (char *)NULL (a bare NULL may be a
 * plain 0, the wrong type to read back with va_arg), into r: its exit status (r->status); fails
 * the test if it could not run at all. */
#define LIBTEST_RUNL_MAX 8
int libtest_runl(struct run_result *r, const char *prog, const char *a0, ...);
/* Whether /usr/bin/python3 can import numpy. */
bool libtest_have_numpy(void);

/* ---- .npy test patterns (lt_npy.c) ---- */

/* Element i (in memory order) of a test array of each dtype, as numpy computes it in
 * libtest_npy_py's expected(): keep the two in step. */
void libtest_npy_fill(struct poolfs_array *a);
/* 0 if a holds exactly libtest_npy_fill's pattern, else the first index that differs + 1
 * (SIZE_MAX if it cannot check). */
size_t libtest_npy_check(const struct poolfs_array *a);
/* The dtype of a short name as used in the file names ("f8", "u1", "c16"...), or -1. */
int libtest_dtype_by_name(const char *name);

/* Python side of the round trip, run as: PYTHON -c libtest_npy_py MODE DIR
 *   MODE "check": every DIR/c-*.npy (written by C) loads with mmap_mode="r" and holds the pattern;
 *                 the name says dtype and order: c-<dtype>-<C|F>-<shape as 3x4 or "scalar">.npy
 *   MODE "write": numpy writes the same pattern to DIR/py-*.npy, in formats 1.0, 2.0 and 3.0 */
extern const char libtest_npy_py[];

#endif
