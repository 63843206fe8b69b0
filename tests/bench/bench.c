/* poolfs-bench: raw tmpfs against poolfs pools, side by side in one run.
 *
 *   poolfs-bench [-s SIZE] [-r REPS] [-n CREATES] [-l LATENCY_SAMPLES] [-p PROCS] [--cycles N]
 *                [--only LIST] [--csv FILE] --raw DIR [--pool NAME=DIR]... [--ref NAME=DIR]...
 *
 * Every repetition runs every test on every target in turn (raw, pool 1, pool 2, raw, ...), so slow
 * drifts of the machine (other jobs, memory pressure) hit all targets alike; the report gives the
 * median and the spread (min-max) of the repetitions and the ratio pool / raw of the medians.
 * The pools must be mounted with autohold=none (removal on last close is part of what is
 * measured), except for the shm and sem tests, which unlink what they make (a pool mounted as
 * /dev/shm would be, autohold=session); scripts/bench mounts them. This file owns the command
 * line, the interleaving and the report; the measurements are in bench_tests.c and bench_shm.c.
 * No thresholds: numbers are reported, never judged.
 */
#include "bench.h"
#include "size_arg.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define MAX_TARGETS 16
#define FUSE_SUPER_MAGIC 0x65735546
#define TMPFS_MAGIC 0x01021994

struct row {
	enum metric m;
	const char *label;
	const char *unit;
	const char *fmt; /* printf format of one value */
};

static const struct row rows[] = {
	{M_MMAP_WRITE, "mmap write, fresh file", "GB/s", "%.2f"},
	{M_MMAP_READ, "mmap read, other process", "GB/s", "%.2f"},
	{M_MMAP_REWRITE, "mmap write, next fresh file", "GB/s", "%.2f"},
	{M_PWRITE, "pwrite 1 MiB blocks", "GB/s", "%.2f"},
	{M_PREAD, "pread 1 MiB blocks, warm", "GB/s", "%.2f"},
	{M_CREATE, "create+4KiB+close+removal", "ops/s", "%.0f"},
	{M_CREATE2, "create+4KiB+close+unlink (2 procs)", "ops/s", "%.0f"},
	{M_SHM, "shm_open+1MiB+touch+shm_unlink", "ops/s", "%.0f"},
	{M_SEM, "sem_open+sem_close+sem_unlink", "ops/s", "%.0f"},
	{M_MAP8, "N procs map+read one file", "GB/s", "%.2f"},
	{M_MEM_CACHED, "memory/byte held: Cached", "B/B", "%.3f"},
	{M_MEM_SHMEM, "memory/byte held: Shmem", "B/B", "%.3f"},
	{M_MEM_AVAIL, "memory/byte held: -MemAvailable", "B/B", "%.3f"},
	{M_RMLAT_MED, "removal after last munmap: median", "ms", "%.3f"},
	{M_RMLAT_MAX, "removal after last munmap: worst", "ms", "%.3f"},
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

struct summary {
	double med, min, max;
	size_t n;
};

struct bench {
	struct bench_cfg cfg;
	struct bench_target targets[MAX_TARGETS];
	unsigned ntargets;
	int raw;		/* index of the raw target, -1 if none */
	unsigned char only[16]; /* tests selected (all by default) */
	const char *csv;
	struct summary sum[MAX_TARGETS][M_COUNT];
};

static int parse_uint(const char *s, unsigned *out, unsigned max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || *s == '-' || v == 0 || v > max)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

static int select_tests(struct bench *b, const char *list)
{
	char buf[256], *save = NULL;

	if (snprintf(buf, sizeof(buf), "%s", list) >= (int)sizeof(buf))
		return -EINVAL;
	memset(b->only, 0, sizeof(b->only));
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < bench_ntests && strcmp(tok, bench_tests[i].name) != 0; i++)
			;
		if (i == bench_ntests)
			return -EINVAL;
		b->only[i] = 1;
	}
	return 0;
}

/* Target kinds: raw tmpfs, a pool, or a reference to compare with (another FUSE file system, or
 * a tmpfs mounted otherwise than raw): not a pool, it removes nothing by itself, so it is used
 * like raw tmpfs (docs/performance.md, "Data paths" and "Small files and metadata"). */
enum { TARGET_RAW, TARGET_POOL, TARGET_REF };

static int add_target(struct bench *b, const char *name, const char *dir, int kind)
{
	struct statfs sfs;

	if (b->ntargets == MAX_TARGETS)
		return -E2BIG;
	if (statfs(dir, &sfs) < 0) {
		fprintf(stderr, "poolfs-bench: %s: %s\n", dir, strerror(errno));
		return -errno;
	}
	/* a "pool" that is not a mount would never remove anything: every wait would time out */
	if (kind == TARGET_POOL && sfs.f_type != FUSE_SUPER_MAGIC) {
		fprintf(stderr, "poolfs-bench: %s (%s) is not a FUSE mount\n", dir, name);
		return -EINVAL;
	}
	if (kind == TARGET_RAW && sfs.f_type != TMPFS_MAGIC)
		fprintf(stderr,
			"poolfs-bench: warning: %s is not tmpfs: the raw numbers are not raw tmpfs\n",
			dir);
	b->targets[b->ntargets++] = (struct bench_target){
		.name = name, .dir = dir, .is_pool = kind == TARGET_POOL};
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: poolfs-bench [options] --raw DIR [--pool NAME=DIR]...\n"
		"  --raw DIR          a plain tmpfs directory (e.g. a temp dir in /dev/shm)\n"
		"  --pool NAME=DIR    a mounted pool (autohold=none), e.g. pagecache=/tmp/m1; repeatable\n"
		"  --ref NAME=DIR     another file system to compare with (another FUSE file system, a\n"
		"                     huge-page tmpfs): not a pool, so files are unlinked as on raw and\n"
		"                     pool-only tests skip it; repeatable\n"
		"  -s, --size SIZE    size of the big files (default 1G; k/M/G suffixes)\n"
		"  -r, --reps N       repetitions, interleaved over the targets (default 5)\n"
		"  -n, --creates N    creates per repetition (default 2000)\n"
		"  -l, --latency N    removal-latency samples in all (default 1000)\n"
		"  -p, --procs N      processes mapping one file (default 8)\n"
		"      --cycles N     shm and sem cycles per repetition (default 1000)\n"
		"      --only LIST    run only these tests: mmap,rw,create,map8,mem,rmlat,create2,\n"
		"                     shm,sem (shm and sem: glibc's shm_open and sem_open on the target\n"
		"                     bound on /dev/shm in a private mount namespace; not in the default)\n"
		"      --csv FILE     also write the results as CSV\n"
		"exit: 0 ok, 1 a measurement failed (the table shows what ran), 2 usage\n");
}

/* The options that take a count: the field each sets and its largest value. */
static int parse_count(struct bench *b, int opt, const char *arg)
{
	const struct {
		unsigned *field;
		int opt;
		unsigned max;
	} counts[] = {
		{&b->cfg.reps, 'r', BENCH_MAX_REPS}, {&b->cfg.ncreate, 'n', 10000000},
		{&b->cfg.nlat, 'l', 10000000},	     {&b->cfg.nprocs, 'p', 64},
		{&b->cfg.ncycles, 'Y', 10000000},
	};

	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		if (counts[i].opt == opt)
			return parse_uint(arg, counts[i].field, counts[i].max);
	return -EINVAL;
}

static int parse_args(struct bench *b, int argc, char **argv)
{
	static const struct option opts[] = {
		{"size", required_argument, NULL, 's'},
		{"reps", required_argument, NULL, 'r'},
		{"creates", required_argument, NULL, 'n'},
		{"latency", required_argument, NULL, 'l'},
		{"procs", required_argument, NULL, 'p'},
		{"only", required_argument, NULL, 'O'},
		{"csv", required_argument, NULL, 'C'},
		{"raw", required_argument, NULL, 'R'},
		{"pool", required_argument, NULL, 'P'},
		{"ref", required_argument, NULL, 'F'},
		{"cycles", required_argument, NULL, 'Y'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	while ((c = getopt_long(argc, argv, "s:r:n:l:p:h", opts, NULL)) != -1) {
		char *eq;

		switch (c) {
		case 's':
			if (size_arg_parse(optarg, &b->cfg.size))
				return -EINVAL;
			break;
		case 'r':
		case 'n':
		case 'l':
		case 'p':
		case 'Y':
			if (parse_count(b, c, optarg))
				return -EINVAL;
			break;
		case 'O':
			if (select_tests(b, optarg))
				return -EINVAL;
			break;
		case 'C':
			b->csv = optarg;
			break;
		case 'R':
			if (b->raw >= 0 || add_target(b, "raw", optarg, TARGET_RAW))
				return -EINVAL;
			b->raw = (int)b->ntargets - 1;
			break;
		case 'P':
		case 'F':
			eq = strchr(optarg, '=');
			if (!eq || eq == optarg || !eq[1])
				return -EINVAL;
			*eq = '\0';
			if (add_target(b, optarg, eq + 1, c == 'P' ? TARGET_POOL : TARGET_REF))
				return -EINVAL;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return -EINVAL;
		}
	}
	if (optind != argc || b->ntargets == 0)
		return -EINVAL;
	/* whole pages keep the pattern and its checksum simple */
	b->cfg.size = (b->cfg.size + 4095) & ~(size_t)4095;
	return 0;
}

static void run_all(struct bench *b)
{
	for (unsigned rep = 0; rep < b->cfg.reps; rep++)
		for (size_t i = 0; i < bench_ntests; i++) {
			const struct bench_test *bt = &bench_tests[i];

			if (!b->only[i])
				continue;
			for (unsigned k = 0; k < b->ntargets; k++) {
				struct bench_target *t = &b->targets[k];

				if (bt->pool_only && !t->is_pool)
					continue;
				fprintf(stderr, "poolfs-bench: rep %u/%u: %s on %s\n", rep + 1,
					b->cfg.reps, bt->name, t->name);
				if (bt->run(&b->cfg, t, rep))
					t->res.failures++;
			}
		}
}

static void summarize(struct bench *b)
{
	for (unsigned k = 0; k < b->ntargets; k++) {
		struct bench_results *r = &b->targets[k].res;

		for (int m = 0; m < M_COUNT; m++) {
			struct summary *s = &b->sum[k][m];

			s->n = stats(r->v[m], b->cfg.reps, &s->med, &s->min, &s->max);
		}
		/* latency: over all samples, not per repetition; milliseconds */
		if (r->nlat) {
			struct summary *med = &b->sum[k][M_RMLAT_MED],
				       *max = &b->sum[k][M_RMLAT_MAX];

			med->n = stats(r->lat, r->nlat, &med->med, &med->min, &med->max);
			med->med *= 1e3, med->min *= 1e3, med->max *= 1e3;
			*max = (struct summary){
				.med = med->max, .min = med->max, .max = med->max, .n = med->n};
		}
	}
}

static double ratio(const struct bench *b, unsigned k, enum metric m)
{
	if (b->raw < 0 || (int)k == b->raw || m == M_RMLAT_MED || m == M_RMLAT_MAX)
		return NAN;
	if (!b->sum[b->raw][m].n || !b->sum[k][m].n || b->sum[b->raw][m].med == 0)
		return NAN;
	/* a file on raw tmpfs costs one byte per byte: much less means the measurement drowned in
	 * the machine's other allocations (small -s, busy machine), and a ratio to it means nothing */
	if ((m == M_MEM_CACHED || m == M_MEM_SHMEM || m == M_MEM_AVAIL) &&
	    b->sum[b->raw][m].med < 0.5)
		return NAN;
	return b->sum[k][m].med / b->sum[b->raw][m].med;
}

static int row_selected(const struct bench *b, enum metric m)
{
	static const int test_of[M_COUNT] = {0, 0, 0, 1, 1, 2, 3, 4, 4, 4, 5, 5, 6, 7, 8};

	return b->only[test_of[m]];
}

static void cell(char *buf, size_t len, const struct row *r, const struct summary *s, int spread)
{
	/* Every row has a format; the fallback keeps GCC's ASan build from seeing a null one. */
	const char *fmt = r->fmt ? r->fmt : "%g";
	char a[32], lo[32], hi[32];

	if (!s->n) {
		snprintf(buf, len, "-");
		return;
	}
	snprintf(a, sizeof(a), fmt, s->med);
	snprintf(lo, sizeof(lo), fmt, s->min);
	snprintf(hi, sizeof(hi), fmt, s->max);
	if (spread && s->min != s->max)
		snprintf(buf, len, "%s [%s-%s]", a, lo, hi);
	else
		snprintf(buf, len, "%s", a);
}

static void label_of(const struct bench *b, const struct row *r, char *buf, size_t len)
{
	if (r->m == M_MAP8)
		snprintf(buf, len, "%u procs map+read one file", b->cfg.nprocs);
	else
		snprintf(buf, len, "%s", r->label);
}

/* The notes under the table, each printed only when its test ran (the index in bench_tests[]):
 * a run of one test (scripts/bench's create section) should not explain the others. */
static void print_notes(const struct bench *b)
{
	static const char *const notes[] = {
		"mmap: writes are timed from open to close (close sends FLUSH on a pool); the read is a\n"
		"  fresh process mapping the file just written",
		"rw: pread follows pwrite in the same process with nothing dropped (warm where the data\n"
		"  path keeps the written pages)",
		"create: on raw tmpfs it ends with unlink, on a pool with the pool's own removal after\n"
		"  close (autohold=none)",
		"map8: the processes map the same file at once",
		"mem: the /proc/meminfo change while the file is held mapped, per byte of file\n"
		"  (MemAvailable counts the per-CPU free lists of /proc/zoneinfo back in; it is an\n"
		"  estimate, and noisy on a busy machine)",
		"rmlat: munmap to the name vanishing, polled",
		"create2: two processes at once, each creating in a folder of its own (pinned on a\n"
		"  pool), each file unlinked after its close; ops/s of both together",
		"shm: glibc's shm_open (O_CREAT|O_EXCL), ftruncate to 1 MiB, mmap, a write to every\n"
		"  page, munmap, close, shm_unlink; cycles/s, the target bound on /dev/shm in a\n"
		"  private mount namespace (the machine's /dev/shm untouched)",
		"sem: glibc's sem_open (O_CREAT|O_EXCL: a file sem.XXXXXX written, mapped and\n"
		"  link()ed to sem.NAME), sem_close, sem_unlink; cycles/s, as for shm",
	};
	const size_t rmlat = 5;

	printf("\nnotes:\n");
	for (size_t i = 0; i < bench_ntests && i < sizeof(notes) / sizeof(notes[0]); i++) {
		if (!b->only[i])
			continue;
		printf("- %s", notes[i]);
		if (i == rmlat)
			printf("; %u samples per pool",
			       (b->cfg.nlat + b->cfg.reps - 1) / b->cfg.reps * b->cfg.reps);
		printf("\n");
	}
}

static void print_table(const struct bench *b)
{
	struct utsname u;
	char date[64], line[128];
	time_t now = time(NULL);

	uname(&u);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M %Z", localtime(&now));
	printf("\npoolfs-bench %s, kernel %s, %ld CPUs;", date, u.release,
	       sysconf(_SC_NPROCESSORS_ONLN));
	/* only the big-file tests use -s */
	if (b->only[0] || b->only[1] || b->only[3] || b->only[4] || b->only[5])
		printf(" size %.0f MiB,", (double)b->cfg.size / (1 << 20));
	printf(" %u reps interleaved over", b->cfg.reps);
	for (unsigned k = 0; k < b->ntargets; k++)
		printf(" %s", b->targets[k].name);
	printf("\nmedian [min-max] of the repetitions; ratio = pool median / raw median (for GB/s and ops/s\n"
	       "higher is better, 1.0 = as fast as raw); GB/s = 1e9 bytes/s\n\n");

	printf("%-34s %-5s", "test", "unit");
	for (unsigned k = 0; k < b->ntargets; k++) {
		printf(" %-24s", b->targets[k].name);
		if ((int)k != b->raw && b->raw >= 0)
			printf(" %-6s", "ratio");
	}
	printf("\n");
	for (size_t i = 0; i < NROWS; i++) {
		const struct row *r = &rows[i];

		if (!row_selected(b, r->m))
			continue;
		label_of(b, r, line, sizeof(line));
		printf("%-34s %-5s", line, r->unit);
		for (unsigned k = 0; k < b->ntargets; k++) {
			char c[112];
			double q = ratio(b, k, r->m);

			cell(c, sizeof(c), r, &b->sum[k][r->m], r->m != M_RMLAT_MAX);
			printf(" %-24s", c);
			if ((int)k != b->raw && b->raw >= 0) {
				if (isnan(q))
					printf(" %-6s", "-");
				else
					printf(" %-6.2f", q);
			}
		}
		printf("\n");
	}
	print_notes(b);
	for (unsigned k = 0; k < b->ntargets; k++)
		if (b->targets[k].res.failures)
			printf("FAILED: %u measurement(s) on %s (see the messages above)\n",
			       b->targets[k].res.failures, b->targets[k].name);
}

static int write_csv(const struct bench *b)
{
	FILE *f = fopen(b->csv, "w");

	if (!f) {
		fprintf(stderr, "poolfs-bench: %s: %s\n", b->csv, strerror(errno));
		return -errno;
	}
	fprintf(f, "test,unit,target,median,min,max,ratio_to_raw,samples,size_bytes,reps\n");
	for (size_t i = 0; i < NROWS; i++) {
		const struct row *r = &rows[i];
		char line[128];

		if (!row_selected(b, r->m))
			continue;
		label_of(b, r, line, sizeof(line));
		for (unsigned k = 0; k < b->ntargets; k++) {
			const struct summary *s = &b->sum[k][r->m];
			double q = ratio(b, k, r->m);

			if (!s->n)
				continue;
			fprintf(f, "\"%s\",%s,%s,%.6g,%.6g,%.6g,", line, r->unit,
				b->targets[k].name, s->med, s->min, s->max);
			if (isnan(q))
				fprintf(f, ",");
			else
				fprintf(f, "%.4f,", q);
			fprintf(f, "%zu,%zu,%u\n", s->n, b->cfg.size, b->cfg.reps);
		}
	}
	return fclose(f) ? -errno : 0;
}

int main(int argc, char **argv)
{
	static struct bench bench;
	struct bench *b = &bench;
	unsigned failures = 0;

	b->cfg = (struct bench_cfg){.size = 1UL << 30,
				    .block = 1UL << 20,
				    .small = 4096,
				    .reps = 5,
				    .ncreate = 2000,
				    .nlat = 1000,
				    .nprocs = 8,
				    .ncycles = 1000};
	b->raw = -1;
	for (size_t i = 0; i < bench_ntests; i++)
		b->only[i] = !bench_tests[i].asked_only;
	if (parse_args(b, argc, argv)) {
		usage(stderr);
		return 2;
	}
	/* NAN: not measured (yet); a failed measurement stays NAN and is left out of the statistics */
	for (unsigned k = 0; k < b->ntargets; k++)
		for (int m = 0; m < M_COUNT; m++)
			for (unsigned r = 0; r < BENCH_MAX_REPS; r++)
				b->targets[k].res.v[m][r] = NAN;
	setvbuf(stdout, NULL, _IOLBF, 0);
	run_all(b);
	summarize(b);
	print_table(b);
	if (b->csv && write_csv(b) == 0)
		printf("CSV written to %s\n", b->csv);
	for (unsigned k = 0; k < b->ntargets; k++) {
		failures += b->targets[k].res.failures;
		free(b->targets[k].res.lat);
	}
	return failures ? 1 : 0;
}
