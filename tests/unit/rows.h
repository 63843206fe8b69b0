/* Tables as cmocka tests: one test per row, the row as its state, so each case of a table passes
 * or fails on its own and a filter can pick it by name. Used by the unit tests and, through
 * harness_dep, by the suites that mount pools. */
#ifndef POOLFS_ROWS_H
#define POOLFS_ROWS_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

/* tests[0..n) run fn on rows[0..n) (each row_size bytes; setup and teardown may be NULL), each
 * named by its row's first member, which must be the case's name (a const char *). */
void rows_to_tests(struct CMUnitTest *tests, const void *rows, size_t row_size, size_t n,
		   CMUnitTestFunction fn, CMFixtureFunction setup, CMFixtureFunction teardown);

/* A row's test name in buf: group "/" the len bytes of value, those that are not printable (or a
 * blank) written \xNN, so that a name stays one TAP line. Cut to fit size. */
void rows_name(char *buf, size_t size, const char *group, const char *value, size_t len);

/* A new temporary file holding text (a /proc text to parse, say): its name into path, which must
 * end in XXXXXX as for mkstemp. Fails the test if it cannot be written; the caller unlinks it. */
void rows_temp_file(char *path, const char *text);

#endif
