/* fsx_log: the ring of the last operations poolfs-fsx performed, printed when a check fails so the
 * failure can be understood before it is replayed with -s. Owns the entry format; knows nothing of
 * files. */
#ifndef POOLFS_FSX_LOG_H
#define POOLFS_FSX_LOG_H

#include <stdio.h>
#include <stddef.h>

#define FSX_LOG_CAP 256

struct fsx_logent {
	unsigned long opnum;
	const char *op;	 /* operation name */
	const char *how; /* variant ("msync", "child-mmap", "path", ...), may be "" */
	size_t off, len;
	size_t off2,
		len2; /* a second range inside the first (a write while mapped), len2 0 if none */
	size_t size_before, size_after;
	const char *note; /* "skipped: empty file", "unsupported on pool", ... or NULL */
};

struct fsx_log {
	struct fsx_logent ent[FSX_LOG_CAP];
	unsigned long count; /* entries ever added */
};

/* Append an entry (overwriting the oldest once full) and return it, so the caller can fill in
 * size_after and note once the operation is done. */
struct fsx_logent *log_add(struct fsx_log *l, unsigned long opnum, const char *op, const char *how,
			   size_t off, size_t len, size_t size_before);

/* Print one entry as a single line. */
void log_print_one(FILE *out, const struct fsx_logent *e);

/* Print the last n entries (at most FSX_LOG_CAP), oldest first. */
void log_print_last(FILE *out, const struct fsx_log *l, unsigned n);

#endif
