/* holds_support: the hold tests' process set-up (child subreaper, test filter) and whether a
 * process still runs. */
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

int ht_running(pid_t pid)
{
	char path[64], buf[512];
	FILE *f;
	int running = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f)) {
		/* The state follows the last ')': the command name may hold any byte. */
		char *rp = strrchr(buf, ')');

		running = rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
	}
	fclose(f);
	return running;
}
