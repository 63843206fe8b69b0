/* Internal to poolctl: `poolctl metrics`'s pure part. It reads the pool's texts (user.poolfs.stat,
 * user.poolfs.counters, user.poolfs.ops: docs/interface.md) into a struct metrics_pool and writes
 * any number of pools in Prometheus's text exposition format (docs/monitoring.md), and finds the
 * pools in a mountinfo text. No file access: the unit tests feed it texts. */
#ifndef POOLFS_METRICS_TEXT_H
#define POOLFS_METRICS_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct metrics_user {
	uint32_t uid;
	uint64_t entries, bytes, meta;
};

/* One "NAME [KEY] VALUE" line of user.poolfs.counters, or "OP COUNT NS" of user.poolfs.ops. */
struct metrics_value {
	char name[32];
	char key[32]; /* "" if none */
	uint64_t value, ns;
};

struct metrics_pool {
	const char *mountpoint; /* not owned */
	bool have_stat;		/* false: the pool did not answer (poolfs_up 0) */
	uint64_t entries, bytes, meta;
	uint64_t max_size, max_user_size, max_user_entries, max_user_meta; /* 0: no limit */
	char datapath[32];
	struct metrics_user *users;
	size_t nusers;
	bool have_counters; /* the caller may read them (the pool's owner, or root) */
	char transport[32];
	struct metrics_value *counters;
	size_t ncounters;
	bool have_ops;
	struct metrics_value *ops;
	size_t nops;
};

/* Parse each text into `p` (adding to what it has): 0, -EINVAL for a line not in the text's
 * format, -ERANGE for a line too long, -ENOMEM. Lines of user.poolfs.stat this poolctl does not
 * know are skipped, so that a newer daemon's text still reads. */
int metrics_parse_stat(struct metrics_pool *p, const char *text);
int metrics_parse_counters(struct metrics_pool *p, const char *text);
int metrics_parse_ops(struct metrics_pool *p, const char *text);
/* Free what the parsers allocated; the pool is then empty (its mountpoint kept). */
void metrics_pool_clear(struct metrics_pool *p);

/* The exposition text of `n` pools to `out`: each metric once, with HELP and TYPE, its samples
 * from every pool that has it. 0, or -EIO if writing failed. */
int metrics_write(FILE *out, const struct metrics_pool *pools, size_t n);

/* The mountpoints of the poolfs mounts (file system type fuse.poolfs) in the mountinfo text
 * `text`, unescaped, in order, as a NULL-terminated array of strings (free with
 * metrics_mounts_free): 0, -EINVAL (a line not in mountinfo's format) or -ENOMEM. */
int metrics_find_mounts(const char *text, char ***out);
void metrics_mounts_free(char **mounts);

#endif
