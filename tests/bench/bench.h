/* bench.h: what the parts of poolfs-bench share: the configuration, the targets (a raw tmpfs dir
 * or a mounted pool), the metrics and where their samples go, and the helpers of bench_util.c.
 * bench.c owns the command line, the interleaved run and the report; bench_tests.c the
 * measurements, bench_shm.c those of POSIX shared memory; bench_util.c clocks, /proc/meminfo,
 * data patterns, child processes and removal. */
#ifndef POOLFS_BENCH_H
#define POOLFS_BENCH_H

#include <stddef.h>
#include <stdint.h>

struct bench_cfg {
	size_t size;	  /* bytes of the big files (-s) */
	size_t block;	  /* pwrite/pread request size */
	size_t small;	  /* bytes written by each create */
	unsigned reps;	  /* repetitions (-r) */
	unsigned ncreate; /* creates per repetition (-n) */
	unsigned nlat;	  /* removal-latency samples in all (-l) */
	unsigned nprocs;  /* processes mapping one file (-p) */
	unsigned ncycles; /* shm and sem cycles per repetition (--cycles) */
};

enum metric {
	M_MMAP_WRITE,
	M_MMAP_READ,
	M_MMAP_REWRITE,
	M_PWRITE,
	M_PREAD,
	M_CREATE,
	M_MAP8,
	M_MEM_CACHED,
	M_MEM_SHMEM,
	M_MEM_AVAIL,
	M_RMLAT_MED,
	M_RMLAT_MAX,
	M_CREATE2,
	M_SHM,
	M_SEM,
	M_COUNT
};

#define BENCH_MAX_REPS 100

/* The samples one target gathered: one value per metric and repetition (NAN: not measured or
 * failed), and every removal-latency sample (seconds). */
struct bench_results {
	double v[M_COUNT][BENCH_MAX_REPS];
	double *lat;
	size_t nlat, caplat;
	unsigned failures;
};

struct bench_target {
	const char *name; /* "raw", "pagecache", "passthrough", ... */
	const char *dir;  /* where its files go */
	int is_pool;	  /* a pool removes unused files by itself (autohold=none) */
	struct bench_results res;
};

/* One measurement: runs on target t for repetition rep and stores its metrics in t->res; returns 0
 * or -errno after printing what failed. */
struct bench_test {
	const char *name;
	int pool_only;
	int (*run)(const struct bench_cfg *c, struct bench_target *t, unsigned rep);
	int asked_only; /* run only when --only names it (not on autohold=none pools) */
};
extern const struct bench_test bench_tests[];
extern const size_t bench_ntests;

/* ---- bench_shm.c: the shm and sem cycles, glibc's calls on the target bound on /dev/shm in a
 * private mount namespace ---- */
int t_shm(const struct bench_cfg *c, struct bench_target *t, unsigned rep);
int t_sem(const struct bench_cfg *c, struct bench_target *t, unsigned rep);

/* ---- bench_util.c ---- */

double now_s(void);
void sleep_s(double s);

struct meminfo {
	long long avail_kb; /* MemAvailable plus the free pages on per-CPU lists */
	long long shmem_kb, cached_kb;
};
int meminfo_read(struct meminfo *mi);

/* dir "/" name-rep-i into buf (PATH_MAX). */
void bench_path(char *buf, const struct bench_target *t, const char *name, unsigned rep,
		unsigned i);

/* Poll lstat(path) until ENOENT: 0, -ETIMEDOUT or -errno. Spins briefly, then sleeps 20 us steps. */
int wait_gone(const char *path, double timeout_s);

/* After the last use of path: a pool must remove it by itself (wait, bounded; unlink and fail if it
 * does not), a raw dir needs an unlink. 0 or -errno. */
int finish_entry(const struct bench_target *t, const char *path);
/* The end of a test's file: close fd (the test's anchor or its own descriptor), then
 * finish_entry; ret if the test failed already, else finish_entry's answer. */
int finish_anchored(const struct bench_target *t, const char *path, int fd, int ret);

/* Page i of a file holds the byte ((i * 7) % 255) + 1: never zero, different for near pages. */
void fill_pages(unsigned char *p, size_t size);
void fill_block(unsigned char *p, size_t off, size_t len);
uint64_t expected_sum(size_t size);
uint64_t sum_words(const unsigned char *p, size_t size);

/* Map path read-only, sum it, unmap: 0, -EILSEQ if the sum is wrong, or -errno; *secs is the time
 * from open to close. */
int map_and_sum(const char *path, size_t size, double *secs);

/* Fork; the child runs fn(arg, msg) and sends the `len` bytes of msg back into the parent's msg.
 * 0 once they arrived; -ECHILD if the child sent none (it died), else -errno of pipe/fork/wait. */
int run_in_child(void (*fn)(void *arg, void *msg), void *arg, void *msg, size_t len);

/* Fork; the child runs map_and_sum and sends its result back: 0 or -errno. */
int child_map_and_sum(const char *path, size_t size, double *secs);

/* Write size bytes of the fill_pages pattern with block-sized pwrites to fd: 0 or -errno. */
int write_blocks(int fd, size_t size, size_t block, unsigned char *buf);

/* Append a latency sample: 0 or -ENOMEM. */
int add_latency(struct bench_results *r, double secs);

/* Median, min and max of the n non-NAN values of v (sorted in place); returns how many there were. */
size_t stats(double *v, size_t n, double *med, double *min, double *max);

#endif
