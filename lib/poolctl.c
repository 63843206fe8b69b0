/* poolctl: a thin command-line front end to libpoolfs (holds, refs, pool usage, job folders and
 * unique files). It owns argument parsing and printing only; every action is one library call.
 * Exit status: 0 success, 1 an operation failed (a message naming the path and the reason on
 * stderr), 2 usage error.
 */
#include "cli_text.h"
#include "poolctl_ls.h"
#include "poolctl_metrics.h"
#include "poolctl_env.h"
#include "poolfs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef POOLCTL_VERSION
#define POOLCTL_VERSION "unknown"
#endif

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

struct command {
	const char *name;
	int (*run)(int argc, char **argv); /* argv[0] is the command name */
	const char *synopsis;
	const char *help;
};

static const struct command *find_command(const char *name);

/* ---- messages ----------------------------------------------------------------------------- */

static int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "poolctl: %s: ", cmd);
	va_start(ap, fmt);
	/* ap is started just above: clang-tidy 14 loses sight of va_start when one run checks
	 * several files (llvm/llvm-project#40656), and then flags this call. */
	vfprintf(stderr, fmt, ap); /* NOLINT(clang-analyzer-valist.Uninitialized) */
	va_end(ap);
	fprintf(stderr, "\nTry 'poolctl help %s'.\n", cmd);
	return EXIT_USAGE;
}

/* `err` is a positive errno from a library call on `path`. */
static int op_error(const char *cmd, const char *path, int err)
{
	const char *why = poolctl_explain(cmd, err);
	fprintf(stderr, "poolctl: %s: %s: %s\n", cmd, path, why ? why : strerror(err));
	return EXIT_FAILED;
}

static void print_command_help(FILE *f, const struct command *c)
{
	fprintf(f, "usage: poolctl %s\n\n%s", c->synopsis, c->help);
}

/* ---- option helpers ----------------------------------------------------------------------- */

static bool is_help(const char *a)
{
	return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}

/* "--name VALUE" or "--name=VALUE" at argv[*i]: 1 and *value set (and *i advanced past a separate
 * VALUE), 0 if argv[*i] is not that option, -1 if the value is missing (reported). */
static int option_value(const char *cmd, int argc, char **argv, int *i, const char *name,
			const char **value)
{
	size_t n = strlen(name);
	const char *a = argv[*i];

	if (strncmp(a, name, n) != 0)
		return 0;
	if (a[n] == '=') {
		*value = a + n + 1;
		return 1;
	}
	if (a[n] != '\0')
		return 0;
	if (*i + 1 >= argc) {
		usage_error(cmd, "%s needs a value", name);
		return -1;
	}
	*value = argv[++*i];
	return 1;
}

struct scope_choice {
	enum poolfs_scope scope;
	pid_t pid;
	bool set;
};

/* A scope option at argv[*i]: 1 consumed, 0 not a scope option, -1 usage error (reported). */
static int scope_option(const char *cmd, int argc, char **argv, int *i, struct scope_choice *sc)
{
	static const struct {
		const char *opt;
		enum poolfs_scope scope;
	} plain[] = {
		{"--session", POOLFS_SCOPE_SESSION},
		{"--pin", POOLFS_SCOPE_PIN},
		{"--cgroup", POOLFS_SCOPE_CGROUP},
	};
	const char *a = argv[*i], *v;
	enum poolfs_scope scope;
	pid_t pid = 0;
	int r;
	size_t k;

	for (k = 0; k < sizeof plain / sizeof plain[0]; k++)
		if (strcmp(a, plain[k].opt) == 0)
			break;
	if (k < sizeof plain / sizeof plain[0]) {
		scope = plain[k].scope;
	} else if ((r = option_value(cmd, argc, argv, i, "--pid", &v)) != 0) {
		if (r < 0)
			return -1;
		if (!cli_parse_pid(v, &pid)) {
			usage_error(cmd, "--pid needs a positive process id, not '%s'", v);
			return -1;
		}
		scope = POOLFS_SCOPE_PID;
	} else if (strcmp(a, "--process") == 0) {
		/* The library offers it, but here "the calling process" is poolctl itself, which exits
		 * at once and would take the hold with it. */
		usage_error(cmd,
			    "--process would end with poolctl itself; use --pid N (e.g. --pid $$)");
		return -1;
	} else {
		return 0;
	}
	if (sc->set) {
		usage_error(cmd, "give only one of --session, --pin, --cgroup, --pid N");
		return -1;
	}
	sc->scope = scope;
	sc->pid = pid;
	sc->set = true;
	return 1;
}

/* Walk the options of `cmd` at argv[1..]: handles --help, "--", and anything `opt` accepts
 * (opt returns 1 consumed, 0 unknown, -1 error already reported). Returns the index of the first
 * operand, or -1 (exit with *status). */
static int parse_options(const struct command *c, int argc, char **argv,
			 int (*opt)(const char *cmd, int argc, char **argv, int *i, void *ctx),
			 void *ctx, int *status)
{
	int i;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0)
			return i + 1;
		if (a[0] != '-' || a[1] == '\0')
			return i;
		if (is_help(a)) {
			print_command_help(stdout, c);
			*status = EXIT_OK;
			return -1;
		}
		int r = opt ? opt(c->name, argc, argv, &i, ctx) : 0;
		if (r < 0) {
			*status = EXIT_USAGE;
			return -1;
		}
		if (r == 0) {
			*status = usage_error(c->name, "unknown option '%s'", a);
			return -1;
		}
	}
	return i;
}

static int scope_opt(const char *cmd, int argc, char **argv, int *i, void *ctx)
{
	return scope_option(cmd, argc, argv, i, ctx);
}

/* "alice" for a uid with a name, "" otherwise. */
static void user_name(uid_t uid, char *buf, size_t len)
{
	struct passwd pw, *res = NULL;
	char tmp[1024];

	buf[0] = '\0';
	if (getpwuid_r(uid, &pw, tmp, sizeof tmp, &res) == 0 && res)
		snprintf(buf, len, "%s", res->pw_name);
}

static void print_uid(uid_t uid)
{
	char name[64];
	user_name(uid, name, sizeof name);
	if (name[0])
		printf("uid %lu (%s)", (unsigned long)uid, name);
	else
		printf("uid %lu", (unsigned long)uid);
}

/* parse_options, then exactly one operand (`what` names it in the message): its index, or -1
 * (exit with *status). */
static int one_operand(const char *cmd, int argc, char **argv,
		       int (*opt)(const char *cmd, int argc, char **argv, int *i, void *ctx),
		       void *ctx, const char *what, int *status)
{
	int i = parse_options(find_command(cmd), argc, argv, opt, ctx, status);

	if (i >= 0 && argc - i != 1) {
		*status = usage_error(cmd, "give exactly one %s", what);
		return -1;
	}
	return i;
}

/* ---- commands ----------------------------------------------------------------------------- */

/* Run `fn` on each PATH operand argv[i..], reporting each failure: the last failure's exit status,
 * or EXIT_OK. */
static int each_path(const char *cmd, int argc, char **argv, int i,
		     int (*fn)(const char *path, void *ctx), void *ctx)
{
	int status = EXIT_OK;

	if (i >= argc)
		return usage_error(cmd, "no PATH given");
	for (; i < argc; i++) {
		int r = fn(argv[i], ctx);
		if (r < 0)
			status = op_error(cmd, argv[i], -r);
	}
	return status;
}

static int hold_one(const char *path, void *ctx)
{
	const struct scope_choice *sc = ctx;
	return poolfs_hold(path, sc->scope, sc->pid);
}

static int cmd_hold(int argc, char **argv)
{
	struct scope_choice sc = {POOLFS_SCOPE_SESSION, 0, false};
	int status = EXIT_OK;
	int i = parse_options(find_command("hold"), argc, argv, scope_opt, &sc, &status);

	return i < 0 ? status : each_path("hold", argc, argv, i, hold_one, &sc);
}

static int release_one(const char *path, void *ctx)
{
	(void)ctx;
	return poolfs_release(path);
}

static int cmd_release(int argc, char **argv)
{
	int status = EXIT_OK;
	int i = parse_options(find_command("release"), argc, argv, NULL, NULL, &status);

	return i < 0 ? status : each_path("release", argc, argv, i, release_one, NULL);
}

static void print_refs(const char *path, const struct poolfs_refs *r)
{
	printf("%s\n", path);
	printf("  opens     %llu\n", (unsigned long long)r->opens);
	printf("  mapped    %s\n", r->mapped ? "yes" : "no");
	/* A folder has its one name; another entry's names are its hard links. A daemon that does
	 * not say leaves it 0, and the line out (a PATH reached the entry: it has a name). */
	if (!r->folder && r->names)
		printf("  names     %u\n", r->names);
	if (r->folder)
		printf("  children  %llu\n", (unsigned long long)r->children);
	printf("  holds     %llu\n", (unsigned long long)r->nholds);
	for (unsigned k = 0; k < r->nlisted; k++) {
		const struct poolfs_hold_info *h = &r->holds[k];
		printf("    %-20s ", h->text);
		print_uid(h->uid);
		printf("%s\n", h->truncated ? " (scope shortened)" : "");
	}
	if (r->nholds > r->nlisted)
		printf("    ... %llu more not listed\n",
		       (unsigned long long)(r->nholds - r->nlisted));
}

static int refs_one(const char *path, void *ctx)
{
	struct poolfs_refs r;
	int e = poolfs_refs(path, &r);

	(void)ctx;
	if (e == 0)
		print_refs(path, &r);
	return e;
}

static int cmd_refs(int argc, char **argv)
{
	int status = EXIT_OK;
	int i = parse_options(find_command("refs"), argc, argv, NULL, NULL, &status);

	return i < 0 ? status : each_path("refs", argc, argv, i, refs_one, NULL);
}

/* "1.5 GiB (1610612736 bytes)", or "unlimited" for a zero limit when `limit`. */
static void print_size_line(const char *label, uint64_t v, bool limit)
{
	char h[32];
	if (limit && v == 0) {
		printf("%-14s unlimited\n", label);
		return;
	}
	human_size(v, h, sizeof h);
	printf("%-14s %s (%llu bytes)\n", label, h, (unsigned long long)v);
}

static int cmd_stat(int argc, char **argv)
{
	int status = EXIT_OK;
	int i = parse_options(find_command("stat"), argc, argv, NULL, NULL, &status);

	if (i < 0)
		return status;
	if (argc - i > 1)
		return usage_error("stat", "give at most one POOL");
	const char *path = i < argc ? argv[i] : ".";

	struct poolfs_usage u;
	int r = poolfs_usage(path, &u);
	if (r < 0)
		return op_error("stat", path, -r);

	char root[PATH_MAX];
	if (poolfs_pool_root(path, root, sizeof root) < 0)
		snprintf(root, sizeof root, "%s", path);
	printf("%-14s %s\n", "pool", root);
	printf("%-14s %s\n", "datapath", u.datapath);
	printf("%-14s %llu\n", "entries", (unsigned long long)u.entries);
	print_size_line("bytes", u.bytes, false);
	print_size_line("max_size", u.max_size, true);
	print_size_line("meta", u.meta, false);
	print_size_line("max_user_size", u.max_user_size, true);
	print_size_line("max_user_meta", u.max_user_meta, true);
	if (u.max_user_entries)
		printf("%-14s %llu\n", "max_user_entries", (unsigned long long)u.max_user_entries);
	else
		printf("%-14s unlimited\n", "max_user_entries");
	for (unsigned k = 0; k < u.nlisted; k++) {
		char h[32], m[32];
		human_size(u.users[k].bytes, h, sizeof h);
		human_size(u.users[k].meta, m, sizeof m);
		printf("%-14s ", "user");
		print_uid(u.users[k].uid);
		printf(": %llu entries, %s", (unsigned long long)u.users[k].entries, h);
		if (u.max_user_size) {
			int pct = (int)(u.users[k].bytes * 100.0 / (double)u.max_user_size);
			human_size(u.max_user_size, h, sizeof h);
			printf(" of %s (%d%%)", h, pct);
		}
		printf(", %s metadata\n", m);
	}
	if (u.nusers > u.nlisted)
		printf("%-14s ... %u more not listed\n", "user", u.nusers - u.nlisted);
	return EXIT_OK;
}

static int cmd_mkjob(int argc, char **argv)
{
	struct scope_choice sc = {POOLFS_SCOPE_SESSION, 0, false};
	int status = EXIT_OK;
	int i = one_operand("mkjob", argc, argv, scope_opt, &sc, "POOL", &status);

	if (i < 0)
		return status;

	char path[PATH_MAX];
	int r = poolfs_mkjob(argv[i], sc.scope, sc.pid, path, sizeof path);
	if (r < 0)
		return op_error("mkjob", argv[i], -r);
	printf("%s\n", path);
	return EXIT_OK;
}

struct affixes {
	const char *prefix, *suffix;
};

static int affix_opt(const char *cmd, int argc, char **argv, int *i, void *ctx)
{
	struct affixes *a = ctx;
	int r = option_value(cmd, argc, argv, i, "--prefix", &a->prefix);
	if (r == 0)
		r = option_value(cmd, argc, argv, i, "--suffix", &a->suffix);
	return r;
}

static int cmd_mkunique(int argc, char **argv)
{
	struct affixes af = {NULL, NULL};
	int status = EXIT_OK;
	int i = one_operand("mkunique", argc, argv, affix_opt, &af, "DIR", &status);

	if (i < 0)
		return status;
	if ((af.prefix && strchr(af.prefix, '/')) || (af.suffix && strchr(af.suffix, '/')))
		return usage_error("mkunique", "--prefix and --suffix cannot contain '/'");

	char path[PATH_MAX];
	int fd = poolfs_mkunique(argv[i], af.prefix, af.suffix, O_RDWR, 0600, path, sizeof path);
	if (fd < 0)
		return op_error("mkunique", argv[i], -fd);
	close(fd);
	printf("%s\n", path);
	return EXIT_OK;
}

static int json_opt(const char *cmd, int argc, char **argv, int *i, void *ctx)
{
	(void)cmd;
	(void)argc;
	if (strcmp(argv[*i], "--json") != 0)
		return 0;
	*(bool *)ctx = true;
	return 1;
}

static int cmd_ls(int argc, char **argv)
{
	bool json = false;
	int status = EXIT_OK;
	int i = parse_options(find_command("ls"), argc, argv, json_opt, &json, &status);

	if (i < 0)
		return status;
	return poolctl_ls(argc - i, argv + i, json) ? EXIT_FAILED : EXIT_OK;
}

struct metrics_opts {
	bool all;
	const char *output;
};

static int metrics_opt(const char *cmd, int argc, char **argv, int *i, void *ctx)
{
	struct metrics_opts *mo = ctx;

	if (strcmp(argv[*i], "--all") == 0) {
		mo->all = true;
		return 1;
	}
	return option_value(cmd, argc, argv, i, "--output", &mo->output);
}

static int cmd_metrics(int argc, char **argv)
{
	struct metrics_opts mo = {0};
	int status = EXIT_OK;
	int i = parse_options(find_command("metrics"), argc, argv, metrics_opt, &mo, &status);

	if (i < 0)
		return status;
	if (i == argc && !mo.all)
		return usage_error("metrics", "give a MOUNTPOINT or --all");
	return poolctl_metrics(argc - i, argv + i, mo.all, mo.output) ? EXIT_FAILED : EXIT_OK;
}

static void print_main_help(FILE *f);

static int cmd_help(int argc, char **argv)
{
	if (argc < 2) {
		print_main_help(stdout);
		return EXIT_OK;
	}
	if (argc > 2)
		return usage_error("help", "give at most one COMMAND");
	const struct command *c = find_command(is_help(argv[1]) ? "help" : argv[1]);
	if (!c)
		return usage_error("help", "unknown command '%s'", argv[1]);
	print_command_help(stdout, c);
	return EXIT_OK;
}

#define SCOPE_HELP                                                                                 \
	"  --session  until the session of the calling shell ends (the default)\n"                 \
	"  --pin      until released (or the entry is unlinked, or the pool unmounted)\n"          \
	"  --cgroup   until the cgroup v2 group of the caller has no process left\n"               \
	"             (a Slurm job, a systemd unit, a container)\n"                                \
	"  --pid N    until process N exits (e.g. --pid $$ for the calling shell)\n"               \
	"(--process is refused: it would mean poolctl itself, which exits at once.)\n"

static const struct command commands[] = {
	{"hold", cmd_hold, "hold [--session|--pin|--cgroup|--pid N] PATH...",
	 "Take a hold on each PATH, so it stays after its last user closes it (a hold on a folder\n"
	 "keeps everything below it). The hold is yours and ends with its scope:\n" SCOPE_HELP
	 "Release it early with 'poolctl release'.\n"},
	{"release", cmd_release, "release PATH...",
	 "Drop all of your holds on each PATH (holds on folders above it stay). An entry that nothing\n"
	 "else uses is then removed at once.\n"},
	{"refs", cmd_refs, "refs PATH...",
	 "Show what keeps each PATH alive: open handles, whether a mapping may be live, its names\n"
	 "(hard links), children (folders), and the holds with their scope and owner.\n"},
	{"ls", cmd_ls, "ls [--json] [PATH...]",
	 "List each PATH (a folder: its entries; default: the current directory) like 'ls -l', then\n"
	 "why each entry is alive: open=N (handles), mapped, children=N, hold=SCOPE(OWNER) for each\n"
	 "hold, held-above=FOLDER for a held folder above it, or 'lingering' when nothing keeps it\n"
	 "(a file about to go, or a folder created empty, which stays until rmdir).\n"
	 "  --json  one JSON array of objects: path, name, type, mode, uid, user, size, mtime,\n"
	 "          opens, mapped, children, holds [{scope, uid}], held_above, lingering\n"},
	{"stat", cmd_stat, "stat [POOL]",
	 "Show the usage of the pool that POOL (default: the current directory) belongs to: entries,\n"
	 "bytes, limits, and per-user usage (only your own unless you are root).\n"},
	{"metrics", cmd_metrics, "metrics [--all] [--output FILE] [MOUNTPOINT...]",
	 "Print the state and counters of the pools mounted on MOUNTPOINT (with --all: every pool\n"
	 "mounted here) in Prometheus's text format (docs/monitoring.md). Root sees every user; others\n"
	 "their own usage, and the daemon's counters of the pools they own.\n"
	 "  --output FILE  write FILE instead, replaced at once (for node_exporter's textfile\n"
	 "                 collector: poolfs-metrics.timer)\n"},
	{"mkjob", cmd_mkjob, "mkjob [--session|--pin|--cgroup|--pid N] POOL",
	 "Create a uniquely named folder job-<uuid> in POOL, hold it, and print its path. Everything\n"
	 "put in it goes once the hold has ended and nothing uses it. Scopes:\n" SCOPE_HELP},
	{"mkunique", cmd_mkunique, "mkunique [--prefix P] [--suffix S] DIR",
	 "Create a new empty file named P<pid>-<tid>-<uuid>S in DIR and print its path.\n"
	 "On a pool mounted with autohold=none the file goes as soon as poolctl closes it: make it in\n"
	 "a held folder (see mkjob) to keep it.\n"},
	{"env", poolctl_env, POOLCTL_ENV_SYNOPSIS, POOLCTL_ENV_HELP},
	{"help", cmd_help, "help [COMMAND]", "Show the help of poolctl or of one COMMAND.\n"},
};

static const struct command *find_command(const char *name)
{
	for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++)
		if (strcmp(commands[k].name, name) == 0)
			return &commands[k];
	return NULL;
}

static void print_main_help(FILE *f)
{
	fprintf(f, "usage: poolctl [--help] [--version] COMMAND [ARGS...]\n\n"
		   "Control entries of a poolfs pool: holds, references, usage, job folders.\n\n"
		   "Commands:\n");
	for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++)
		fprintf(f, "  %s\n", commands[k].synopsis);
	fprintf(f, "\n'poolctl help COMMAND' describes one command.\n"
		   "Exit status: 0 success, 1 an operation failed, 2 usage error.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		print_main_help(stderr);
		return EXIT_USAGE;
	}
	const char *a = argv[1];
	if (is_help(a)) {
		print_main_help(stdout);
		return EXIT_OK;
	}
	if (strcmp(a, "--version") == 0) {
		printf("poolctl %s\n", POOLCTL_VERSION);
		return EXIT_OK;
	}
	const struct command *c = find_command(a);
	if (!c) {
		fprintf(stderr, "poolctl: unknown command '%s'\nTry 'poolctl --help'.\n", a);
		return EXIT_USAGE;
	}
	int status = c->run(argc - 1, argv + 1);
	/* A failed write of our output (a full disk, a closed pipe) is a failure too. */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "poolctl: %s: cannot write output: %s\n", c->name, strerror(errno));
		return EXIT_FAILED;
	}
	return status;
}
