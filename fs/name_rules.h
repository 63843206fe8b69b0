/* name_rules: which names an operation accepts, and the errno each refusal gets, in one table
 * (name_rules.c) so that every handler answers a bad name as tmpfs and the Linux VFS would.
 * Pure: no FUSE, no pool; unit-tested in tests/unit/test_name_rules.c. */
#ifndef POOLFS_NAME_RULES_H
#define POOLFS_NAME_RULES_H

/* The longest name in a folder (NAME_MAX, tmpfs's and the VFS's). */
#define NAME_RULES_MAX 255

enum name_op {
	NAME_LOOKUP, /* LOOKUP: a name looked up in a folder */
	NAME_CREATE, /* the new name of mkdir, mknod, create, symlink */
	NAME_LINK,   /* the new name of link */
	NAME_RENAME, /* the new name of rename */
	NAME_OPS,
};

/* 0 if `op` accepts `name`, else the negative errno its refusal gets. */
int name_check(enum name_op op, const char *name);

#endif
