/* bench_shm: the POSIX shared-memory rows of poolfs-bench (docs/devshm.md): what a pool mounted on
 * /dev/shm costs the libraries that use it (Python's multiprocessing and shared_memory, joblib,
 * loky, Open MPI).
 *   shm  shm_open(O_CREAT|O_EXCL) + ftruncate 1 MiB + mmap + a write to every page + munmap +
 *        close + shm_unlink
 *   sem  sem_open(O_CREAT|O_EXCL) + sem_close + sem_unlink
 * each timed over cfg.ncycles cycles with new names, as cycles per second.
 *
 * These are glibc's own calls, not a copy of the system calls they make. glibc works in /dev/shm
 * and nowhere else, so each measurement runs in a child process that enters a mount namespace of
 * its own (unshare(CLONE_NEWNS); without root, in a user namespace of its own too, its uid and gid
 * mapped to themselves), makes every mount in it private so that nothing propagates out, and binds
 * the target's folder on /dev/shm there. The machine's own /dev/shm is never touched: the bind
 * exists only in that namespace, which ends with the child, also when the child is killed. Why the
 * real calls: the rows then time what unmodified programs do, including what glibc does in between
 * (sem_open's temporary file sem.XXXXXX, its write and mmap, the link() to sem.NAME and the unlink
 * of the temporary name), and they stay right when glibc changes how it does it.
 *
 * The cycle ends with its own unlink, on every target alike: the pools of scripts/bench's shm
 * section are mounted as /dev/shm would be (autohold=session), not with autohold=none.
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SHM_DIR "/dev/shm"
#define SHM_SIZE (1UL << 20)
#define PAGE 4096

/* What a child sends back: 0 and the cycles' time, or -errno and the call that failed. */
struct shm_msg {
	int ret;
	double secs;
	char what[96];
};

static int child_fail(struct shm_msg *m, const char *what, int err)
{
	m->ret = err;
	snprintf(m->what, sizeof(m->what), "%s", what);
	return err;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;
	size_t len = strlen(text);

	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		ret = -errno;
	close(fd);
	return ret;
}

/* A mount namespace of this process's own; without root (unshare refused), a user namespace with
 * it, where this process may mount, its ids mapped to themselves so that what it creates keeps
 * its owner. 0 or -errno. */
static int enter_namespace(struct shm_msg *m)
{
	uid_t uid = getuid();
	gid_t gid = getgid();
	char map[64];
	int ret;

	if (unshare(CLONE_NEWNS) == 0)
		return 0;
	if (errno != EPERM || uid == 0)
		return child_fail(m, "unshare(CLONE_NEWNS)", -errno);
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return child_fail(m, "unshare(CLONE_NEWUSER|CLONE_NEWNS) (no root)", -errno);
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	ret = write_file("/proc/self/uid_map", map);
	if (!ret)
		ret = write_file("/proc/self/setgroups", "deny\n");
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	if (!ret)
		ret = write_file("/proc/self/gid_map", map);
	return ret ? child_fail(m, "the user namespace's id maps", ret) : 0;
}

/* In a namespace of its own: every mount private (first, or the bind below would propagate to
 * the machine's /dev/shm where it is a shared mount), then dir bound on /dev/shm, and checked to
 * be what /dev/shm now is. 0 or -errno. */
static int bind_on_dev_shm(const char *dir, struct shm_msg *m)
{
	struct stat want, got;
	int ret = enter_namespace(m);

	if (ret)
		return ret;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return child_fail(m, "making the namespace's mounts private", -errno);
	if (stat(dir, &want) < 0)
		return child_fail(m, "stat of the target", -errno);
	if (mount(dir, SHM_DIR, NULL, MS_BIND, NULL) < 0)
		return child_fail(m, "bind on " SHM_DIR " in the private namespace", -errno);
	if (stat(SHM_DIR, &got) < 0)
		return child_fail(m, "stat " SHM_DIR, -errno);
	if (got.st_dev != want.st_dev || got.st_ino != want.st_ino)
		return child_fail(m, SHM_DIR " is not the target after the bind", -EXDEV);
	return 0;
}

/* One shm cycle on name. 0 or -errno (m says which call). */
static int shm_cycle(const char *name, struct shm_msg *m)
{
	unsigned char *p;
	int fd, ret = 0;

	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return child_fail(m, "shm_open", -errno);
	if (ftruncate(fd, (off_t)SHM_SIZE) < 0) {
		ret = child_fail(m, "ftruncate", -errno);
		goto out;
	}
	p = mmap(NULL, SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		ret = child_fail(m, "mmap", -errno);
		goto out;
	}
	for (size_t off = 0; off < SHM_SIZE; off += PAGE)
		p[off] = (unsigned char)(off / PAGE + 1);
	if (munmap(p, SHM_SIZE) < 0)
		ret = child_fail(m, "munmap", -errno);
out:
	if (close(fd) < 0 && !ret)
		ret = child_fail(m, "close", -errno);
	if (shm_unlink(name) < 0 && !ret)
		ret = child_fail(m, "shm_unlink", -errno);
	return ret;
}

/* One semaphore cycle on name. 0 or -errno (m says which call). */
static int sem_cycle(const char *name, struct shm_msg *m)
{
	sem_t *s = sem_open(name, O_CREAT | O_EXCL, 0600, 1);

	if (s == SEM_FAILED)
		return child_fail(m, "sem_open (it makes sem.XXXXXX, then link()s it to sem.NAME)",
				  -errno);
	if (sem_close(s) < 0) {
		child_fail(m, "sem_close", -errno);
		sem_unlink(name);
		return m->ret;
	}
	if (sem_unlink(name) < 0)
		return child_fail(m, "sem_unlink", -errno);
	return 0;
}

/* The child: the namespace, then ncycles cycles timed. */
static void run_cycles(const struct bench_cfg *c, const char *dir, int sem, struct shm_msg *m)
{
	char name[NAME_MAX];
	double t0;

	if (bind_on_dev_shm(dir, m))
		return;
	t0 = now_s();
	for (unsigned i = 0; i < c->ncycles; i++) {
		snprintf(name, sizeof(name), "/poolfs-bench-%s-%ld-%u", sem ? "sem" : "shm",
			 (long)getpid(), i);
		if (sem ? sem_cycle(name, m) : shm_cycle(name, m))
			return;
	}
	m->secs = now_s() - t0;
	m->ret = 0;
}

struct cycles_args {
	const struct bench_cfg *c;
	const char *dir;
	int sem;
};

static void cycles_child(void *arg, void *msg)
{
	const struct cycles_args *a = arg;
	struct shm_msg *m = msg;

	snprintf(m->what, sizeof(m->what), "the child process");
	run_cycles(a->c, a->dir, a->sem, m);
}

static int t_cycles(const struct bench_cfg *c, struct bench_target *t, unsigned rep, int sem)
{
	const char *test = sem ? "sem" : "shm";
	struct cycles_args args = {.c = c, .dir = t->dir, .sem = sem};
	struct shm_msg m = {.ret = -EIO};
	int ret = run_in_child(cycles_child, &args, &m, sizeof(m));

	if (ret == -ECHILD)
		m = (struct shm_msg){.ret = -ECHILD, .what = "the child process"};
	else if (ret)
		return ret;
	if (m.ret) {
		fprintf(stderr, "poolfs-bench: %s on %s: %s: %s\n", test, t->name, m.what,
			strerror(-m.ret));
		return m.ret;
	}
	t->res.v[sem ? M_SEM : M_SHM][rep] = c->ncycles / m.secs;
	return 0;
}

int t_shm(const struct bench_cfg *c, struct bench_target *t, unsigned rep)
{
	return t_cycles(c, t, rep, 0);
}

int t_sem(const struct bench_cfg *c, struct bench_target *t, unsigned rep)
{
	return t_cycles(c, t, rep, 1);
}
