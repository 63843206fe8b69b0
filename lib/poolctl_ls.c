/* poolctl ls: one line per entry like `ls -l`, then how many names it has if more than one, and
 * what keeps it alive (open handles, a mapping, children, each hold with scope and owner, a hold
 * on a folder above), or "lingering" when nothing does; --json prints the same as one array of
 * objects. Reads only lstat() and user.poolfs.refs, so listing never keeps anything alive
 * itself.
 *
 * A folder's entries are asked about from inside it (chdir, then names relative to it): a full
 * path would walk from the pool's root again for each entry, and in a multi-user pool every walk
 * through a name in the root reaches the daemon (docs/design.md "Caching"), two requests more per
 * entry than its one user.poolfs.refs. User and group names are kept once looked up: the name
 * service reads /etc/passwd and /etc/group at every call, a miss (an id with no name) costing as
 * much as a hit. */
#include "poolctl_ls.h"
#include "poolfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <unistd.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* Folders above the listed entries (up to the pool root) that carry holds. */
#define MAX_ABOVE 8

struct above {
	unsigned n;
	char path[MAX_ABOVE][PATH_MAX];
};

struct entry {
	/* path: as shown; at: as asked (the name alone once in its folder, list_folder) */
	const char *path, *at, *name;
	struct stat st;
	/* Files and folders only: the kernel gives symlinks, FIFOs and sockets no user.* xattrs,
	 * so what keeps them (their holds, or a folder's above) is not readable (has_refs false). */
	bool has_refs;
	struct poolfs_refs refs;
	const struct above *above;
};

/* Ids whose names were looked up, the newest over the oldest: a folder's entries mostly share
 * one owner and group. */
#define ID_NAMES 16

struct id_names {
	unsigned used, next;
	struct {
		unsigned long id;
		bool group;
		char name[64];
	} slot[ID_NAMES];
};

struct out {
	bool json;
	unsigned printed; /* JSON objects written so far (for the commas) */
	struct id_names ids;
};

static void ls_error(const char *path, int err)
{
	const char *why = err == ENOTSUP ? "not on a poolfs pool" : strerror(err);
	fprintf(stderr, "poolctl: ls: %s: %s\n", path, why);
}

/* The name of a user (or, with `group`, a group) id, else the number. */
static void id_name(struct id_names *ids, unsigned long id, bool group, char *buf, size_t len)
{
	char tmp[4096];
	const char *name = NULL;

	for (unsigned k = 0; k < ids->used; k++) {
		if (ids->slot[k].id == id && ids->slot[k].group == group) {
			snprintf(buf, len, "%s", ids->slot[k].name);
			return;
		}
	}

	if (group) {
		struct group gr, *res = NULL;
		if (getgrgid_r((gid_t)id, &gr, tmp, sizeof(tmp), &res) == 0 && res)
			name = res->gr_name;
	} else {
		struct passwd pw, *res = NULL;
		if (getpwuid_r((uid_t)id, &pw, tmp, sizeof(tmp), &res) == 0 && res)
			name = res->pw_name;
	}
	if (name)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "%lu", id);
	unsigned k = ids->next;
	ids->next = (k + 1) % ID_NAMES;
	if (ids->used < ID_NAMES)
		ids->used++;
	ids->slot[k].id = id;
	ids->slot[k].group = group;
	snprintf(ids->slot[k].name, sizeof(ids->slot[k].name), "%s", buf);
}

/* The folders from `dir` up to its pool's root that hold holds (a hold keeps the whole subtree). */
static void find_holds_above(const char *dir, struct above *a)
{
	char root[PATH_MAX], cur[PATH_MAX];
	struct poolfs_refs r;

	a->n = 0;
	if (poolfs_pool_root(dir, root, sizeof(root)) < 0 || !realpath(dir, cur))
		return;
	for (;;) {
		if (poolfs_refs(cur, &r) == 0 && r.nholds > 0 && a->n < MAX_ABOVE)
			snprintf(a->path[a->n++], PATH_MAX, "%s", cur);
		if (strcmp(cur, root) == 0)
			break;
		char *slash = strrchr(cur, '/');
		if (!slash || slash == cur)
			break;
		*slash = '\0';
	}
}

static bool is_lingering(const struct entry *e)
{
	return e->has_refs && e->refs.opens == 0 && !e->refs.mapped && e->refs.nholds == 0 &&
	       e->refs.children == 0 && e->above->n == 0;
}

/* The kind of entry, for --json's "type". */
static const char *kind_name(mode_t m)
{
	return S_ISDIR(m)    ? "folder"
	       : S_ISLNK(m)  ? "symlink"
	       : S_ISFIFO(m) ? "fifo"
	       : S_ISSOCK(m) ? "socket"
	       : S_ISREG(m)  ? "file"
			     : "other";
}

static void mode_text(mode_t m, char out[11])
{
	static const char bits[] = "rwxrwxrwx";

	out[0] = S_ISDIR(m)    ? 'd'
		 : S_ISREG(m)  ? '-'
		 : S_ISLNK(m)  ? 'l'
		 : S_ISFIFO(m) ? 'p'
		 : S_ISSOCK(m) ? 's'
			       : '?';
	for (int i = 0; i < 9; i++)
		out[1 + i] = (m & (0400 >> i)) ? bits[i] : '-';
	out[10] = '\0';
}

/* A JSON string: quotes, backslashes and control characters escaped; other bytes as they are. */
static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void print_text(struct out *o, const struct entry *e)
{
	char mode[11], user[64], group[64], when[32];
	struct tm tm;

	mode_text(e->st.st_mode, mode);
	id_name(&o->ids, e->st.st_uid, false, user, sizeof(user));
	id_name(&o->ids, e->st.st_gid, true, group, sizeof(group));
	localtime_r(&e->st.st_mtime, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
	printf("%s %2lu %-8s %-8s %10lld %s %s ", mode, (unsigned long)e->st.st_nlink, user, group,
	       (long long)e->st.st_size, when, e->name);
	if (S_ISLNK(e->st.st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlink(e->at, target, sizeof(target) - 1);

		if (n >= 0) {
			target[n] = '\0';
			printf("-> %s", target);
		}
	}
	if (!e->has_refs && e->st.st_nlink > 1)
		printf(" names=%lu", (unsigned long)e->st.st_nlink);
	if (e->refs.names > 1)
		printf(" names=%lu", (unsigned long)e->refs.names);
	if (e->refs.opens)
		printf(" open=%llu", (unsigned long long)e->refs.opens);
	if (e->refs.mapped)
		printf(" mapped");
	if (e->refs.children)
		printf(" children=%llu", (unsigned long long)e->refs.children);
	for (unsigned k = 0; k < e->refs.nlisted; k++) {
		id_name(&o->ids, e->refs.holds[k].uid, false, user, sizeof(user));
		printf(" hold=%s(%s)", e->refs.holds[k].text, user);
	}
	if (e->refs.nholds > e->refs.nlisted)
		printf(" +%llu-more-holds", (unsigned long long)(e->refs.nholds - e->refs.nlisted));
	for (unsigned k = 0; k < e->above->n; k++)
		printf(" held-above=%s", e->above->path[k]);
	if (is_lingering(e))
		printf(" lingering");
	putchar('\n');
}

static void print_json(struct out *o, const struct entry *e)
{
	char user[64];

	id_name(&o->ids, e->st.st_uid, false, user, sizeof(user));
	printf("%s\n  {\"path\": ", o->printed++ ? "," : "");
	json_string(e->path);
	printf(", \"name\": ");
	json_string(e->name);
	printf(", \"type\": \"%s\", \"mode\": \"%04o\", \"uid\": %lu, \"user\": ",
	       kind_name(e->st.st_mode), (unsigned)(e->st.st_mode & 07777),
	       (unsigned long)e->st.st_uid);
	json_string(user);
	printf(", \"size\": %lld, \"mtime\": %lld, ", (long long)e->st.st_size,
	       (long long)e->st.st_mtime);
	/* the daemon's count of names; null from a daemon that does not say */
	if (e->refs.names || !e->has_refs)
		printf("\"names\": %lu, ",
		       e->has_refs ? (unsigned long)e->refs.names : (unsigned long)e->st.st_nlink);
	else
		printf("\"names\": null, ");
	printf("\"opens\": %llu, \"mapped\": %s, \"children\": %llu, \"holds\": [",
	       (unsigned long long)e->refs.opens, e->refs.mapped ? "true" : "false",
	       (unsigned long long)e->refs.children);
	for (unsigned k = 0; k < e->refs.nlisted; k++) {
		printf("%s{\"scope\": ", k ? ", " : "");
		json_string(e->refs.holds[k].text);
		printf(", \"uid\": %lu}", (unsigned long)e->refs.holds[k].uid);
	}
	printf("], \"held_above\": [");
	for (unsigned k = 0; k < e->above->n; k++) {
		printf("%s", k ? ", " : "");
		json_string(e->above->path[k]);
	}
	printf("], \"lingering\": %s}", is_lingering(e) ? "true" : "false");
}

/* One entry at `path`, asked for as `at` (the same, or relative to the current folder) and shown
 * as `name`: 0, or 1 after a message (gone meanwhile, not a pool). */
static int show_entry(struct out *o, const char *path, const char *at, const char *name,
		      const struct above *a)
{
	struct entry e = {.path = path, .at = at, .name = name, .above = a};
	int r;

	if (lstat(at, &e.st) < 0) {
		ls_error(path, errno);
		return 1;
	}
	e.has_refs = S_ISREG(e.st.st_mode) || S_ISDIR(e.st.st_mode);
	/* Never asked of a symlink: getxattr would follow it to whatever it names. */
	r = e.has_refs ? poolfs_refs(at, &e.refs) : 0;
	if (r < 0) {
		ls_error(path, -r);
		return 1;
	}
	if (o->json)
		print_json(o, &e);
	else
		print_text(o, &e);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in `dir`, sorted, read before anything is asked about them (so our own handle on the
 * folder is closed again). 0 or a negative errno; *names freed by the caller. */
static int read_names(const char *dir, char ***names, size_t *count)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **v = NULL;
	size_t n = 0, cap = 0;
	int r = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (n == cap) {
			char **nv = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof(*v));
			if (!nv) {
				r = -ENOMEM;
				break;
			}
			v = nv;
		}
		if (!(v[n] = strdup(de->d_name))) {
			r = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (v)
		qsort(v, n, sizeof(*v), by_name);
	*names = v;
	*count = n;
	return r;
}

/* Into `dir`, to ask about its entries by their names alone (see the top of the file); *back: where
 * we were, or -1 when we did not move (a folder we may read but not search: its entries are asked
 * for by full path, each failing as it would have). */
static void enter_folder(const char *dir, int *back)
{
	*back = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (*back >= 0 && chdir(dir) < 0) {
		close(*back);
		*back = -1;
	}
}

/* Back from enter_folder: 0, or a negative errno (then relative operands after this one would be
 * taken from the wrong place). */
static int leave_folder(int back)
{
	int r = 0;

	if (back < 0)
		return 0;
	if (fchdir(back) < 0)
		r = -errno;
	close(back);
	return r;
}

/* *stop set when the listing cannot go on: we could not come back to where we started. */
static int list_folder(struct out *o, const char *dir, bool header, bool *stop)
{
	char **names = NULL, path[PATH_MAX];
	struct above *a;
	size_t n = 0;
	int status = 0, back, r;

	/* One message for a folder that is not on a pool, not one per entry. */
	r = poolfs_pool_root(dir, path, sizeof(path));
	if (r < 0) {
		ls_error(dir, -r);
		return 1;
	}
	a = malloc(sizeof(*a));
	if (!a) {
		ls_error(dir, ENOMEM);
		return 1;
	}
	r = read_names(dir, &names, &n);
	if (r < 0) {
		ls_error(dir, -r);
		status = 1;
	}
	find_holds_above(dir, a);
	if (header && !o->json)
		printf("%s:\n", dir);
	enter_folder(dir, &back);
	for (size_t i = 0; i < n; i++) {
		if (snprintf(path, sizeof(path), "%s/%s", dir, names[i]) >= (int)sizeof(path)) {
			ls_error(names[i], ENAMETOOLONG);
			status = 1;
		} else {
			status |= show_entry(o, path, back >= 0 ? names[i] : path, names[i], a);
		}
		free(names[i]);
	}
	free(names);
	free(a);
	r = leave_folder(back);
	if (r < 0) {
		fprintf(stderr, "poolctl: ls: cannot go back to the folder it started in: %s\n",
			strerror(-r));
		*stop = true;
		status = 1;
	}
	return status;
}

/* A file operand: the entry itself, with the holds of the folders above it. */
static int list_file(struct out *o, const char *path)
{
	char dir[PATH_MAX];
	struct above *a = malloc(sizeof(*a));
	const char *slash = strrchr(path, '/');
	int status;

	if (!a) {
		ls_error(path, ENOMEM);
		return 1;
	}
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) + (slash == path) : 1,
		 slash ? path : ".");
	find_holds_above(dir, a);
	status = show_entry(o, path, path, path, a);
	free(a);
	return status;
}

int poolctl_ls(int n, char **paths, bool json)
{
	static char dot[] = ".";
	char *dflt[] = {dot};
	struct out o = {.json = json};
	struct stat st;
	bool stop = false;
	int status = 0;

	if (n == 0) {
		paths = dflt;
		n = 1;
	}
	if (json)
		printf("[");
	for (int i = 0; i < n && !stop; i++) {
		if (lstat(paths[i], &st) < 0) {
			ls_error(paths[i], errno);
			status = 1;
		} else if (S_ISDIR(st.st_mode)) {
			if (i > 0 && !json)
				putchar('\n');
			status |= list_folder(&o, paths[i], n > 1, &stop);
		} else {
			status |= list_file(&o, paths[i]);
		}
	}
	if (json)
		printf("%s]\n", o.printed ? "\n" : "");
	return status;
}
