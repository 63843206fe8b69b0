/* stress_support: the per-test state around testutil.h's pool fixture, as the tests get it. */
#include "stress.h"

struct stest *stest_get(void **state)
{
	struct stest *t = *state;

	if (t->f.unsupported)
		TU_SKIP("%s", t->f.unsupported_why);
	return t;
}

/* The files under dir (the backing store: each named after its entry's inode number in hex,
 * fs/backing.c), appended to out, comma-separated. */
static void list_files_below(const char *dir, char *out, size_t len, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char sub[PATH_MAX];
		size_t used = strlen(out);

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (e->d_type == DT_DIR) {
			if (depth < 4 &&
			    snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name) < (int)sizeof(sub))
				list_files_below(sub, out, len, depth + 1);
			continue;
		}
		snprintf(out + used, len - used, "%s%s", used ? "," : "", e->d_name);
	}
	closedir(d);
}

/* Each of the test's names, looked up through the mount (the pool lists none of them by now, so
 * a name that stats was answered from the kernel's cache: its inode is the one left), and
 * whether the backing files went after it (a revalidation dropped the name that kept them). */
static void stat_names(const struct pool_fixture *p, const char *const *names, char *out,
		       size_t len)
{
	int before = pool_backing_files(p);

	for (; names && *names; names++) {
		char path[PATH_MAX];
		struct stat st;
		size_t used = strlen(out);
		int after;

		if (snprintf(path, sizeof(path), "%s/%s", p->mnt, *names) >= (int)sizeof(path))
			continue;
		if (lstat(path, &st) == 0)
			snprintf(out + used, len - used,
				 " %s: inode %016" PRIx64 " (a cached name);", *names,
				 (uint64_t)st.st_ino);
		else if (errno != ENOENT)
			snprintf(out + used, len - used, " %s: %s;", *names, strerror(errno));
		after = before > 0 ? pool_wait_backing_files(p, before - 1, 200) : -1;
		if (after == 0) {
			used = strlen(out);
			snprintf(out + used, len - used, " one went after the lookup of %s;",
				 *names);
			before--;
		}
	}
}

const char *backing_leftover_cause(const struct pool_fixture *p, const char *const *names,
				   char *out, size_t len)
{
	const char *root = p->private_store ? p->store : p->backing;
	char files[512] = "";
	size_t used;
	bool dropped;
	int fd;

	list_files_below(root, files, sizeof(files), 0);
	snprintf(out, len, "left: %s;", files);
	stat_names(p, names, out, len);
	if (pool_backing_files(p) == 0)
		return out;
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	dropped = fd >= 0 && write(fd, "2", 1) == 1;
	if (fd >= 0)
		close(fd);
	used = strlen(out);
	if (!dropped)
		snprintf(out + used, len - used,
			 " could not drop the kernel's caches (vm.drop_caches) to tell why");
	else if (pool_wait_backing_files(p, 0, 2000) == 0)
		snprintf(out + used, len - used,
			 " they went once the kernel's unused dentries and inodes were dropped "
			 "(vm.drop_caches): the kernel still cached a name of a removed file");
	else
		snprintf(out + used, len - used,
			 " they stayed after the kernel's unused dentries and inodes were dropped "
			 "(vm.drop_caches): something still uses them, or the daemon lost a count");
	return out;
}
