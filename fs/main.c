/* main: command line -> pool -> mount -> request loop -> clean unmount.
 *
 * Exit status: 0 after a clean unmount, 1 on a runtime failure, 2 on bad usage or options,
 * 3 when the requested data path is not available here. */
#include <errno.h>
#include <fuse_lowlevel.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "datapath.h"
#include "log.h"
#include "notify.h"
#include "ops.h"
#include "options.h"
#include "pool.h"
#include "watch.h"

#define EXIT_USAGE 2
#define EXIT_NO_DATAPATH 3

struct parse_state {
	struct pool_options *opts;
	int error;
};

static int parse_opt(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct parse_state *st = data;
	const char *why = NULL;
	int r;

	(void)outargs;
	if (key != FUSE_OPT_KEY_OPT)
		return 1;
	r = options_apply(st->opts, arg, &why);
	if (r < 0) {
		fprintf(stderr, "poolfs: bad option '%s': %s\n", arg, why ? why : strerror(-r));
		st->error = r;
		return -1;
	}
	return r == 1 ? 0 : 1; /* ours: consumed; not ours: on to FUSE */
}

static void usage(const char *prog)
{
	printf("usage: %s [-f] [-d] [-s] [-o opt[,opt...]] MOUNTPOINT\n\n"
	       "A pool of files that vanish when nothing uses them (see README.md).\n\n"
	       "pool options:\n"
	       "    -o backing=DIR          tmpfs directory for the data (default: as root a private\n"
	       "                            tmpfs instance, else /dev/shm)\n"
	       "    -o huge=MODE            never|within_size|always|advise: huge pages of the private\n"
	       "                            tmpfs (default within_size)\n"
	       "    -o datapath=MODE        auto|passthrough|pagecache (default auto)\n"
	       "    -o autohold=SCOPE       none|process|session|cgroup (default session)\n"
	       "    -o linger=SECONDS       delay before an unused entry is removed (default 0)\n"
	       "    -o max_size=BYTES       pool quota, k/M/G/T suffixes (default none)\n"
	       "    -o max_user_size=BYTES  per-user quota (default none)\n"
	       "    -o root_exempt          let root access every user's entries\n"
	       "    -o allow_other          let other users use the pool (run as root)\n\n"
	       "FUSE options:\n",
	       prog);
	fuse_lowlevel_help();
}

#ifdef POOLFS_HAVE_PASSTHROUGH
/* Passthrough needs CAP_SYS_ADMIN to register backing files (FUSE_DEV_IOC_BACKING_OPEN). */
static bool have_cap_sys_admin(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	unsigned long long eff = 0;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return eff & (1ull << 21);
}
#endif

static void linger_fired(void *ctx, int fd)
{
	struct pool *p = ctx;
	uint64_t ticks;

	if (read(fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		log_warn("linger timer: %m");
	pool_lock(p);
	pool_linger_expire(p);
	pool_unlock(p);
}

static void raise_fd_limit(void)
{
	struct rlimit rl;

	/* The daemon holds one fd per open handle; the soft default of 1024 is far too few. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts cmd = {0};
	struct pool_options opts;
	struct parse_state ps = {.opts = &opts};
	struct fuse_session *se = NULL;
	struct notify *notify = NULL;
	struct fuse_loop_config *loop_cfg = NULL;
	struct pool *pool = NULL;
	const char *why = NULL;
	bool mounted = false, handlers = false;
	int ret = 1, r;

	options_init(&opts);
	if (fuse_opt_parse(&args, &ps, NULL, parse_opt) < 0) {
		ret = EXIT_USAGE;
		goto out;
	}
	if (fuse_parse_cmdline(&args, &cmd) != 0) {
		ret = EXIT_USAGE;
		goto out;
	}
	if (cmd.show_help) {
		usage(argv[0]);
		ret = 0;
		goto out;
	}
	if (cmd.show_version) {
		printf("poolfs %s (libfuse %s)\n", POOLFS_VERSION, fuse_pkgversion());
		ret = 0;
		goto out;
	}
	if (!cmd.mountpoint) {
		fprintf(stderr, "poolfs: no mountpoint given (try --help)\n");
		ret = EXIT_USAGE;
		goto out;
	}

	/* Data path feasibility that can be known before mounting. */
	if (opts.datapath == DATAPATH_PASSTHROUGH) {
#ifdef POOLFS_HAVE_PASSTHROUGH
		if (!have_cap_sys_admin())
			why = "passthrough needs CAP_SYS_ADMIN (run the daemon as root)";
		else if (opts.max_user_size)
			why = "max_user_size needs the page-cache path: passthrough writes that grow a "
			      "file never reach the daemon, so it could not refuse them with EDQUOT";
#else
		why = "this poolfs was built against libfuse < 3.17, which has no passthrough";
#endif
		if (why) {
			fprintf(stderr, "poolfs: datapath=passthrough is not supported here: %s\n", why);
			ret = EXIT_NO_DATAPATH;
			goto out;
		}
	}

	signal(SIGPIPE, SIG_IGN);
	/* A lease break (passthrough's mapping probe) raises SIGIO; it must never kill us. */
	signal(SIGIO, SIG_IGN);
	raise_fd_limit();

	pool = calloc(1, sizeof(*pool));
	if (!pool)
		goto out;
	r = pool_init(pool, &opts);
	if (r < 0) {
		fprintf(stderr, "poolfs: cannot set up the pool: %s\n", strerror(-r));
		goto out;
	}
	pool->dp = &datapath_pagecache;
#ifdef POOLFS_HAVE_PASSTHROUGH
	if (opts.datapath != DATAPATH_PAGECACHE && have_cap_sys_admin() && !opts.max_user_size)
		pool->dp = &datapath_passthrough; /* confirmed (or dropped, for auto) at INIT */
	else if (opts.datapath == DATAPATH_AUTO)
		log_info("datapath=auto: %s, using the page-cache path",
			 opts.max_user_size ? "max_user_size is set" : "no CAP_SYS_ADMIN");
#else
	if (opts.datapath == DATAPATH_AUTO)
		log_info("datapath=auto: built without passthrough (libfuse < 3.17), using the page-cache path");
#endif
	/* Other users can reach a pool mounted allow_other, and the kernel does not ask the daemon
	 * about cached names and attributes: so nothing is cached there and every access is
	 * checked here. A private pool is reachable by its owner only and may cache. */
	pool->entry_timeout = opts.allow_other ? 0.0 : 1.0;
	pool->attr_timeout = opts.allow_other ? 0.0 : 1.0;
	if (pool_find_cgroup2_root(pool->cgroup2_root, sizeof(pool->cgroup2_root)) < 0)
		pool->cgroup2_root[0] = '\0';

	if (fuse_opt_add_arg(&args, "-oauto_unmount") < 0 ||
	    fuse_opt_add_arg(&args, "-ofsname=poolfs") < 0 ||
	    fuse_opt_add_arg(&args, "-osubtype=poolfs") < 0)
		goto out;
	se = fuse_session_new(&args, &poolfs_ops, sizeof(poolfs_ops), pool);
	if (!se)
		goto out;
	pool->session = se;
	pool->mountpoint = cmd.mountpoint;
	if (fuse_set_signal_handlers(se) != 0)
		goto out;
	handlers = true;
	if (fuse_session_mount(se, cmd.mountpoint) != 0)
		goto out;
	mounted = true;
	if (fuse_daemonize(cmd.foreground) != 0)
		goto out;
	pool->daemon_pid = getpid();

	r = watch_start(&pool->watch);
	if (r == 0)
		r = watch_add(pool->watch, pool->linger_timer_fd, linger_fired, pool);
	if (r == 0)
		r = notify_start(&notify, se);
	if (r < 0) {
		log_error("cannot start helper threads: %s", strerror(-r));
		goto out;
	}
	pool->inval = notify_push;
	pool->inval_ctx = notify;

	if (cmd.singlethread) {
		r = fuse_session_loop(se);
	} else {
		loop_cfg = fuse_loop_cfg_create();
		if (!loop_cfg)
			goto out;
		fuse_loop_cfg_set_clone_fd(loop_cfg, cmd.clone_fd);
		fuse_loop_cfg_set_max_threads(loop_cfg, cmd.max_threads ? cmd.max_threads : 16);
		fuse_loop_cfg_set_idle_threads(loop_cfg, cmd.max_idle_threads);
		r = fuse_session_loop_mt(se, loop_cfg);
	}
	if (pool->init_error) {
		fprintf(stderr, "poolfs: %s\n", pool->init_error);
		ret = EXIT_NO_DATAPATH;
	} else {
		/* libfuse's signal handlers end the loop with the signal's number: SIGTERM, SIGINT
		 * and SIGHUP are how a supervisor asks for a clean unmount, not failures. */
		ret = (r == 0 || r == SIGTERM || r == SIGINT || r == SIGHUP) ? 0 : 1;
	}
out:
	if (mounted)
		fuse_session_unmount(se);
	if (pool && pool->watch) {
		watch_stop(pool->watch);
		pool->watch = NULL;
	}
	if (pool && pool->dp)
		pool->dp->stop(pool);
	notify_stop(notify);
	if (handlers)
		fuse_remove_signal_handlers(se);
	if (se)
		fuse_session_destroy(se);
	if (loop_cfg)
		fuse_loop_cfg_destroy(loop_cfg);
	if (pool) {
		pool_destroy(pool);
		free(pool);
	}
	free(cmd.mountpoint);
	fuse_opt_free_args(&args);
	if (ret == 0 && mounted)
		log_info("unmounted cleanly");
	return ret;
}
