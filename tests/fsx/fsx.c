/* poolfs-fsx: a seeded randomized file-integrity tester (in the spirit of the classic fsx, written
 * fresh for poolfs).
 *
 *   poolfs-fsx [-s SEED] [-n OPS] [-l MAXLEN] [-o MAXOP] [-c N] [-x OP,...] [-k hold|anchor|none]
 *              [-L N] [-v] POOLFILE REFFILE
 *
 * Applies a random sequence of operations (write, read, mmap read, mmap write with or without msync,
 * truncate up and down by fd or by path, fallocate modes, close + reopen (sometimes O_TRUNC), a
 * forked child writing by pwrite or through a mapping, fadvise DONTNEED) to POOLFILE and, by the same
 * method, to REFFILE (plain tmpfs), and keeps the expected contents in memory (fsx_model). After every
 * operation it checks the size and the touched range of POOLFILE against the model, and every -c
 * operations the whole file (plus REFFILE, which validates the model itself). On a mismatch it prints
 * the seed, the op number, the first wrong bytes and the last operations, writes REFFILE.fsxgood
 * (expected), REFFILE.fsxbad (what the pool returned) and REFFILE.fsxlog, and exits 1; the printed
 * replay command reproduces the run up to the failing op. Exit 0: all checks passed; 2: usage.
 *
 * This file owns the command line, setup, the main loop, the SIGBUS handler and the failure report;
 * the operations live in fsx_ops.c, the checks in fsx_check.c, the expected contents in
 * fsx_model.c, the log of recent operations in fsx_log.c.
 *
 * Mappings never reach past the page that holds the last byte of the file, so a SIGBUS always means
 * the file lost data or size behind our back: the handler reports it like a mismatch.
 * A pool mounted with autohold=none removes a file as soon as nothing uses it, which would end the
 * run at the first close + reopen: by default fsx takes a hold of scope "process" through the
 * user.poolfs.hold xattr (it ends when fsx exits), falling back to an extra open fd (-k anchor).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "fsx.h"
#include "poolfs_names.h"
#include "size_arg.h"

static const char *const keep_names[] = {"hold", "anchor", "none"};

/* for the SIGBUS handler, which has no other way to say where it happened */
static struct fsx *g_fsx;

static char *fmt_u64(char *end, unsigned long long v)
{
	*--end = '\0';
	do
		*--end = (char)('0' + v % 10);
	while (v /= 10);
	return end;
}

static sigjmp_buf g_sigbus_jmp;
static pid_t g_main_pid;

/* A SIGBUS is a synchronous fault of our own access: in the main process jump back to main(),
 * which reports it with the log like any failure; in a forked child say so and exit. */
static void on_sigbus(int sig)
{
	char a[24], b[24];
	const char *msgs[] = {"poolfs-fsx: SIGBUS in a forked child at op ",
			      fmt_u64(a + sizeof(a), g_fsx ? g_fsx->opnum : 0), " (seed ",
			      fmt_u64(b + sizeof(b), g_fsx ? g_fsx->seed : 0), ")\n"};

	(void)sig;
	if (getpid() == g_main_pid)
		siglongjmp(g_sigbus_jmp, 1);
	for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++)
		if (write(2, msgs[i], strlen(msgs[i])) < 0)
			break;
	_exit(CHILD_SIGBUS);
}

/* ---- setup, report, main ---- */

static void replay_line(const struct fsx *f, FILE *out)
{
	fprintf(out, "replay: poolfs-fsx -s %llu -n %lu -l %zu -o %zu -c %lu -k %s%s%s %s %s\n",
		f->seed, f->opnum, f->maxlen, f->maxop, f->check_every, keep_names[f->keep],
		f->excluded ? " -x " : "", f->excluded ? f->excluded : "", f->pool_path,
		f->ref_path);
}

/* Write path+suffix with len bytes of buf; best effort (this is the failure path already). */
static void dump_file(const char *path, const char *suffix, const void *buf, size_t len)
{
	char name[PATH_MAX];
	int fd;

	if (snprintf(name, sizeof(name), "%s%s", path, suffix) >= (int)sizeof(name))
		return;
	fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return;
	if (pwrite_full(fd, buf, len, 0))
		fprintf(stderr, "poolfs-fsx: could not write %s\n", name);
	close(fd);
}

static void report(struct fsx *f, FILE *out)
{
	fprintf(out, "poolfs-fsx: FAILED at op %lu (seed %llu): %s\n", f->opnum, f->seed, f->why);
	fprintf(out, "last operations (op, kind, variant, range, size before -> after):\n");
	log_print_last(out, &f->log, f->log_show);
	replay_line(f, out);
}

static void fail_report(struct fsx *f)
{
	char name[PATH_MAX];
	FILE *logf;
	ssize_t n = -1;

	report(f, stderr);
	/* what the pool holds now, read through a fresh fd if ours is gone */
	if (f->pool_fd >= 0)
		n = pread_full(f->pool_fd, f->rbuf, f->maxlen + f->maxop, 0);
	if (n < 0) {
		int fd = open(f->pool_path, O_RDONLY);

		if (fd >= 0) {
			n = pread_full(fd, f->rbuf, f->maxlen + f->maxop, 0);
			close(fd);
		}
	}
	dump_file(f->ref_path, ".fsxgood", f->m.buf, f->m.size);
	if (n >= 0)
		dump_file(f->ref_path, ".fsxbad", f->rbuf, (size_t)n);
	if (snprintf(name, sizeof(name), "%s.fsxlog", f->ref_path) < (int)sizeof(name) &&
	    (logf = fopen(name, "w"))) {
		report(f, logf);
		fclose(logf);
	}
	fprintf(stderr,
		"expected contents: %s.fsxgood, pool contents: %s.fsxbad%s, log: %s.fsxlog\n",
		f->ref_path, f->ref_path, n < 0 ? " (could not read the pool file)" : "",
		f->ref_path);
}

/* Keep the pool file alive across close + reopen on a pool that removes unused files. */
static int keep_pool_file(struct fsx *f)
{
	static const char scope[] = POOLFS_SCOPE_WORD_PROCESS;

	if (f->keep == KEEP_HOLD) {
		if (setxattr(f->pool_path, POOLFS_XATTR_HOLD, scope, sizeof(scope) - 1, 0) == 0)
			return 0;
		fprintf(stderr,
			"poolfs-fsx: note: no hold on %s (setxattr %s: %s); "
			"keeping an anchor fd open instead\n",
			f->pool_path, POOLFS_XATTR_HOLD, strerror(errno));
	}
	if (f->keep == KEEP_NONE)
		return 0;
	f->anchor_fd = open(f->pool_path, O_RDONLY);
	return f->anchor_fd < 0 ? -errno : 0;
}

static int parse_ulong(const char *s, unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	return errno || end == s || *end || *s == '-' ? -EINVAL : 0;
}

/* -x write,fadvise: exclude operations by name. */
static int parse_exclude(struct fsx *f, const char *list)
{
	char buf[256], *save = NULL;

	if (snprintf(buf, sizeof(buf), "%s", list) >= (int)sizeof(buf))
		return -EINVAL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int i;

		for (i = 0; i < OP_COUNT; i++)
			if (strcmp(t, op_names[i]) == 0)
				break;
		if (i == OP_COUNT)
			return -EINVAL;
		f->weight[i] = 0;
	}
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: poolfs-fsx [-s SEED] [-n OPS] [-l MAXLEN] [-o MAXOP] [-c N] [-x OP,...] [-k hold|anchor|none]\n"
		"                  [-L N] [-v] POOLFILE REFFILE\n"
		"  -s SEED   random seed (default: from the clock; always printed)\n"
		"  -n OPS    number of operations (default 10000)\n"
		"  -l MAXLEN largest file size (default 256k; k/M/G suffixes)\n"
		"  -o MAXOP  largest single write/read (default 64k)\n"
		"  -c N      compare the whole file every N ops (default 16; the touched range always)\n"
		"  -x LIST   leave out operations: write,read,mapread,mapwrite,truncate,fallocate,reopen,\n"
		"            forkwrite,fadvise\n"
		"  -k MODE   keep the pool file alive over close+reopen: hold (user.poolfs.hold=process,\n"
		"            the default; falls back to anchor), anchor (an extra open fd), none\n"
		"  -L N      operations to print on failure (default 32, at most %d)\n"
		"  -v        print every operation\n"
		"exit: 0 all checks passed, 1 mismatch or failed operation, 2 usage\n",
		FSX_LOG_CAP);
}

/* The options and the two paths into f: 0, 1 when help was asked for, or -EINVAL. */
static int parse_args(struct fsx *f, int argc, char **argv)
{
	unsigned long long v;
	int c, seeded = 0;

	while ((c = getopt(argc, argv, "s:n:l:o:c:x:k:L:vh")) != -1) {
		switch (c) {
		case 's':
			if (parse_ulong(optarg, &f->seed))
				return -EINVAL;
			seeded = 1;
			break;
		case 'n': /* counts */
		case 'c':
			if (parse_ulong(optarg, &v))
				return -EINVAL;
			*(c == 'n' ? &f->nops : &f->check_every) = (unsigned long)v;
			break;
		case 'l': /* sizes */
		case 'o':
			if (size_arg_parse(optarg, c == 'l' ? &f->maxlen : &f->maxop))
				return -EINVAL;
			break;
		case 'x':
			if (parse_exclude(f, optarg))
				return -EINVAL;
			f->excluded = optarg;
			break;
		case 'k':
			for (v = 0; v < 3 && strcmp(optarg, keep_names[v]) != 0; v++)
				;
			if (v == 3)
				return -EINVAL;
			f->keep = (enum keep)v;
			break;
		case 'L':
			if (parse_ulong(optarg, &v) || v > FSX_LOG_CAP)
				return -EINVAL;
			f->log_show = (unsigned)v;
			break;
		case 'v':
			f->verbose = 1;
			break;
		default: /* -h included: main tells help from a usage error */
			return c == 'h' ? 1 : -EINVAL;
		}
	}
	if (argc - optind != 2)
		return -EINVAL;
	f->pool_path = argv[optind];
	f->ref_path = argv[optind + 1];
	if (f->maxop > f->maxlen)
		f->maxop = f->maxlen;
	if (!seeded) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		f->seed = ((unsigned long long)ts.tv_sec * 1000003ULL) ^
			  (unsigned long long)ts.tv_nsec ^ ((unsigned long long)getpid() << 16);
		f->seed %= 1000000000ULL; /* short enough to type */
	}
	for (c = 0; c < OP_COUNT; c++)
		if (f->weight[c])
			return 0;
	return -EINVAL; /* every operation excluded */
}

static int setup(struct fsx *f)
{
	struct sigaction sa = {.sa_handler = on_sigbus};
	int ret;

	f->pagesz = (size_t)sysconf(_SC_PAGESIZE);
	f->pool_fd = f->ref_fd = f->anchor_fd = -1;
	ret = model_init(&f->m, f->maxlen);
	if (ret)
		return failf(f, ret, "out of memory");
	f->wbuf = malloc(f->maxop);
	f->rbuf = malloc(f->maxlen + f->maxop + f->pagesz);
	if (!f->wbuf || !f->rbuf)
		return failf(f, -ENOMEM, "out of memory");
	g_fsx = f;
	g_main_pid = getpid();
	sigaction(SIGBUS, &sa, NULL);
	f->pool_fd = open(f->pool_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (f->pool_fd < 0)
		return failf(f, -errno, "create %s: %s", f->pool_path, strerror(errno));
	f->ref_fd = open(f->ref_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (f->ref_fd < 0)
		return failf(f, -errno, "create %s: %s", f->ref_path, strerror(errno));
	ret = keep_pool_file(f);
	if (ret)
		return failf(f, ret, "anchor open of %s: %s", f->pool_path, strerror(-ret));
	return 0;
}

static void teardown(struct fsx *f)
{
	if (f->pool_fd >= 0)
		close(f->pool_fd);
	if (f->ref_fd >= 0)
		close(f->ref_fd);
	if (f->anchor_fd >= 0)
		close(f->anchor_fd);
	model_free(&f->m);
	free(f->wbuf);
	free(f->rbuf);
}

static void print_summary(const struct fsx *f)
{
	printf("poolfs-fsx: OK: %lu ops, seed %llu, final size 0x%zx:", f->nops, f->seed,
	       f->m.size);
	for (int i = 0; i < OP_COUNT; i++)
		if (f->done[i] || f->skipped[i])
			printf(" %s %lu%s", op_names[i], f->done[i] - f->skipped[i],
			       f->skipped[i] ? "+" : "");
	printf("\n");
	for (size_t i = 0; i < NFALLOC; i++)
		if (f->falloc_off[i])
			printf("poolfs-fsx: fallocate mode %s was not supported and not tested\n",
			       falloc_modes[i].name);
}

int main(int argc, char **argv)
{
	static struct fsx fsx; /* big (the log): not on the stack */
	struct fsx *f = &fsx;
	int ret;

	f->nops = 10000;
	f->maxlen = 256 * 1024;
	f->maxop = 64 * 1024;
	f->check_every = 16;
	f->log_show = 32;
	memcpy(f->weight, op_default_weight, sizeof(f->weight));
	ret = parse_args(f, argc, argv);
	if (ret) {
		usage(ret > 0 ? stdout : stderr);
		return ret > 0 ? 0 : EXIT_USAGE;
	}
	f->rng = f->seed;
	printf("poolfs-fsx: seed %llu, %lu ops, maxlen 0x%zx, maxop 0x%zx, full check every %lu ops\n",
	       f->seed, f->nops, f->maxlen, f->maxop, f->check_every);
	fflush(stdout);

	ret = setup(f);
	if (ret)
		goto fail;
	if (sigsetjmp(g_sigbus_jmp, 1)) {
		/* for fail_report()'s f->why only: fail: returns EXIT_MISMATCH, not ret */
		failf(f, -EFAULT,
		      "SIGBUS: an access inside the file's size (through a mapping) faulted: "
		      "the file lost data or size behind our back");
		goto fail;
	}
	for (f->opnum = 1; f->opnum <= f->nops; f->opnum++) {
		enum op op = pick_op(f);

		f->cur = NULL;
		ret = op_fn[op](f);
		f->done[op]++;
		if (f->cur)
			f->cur->size_after = f->m.size;
		if (f->verbose && f->cur)
			log_print_one(stdout, f->cur);
		if (ret)
			goto fail;
		if (f->check_every && f->opnum % f->check_every == 0) {
			ret = check_all(f, "periodic full check");
			if (ret)
				goto fail;
		}
	}
	f->opnum = f->nops;
	ret = check_all(f, "final full check");
	if (ret)
		goto fail;
	print_summary(f);
	teardown(f);
	/* success: nothing to look at, leave nothing behind (on a pool, unlink removes at once) */
	unlink(f->ref_path);
	unlink(f->pool_path);
	return 0;

fail:
	fflush(stdout);
	fail_report(f);
	teardown(f);
	return EXIT_MISMATCH;
}
