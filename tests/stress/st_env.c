/* stress_support: the environment switches, the seeded random choices (POOLFS_SEED) and short
 * sleeps. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stress.h"

int env_is(const char *name, const char *val)
{
	const char *v = getenv(name);

	return v && strcmp(v, val) == 0;
}

int stress_long(void)
{
	return env_is("POOLFS_LONG", "1");
}

uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

unsigned rng_below(uint64_t *s, unsigned n)
{
	return n ? (unsigned)(rng_next(s) % n) : 0;
}

uint64_t stress_seed(const char *test)
{
	const char *env = getenv("POOLFS_SEED");
	uint64_t seed;

	if (env && env[0]) {
		seed = strtoull(env, NULL, 0);
	} else {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = ((uint64_t)ts.tv_sec * 1000000007ull) ^ (uint64_t)ts.tv_nsec ^
		       ((uint64_t)getpid() << 32);
	}
	fprintf(stderr,
		"# %s: seed=%" PRIu64 " (replay the choices with POOLFS_SEED=%" PRIu64 ")\n", test,
		seed, seed);
	fflush(stderr);
	return seed;
}

void sleep_us(unsigned us)
{
	struct timespec ts = {us / 1000000, (long)(us % 1000000) * 1000L};

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

uint32_t stamp_seed(unsigned slot, unsigned iter, unsigned step)
{
	uint64_t s = ((uint64_t)slot << 40) ^ ((uint64_t)iter << 8) ^ step ^
		     ((uint64_t)getpid() << 20);

	return (uint32_t)(rng_next(&s) | 1);
}

void rng_shuffle(uint64_t *s, int *order, int n)
{
	for (int i = 0; i < n; i++)
		order[i] = i;
	/* Fisher-Yates: every order equally likely */
	for (int i = n - 1; i > 0; i--) {
		int j = (int)rng_below(s, (unsigned)i + 1), x = order[i];

		order[i] = order[j];
		order[j] = x;
	}
}
