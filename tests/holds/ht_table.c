/* holds_support: scenario tables as cmocka test cases: one row of a table becomes one test case,
 * named after the row, that gets the row through its state. */
#include "holdtest.h"

size_t ht_add_rows(struct CMUnitTest *out, const void *rows, size_t nrows, size_t row_size,
		   CMUnitTestFunction fn, CMFixtureFunction setup, CMFixtureFunction teardown)
{
	for (size_t i = 0; i < nrows; i++) {
		const void *row = (const char *)rows + i * row_size;

		out[i] = (struct CMUnitTest){
			/* Every row type starts with its name (see HT_ROWS). */
			.name = *(const char *const *)row,
			.test_func = fn,
			.setup_func = setup,
			.teardown_func = teardown,
			.initial_state = (void *)row,
		};
	}
	return nrows;
}
