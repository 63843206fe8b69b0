/* main: command line -> pool -> mount -> request loop -> clean unmount.
 *
 * Exit status: 0 after a clean unmount, 1 on a runtime failure, 2 on bad usage or options,
 * 3 when the requested data path or transport (uring=on) is not available here. */
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cgroup2.h"
#include "datapath.h"
#include "idle_halt.h"
#include "log.h"
#include "mountopts.h"
#include "notify.h"
#include "ops.h"
#include "options.h"
#include "pool_api.h"
#include "procfs.h"
#include "sdnotify.h"
#include "transport.h"
#include "unmount_guard.h"
#include "watch.h"

#define EXIT_USAGE 2
#define EXIT_NO_DATAPATH 3
/* How long a stopping notify thread may take before it counts as stuck (stop_notify). */
#define NOTIFY_STOP_MS 1000

struct parse_state {
	struct pool_options *opts;
	struct mount_extras *extras;
	const char *operands[2]; /* [SOURCE] MOUNTPOINT, as mount.fuse3 passes them */
	int noperands;
	int error;
};

static int parse_opt(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct parse_state *st = data;
	const char *why = NULL;
	int r;

	(void)outargs;
	if (key == FUSE_OPT_KEY_NONOPT) {
		if (st->noperands == 2) {
			fprintf(stderr,
				"poolfs: unexpected argument '%s' (usage: poolfs [SOURCE] "
				"MOUNTPOINT [-o OPTIONS])\n",
				arg);
			st->error = -EINVAL;
			return -1;
		}
		st->operands[st->noperands++] = arg;
		return 0; /* put back once we know which operand is the mountpoint */
	}
	if (key != FUSE_OPT_KEY_OPT)
		return 1;
	r = options_apply(st->opts, arg, &why);
	if (r == 0)
		r = mountopts_apply(st->extras, arg, &why);
	if (r < 0) {
		fprintf(stderr, "poolfs: bad option '%s': %s\n", arg, why ? why : strerror(-r));
		st->error = r;
		return -1;
	}
	return r == 1 ? 0
		      : 1; /* ours: consumed; not ours: on to FUSE, which refuses unknown ones */
}

static void usage(const char *prog)
{
	printf("usage: %s [-f] [-d] [-s] [-o opt[,opt...]] [SOURCE] MOUNTPOINT\n\n"
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
	       "    -o max_user_entries=N   files and folders per user (default 1M, 0: no limit)\n"
	       "    -o max_user_meta=BYTES  memory per user for xattrs and holds (default 64M, 0: none)\n"
	       "    -o uring=MODE           auto|on|off: FUSE over io_uring (default auto)\n"
	       "    -o root_exempt          let root access every user's entries\n"
	       "    -o allow_other          let other users use the pool (run as root)\n"
	       "    -o debug                trace every request (in the log when daemonized)\n"
	       "    -o log_socket=PATH      syslog socket when daemonized (default /dev/log)\n"
	       "SOURCE (e.g. 'poolfs', as mount.fuse3 passes it) is ignored, and so are the options\n"
	       "of mount helpers: defaults, auto, noauto, user, users, nouser, owner, group, nofail,\n"
	       "_netdev, rw, dev, suid, exec, x-*, comment=.\n\n"
	       "FUSE options:\n",
	       prog);
	fuse_lowlevel_help();
}

#ifdef POOLFS_HAVE_PASSTHROUGH
/* Passthrough needs CAP_SYS_ADMIN to register backing files (FUSE_DEV_IOC_BACKING_OPEN). */
static bool have_cap_sys_admin(void)
{
	unsigned long long eff = 0;

	return proc_cap_eff(getpid(), &eff) == 0 && (eff & (1ull << 21));
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
	pool_commit(p);
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

/* Everything main() sets up, so that one cleanup undoes whatever part of it was done. */
struct daemon {
	struct fuse_args args;
	struct fuse_cmdline_opts cmd;
	struct pool_options opts;
	struct mount_extras extras;
	struct fuse_session *se;
	struct notify *notify;
	struct fuse_loop_config *loop_cfg;
	struct pool *pool;
	bool mounted, handlers;
	dev_t dev; /* the mount's device (the FUSE connection's number is its minor), 0 if unknown */
	struct unmount_guard_sockets sockets_before_mount;
};

/* Command line -> d->opts, d->extras, d->cmd. Returns -1 to go on, or the exit status. */
static int parse_command_line(struct daemon *d, const char *prog)
{
	struct parse_state ps = {.opts = &d->opts, .extras = &d->extras};

	options_init(&d->opts);
	mountopts_init(&d->extras);
	if (fuse_opt_parse(&d->args, &ps, NULL, parse_opt) < 0)
		return EXIT_USAGE;
	/* `poolfs SOURCE MOUNTPOINT`: the last operand is the mountpoint, SOURCE only names the
	 * filesystem in fstab (mount.fuse3 passes it first). */
	if (ps.noperands > 0 && fuse_opt_add_arg(&d->args, ps.operands[ps.noperands - 1]) < 0)
		return 1;
	/* After fuse_parse_cmdline, which would take `debug` to mean "stay in the foreground". */
	if (fuse_parse_cmdline(&d->args, &d->cmd) != 0)
		return EXIT_USAGE;
	if (d->extras.debug && fuse_opt_add_arg(&d->args, "-odebug") < 0)
		return 1;
	if (d->cmd.show_help) {
		usage(prog);
		return 0;
	}
	if (d->cmd.show_version) {
		printf("poolfs %s (libfuse %s)\n", POOLFS_VERSION, fuse_pkgversion());
		return 0;
	}
	if (!d->cmd.mountpoint) {
		fprintf(stderr, "poolfs: no mountpoint given (try --help)\n");
		return EXIT_USAGE;
	}
	return -1;
}

/* Data path feasibility that can be known before mounting: 0, or EXIT_NO_DATAPATH (reported). */
static int check_datapath(const struct pool_options *opts)
{
	const char *why = NULL;

	if (opts->datapath != DATAPATH_PASSTHROUGH)
		return 0;
#ifdef POOLFS_HAVE_PASSTHROUGH
	if (!have_cap_sys_admin())
		why = "passthrough needs CAP_SYS_ADMIN (run the daemon as root)";
	else if (opts->max_user_size && opts->backing_given && !opts->max_size)
		why = "max_user_size with backing=DIR needs the page-cache path: passthrough writes "
		      "that grow a file never reach the daemon, and only a private tmpfs per user "
		      "(no backing=, or with max_size) lets the kernel bound them";
#else
	why = "this poolfs was built against libfuse < 3.17, which has no passthrough";
#endif
	if (!why)
		return 0;
	fprintf(stderr, "poolfs: datapath=passthrough is not supported here: %s\n", why);
	return EXIT_NO_DATAPATH;
}

/* The pool object with its data path chosen: 0 or a negative errno (reported). */
static int make_pool(struct daemon *d)
{
	const struct pool_options *opts = &d->opts;
	struct pool *pool = fault_calloc(1, sizeof(*pool));
	int r;

	if (!pool)
		return -ENOMEM;
	d->pool = pool;
	r = pool_init(pool, opts);
	if (r < 0) {
		fprintf(stderr, "poolfs: cannot set up the pool: %s\n", strerror(-r));
		return r;
	}
	pool->dp = &datapath_pagecache;
#ifdef POOLFS_HAVE_PASSTHROUGH
	/* max_user_size keeps passthrough when each user's data has a store of its own that the
	 * kernel bounds (backing.h); with backing=DIR only the daemon can count, on the page cache. */
	bool user_bounded = !opts->max_user_size || backing_per_user(&pool->backing);

	if (opts->datapath != DATAPATH_PAGECACHE && have_cap_sys_admin() && user_bounded)
		pool->dp = &datapath_passthrough; /* confirmed (or dropped, for auto) at INIT */
	else if (opts->datapath == DATAPATH_AUTO)
		log_info("datapath=auto: %s, using the page-cache path",
			 !user_bounded ? "max_user_size is set with backing=DIR"
				       : "no CAP_SYS_ADMIN");
	if (opts->datapath == DATAPATH_PASSTHROUGH && !user_bounded) {
		fprintf(stderr, "poolfs: datapath=passthrough is not supported here: max_user_size "
				"needs a private tmpfs per user, which could not be made\n");
		return -EOPNOTSUPP;
	}
#else
	if (opts->datapath == DATAPATH_AUTO)
		log_info(
			"datapath=auto: built without passthrough (libfuse < 3.17), using the page-cache path");
#endif
	/* The daemon is the only writer of names and attributes: names and attributes are cached
	 * for long. On a multi-user pool the kernel enforces the owner-only modes on cached
	 * attributes (default_permissions, mount_pool) and the shared root's names stay uncached
	 * (ops_request.c entry_timeout()). */
	pool->entry_timeout = POOL_CACHE_SECONDS;
	pool->attr_timeout = POOL_CACHE_SECONDS;
	if (cgroup2_find_mount("/proc/self/mountinfo", pool->cgroup2_root,
			       sizeof(pool->cgroup2_root)) < 0)
		pool->cgroup2_root[0] = '\0';
	return 0;
}

/* Session, mount, daemonize, helper threads: 0 or a negative errno. Once the mount is live and
 * the daemon detached, its log goes to syslog and the service manager hears READY=1. */
static int mount_pool(struct daemon *d)
{
	struct pool *pool = d->pool;
	char status[64 + PATH_MAX];
	int r;

	if (fuse_opt_add_arg(&d->args, "-oauto_unmount") < 0 ||
	    fuse_opt_add_arg(&d->args, "-ofsname=poolfs") < 0 ||
	    fuse_opt_add_arg(&d->args, "-osubtype=poolfs") < 0)
		return -ENOMEM;
	/* Only where other users can enter: on a private pool FUSE itself keeps everyone but the
	 * mounting user out, the daemon checks every request anyway, and default_permissions would
	 * cost a GETATTR of the folder after every create or unlink in it (docs/design.md, "Where
	 * the kernel checks and where the daemon checks"). */
	if (options_multi_user(&pool->opts) &&
	    fuse_opt_add_arg(&d->args, "-odefault_permissions") < 0)
		return -ENOMEM;
	d->se = fuse_session_new(&d->args, &poolfs_ops, sizeof(poolfs_ops), pool);
	if (!d->se)
		return -EINVAL; /* libfuse said why (an unknown option, most often) */
	pool->session = d->se;
	pool->mountpoint = d->cmd.mountpoint;
	if (fuse_set_signal_handlers(d->se) != 0)
		return -EIO;
	d->handlers = true;
	unmount_guard_note_sockets(&d->sockets_before_mount);
	if (fuse_session_mount(d->se, d->cmd.mountpoint) != 0)
		return -EIO;
	d->mounted = true;
	/* Read from mountinfo, not stat(): no request may be sent before the loop runs. */
	if (mountinfo_fuse_dev("/proc/self/mountinfo", d->cmd.mountpoint, &d->dev) < 0)
		d->dev = 0; /* unknown: abort_connection() then never acts */
	if (fuse_daemonize(d->cmd.foreground) != 0)
		return -EIO;
	if (!d->cmd.foreground)
		log_to_syslog(d->extras.log_socket);
	pool->daemon_pid = getpid();
	/* A crash can fool auto_unmount's helper (unmount_guard.h). The guard is a fork() of this
	 * process: before any thread starts. */
	r = unmount_guard_start(d->cmd.mountpoint, &d->sockets_before_mount);
	if (r < 0)
		log_warn("no unmount guard (%s): after a crash the mount may stay", strerror(-r));

	r = watch_start(&pool->watch);
	if (r == 0)
		r = watch_add(pool->watch, pool->linger_timer_fd, linger_fired, pool);
	if (r == 0)
		r = notify_start(&d->notify, d->se);
	if (r == 0)
		r = pool_reaper_start(pool);
	if (r < 0) {
		log_error("cannot start helper threads: %s", strerror(-r));
		return -EIO; /* not -EINVAL, which main() reads as "libfuse refused an option" */
	}
	pool->inval = notify_push;
	pool->inval_ctx = d->notify;
	/* The kernel queues requests until the loop below serves them: the mount is in place. */
	snprintf(status, sizeof(status), "READY=1\nSTATUS=serving %s", d->cmd.mountpoint);
	r = sdnotify_send(status);
	if (r < 0)
		log_warn("cannot tell the service manager we are ready ($NOTIFY_SOCKET): %s",
			 strerror(-r));
	return 0;
}

/* Serve requests until unmount or a signal: the exit status. */
static int run_loop(struct daemon *d)
{
	int r, n;

	if (d->cmd.singlethread) {
		r = fuse_session_loop(d->se);
	} else {
		d->loop_cfg = fuse_loop_cfg_create();
		if (!d->loop_cfg)
			return 1;
		fuse_loop_cfg_set_clone_fd(d->loop_cfg, d->cmd.clone_fd);
		fuse_loop_cfg_set_max_threads(d->loop_cfg,
					      d->cmd.max_threads ? d->cmd.max_threads : 16);
		/* UINT_MAX is fuse_parse_cmdline's "not given": libfuse 3.14 would log it as an
		 * invalid value. */
		if (d->cmd.max_idle_threads != UINT_MAX)
			fuse_loop_cfg_set_idle_threads(d->loop_cfg, d->cmd.max_idle_threads);
		r = fuse_session_loop_mt(d->se, d->loop_cfg);
	}
	n = sdnotify_send("STOPPING=1");
	if (n < 0)
		log_warn("cannot tell the service manager we are stopping: %s", strerror(-n));
	if (d->pool->init_error) {
		log_error("%s", d->pool->init_error);
		return EXIT_NO_DATAPATH;
	}
	/* The kernel ended the connection rather than closing it: seen (rarely, under load, with
	 * libfuse 3.14) when a lazily unmounted pool's last user went, where ENODEV is the usual
	 * answer. The mount is gone either way, which is the end asked for, not a failure. */
	if (r == -ECONNABORTED) {
		log_info("the kernel aborted the FUSE connection: ending as after an unmount");
		r = 0;
	}
	/* libfuse's signal handlers end the loop with the signal's number: SIGTERM, SIGINT and
	 * SIGHUP are how a supervisor asks for a clean unmount, not failures. */
	return (r == 0 || r == SIGTERM || r == SIGINT || r == SIGHUP) ? 0 : 1;
}

/* End the FUSE connection from outside it: fusectl's abort where it is mounted, else a forced
 * unmount (root only). Only if the FUSE mount on the mountpoint is still this daemon's, the
 * device it had when mounted: a forced unmount of whatever lies beneath (a node's own /dev/shm)
 * would be a disaster. */
static void abort_connection(struct daemon *d)
{
	char path[80];
	dev_t now;
	int fd;

	if (!d->mounted ||
	    mountinfo_fuse_dev("/proc/self/mountinfo", d->cmd.mountpoint, &now) < 0 ||
	    now != d->dev)
		return;
	snprintf(path, sizeof(path), "/sys/fs/fuse/connections/%u/abort", minor(d->dev));
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		bool done = write(fd, "1", 1) == 1;

		close(fd);
		if (done)
			return;
	}
	if (umount2(d->cmd.mountpoint, MNT_FORCE | MNT_DETACH) < 0)
		log_warn("cannot end the FUSE connection of %s: %s", d->cmd.mountpoint,
			 strerror(errno));
}

/* The notify thread first, while the mount is still this daemon's. A deletion notice it is
 * sending waits in the kernel for its folder's lock; the process holding that lock (an
 * O_CREAT open) may wait for a CREATE that no worker reads any more, since the loop ended:
 * then only the end of the connection frees them all, which the daemon's exit could not bring
 * (the notice holds /dev/fuse open, and SIGKILL does not end a thread in the kernel's lock
 * wait). docs/design.md "Name invalidation". */
static void stop_notify(struct daemon *d)
{
	if (notify_stop_within(d->notify, NOTIFY_STOP_MS) == -ETIMEDOUT) {
		log_warn("a name invalidation is stuck behind a request nobody will answer: "
			 "ending the connection");
		abort_connection(d);
	}
	notify_stop(d->notify);
	d->notify = NULL;
}

static void cleanup(struct daemon *d)
{
	struct pool *pool = d->pool;

	/* Ending already: a SIGTERM, SIGINT or SIGHUP now (a stop that crosses an unmount) asks for
	 * nothing more, and must not cut the teardown short. Once libfuse takes its handlers away
	 * they would kill the daemon before backing_close empties a directory store, and before
	 * the chargers are reaped. Set before that removal: libfuse then leaves them ignored. */
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	/* Nothing may queue an invalidation once the notify thread is gone: the watch thread
	 * (holds that end, timers) and the data path's watchers stop first. */
	if (pool && pool->watch) {
		watch_stop(pool->watch);
		pool->watch = NULL;
	}
	if (pool && pool->dp)
		pool->dp->stop(pool);
	stop_notify(d);
	if (d->mounted)
		fuse_session_unmount(d->se);
	if (d->handlers)
		fuse_remove_signal_handlers(d->se);
	if (d->se)
		fuse_session_destroy(d->se);
	if (d->loop_cfg)
		fuse_loop_cfg_destroy(d->loop_cfg);
	if (pool) {
		pool_destroy(pool);
		free(pool);
	}
	free(d->cmd.mountpoint);
	fuse_opt_free_args(&d->args);
}

int main(int argc, char *argv[])
{
	struct daemon d = {.args = FUSE_ARGS_INIT(argc, argv)};
	int ret, r;

	log_take_fuse_messages();
	ret = parse_command_line(&d, argv[0]);
	if (ret >= 0) /* done (--help, --version) or bad usage */
		goto out;
	ret = check_datapath(&d.opts);
	if (ret != 0)
		goto out;
	r = transport_prepare(d.opts.uring, &d.args);
	if (r < 0) {
		ret = r == -EOPNOTSUPP ? EXIT_NO_DATAPATH : 1;
		goto out;
	}
	/* Said, never changed: like the io_uring switch it is the machine's (idle_halt.h). */
	if (idle_halt_at_once("/sys") == 1)
		log_info("this VM halts its idle CPUs at once (cpuidle driver haltpoll, "
			 "guest_halt_poll_ns 0): each request that wakes an idle CPU waits for the "
			 "host, and small files run several times slower; as root, echo 200000 > "
			 "/sys" IDLE_HALT_POLL_NS
			 " polls 200 us first (docs/performance.md \"Tuning "
			 "a node\")");

	signal(SIGPIPE, SIG_IGN);
	/* A lease break (passthrough's mapping probe) raises SIGIO; it must never kill us. */
	signal(SIGIO, SIG_IGN);
	raise_fd_limit();

	ret = 1;
	/* Faultsim builds only: POOLFS_FAULT fails an allocation of the start (fault.h). */
	if (fault_arm_env() < 0) {
		fprintf(stderr, "poolfs: POOLFS_FAULT: not a fault to arm\n");
		goto out;
	}
	if (make_pool(&d) < 0)
		goto out;
	r = mount_pool(&d);
	if (r < 0) {
		ret = r == -EINVAL ? EXIT_USAGE : 1; /* -EINVAL: libfuse refused an option */
		goto out;
	}
	ret = run_loop(&d);
out:
	cleanup(&d);
	if (ret == 0 && d.mounted)
		log_info("unmounted cleanly");
	log_close();
	return ret;
}
