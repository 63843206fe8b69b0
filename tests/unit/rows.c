/* rows_to_tests (rows.h): a cmocka test for each row of a table. */
#include "rows.h"

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
