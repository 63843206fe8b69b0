/* name_rules: the one table of bad names and their errnos (see name_rules.h). */
#include "name_rules.h"

#include <errno.h>
#include <string.h>

/* The three kinds of bad name, and what each operation answers: the kernel's own path walk
 * (fs/namei.c) gives the same for a plain tmpfs, so a program sees no difference.
 *   - empty: a path walk never hands a filesystem an empty component; ENOENT, as open("") gets.
 *   - too long (over NAME_MAX): ENAMETOOLONG everywhere, as tmpfs's simple_lookup answers.
 *   - "." or "..": the VFS resolves them itself and never asks the filesystem, so such a name
 *     in a request comes only from a client that bypasses the VFS; each operation answers as
 *     the VFS answers the same call:
 *       LOOKUP: the pool holds no entry of that name: ENOENT;
 *       mkdir, mknod, create, symlink, link: filename_create() refuses a last component that is
 *         not a plain name with EEXIST (mkdir("..") is EEXIST);
 *       rename: do_renameat2() refuses it with EBUSY (rename("a", "..")). */
static const struct {
	int empty, too_long, dot;
} rules[NAME_OPS] = {
	[NAME_LOOKUP] = {-ENOENT, -ENAMETOOLONG, -ENOENT},
	[NAME_CREATE] = {-ENOENT, -ENAMETOOLONG, -EEXIST},
	[NAME_LINK] = {-ENOENT, -ENAMETOOLONG, -EEXIST},
	[NAME_RENAME] = {-ENOENT, -ENAMETOOLONG, -EBUSY},
};

int name_check(enum name_op op, const char *name)
{
	size_t len = strlen(name);

	if ((unsigned)op >= NAME_OPS)
		return -EINVAL;
	if (len == 0)
		return rules[op].empty;
	if (len > NAME_RULES_MAX)
		return rules[op].too_long;
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return rules[op].dot;
	return 0;
}
