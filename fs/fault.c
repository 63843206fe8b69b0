/* fault: fault injection for the test-only daemon (see fault.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fault.h"

static const char *const site_names[FAULT_SITES] = {"alloc",  "reply", "mark",	 "stall", "reap",
						    "unlink", "open",  "forget", "proof"};

/* What POOLFS_FAULT arms before the pool exists, and then the pool's (fault_use). */
static struct fault_state start_state;
static struct fault_state *_Atomic current = &start_state;

void fault_use(struct fault_state *f)
{
	for (int s = 0; s < FAULT_SITES; s++) {
		atomic_store(&f->countdown[s], atomic_load(&start_state.countdown[s]));
		atomic_store(&start_state.countdown[s], 0);
	}
	atomic_store(&current, f);
}

int fault_arm_env(void)
{
	const char *value = getenv("POOLFS_FAULT");

	return value ? fault_arm(atomic_load(&current), value, strlen(value)) : 0;
}

/* Note `site` among the walked ones (a set: each once). */
static void walked(struct fault_state *f, const char *site)
{
	for (int i = 0; i < FAULT_WALKED_MAX; i++) {
		const char *none = NULL;

		if (atomic_load(&f->walked[i]) == site ||
		    atomic_compare_exchange_strong(&f->walked[i], &none, site) || none == site)
			return;
	}
}

/* Does this allocation fail? Counts it as a site walked when it does. */
static bool alloc_fails(const char *site, bool benign)
{
	struct fault_state *f = atomic_load(&current);

	if (!fault_fire(f, FAULT_ALLOC))
		return false;
	atomic_store(&f->benign, benign);
	walked(f, site);
	return true;
}

void *fault_alloc_at(const char *site, size_t size, bool zero, bool benign)
{
	if (alloc_fails(site, benign))
		return NULL;
	return zero ? calloc(1, size) : malloc(size);
}

void *fault_calloc_at(const char *site, size_t n, size_t size, bool benign)
{
	return alloc_fails(site, benign) ? NULL : calloc(n, size);
}

void *fault_realloc_at(const char *site, void *ptr, size_t n, size_t size, bool benign)
{
	return alloc_fails(site, benign) ? NULL : reallocarray(ptr, n, size);
}

char *fault_strdup_at(const char *site, const char *s)
{
	return alloc_fails(site, false) ? NULL : strdup(s);
}

bool fault_fire(struct fault_state *f, enum fault_site site)
{
	long left = atomic_load(&f->countdown[site]);

	/* Several threads may race for the last count: exactly one wins the exchange to 0. */
	while (left > 0) {
		if (atomic_compare_exchange_weak(&f->countdown[site], &left, left - 1)) {
			if (left - 1 > 0)
				return false;
			atomic_fetch_add(&f->fired[site], 1);
			return true;
		}
	}
	return false;
}

void fault_stall_at(struct fault_state *f, enum fault_site site)
{
	const struct timespec tick = {.tv_nsec = 1000000};

	if (!fault_fire(f, site))
		return;
	for (int ms = 0; ms < FAULT_STALL_MAX_MS && !atomic_load(&f->stall_released); ms++)
		nanosleep(&tick, NULL);
}

void fault_delay_at(struct fault_state *f, enum fault_site site)
{
	long ms = atomic_load(&f->countdown[site]);
	struct timespec wait = {.tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000};

	if (ms <= 0)
		return;
	atomic_fetch_add(&f->fired[site], 1);
	nanosleep(&wait, NULL);
}

int fault_arm(struct fault_state *f, const char *value, size_t len)
{
	char text[64], name[16];
	long n;
	char extra;

	if (len > 0 && (value[len - 1] == '\0' || value[len - 1] == '\n'))
		len--;
	if (len == 0 || len >= sizeof(text))
		return -EINVAL;
	memcpy(text, value, len);
	text[len] = '\0';
	if (strcmp(text, "off") == 0) {
		for (int s = 0; s < FAULT_SITES; s++)
			atomic_store(&f->countdown[s], 0);
		atomic_store(&f->stall_released, true);
		return 0;
	}
	if (sscanf(text, "%15s %ld%c", name, &n, &extra) != 2 || n < 1)
		return -EINVAL;
	for (int s = 0; s < FAULT_SITES; s++) {
		if (strcmp(name, site_names[s]) == 0) {
			atomic_store(&f->fired[s], 0);
			atomic_store(&f->benign, false);
			if (s == FAULT_STALL || s == FAULT_REAP || s == FAULT_UNLINK ||
			    s == FAULT_OPEN)
				atomic_store(&f->stall_released, false);
			atomic_store(&f->countdown[s], n);
			return 0;
		}
	}
	return -EINVAL;
}

void *fault_controls_alloc(size_t size)
{
	return malloc(size);
}

int fault_report(struct fault_state *f, char *buf, size_t len)
{
	size_t used = 0;

	for (int s = 0; s < FAULT_SITES; s++) {
		long left = atomic_load(&f->countdown[s]), fired = atomic_load(&f->fired[s]);
		bool benign = s == FAULT_ALLOC && atomic_load(&f->benign);
		int w = snprintf(buf + used, len - used, "%s %s\n", site_names[s],
				 left > 0	       ? "armed"
				 : fired > 0 && benign ? "benign"
				 : fired > 0	       ? "fired"
						       : "off");
		if (w < 0 || (size_t)w >= len - used)
			return -ERANGE;
		used += (size_t)w;
	}
	for (int i = 0; i < FAULT_WALKED_MAX; i++) {
		const char *site = atomic_load(&f->walked[i]);
		int w;

		if (!site)
			break;
		w = snprintf(buf + used, len - used, "walked %s\n", site);
		if (w < 0 || (size_t)w >= len - used)
			return -ERANGE;
		used += (size_t)w;
	}
	return (int)used;
}
