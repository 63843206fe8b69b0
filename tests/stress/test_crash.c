/* Daemon crash and restart.
 *
 * kill -9 the daemon while child processes have files open and mapped, unmount the dead mount
 * (the daemon mounts with auto_unmount, whose helper normally does it; otherwise MNT_DETACH, as
 * `fusermount3 -uz` would), start a new daemon on the SAME backing dir and mountpoint:
 *   - the old daemon's backing subfolder is still there until then, and the new daemon removes it
 *     at start ("removed 1 backing folder(s) left by daemons that are gone") and nothing else;
 *   - the new pool works and starts empty; after its unmount the backing dir is empty.
 * What a process that had a file mapped sees once the daemon is dead:
 *   - passthrough: its mapping lives on the backing tmpfs file, so reads keep returning the data,
 *     even after the new daemon swept the old folder (asserted);
 *   - page cache: whatever the kernel does; the test records it and asserts only that a process
 *     that does not touch its mapping survives. Observed here (kernel 6.18, libfuse 3.17.2): pages
 *     still in the FUSE page cache keep reading the data (through the mapping and through pread
 *     of a descriptor), also after the restart; a page never read before the crash gives SIGBUS
 *     through the mapping and ENOTCONN through pread. Writes to such pages can never reach the
 *     backing store again: the data of a dead page-cache pool is what each process still has.
 *     On passthrough a descriptor keeps working too (both cached and never-read ranges).
 * A second test checks that the sweep spares a live daemon's folder and files that are not
 * daemon folders.
 */
#include "stress.h"

#include <sys/statfs.h>

#define DATA_LEN (64 * 1024)
/* Each child's file is FILE_LEN long: DATA_LEN of data at 0 that was read before the crash
 * ("warm"), and a hole at COLD_OFF never touched before it ("cold": far beyond any readahead). */
#define FILE_LEN (4 * 1024 * 1024)
#define COLD_OFF (2 * 1024 * 1024)
#define COLD_LEN (4 * PAGE)

static int setup_none(void **state)
{
	return stest_setup(state, "autohold=none");
}

static void join_path(char *buf, size_t len, const char *dir, const char *name)
{
	int n = snprintf(buf, len, "%s/%s", dir, name);

	if (n < 0 || (size_t)n >= len)
		fail_msg("path too long: %s/%s", dir, name);
}

/* ---- mounts and daemons ---- */

static int is_fuse_live(const char *path)
{
	struct statfs sf;

	return statfs(path, &sf) == 0 && (unsigned long)sf.f_type == POOL_FUSE_SUPER_MAGIC;
}

static int log_has(const char *log, const char *what)
{
	char *text = pool_read_text(log);
	int yes = text && strstr(text, what) != NULL;

	free(text);
	return yes;
}

static void dump_text(const char *path)
{
	char *text = pool_read_text(path), *line, *save = NULL;

	if (!text)
		return;
	fprintf(stderr, "# ---- %s ----\n", path);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		fprintf(stderr, "# | %s\n", line);
	free(text);
}

/* The dead mount goes: auto_unmount's helper should take it within a moment; if not, detach it
 * ourselves (what `fusermount3 -uz` does). Returns 1 if the helper did it. */
static int drop_dead_mount(const char *mnt)
{
	long long deadline = pool_now_ms() + 3000;

	while (pool_path_is_mountpoint(mnt)) {
		if (pool_now_ms() >= deadline) {
			fprintf(stderr, "# %s still mounted 3 s after the daemon died: detaching\n",
				mnt);
			CHECK(umount2(mnt, MNT_DETACH));
			assert_false(pool_path_is_mountpoint(mnt));
			return 0;
		}
		sleep_us(10000);
	}
	return 1;
}

/* Start $POOLFS_BIN on mnt with backing= the fixture's backing dir (the fixture's datapath,
 * autohold=none), its stderr to log; wait until it is mounted. Like the harness's daemon, it gets
 * SIGTERM if we die. Recorded in t->extra[slot] so teardown stops it. */
static pid_t daemon_start(struct stest *t, int slot, const char *mnt, const char *log)
{
	const char *bin = getenv("POOLFS_BIN");
	char opts[2 * PATH_MAX];
	long long deadline;
	pid_t pid;
	int n;

	if (!bin || !bin[0])
		fail_msg("POOLFS_BIN is not set");
	n = snprintf(opts, sizeof(opts), "backing=%s,datapath=%s,allow_other,autohold=none",
		     t->f.p.backing, t->f.p.datapath);
	if (n < 0 || (size_t)n >= sizeof(opts))
		fail_msg("options too long");
	pid = tu_fork(SIGTERM);
	if (pid == 0) {
		pool_child_stdio(log, true);
		execl(bin, bin, "-f", "-o", opts, mnt, (char *)NULL);
		dprintf(2, "cannot exec %s: %s\n", bin, strerror(errno));
		_exit(127);
	}
	t->extra[slot] = pid;
	snprintf(t->extra_mnt[slot], sizeof(t->extra_mnt[slot]), "%s", mnt);
	deadline = pool_now_ms() + 15000;
	while (!is_fuse_live(mnt) || !log_has(log, "poolfs: mounted ")) {
		int status;

		if (waitpid(pid, &status, WNOHANG) == pid) {
			t->extra[slot] = 0;
			dump_text(log);
			fail_msg("the new daemon exited before mounting (status 0x%x)", status);
		}
		if (pool_now_ms() >= deadline) {
			dump_text(log);
			fail_msg("the new daemon did not mount %s within 15 s", mnt);
		}
		sleep_us(10000);
	}
	return pid;
}

static void daemon_stop_ok(struct stest *t, int slot, const char *log)
{
	int r = extra_daemon_stop(t->extra_mnt[slot], t->extra[slot]);

	t->extra[slot] = 0;
	if (r != 0 || stress_long()) {
		dump_text(log);
		if (r != 0)
			fail_msg("the restarted daemon ended with %d after unmount, want 0", r);
	}
}

/* The backing dir's entries named poolfs-*: their count; names (comma-separated) in out. */
static int backing_subdirs(const struct pool_fixture *p, char *out, size_t len)
{
	DIR *d = opendir(p->backing);
	struct dirent *e;
	size_t used = 0;
	int n = 0;

	out[0] = '\0';
	if (!d)
		fail_msg("opendir %s: %s", p->backing, errname(errno));
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "poolfs-", 7) != 0)
			continue;
		if (used + strlen(e->d_name) + 2 < len)
			used += (size_t)snprintf(out + used, len - used, "%s%s", n ? "," : "",
						 e->d_name);
		n++;
	}
	closedir(d);
	return n;
}

/* The backing subfolder of daemon pid ("poolfs-<pid>-<random>"), or fail. */
static void subdir_of(const struct pool_fixture *p, pid_t pid, char *out, size_t len)
{
	char prefix[32];
	DIR *d = opendir(p->backing);
	struct dirent *e;

	snprintf(prefix, sizeof(prefix), "poolfs-%d-", (int)pid);
	out[0] = '\0';
	if (!d)
		fail_msg("opendir %s: %s", p->backing, errname(errno));
	while ((e = readdir(d)))
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
			snprintf(out, len, "%.*s", (int)len - 1, e->d_name);
	closedir(d);
	if (!out[0])
		fail_msg("no backing folder %s* for daemon %d in %s", prefix, (int)pid, p->backing);
}

static int not_a_folder(const struct dirent *e, const void *ctx)
{
	(void)ctx;
	return e->d_type != DT_DIR;
}

static int files_in(const char *dir)
{
	return tu_dir_count(dir, not_a_folder, NULL);
}

/* ---- children with files open and mapped ---- */

enum kid_kind {
	KID_MAPPED,    /* mapped, descriptor closed; probes its mapping when asked */
	KID_OPEN,      /* descriptor only; probes it with pread when asked */
	KID_UNTOUCHED, /* mapped and open, never touches either after the crash */
};

enum probe {
	PROBE_OK = 0,
	PROBE_BAD_DATA = 1,
	PROBE_SIGBUS = 2,
	PROBE_SIGSEGV = 3,
	PROBE_ERROR = 4, /* the second byte carries errno */
};

static const char *probe_name(int r)
{
	static const char *const names[] = {
		[PROBE_OK] = "reads the data",	 [PROBE_BAD_DATA] = "reads WRONG data",
		[PROBE_SIGBUS] = "gets SIGBUS",	 [PROBE_SIGSEGV] = "gets SIGSEGV",
		[PROBE_ERROR] = "gets an error",
	};

	return tu_word(names, ARRAY_SIZE(names), r, "?");
}

struct kid {
	int kind;
	char path[PATH_MAX];
	uint32_t seed;
	int down[2], up[2];
	pid_t pid;
};

static sigjmp_buf probe_env;

static void on_fault(int sig)
{
	siglongjmp(probe_env, sig);
}

static int zeros_bad(const volatile unsigned char *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (b[i])
			return 1;
	return 0;
}

/* Read the mapping at off..off+len: seed 0 means "zeros expected". */
static int probe_mapping(const unsigned char *m, off_t off, size_t len, uint32_t seed)
{
	struct sigaction sa, old_bus, old_segv;
	volatile int result = PROBE_OK;
	int sig;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fault;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old_bus);
	sigaction(SIGSEGV, &sa, &old_segv);
	sig = sigsetjmp(probe_env, 1);
	if (sig == 0)
		result = (seed ? pat_check(m + off, len, seed, (uint64_t)off) >= 0
			       : zeros_bad(m + off, len))
				 ? PROBE_BAD_DATA
				 : PROBE_OK;
	else
		result = sig == SIGBUS ? PROBE_SIGBUS : PROBE_SIGSEGV;
	sigaction(SIGBUS, &old_bus, NULL);
	sigaction(SIGSEGV, &old_segv, NULL);
	return result;
}

/* kid_main() once its buffer is there (buf: DATA_LEN bytes): its exit code. */
static int kid_serve(struct kid *k, unsigned char *buf)
{
	unsigned char *m = NULL;
	int fd;

	fd = open(k->path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return 11;
	pat_fill(buf, DATA_LEN, k->seed, 0);
	if (ftruncate(fd, FILE_LEN) == -1 || pwrite_all(fd, buf, DATA_LEN, 0) != DATA_LEN)
		return 12;
	if (k->kind != KID_OPEN) {
		m = mmap(NULL, FILE_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			return 13;
		if (pat_check(m, DATA_LEN, k->seed, 0) >= 0)
			return 14;
	}
	if (k->kind == KID_MAPPED) {
		close(fd);
		fd = -1;
	}
	if (write(k->up[1], "r", 1) != 1)
		return 15;
	for (;;) {
		unsigned char out[4] = {PROBE_OK, 0, PROBE_OK, 0};
		char cmd;

		if (read(k->down[0], &cmd, 1) != 1)
			return 20;
		if (cmd == 'q')
			break;
		if (k->kind == KID_MAPPED) {
			out[0] = (unsigned char)probe_mapping(m, 0, DATA_LEN, k->seed);
			out[2] = (unsigned char)probe_mapping(m, COLD_OFF, COLD_LEN, 0);
		} else if (k->kind == KID_OPEN) {
			ssize_t n = pread_all(fd, buf, DATA_LEN, 0);

			if (n < 0) {
				out[0] = PROBE_ERROR;
				out[1] = (unsigned char)errno;
			} else if (n != DATA_LEN || pat_check(buf, DATA_LEN, k->seed, 0) >= 0) {
				out[0] = PROBE_BAD_DATA;
			}
			n = pread_all(fd, buf, COLD_LEN, COLD_OFF);
			if (n < 0) {
				out[2] = PROBE_ERROR;
				out[3] = (unsigned char)errno;
			} else if (n != COLD_LEN || zeros_bad(buf, COLD_LEN)) {
				out[2] = PROBE_BAD_DATA;
			}
		}
		if (write(k->up[1], out, 4) != 4)
			return 21;
	}
	if (m)
		munmap(m, FILE_LEN);
	if (fd >= 0)
		close(fd);
	return 0;
}

static int kid_main(void *arg)
{
	struct kid *k = arg;
	unsigned char *buf = malloc(DATA_LEN);
	int r;

	close(k->down[1]);
	close(k->up[0]);
	if (!buf)
		return 10;
	/* kid_serve() returns from many places; buf is freed here, once */
	r = kid_serve(k, buf);
	free(buf);
	return r;
}

static void kid_start(struct kid *k, int kind, const char *path, uint32_t seed)
{
	k->kind = kind;
	k->seed = seed;
	snprintf(k->path, sizeof(k->path), "%s", path);
	CHECK(pipe2(k->down, O_CLOEXEC));
	CHECK(pipe2(k->up, O_CLOEXEC));
	k->pid = tu_spawn(kid_main, k);
	close(k->down[0]);
	close(k->up[1]);
}

static void read_reply(struct kid *k, unsigned char *out, size_t len)
{
	struct pollfd pfd = {.fd = k->up[0], .events = POLLIN};
	size_t got = 0;

	while (got < len) {
		ssize_t n;

		if (poll(&pfd, 1, 30000) <= 0)
			fail_msg("child %d (%s) did not answer", (int)k->pid, k->path);
		n = read(k->up[0], out + got, len - got);
		if (n <= 0) {
			int r = tu_reap(k->pid, 5000);

			fail_msg("child %d (%s) is gone (ended with %d)", (int)k->pid, k->path, r);
		}
		got += (size_t)n;
	}
}

static void kid_ready(struct kid *k)
{
	unsigned char b;

	read_reply(k, &b, 1);
}

struct probe_result {
	int warm, warm_err; /* PROBE_* of the data read before the crash, errno */
	int cold, cold_err; /* PROBE_* of the hole never read before it, errno */
};

/* Ask the child to probe its file. */
static struct probe_result kid_probe(struct kid *k)
{
	unsigned char out[4];

	CHECK(write(k->down[1], "p", 1));
	read_reply(k, out, 4);
	return (struct probe_result){out[0], out[1], out[2], out[3]};
}

static void probe_text(char *buf, size_t len, int r, int err)
{
	snprintf(buf, len, "%s%s%s", probe_name(r), r == PROBE_ERROR ? " " : "",
		 r == PROBE_ERROR ? errname(err) : "");
}

static void print_probe(const char *who, const char *when, struct probe_result r)
{
	char warm[64], cold[64];

	probe_text(warm, sizeof(warm), r.warm, r.warm_err);
	probe_text(cold, sizeof(cold), r.cold, r.cold_err);
	fprintf(stderr, "# %s file, %s: cached data %s; never-read hole %s\n", who, when, warm,
		cold);
}

/* Tell the child to unmap, close and exit: its exit code (or 128+signal). */
static int kid_quit(struct kid *k)
{
	int r;

	if (write(k->down[1], "q", 1) != 1)
		fprintf(stderr, "# child %d: quit: %s\n", (int)k->pid, errname(errno));
	r = tu_reap(k->pid, 30000);
	close(k->down[1]);
	close(k->up[0]);
	return r;
}

/* ---- tests ---- */

static void test_daemon_killed_restart_on_same_backing(void **state)
{
	struct stest *t = stest_get(state);
	struct pool_fixture *p = &t->f.p;
	int passthrough = strcmp(p->active_datapath, "passthrough") == 0;
	char path[PATH_MAX], old_sub[NAME_MAX + 1], old_dir[PATH_MAX], subs[1024], log2[PATH_MAX];
	char left[1024];
	struct kid kids[3];
	static const char *const names[3] = {"mapped", "open", "untouched"};
	struct probe_result before[2], after[2];
	int code[3];
	unsigned char *buf;
	pid_t dead = p->daemon_pid;
	int r, fd, helper;
	struct stat st;

	memset(kids, 0, sizeof(kids));
	for (int i = 0; i < 3; i++) {
		join_path(path, sizeof(path), p->mnt, names[i]);
		kid_start(&kids[i], i, path, 1000 + (uint32_t)i);
	}
	for (int i = 0; i < 3; i++)
		kid_ready(&kids[i]);

	/* The old daemon's folder, with the three files in it. */
	subdir_of(p, dead, old_sub, sizeof(old_sub));
	join_path(old_dir, sizeof(old_dir), p->backing, old_sub);
	assert_int_equal(backing_subdirs(p, subs, sizeof(subs)), 1);
	assert_int_equal(files_in(old_dir), 3);

	/* kill -9 the daemon; we reap it ourselves, so the harness must not wait for it. */
	CHECK(kill(dead, SIGKILL));
	r = tu_reap(dead, 10000);
	p->daemon_pid = 0;
	assert_int_equal(r, 128 + SIGKILL);

	/* What the users see with the daemon dead, before anything is cleaned up. */
	for (int i = 0; i < 2; i++)
		before[i] = kid_probe(&kids[i]);

	helper = drop_dead_mount(p->mnt);
	/* Nothing removed the old folder yet: a daemon that dies cleans up nothing. */
	if (stat(old_dir, &st) == -1)
		fail_msg("the dead daemon's folder %s vanished before any restart: %s", old_sub,
			 errname(errno));
	assert_int_equal(files_in(old_dir), 3);

	/* A new daemon on the same backing dir and mountpoint sweeps the old folder. */
	join_path(log2, sizeof(log2), p->root, "restarted.log");
	daemon_start(t, 0, p->mnt, log2);
	if (stat(old_dir, &st) == 0 || errno != ENOENT) {
		dump_text(log2);
		fail_msg("the dead daemon's folder %s is still there after the restart", old_sub);
	}
	if (!log_has(log2, "removed 1 backing folder(s)")) {
		dump_text(log2);
		fail_msg("the restarted daemon did not log \"removed 1 backing folder(s)\"");
	}
	r = backing_subdirs(p, subs, sizeof(subs));
	if (r != 1 || strcmp(subs, old_sub) == 0)
		fail_msg("backing dir holds %d daemon folders (%s), want the new one only", r,
			 subs);
	assert_int_equal(pool_backing_files(p), 0);

	/* The new pool starts empty and works. */
	r = list_dir(p->mnt, left, sizeof(left));
	if (r != 0)
		fail_msg("the restarted pool lists %d entries: %s", r, left);
	join_path(path, sizeof(path), p->mnt, "new");
	buf = malloc(DATA_LEN);
	assert_non_null(buf);
	pat_fill(buf, DATA_LEN, 77, 0);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(fd);
	assert_int_equal(pwrite_all(fd, buf, DATA_LEN, 0), DATA_LEN);
	memset(buf, 0, DATA_LEN);
	assert_int_equal(pread_all(fd, buf, DATA_LEN, 0), DATA_LEN);
	assert_true(pat_check(buf, DATA_LEN, 77, 0) < 0);
	{
		unsigned char *m = mmap(NULL, DATA_LEN, PROT_READ, MAP_SHARED, fd, 0);

		if (m == MAP_FAILED)
			fail_msg("mmap in the restarted pool: %s", errname(errno));
		assert_true(pat_check(m, DATA_LEN, 77, 0) < 0);
		munmap(m, DATA_LEN);
	}
	assert_int_equal(pool_backing_files(p), 1);
	CHECK(close(fd));
	free(buf);
	CHECK_0(pool_wait_gone(path, GONE_MS));
	CHECK_0(pool_wait_backing_files(p, 0, GONE_MS));

	/* The old mappings once the old folder is swept. */
	for (int i = 0; i < 2; i++)
		after[i] = kid_probe(&kids[i]);
	for (int i = 0; i < 3; i++)
		code[i] = kid_quit(&kids[i]);

	fprintf(stderr, "# datapath=%s, daemon killed; dead mount removed by %s\n",
		p->active_datapath, helper ? "auto_unmount's helper" : "us (MNT_DETACH)");
	for (int i = 0; i < 2; i++) {
		print_probe(names[i], "daemon dead", before[i]);
		print_probe(names[i], "old folder swept by the new daemon", after[i]);
	}
	fprintf(stderr, "# exit codes: mapped %d, open %d, untouched %d\n", code[0], code[1],
		code[2]);

	/* A process that does not touch its mapping survives, on every path. */
	assert_int_equal(code[2], 0);
	if (passthrough) {
		/* The mapping is the backing file's: the data stays readable. */
		if (before[0].warm != PROBE_OK || after[0].warm != PROBE_OK ||
		    before[0].cold != PROBE_OK || after[0].cold != PROBE_OK)
			fail_msg(
				"passthrough: a mapping of a file whose daemon died %s / %s (cached "
				"/ never read), after the restart %s / %s; want the data",
				probe_name(before[0].warm), probe_name(before[0].cold),
				probe_name(after[0].warm), probe_name(after[0].cold));
		assert_int_equal(code[0], 0);
	}
	/* Page cache: no assertion about touching the mapping or the descriptor (recorded
	 * above); the data is only what the kernel still has cached. */

	daemon_stop_ok(t, 0, log2);
	r = backing_subdirs(p, subs, sizeof(subs));
	if (r != 0)
		fail_msg("after the restarted daemon's unmount the backing dir holds %s", subs);
	assert_int_equal(pool_backing_files(p), 0);
}

static void make_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	CHECK(fd);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	CHECK(close(fd));
}

static void test_restart_sweeps_only_dead_daemons(void **state)
{
	struct stest *t = stest_get(state);
	struct pool_fixture *p = &t->f.p;
	char mnt2[PATH_MAX], logb[PATH_MAX], logc[PATH_MAX], path[PATH_MAX];
	char sub_a[NAME_MAX + 1], sub_b[NAME_MAX + 1], sub_c[NAME_MAX + 1], subs[1024];
	char decoy_file[PATH_MAX], decoy_dir[PATH_MAX], decoy_in_dir[PATH_MAX];
	char decoy_named[PATH_MAX], dir_a[PATH_MAX], dir_b[PATH_MAX], dir_c[PATH_MAX];
	unsigned char buf[PAGE];
	struct kid kid;
	struct stat st;
	pid_t b;
	int xfd, fd, r;

	/* Daemon A (the fixture's) stays alive and holds a file. */
	join_path(path, sizeof(path), p->mnt, "x");
	xfd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(xfd);
	pat_fill(buf, PAGE, 5, 0);
	assert_int_equal(pwrite_all(xfd, buf, PAGE, 0), PAGE);
	subdir_of(p, p->daemon_pid, sub_a, sizeof(sub_a));
	join_path(dir_a, sizeof(dir_a), p->backing, sub_a);

	/* Things in the backing dir that are no daemon's folder. */
	join_path(decoy_file, sizeof(decoy_file), p->backing, "keep-me.txt");
	join_path(decoy_dir, sizeof(decoy_dir), p->backing, "other-dir");
	join_path(decoy_in_dir, sizeof(decoy_in_dir), decoy_dir, "f");
	join_path(decoy_named, sizeof(decoy_named), p->backing, "poolfs-999999-notadir");
	make_file(decoy_file, "keep");
	CHECK(mkdir(decoy_dir, 0700));
	make_file(decoy_in_dir, "keep");
	make_file(decoy_named, "keep");

	/* Daemon B on a second mountpoint and the same backing dir; a child maps a file in it;
	 * B is killed. */
	join_path(mnt2, sizeof(mnt2), p->root, "mnt2");
	CHECK(mkdir(mnt2, 0755));
	join_path(logb, sizeof(logb), p->root, "daemon-b.log");
	b = daemon_start(t, 0, mnt2, logb);
	join_path(path, sizeof(path), mnt2, "y");
	memset(&kid, 0, sizeof(kid));
	kid_start(&kid, KID_UNTOUCHED, path, 9);
	kid_ready(&kid);
	subdir_of(p, b, sub_b, sizeof(sub_b));
	join_path(dir_b, sizeof(dir_b), p->backing, sub_b);
	assert_int_equal(backing_subdirs(p, subs, sizeof(subs)), 3); /* A, B, the decoy file */
	CHECK(kill(b, SIGKILL));
	r = tu_reap(b, 10000);
	t->extra[0] = 0;
	assert_int_equal(r, 128 + SIGKILL);
	drop_dead_mount(mnt2);
	assert_int_equal(files_in(dir_b), 1);

	/* Daemon C on mnt2: removes B's folder, and only that. */
	join_path(logc, sizeof(logc), p->root, "daemon-c.log");
	daemon_start(t, 1, mnt2, logc);
	if (!log_has(logc, "removed 1 backing folder(s)")) {
		dump_text(logc);
		fail_msg("daemon C did not log \"removed 1 backing folder(s)\"");
	}
	if (stat(dir_b, &st) == 0 || errno != ENOENT)
		fail_msg("dead daemon B's folder %s survived the restart", sub_b);
	if (stat(dir_a, &st) == -1)
		fail_msg("live daemon A's folder %s was removed: %s", sub_a, errname(errno));
	assert_int_equal(files_in(dir_a), 1);
	CHECK(stat(decoy_file, &st));
	CHECK(stat(decoy_in_dir, &st));
	CHECK(stat(decoy_named, &st));
	subdir_of(p, t->extra[1], sub_c, sizeof(sub_c));
	join_path(dir_c, sizeof(dir_c), p->backing, sub_c);

	/* A still serves its file, by descriptor and by name. */
	memset(buf, 0, sizeof(buf));
	assert_int_equal(pread_all(xfd, buf, PAGE, 0), PAGE);
	assert_true(pat_check(buf, PAGE, 5, 0) < 0);
	join_path(path, sizeof(path), p->mnt, "x");
	fd = open(path, O_RDONLY);
	CHECK(fd);
	memset(buf, 0, sizeof(buf));
	assert_int_equal(pread_all(fd, buf, PAGE, 0), PAGE);
	assert_true(pat_check(buf, PAGE, 5, 0) < 0);
	CHECK(close(fd));

	/* C works. */
	join_path(path, sizeof(path), mnt2, "z");
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(fd);
	pat_fill(buf, PAGE, 6, 0);
	assert_int_equal(pwrite_all(fd, buf, PAGE, 0), PAGE);
	memset(buf, 0, sizeof(buf));
	assert_int_equal(pread_all(fd, buf, PAGE, 0), PAGE);
	assert_true(pat_check(buf, PAGE, 6, 0) < 0);
	assert_int_equal(files_in(dir_c), 1);
	CHECK(close(fd));
	CHECK_0(pool_wait_gone(path, GONE_MS));

	/* The child that had B's file mapped survives (it never touched it again). */
	assert_int_equal(kid_quit(&kid), 0);

	daemon_stop_ok(t, 1, logc);
	if (stat(dir_c, &st) == 0 || errno != ENOENT)
		fail_msg("daemon C left its folder %s behind after a clean unmount", sub_c);
	CHECK(unlink(decoy_file));
	CHECK(unlink(decoy_in_dir));
	CHECK(rmdir(decoy_dir));
	CHECK(unlink(decoy_named));
	CHECK(rmdir(mnt2));
	CHECK(close(xfd));
	join_path(path, sizeof(path), p->mnt, "x");
	CHECK_0(pool_wait_gone(path, GONE_MS));
	/* Teardown unmounts A and requires an empty backing dir. */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_daemon_killed_restart_on_same_backing,
						setup_none, stest_teardown),
		cmocka_unit_test_setup_teardown(test_restart_sweeps_only_dead_daemons, setup_none,
						stest_teardown),
	};

	return cmocka_run_group_tests_name("crash", tests, NULL, NULL);
}
