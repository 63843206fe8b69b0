/* The fuzz targets' regression run without clang: main() feeds every file of the given seed
 * corpus directories (or files) to LLVMFuzzerTestOneInput once, in name order, and reports one TAP
 * test case per file. An oracle failure aborts the process (see fuzz.h), so meson sees the binary
 * die with the failing file as the last one named on stderr.
 *
 *   fuzz_<name> DIR_OR_FILE...
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

struct file_list {
	char **paths;
	size_t n, cap;
};

static int list_add(struct file_list *l, const char *dir, const char *name)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		char **p = realloc(l->paths, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		l->paths = p;
		l->cap = cap;
	}
	size_t len = strlen(dir) + strlen(name) + 2;
	char *path = malloc(len);
	if (!path)
		return -ENOMEM;
	snprintf(path, len, "%s%s%s", dir, *dir ? "/" : "", name);
	l->paths[l->n++] = path;
	return 0;
}

/* The regular files directly in `dir`, sorted, dot files left out. */
static int list_dir(struct file_list *l, const char *dir)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, alphasort), r = 0;

	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		if (r == 0 && ents[i]->d_name[0] != '.')
			r = list_add(l, dir, ents[i]->d_name);
		free(ents[i]);
	}
	free(ents);
	return r;
}

/* The whole file in a heap buffer of exactly its size, so a read past the end shows under ASan or
 * valgrind. */
static int read_file(const char *path, uint8_t **out, size_t *size)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), r = 0;
	uint8_t *buf = NULL;
	size_t got = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf) {
		r = -ENOMEM;
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : -EIO;
			goto out;
		}
		got += (size_t)n;
	}
	*out = buf;
	*size = got;
	buf = NULL;
out:
	free(buf);
	close(fd);
	return r;
}

static void list_free(struct file_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->paths[i]);
	free(l->paths);
}

/* Every file named by argv[1..], or a TAP "Bail out!" and -1. */
static int list_args(struct file_list *l, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
			printf("Bail out! %s: not a corpus directory or file\n", argv[i]);
			return -1;
		}
		int r = S_ISDIR(st.st_mode) ? list_dir(l, argv[i]) : list_add(l, "", argv[i]);
		if (r < 0) {
			printf("Bail out! %s: %s\n", argv[i], strerror(-r));
			return -1;
		}
	}
	/* A run over nothing would pass whatever the target does. */
	if (l->n == 0) {
		printf("Bail out! no corpus files (usage: %s DIR_OR_FILE...)\n", argv[0]);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct file_list l = {NULL, 0, 0};
	int r, status = 0;

	if (list_args(&l, argc, argv) < 0) {
		list_free(&l);
		return 1;
	}
	printf("1..%zu\n", l.n);
	for (size_t i = 0; i < l.n; i++) {
		uint8_t *data = NULL;
		size_t size = 0;
		if ((r = read_file(l.paths[i], &data, &size)) < 0) {
			printf("not ok %zu - %s: %s\n", i + 1, l.paths[i], strerror(-r));
			status = 1;
		} else {
			fprintf(stderr, "running %s\n", l.paths[i]);
			fflush(stdout);
			LLVMFuzzerTestOneInput(data, size);
			free(data);
			printf("ok %zu - %s\n", i + 1, l.paths[i]);
		}
	}
	list_free(&l);
	return status;
}
