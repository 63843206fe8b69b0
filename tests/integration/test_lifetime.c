/* Lifetime rules (docs/interface.md "Lifetime") against a real pool mounted
 * with autohold=none: an entry lives exactly while a handle, a mapping or (folders) a child uses
 * it. Removal is polled for with a generous bound, never timed. */
#include "itest.h"

#include <dirent.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/xattr.h>
#include <time.h>

static long pg;

static int setup_none(void **state)
{
	return tu_setup(state, "autohold=none");
}

static int setup_linger(void **state)
{
	return tu_setup(state, "autohold=none,linger=1");
}

/* A new file holding len bytes of pattern seed; returns the open O_RDWR fd. */
static int make_file(const char *path, size_t len, uint32_t seed)
{
	char *buf = malloc(len ? len : 1);
	int fd;

	assert_non_null(buf);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		fail_msg("create %s: %s", path, errname(errno));
	pat_fill(buf, len, seed, 0);
	if (pwrite_all(fd, buf, len, 0) != (ssize_t)len)
		fail_msg("write %s: %s", path, errname(errno));
	free(buf);
	return fd;
}

/* The file at fd holds exactly len bytes of pattern seed. */
static void expect_fd_pattern(int fd, size_t len, uint32_t seed)
{
	char *buf = malloc(len + 1);
	ssize_t n;
	long bad;

	assert_non_null(buf);
	n = pread_all(fd, buf, len + 1, 0);
	if (n != (ssize_t)len)
		fail_msg("read %zd bytes, want %zu (%s)", n, len, n < 0 ? errname(errno) : "");
	bad = pat_check(buf, len, seed, 0);
	free(buf);
	if (bad >= 0)
		fail_msg("data differs at offset %ld", bad);
}

static void expect_path_pattern(const char *path, size_t len, uint32_t seed)
{
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		fail_msg("open %s: %s", path, errname(errno));
	expect_fd_pattern(fd, len, seed);
	close(fd);
}

static void *map_fd(int fd, size_t len)
{
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (m == MAP_FAILED)
		fail_msg("mmap: %s", errname(errno));
	return m;
}

/* Still there now and a little later: a removal that races behind the close is caught too. */
static void expect_stays(const char *path)
{
	ASSERT_EXISTS(path);
	pool_sleep_ms(200);
	ASSERT_EXISTS(path);
}

/* ---- files and handles ---- */

static void test_closed_file_is_removed(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	int fd = make_file(f, 100, 1);

	ASSERT_EXISTS(f);
	CHECK(close(fd));
	ASSERT_GONE(f);
	assert_int_equal(tu_listed(p->mnt, "f"), 0);
	tu_backing_back_to_base(state);
}

static void test_removed_after_last_close(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	int fd1 = make_file(f, 5000, 2);
	int fd2 = open(f, O_RDONLY);

	CHECK(fd2);
	CHECK(close(fd1));
	expect_stays(f);
	assert_int_equal(tu_listed(p->mnt, "f"), 1);
	expect_fd_pattern(fd2, 5000, 2);
	CHECK(close(fd2));
	ASSERT_GONE(f);
	assert_int_equal(tu_listed(p->mnt, "f"), 0);
	tu_backing_back_to_base(state);
}

static void test_unlink_while_open(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	int fd = make_file(f, 10000, 3);

	CHECK(unlink(f));
	ASSERT_ABSENT(f);
	assert_int_equal(tu_listed(p->mnt, "f"), 0);
	expect_fd_pattern(fd, 10000, 3);
	CHECK(close(fd));
	tu_backing_back_to_base(state);
}

/* ---- mappings ---- */

static void test_mapping_outlives_close(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	size_t len = 4 * pg;
	int fd = make_file(f, len, 4);
	unsigned char *m = map_fd(fd, len);
	int fd2;

	CHECK(close(fd));
	expect_stays(f);
	assert_int_equal(pat_check(m, len, 4, 0), -1);
	/* writes through the mapping are what another opener reads */
	pat_fill(m, len, 5, 0);
	fd2 = open(f, O_RDONLY);
	CHECK(fd2);
	expect_fd_pattern(fd2, len, 5);
	CHECK(close(fd2));
	expect_stays(f);
	CHECK(munmap(m, len));
	ASSERT_GONE(f);
	tu_backing_back_to_base(state);
}

struct mapper_arg {
	char path[PATH_MAX];
	struct chan c;
	size_t len;
	int fd;
	unsigned char *map;
};

static int child_second_mapper(void *v)
{
	struct mapper_arg *a = v;
	unsigned char *m;
	int fd;

	chan_child(&a->c);
	fd = open(a->path, O_RDWR);
	CHILD_CHECK(fd >= 0, 1);
	m = mmap(NULL, a->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHILD_CHECK(m != MAP_FAILED, 2);
	close(fd);
	CHILD_CHECK(pat_check(m, a->len, 6, 0) == -1, 3);
	CHILD_CHECK(CHILD_READY(&a->c) == 0, 4);
	CHILD_CHECK(CHILD_WAIT_GO(&a->c) == 0, 5);
	/* the parent wrote through its own mapping: one page cache, so we see it at once */
	CHILD_CHECK(m[5] == 0xAB, 6);
	m[6] = 0xCD;
	CHILD_CHECK(CHILD_READY(&a->c) == 0, 7);
	CHILD_CHECK(CHILD_WAIT_GO(&a->c) == 0, 8);
	munmap(m, a->len);
	return 0;
}

static void test_two_mappers_two_processes(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct mapper_arg a = { .len = 4 * pg };
	unsigned char *m;
	pid_t pid;
	int fd;

	assert_int_equal(pool_path(p, "f", a.path, sizeof(a.path)), 0);
	fd = make_file(a.path, a.len, 6);
	m = map_fd(fd, a.len);
	CHECK(close(fd));
	chan_open(&a.c);
	pid = tu_spawn(child_second_mapper, &a);
	chan_parent(&a.c);
	PARENT_WAIT_READY(&a.c);
	m[5] = 0xAB;
	PARENT_GO(&a.c);
	PARENT_WAIT_READY(&a.c);
	assert_int_equal(m[6], 0xCD);
	CHECK(munmap(m, a.len));
	/* the child's mapping alone keeps it */
	expect_stays(a.path);
	PARENT_GO(&a.c);
	REAP_OK(pid);
	chan_close_parent(&a.c);
	ASSERT_GONE(a.path);
	tu_backing_back_to_base(state);
}

static int child_inherited_fd(void *v)
{
	struct mapper_arg *a = v;
	char buf[pg];

	chan_child(&a->c);
	CHILD_CHECK(CHILD_WAIT_GO(&a->c) == 0, 1);
	pat_fill(buf, sizeof(buf), 8, 0);
	CHILD_CHECK(pwrite(a->fd, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf), 2);
	CHILD_CHECK(CHILD_READY(&a->c) == 0, 3);
	CHILD_CHECK(CHILD_WAIT_GO(&a->c) == 0, 4);
	return 0; /* exiting closes the inherited fd, the last handle */
}

static void test_fork_inherits_fd(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct mapper_arg a = { .len = 0 };
	pid_t pid;

	assert_int_equal(pool_path(p, "f", a.path, sizeof(a.path)), 0);
	a.fd = make_file(a.path, 3 * pg, 7);
	chan_open(&a.c);
	pid = tu_spawn(child_inherited_fd, &a);
	chan_parent(&a.c);
	CHECK(close(a.fd));
	expect_stays(a.path);
	PARENT_GO(&a.c);
	PARENT_WAIT_READY(&a.c);
	{
		/* the child's write through the inherited fd reached the file */
		int fd = open(a.path, O_RDONLY);
		char buf[pg];

		CHECK(fd);
		assert_int_equal(pread_all(fd, buf, sizeof(buf), 0), pg);
		assert_int_equal(pat_check(buf, sizeof(buf), 8, 0), -1);
		CHECK(close(fd));
	}
	expect_stays(a.path);
	PARENT_GO(&a.c);
	REAP_OK(pid);
	chan_close_parent(&a.c);
	ASSERT_GONE(a.path);
	tu_backing_back_to_base(state);
}

static int child_inherited_map(void *v)
{
	struct mapper_arg *a = v;

	chan_child(&a->c);
	pat_fill(a->map, pg, 9, 0);
	CHILD_CHECK(CHILD_READY(&a->c) == 0, 1);
	CHILD_CHECK(CHILD_WAIT_GO(&a->c) == 0, 2);
	return 0; /* exiting drops the inherited mapping, the last user */
}

static void test_fork_inherits_mapping(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct mapper_arg a = { .len = 2 * pg };
	pid_t pid;
	int fd;

	assert_int_equal(pool_path(p, "f", a.path, sizeof(a.path)), 0);
	fd = make_file(a.path, a.len, 10);
	a.map = map_fd(fd, a.len);
	CHECK(close(fd));
	chan_open(&a.c);
	pid = tu_spawn(child_inherited_map, &a);
	chan_parent(&a.c);
	PARENT_WAIT_READY(&a.c);
	CHECK(munmap(a.map, a.len));
	expect_stays(a.path);
	fd = open(a.path, O_RDONLY);
	CHECK(fd);
	{
		char buf[pg];

		assert_int_equal(pread_all(fd, buf, sizeof(buf), 0), pg);
		assert_int_equal(pat_check(buf, sizeof(buf), 9, 0), -1);
	}
	CHECK(close(fd));
	expect_stays(a.path);
	PARENT_GO(&a.c);
	REAP_OK(pid);
	chan_close_parent(&a.c);
	ASSERT_GONE(a.path);
	tu_backing_back_to_base(state);
}

static void test_partial_munmap(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	size_t len = 4 * pg;
	int fd = make_file(f, len, 11);
	unsigned char *m = map_fd(fd, len);

	CHECK(close(fd));
	/* a hole in the middle splits the mapping in two: both halves still count */
	CHECK(munmap(m + pg, pg));
	expect_stays(f);
	CHECK(munmap(m, pg));
	expect_stays(f);
	CHECK(munmap(m + 3 * pg, pg));
	expect_stays(f);
	assert_int_equal(pat_check(m + 2 * pg, pg, 11, 2 * pg), -1);
	CHECK(munmap(m + 2 * pg, pg));
	ASSERT_GONE(f);
	tu_backing_back_to_base(state);
}

static int child_map_and_wait(void *v)
{
	struct mapper_arg *a = v;
	unsigned char *m;
	int fd;

	chan_child(&a->c);
	fd = open(a->path, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHILD_CHECK(fd >= 0, 1);
	CHILD_CHECK(ftruncate(fd, a->len) == 0, 2);
	m = mmap(NULL, a->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHILD_CHECK(m != MAP_FAILED, 3);
	close(fd);
	pat_fill(m, a->len, 12, 0);
	CHILD_CHECK(CHILD_READY(&a->c) == 0, 4);
	for (;;)
		pause(); /* until SIGKILL */
}

static void test_sigkill_while_mapped(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct mapper_arg a = { .len = 64 * pg };
	pid_t pid;
	int fd, fd2;

	assert_int_equal(pool_path(p, "f", a.path, sizeof(a.path)), 0);
	chan_open(&a.c);
	pid = tu_spawn(child_map_and_wait, &a);
	chan_parent(&a.c);
	PARENT_WAIT_READY(&a.c);
	/* only the child's mapping keeps it now */
	expect_stays(a.path);
	/* another holder reads what the child wrote through its mapping while it is alive */
	fd = open(a.path, O_RDONLY);
	CHECK(fd);
	expect_fd_pattern(fd, a.len, 12);
	fd2 = open(a.path, O_RDONLY);
	CHECK(fd2);
	CHECK(close(fd2));
	CHECK(kill(pid, SIGKILL));
	assert_int_equal(tu_reap(pid, CHILD_MS), 128 + SIGKILL);
	/* the dead child's dirty pages were not lost */
	expect_fd_pattern(fd, a.len, 12);
	CHECK(close(fd));
	ASSERT_GONE(a.path);
	tu_backing_back_to_base(state);

	/* and with no other holder at all: the kill alone releases it */
	chan_close_parent(&a.c);
	chan_open(&a.c);
	pid = tu_spawn(child_map_and_wait, &a);
	chan_parent(&a.c);
	PARENT_WAIT_READY(&a.c);
	expect_stays(a.path);
	CHECK(kill(pid, SIGKILL));
	assert_int_equal(tu_reap(pid, CHILD_MS), 128 + SIGKILL);
	chan_close_parent(&a.c);
	ASSERT_GONE(a.path);
	tu_backing_back_to_base(state);
}

static void test_unlink_while_mapped(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	size_t len = 8 * pg;
	int fd = make_file(f, len, 13);
	unsigned char *m = map_fd(fd, len);

	CHECK(close(fd));
	CHECK(unlink(f));
	ASSERT_ABSENT(f);
	assert_int_equal(tu_listed(p->mnt, "f"), 0);
	assert_int_equal(pat_check(m, len, 13, 0), -1);
	pat_fill(m, len, 14, 0);
	assert_int_equal(pat_check(m, len, 14, 0), -1);
	CHECK(munmap(m, len));
	tu_backing_back_to_base(state);
}

static void test_recreate_while_old_mapping_alive(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	size_t len = 4 * pg;
	int fd = make_file(f, len, 15);
	unsigned char *m = map_fd(fd, len);
	struct stat old, st;

	CHECK(fstat(fd, &old));
	CHECK(close(fd));
	CHECK(unlink(f));
	fd = open(f, O_RDWR | O_CREAT, 0600);
	CHECK(fd);
	CHECK(fstat(fd, &st));
	assert_int_equal(st.st_size, 0);
	/* a live old inode and the new one must never share an inode number */
	assert_true(st.st_ino != old.st_ino);
	{
		char buf[pg];

		assert_int_equal(pread_all(fd, buf, sizeof(buf), 0), 0);
		pat_fill(buf, sizeof(buf), 16, 0);
		assert_int_equal(pwrite_all(fd, buf, sizeof(buf), 0), pg);
	}
	assert_int_equal(pat_check(m, len, 15, 0), -1);
	expect_fd_pattern(fd, pg, 16);
	CHECK(close(fd));
	ASSERT_GONE(f);
	assert_int_equal(pat_check(m, len, 15, 0), -1);
	CHECK(munmap(m, len));
	tu_backing_back_to_base(state);
}

/* The name of a just-removed file must be reusable at once: a stale kernel dentry made O_CREAT
 * fail with ENOENT (docs/design-notes.md "Data paths"). No waiting between rounds. */
static void test_create_loop_no_wait(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");

	uint32_t rounds = (uint32_t)itest_rounds(2000);

	for (uint32_t i = 0; i < rounds; i++) {
		uint32_t back = ~i;
		int fd = open(f, O_RDWR | O_CREAT, 0600);

		if (fd < 0)
			fail_msg("round %u: open(O_CREAT): %s", i, errname(errno));
		if (pwrite(fd, &i, sizeof(i), 0) != sizeof(i))
			fail_msg("round %u: write: %s", i, errname(errno));
		if (pread(fd, &back, sizeof(back), 0) != sizeof(back) || back != i)
			fail_msg("round %u: read back %u", i, back);
		if (close(fd) == -1)
			fail_msg("round %u: close: %s", i, errname(errno));
	}
	ASSERT_GONE(f);
	tu_backing_back_to_base(state);
}

/* Same, waiting for each removal: once the name is gone, O_EXCL must succeed. Every removal
 * must happen: a lost "unused" event leaves the file for good. */
static void test_create_loop_with_wait(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	uint32_t rounds = (uint32_t)itest_rounds(1000);

	for (uint32_t i = 0; i < rounds; i++) {
		int fd = open(f, O_RDWR | O_CREAT | O_EXCL, 0600);
		int r;

		if (fd < 0)
			fail_msg("round %u: open(O_CREAT|O_EXCL): %s", i, errname(errno));
		if (pwrite(fd, &i, sizeof(i), 0) != sizeof(i))
			fail_msg("round %u: write: %s", i, errname(errno));
		CHECK(close(fd));
		r = pool_wait_gone(f, GONE_MS);
		if (r)
			fail_msg("round %u: not removed: %s", i, errname(-r));
	}
	tu_backing_back_to_base(state);
}

static void test_readonly_mapping_outlives_close(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	size_t len = 3 * pg;
	int wfd = make_file(f, len, 33);
	int fd = open(f, O_RDONLY);
	unsigned char *m;

	CHECK(fd);
	CHECK(close(wfd));
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	CHECK(close(fd));
	/* gone at the first close? a read-only mapping counts as much as a writable one */
	expect_stays(f);
	assert_int_equal(pat_check(m, len, 33, 0), -1);
	CHECK(munmap(m, len));
	ASSERT_GONE(f);
	tu_backing_back_to_base(state);
}

static void test_private_mapping_outlives_close(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	size_t len = 3 * pg;
	int fd = make_file(f, len, 34);
	unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);

	assert_true(m != MAP_FAILED);
	CHECK(close(fd));
	expect_stays(f);
	/* a private copy: writes stay in this process */
	m[0] ^= 0xFF;
	expect_path_pattern(f, len, 34);
	assert_int_equal(pat_check(m + 1, len - 1, 34, 1), -1);
	CHECK(munmap(m, len));
	ASSERT_GONE(f);
	tu_backing_back_to_base(state);
}

/* Many handles and mappings dropped in a random order: the file goes with the last of them. */
static void test_many_users_any_order(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	enum { FDS = 48, MAPS = 16 };
	int fds[FDS];
	void *maps[MAPS];
	int order[FDS + MAPS];
	uint32_t rng = (uint32_t)time(NULL);
	int fd = make_file(f, pg, 35);

	fprintf(stderr, "# test_many_users_any_order order seed %u\n", rng);
	for (int i = 0; i < FDS; i++) {
		fds[i] = open(f, i % 2 ? O_RDONLY : O_RDWR);
		CHECK(fds[i]);
	}
	for (int i = 0; i < MAPS; i++) {
		maps[i] = mmap(NULL, pg, PROT_READ, MAP_SHARED, fds[i], 0);
		assert_true(maps[i] != MAP_FAILED);
	}
	CHECK(close(fd));
	for (int i = 0; i < FDS + MAPS; i++)
		order[i] = i;
	for (int i = FDS + MAPS - 1; i > 0; i--) {
		int j, t;

		rng = rng * 1103515245u + 12345u;
		j = (int)((rng >> 8) % (uint32_t)(i + 1));
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (int i = 0; i < FDS + MAPS; i++) {
		int k = order[i];

		if (k < FDS)
			CHECK(close(fds[k]));
		else
			CHECK(munmap(maps[k - FDS], pg));
		if (i < FDS + MAPS - 1) {
			struct stat st;

			if (lstat(f, &st) == -1)
				fail_msg("removed with %d users left: %s", FDS + MAPS - 1 - i,
					 errname(errno));
		}
	}
	ASSERT_GONE(f);
	tu_backing_back_to_base(state);
}

/* A descriptor passed to another process (SCM_RIGHTS) keeps the file after the sender closes. */
struct pass_arg {
	int sock;
	struct chan c;
	uint32_t seed;
	size_t len;
};

static int child_receives_fd(void *v)
{
	struct pass_arg *a = v;
	char byte;
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &byte, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			      .msg_controllen = sizeof(ctl) };
	struct cmsghdr *cm;
	unsigned char *buf;
	int fd;

	chan_child(&a->c);
	CHILD_CHECK(recvmsg(a->sock, &msg, 0) == 1, 1);
	cm = CMSG_FIRSTHDR(&msg);
	CHILD_CHECK(cm && cm->cmsg_type == SCM_RIGHTS, 2);
	memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	CHILD_CHECK(CHILD_READY(&a->c) == 0, 3);
	CHILD_CHECK(CHILD_WAIT_GO(&a->c) == 0, 4);
	buf = malloc(a->len);
	CHILD_CHECK(buf && pread(fd, buf, a->len, 0) == (ssize_t)a->len, 5);
	CHILD_CHECK(pat_check(buf, a->len, a->seed, 0) == -1, 6);
	return 0;
}

static void test_fd_passed_over_socket(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	struct pass_arg a = { .seed = 36, .len = 5000 };
	int sv[2];
	char byte = 'x';
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &byte, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			      .msg_controllen = sizeof(ctl) };
	struct cmsghdr *cm;
	pid_t pid;
	int fd;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	a.sock = sv[1];
	chan_open(&a.c);
	/* forked before the file exists: the child inherits no handle of it */
	pid = tu_spawn(child_receives_fd, &a);
	chan_parent(&a.c);
	CHECK(close(sv[1]));
	fd = make_file(f, a.len, a.seed);
	memset(ctl, 0, sizeof(ctl));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	assert_int_equal(sendmsg(sv[0], &msg, 0), 1);
	PARENT_WAIT_READY(&a.c);
	CHECK(close(fd));
	/* only the passed descriptor keeps it */
	expect_stays(f);
	PARENT_GO(&a.c);
	REAP_OK(pid);
	chan_close_parent(&a.c);
	CHECK(close(sv[0]));
	ASSERT_GONE(f);
	tu_backing_back_to_base(state);
}

static int child_exec_sleep(void *v)
{
	(void)v;
	execlp("sleep", "sleep", "600", (char *)NULL);
	return 127;
}

/* A handle inherited across exec keeps the file for the new program; an O_CLOEXEC one does
 * not. */
static void test_exec_inherits_fd_unless_cloexec(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	PATH(g, p, "g");
	int ff = make_file(f, 100, 37);
	int gf = open(g, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	pid_t pid;

	CHECK(gf);
	pid = tu_spawn(child_exec_sleep, NULL);
	/* the exec must have happened (closing g's copy) before we drop ours */
	{
		char comm_path[64], comm[32] = "";
		long long deadline = pool_now_ms() + CHILD_MS;

		snprintf(comm_path, sizeof(comm_path), "/proc/%d/comm", (int)pid);
		while (strncmp(comm, "sleep", 5) != 0) {
			FILE *c = fopen(comm_path, "re");

			if (c) {
				if (!fgets(comm, sizeof(comm), c))
					comm[0] = '\0';
				fclose(c);
			}
			if (pool_now_ms() > deadline)
				fail_msg("child %d did not exec sleep", (int)pid);
			pool_sleep_ms(5);
		}
	}
	CHECK(close(ff));
	CHECK(close(gf));
	ASSERT_GONE(g);
	expect_stays(f);
	CHECK(kill(pid, SIGKILL));
	assert_int_equal(tu_reap(pid, CHILD_MS), 128 + SIGKILL);
	ASSERT_GONE(f);
	tu_backing_back_to_base(state);
}

/* Thousands of files created, written and closed back to back, then every one of them must go:
 * a removal lost among many "unused" events leaves a file for good. */
static void test_every_closed_file_goes(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	int n = itest_rounds(5000);
	int stuck = 0, first = -1;

	for (int i = 0; i < n; i++) {
		char rel[32], path[PATH_MAX];
		int fd;

		snprintf(rel, sizeof(rel), "f%d", i);
		assert_int_equal(pool_path(p, rel, path, sizeof(path)), 0);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
		if (fd < 0)
			fail_msg("create %s: %s", rel, errname(errno));
		if (write(fd, "x", 1) != 1)
			fail_msg("write %s: %s", rel, errname(errno));
		CHECK(close(fd));
	}
	for (int i = 0; i < n; i++) {
		char rel[32], path[PATH_MAX];

		snprintf(rel, sizeof(rel), "f%d", i);
		assert_int_equal(pool_path(p, rel, path, sizeof(path)), 0);
		/* the bound is for all of them together: most are long gone */
		if (pool_wait_gone(path, stuck ? 0 : GONE_MS) != 0) {
			if (first < 0)
				first = i;
			stuck++;
		}
	}
	if (stuck) {
		char rel[32], path[PATH_MAX], refs[256] = "";
		ssize_t len;

		snprintf(rel, sizeof(rel), "f%d", first);
		assert_int_equal(pool_path(p, rel, path, sizeof(path)), 0);
		len = getxattr(path, POOLFS_XATTR_REFS, refs, sizeof(refs) - 1);
		refs[len > 0 ? len : 0] = '\0';
		fail_msg("%d of %d closed files never removed; %s has refs:\n%s", stuck, n, rel, refs);
	}
	tu_backing_back_to_base(state);
}

/* ---- folders ---- */

static void test_folders_removed_up_to_root(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(a, p, "a");
	PATH(b, p, "a/b");
	PATH(c, p, "a/b/c");
	PATH(f, p, "a/b/c/f");
	struct stat st;
	int fd;

	CHECK(mkdir(a, 0700));
	CHECK(mkdir(b, 0700));
	CHECK(mkdir(c, 0700));
	fd = make_file(f, 10, 17);
	expect_stays(a);
	CHECK(close(fd));
	ASSERT_GONE(f);
	ASSERT_GONE(c);
	ASSERT_GONE(b);
	ASSERT_GONE(a);
	/* never the root */
	CHECK(stat(p->mnt, &st));
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 01777);
	{
		/* and still takes new entries */
		PATH(g, p, "g");

		fd = make_file(g, 10, 17);
		CHECK(close(fd));
		ASSERT_GONE(g);
	}
	tu_backing_back_to_base(state);
}

static void test_empty_folder_stays(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(e, p, "e");
	int dfd;

	CHECK(mkdir(e, 0700));
	expect_stays(e);
	/* an open handle alone does not arm it */
	dfd = open(e, O_RDONLY | O_DIRECTORY);
	CHECK(dfd);
	CHECK(close(dfd));
	expect_stays(e);
	CHECK(rmdir(e));
	ASSERT_ABSENT(e);
	tu_backing_back_to_base(state);
}

static void test_folder_handle_keeps_folder(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(d, p, "d");
	PATH(f, p, "d/f");
	int fd, dfd;

	CHECK(mkdir(d, 0700));
	fd = make_file(f, 10, 18);
	dfd = open(d, O_RDONLY | O_DIRECTORY);
	CHECK(dfd);
	CHECK(close(fd));
	ASSERT_GONE(f);
	expect_stays(d);
	CHECK(close(dfd));
	ASSERT_GONE(d);
	tu_backing_back_to_base(state);
}

static void test_rmdir_not_empty(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(d, p, "d");
	PATH(f, p, "d/f");
	int fd;

	CHECK(mkdir(d, 0700));
	fd = make_file(f, 10, 19);
	CHECK_ERR(rmdir(d), ENOTEMPTY);
	ASSERT_EXISTS(f);
	CHECK(close(fd));
	ASSERT_GONE(d);
	tu_backing_back_to_base(state);
}

static void test_rmdir_of_last_child_removes_parent(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(a, p, "a");
	PATH(b, p, "a/b");

	CHECK(mkdir(a, 0700));
	CHECK(mkdir(b, 0700));
	/* b is empty and never used: it stays, and keeps a */
	expect_stays(b);
	CHECK(rmdir(b));
	ASSERT_GONE(a);
	tu_backing_back_to_base(state);
}

static void test_unlink_of_last_child_removes_parent(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(d, p, "d");
	PATH(f, p, "d/f");
	int fd;

	CHECK(mkdir(d, 0700));
	fd = make_file(f, 3000, 20);
	CHECK(unlink(f));
	/* the unlinked file is still open but no longer a child */
	ASSERT_GONE(d);
	expect_fd_pattern(fd, 3000, 20);
	CHECK(close(fd));
	tu_backing_back_to_base(state);
}

/* One process keeps re-creating a file in d and closing it (so d keeps being emptied and
 * removed) while another creates its own file in d: whenever that create succeeds, the file and d
 * must stay while it is open, never be removed under it. */
struct race_arg {
	char d[PATH_MAX];
	char f[PATH_MAX];
	int rounds;
	int check_held;
};

static int child_race(void *v)
{
	struct race_arg *a = v;
	int made = 0;

	for (int i = 0; i < a->rounds; i++) {
		struct stat st;
		int fd;

		CHILD_CHECK(mkdir(a->d, 0700) == 0 || errno == EEXIST, 1);
		fd = open(a->f, O_RDWR | O_CREAT, 0600);
		if (fd < 0) {
			/* d went away between our mkdir and open: allowed, try again */
			CHILD_CHECK(errno == ENOENT, 2);
			continue;
		}
		made++;
		CHILD_CHECK(write(fd, "x", 1) == 1, 3);
		if (a->check_held) {
			CHILD_CHECK(stat(a->f, &st) == 0, 4);
			CHILD_CHECK(stat(a->d, &st) == 0 && S_ISDIR(st.st_mode), 5);
		}
		CHILD_CHECK(close(fd) == 0, 6);
	}
	CHILD_CHECK(made > 0, 7);
	return 0;
}

static void test_folder_removal_races_create(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	struct race_arg a[2];
	pid_t pid[2];

	for (int i = 0; i < 2; i++) {
		memset(&a[i], 0, sizeof(a[i]));
		assert_int_equal(pool_path(p, "d", a[i].d, sizeof(a[i].d)), 0);
		assert_int_equal(pool_path(p, i ? "d/b" : "d/a", a[i].f, sizeof(a[i].f)), 0);
		a[i].rounds = itest_rounds(1000);
		a[i].check_held = 1;
	}
	for (int i = 0; i < 2; i++)
		pid[i] = tu_spawn(child_race, &a[i]);
	for (int i = 0; i < 2; i++)
		REAP_OK_WITHIN(pid[i], 10 * CHILD_MS);
	ASSERT_GONE(a[0].d);
	tu_backing_back_to_base(state);
}

/* Several processes re-creating one name at once: every O_CREAT open must succeed (a removal
 * racing an open of the same name must not turn into ENOENT). */
static int child_same_name(void *v)
{
	const char *f = v;

	uint32_t rounds = (uint32_t)itest_rounds(500);

	for (uint32_t i = 0; i < rounds; i++) {
		int fd = open(f, O_RDWR | O_CREAT, 0600);

		if (fd < 0) {
			fprintf(stderr, "# child %d round %u: open(O_CREAT): %s\n", (int)getpid(), i,
				errname(errno));
			return 1;
		}
		CHILD_CHECK(pwrite(fd, &i, sizeof(i), 0) == sizeof(i), 2);
		CHILD_CHECK(close(fd) == 0, 3);
	}
	return 0;
}

static void test_same_name_created_concurrently(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	pid_t pid[4];

	for (int i = 0; i < 4; i++)
		pid[i] = tu_spawn(child_same_name, f);
	for (int i = 0; i < 4; i++)
		REAP_OK_WITHIN(pid[i], 10 * CHILD_MS);
	ASSERT_GONE(f);
	tu_backing_back_to_base(state);
}

/* ---- rename ---- */

static void test_rename_open_file_keeps_data(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(a, p, "a");
	PATH(b, p, "b");
	int fd = make_file(a, 7000, 21);

	CHECK(rename(a, b));
	ASSERT_ABSENT(a);
	ASSERT_EXISTS(b);
	expect_fd_pattern(fd, 7000, 21);
	expect_path_pattern(b, 7000, 21);
	expect_stays(b);
	CHECK(close(fd));
	ASSERT_GONE(b);
	tu_backing_back_to_base(state);
}

static void test_rename_noreplace(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(a, p, "a");
	PATH(b, p, "b");
	int fa = make_file(a, 1000, 22);
	int fb = make_file(b, 2000, 23);

	CHECK_ERR(renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_NOREPLACE), EEXIST);
	expect_path_pattern(a, 1000, 22);
	expect_path_pattern(b, 2000, 23);
	CHECK(close(fa));
	CHECK(close(fb));
	ASSERT_GONE(a);
	ASSERT_GONE(b);
	tu_backing_back_to_base(state);
}

static void test_rename_exchange(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(a, p, "a");
	PATH(b, p, "b");
	int fa = make_file(a, 1000, 24);
	int fb = make_file(b, 2000, 25);

	CHECK(renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE));
	expect_path_pattern(a, 2000, 25);
	expect_path_pattern(b, 1000, 24);
	expect_fd_pattern(fa, 1000, 24);
	expect_fd_pattern(fb, 2000, 25);
	/* the names moved with the inodes: closing A's last handle removes the name b */
	CHECK(close(fa));
	ASSERT_GONE(b);
	expect_stays(a);
	CHECK(close(fb));
	ASSERT_GONE(a);
	tu_backing_back_to_base(state);
}

static void test_rename_over_open_file(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(a, p, "a");
	PATH(b, p, "b");
	int fa = make_file(a, 1000, 26);
	int fb = make_file(b, 2000, 27);

	CHECK(rename(a, b));
	ASSERT_ABSENT(a);
	expect_path_pattern(b, 1000, 26);
	/* the replaced inode is still open and keeps its data */
	expect_fd_pattern(fb, 2000, 27);
	CHECK(close(fb));
	expect_stays(b);
	CHECK(close(fa));
	ASSERT_GONE(b);
	tu_backing_back_to_base(state);
}

static void test_rename_into_folder(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(d, p, "d");
	PATH(e, p, "e");
	PATH(f, p, "f");
	PATH(df, p, "d/f");
	PATH(ef, p, "e/f");
	int fd;

	CHECK(mkdir(d, 0700));
	fd = make_file(f, 500, 28);
	CHECK(rename(f, df));
	ASSERT_ABSENT(f);
	CHECK(rename(d, e));
	ASSERT_ABSENT(d);
	expect_path_pattern(ef, 500, 28);
	CHECK(close(fd));
	ASSERT_GONE(ef);
	ASSERT_GONE(e);
	tu_backing_back_to_base(state);
}

/* Moving the last child out of an armed folder removes the folder. */
static void test_rename_out_empties_folder(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(a, p, "a");
	PATH(b, p, "b");
	PATH(af, p, "a/f");
	PATH(bf, p, "b/f");
	int fd, keep;

	CHECK(mkdir(a, 0700));
	CHECK(mkdir(b, 0700));
	fd = make_file(af, 100, 39);
	/* b is armed too, by a child that stays while we look */
	{
		PATH(bk, p, "b/keep");

		keep = make_file(bk, 1, 40);
	}
	CHECK(rename(af, bf));
	ASSERT_GONE(a);
	expect_path_pattern(bf, 100, 39);
	CHECK(close(fd));
	ASSERT_GONE(bf);
	expect_stays(b);
	CHECK(close(keep));
	ASSERT_GONE(b);
	tu_backing_back_to_base(state);
}

/* While a mapping is the only user, user.poolfs.refs must show the file in use. */
static void test_refs_show_live_mapping(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	int fd = make_file(f, pg, 41);
	void *m = map_fd(fd, pg);
	char text[1024];
	ssize_t n;

	CHECK(close(fd));
	n = getxattr(f, POOLFS_XATTR_REFS, text, sizeof(text) - 1);
	CHECK(n);
	text[n] = '\0';
	if (strstr(text, "opens 0\n") && strstr(text, "mapped no\n"))
		fail_msg("refs of a mapped file say it is unused:\n%s", text);
	CHECK(munmap(m, pg));
	ASSERT_GONE(f);
	tu_backing_back_to_base(state);
}

/* ---- linger=1 ---- */

static void test_linger_keeps_then_removes(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	int fd = make_file(f, 100, 29);

	CHECK(close(fd));
	/* removal waits for the linger delay (1 s): it is still here right after the close */
	ASSERT_EXISTS(f);
	expect_path_pattern(f, 100, 29);
	if (pool_wait_gone(f, 10000) != 0)
		fail_msg("%s not removed within 10 s with linger=1", f);
	tu_backing_back_to_base(state);
}

static void test_linger_reopen_keeps(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	int fd = make_file(f, 100, 30);

	CHECK(close(fd));
	fd = open(f, O_RDWR);
	CHECK(fd);
	/* in use again: the pending removal must not happen */
	pool_sleep_ms(1500);
	ASSERT_EXISTS(f);
	expect_fd_pattern(fd, 100, 30);
	CHECK(close(fd));
	ASSERT_EXISTS(f);
	if (pool_wait_gone(f, 10000) != 0)
		fail_msg("%s not removed within 10 s with linger=1", f);
	tu_backing_back_to_base(state);
}

static void test_linger_after_munmap(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	int fd = make_file(f, pg, 38);
	void *m = map_fd(fd, pg);

	CHECK(close(fd));
	CHECK(munmap(m, pg));
	/* the last mapping is gone, the linger delay starts */
	ASSERT_EXISTS(f);
	if (pool_wait_gone(f, 10000) != 0)
		fail_msg("%s not removed within 10 s with linger=1", f);
	tu_backing_back_to_base(state);
}

/* ---- removed inodes ---- */

/* An O_PATH descriptor sends no OPEN, so it does not keep the file; reopening the removed inode
 * through /proc/self/fd reaches the daemon with its node id and must get ESTALE. */
static void test_estale_on_removed_inode(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(f, p, "f");
	char proc[64];
	int fd = make_file(f, 100, 31);
	int pfd = open(f, O_PATH);

	CHECK(pfd);
	CHECK(close(fd));
	ASSERT_GONE(f);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	CHECK_ERR(open(proc, O_RDONLY), ESTALE);
	CHECK_ERR(open(proc, O_RDWR), ESTALE);
	CHECK(close(pfd));
	tu_backing_back_to_base(state);
}

/* Creating inside a removed folder must fail (ESTALE from the daemon, or ENOENT if the kernel
 * already knows the folder is dead), never resurrect an orphan. */
static void test_create_in_removed_folder(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(d, p, "d");
	PATH(f, p, "d/f");
	int fd, dfd, r, e;

	CHECK(mkdir(d, 0700));
	fd = make_file(f, 10, 32);
	dfd = open(d, O_PATH | O_DIRECTORY);
	CHECK(dfd);
	CHECK(close(fd));
	ASSERT_GONE(d);
	errno = 0;
	r = openat(dfd, "g", O_RDWR | O_CREAT, 0600);
	e = errno;
	if (r >= 0)
		close(r);
	if (r != -1 || (e != ESTALE && e != ENOENT))
		fail_msg("create in removed folder: %d errno %s, want ESTALE or ENOENT", r,
			 errname(e));
	errno = 0;
	r = mkdirat(dfd, "x", 0700);
	e = errno;
	if (r != -1 || (e != ESTALE && e != ENOENT))
		fail_msg("mkdir in removed folder: %d errno %s, want ESTALE or ENOENT", r,
			 errname(e));
	CHECK(close(dfd));
	tu_backing_back_to_base(state);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup_none, tu_teardown)
#define TL(fn) cmocka_unit_test_setup_teardown(fn, setup_linger, tu_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_closed_file_is_removed),
		T(test_removed_after_last_close),
		T(test_unlink_while_open),
		T(test_mapping_outlives_close),
		T(test_two_mappers_two_processes),
		T(test_fork_inherits_fd),
		T(test_fork_inherits_mapping),
		T(test_partial_munmap),
		T(test_sigkill_while_mapped),
		T(test_unlink_while_mapped),
		T(test_readonly_mapping_outlives_close),
		T(test_private_mapping_outlives_close),
		T(test_many_users_any_order),
		T(test_fd_passed_over_socket),
		T(test_exec_inherits_fd_unless_cloexec),
		T(test_recreate_while_old_mapping_alive),
		T(test_create_loop_no_wait),
		T(test_create_loop_with_wait),
		T(test_every_closed_file_goes),
		T(test_same_name_created_concurrently),
		T(test_folder_removal_races_create),
		T(test_folders_removed_up_to_root),
		T(test_empty_folder_stays),
		T(test_folder_handle_keeps_folder),
		T(test_rmdir_not_empty),
		T(test_rmdir_of_last_child_removes_parent),
		T(test_unlink_of_last_child_removes_parent),
		T(test_rename_open_file_keeps_data),
		T(test_rename_noreplace),
		T(test_rename_exchange),
		T(test_rename_over_open_file),
		T(test_rename_into_folder),
		T(test_rename_out_empties_folder),
		T(test_refs_show_live_mapping),
		TL(test_linger_keeps_then_removes),
		TL(test_linger_reopen_keeps),
		TL(test_linger_after_munmap),
		T(test_estale_on_removed_inode),
		T(test_create_in_removed_folder),
	};

	pg = sysconf(_SC_PAGESIZE);
	return ITEST_RUN(tests);
}
