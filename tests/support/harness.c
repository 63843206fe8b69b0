/* Integration-test harness: one real pool per fixture, always taken down. See harness.h. */
#include "harness.h"
#include "array.h"
#include "procfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MOUNT_TIMEOUT_MS 10000
#define MOUNT_TIMEOUT_VALGRIND_MS 60000
#define MOUNTED_LINE_GRACE_MS 2000
#define UMOUNT_BUSY_MS 3000
#define EXIT_TIMEOUT_MS 10000
#define EXIT_TIMEOUT_VALGRIND_MS 120000
#define KILL_TIMEOUT_MS 5000

/* Fixtures with a daemon or temporary dirs, so a signal or exit() can still take them down. */
#define MAX_LIVE 16
static struct pool_fixture *live[MAX_LIVE];
static int handlers_installed;

long long pool_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void pool_sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* Every message carries the TAP comment prefix and goes to stderr. */
__attribute__((format(printf, 1, 2))) static void diag(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "# harness: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	fflush(stderr);
}

/* buf = dir "/" name: 0 or -ENAMETOOLONG (a truncated path must never be used) */
static int join(char *buf, size_t len, const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);

	if (dl + 1 + nl + 1 > len)
		return -ENAMETOOLONG;
	/* dir without its NUL, then '/', then name with its NUL */
	memcpy(buf, dir, dl); /* NOLINT(bugprone-not-null-terminated-result): '/' and name follow */
	buf[dl] = '/';
	memcpy(buf + dl + 1, name, nl + 1);
	return 0;
}

static int env_flag(const char *name)
{
	const char *v = getenv(name);

	return v && v[0] && strcmp(v, "0") != 0;
}

int pool_path(const struct pool_fixture *p, const char *rel, char *buf, size_t len)
{
	int n;

	if (!rel || !rel[0])
		n = snprintf(buf, len, "%s", p->mnt);
	else
		n = snprintf(buf, len, "%s/%s", p->mnt, rel);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

int pool_wait_gone(const char *path, int timeout_ms)
{
	long long deadline = pool_now_ms() + timeout_ms;
	struct stat st;

	for (int polls = 0;; polls++) {
		/* EACCES: the entry is there but another user's (the daemon refuses the lookup
		 * before it says whether the name exists): keep waiting, as for an entry we see. */
		if (lstat(path, &st) == -1 && errno != EACCES) {
			if (errno == ENOENT)
				return 0;
			return -errno;
		}
		if (pool_now_ms() >= deadline)
			return -ETIMEDOUT;
		/* a removal usually follows within a millisecond or two: poll fast at first */
		pool_sleep_ms(polls < 50 ? 1 : 5);
	}
}

int pool_wait_exists(const char *path, int timeout_ms)
{
	long long deadline = pool_now_ms() + timeout_ms;
	struct stat st;

	for (;;) {
		if (lstat(path, &st) == 0)
			return 0;
		if (errno != ENOENT)
			return -errno;
		if (pool_now_ms() >= deadline)
			return -ETIMEDOUT;
		pool_sleep_ms(5);
	}
}

/* nftw has no user pointer: the count lives here (the harness is single-threaded by contract). */
static int walk_count;

static int count_cb(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)path;
	(void)st;
	(void)ftw;
	if (type != FTW_D && type != FTW_DP && type != FTW_DNR)
		walk_count++;
	return 0;
}

/* Where a pool's backing files are: its private store (NULL while none is known) or the backing
 * folder. */
static const char *backing_root(const struct pool_fixture *p)
{
	if (p->private_store)
		return p->store[0] ? p->store : NULL;
	return p->backing;
}

int pool_backing_files(const struct pool_fixture *p)
{
	const char *root = backing_root(p);

	walk_count = 0;
	if (!root)
		return -ENOENT;
	if (nftw(root, count_cb, 16, FTW_PHYS | FTW_MOUNT) == -1)
		return -errno;
	return walk_count;
}

/* pool_backing_describe's list, filled by its nftw callback (see walk_count). */
static struct {
	char *buf;
	size_t len, used;
	int listed;
} walk_list;

static int describe_cb(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	int n;

	(void)ftw;
	if (type == FTW_D || type == FTW_DP || type == FTW_DNR || walk_list.listed >= 8 ||
	    walk_list.used >= walk_list.len)
		return 0;
	n = snprintf(walk_list.buf + walk_list.used, walk_list.len - walk_list.used,
		     "%s%s (%lld B, %lu links)", walk_list.listed ? ", " : "", path,
		     (long long)st->st_size, (unsigned long)st->st_nlink);
	if (n > 0)
		walk_list.used += (size_t)n < walk_list.len - walk_list.used
					  ? (size_t)n
					  : walk_list.len - walk_list.used - 1;
	walk_list.listed++;
	return 0;
}

void pool_backing_describe(const struct pool_fixture *p, char *buf, size_t len)
{
	const char *root = backing_root(p);

	if (!len)
		return;
	buf[0] = '\0';
	walk_list.buf = buf;
	walk_list.len = len;
	walk_list.used = 0;
	walk_list.listed = 0;
	if (!root)
		snprintf(buf, len, "(no private store known)");
	else if (nftw(root, describe_cb, 16, FTW_PHYS | FTW_MOUNT) == -1)
		snprintf(buf, len, "(walk: %s)", strerror(errno));
	walk_list.buf = NULL;
}

int pool_wait_backing_files(const struct pool_fixture *p, int want, int timeout_ms)
{
	long long deadline = pool_now_ms() + timeout_ms;

	for (;;) {
		int n = pool_backing_files(p);

		if (n < 0)
			return n;
		if (n == want)
			return 0;
		if (pool_now_ms() >= deadline)
			return -ETIMEDOUT;
		pool_sleep_ms(5);
	}
}

static int remove_cb(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	if (ftw->level == 0)
		return 0; /* the caller decides about the top directory */
	if (remove(path) == -1)
		diag("cannot remove %s: %s", path, strerror(errno));
	return 0;
}

/* Empty a directory without crossing into a mount that is still there (FTW_MOUNT): a live pool
 * under our temporary dir must never be walked and emptied by us. */
static void remove_tree_contents(const char *dir)
{
	nftw(dir, remove_cb, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

/* From /proc/self/mountinfo: it works even when the FUSE connection is dead and statfs would
 * fail with ENOTCONN. */
int pool_die_with(pid_t parent, int sig)
{
	prctl(PR_SET_PDEATHSIG, sig);
	return getppid() == parent ? 0 : -1;
}

void pool_child_stdio(const char *log, bool truncate)
{
	int fd = open("/dev/null", O_RDONLY);

	if (fd >= 0) {
		dup2(fd, 0);
		if (fd != 0)
			close(fd);
	}
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | (truncate ? O_TRUNC : 0), 0644);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	close_range(3, ~0U, 0);
}

int pool_path_is_mountpoint(const char *path)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char mp[PATH_MAX];

		/* id parent major:minor root mountpoint ... ; our paths have no escaped characters */
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) == 1 && strcmp(mp, path) == 0) {
			found = 1;
			break;
		}
	}
	fclose(f);
	return found;
}

static int is_fuse_live(const char *path)
{
	struct statfs sf;

	return statfs(path, &sf) == 0 && (unsigned long)sf.f_type == POOL_FUSE_SUPER_MAGIC;
}

char *pool_read_text(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf;
	size_t n;

	if (!f)
		return NULL;
	buf = malloc(1 << 20);
	if (!buf) {
		fclose(f);
		return NULL;
	}
	n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static char *read_log(const struct pool_fixture *p)
{
	return p->log[0] ? pool_read_text(p->log) : NULL;
}

void pool_dump_log(const struct pool_fixture *p)
{
	char *log = read_log(p);
	char *line, *save = NULL;

	if (!log)
		return;
	fprintf(stderr, "# ---- daemon log %s ----\n", p->log);
	for (line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		fprintf(stderr, "# | %s\n", line);
	fprintf(stderr, "# ---- end of daemon log ----\n");
	fflush(stderr);
	free(log);
}

static void dump_first_line(const struct pool_fixture *p)
{
	char *log = read_log(p);

	if (!log)
		return;
	log[strcspn(log, "\n")] = '\0';
	diag("daemon: %s", log);
	free(log);
}

/* The daemon's "poolfs: mounted MNT datapath=X" line: copy X, or leave active_datapath empty. */
static void parse_mounted_line(struct pool_fixture *p)
{
	char *log = read_log(p);
	char *at, *dp;
	size_t n;

	if (!log)
		return;
	/* the last one: a remounted fixture's log holds every daemon's lines */
	at = NULL;
	for (char *s = strstr(log, "poolfs: mounted "); s; s = strstr(s + 1, "poolfs: mounted "))
		at = s;
	if (at) {
		char *eol = strchr(at, '\n');

		if (eol)
			*eol = '\0';
		dp = strstr(at, "datapath=");
		if (dp) {
			dp += strlen("datapath=");
			n = strcspn(dp, " \t\r");
			if (n >= sizeof(p->active_datapath))
				n = sizeof(p->active_datapath) - 1;
			memcpy(p->active_datapath, dp, n);
			p->active_datapath[n] = '\0';
		}
	}
	free(log);
}

/* Whether the log of a daemon that refused to start says the datapath is unsupported. */
static int log_says_unsupported(const struct pool_fixture *p)
{
	char *log = read_log(p);
	char *line, *save = NULL;
	int yes = 0;

	if (!log)
		return 0;
	for (line = strtok_r(log, "\n", &save); line && !yes; line = strtok_r(NULL, "\n", &save)) {
		int about_datapath = strcasestr(line, "passthrough") ||
				     strcasestr(line, "datapath");
		int refused = strcasestr(line, "not supported") ||
			      strcasestr(line, "unsupported") || strcasestr(line, "not available");

		yes = about_datapath && refused;
	}
	free(log);
	return yes;
}

/* Wait for pid up to timeout_ms: 1 and *status when it was reaped, 0 if it is still running,
 * -errno if waitpid failed. */
static int wait_bounded(pid_t pid, int *status, int timeout_ms)
{
	long long deadline = pool_now_ms() + timeout_ms;

	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return 1;
		if (r == -1 && errno != EINTR)
			return -errno;
		if (pool_now_ms() >= deadline)
			return 0;
		pool_sleep_ms(10);
	}
}

/* ---- emergency cleanup: a signal or exit() while fixtures are live ---- */

static void live_add(struct pool_fixture *p)
{
	for (int i = 0; i < MAX_LIVE; i++)
		if (!live[i]) {
			live[i] = p;
			return;
		}
}

static void live_del(struct pool_fixture *p)
{
	for (int i = 0; i < MAX_LIVE; i++)
		if (live[i] == p)
			live[i] = NULL;
}

static void emergency_cleanup(int from_signal)
{
	pid_t me = getpid();

	for (int i = 0; i < MAX_LIVE; i++) {
		struct pool_fixture *p = live[i];

		/* A forked child of a test shares our memory image: it must not touch the parent's
		 * pools. */
		if (!p || p->owner != me)
			continue;
		if (from_signal) {
			/* Only async-signal-safe calls here: detach, ask the daemon to stop, reap it
			 * for a short while, remove what is empty. */
			struct timespec ts = {0, 10 * 1000000L};
			int status;

			if (p->mnt[0])
				umount2(p->mnt, MNT_DETACH);
			if (p->daemon_pid > 0) {
				kill(p->daemon_pid, SIGTERM);
				for (int t = 0; t < 300; t++) {
					if (waitpid(p->daemon_pid, &status, WNOHANG) ==
					    p->daemon_pid)
						break;
					nanosleep(&ts, NULL);
				}
			}
			if (p->mnt[0])
				rmdir(p->mnt);
			if (p->backing[0])
				rmdir(p->backing);
			if (p->log[0])
				unlink(p->log);
			if (p->root[0])
				rmdir(p->root);
		} else {
			pool_unmount(p);
		}
		live[i] = NULL;
	}
}

static void on_exit_cleanup(void)
{
	emergency_cleanup(0);
}

static void on_signal(int sig)
{
	emergency_cleanup(1);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_handlers(void)
{
	struct sigaction sa;

	if (handlers_installed)
		return;
	handlers_installed = 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	atexit(on_exit_cleanup);
}

/* ---- mount ---- */

/* POOLFS_BIN, or the daemon next to the build tree: <build>/tests/integration/x -> <build>/fs/poolfs */
static int find_daemon(char *buf, size_t len)
{
	const char *env = getenv("POOLFS_BIN");
	char self[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && env[0]) {
		if ((size_t)snprintf(buf, len, "%s", env) >= len)
			return -ENAMETOOLONG;
		return 0;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		return -errno;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	if ((size_t)snprintf(buf, len, "%s/../../fs/poolfs", self) >= len)
		return -ENAMETOOLONG;
	if (access(buf, X_OK) == -1)
		return -errno;
	return 0;
}

static void exec_daemon(const struct pool_fixture *p, const char *bin, const char *opts,
			pid_t parent)
{
	const char *argv[16];
	int argc = 0;

	/* A dying test takes its daemon down (SIGTERM makes the daemon unmount cleanly). */
	if (pool_die_with(parent, SIGTERM) < 0)
		_exit(126);
	pool_child_stdio(p->log, false);
	if (p->valgrind) {
		argv[argc++] = "valgrind";
		argv[argc++] = "-q";
		argv[argc++] = "--error-exitcode=99";
		argv[argc++] = "--leak-check=full";
		argv[argc++] = "--errors-for-leak-kinds=definite";
	}
	argv[argc++] = bin;
	argv[argc++] = "-f";
	argv[argc++] = "-o";
	argv[argc++] = opts;
	argv[argc++] = p->mnt;
	argv[argc] = NULL;
	execvp(argv[0], (char *const *)argv);
	dprintf(2, "harness: cannot exec %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

int pool_dev_alive(dev_t dev)
{
#ifdef SYS_ustat
	char buf[64];

	if (syscall(SYS_ustat, (unsigned)dev, buf) == 0)
		return 1;
	return errno == EINVAL ? 0 : -errno;
#else
	(void)dev;
	return -ENOSYS;
#endif
}

int pool_wait_store_gone(struct pool_fixture *p, int timeout_ms)
{
	long long deadline = pool_now_ms() + timeout_ms;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	if (p->store_dev && p->store_watch == -1)
		return 0; /* seen gone already */
	if (!p->store_dev || p->store_watch <= 0)
		return -ENOENT;
	/* The inotify watch on the instance's root gets IN_UNMOUNT when that very superblock shuts
	 * down (a device number could be reused by another pool's at once), and it does not keep
	 * the instance alive. */
	for (;;) {
		long long left = deadline - pool_now_ms();
		struct pollfd pfd = {.fd = p->store_watch, .events = POLLIN};
		ssize_t n;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			return -errno;
		n = read(p->store_watch, buf, sizeof(buf));
		for (char *e = buf; n > 0 && e < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)e;

			if (ev->mask & (IN_UNMOUNT | IN_IGNORED)) {
				close(p->store_watch);
				p->store_watch = -1;
				return 0;
			}
			e += sizeof(*ev) + ev->len;
		}
	}
}

int pool_daemon_stores(pid_t pid, dev_t not_dev, struct pool_store *out, int max)
{
	int fds[256], nfds, n = 0;
	struct stat shm, st;

	if (stat("/dev/shm", &shm) == -1)
		return -errno;
	/* a detached instance's root reads as "/" */
	nfds = proc_find_fds(pid, "/", fds, (int)ARRAY_SIZE(fds));
	if (nfds < 0)
		return nfds;
	for (int i = 0; i < nfds; i++) {
		char path[64];
		struct statfs sf;

		snprintf(path, sizeof(path), "/proc/%ld/fd/%d", (long)pid, fds[i]);
		if (stat(path, &st) == -1 || !S_ISDIR(st.st_mode) || statfs(path, &sf) == -1 ||
		    sf.f_type != 0x01021994 /* TMPFS_MAGIC */ || st.st_dev == shm.st_dev ||
		    st.st_dev == not_dev)
			continue;
		if (n < max) {
			snprintf(out[n].path, sizeof(out[n].path), "%s", path);
			out[n].dev = st.st_dev;
		}
		n++;
	}
	return n <= max ? n : -E2BIG;
}

/* The daemon's private tmpfs: the descriptor of a tmpfs root that is neither /dev/shm nor the
 * tmpfs of our temporary dirs. 0 or -ENOENT. */
static int find_store(struct pool_fixture *p)
{
	struct pool_store found[4];
	struct stat tmp;
	int n;

	if (stat(p->root, &tmp) == -1)
		return -errno;
	n = pool_daemon_stores(p->daemon_pid, tmp.st_dev, found, 4);
	if (n > 0) {
		snprintf(p->store, sizeof(p->store), "%s/.", found[0].path);
		p->store_dev = found[0].dev;
		if (p->store_watch > 0)
			close(p->store_watch);
		p->store_watch = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
		if (p->store_watch < 0 ||
		    inotify_add_watch(p->store_watch, found[0].path, IN_DELETE_SELF) < 0) {
			int e = errno;

			if (p->store_watch > 0)
				close(p->store_watch);
			p->store_watch = 0;
			diag("inotify on the private tmpfs: %s", strerror(e));
			return -e;
		}
		return 0;
	}
	diag("POOLFS_BACKING=private, but daemon %ld has no private tmpfs open",
	     (long)p->daemon_pid);
	return -ENOENT;
}

/* Start the daemon on the fixture's dirs and wait until the mount is live. On failure the
 * daemon is reaped and the fixture's dirs are left for the caller to clean. */
static int start_daemon(struct pool_fixture *p, const char *extra_opts)
{
	char bin[PATH_MAX];
	char opts[3 * PATH_MAX];
	long long deadline;
	pid_t parent = getpid();
	int status = 0;
	int ret;

	ret = find_daemon(bin, sizeof(bin));
	if (ret < 0) {
		diag("no daemon: set POOLFS_BIN (%s)", strerror(-ret));
		return ret;
	}
	/* Under valgrind the daemon stays on /dev/fuse: valgrind keeps its thread lock across a ring
	 * thread's blocking io_uring_enter, so every other thread (and each request) waits forever. A
	 * test's own uring= comes later and wins (docs/interface.md, "Transport"). */
	if ((size_t)snprintf(opts, sizeof(opts), "%s%s%sdatapath=%s%s%s%s%s",
			     p->private_store ? "" : "backing=", p->private_store ? "" : p->backing,
			     p->private_store ? "" : ",", p->datapath,
			     p->single_user ? "" : ",allow_other", p->valgrind ? ",uring=off" : "",
			     extra_opts && extra_opts[0] ? "," : "",
			     extra_opts ? extra_opts : "") >= sizeof(opts))
		return -ENAMETOOLONG;

	p->active_datapath[0] = '\0';
	p->store[0] = '\0';
	p->exit_status = -1;
	fflush(NULL); /* nothing buffered may be written twice by the child */
	p->daemon_pid = fork();
	if (p->daemon_pid == -1) {
		p->daemon_pid = 0;
		return -errno;
	}
	if (p->daemon_pid == 0)
		exec_daemon(p, bin, opts, parent);

	deadline = pool_now_ms() + (p->valgrind ? MOUNT_TIMEOUT_VALGRIND_MS : MOUNT_TIMEOUT_MS);
	for (;;) {
		pid_t r = waitpid(p->daemon_pid, &status, WNOHANG);

		if (r == p->daemon_pid) {
			/* The daemon gave up before the mount went live. */
			p->daemon_pid = 0;
			p->exit_status = status;
			/* the contract's exit 3; older daemons only said so */
			if ((WIFEXITED(status) && WEXITSTATUS(status) == 3) ||
			    log_says_unsupported(p))
				return -EOPNOTSUPP;
			ret = WIFEXITED(status) && WEXITSTATUS(status) == 2 ? -EINVAL : -EIO;
			diag("daemon exited before mounting (status %d)",
			     WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
			/* a refused option is often what the test wanted: its message is enough;
			 * anything else gets the whole log */
			if (ret == -EINVAL)
				dump_first_line(p);
			else
				pool_dump_log(p);
			return ret;
		}
		if (is_fuse_live(p->mnt))
			break;
		if (pool_now_ms() >= deadline) {
			diag("mount of %s not live after %d ms", p->mnt,
			     p->valgrind ? MOUNT_TIMEOUT_VALGRIND_MS : MOUNT_TIMEOUT_MS);
			pool_dump_log(p);
			return -ETIMEDOUT;
		}
		pool_sleep_ms(10);
	}
	p->mounted = 1;

	/* The contract's "poolfs: mounted MNT datapath=X" line may trail the mount by a little. */
	deadline = pool_now_ms() + MOUNTED_LINE_GRACE_MS;
	while (!p->active_datapath[0] && pool_now_ms() < deadline) {
		parse_mounted_line(p);
		if (!p->active_datapath[0])
			pool_sleep_ms(10);
	}
	if (!p->active_datapath[0]) {
		diag("daemon printed no \"poolfs: mounted %s datapath=...\" line", p->mnt);
	} else if (strcmp(p->datapath, "auto") != 0 &&
		   strcmp(p->datapath, p->active_datapath) != 0) {
		/* Asked for one path and silently got the other: every result would be about the
		 * wrong code. */
		diag("asked for datapath=%s, daemon reports datapath=%s", p->datapath,
		     p->active_datapath);
		return -EPROTO;
	}
	return p->private_store ? find_store(p) : 0;
}

/* As root, a test process mounts its pools in a mount namespace of its own, private both ways:
 * a namespace made elsewhere meanwhile (a cluster node's, a chroot build's) would otherwise copy
 * the pool's mount and keep its daemon alive after the test's umount ("did not exit after
 * unmount"), and an unmount propagated back from one could take the pool away mid-test. The
 * test's children (other users through setpriv, the daemon) inherit it. */
static void private_mounts(void)
{
	static bool tried;

	if (tried || geteuid() != 0)
		return;
	tried = true;
	if (unshare(CLONE_NEWNS) == -1 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		diag("pools stay in the shared mount namespace: %s", strerror(errno));
}

static int mount_fixture(struct pool_fixture *p, const char *extra_opts, bool single_user)
{
	const char *base = getenv("POOLFS_TEST_TMP");
	const char *dp = getenv("POOLFS_DATAPATH");
	const char *store = getenv("POOLFS_BACKING");
	int ret;

	memset(p, 0, sizeof(*p));
	p->single_user = single_user;
	p->owner = getpid();
	p->exit_status = -1;
	p->valgrind = env_flag("POOLFS_VALGRIND");
	/* As root the daemon's default is its own tmpfs: test that unless told otherwise. Not under
	 * valgrind, which knows no fsopen(2) (3.19, Debian 12's): the daemon then falls back to
	 * /dev/shm, as it says in its log. */
	p->private_store = store && store[0] ? strcmp(store, "private") == 0
					     : geteuid() == 0 && !p->valgrind;
	if (!base || !base[0])
		base = "/dev/shm";
	if (!dp || !dp[0])
		dp = "pagecache";
	snprintf(p->datapath, sizeof(p->datapath), "%s", dp);
	install_handlers();
	private_mounts();

	/* Not "poolfs-*": a daemon with backing=/dev/shm sweeps such names. */
	if ((size_t)snprintf(p->root, sizeof(p->root), "%s/pooltest-XXXXXX", base) >=
	    sizeof(p->root))
		return -ENAMETOOLONG;
	if (!mkdtemp(p->root)) {
		ret = -errno;
		p->root[0] = '\0';
		return ret;
	}
	live_add(p);
	/* 0755 so another uid can walk to the mountpoint */
	if (chmod(p->root, 0755) == -1)
		goto fail_errno;
	if (join(p->mnt, sizeof(p->mnt), p->root, "mnt") ||
	    join(p->backing, sizeof(p->backing), p->root, "backing") ||
	    join(p->log, sizeof(p->log), p->root, "daemon.log")) {
		ret = -ENAMETOOLONG;
		goto fail;
	}
	if (mkdir(p->mnt, 0755) == -1 || mkdir(p->backing, 0755) == -1)
		goto fail_errno;
	ret = start_daemon(p, extra_opts);
	if (ret < 0)
		goto fail;
	return 0;

fail_errno:
	ret = -errno;
fail:
	pool_unmount(p);
	memset(p, 0, sizeof(*p));
	return ret;
}

int pool_mount(struct pool_fixture *p, const char *extra_opts)
{
	return mount_fixture(p, extra_opts, false);
}

int pool_mount_private(struct pool_fixture *p, const char *extra_opts)
{
	return mount_fixture(p, extra_opts, true);
}

int pool_remount(struct pool_fixture *p, const char *extra_opts)
{
	if (!p->root[0] || p->owner != getpid())
		return -EINVAL;
	if (p->daemon_pid > 0 || pool_path_is_mountpoint(p->mnt))
		return -EBUSY;
	return start_daemon(p, extra_opts);
}

int pool_kill_daemon(struct pool_fixture *p, int sig)
{
	return pool_kill_daemon_then(p, sig, NULL, NULL);
}

int pool_kill_daemon_then(struct pool_fixture *p, int sig,
			  void (*after_death)(struct pool_fixture *p, void *arg), void *arg)
{
	long long deadline;
	int status = 0;
	int r;

	if (p->daemon_pid <= 0)
		return -ESRCH;
	if (kill(p->daemon_pid, sig) == -1)
		return -errno;
	r = wait_bounded(p->daemon_pid, &status,
			 p->valgrind ? EXIT_TIMEOUT_VALGRIND_MS : EXIT_TIMEOUT_MS);
	if (r != 1) {
		diag("daemon %ld did not die from signal %d: SIGKILL", (long)p->daemon_pid, sig);
		kill(p->daemon_pid, SIGKILL);
		wait_bounded(p->daemon_pid, &status, KILL_TIMEOUT_MS);
		p->daemon_pid = 0;
		return -ETIMEDOUT;
	}
	p->daemon_pid = 0;
	p->exit_status = status;
	p->store[0] = '\0'; /* /proc/PID/fd of a dead daemon; store_dev stays for the test */
	if (after_death)
		after_death(p, arg);
	/* auto_unmount's helper takes the mount away once the daemon is gone */
	deadline = pool_now_ms() + MOUNT_TIMEOUT_MS;
	while (pool_path_is_mountpoint(p->mnt)) {
		if (pool_now_ms() >= deadline) {
			diag("%s still mounted after its daemon died", p->mnt);
			umount2(p->mnt, MNT_DETACH);
			p->mounted = 0;
			return -EBUSY;
		}
		pool_sleep_ms(10);
	}
	p->mounted = 0;
	return 0;
}

int pool_is_mounted(const struct pool_fixture *p)
{
	return p->mnt[0] && pool_path_is_mountpoint(p->mnt);
}

/* ---- unmount ---- */

static int check_backing_empty(struct pool_fixture *p)
{
	DIR *d = opendir(p->backing);
	struct dirent *e;
	int left = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		diag("backing dir %s still holds %s", p->backing, e->d_name);
		left++;
	}
	closedir(d);
	if (left) {
		remove_tree_contents(p->backing);
		return -ENOTEMPTY;
	}
	return 0;
}

int pool_unmount(struct pool_fixture *p)
{
	int ret = 0;
	int status = 0;
	int r;

#define KEEP_FIRST(e)                                                                              \
	do {                                                                                       \
		if (!ret)                                                                          \
			ret = (e);                                                                 \
	} while (0)

	if (!p->root[0] && p->daemon_pid <= 0)
		return 0;
	if (p->owner && p->owner != getpid())
		return -EPERM; /* a forked child never takes down its parent's pool */

	if (p->mnt[0] && pool_path_is_mountpoint(p->mnt)) {
		long long deadline = pool_now_ms() + UMOUNT_BUSY_MS;

		/* EBUSY while some process still has a file or cwd in the pool: give it a moment,
		 * then detach so the daemon can be stopped anyway, and say so. */
		while (umount2(p->mnt, 0) == -1) {
			if (errno == EINVAL || errno == ENOENT)
				break; /* already gone */
			if (errno != EBUSY || pool_now_ms() >= deadline) {
				diag("umount %s: %s; detaching", p->mnt, strerror(errno));
				KEEP_FIRST(errno == EBUSY ? -EBUSY : -errno);
				umount2(p->mnt, MNT_DETACH);
				break;
			}
			pool_sleep_ms(20);
		}
	}

	if (p->daemon_pid > 0) {
		r = wait_bounded(p->daemon_pid, &status,
				 p->valgrind ? EXIT_TIMEOUT_VALGRIND_MS : EXIT_TIMEOUT_MS);
		if (r == 0) {
			diag("daemon %ld did not exit after unmount: SIGTERM", (long)p->daemon_pid);
			KEEP_FIRST(-ETIMEDOUT);
			kill(p->daemon_pid, SIGTERM);
			r = wait_bounded(p->daemon_pid, &status, KILL_TIMEOUT_MS);
		}
		if (r == 0) {
			diag("daemon %ld ignores SIGTERM: SIGKILL", (long)p->daemon_pid);
			kill(p->daemon_pid, SIGKILL);
			r = wait_bounded(p->daemon_pid, &status, KILL_TIMEOUT_MS);
		}
		if (r == 1) {
			p->exit_status = status;
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
				if (WIFEXITED(status))
					diag("daemon exited with status %d", WEXITSTATUS(status));
				else
					diag("daemon died from signal %d", WTERMSIG(status));
				KEEP_FIRST(-ECHILD);
			}
		} else {
			diag("daemon %ld could not be reaped", (long)p->daemon_pid);
			KEEP_FIRST(r < 0 ? r : -ETIMEDOUT);
		}
		p->daemon_pid = 0;
	}

	/* A killed daemon leaves a dead mount behind (auto_unmount should catch it; be sure). */
	if (p->mnt[0] && pool_path_is_mountpoint(p->mnt))
		umount2(p->mnt, MNT_DETACH);

	if (p->backing[0] && p->mounted)
		KEEP_FIRST(check_backing_empty(p));
	/* The daemon is gone, so must its tmpfs be: nothing of ours maps or opens it any more. */
	p->store[0] = '\0';
	if (p->private_store && p->store_dev &&
	    (r = pool_wait_store_gone(p, EXIT_TIMEOUT_MS)) != 0 && r != -ENOSYS) {
		diag("the daemon's private tmpfs (dev %u:%u) outlived it: %s", major(p->store_dev),
		     minor(p->store_dev), strerror(-r));
		KEEP_FIRST(-ENOTEMPTY);
	}
	if (p->store_watch > 0)
		close(p->store_watch);
	p->store_watch = 0;

	if (ret || env_flag("POOLFS_SHOW_LOG"))
		pool_dump_log(p);

	if (p->root[0]) {
		remove_tree_contents(p->root);
		if (rmdir(p->root) == -1 && errno != ENOENT) {
			diag("cannot remove %s: %s", p->root, strerror(errno));
			KEEP_FIRST(-errno);
		}
	}
	live_del(p);
	p->root[0] = '\0';
	p->mnt[0] = '\0';
	p->backing[0] = '\0';
	p->log[0] = '\0';
	p->mounted = 0;
	return ret;
#undef KEEP_FIRST
}

int pool_daemon_marks(const struct pool_fixture *p)
{
	int fan[4], n = proc_find_fds(p->daemon_pid, "anon_inode:[fanotify]", fan, 4);
	char path[64], line[512];

	for (int i = 0; i < n; i++) {
		FILE *f;
		int marks = 0;

		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)p->daemon_pid, fan[i]);
		f = fopen(path, "re");
		if (!f)
			continue; /* closed meanwhile */
		while (fgets(line, sizeof(line), f))
			marks += strncmp(line, "fanotify ino:", 13) == 0;
		fclose(f);
		return marks;
	}
	return n < 0 ? n : -1;
}

int pool_wait_daemon_marks(const struct pool_fixture *p, int want, int timeout_ms)
{
	long long deadline = pool_now_ms() + timeout_ms;
	int have;

	while ((have = pool_daemon_marks(p)) != want) {
		if (have < -1)
			return have;
		if (pool_now_ms() >= deadline)
			return -ETIMEDOUT;
		pool_sleep_ms(5);
	}
	return 0;
}

int pool_daemon_alive(struct pool_fixture *p)
{
	int status;

	if (p->daemon_pid <= 0)
		return 0;
	return waitpid(p->daemon_pid, &status, WNOHANG) == 0;
}

/* ---- leftovers of a failed test ---- */

static int under_mount(const struct pool_fixture *p, const char *path)
{
	size_t n = strlen(p->mnt);

	return n && strncmp(path, p->mnt, n) == 0 &&
	       (path[n] == '/' || path[n] == '\0' || path[n] == ' ');
}

int pool_release_all(const struct pool_fixture *p)
{
	DIR *d;
	struct dirent *e;
	FILE *maps;
	char line[PATH_MAX + 256];
	int released = 0;

	if (!p->mnt[0])
		return 0;
	d = opendir("/proc/self/fd");
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char link[64], target[PATH_MAX];
		int fd = atoi(e->d_name);
		ssize_t n;

		if (e->d_name[0] == '.' || fd == dirfd(d))
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		if (under_mount(p, target)) {
			close(fd);
			released++;
		}
	}
	closedir(d);

	/* Collect first, unmap after: unmapping while reading maps would shift the listing. */
	maps = fopen("/proc/self/maps", "re");
	if (!maps)
		return -errno;
	{
		unsigned long starts[256], ends[256];
		int n = 0;

		while (n < 256 && fgets(line, sizeof(line), maps)) {
			unsigned long lo, hi;
			int off = 0;
			char *path;

			if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &off) < 2 || !off)
				continue;
			path = line + off;
			path[strcspn(path, "\n")] = '\0';
			if (under_mount(p, path)) {
				starts[n] = lo;
				ends[n] = hi;
				n++;
			}
		}
		fclose(maps);
		for (int i = 0; i < n; i++) {
			munmap((void *)starts[i], ends[i] - starts[i]);
			released++;
		}
	}
	return released;
}

/* ---- another user ---- */

/* In the child: drop to uid/gid for good and check that it took (saved ids included, so the
 * child cannot switch back to root half-way through). */
static int become(uid_t uid, gid_t gid)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	if (setgroups(0, NULL) == -1 || setresgid(gid, gid, gid) == -1 ||
	    setresuid(uid, uid, uid) == -1)
		return -errno;
	if (getresuid(&ru, &eu, &su) == -1 || getresgid(&rg, &eg, &sg) == -1)
		return -errno;
	if (ru != uid || eu != uid || su != uid || rg != gid || eg != gid || sg != gid)
		return -EPERM;
	return 0;
}

pid_t run_as_spawn(uid_t uid, gid_t gid, int (*fn)(void *), void *arg)
{
	pid_t parent = getpid();
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == -1)
		return -errno;
	if (pid == 0) {
		int r = become(uid, gid);

		if (r < 0) {
			fprintf(stderr, "# cannot become uid %d gid %d: %s\n", (int)uid, (int)gid,
				strerror(-r));
			_exit(RUN_AS_CRED_FAILED);
		}
		/* After the uid change (which clears it): do not outlive the test. */
		if (pool_die_with(parent, SIGKILL) < 0)
			_exit(RUN_AS_CRED_FAILED - 1);
		r = fn(arg);
		if (r < 0)
			r = -r;
		_exit(r >= RUN_AS_CRED_FAILED ? RUN_AS_CRED_FAILED - 1 : r);
	}
	return pid;
}

int run_as_user(uid_t uid, gid_t gid, int (*fn)(void *), void *arg)
{
	pid_t pid = run_as_spawn(uid, gid, fn, arg);

	return pid < 0 ? pid : run_as_reap(pid);
}

int run_as_reap(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			return -errno;
	if (WIFSIGNALED(status))
		return -EINTR;
	if (WEXITSTATUS(status) == RUN_AS_CRED_FAILED)
		return -EPERM;
	return WEXITSTATUS(status);
}
