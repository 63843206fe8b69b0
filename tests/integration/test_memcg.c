/* Who pays for pool memory (docs/decisions.md "Who pays for pool memory"), the way a site runs
 * jobs: each in a memory cgroup with a limit. A job limited to 64 MiB that writes 256 MiB into a
 * pool file is stopped by its own cgroup's OOM killer, as on tmpfs, the daemon lives on, and the
 * daemon's memory cgroup does not grow by the data; a job within its limit finds the pages it made
 * charged to its own cgroup. Both ways a program makes data: write(2), and ftruncate(2) + stores
 * through a shared mapping. Each over-the-limit row runs on tmpfs first (the test's temporary
 * folder under /dev/shm): what the pool must match, and proof that the limit holds at all.
 *
 * The test makes its memory cgroups itself, named with its pid: cgroup v1's memory hierarchy, or
 * v2's where the memory controller is there (the same code), and removes them in the teardown,
 * also after a failure. The daemon goes into a cgroup of its own for the test, so that what it is
 * charged can be read apart from everything else the test process does. */
#include "itest.h"

#include <stdbool.h>
#include <sys/mman.h>

/* How long the daemon's idle charger stays: fs/memcg.h's MEMCG_IDLE_MS. */
#define CHARGER_IDLE_MS 1000

#define LIMIT (64L << 20)
#define BIG (256L << 20)
#define SMALL (24L << 20)
#define CHUNK (1L << 20)
/* What the daemon's cgroup's shmem (tmpfs pages: the data's kind, not its own buffers, which
 * grow with its threads) may grow by while a job makes BIG or SMALL bytes. */
#define DAEMON_SLACK (4L << 20)

/* The test's cgroups, kept where the teardown finds them. */
static struct {
	char root[PATH_MAX]; /* the memory hierarchy's mount point */
	bool v1;
	char job[PATH_MAX];	    /* the job's cgroup (absolute), "" until made */
	char daemon[PATH_MAX];	    /* the daemon's for the test, "" until made */
	char daemon_home[PATH_MAX]; /* where the daemon was (absolute) */
	pid_t daemon_pid;
} cg;

static bool has_word(const char *list, const char *want, char sep)
{
	size_t n = strlen(want);

	for (const char *s = list; s && *s; s = strchr(s, sep)) {
		if (*s == sep)
			s++;
		if (strncmp(s, want, n) == 0 && (s[n] == sep || s[n] == '\0' || s[n] == '\n'))
			return true;
	}
	return false;
}

/* The memory hierarchy: a v1 "cgroup" mount with the memory option, else the cgroup2 mount if
 * its root offers the memory controller. */
static int find_hierarchy(void)
{
	char line[4096], v2[PATH_MAX] = "";
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], fstype[64], opts[512];
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(dash, " - %63s %*s %511s", fstype, opts) != 2 ||
		    sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		if (strcmp(fstype, "cgroup") == 0 && has_word(opts, "memory", ',')) {
			snprintf(cg.root, sizeof(cg.root), "%s", mnt);
			cg.v1 = true;
			fclose(f);
			return 0;
		}
		if (strcmp(fstype, "cgroup2") == 0 && !v2[0])
			snprintf(v2, sizeof(v2), "%s", mnt);
	}
	fclose(f);
	if (v2[0]) {
		char path[PATH_MAX + 32], *ctl;

		snprintf(path, sizeof(path), "%s/cgroup.controllers", v2);
		ctl = pool_read_text(path);
		if (ctl && has_word(ctl, "memory", ' ')) {
			snprintf(cg.root, sizeof(cg.root), "%s", v2);
			cg.v1 = false;
		}
		free(ctl);
	}
	return cg.root[0] ? 0 : -ENOENT;
}

static int write_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX * 2];
	int fd, r = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		r = -errno;
	close(fd);
	return r;
}

/* A number from a cgroup file: the whole file, or the value after `key` on its line. */
static long long read_number(const char *dir, const char *name, const char *key)
{
	char path[PATH_MAX * 2], *text, *at;
	long long v = -1;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	text = pool_read_text(path);
	if (!text)
		fail_msg("cannot read %s: %s", path, errname(errno));
	at = text;
	if (key) {
		size_t n = strlen(key);
		for (at = text; at; at = strchr(at, '\n')) {
			if (*at == '\n')
				at++;
			if (strncmp(at, key, n) == 0 && at[n] == ' ')
				break;
		}
		at = at ? at + strlen(key) : NULL;
	}
	if (!at || sscanf(at, "%lld", &v) != 1)
		fail_msg("no number for %s in %s", key ? key : "the value", path);
	free(text);
	return v;
}

/* The tmpfs pages charged to a cgroup (and those below it). */
static long long shmem_of(const char *dir)
{
	return read_number(dir, "memory.stat", cg.v1 ? "total_shmem" : "shmem");
}

static long long oom_kills_of(const char *dir)
{
	return read_number(dir, cg.v1 ? "memory.oom_control" : "memory.events", "oom_kill");
}

/* mkdir a cgroup `<root>/poolfs-memcg-<pid>-<what>` into out. */
static void make_group(char *out, const char *what)
{
	if (snprintf(out, PATH_MAX, "%.3000s/poolfs-memcg-%d-%s", cg.root, (int)getpid(), what) >=
	    PATH_MAX)
		fail_msg("cgroup path too long");
	if (mkdir(out, 0755) < 0 && errno != EEXIST) {
		int e = errno;
		out[0] = '\0';
		fail_msg("mkdir cgroup: %s", errname(e));
	}
}

static void move_pid(const char *dir, pid_t pid)
{
	char text[32];

	snprintf(text, sizeof(text), "%d", (int)pid);
	CHECK_0(write_file(dir, "cgroup.procs", text));
}

/* The daemon's memory cgroup (absolute) from /proc/PID/cgroup. */
static void home_of(pid_t pid, char *out)
{
	char path[64], *text, *line;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	text = pool_read_text(path);
	assert_non_null(text);
	for (line = text; line; line = strchr(line, '\n')) {
		char *ctl, *rel;
		if (*line == '\n')
			line++;
		ctl = strchr(line, ':');
		if (!ctl)
			continue;
		rel = strchr(++ctl, ':');
		if (!rel)
			continue;
		*rel++ = '\0';
		if (cg.v1 ? has_word(ctl, "memory", ',') : (strncmp(line, "0:", 2) == 0 && !*ctl)) {
			char *nl = strchr(rel, '\n');
			if (nl)
				*nl = '\0';
			snprintf(out, PATH_MAX, "%s%s", cg.root, rel);
			free(text);
			return;
		}
		rel[-1] = ':';
	}
	free(text);
	fail_msg("no memory cgroup line for pid %d", (int)pid);
}

/* The job's cgroup (made again if it was removed) with its limit. */
static void make_job_group(void)
{
	char limit[32];

	make_group(cg.job, "job");
	snprintf(limit, sizeof(limit), "%ld", LIMIT);
	CHECK_0(write_file(cg.job, cg.v1 ? "memory.limit_in_bytes" : "memory.max", limit));
	/* Pages must stay in memory for the limit to bite: no swap for the job. */
	if (cg.v1)
		(void)write_file(cg.job, "memory.swappiness", "0");
	else
		(void)write_file(cg.job, "memory.swap.max", "0");
}

static void make_groups(const struct pool_fixture *p)
{
	if (!cg.v1) /* v2: children get the controller only where the parent hands it down */
		(void)write_file(cg.root, "cgroup.subtree_control", "+memory");
	make_job_group();
	make_group(cg.daemon, "daemon");
	home_of(p->daemon_pid, cg.daemon_home);
	cg.daemon_pid = p->daemon_pid;
	move_pid(cg.daemon, p->daemon_pid);
}

/* rmdir of a cgroup, waiting a while if it is busy (a failed test may leave a process in it). */
static int remove_group(const char *dir)
{
	for (int waited = 0; rmdir(dir) < 0; waited += 50) {
		if (errno != EBUSY || waited >= CHARGER_IDLE_MS + 5000)
			return -errno;
		usleep(50 * 1000);
	}
	return 0;
}

/* Undo make_groups, whatever part of it was done: the daemon home, the job's processes killed
 * (none should be left), the cgroups removed. */
static void remove_groups(void)
{
	if (cg.daemon_pid > 0 && cg.daemon_home[0] && kill(cg.daemon_pid, 0) == 0) {
		char text[32];
		snprintf(text, sizeof(text), "%d", (int)cg.daemon_pid);
		if (write_file(cg.daemon_home, "cgroup.procs", text) < 0)
			fprintf(stderr, "# could not move the daemon back to %s\n", cg.daemon_home);
	}
	cg.daemon_pid = 0;
	tu_kill_children();
	for (int i = 0; i < 2; i++) {
		char *dir = i ? cg.daemon : cg.job;
		int r = dir[0] ? remove_group(dir) : 0;
		if (r < 0 && r != -ENOENT)
			fprintf(stderr, "# rmdir %s: %s\n", dir, errname(-r));
		dir[0] = '\0';
	}
}

static int setup(void **state)
{
	return tu_setup(state, "autohold=none");
}

/* With max_user_size each user's files live in a tmpfs of the user's own (per-user stores). */
static int setup_per_user(void **state)
{
	return tu_setup(state, "autohold=none,max_user_size=1G");
}

/* The pool first: its daemon ends its chargers (fs/memcg.h), so the job's cgroup can go even
 * after a failed test left one in it. */
static int teardown(void **state)
{
	int r = tu_teardown(state);

	remove_groups();
	return r;
}

enum how { BY_WRITE, BY_MAPPING };

struct job {
	const char *path;
	enum how how;
	long bytes;
};

/* In the child: join the job's cgroup and make j->bytes of data in j->path. 0 if all of it was
 * made, else the errno of the call that failed (an OOM kill ends it with SIGKILL instead). */
static int job_main(void *arg)
{
	const struct job *j = arg;
	char *buf;
	int fd;

	if (write_file(cg.job, "cgroup.procs", "0") < 0)
		return 250;
	fd = open(j->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return errno;
	if (j->how == BY_MAPPING) {
		if (ftruncate(fd, j->bytes) < 0)
			return errno;
		buf = mmap(NULL, (size_t)j->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (buf == MAP_FAILED)
			return errno;
		memset(buf, 0x5a, (size_t)j->bytes);
		munmap(buf, (size_t)j->bytes);
	} else {
		buf = malloc(CHUNK);
		if (!buf)
			return ENOMEM;
		memset(buf, 0x5a, CHUNK);
		for (long done = 0; done < j->bytes; done += CHUNK) {
			if (write(fd, buf, CHUNK) != CHUNK) {
				int e = errno ? errno : EIO;
				free(buf);
				return e;
			}
		}
		free(buf);
	}
	return close(fd) < 0 ? errno : 0;
}

/* Run a job; its end: exit code or 128 + signal. */
static int run_job(const char *path, enum how how, long bytes)
{
	struct job j = {path, how, bytes};

	return tu_reap(tu_spawn(job_main, &j), 120000);
}

/* A job over its limit is stopped by its cgroup's OOM killer: killed (tmpfs, and a pool's
 * passthrough write()), or, where the daemon allocates for it, refused with EDQUOT by the call
 * that grows the file (the allocation the daemon made for it was the OOM killer's pick). */
static void assert_stopped(const char *where, const char *path, enum how how, bool may_refuse)
{
	long long kills = oom_kills_of(cg.job);
	int end = run_job(path, how, BIG);

	if (end != 128 + SIGKILL && !(may_refuse && end == EDQUOT))
		fail_msg("%s, %s: a job limited to %ld MiB making %ld MiB ended with %d (%s), "
			 "neither killed%s",
			 where, how == BY_WRITE ? "write()" : "ftruncate + mmap", LIMIT >> 20,
			 BIG >> 20, end, end > 0 && end < 128 ? errname(end) : "-",
			 may_refuse ? " nor refused with EDQUOT" : "");
	if (oom_kills_of(cg.job) <= kills)
		fail_msg("%s: the job was stopped (%d), but not by its cgroup's OOM killer", where,
			 end);
	fprintf(stderr, "# %s, %s: %s\n", where, how == BY_WRITE ? "write()" : "ftruncate + mmap",
		end == EDQUOT ? "refused with EDQUOT" : "OOM-killed");
}

static void over_the_limit(void **state, enum how how)
{
	struct pool_fixture *p = tu_pool(state);
	char tmpfs_file[PATH_MAX + 16];
	long long daemon_before;
	PATH(pool_file, p, "big");

	make_groups(p);
	snprintf(tmpfs_file, sizeof(tmpfs_file), "%s/on-tmpfs", p->root);
	assert_stopped("tmpfs", tmpfs_file, how, false);
	CHECK(unlink(tmpfs_file));

	daemon_before = shmem_of(cg.daemon);
	assert_stopped("pool", pool_file, how, true);
	assert_true(pool_daemon_alive(p));
	if (shmem_of(cg.daemon) > daemon_before + DAEMON_SLACK)
		fail_msg("the daemon's cgroup's tmpfs pages grew from %lld to %lld bytes: it paid "
			 "for the job's data",
			 daemon_before, shmem_of(cg.daemon));
	/* Nothing else kept the job's file: it went with the job, as every pool file does. */
	ASSERT_GONE(pool_file);
}

static void test_write_over_the_limit_is_oom_killed(void **state)
{
	over_the_limit(state, BY_WRITE);
}

static void test_mapping_over_the_limit_is_oom_killed(void **state)
{
	over_the_limit(state, BY_MAPPING);
}

/* A job making SMALL bytes in `pool_file` finishes, and the pages it made are its cgroup's:
 * the job's cgroup holds them after the job has ended (the file still has them), the daemon's
 * does not. */
static void assert_charged_to_the_job(const char *pool_file, enum how how)
{
	long long daemon_before, job_before;
	int end, keep;

	/* Our descriptor keeps the file, and so its pages, after the job has ended. */
	CHECK(keep = open(pool_file, O_RDWR | O_CREAT, 0600));
	daemon_before = shmem_of(cg.daemon);
	job_before = shmem_of(cg.job);
	end = run_job(pool_file, how, SMALL);
	if (end != 0)
		fail_msg("a job making %ld MiB within its %ld MiB limit ended with %d", SMALL >> 20,
			 LIMIT >> 20, end);
	if (shmem_of(cg.job) < job_before + SMALL)
		fail_msg("the job's cgroup holds %lld bytes of tmpfs pages after it made %ld MiB "
			 "in the pool: someone else pays",
			 shmem_of(cg.job), SMALL >> 20);
	if (shmem_of(cg.daemon) > daemon_before + DAEMON_SLACK)
		fail_msg("the daemon's cgroup's tmpfs pages grew from %lld to %lld bytes",
			 daemon_before, shmem_of(cg.daemon));
	CHECK(close(keep));
	ASSERT_GONE(pool_file);
}

static void within_the_limit(void **state, enum how how)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(pool_file, p, "small");

	make_groups(p);
	assert_charged_to_the_job(pool_file, how);
}

static void test_write_within_the_limit_is_charged_to_the_job(void **state)
{
	within_the_limit(state, BY_WRITE);
}

static void test_mapping_within_the_limit_is_charged_to_the_job(void **state)
{
	within_the_limit(state, BY_MAPPING);
}

/* The parent of process `pid`, -1 if it is gone. */
static long long ppid_of(int pid)
{
	char path[64], *text, *at;
	long long ppid = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	text = pool_read_text(path);
	if (!text)
		return -1;
	at = strstr(text, "\nPPid:");
	if (!at || sscanf(at + 6, "%lld", &ppid) != 1)
		ppid = -1;
	free(text);
	return ppid;
}

/* The processes in cgroup `dir`, where the job has ended: none may be other than the daemon's
 * children (chargers, fs/memcg.h); how many of those. */
static int chargers_in(const char *dir, pid_t daemon)
{
	char path[PATH_MAX * 2], *text, *line;
	int count = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	text = pool_read_text(path);
	if (!text)
		fail_msg("cannot read %s: %s", path, errname(errno));
	for (line = text; line && *line;
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		long long ppid;
		int pid = atoi(line);

		if (pid <= 0)
			continue;
		ppid = ppid_of(pid);
		if (ppid >= 0 && ppid != daemon)
			fail_msg("process %d (parent %lld) is in the ended job's cgroup", pid,
				 ppid);
		count += ppid >= 0;
	}
	free(text);
	return count;
}

/* The daemon's allocations for a job run in a charger (fs/memcg.h) that joins the job's cgroup
 * for each and goes back to the daemon's before it answers: once a job has ended its cgroup holds
 * no process, and can be removed at once, as Slurm's cgroup v1 plugin does without retrying when
 * it finds one. Three jobs in a row, the cgroup checked after each. */
static void test_charger_leaves_the_job_cgroup(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	int n;
	PATH(pool_file, p, "burst");

	make_groups(p);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(run_job(pool_file, BY_MAPPING, SMALL), 0);
		ASSERT_GONE(pool_file);
		n = chargers_in(cg.job, p->daemon_pid);
		if (n != 0)
			fail_msg("after job %d, %d processes of the daemon are in the job's cgroup",
				 i + 1, n);
	}
	if (rmdir(cg.job) < 0)
		fail_msg("the ended job's cgroup cannot be removed: %s", errname(errno));
	cg.job[0] = '\0';
}

/* A job's cgroup removed and made again under the same name (a scheduler reusing a name): the
 * next job there is charged in the new one, not the daemon. The daemon's charger for that name
 * still holds the old one (fs/memcg.h: it moved back home, and waits for the next request). */
static void test_cgroup_made_again_is_charged(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	PATH(pool_file, p, "again");

	make_groups(p);
	assert_int_equal(run_job(pool_file, BY_MAPPING, SMALL), 0);
	ASSERT_GONE(pool_file);
	CHECK(rmdir(cg.job));
	make_job_group();
	assert_charged_to_the_job(pool_file, BY_MAPPING);
}

/* A full pool still refuses at the ftruncate that grows a file, for a job in a cgroup with room
 * to spare: the pool's own limit answers (ENOSPC), not the job's, and never a SIGBUS later. */
static int setup_full(void **state)
{
	return tu_setup(state, "autohold=none,max_size=16M");
}

static void test_full_pool_refuses_at_the_ftruncate(void **state)
{
	struct pool_fixture *p = tu_pool(state);
	int end;
	PATH(pool_file, p, "too-big");

	make_groups(p);
	end = run_job(pool_file, BY_MAPPING, 32L << 20);
	if (end != ENOSPC)
		fail_msg(
			"a 32 MiB file in a 16 MiB pool, by a job limited to %ld MiB: ended with %d "
			"(%s), not ENOSPC at its ftruncate",
			LIMIT >> 20, end, end > 0 && end < 128 ? errname(end) : "-");
	/* What fits is made. */
	assert_int_equal(run_job(pool_file, BY_MAPPING, 8L << 20), 0);
	ASSERT_GONE(pool_file);
}

/* The same with per-user stores (setup_per_user). */
static void test_per_user_write_over_the_limit_is_oom_killed(void **state)
{
	over_the_limit(state, BY_WRITE);
}

static void test_per_user_mapping_over_the_limit_is_oom_killed(void **state)
{
	over_the_limit(state, BY_MAPPING);
}

static void test_per_user_mapping_within_the_limit_is_charged(void **state)
{
	within_the_limit(state, BY_MAPPING);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write_over_the_limit_is_oom_killed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_mapping_over_the_limit_is_oom_killed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_per_user_write_over_the_limit_is_oom_killed,
						setup_per_user, teardown),
		cmocka_unit_test_setup_teardown(test_per_user_mapping_over_the_limit_is_oom_killed,
						setup_per_user, teardown),
		cmocka_unit_test_setup_teardown(test_per_user_mapping_within_the_limit_is_charged,
						setup_per_user, teardown),
		cmocka_unit_test_setup_teardown(test_charger_leaves_the_job_cgroup, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cgroup_made_again_is_charged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_pool_refuses_at_the_ftruncate, setup_full,
						teardown),
		cmocka_unit_test_setup_teardown(test_write_within_the_limit_is_charged_to_the_job,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_mapping_within_the_limit_is_charged_to_the_job,
						setup, teardown),
	};

	if (geteuid() != 0)
		return tu_skip_all("making memory cgroups needs root");
	if (find_hierarchy() < 0)
		return tu_skip_all("no memory cgroup controller mounted");
	return ITEST_RUN(tests);
}
