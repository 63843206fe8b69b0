/* The round-trip table (docs/performance.md "Round trips", kept in docs/roundtrips.csv): for each
 * common call sequence, the requests the daemon gets, counted with the root's user.poolfs.ops on
 * a real pool, and why each is needed. A sequence that gets more requests of a type than the
 * table says fails, and so does a request type the table does not list for it (every request
 * must be explained). Fewer than the table says is reported (renew the table), not failed.
 *
 * The table has one column per build: the data path and libfuse's minor version (3.14 cannot
 * negotiate what 3.18 can). To renew this build's column, with the reasons below:
 *   POOLFS_RT_WRITE=1 meson test -C build integration/roundtrips/passthrough
 * Each sequence's row "*" holds its calls and its total.
 * FORGET is left out: the kernel sends it in batches, later, and no caller waits for it.
 * RELEASE comes after close() returns: the counts are read once they stop moving. */
#include "itest.h"

#include <dirent.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>

#ifndef POOLFS_RT_LIBFUSE
#define POOLFS_RT_LIBFUSE "?"
#endif

/* Request types as user.poolfs.ops names them (forget left out, see above). */
static const char *const op_names[] = {
	"lookup",   "getattr", "setattr",   "access",	"mknod",     "mkdir",	    "unlink",
	"rmdir",    "rename",  "create",    "open",	"read",	     "write",	    "flush",
	"fsync",    "release", "fallocate", "opendir",	"readdir",   "readdirplus", "releasedir",
	"fsyncdir", "statfs",  "setxattr",  "getxattr", "listxattr", "removexattr", "other",
};
#define NOPS (sizeof(op_names) / sizeof(op_names[0]))
/* "getxattr"'s index: our own reads of the counters are subtracted from it. */
static size_t getxattr_op(void)
{
	for (size_t i = 0; i < NOPS; i++)
		if (strcmp(op_names[i], "getxattr") == 0)
			return i;
	fail_msg("op_names lists no getxattr");
}

struct counts {
	long n[NOPS];
};

/* ---- the sequences ------------------------------------------------------------------------- */

struct ctx {
	const struct pool_fixture *p;
	char dir[PATH_MAX]; /* a folder of the sequence's own, made beforehand */
};

#define SEQ_PATH(var, c, rel)                                                                      \
	char var[PATH_MAX];                                                                        \
	assert_true(snprintf(var, sizeof(var), "%s/%s", (c)->dir, (rel)) < (int)sizeof(var))

static void write_file(const char *path, size_t size)
{
	static char buf[65536];
	int fd;

	memset(buf, 'x', sizeof(buf));
	CHECK(fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600));
	assert_int_equal(pwrite_all(fd, buf, size, 0), (ssize_t)size);
	CHECK(close(fd));
}

static void read_file(const char *path)
{
	char buf[8192];
	int fd;

	CHECK(fd = open(path, O_RDONLY));
	CHECK(read(fd, buf, sizeof(buf)));
	CHECK(close(fd));
}

static void run_create(struct ctx *c)
{
	SEQ_PATH(f, c, "f");
	write_file(f, 4096);
}

/* GNU tar itself: -x of an archive of one folder with TARRED files of 4 KiB (made in /tmp by
 * the setup), as the test's user (root: it restores owners, modes and times). The modes are a
 * release tarball's, 0755 and 0644, not the pool's own 0700 and 0600: tar reads back what it
 * made and asks for its mode again, as it does for nearly every archive unpacked in a pool. */
#define TARRED 10

static void tarball_path(const struct ctx *c, char *out, size_t len)
{
	const char *base = strrchr(c->dir, '/');

	assert_true(snprintf(out, len, "/tmp/poolfs-%s-%d.tar", base + 1, (int)getpid()) <
		    (int)len);
}

static void run_program(char *const argv[])
{
	pid_t pid = tu_fork(0);
	int status;

	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null < 0 || dup2(null, 1) < 0)
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	CHECK(waitpid(pid, &status, 0));
	tu_forget(pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("%s exited with status %d", argv[0], status);
}

static void setup_tarball(struct ctx *c)
{
	char tarball[PATH_MAX], src[] = "/tmp/poolfs-rt-XXXXXX", name[PATH_MAX];

	assert_non_null(mkdtemp(src));
	assert_true(snprintf(name, sizeof(name), "%s/d", src) < (int)sizeof(name));
	CHECK(mkdir(name, 0700));
	CHECK(chmod(name, 0755));
	for (int i = 0; i < TARRED; i++) {
		assert_true(snprintf(name, sizeof(name), "%s/d/f%d", src, i) < (int)sizeof(name));
		write_file(name, 4096);
		CHECK(chmod(name, 0644));
	}
	tarball_path(c, tarball, sizeof(tarball));
	run_program((char *const[]){"tar", "-cf", tarball, "-C", src, "d", NULL});
	run_program((char *const[]){"rm", "-rf", src, NULL});
}

static void run_tar(struct ctx *c)
{
	char tarball[PATH_MAX];

	tarball_path(c, tarball, sizeof(tarball));
	run_program((char *const[]){"tar", "-xf", tarball, "-C", c->dir, NULL});
	CHECK(unlink(tarball));
}

/* The same archive unpacked by a user, as most are: in a folder of theirs (pinned, made by the
 * setup), by tar run as OTHER_UID. A user's tar restores only times: it neither chowns nor,
 * trusting its open's mode, chmods. */
static void user_tar_dir(const struct ctx *c, char *out, size_t len)
{
	assert_true(snprintf(out, len, "%s/rt-tar-user", c->dir) < (int)len);
}

static int user_pinned_dir(void *arg)
{
	const char *dir = arg;

	USER_OK(1, mkdir(dir, 0700));
	USER_OK(2, setxattr(dir, POOLFS_XATTR_HOLD, POOLFS_SCOPE_WORD_PIN,
			    strlen(POOLFS_SCOPE_WORD_PIN), 0));
	return 0;
}

static void setup_user_tar(struct ctx *c)
{
	char dir[PATH_MAX], tarball[PATH_MAX];

	setup_tarball(c);
	tarball_path(c, tarball, sizeof(tarball));
	CHECK(chmod(tarball, 0644));
	user_tar_dir(c, dir, sizeof(dir));
	AS_OK(OTHER_UID, OTHER_GID, user_pinned_dir, dir);
}

struct tar_args {
	const char *tarball, *dir;
};

/* tar's exit status is this child's (0 when it unpacked everything). It starts in the folder:
 * the test's own working directory may be closed to the user. */
static int user_untar(void *arg)
{
	const struct tar_args *a = arg;
	int null = open("/dev/null", O_WRONLY);

	USER_OK(1, null);
	USER_OK(2, dup2(null, 1));
	USER_OK(3, chdir(a->dir));
	execlp("tar", "tar", "-xf", a->tarball, (char *)NULL);
	return 4;
}

static void run_user_tar(struct ctx *c)
{
	char tarball[PATH_MAX], dir[PATH_MAX];
	struct tar_args a = {tarball, dir};

	tarball_path(c, tarball, sizeof(tarball));
	user_tar_dir(c, dir, sizeof(dir));
	AS_OK(OTHER_UID, OTHER_GID, user_untar, &a);
	CHECK(unlink(tarball));
}

/* What tar -x does for each file it unpacks as root, after the data: times, owner, mode. */
static void run_create_tar(struct ctx *c)
{
	SEQ_PATH(f, c, "f");
	static const char buf[4096];
	struct timespec ts[2] = {{.tv_sec = 1000000}, {.tv_sec = 1000000}};
	int fd;

	CHECK(fd = open(f, O_WRONLY | O_CREAT | O_EXCL, 0600));
	assert_int_equal(pwrite_all(fd, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	CHECK(futimens(fd, ts));
	CHECK(fchown(fd, getuid(), getgid()));
	CHECK(fchmod(fd, 0600));
	CHECK(close(fd));
}

/* A file written and closed, its writer's RELEASE in: a read-only open that comes while the
 * daemon still counts the writer's handle shares the writer's path (passthrough,
 * fs/datapath_passthrough.c open_cached), and the run's open would not be the file's first
 * read-only one, alone. Under load the writer's RELEASE comes late. */
static void setup_first_read(struct ctx *c)
{
	SEQ_PATH(f, c, "f");
	write_file(f, 4096);
	tu_wait_unused(f, 2000);
}

/* The same, read once: the run's read is the file's second. */
static void setup_small_read(struct ctx *c)
{
	SEQ_PATH(f, c, "f");
	setup_first_read(c);
	read_file(f);
}

static void run_reread(struct ctx *c)
{
	SEQ_PATH(f, c, "f");
	read_file(f);
}

static void setup_stat(struct ctx *c)
{
	SEQ_PATH(f, c, "f");
	struct stat st;

	write_file(f, 4096);
	CHECK(stat(f, &st));
}

static void run_restat(struct ctx *c)
{
	SEQ_PATH(f, c, "f");
	struct stat st;

	CHECK(stat(f, &st));
}

static void run_mkdir(struct ctx *c)
{
	SEQ_PATH(d, c, "d");
	CHECK(mkdir(d, 0700));
}

static void setup_dir(struct ctx *c)
{
	run_mkdir(c);
}

static void run_rmdir(struct ctx *c)
{
	SEQ_PATH(d, c, "d");
	CHECK(rmdir(d));
}

static void setup_file(struct ctx *c)
{
	run_create(c);
}

static void run_unlink(struct ctx *c)
{
	SEQ_PATH(f, c, "f");
	CHECK(unlink(f));
}

static void run_rename(struct ctx *c)
{
	SEQ_PATH(f, c, "f");
	SEQ_PATH(g, c, "g");
	CHECK(rename(f, g));
}

#define LISTED 10

static void setup_folder(struct ctx *c)
{
	char name[16];

	for (int i = 0; i < LISTED; i++) {
		snprintf(name, sizeof(name), "e%d", i);
		SEQ_PATH(f, c, name);
		write_file(f, 100);
	}
}

static void run_readdir(struct ctx *c)
{
	DIR *d = opendir(c->dir);
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	CHECK(closedir(d));
	assert_int_equal(n, LISTED + 2);
}

/* ls -l itself, as a user runs it: its stat and xattr calls are coreutils'. */
static void run_ls(struct ctx *c)
{
	run_program((char *const[]){"ls", "-l", c->dir, NULL});
}

#define MAPPED (64 * 1024)

static void setup_mapped(struct ctx *c)
{
	SEQ_PATH(f, c, "f");
	write_file(f, MAPPED);
}

/* Map an existing file, read every page, store into one, unmap, close. */
static void run_mmap(struct ctx *c)
{
	SEQ_PATH(f, c, "f");
	volatile char *m;
	long sum = 0;
	int fd;

	CHECK(fd = open(f, O_RDWR));
	m = mmap(NULL, MAPPED, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	for (size_t off = 0; off < MAPPED; off += 4096)
		sum += m[off];
	m[0] = 'y';
	assert_true(sum > 0);
	CHECK(munmap((void *)m, MAPPED));
	CHECK(close(fd));
}

/* The calls glibc's shm_open family makes on /dev/shm (here a multi-user pool's root, as a pool
 * mounted on /dev/shm is): shm_open + ftruncate 1 MiB + mmap + a store to every page + munmap +
 * close + shm_unlink. */
static void run_shm(struct ctx *c)
{
	SEQ_PATH(f, c, "rt-shm");
	size_t len = 1 << 20;
	char *m;
	int fd;

	CHECK(fd = open(f, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
	CHECK(ftruncate(fd, (off_t)len));
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	for (size_t off = 0; off < len; off += 4096)
		m[off] = 1;
	CHECK(munmap(m, len));
	CHECK(close(fd));
	CHECK(unlink(f));
}

/* sem_open(O_CREAT) + sem_close + sem_unlink as glibc 2.36 makes them: the name is tried, a
 * temporary file made, the semaphore written and mapped, linked to its name, the temporary
 * name unlinked; sem_close unmaps, sem_unlink unlinks. */
static void run_sem(struct ctx *c)
{
	SEQ_PATH(name, c, "sem.rt");
	SEQ_PATH(tmp, c, "sem.rtXXXXXX");
	static const char sem[32];
	void *m;
	int fd;

	CHECK_ERR(open(name, O_RDWR | O_NOFOLLOW | O_CLOEXEC), ENOENT);
	CHECK(fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
	assert_int_equal(write(fd, sem, sizeof(sem)), (ssize_t)sizeof(sem));
	m = mmap(NULL, sizeof(sem), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	CHECK(link(tmp, name));
	CHECK(unlink(tmp));
	CHECK(close(fd));
	CHECK(munmap(m, sizeof(sem)));
	CHECK(unlink(name));
}

struct seq {
	const char *id;
	const char *calls; /* what the table says was done */
	void (*setup)(struct ctx *c);
	void (*run)(struct ctx *c);
};

static const struct seq private_seqs[] = {
	{"create", "`open(O_CREAT)` + 4 KiB `write` + `close`", NULL, run_create},
	{"create_tar", "the same + `futimens` + `fchown` + `fchmod` (what `tar -x` does as root)",
	 NULL, run_create_tar},
	{"tar", "`tar -x` (GNU tar, as root) of a folder (0755) of 10 files (0644) of 4 KiB",
	 setup_tarball, run_tar},
	{"read", "`open` + `read` + `close` of a 4 KiB file written and closed before (`grep -r`)",
	 setup_first_read, run_reread},
	{"reread", "`open` + `read` + `close` of an unchanged 4 KiB file, again", setup_small_read,
	 run_reread},
	{"restat", "`stat` of a closed file, again", setup_stat, run_restat},
	{"mkdir", "`mkdir`", NULL, run_mkdir},
	{"rmdir", "`rmdir` of an empty folder", setup_dir, run_rmdir},
	{"unlink", "`unlink` of a closed file", setup_file, run_unlink},
	{"rename", "`rename` of a closed file to a new name", setup_file, run_rename},
	{"readdir", "`opendir` + `readdir` + `closedir` of 10 files", setup_folder, run_readdir},
	{"ls", "`ls -l` of 10 files, listed before", setup_folder, run_ls},
	{"mmap",
	 "`open` + `mmap` of a 64 KiB file + a read of each page + a store + `munmap` + "
	 "`close`",
	 setup_mapped, run_mmap},
};

static const struct seq shared_seqs[] = {
	{"shm",
	 "`shm_open` + `ftruncate` 1 MiB + `mmap` + a store to every page + `munmap` + "
	 "`close` + `shm_unlink`, in a multi-user pool's root (a pool on `/dev/shm`)",
	 NULL, run_shm},
	{"sem", "`sem_open(O_CREAT)` + `sem_close` + `sem_unlink`, the same pool", NULL, run_sem},
	{"tar_user",
	 "`tar -x` of the same archive as tar's, by a user in a folder of theirs in that pool",
	 setup_user_tar, run_user_tar},
};

/* ---- why each request comes ---------------------------------------------------------------- */

struct why {
	const char *seq, *op, *text; /* seq "*": any sequence */
};

static const struct why whys[] = {
	{"create", "lookup", "the new name is not in the kernel's cache: it asks before creating"},
	{"create", "create", "makes the entry and opens it in one request"},
	{"create", "getxattr",
	 "the kernel's `security.capability` check before the first write to a new inode (FUSE "
	 "clears `S_NOSEC` at every attribute refresh; kernel, not negotiable)"},
	{"create", "write", "page cache: the data goes through the daemon"},
	{"*", "release", "the last close of the open file: the daemon's lifetime count"},
	{"create_tar", "lookup", "as for create"},
	{"create_tar", "create", "as for create"},
	{"create_tar", "write", "page cache: the data goes through the daemon"},
	{"create_tar", "setattr",
	 "one per call (`futimens`, `fchown`, `fchmod`): the daemon keeps "
	 "times, owners and modes"},
	{"create_tar", "getxattr",
	 "`security.capability`: before the first write (as for create) and at every `chown`; "
	 "without `HANDLE_KILLPRIV_V2` (libfuse 3.14) before every write"},
	{"create_tar", "getattr",
	 "libfuse 3.14 only: without `HANDLE_KILLPRIV_V2` the kernel refreshes the mode before "
	 "`chown` to clear setuid bits itself"},
	{"tar", "lookup", "each new name (10 files and the folder), as for create"},
	{"tar", "mkdir", "the folder"},
	{"tar", "create", "as for create"},
	{"tar", "write", "page cache: the data goes through the daemon"},
	{"tar", "setattr",
	 "three per file and the folder's three at the end: times, owner and mode (tar finds the "
	 "pool's 0600 and 0700, not the archive's modes, and asks for these; the pool keeps its "
	 "own)"},
	{"tar", "getxattr", "as for create_tar"},
	{"tar", "getattr", "libfuse 3.14 only: as for create_tar"},
	{"tar", "opendir", "tar opens the folder to set its times"},
	{"tar", "releasedir", "closes it"},
	{"read", "open",
	 "every open is the daemon's: lifetimes count handles; on passthrough the answer to a "
	 "small file's first read-only open brings the file into the kernel's page cache "
	 "(up to 64 KiB)"},
	{"read", "getattr",
	 "a write makes the kernel forget the size it knows, and a `read` that may reach the end "
	 "asks for it (once; kernel, not negotiable)"},
	{"reread", "open", "every open is the daemon's: lifetimes count handles"},
	{"mkdir", "lookup", "the new name is not cached"},
	{"mkdir", "mkdir", "makes the folder"},
	{"rmdir", "rmdir", "removals are immediate: the daemon removes the folder"},
	{"unlink", "unlink", "removals are immediate: the daemon removes the name"},
	{"rename", "lookup", "the new name is not cached"},
	{"rename", "rename", "the daemon keeps the names"},
	{"readdir", "getattr",
	 "glibc's `opendir` `fstat`s the folder, whose attributes the kernel dropped when files "
	 "were made in it (it cannot be told them: FUSE has no notice that carries attributes)"},
	{"readdir", "opendir", "the daemon snapshots the folder"},
	{"readdir", "readdirplus", "the entries, with their attributes, as the kernel caches them"},
	{"readdir", "readdir", "the kernel asks once more, without attributes, to find the end"},
	{"readdir", "releasedir", "drops the snapshot"},
	{"ls", "opendir", "as for readdir"},
	{"ls", "readdirplus", "as for readdir"},
	{"ls", "readdir", "as for readdir"},
	{"ls", "releasedir", "as for readdir"},
	{"ls", "getattr", "as for readdir"},
	{"ls", "getxattr",
	 "coreutils asks `security.selinux` (once per device) and the POSIX ACLs "
	 "of each file: `EOPNOTSUPP` is the kernel's to cache, and it caches none"},
	{"mmap", "open", "as for reread"},
	{"mmap", "read", "page cache: the mapping's first touch reads the file through the daemon"},
	{"mmap", "write", "page cache: the dirty page is written back before RELEASE"},
	{"shm", "lookup",
	 "names directly in a multi-user pool's root are not cached (the LOOKUP is where other "
	 "users are refused): each call on the path asks again"},
	{"shm", "create", "as for create"},
	{"shm", "setattr",
	 "`ftruncate`: the daemon reserves the space (a full pool fails it, not "
	 "a store)"},
	{"shm", "getxattr",
	 "the kernel's `security.capability` check at `ftruncate` (as at a "
	 "write)"},
	{"shm", "read", "page cache: the mapping's first touch of a page"},
	{"shm", "write", "page cache: dirty pages written back before RELEASE"},
	{"shm", "unlink", "as for unlink"},
	{"shm", "getattr",
	 "the root's attributes, dropped by the create and unlink in it, asked "
	 "again for the permission checks of a multi-user pool"},
	{"sem", "lookup", "as for shm"},
	{"sem", "create", "as for create"},
	{"sem", "getxattr", "as for create"},
	{"sem", "write", "page cache: the data goes through the daemon"},
	{"sem", "read", "page cache: the mapping's first touch"},
	{"sem", "other", "`link`"},
	{"sem", "unlink", "the temporary name, then the semaphore's"},
	{"sem", "getattr", "as for shm"},
	{"tar_user", "lookup",
	 "the folder tar starts in (directly in the root: as for shm), the archive's folder and "
	 "each file (as for create)"},
	{"tar_user", "mkdir", "the folder"},
	{"tar_user", "create", "as for create"},
	{"tar_user", "write", "page cache: the data goes through the daemon"},
	{"tar_user", "getxattr",
	 "as for create: one per file (a user's tar does not `chown`); without "
	 "`HANDLE_KILLPRIV_V2` (libfuse 3.14) before every write"},
	{"tar_user", "setattr",
	 "one per file and the folder's at the end: times only (a user's tar restores no owner "
	 "and trusts its open's mode)"},
	{"tar_user", "getattr",
	 "the folder's attributes, dropped by each create in it, asked again for the next path "
	 "walk's permission check (as for shm)"},
};

static const char *why_of(const char *seq, const char *op)
{
	for (size_t i = 0; i < sizeof(whys) / sizeof(whys[0]); i++)
		if (strcmp(whys[i].op, op) == 0 &&
		    (strcmp(whys[i].seq, seq) == 0 || strcmp(whys[i].seq, "*") == 0))
			return whys[i].text;
	return NULL;
}

/* ---- counting ------------------------------------------------------------------------------ */

static void ops_reset(const struct pool_fixture *p)
{
	CHECK(setxattr(p->mnt, POOLFS_XATTR_OPS, "reset", 5, 0));
}

/* One read of the counters (one GETXATTR). */
static void ops_read(const struct pool_fixture *p, struct counts *c)
{
	char text[4096], name[32];
	ssize_t len = getxattr(p->mnt, POOLFS_XATTR_OPS, text, sizeof(text) - 1);
	long n;

	if (len < 0)
		fail_msg("getxattr %s: %s", POOLFS_XATTR_OPS, errname(errno));
	text[len > 0 ? len : 0] = '\0';
	memset(c, 0, sizeof(*c));
	for (const char *line = text; *line;
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : "")
		if (sscanf(line, "%31s %ld", name, &n) == 2)
			for (size_t i = 0; i < NOPS; i++)
				if (strcmp(name, op_names[i]) == 0)
					c->n[i] = n;
}

static long others(const struct counts *c)
{
	long sum = 0;

	for (size_t i = 0; i < NOPS; i++)
		sum += i == getxattr_op() ? 0 : c->n[i];
	return sum;
}

/* The counts once they stop moving (RELEASE comes after close() returns), our own reads of
 * them taken out. Each read is one GETXATTR, counted before it is answered. */
static void ops_settled(const struct pool_fixture *p, struct counts *c)
{
	struct counts prev;
	long reads = 0;
	int same = 0;

	ops_read(p, &prev);
	reads++;
	while (same < 5 && reads < 400) {
		struct timespec ts = {.tv_nsec = 4 * 1000 * 1000};

		nanosleep(&ts, NULL);
		ops_read(p, c);
		reads++;
		same = others(c) == others(&prev) ? same + 1 : 0;
		prev = *c;
	}
	c->n[getxattr_op()] -= reads;
}

/* ---- the table ----------------------------------------------------------------------------- */

/* docs/roundtrips.csv: sequence,build,request,count,why. */
#define TABLE_LINE 1024

static const char *table_path(void)
{
	static char path[PATH_MAX];
	const char *src = getenv("POOLFS_SRCDIR");

	snprintf(path, sizeof(path), "%s/docs/roundtrips.csv", src ? src : ".");
	return path;
}

static const char *build_key(void)
{
	static char key[64];

	snprintf(key, sizeof(key), "%s/%s",
		 getenv("POOLFS_DATAPATH") ? getenv("POOLFS_DATAPATH") : "?", POOLFS_RT_LIBFUSE);
	return key;
}

/* The table's count for (seq, this build, op): -1 if it has no row. */
static long table_count(const char *seq, const char *op)
{
	FILE *f = fopen(table_path(), "r");
	char line[TABLE_LINE], s[64], b[64], o[32];
	long n, found = -1;

	if (!f) {
		fail_msg("%s: %s (renew it with POOLFS_RT_WRITE=1)", table_path(), errname(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63[^,],%63[^,],%31[^,],%ld,", s, b, o, &n) == 4 &&
		    strcmp(s, seq) == 0 && strcmp(b, build_key()) == 0 && strcmp(o, op) == 0)
			found = n;
	fclose(f);
	return found;
}

/* POOLFS_RT_WRITE: this build's rows are replaced by what was measured. */
static char *measured_rows;
static size_t measured_len;

static void record(const char *seq, const char *op, long n, const char *why)
{
	char row[TABLE_LINE];
	int len = snprintf(row, sizeof(row), "%s,%s,%s,%ld,\"%s\"\n", seq, build_key(), op, n, why);
	char *grown = realloc(measured_rows, measured_len + (size_t)len + 1);

	assert_non_null(grown);
	measured_rows = grown;
	memcpy(measured_rows + measured_len, row, (size_t)len + 1);
	measured_len += (size_t)len;
}

static void write_table(void)
{
	char path[PATH_MAX + 8], line[TABLE_LINE], b[64];
	FILE *in = fopen(table_path(), "r"), *out;

	snprintf(path, sizeof(path), "%s.new", table_path());
	out = fopen(path, "w");
	assert_non_null(out);
	fputs("sequence,build,request,count,why\n", out);
	while (in && fgets(line, sizeof(line), in))
		if (sscanf(line, "%*[^,],%63[^,],", b) == 1 && strcmp(b, build_key()) != 0 &&
		    strcmp(b, "build") != 0)
			fputs(line, out);
	if (measured_rows)
		fputs(measured_rows, out);
	if (in)
		fclose(in);
	CHECK(fclose(out));
	CHECK(rename(path, table_path()));
	free(measured_rows);
	measured_rows = NULL;
	measured_len = 0;
}

/* Sequences that failed: each is reported, and the test fails after the last. */
static int failed;

static int writing(void)
{
	const char *w = getenv("POOLFS_RT_WRITE");

	return w && w[0] && strcmp(w, "0") != 0;
}

static void run_seq(const struct pool_fixture *p, const struct seq *s, const char *base)
{
	struct ctx c = {.p = p};
	struct counts got;
	char failures[2048] = "";
	size_t used = 0;
	long total = 0;

	if (base)
		assert_true(snprintf(c.dir, sizeof(c.dir), "%s", base) < (int)sizeof(c.dir));
	else
		assert_true(snprintf(c.dir, sizeof(c.dir), "%s/rt-%s", p->mnt, s->id) <
			    (int)sizeof(c.dir));
	if (!base)
		CHECK(mkdir(c.dir, 0700));
	if (s->setup)
		s->setup(&c);
	ops_settled(p, &got);
	ops_reset(p);
	s->run(&c);
	ops_settled(p, &got);
	for (size_t i = 0; i < NOPS; i++) {
		const char *why = why_of(s->id, op_names[i]);
		long want;

		if (got.n[i] == 0)
			continue;
		total += got.n[i];
		print_message("# %s: %s %ld\n", s->id, op_names[i], got.n[i]);
		if (writing()) {
			if (!why && used < sizeof(failures) - 128)
				used += (size_t)snprintf(failures + used, sizeof(failures) - used,
							 " %s %ld (no reason known)", op_names[i],
							 got.n[i]);
			else
				record(s->id, op_names[i], got.n[i], why);
			continue;
		}
		want = table_count(s->id, op_names[i]);
		if (got.n[i] > want && used < sizeof(failures) - 128)
			used += (size_t)snprintf(failures + used, sizeof(failures) - used,
						 " %s %ld (table: %ld)", op_names[i], got.n[i],
						 want < 0 ? 0 : want);
	}
	if (writing())
		record(s->id, "*", total, s->calls);
	if (used) {
		print_error("%s on %s: more requests than docs/roundtrips.csv says:%s\n", s->id,
			    build_key(), failures);
		failed++;
	}
}

static int setup_private(void **state)
{
	return tu_setup_private(state, "autohold=session");
}

static int setup_shared(void **state)
{
	return tu_setup(state, "allow_other,autohold=session");
}

static void test_private_sequences(void **state)
{
	failed = 0;
	for (size_t i = 0; i < sizeof(private_seqs) / sizeof(private_seqs[0]); i++)
		run_seq(tu_pool(state), &private_seqs[i], NULL);
	if (failed)
		fail_msg("%d sequences got more requests than the table says", failed);
}

static void test_shared_root_sequences(void **state)
{
	const struct pool_fixture *p = tu_pool(state);

	failed = 0;
	for (size_t i = 0; i < sizeof(shared_seqs) / sizeof(shared_seqs[0]); i++)
		run_seq(p, &shared_seqs[i], p->mnt);
	if (writing() && !failed)
		write_table();
	if (failed)
		fail_msg("%d sequences got more requests than the table says", failed);
}

/* The cache a repeat read is served from stays true: a write or a mapped store through another
 * handle (on passthrough, one that goes around the page cache) shows in the next read. */
static char first_byte(const char *path)
{
	char b = 0;
	int fd;

	CHECK(fd = open(path, O_RDONLY));
	assert_int_equal(read(fd, &b, 1), 1);
	CHECK(close(fd));
	return b;
}

static void test_reread_sees_other_writes(void **state)
{
	PATH(f, tu_pool(state), "fresh");
	struct stat before, after;
	char *m;
	pid_t pid;
	int fd;

	write_file(f, 4096);
	assert_int_equal(first_byte(f), 'x');
	assert_int_equal(first_byte(f), 'x');
	CHECK(fd = open(f, O_WRONLY));
	assert_int_equal(pwrite(fd, "y", 1, 0), 1);
	CHECK(close(fd));
	assert_int_equal(first_byte(f), 'y');
	CHECK(fd = open(f, O_RDWR));
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	m[0] = 'z';
	CHECK(munmap(m, 4096));
	CHECK(close(fd));
	assert_int_equal(first_byte(f), 'z');
	assert_int_equal(first_byte(f), 'z');
	/* Attributes too: after a stat served from the cache, a write by another process that
	 * grows the file shows in the next stat (times may not move within a clock tick). */
	CHECK(stat(f, &before));
	CHECK(stat(f, &before));
	pid = tu_fork(0);
	if (pid == 0) {
		int wfd = open(f, O_WRONLY);

		_exit(wfd >= 0 && pwrite(wfd, "w", 1, 8192) == 1 && close(wfd) == 0 ? 0 : 1);
	}
	assert_int_equal(tu_reap(pid, 10000), 0);
	CHECK(stat(f, &after));
	assert_int_equal(after.st_size, 8193);
	assert_int_equal(before.st_size, 4096);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_private_sequences, setup_private, tu_teardown),
		cmocka_unit_test_setup_teardown(test_shared_root_sequences, setup_shared,
						tu_teardown),
		cmocka_unit_test_setup_teardown(test_reread_sees_other_writes, setup_private,
						tu_teardown),
	};

	return ITEST_RUN(tests);
}
