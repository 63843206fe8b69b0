/* lifetime: the removal rule (see lifetime.h). */
#include "lifetime.h"

bool lifetime_in_use(const struct lifetime *l, bool held_above)
{
	if (l->opens > 0 || l->maybe_mapped || l->holds > 0 || held_above)
		return true;
	return l->is_dir && l->children > 0;
}

enum lifetime_verdict lifetime_decide(const struct lifetime *l, bool held_above)
{
	if (l->removed || l->is_root)
		return LIFETIME_KEEP;
	if (!l->linked)
		/* Unlinked data lives on only for those who still have it open or mapped, and
		 * while the kernel may still open it (a walk that reached it before its last name
		 * went): holds were dropped by the unlink and nothing above can hold it any more. */
		return (l->opens > 0 || l->maybe_mapped || l->lookups > 0) ? LIFETIME_KEEP
									   : LIFETIME_DESTROY;
	if (lifetime_in_use(l, held_above))
		return LIFETIME_KEEP;
	/* A folder made empty and never used is somebody's plan, not garbage (docs/interface.md "Lifetime"). */
	if (l->is_dir && !l->armed)
		return LIFETIME_KEEP;
	return LIFETIME_REMOVE;
}

bool lifetime_can_free(const struct lifetime *l)
{
	return l->removed && l->lookups == 0 && l->opens == 0;
}
