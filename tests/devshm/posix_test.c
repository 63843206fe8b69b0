/* The devshm suite's POSIX checks (docs/devshm.md): glibc's shm_open and named semaphores, as
 * unmodified programs call them, on a /dev/shm that is a pool (DEVSHM_KIND=pool) or the plain tmpfs
 * of the control run (DEVSHM_KIND=tmpfs). devshm_ns runs this in a private mount namespace; the
 * machine's /dev/shm is never reached.
 *
 *   shm      shm_open(O_CREAT|O_EXCL) + ftruncate + mmap in one process, shm_open by name + mmap in
 *            another: both see each other's writes; shm_unlink takes the name, not the mapping
 *   sem      sem_open(O_CREAT|O_EXCL) (glibc: a sem.XXXXXX file linked to sem.NAME), sem_open by
 *            name in another process, 1000 sem_post/sem_timedwait round trips, ETIMEDOUT past a
 *            deadline, sem_unlink
 *   users    uids 1001 and 1002 at once, each with its own segment and semaphore: neither lists,
 *            stats, opens, creates over or unlinks the other's. The errno the second user gets for
 *            a name the first one holds is pinned: the pool answers EACCES for every call, also
 *            for O_CREAT|O_EXCL, where tmpfs answers EEXIST (docs/devshm.md says why)
 *   killed   a process in a session of its own makes a segment and a semaphore and is SIGKILLed
 *            without unlinking them: on the pool both names go once its session has ended, on
 *            tmpfs both stay (the leak the pool is for)
 * Every name a test makes goes to the file DEVSHM_NAMES (devshm_ns checks that none of them is in
 * the machine's /dev/shm). */
#include "testutil.h"

#include <limits.h>
#include <semaphore.h>
#include <sys/mman.h>
#include <time.h>

#define SHM_DIR "/dev/shm"
#define SEG (1UL << 20)
#define ROUNDS 1000
#define UID_A 1001
#define UID_B 1002

static int on_pool;

/* The name's entry in /dev/shm: "x" for shm "/x", "sem.x" for a semaphore "/x". */
static void entry_of(const char *name, int sem, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", sem ? "sem." : "", name + 1);
}

/* Tell devshm_ns about a name (its entry) this test makes. */
static void note(const char *name, int sem)
{
	const char *file = getenv("DEVSHM_NAMES");
	char e[NAME_MAX + 8];
	FILE *f;

	entry_of(name, sem, e, sizeof(e));
	if (!file || !(f = fopen(file, "a")))
		return;
	fprintf(f, "%s\n", e);
	fclose(f);
}

static int listed(const char *name, int sem)
{
	char e[NAME_MAX + 8];

	entry_of(name, sem, e, sizeof(e));
	return tu_listed(SHM_DIR, e);
}

static struct timespec deadline_in(int ms)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

/* ---- shm ---- */

struct seg_arg {
	char name[64];
};

/* Another process: open the segment by name, check the first half, write the second. */
static int seg_child(void *arg)
{
	const struct seg_arg *a = arg;
	unsigned char *p;
	int fd = shm_open(a->name, O_RDWR, 0);

	CHILD_CHECK(fd >= 0, 1);
	p = mmap(NULL, SEG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHILD_CHECK(p != MAP_FAILED, 2);
	close(fd);
	CHILD_CHECK(pat_check(p, SEG / 2, 1, 0) == -1, 3);
	pat_fill(p + SEG / 2, SEG / 2, 2, SEG / 2);
	CHILD_CHECK(munmap(p, SEG) == 0, 4);
	return 0;
}

static void test_shm_across_processes(void **state)
{
	struct seg_arg a;
	struct stat st, dir;
	unsigned char *p;
	int fd;

	(void)state;
	snprintf(a.name, sizeof(a.name), "/devshm-seg-%d", (int)getpid());
	note(a.name, 0);
	fd = shm_open(a.name, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(fd);
	CHECK(fstat(fd, &st));
	CHECK(stat(SHM_DIR, &dir));
	assert_int_equal(st.st_dev, dir.st_dev); /* the segment is in /dev/shm as mounted here */
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(listed(a.name, 0), 1);
	CHECK(ftruncate(fd, (off_t)SEG));
	p = mmap(NULL, SEG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(p != MAP_FAILED);
	CHECK(close(fd));
	pat_fill(p, SEG / 2, 1, 0);
	REAP_OK(tu_spawn(seg_child, &a));
	assert_int_equal(pat_check(p + SEG / 2, SEG / 2, 2, SEG / 2), -1);
	/* shm_unlink takes the name; the mapping stays what it was. */
	CHECK(shm_unlink(a.name));
	assert_int_equal(listed(a.name, 0), 0);
	CHECK_ERR(shm_open(a.name, O_RDWR, 0), ENOENT);
	assert_int_equal(pat_check(p, SEG / 2, 1, 0), -1);
	CHECK(munmap(p, SEG));
}

/* ---- sem ---- */

struct sem_names {
	char ping[64], pong[64];
};

static int sem_child(void *arg)
{
	const struct sem_names *n = arg;
	sem_t *ping = sem_open(n->ping, 0), *pong = sem_open(n->pong, 0);

	CHILD_CHECK(ping != SEM_FAILED && pong != SEM_FAILED, 1);
	for (int i = 0; i < ROUNDS; i++) {
		struct timespec t = deadline_in(CHILD_MS);

		CHILD_CHECK(sem_timedwait(ping, &t) == 0, 2);
		CHILD_CHECK(sem_post(pong) == 0, 3);
	}
	sem_close(ping);
	sem_close(pong);
	return 0;
}

static void test_sem_across_processes(void **state)
{
	struct sem_names n;
	struct timespec past;
	sem_t *ping, *pong;
	pid_t child;
	int v = -1;

	(void)state;
	snprintf(n.ping, sizeof(n.ping), "/devshm-ping-%d", (int)getpid());
	snprintf(n.pong, sizeof(n.pong), "/devshm-pong-%d", (int)getpid());
	note(n.ping, 1);
	note(n.pong, 1);
	ping = sem_open(n.ping, O_CREAT | O_EXCL, 0600, 0);
	if (ping == SEM_FAILED)
		fail_msg("sem_open(%s, O_CREAT|O_EXCL): %s", n.ping, errname(errno));
	pong = sem_open(n.pong, O_CREAT | O_EXCL, 0600, 0);
	if (pong == SEM_FAILED)
		fail_msg("sem_open(%s, O_CREAT|O_EXCL): %s", n.pong, errname(errno));
	/* glibc's name for it, and nothing else of it (its sem.XXXXXX went after the link). */
	assert_int_equal(listed(n.ping, 1), 1);
	child = tu_spawn(sem_child, &n);
	for (int i = 0; i < ROUNDS; i++) {
		struct timespec t = deadline_in(CHILD_MS);

		CHECK(sem_post(ping));
		if (sem_timedwait(pong, &t) != 0)
			fail_msg("round %d: sem_timedwait: %s", i, errname(errno));
	}
	REAP_OK(child);
	CHECK(sem_getvalue(ping, &v));
	assert_int_equal(v, 0);
	CHECK_ERR(sem_trywait(pong), EAGAIN);
	clock_gettime(CLOCK_REALTIME, &past);
	past.tv_sec -= 1;
	CHECK_ERR(sem_timedwait(pong, &past), ETIMEDOUT);
	CHECK(sem_unlink(n.ping));
	CHECK(sem_unlink(n.pong));
	assert_int_equal(listed(n.ping, 1), 0);
	assert_true(sem_open(n.ping, 0) == SEM_FAILED && errno == ENOENT);
	/* Unlinked, still usable by those who have it. */
	CHECK(sem_post(ping));
	CHECK(sem_trywait(ping));
	CHECK(sem_close(ping));
	CHECK(sem_close(pong));
}

/* ---- two users ---- */

struct user_arg {
	struct chan c;
	char mine[64], other[64]; /* "/devshm-user-UID-PID": a segment and a semaphore each */
};

/* The other user's segment and semaphore, from this one's side: hidden and refused. */
static int peek_other(const struct user_arg *a)
{
	char path[PATH_MAX], entry[NAME_MAX + 8];
	int excl = on_pool ? EACCES : EEXIST;
	struct stat st;

	USER_TRUE(20, listed(a->other, 0) == !on_pool);
	USER_TRUE(21, listed(a->other, 1) == !on_pool);
	entry_of(a->other, 0, entry, sizeof(entry));
	snprintf(path, sizeof(path), SHM_DIR "/%s", entry);
	if (on_pool)
		USER_EXPECT(22, stat(path, &st), EACCES);
	else
		USER_OK(22, stat(path, &st));
	USER_EXPECT(23, shm_open(a->other, O_RDONLY, 0), EACCES);
	USER_EXPECT(24, shm_open(a->other, O_RDWR | O_CREAT, 0600), EACCES);
	USER_EXPECT(25, shm_open(a->other, O_RDWR | O_CREAT | O_EXCL, 0600), excl);
	USER_EXPECT(26, shm_unlink(a->other), EACCES);
	errno = 0;
	USER_TRUE(27, sem_open(a->other, 0) == SEM_FAILED && errno == EACCES);
	errno = 0;
	USER_TRUE(28, sem_open(a->other, O_CREAT, 0600, 0) == SEM_FAILED && errno == EACCES);
	errno = 0;
	USER_TRUE(29, sem_open(a->other, O_CREAT | O_EXCL, 0600, 0) == SEM_FAILED && errno == excl);
	USER_EXPECT(30, sem_unlink(a->other), EACCES);
	return 0;
}

static int user_fn(void *arg)
{
	struct user_arg *a = arg;
	unsigned char *p;
	sem_t *s;
	int fd, r;

	chan_child(&a->c);
	fd = shm_open(a->mine, O_RDWR | O_CREAT | O_EXCL, 0600);
	USER_OK(1, fd);
	USER_OK(2, ftruncate(fd, (off_t)SEG));
	p = mmap(NULL, SEG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	USER_TRUE(3, p != MAP_FAILED);
	pat_fill(p, SEG, getuid(), 0);
	s = sem_open(a->mine, O_CREAT | O_EXCL, 0600, 1);
	USER_TRUE(4, s != SEM_FAILED);
	USER_TRUE(5, CHILD_READY(&a->c) == 0);
	USER_TRUE(6, CHILD_WAIT_GO(&a->c) == 0); /* both users' objects exist now */
	r = peek_other(a);
	if (r)
		return r;
	/* Ours still work, and are still ours alone. */
	USER_OK(7, sem_trywait(s));
	USER_OK(8, sem_post(s));
	USER_TRUE(9, pat_check(p, SEG, getuid(), 0) == -1);
	USER_TRUE(10, CHILD_READY(&a->c) == 0);
	USER_TRUE(11, CHILD_WAIT_GO(&a->c) == 0); /* the other user has looked at ours */
	USER_OK(12, shm_unlink(a->mine));
	USER_OK(13, sem_unlink(a->mine));
	USER_OK(14, sem_close(s));
	USER_OK(15, munmap(p, SEG));
	USER_OK(16, close(fd));
	return 0;
}

/* Start user_fn as `uid` on its own channel (opened here, so that neither user holds the child
 * ends of the other's). */
static pid_t spawn_user(struct user_arg *u, uid_t uid)
{
	pid_t pid;

	chan_open(&u->c);
	pid = run_as_spawn(uid, uid, user_fn, u);
	if (pid < 0)
		fail_msg("run_as_spawn(%d): %s", (int)uid, errname(-pid));
	tu_track(pid);
	chan_parent(&u->c);
	return pid;
}

static void test_two_users_at_once(void **state)
{
	struct user_arg a, b;
	pid_t pa, pb;
	int ra, rb;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	snprintf(a.mine, sizeof(a.mine), "/devshm-user-%d-%d", UID_A, (int)getpid());
	snprintf(b.mine, sizeof(b.mine), "/devshm-user-%d-%d", UID_B, (int)getpid());
	memcpy(a.other, b.mine, sizeof(a.other));
	memcpy(b.other, a.mine, sizeof(b.other));
	note(a.mine, 0);
	note(a.mine, 1);
	note(b.mine, 0);
	note(b.mine, 1);
	pa = spawn_user(&a, UID_A);
	pb = spawn_user(&b, UID_B);
	for (int step = 0; step < 2; step++) {
		if (chan_get(a.c.up[0], CHILD_MS) != 0 || chan_get(b.c.up[0], CHILD_MS) != 0)
			break; /* a user failed a step: its exit code below says which */
		CHECK_0(chan_put(a.c.down[1]));
		CHECK_0(chan_put(b.c.down[1]));
	}
	chan_close_parent(&a.c);
	chan_close_parent(&b.c);
	ra = tu_reap(pa, CHILD_MS);
	rb = tu_reap(pb, CHILD_MS);
	if (ra || rb)
		fail_msg("uid %d ended with %d, uid %d with %d (the step numbers in user_fn and "
			 "peek_other)",
			 UID_A, ra, UID_B, rb);
}

/* ---- a killed session ---- */

struct kill_arg {
	struct chan c;
	char name[64];
};

static int victim_fn(void *arg)
{
	struct kill_arg *a = arg;
	sem_t *s;
	int fd;

	chan_child(&a->c);
	CHILD_CHECK(setsid() == getpid(), 1);
	fd = shm_open(a->name, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHILD_CHECK(fd >= 0, 2);
	CHILD_CHECK(ftruncate(fd, 65536) == 0, 3);
	s = sem_open(a->name, O_CREAT | O_EXCL, 0600, 0);
	CHILD_CHECK(s != SEM_FAILED, 4);
	CHILD_CHECK(CHILD_READY(&a->c) == 0, 5);
	for (;;)
		pause();
}

static int both_gone(const char *name)
{
	return listed(name, 0) == 0 && listed(name, 1) == 0;
}

static void test_killed_session(void **state)
{
	struct kill_arg a;
	long long end;
	pid_t pid;

	(void)state;
	memset(&a, 0, sizeof(a));
	snprintf(a.name, sizeof(a.name), "/devshm-killed-%d", (int)getpid());
	note(a.name, 0);
	note(a.name, 1);
	chan_open(&a.c);
	pid = tu_spawn(victim_fn, &a);
	chan_parent(&a.c);
	PARENT_WAIT_READY(&a.c);
	assert_int_equal(listed(a.name, 0), 1);
	assert_int_equal(listed(a.name, 1), 1);
	CHECK(kill(pid, SIGKILL));
	assert_int_equal(tu_reap(pid, CHILD_MS), 128 + SIGKILL);
	tu_forget(pid);
	chan_close_parent(&a.c);
	if (on_pool) {
		end = pool_now_ms() + CHILD_MS;
		while (!both_gone(a.name) && pool_now_ms() < end)
			pool_sleep_ms(20);
		if (!both_gone(a.name))
			fail_msg("%s (segment %d, semaphore %d) outlived its killed session",
				 a.name, listed(a.name, 0), listed(a.name, 1));
	} else {
		/* tmpfs keeps both: nobody will ever unlink them. */
		assert_int_equal(listed(a.name, 0), 1);
		assert_int_equal(listed(a.name, 1), 1);
		fprintf(stderr, "# tmpfs kept %s and sem.%s after the session was killed\n",
			a.name + 1, a.name + 1);
	}
}

int main(void)
{
	const char *kind = getenv("DEVSHM_KIND");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shm_across_processes),
		cmocka_unit_test(test_sem_across_processes),
		cmocka_unit_test(test_two_users_at_once),
		cmocka_unit_test(test_killed_session),
	};

	if (!kind || (strcmp(kind, "pool") != 0 && strcmp(kind, "tmpfs") != 0))
		return tu_skip_all(
			"DEVSHM_KIND is neither pool nor tmpfs: run me through devshm_ns");
	on_pool = strcmp(kind, "pool") == 0;
	fprintf(stderr, "# /dev/shm is %s (datapath %s)\n",
		on_pool ? "a pool" : "the tmpfs control",
		getenv("DEVSHM_DATAPATH") ? getenv("DEVSHM_DATAPATH") : "?");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
