/* holds_support: the hold tests' process set-up (child subreaper, test filter). Whether a
 * process still runs is fs/procfs.c's proc_running. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "holdtest.h"

void htest_init(void)
{
	const char *filter = getenv("HOLDS_TEST_FILTER");

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (filter && filter[0])
		cmocka_set_test_filter(filter);
}
