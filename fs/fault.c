/* fault: fault injection for the test-only daemon (see fault.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fault.h"

static const char *const site_names[FAULT_SITES] = {"alloc", "reply", "mark",
						    "stall", "reap",  "unlink"};

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
			if (s == FAULT_STALL || s == FAULT_REAP || s == FAULT_UNLINK)
				atomic_store(&f->stall_released, false);
			atomic_store(&f->countdown[s], n);
			return 0;
		}
	}
	return -EINVAL;
}

int fault_report(struct fault_state *f, char *buf, size_t len)
{
	size_t used = 0;

	for (int s = 0; s < FAULT_SITES; s++) {
		long left = atomic_load(&f->countdown[s]), fired = atomic_load(&f->fired[s]);
		int w = snprintf(buf + used, len - used, "%s %s\n", site_names[s],
				 left > 0    ? "armed"
				 : fired > 0 ? "fired"
					     : "off");
		if (w < 0 || (size_t)w >= len - used)
			return -ERANGE;
		used += (size_t)w;
	}
	return (int)used;
}
