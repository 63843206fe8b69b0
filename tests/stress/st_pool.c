/* stress_support: the per-test state around testutil.h's pool fixture, as the tests get it. */
#include "stress.h"

struct stest *stest_get(void **state)
{
	struct stest *t = *state;

	if (t->f.unsupported)
		skip();
	return t;
}
