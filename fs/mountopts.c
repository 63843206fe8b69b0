/* mountopts: start-up options and the options of mount helpers (see mountopts.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "array.h"
#include "mountopts.h"

void mountopts_init(struct mount_extras *m)
{
	memset(m, 0, sizeof(*m));
}

/* Options that mount(8), mount.fuse3 or systemd pass along for their own use. `rw`, `dev`,
 * `suid` and `exec` are dropped rather than handed to FUSE: a pool stays nodev,nosuid whatever
 * an fstab line's `defaults` expands to. */
static bool is_helper_option(const char *item)
{
	static const char *const names[] = {
		"defaults", "auto",   "noauto",	 "user", "users", "nouser", "owner",
		"group",    "nofail", "_netdev", "rw",	 "dev",	  "suid",   "exec",
	};

	if (strncmp(item, "x-", 2) == 0 || strncmp(item, "comment=", 8) == 0)
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strcmp(item, names[i]) == 0)
			return true;
	return false;
}

int mountopts_apply(struct mount_extras *m, const char *item, const char **why)
{
	const char *dummy;

	if (!why)
		why = &dummy;
	if (strcmp(item, "debug") == 0) {
		m->debug = true;
		return 1;
	}
	if (strncmp(item, "log_socket=", 11) == 0) {
		const char *v = item + 11;

		if (v[0] != '/') {
			*why = "log_socket= needs an absolute path of a datagram socket";
			return -EINVAL;
		}
		if (strlen(v) >= sizeof(m->log_socket)) {
			*why = "log_socket= path is too long for a unix socket";
			return -ENAMETOOLONG;
		}
		snprintf(m->log_socket, sizeof(m->log_socket), "%s", v);
		return 1;
	}
	return is_helper_option(item) ? 1 : 0;
}
