/* poolctl env: parses its options, creates and holds the job folder (mkdir with a fresh uuid,
 * then poolfs_hold; the folder is removed again if the hold fails) and prints the lines from
 * env_text.c. */
#include "poolctl_env.h"

#include "cli_text.h"
#include "env_text.h"
#include "poolfs.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uuid/uuid.h>

enum { ENV_OK = 0, ENV_FAILED = 1, ENV_USAGE = 2 };

/* How many fresh uuids to try before giving up on EEXIST (a clash is practically impossible). */
#define ENV_TRIES 16

struct env_args {
	enum poolfs_scope scope;
	pid_t pid;
	int nscopes;
	const char *pool;
};

/* `what` is the message; `arg`, if not NULL, is quoted after it. */
static int env_usage(const char *what, const char *arg)
{
	if (arg)
		fprintf(stderr, "poolctl: env: %s '%s'\n", what, arg);
	else
		fprintf(stderr, "poolctl: env: %s\n", what);
	fprintf(stderr, "Try 'poolctl help env'.\n");
	return ENV_USAGE;
}

/* One option at argv[*i]: 0 consumed, or an exit status (usage error reported; ENV_OK for help). */
static int env_option(int argc, char **argv, int *i, struct env_args *a, bool *done)
{
	const char *o = argv[*i], *v = NULL;

	if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
		printf("usage: poolctl %s\n\n%s", POOLCTL_ENV_SYNOPSIS, POOLCTL_ENV_HELP);
		*done = true;
		return ENV_OK;
	}
	if (strcmp(o, "--session") == 0) {
		a->scope = POOLFS_SCOPE_SESSION;
	} else if (strcmp(o, "--pin") == 0) {
		a->scope = POOLFS_SCOPE_PIN;
	} else if (strcmp(o, "--cgroup") == 0) {
		a->scope = POOLFS_SCOPE_CGROUP;
	} else if (strcmp(o, "--pid") == 0 || strncmp(o, "--pid=", 6) == 0) {
		if (o[5] == '=')
			v = o + 6;
		else if (*i + 1 < argc)
			v = argv[++*i];
		else
			return env_usage("--pid needs a value", NULL);
		if (!cli_parse_pid(v, &a->pid))
			return env_usage("--pid needs a positive process id, not", v);
		a->scope = POOLFS_SCOPE_PID;
	} else {
		return env_usage("unknown option", o);
	}
	if (++a->nscopes > 1)
		return env_usage("give only one of --session, --pin, --cgroup, --pid N", NULL);
	return 0;
}

/* Fill `a` from argv; returns -1 to go on, or an exit status. */
static int env_parse(int argc, char **argv, struct env_args *a)
{
	bool done = false;
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (argv[i][0] != '-' || argv[i][1] == '\0')
			break;
		int r = env_option(argc, argv, &i, a, &done);
		if (r != 0 || done)
			return r;
	}
	if (argc - i > 1)
		return env_usage("give at most one POOL", NULL);
	const char *env = getenv("POOLFS_POOL");
	if (i < argc)
		a->pool = argv[i];
	else if (env && env[0])
		a->pool = env;
	else
		a->pool = "/pool";
	return -1;
}

/* mkdir POOL/PREFIX<uuid> and hold it; the absolute path goes to `out` (PATH_MAX bytes), because
 * the job may change directory and tools such as Open MPI take only absolute paths. 0 or -errno. */
static int make_job_folder(const struct env_args *a, const char *prefix, char *out)
{
	char id[37], pool[PATH_MAX], root[PATH_MAX];
	int r;

	/* Nothing is created outside a pool, not even for a moment. */
	if ((r = poolfs_pool_root(a->pool, root, sizeof root)) < 0)
		return r;
	if (!realpath(a->pool, pool))
		return -errno;

	for (int t = 0;; t++) {
		uuid_t u;
		if (t == ENV_TRIES)
			return -EEXIST;
		uuid_generate_random(u);
		uuid_unparse_lower(u, id);
		if (snprintf(out, PATH_MAX, "%s/%s%s", pool, prefix, id) >= PATH_MAX)
			return -ENAMETOOLONG;
		if (mkdir(out, 0700) == 0)
			break;
		if (errno != EEXIST)
			return -errno;
	}
	if ((r = poolfs_hold(out, a->scope, a->pid)) < 0) {
		/* Empty and unheld: remove it so a failed call leaves nothing behind. */
		if (rmdir(out) < 0 && errno != ENOENT)
			fprintf(stderr,
				"poolctl: env: %s: cannot remove after the failed hold: %s\n", out,
				strerror(errno));
		return r;
	}
	return 0;
}

static const char *hold_reason(int err)
{
	switch (err) {
	case ENOTSUP:
		return "not a poolfs pool";
	case ENOPROTOOPT:
		return "the pool cannot watch this hold scope here (try --pid N or --pin)";
	case ESRCH:
		return "no such process";
	default:
		return strerror(err);
	}
}

int poolctl_env(int argc, char **argv)
{
	struct env_args a = {POOLFS_SCOPE_SESSION, 0, 0, NULL};
	char prefix[64], path[PATH_MAX], out[3 * (4 * PATH_MAX + 64)];
	const char *jobid = getenv("SLURM_JOB_ID");
	int r = env_parse(argc, argv, &a);

	if (r >= 0)
		return r;
	if (env_folder_prefix(jobid, prefix, sizeof prefix) < 0) {
		fprintf(stderr, "poolctl: env: SLURM_JOB_ID='%s' is not a job id (digits only)\n",
			jobid);
		return ENV_USAGE;
	}
	if ((r = make_job_folder(&a, prefix, path)) < 0) {
		fprintf(stderr, "poolctl: env: %s: %s\n", a.pool, hold_reason(-r));
		return ENV_FAILED;
	}
	if ((r = env_format(path, out, sizeof out)) < 0) {
		fprintf(stderr, "poolctl: env: %s: %s\n", path, strerror(-r));
		if ((r = poolfs_release(path)) < 0)
			fprintf(stderr, "poolctl: env: %s: cannot release: %s\n", path,
				strerror(-r));
		return ENV_FAILED;
	}
	fputs(out, stdout);
	return ENV_OK;
}
