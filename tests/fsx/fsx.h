/* fsx.h: what the parts of poolfs-fsx share: the run state (struct fsx), the operation table, the
 * checks and the I/O helpers. fsx.c owns the command line, setup and the failure report; fsx_ops.c
 * the random operations; fsx_check.c the comparisons of the files against the model. */
#ifndef POOLFS_FSX_H
#define POOLFS_FSX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fsx_log.h"
#include "fsx_model.h"

#define EXIT_MISMATCH 1
#define EXIT_USAGE 2
/* exit status of a forked child that caught SIGBUS (a child's own failures use 10 + step) */
#define CHILD_SIGBUS 99

enum op {
	OP_WRITE,
	OP_READ,
	OP_MAPREAD,
	OP_MAPWRITE,
	OP_TRUNCATE,
	OP_FALLOCATE,
	OP_REOPEN,
	OP_FORKWRITE,
	OP_FADVISE,
	OP_COUNT
};

extern const char *const op_names[OP_COUNT];
extern const unsigned op_default_weight[OP_COUNT];

struct falloc_mode {
	int mode;
	const char *name;
};
#define NFALLOC 5
extern const struct falloc_mode falloc_modes[NFALLOC];

enum keep { KEEP_HOLD, KEEP_ANCHOR, KEEP_NONE };

struct fsx {
	/* configuration */
	unsigned long long seed;
	unsigned long nops;
	size_t maxlen, maxop;
	unsigned long check_every;
	unsigned log_show;
	int verbose;
	enum keep keep;
	const char *excluded; /* the -x argument, for the replay line */
	unsigned weight[OP_COUNT];
	const char *pool_path, *ref_path;

	/* state */
	uint64_t rng;
	unsigned long opnum;
	int pool_fd, ref_fd, anchor_fd;
	size_t pagesz;
	struct fsx_model m;
	struct fsx_log log;
	struct fsx_logent *cur;	 /* the log entry of the running op */
	unsigned char *wbuf;	 /* data of the running write: maxop bytes */
	unsigned char *rbuf;	 /* what was read back: maxlen + maxop + a page */
	int falloc_off[NFALLOC]; /* modes found unsupported */
	unsigned long done[OP_COUNT], skipped[OP_COUNT];
	char why[1024]; /* the failure, once an op returned an error */
};

/* fsx_ops.c: pick the next operation by weight; run one (0 or -errno with f->why set). */
enum op pick_op(struct fsx *f);
extern int (*const op_fn[OP_COUNT])(struct fsx *f);

/* fsx_check.c */
/* Record the failure text in f->why; returns err so callers can `return failf(...)`. */
__attribute__((format(printf, 3, 4))) int failf(struct fsx *f, int err, const char *fmt, ...);
/* Read up to len bytes at off over short reads: bytes read (short only at EOF) or -errno. */
ssize_t pread_full(int fd, unsigned char *buf, size_t len, size_t off);
/* Write all len bytes at off: 0 or -errno. */
int pwrite_full(int fd, const unsigned char *buf, size_t len, size_t off);
/* Describe a data mismatch (got holds len bytes read at off, first is the index of the first wrong
 * byte) into f->why; returns -EIO. */
int fail_data(struct fsx *f, const char *what, size_t off, const unsigned char *got, size_t len,
	      long first);
/* Size of both files, then pread of [off, off+len) of the pool file: right count and bytes. */
int check_range(struct fsx *f, size_t off, size_t len, const char *when);
/* Sizes, the whole pool file and a page past its end, then the whole reference file. */
int check_all(struct fsx *f, const char *when);

#endif
