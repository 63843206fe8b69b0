/* stress_support: taking holds and reading user.poolfs.refs, parsed into counts
 * (docs/interface.md "Extended attributes"). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/xattr.h>

#include "stress.h"

int refs_get(const char *path, struct refs *r)
{
	ssize_t n = getxattr(path, POOLFS_XATTR_REFS, r->text, sizeof(r->text) - 1);
	char *line, *save = NULL;
	char copy[sizeof(r->text)];

	r->opens = r->holds = 0;
	r->mapped = r->pins = r->others = 0;
	if (n < 0) {
		r->text[0] = '\0';
		return -errno;
	}
	r->text[n] = '\0';
	memcpy(copy, r->text, sizeof(copy));
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char scope[256];

		if (sscanf(line, "opens %ld", &r->opens) == 1)
			continue;
		if (strcmp(line, "mapped yes") == 0) {
			r->mapped = 1;
			continue;
		}
		if (sscanf(line, "holds %ld", &r->holds) == 1)
			continue;
		if (sscanf(line, "hold %255s", scope) == 1) {
			if (strcmp(scope, POOLFS_SCOPE_WORD_PIN) == 0)
				r->pins++;
			else
				r->others++;
		}
	}
	return 0;
}

int hold_scope(const char *path, const char *scope)
{
	return setxattr(path, POOLFS_XATTR_HOLD, scope, strlen(scope), 0);
}
