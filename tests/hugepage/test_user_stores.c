/* Per-user stores (docs/design.md "Per-user stores", docs/interface.md "max_user_size"): a root
 * pool mounted with max_user_size keeps each user's files in a private tmpfs instance of that
 * user's own, sized to the quota, and keeps the passthrough path. Checked here, as root and as a
 * second user (OTHER_UID, taken as setpriv --reuid --regid --clear-groups does):
 *   - the data path: the passthrough run mounts datapath=auto with the quota, as an fstab line
 *     does, and the pool must say "datapath passthrough" (user.poolfs.stat and its "mounted"
 *     line); where this build or kernel has no passthrough at all (a pool without quota is
 *     refused it) that run skips. The pagecache run mounts datapath=pagecache with the quota and
 *     checks the page-cache path's answers below;
 *   - the stores: each user's file is in a store of its own among the tmpfs instances the daemon
 *     holds open (not the pool's own one, not the other user's), of exactly the quota, and holds
 *     what the user wrote through its mapping; the stores go with the daemon (teardown);
 *   - huge pages: a big file written through a mapping is backed by huge pages in its user's
 *     store (the backing file mapped here is PMD-mapped, /proc/self/smaps) and, on passthrough,
 *     PMD-mapped in the writer's own mapping too: shmem pages, as FUSE's page cache never is.
 *     (/proc/self/maps cannot show which store a passthrough mapping maps: it names the FUSE
 *     inode, the kernel's file_user_inode(), not the backing file's);
 *   - past the quota: write() gives ENOSPC on passthrough (the user's tmpfs is full; the write
 *     never reaches the daemon) and EDQUOT on the page-cache path (the daemon counts), and
 *     ftruncate and fallocate of the file written give EDQUOT; a process that mapped a file
 *     allocated before then stores to every page of it without SIGBUS; root's full store leaves
 *     the other user's quota whole;
 *   - growing another file once write() used the quota up: EDQUOT as well (the contract says
 *     EDQUOT for every ftruncate and fallocate past the quota, docs/interface.md), a test of its
 *     own, since on passthrough the daemon's count need not have seen those writes.
 * Where the kernel had no huge page to give (thp_file_fallback moved in /proc/vmstat) the
 * huge-page checks skip rather than blame the pool, as in test_hugepage.c. */
#include "testutil.h"
#include "hp_util.h"

#include <inttypes.h>
#include <sys/mman.h>

#define MiB (1024L * 1024L)
#define QUOTA (64 * MiB)
#define BIG (16 * MiB)	  /* eight 2 MiB pages */
#define MAPPED (16 * MiB) /* the mapper's file in the quota test */
#define MAX_STORES 8

/* POOLFS_DATAPATH was passthrough: the pools are mounted datapath=auto and must get passthrough. */
static int passthrough_run;

struct us_state {
	struct tu_fixture t; /* first: tu_pool works on it */
	int watches[2];	     /* inotify on the users' stores (0: none), checked by teardown */
};

static int setup(void **state)
{
	char opts[64];

	snprintf(opts, sizeof(opts), "autohold=none,max_user_size=%ld", QUOTA);
	return tu_setup_sized(state, opts, sizeof(struct us_state));
}

/* The pool goes down, and with its daemon every user's store. */
static int teardown(void **state)
{
	struct us_state *s = *state;
	int r = 0;

	if (!s)
		return 0;
	if (tu_unmount(&s->t) < 0)
		r = -1;
	for (int i = 0; i < 2; i++) {
		int w;

		if (s->watches[i] <= 0)
			continue;
		w = hp_store_wait_gone(s->watches[i], GONE_MS);
		if (w != 0) {
			fprintf(stderr, "# a user's store outlived its daemon: %s\n", errname(-w));
			r = -1;
		}
		close(s->watches[i]);
	}
	free(s);
	*state = NULL;
	return r;
}

static const char *want_datapath(void)
{
	return passthrough_run ? "passthrough" : "pagecache";
}

static int on_passthrough(const struct pool_fixture *p)
{
	return strcmp(p->active_datapath, "passthrough") == 0;
}

/* The pool reports the data path it is on, the quota, and the daemon made per-user stores. */
static void test_datapath_with_quota(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	char buf[8192], want[64];
	char *log;
	ssize_t n;

	if (strcmp(p->active_datapath, want_datapath()) != 0)
		fail_msg(
			"mounted with max_user_size=%ld (datapath=%s): the daemon says datapath=%s, "
			"want %s",
			QUOTA, p->datapath, p->active_datapath, want_datapath());
	n = getxattr(p->mnt, POOLFS_XATTR_STAT, buf, sizeof(buf) - 1);
	CHECK(n);
	buf[n] = '\0';
	snprintf(want, sizeof(want), "\ndatapath %s\n", want_datapath());
	if (!strstr(buf, want))
		fail_msg("user.poolfs.stat does not say \"%s\":\n%s", want + 1, buf);
	snprintf(want, sizeof(want), "\nmax_user_size %ld\n", QUOTA);
	if (!strstr(buf, want))
		fail_msg("user.poolfs.stat does not say \"%s\":\n%s", want + 1, buf);
	log = pool_read_text(p->log);
	assert_non_null(log);
	snprintf(buf, sizeof(buf),
		 "max_user_size: each user's files in a private tmpfs instance of %ld bytes",
		 QUOTA);
	if (!strstr(log, buf)) {
		free(log);
		pool_dump_log(p);
		fail_msg("the daemon did not log \"%s\"", buf);
	}
	free(log);
}

/* What a writer saw, in memory shared with the test. */
struct seen {
	uint64_t ino;
	long pmd_kb;
};

struct writer {
	const struct pool_fixture *p;
	const char *name;
	uint32_t seed;
	struct chan c;
	struct seen *out;
};

/* A child (root, or the other user): a new file of BIG bytes written through a shared mapping and
 * synced (so that on the page-cache path the backing file has it too); reports what it sees,
 * then keeps file and mapping until told to go. */
static int writer(void *arg)
{
	struct writer *w = arg;
	char path[PATH_MAX];
	unsigned char *m;
	struct stat st;
	int fd;

	chan_child(&w->c);
	USER_TRUE(1, pool_path(w->p, w->name, path, sizeof(path)) == 0);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	USER_OK(2, fd);
	USER_OK(3, ftruncate(fd, BIG));
	m = mmap(NULL, BIG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	USER_TRUE(4, m != MAP_FAILED);
	pat_fill(m, BIG, w->seed, 0);
	USER_OK(5, msync(m, BIG, MS_SYNC));
	USER_OK(6, fstat(fd, &st));
	w->out->ino = st.st_ino;
	w->out->pmd_kb = hp_pmd_kb(m);
	USER_TRUE(7, CHILD_READY(&w->c) == 0);
	USER_TRUE(8, CHILD_WAIT_GO(&w->c) == 0);
	USER_TRUE(9, pat_check(m, BIG, w->seed, 0) == -1);
	USER_OK(10, munmap(m, BIG));
	USER_OK(11, close(fd));
	return 0;
}

/* What the test found about one writer's file in the daemon's stores. */
struct found {
	int store;	 /* index in the stores, -1: in none */
	int holders;	 /* stores holding a file of that inode number */
	long long size;	 /* that store's size */
	long backing_kb; /* PMD kB of the backing file mapped here, -1 if it could not be mapped */
	int backing_match; /* the backing file holds the writer's pattern */
};

/* The backing file of ino in store s, mapped read-only here: its PMD kB, and whether it holds
 * the pattern seed (*match). */
static long map_backing(const struct pool_store *s, uint64_t ino, uint32_t seed, int *match)
{
	char path[96];
	unsigned char *m;
	long kb;
	int fd;

	*match = 0;
	snprintf(path, sizeof(path), "%s/%016" PRIx64, s->path, ino);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	m = mmap(NULL, BIG, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	*match = pat_check(m, BIG, seed, 0) == -1;
	kb = hp_pmd_kb(m);
	munmap(m, BIG);
	return kb;
}

static void find_file(const struct pool_store *st, int n, const struct seen *w, uint32_t seed,
		      struct found *f)
{
	*f = (struct found){.store = -1, .backing_kb = -1};
	for (int i = 0; i < n; i++)
		if (hp_store_holds(&st[i], w->ino) == 1) {
			f->store = i;
			f->holders++;
		}
	if (f->store < 0)
		return;
	f->size = hp_store_size(&st[f->store]);
	f->backing_kb = map_backing(&st[f->store], w->ino, seed, &f->backing_match);
}

/* Root's and the other user's big files, written through mappings at the same time, are each
 * in a store of that user's own, of the quota's size, backed by huge pages; on passthrough each
 * writer's mapping is the store's file, PMD-mapped. */
static void test_own_stores_huge_pages(void **state)
{
	struct us_state *s = *state;
	struct pool_fixture *p = tu_pool(state);
	static const char *const who[2] = {"root", "the other user"};
	struct writer w[2] = {{.p = p, .name = "root-big", .seed = 9},
			      {.p = p, .name = "user-big", .seed = 10}};
	struct pool_store st[MAX_STORES];
	struct found f[2];
	struct seen *shared, seen[2];
	long before = hp_vmstat("thp_file_fallback");
	int n, rc[2], fell_back, main_store = -1;
	struct stat tmp;
	pid_t kid[2];

	shared = mmap(NULL, 2 * sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	assert_true(shared != MAP_FAILED);
	w[0].out = &shared[0];
	w[1].out = &shared[1];
	chan_open(&w[0].c);
	kid[0] = tu_spawn(writer, &w[0]);
	chan_parent(&w[0].c);
	PARENT_WAIT_READY(&w[0].c);
	chan_open(&w[1].c);
	kid[1] = run_as_spawn(OTHER_UID, OTHER_GID, writer, &w[1]);
	assert_true(kid[1] > 0);
	tu_track(kid[1]);
	chan_parent(&w[1].c);
	PARENT_WAIT_READY(&w[1].c);

	/* both files are open and mapped: where are they? */
	memcpy(seen, shared, sizeof(seen));
	munmap(shared, 2 * sizeof(*shared));
	CHECK(stat(p->root, &tmp));
	n = pool_daemon_stores(p->daemon_pid, tmp.st_dev, st, MAX_STORES);
	if (n < 0)
		fail_msg("the daemon's stores: %s", errname(-n));
	fprintf(stderr, "# the daemon holds %d private tmpfs instances\n", n);
	for (int i = 0; i < n; i++)
		if (st[i].dev == p->store_dev)
			main_store = i;
	for (int i = 0; i < 2; i++) {
		find_file(st, n, &seen[i], w[i].seed, &f[i]);
		if (f[i].store >= 0 && s->watches[i] == 0)
			s->watches[i] = hp_store_watch(&st[f[i].store]);
		fprintf(stderr,
			"# %s's file (ino %" PRIu64 "): store %d of %d (pool's own: %d), "
			"%lld bytes, backing file PMD-mapped %ld kB, writer's mapping %ld kB\n",
			who[i], seen[i].ino, f[i].store, n, main_store, f[i].size, f[i].backing_kb,
			seen[i].pmd_kb);
	}
	fell_back = hp_vmstat("thp_file_fallback") != before;
	for (int i = 0; i < 2; i++)
		PARENT_GO(&w[i].c);
	rc[0] = tu_reap(kid[0], CHILD_MS);
	rc[1] = tu_reap(kid[1], CHILD_MS);
	chan_close_parent(&w[0].c);
	chan_close_parent(&w[1].c);
	for (int i = 0; i < 2; i++)
		if (rc[i] != 0)
			fail_msg("%s's writer ended with %d (its failed step)", who[i], rc[i]);
	tu_wait_pool_entries(p, 0, GONE_MS);

	assert_true(main_store >= 0); /* the harness found the pool's store among them */
	for (int i = 0; i < 2; i++) {
		if (f[i].holders != 1)
			fail_msg("%s's file is in %d of the daemon's %d stores, want 1", who[i],
				 f[i].holders, n);
		if (f[i].store == main_store)
			fail_msg("%s's file is in the pool's own store, not in a store of its own",
				 who[i]);
		if (f[i].size != QUOTA)
			fail_msg("%s's store has %lld bytes, want the quota's %ld", who[i],
				 f[i].size, QUOTA);
		if (!f[i].backing_match)
			fail_msg("%s's backing file does not hold what it wrote", who[i]);
	}
	if (f[0].store == f[1].store)
		fail_msg("root's and the other user's files are in the same store");
	/* huge pages, last: the kernel may have had none to give */
	for (int i = 0; i < 2; i++) {
		int missing = f[i].backing_kb <= 0 || (on_passthrough(p) && seen[i].pmd_kb <= 0);

		if (missing && fell_back) {
			TU_SKIP("the kernel had no free huge page (thp_file_fallback moved)");
		}
		if (f[i].backing_kb <= 0)
			fail_msg(
				"%s's backing file is not backed by huge pages (PMD-mapped %ld kB)",
				who[i], f[i].backing_kb);
		if (on_passthrough(p) && seen[i].pmd_kb <= 0)
			fail_msg("%s's mapping has no PMD-mapped pages (%ld kB)", who[i],
				 seen[i].pmd_kb);
	}
}

/* ---- past the quota ---- */

struct mapper {
	char path[PATH_MAX];
	struct chan c;
};

/* Maps the file (grown, and so allocated, before the store filled), waits, then stores to every
 * page and syncs: a page not allocated beforehand would kill it with SIGBUS. */
static int mapper_child(void *arg)
{
	struct mapper *a = arg;
	unsigned char *m;

	chan_child(&a->c);
	m = tu_map_path(a->path, MAPPED);
	CHILD_CHECK(m != MAP_FAILED, 1);
	CHILD_READY_THEN_GO(&a->c, 2);
	for (long off = 0; off < MAPPED; off += 4096)
		pat_fill(m + off, 4096, 71, (uint64_t)off);
	CHILD_CHECK(msync(m, MAPPED, MS_SYNC) == 0, 4);
	CHILD_CHECK(munmap(m, MAPPED) == 0, 5);
	return 0;
}

struct scene {
	const struct pool_fixture *p;
	const char *tag; /* names: TAG-mapped, TAG-fill */
	int write_errno; /* write() past the quota on this data path */
	int hold;	 /* report on c when done and keep the files until told (root's) */
	struct chan c;
};

/* pread the first len bytes of fd in MiB chunks into buf: whether they hold pattern seed. */
static int holds_pattern(int fd, char *buf, long len, uint32_t seed)
{
	for (long off = 0; off < len; off += MiB) {
		long k = len - off < MiB ? len - off : MiB;

		if (pread_all(fd, buf, (size_t)k, off) != k ||
		    pat_check(buf, (size_t)k, seed, (uint64_t)off) != -1)
			return 0;
	}
	return 1;
}

/* write() pattern seed at the end of fd until the quota refuses it: 1 MiB chunks, halved down to
 * a page each time one is refused with werr (a write of what fits and a refusal of the whole
 * chunk both end with the quota used up to the page); *total gets the bytes written. Returns the
 * errno of the final refusal, -1 for a write of 0 bytes, or E2BIG past QUOTA bytes (not
 * enforced). */
static int write_until_refused(int fd, char *buf, uint32_t seed, int werr, size_t *total)
{
	size_t chunk = MiB;

	*total = 0;
	while (*total <= (size_t)QUOTA) {
		ssize_t n;

		pat_fill(buf, chunk, seed, *total);
		n = write(fd, buf, chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == werr && chunk > 4096) {
			chunk /= 2;
			continue;
		}
		if (n < 0)
			return errno;
		if (n == 0)
			return -1;
		*total += (size_t)n;
	}
	return E2BIG;
}

/* The steps of quota_scene with buf its MiB of scratch. In a process of its own, so a failed
 * step may return at once: its files close and its mapper dies (PDEATHSIG) when it exits. */
static int quota_scene_steps(void *arg, char *buf)
{
	struct scene *s = arg;

	struct mapper ma;
	char fill[PATH_MAX], name[64];
	size_t total;
	int fm, ff, err, rc;
	struct stat st;
	pid_t kid;

	snprintf(name, sizeof(name), "%s-mapped", s->tag);
	USER_TRUE(2, pool_path(s->p, name, ma.path, sizeof(ma.path)) == 0);
	snprintf(name, sizeof(name), "%s-fill", s->tag);
	USER_TRUE(3, pool_path(s->p, name, fill, sizeof(fill)) == 0);
	fm = open(ma.path, O_RDWR | O_CREAT | O_EXCL, 0600);
	USER_OK(4, fm);
	USER_OK(5, ftruncate(fm, MAPPED)); /* the daemon allocates the growth now */
	chan_open(&ma.c);
	kid = tu_spawn(mapper_child, &ma);
	USER_TRUE(6, kid > 0);
	chan_parent(&ma.c);
	USER_TRUE(7, chan_get(ma.c.up[0], CHILD_MS) == 0);

	/* write() until the quota is used up */
	ff = open(fill, O_RDWR | O_CREAT | O_EXCL, 0600);
	USER_OK(8, ff);
	err = write_until_refused(ff, buf, 72, s->write_errno, &total);
	fprintf(stderr, "# uid %d: %zu bytes written beside the mapped %ld MiB, then %s\n",
		(int)getuid(), total, MAPPED / MiB, err > 0 ? errname(err) : "end of file");
	USER_TRUE(10, err == s->write_errno);
	USER_TRUE(11, total <= (size_t)(QUOTA - MAPPED) && total >= (size_t)(QUOTA - MAPPED - MiB));
	USER_EXPECT(12, write(ff, buf, 1), s->write_errno);
	USER_EXPECT(13, ftruncate(ff, (off_t)total + 4 * MiB), EDQUOT);
	USER_EXPECT(14, fallocate(ff, 0, 0, (off_t)total + 4 * MiB), EDQUOT);
	USER_OK(16, fstat(fm, &st));
	USER_TRUE(17, st.st_size == MAPPED);
	USER_OK(18, fstat(ff, &st));
	USER_TRUE(19, st.st_size == (off_t)total);

	/* the quota is used up: the mapper stores to every page of its file */
	USER_TRUE(20, chan_put(ma.c.down[1]) == 0);
	rc = tu_reap(kid, CHILD_MS);
	chan_close_parent(&ma.c);
	if (rc == 128 + SIGBUS)
		fprintf(stderr, "# uid %d: the mapper was killed by SIGBUS\n", (int)getuid());
	USER_TRUE(21, rc == 0);
	USER_TRUE(22, holds_pattern(fm, buf, MAPPED, 71));
	USER_TRUE(23, holds_pattern(ff, buf, (long)total, 72));
	if (s->hold) {
		USER_TRUE(24, CHILD_READY(&s->c) == 0);
		USER_TRUE(25, CHILD_WAIT_GO(&s->c) == 0);
	}
	USER_OK(26, close(ff));
	USER_OK(27, close(fm));
	return 0;
}

static int quota_scene(void *arg)
{
	struct scene *s = arg;

	if (s->hold)
		chan_child(&s->c);
	return tu_steps_with_buffer(MiB, quota_scene_steps, s);
}

/* Root fills its quota beside a mapped file and keeps it full; then the other user does the
 * same in its own store: each gets the refusals of its data path, no mapper gets SIGBUS. */
static void test_past_quota_no_sigbus(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	int werr = on_passthrough(p) ? ENOSPC : EDQUOT;
	struct scene root = {.p = p, .tag = "root", .write_errno = werr, .hold = 1};
	struct scene user = {.p = p, .tag = "user", .write_errno = werr};
	int r, rr, ur;
	pid_t kid, ukid;

	chan_open(&root.c);
	kid = tu_spawn(quota_scene, &root);
	chan_parent(&root.c);
	r = chan_get(root.c.up[0], 10 * CHILD_MS);
	if (r != 0)
		fail_msg("root's scene did not get through (exit %d)", tu_reap(kid, CHILD_MS));
	/* root's store is full and stays so: the other user's quota is its own */
	ukid = run_as_spawn(OTHER_UID, OTHER_GID, quota_scene, &user);
	assert_true(ukid > 0);
	tu_track(ukid);
	ur = tu_reap(ukid, 10 * CHILD_MS);
	PARENT_GO(&root.c);
	rr = tu_reap(kid, CHILD_MS);
	chan_close_parent(&root.c);
	if (ur != 0)
		fail_msg("uid %d's scene failed at step %d", OTHER_UID, ur);
	if (rr != 0)
		fail_msg("root's scene failed at step %d", rr);
	tu_wait_pool_entries(p, 0, GONE_MS);
}

struct other_file {
	const struct pool_fixture *p;
	const char *tag;
	int write_errno;
};

static int other_file_steps(void *arg, char *buf)
{
	const struct other_file *o = arg;

	char small[PATH_MAX], full[PATH_MAX], name[64];
	struct stat st;
	size_t total;
	int fs, ff, err;

	snprintf(name, sizeof(name), "%s-small", o->tag);
	USER_TRUE(2, pool_path(o->p, name, small, sizeof(small)) == 0);
	snprintf(name, sizeof(name), "%s-full", o->tag);
	USER_TRUE(3, pool_path(o->p, name, full, sizeof(full)) == 0);
	fs = open(small, O_RDWR | O_CREAT | O_EXCL, 0600);
	USER_OK(4, fs);
	USER_OK(5, ftruncate(fs, MiB));
	ff = open(full, O_RDWR | O_CREAT | O_EXCL, 0600);
	USER_OK(6, ff);
	err = write_until_refused(ff, buf, 81, o->write_errno, &total);
	fprintf(stderr, "# uid %d: %zu bytes written beside 1 MiB, then %s\n", (int)getuid(), total,
		err > 0 ? errname(err) : "end of file");
	USER_TRUE(7, err == o->write_errno);
	/* nothing between these and the writes asks the daemon about the full file */
	USER_EXPECT(8, ftruncate(fs, 8 * MiB), EDQUOT);
	USER_EXPECT(9, fallocate(fs, 0, 0, 8 * MiB), EDQUOT);
	USER_OK(10, fstat(fs, &st));
	USER_TRUE(11, st.st_size == MiB);
	USER_OK(12, close(ff));
	USER_OK(13, close(fs));
	return 0;
}

static int other_file(void *arg)
{
	return tu_steps_with_buffer(MiB, other_file_steps, arg);
}

/* write() uses the quota up in one file; growing another file then gets EDQUOT as well, for
 * root and for the other user (docs/interface.md: ftruncate and fallocate past the quota get
 * EDQUOT). On passthrough those writes never reached the daemon: unless its count catches up
 * before it answers, the user's full tmpfs answers ENOSPC instead. */
static void test_other_file_past_quota(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	int werr = on_passthrough(p) ? ENOSPC : EDQUOT;
	struct other_file root = {.p = p, .tag = "root", .write_errno = werr};
	struct other_file user = {.p = p, .tag = "user", .write_errno = werr};
	int rr, ur;
	pid_t kid;

	rr = tu_reap(tu_spawn(other_file, &root), CHILD_MS);
	tu_wait_pool_entries(p, 0, GONE_MS);
	kid = run_as_spawn(OTHER_UID, OTHER_GID, other_file, &user);
	assert_true(kid > 0);
	tu_track(kid);
	ur = tu_reap(kid, CHILD_MS);
	tu_wait_pool_entries(p, 0, GONE_MS);
	if (rr != 0)
		fail_msg("root failed at step %d", rr);
	if (ur != 0)
		fail_msg("uid %d failed at step %d", OTHER_UID, ur);
}

#define T(test) cmocka_unit_test_setup_teardown(test, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_datapath_with_quota),
		T(test_own_stores_huge_pages),
		T(test_past_quota_no_sigbus),
		T(test_other_file_past_quota),
	};
	const char *dp = getenv("POOLFS_DATAPATH");
	const char *store = getenv("POOLFS_BACKING");

	if (geteuid() != 0)
		return tu_skip_all("per-user stores need root (a private tmpfs instance per user)");
	if (store && store[0] && strcmp(store, "private") != 0)
		return tu_skip_all(
			"per-user stores need the private store (POOLFS_BACKING=private)");
	if (dp && strcmp(dp, "passthrough") == 0) {
		/* Can this daemon have passthrough at all? Only then must the quota keep it. */
		struct pool_fixture probe;
		int r = pool_mount(&probe, "autohold=none");

		if (r == -EOPNOTSUPP)
			return tu_skip_all(
				"no passthrough here (this build or kernel refuses it without a "
				"quota too); the pagecache run checks the page-cache path");
		if (r < 0) {
			printf("Bail out! a probe pool with datapath=passthrough did not mount: %s\n",
			       errname(-r));
			return 1;
		}
		if (pool_unmount(&probe) < 0) {
			printf("Bail out! the probe pool did not unmount cleanly\n");
			return 1;
		}
		passthrough_run = 1;
		/* as an fstab line mounts it: no datapath= */
		setenv("POOLFS_DATAPATH", "auto", 1);
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
