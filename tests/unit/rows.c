/* rows_to_tests, rows_name and rows_temp_file (rows.h): a cmocka test for each row of a table,
 * its name, and a row's text as a file. */
#include "rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void rows_to_tests(struct CMUnitTest *tests, const void *rows, size_t row_size, size_t n,
		   CMUnitTestFunction fn, CMFixtureFunction setup, CMFixtureFunction teardown)
{
	for (size_t i = 0; i < n; i++) {
		const char *row = (const char *)rows + i * row_size;

		tests[i] = (struct CMUnitTest){
			.name = *(const char *const *)row,
			.test_func = fn,
			.setup_func = setup,
			.teardown_func = teardown,
			.initial_state = (void *)row,
		};
	}
}

void rows_name(char *buf, size_t size, const char *group, const char *value, size_t len)
{
	size_t n = (size_t)snprintf(buf, size, "%s/", group);

	for (size_t i = 0; i < len && n + 5 < size; i++) {
		unsigned char c = (unsigned char)value[i];

		n += (size_t)snprintf(buf + n, size - n, c > 0x20 && c < 0x7f ? "%c" : "\\x%02x",
				      c);
	}
}

void rows_temp_file(char *path, const char *text)
{
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}
