/* metrics_text: poolctl metrics' texts in, Prometheus's text exposition format out (see
 * metrics_text.h and docs/monitoring.md for what each metric means). */
#include "metrics_text.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- reading the pool's texts -------------------------------------------------------------- */

/* The next line of *text into buf (without its newline): false at the end. -ERANGE in *r when
 * a line does not fit. */
static bool next_line(const char **text, char *buf, size_t len, int *r)
{
	const char *s = *text, *nl;
	size_t n;

	if (!*s)
		return false;
	nl = strchr(s, '\n');
	n = nl ? (size_t)(nl - s) : strlen(s);
	*text = nl ? nl + 1 : s + n;
	if (n >= len) {
		*r = -ERANGE;
		return false;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	return true;
}

static bool parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno == 0 && *end == '\0';
}

/* Split `line` into at most `max` words (in place); how many. */
static int split(char *line, char **w, int max)
{
	int n = 0;
	char *save = NULL;

	for (char *t = strtok_r(line, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		if (n == max)
			return max + 1;
		w[n++] = t;
	}
	return n;
}

static int add_user(struct metrics_pool *p, char **w, int n)
{
	struct metrics_user u = {0}, *grown;
	uint64_t uid;

	/* "user UID entries N bytes N meta N" */
	if (n != 8 || !parse_u64(w[1], &uid) || uid > UINT32_MAX || strcmp(w[2], "entries") != 0 ||
	    !parse_u64(w[3], &u.entries) || strcmp(w[4], "bytes") != 0 ||
	    !parse_u64(w[5], &u.bytes) || strcmp(w[6], "meta") != 0 || !parse_u64(w[7], &u.meta))
		return -EINVAL;
	u.uid = (uint32_t)uid;
	grown = realloc(p->users, (p->nusers + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	p->users = grown;
	p->users[p->nusers++] = u;
	return 0;
}

int metrics_parse_stat(struct metrics_pool *p, const char *text)
{
	static const struct {
		const char *key;
		size_t off;
	} fields[] = {
		{"entries", offsetof(struct metrics_pool, entries)},
		{"bytes", offsetof(struct metrics_pool, bytes)},
		{"meta", offsetof(struct metrics_pool, meta)},
		{"max_size", offsetof(struct metrics_pool, max_size)},
		{"max_user_size", offsetof(struct metrics_pool, max_user_size)},
		{"max_user_entries", offsetof(struct metrics_pool, max_user_entries)},
		{"max_user_meta", offsetof(struct metrics_pool, max_user_meta)},
	};
	char line[256], *w[9];
	int r = 0, n;

	while (r == 0 && next_line(&text, line, sizeof(line), &r)) {
		n = split(line, w, 8);
		if (n == 0)
			continue;
		if (strcmp(w[0], "user") == 0) {
			r = add_user(p, w, n);
			continue;
		}
		if (n != 2)
			return -EINVAL;
		if (strcmp(w[0], "datapath") == 0) {
			if (strlen(w[1]) >= sizeof(p->datapath))
				return -EINVAL;
			strcpy(p->datapath, w[1]);
			continue;
		}
		/* Lines this poolctl does not know (a newer daemon's) are left out. */
		for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
			if (strcmp(w[0], fields[i].key) == 0 &&
			    !parse_u64(w[1], (uint64_t *)(void *)((char *)p + fields[i].off)))
				return -EINVAL;
	}
	if (r == 0)
		p->have_stat = true;
	return r;
}

static int add_value(struct metrics_value **arr, size_t *count, const char *name, const char *key,
		     uint64_t value, uint64_t ns)
{
	struct metrics_value *grown, *v;

	if (strlen(name) >= sizeof(v->name) || strlen(key) >= sizeof(v->key))
		return -EINVAL;
	grown = realloc(*arr, (*count + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	*arr = grown;
	v = &grown[(*count)++];
	memset(v, 0, sizeof(*v));
	strcpy(v->name, name);
	strcpy(v->key, key);
	v->value = value;
	v->ns = ns;
	return 0;
}

int metrics_parse_counters(struct metrics_pool *p, const char *text)
{
	char line[256], *w[4];
	uint64_t v;
	int r = 0, n;

	while (r == 0 && next_line(&text, line, sizeof(line), &r)) {
		n = split(line, w, 3);
		if (n == 0)
			continue;
		if (n == 2 && strcmp(w[0], "transport") == 0) {
			if (strlen(w[1]) >= sizeof(p->transport))
				return -EINVAL;
			strcpy(p->transport, w[1]);
		} else if (n == 2 && parse_u64(w[1], &v)) {
			r = add_value(&p->counters, &p->ncounters, w[0], "", v, 0);
		} else if (n == 3 && parse_u64(w[2], &v)) {
			r = add_value(&p->counters, &p->ncounters, w[0], w[1], v, 0);
		} else {
			return -EINVAL;
		}
	}
	if (r == 0)
		p->have_counters = true;
	return r;
}

int metrics_parse_ops(struct metrics_pool *p, const char *text)
{
	char line[256], *w[4];
	uint64_t count, ns;
	int r = 0, n;

	while (r == 0 && next_line(&text, line, sizeof(line), &r)) {
		n = split(line, w, 3);
		if (n == 0)
			continue;
		if (n != 3 || !parse_u64(w[1], &count) || !parse_u64(w[2], &ns))
			return -EINVAL;
		if (strcmp(w[0], "total") != 0)
			r = add_value(&p->ops, &p->nops, w[0], "", count, ns);
	}
	if (r == 0)
		p->have_ops = true;
	return r;
}

void metrics_pool_clear(struct metrics_pool *p)
{
	const char *mountpoint = p->mountpoint;

	free(p->users);
	free(p->counters);
	free(p->ops);
	memset(p, 0, sizeof(*p));
	p->mountpoint = mountpoint;
}

/* ---- writing the exposition format --------------------------------------------------------- */

enum source {
	SRC_UP,		/* 1 if the pool answered */
	SRC_INFO,	/* 1, with the data path and transport as labels */
	SRC_POOL,	/* a number of user.poolfs.stat (`off` into the pool) */
	SRC_USER,	/* a number of a user line (`off` into the user) */
	SRC_USER_LIMIT, /* a pool's per-user limit (`off` into the pool), for each user */
	SRC_COUNTER,	/* user.poolfs.counters' `key` line(s), by `label` if it has one */
	SRC_HISTOGRAM,	/* user.poolfs.counters' histogram `key` ("KEY LE_NS N", "KEY_sum_ns") */
	SRC_OPS_COUNT,	/* user.poolfs.ops: requests by type */
	SRC_OPS_SECONDS,
};

struct family {
	const char *name, *type, *help;
	enum source src;
	size_t off;
	const char *key, *label;
};

#define POOL_FIELD(f) offsetof(struct metrics_pool, f)
#define USER_FIELD(f) offsetof(struct metrics_user, f)

static const struct family families[] = {
	{"poolfs_up", "gauge", "1 if the pool's daemon answered, 0 if not.", SRC_UP, 0, NULL, NULL},
	{"poolfs_info", "gauge", "The pool's data path and transport, as labels (value 1).",
	 SRC_INFO, 0, NULL, NULL},
	{"poolfs_entries", "gauge", "Entries (files, folders, others) in the pool, the root aside.",
	 SRC_POOL, POOL_FIELD(entries), NULL, NULL},
	{"poolfs_data_bytes", "gauge", "Bytes of file data the pool holds.", SRC_POOL,
	 POOL_FIELD(bytes), NULL, NULL},
	{"poolfs_metadata_bytes", "gauge",
	 "Daemon memory for xattrs, hold records and extra names, charged to their owners.",
	 SRC_POOL, POOL_FIELD(meta), NULL, NULL},
	{"poolfs_max_size_bytes", "gauge",
	 "max_size: the pool's limit on data and metadata together (absent: none).", SRC_POOL,
	 POOL_FIELD(max_size), NULL, NULL},
	{"poolfs_max_user_size_bytes", "gauge",
	 "max_user_size: each user's limit on data and metadata (absent: none).", SRC_POOL,
	 POOL_FIELD(max_user_size), NULL, NULL},
	{"poolfs_max_user_entries", "gauge", "max_user_entries: each user's limit on entries.",
	 SRC_POOL, POOL_FIELD(max_user_entries), NULL, NULL},
	{"poolfs_max_user_metadata_bytes", "gauge", "max_user_meta: each user's limit on metadata.",
	 SRC_POOL, POOL_FIELD(max_user_meta), NULL, NULL},
	{"poolfs_user_entries", "gauge", "Entries a user owns in the pool.", SRC_USER,
	 USER_FIELD(entries), NULL, NULL},
	{"poolfs_user_data_bytes", "gauge", "Bytes of file data a user owns in the pool.", SRC_USER,
	 USER_FIELD(bytes), NULL, NULL},
	{"poolfs_user_metadata_bytes", "gauge", "Metadata bytes charged to a user.", SRC_USER,
	 USER_FIELD(meta), NULL, NULL},
	{"poolfs_user_size_limit_bytes", "gauge",
	 "A user's quota on data and metadata together (max_user_size).", SRC_USER_LIMIT,
	 POOL_FIELD(max_user_size), NULL, NULL},
	{"poolfs_user_entries_limit", "gauge", "A user's quota on entries (max_user_entries).",
	 SRC_USER_LIMIT, POOL_FIELD(max_user_entries), NULL, NULL},
	{"poolfs_user_metadata_limit_bytes", "gauge", "A user's quota on metadata (max_user_meta).",
	 SRC_USER_LIMIT, POOL_FIELD(max_user_meta), NULL, NULL},
	{"poolfs_daemon_resident_memory_bytes", "gauge", "The daemon's resident set size.",
	 SRC_COUNTER, 0, "rss_bytes", NULL},
	{"poolfs_open_handles", "gauge", "Open file and folder handles.", SRC_COUNTER, 0,
	 "open_handles", NULL},
	{"poolfs_maybe_mapped_entries", "gauge",
	 "Files that may still be mapped (no proof yet that their last mapping is gone).",
	 SRC_COUNTER, 0, "maybe_mapped", NULL},
	{"poolfs_held_entries", "gauge", "Entries with at least one hold.", SRC_COUNTER, 0, "held",
	 NULL},
	{"poolfs_lingering_entries", "gauge", "Unused entries kept listed a while by linger=.",
	 SRC_COUNTER, 0, "lingering", NULL},
	{"poolfs_awaiting_forget_entries", "gauge",
	 "Removed entries whose room waits for the kernel to let go of them.", SRC_COUNTER, 0,
	 "awaiting_forget", NULL},
	{"poolfs_removed_entries_total", "counter",
	 "Entries removed since the mount, by what let go of them last.", SRC_COUNTER, 0, "removed",
	 "reason"},
	{"poolfs_refusals_total", "counter", "Requests refused since the mount, by errno.",
	 SRC_COUNTER, 0, "refused", "errno"},
	{"poolfs_denied_total", "counter", "Requests on another user's entry denied.", SRC_COUNTER,
	 0, "denied", NULL},
	{"poolfs_denied_log_lines_total", "counter",
	 "Denials logged (at most 20 a second; the rest only counted).", SRC_COUNTER, 0,
	 "denied_logged", NULL},
	{"poolfs_mapping_proof_probes_total", "counter",
	 "Probes of whether a file's last mapping is gone (passthrough: a lease on its backing file).",
	 SRC_COUNTER, 0, "proof_probes", NULL},
	{"poolfs_estale_retries_total", "counter",
	 "Opens answered ESTALE (the entry went meanwhile) for the kernel to retry.", SRC_COUNTER,
	 0, "estale", NULL},
	{"poolfs_crash_swept_folders_total", "counter",
	 "Backing folders of dead daemons removed when this one started.", SRC_COUNTER, 0,
	 "swept_folders", NULL},
	{"poolfs_crash_swept_files_total", "counter",
	 "Files in the backing folders of dead daemons removed when this one started.", SRC_COUNTER,
	 0, "swept_files", NULL},
	{"poolfs_lock_handoffs_total", "counter",
	 "Times a long section (a folder's snapshot, a batch of forgets) let a waiting request in.",
	 SRC_COUNTER, 0, "lock_handoffs", NULL},
	{"poolfs_request_duration_seconds", "histogram",
	 "Time the daemon's handlers took per request, all types together.", SRC_HISTOGRAM, 0,
	 "latency", NULL},
	{"poolfs_lock_wait_seconds", "histogram",
	 "Time a thread waited to take the pool lock, at every take (0 when it was free).",
	 SRC_HISTOGRAM, 0, "lock_wait", NULL},
	{"poolfs_requests_total", "counter", "Requests served, by type.", SRC_OPS_COUNT, 0, NULL,
	 "op"},
	{"poolfs_request_handler_seconds_total", "counter", "Time spent in handlers, by type.",
	 SRC_OPS_SECONDS, 0, NULL, "op"},
};

/* A label value, escaped as the format wants (backslash, double quote, newline). */
static void put_escaped(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', out);
		if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

/* The family's HELP and TYPE before its first sample. */
struct writer {
	FILE *out;
	const struct family *f;
	bool started;
};

/* One sample: NAME[SUFFIX]{pool="..."[,LABEL="VALUE"]...} VALUE. `labels` holds name/value
 * pairs, NULL-terminated. */
static void sample(struct writer *w, const char *suffix, const struct metrics_pool *p,
		   const char *const *labels, const char *value)
{
	if (!w->started) {
		fprintf(w->out, "# HELP %s %s\n# TYPE %s %s\n", w->f->name, w->f->help, w->f->name,
			w->f->type);
		w->started = true;
	}
	fprintf(w->out, "%s%s{pool=\"", w->f->name, suffix);
	put_escaped(w->out, p->mountpoint);
	fputc('"', w->out);
	for (; labels && labels[0]; labels += 2) {
		fprintf(w->out, ",%s=\"", labels[0]);
		put_escaped(w->out, labels[1]);
		fputc('"', w->out);
	}
	fprintf(w->out, "} %s\n", value);
}

static void sample_u64(struct writer *w, const char *suffix, const struct metrics_pool *p,
		       const char *const *labels, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	sample(w, suffix, p, labels, buf);
}

static void sample_seconds(struct writer *w, const char *suffix, const struct metrics_pool *p,
			   const char *const *labels, uint64_t ns)
{
	char buf[48];

	snprintf(buf, sizeof(buf), "%" PRIu64 ".%09" PRIu64, ns / 1000000000u, ns % 1000000000u);
	sample(w, suffix, p, labels, buf);
}

static uint64_t pool_u64(const struct metrics_pool *p, size_t off)
{
	return *(const uint64_t *)(const void *)((const char *)p + off);
}

/* The histogram f->key of user.poolfs.counters: its cumulative buckets, sum and count. */
static void write_histogram(struct writer *w, const struct metrics_pool *p)
{
	const char *key = w->f->key;
	size_t keylen = strlen(key);
	uint64_t count = 0, sum = 0;
	bool any = false;

	for (size_t i = 0; i < p->ncounters; i++) {
		const struct metrics_value *v = &p->counters[i];
		char le[32];
		uint64_t ns;

		if (strncmp(v->name, key, keylen) == 0 && strcmp(v->name + keylen, "_sum_ns") == 0)
			sum = v->value;
		if (strcmp(v->name, key) != 0)
			continue;
		if (strcmp(v->key, "inf") == 0) {
			snprintf(le, sizeof(le), "+Inf");
			count = v->value;
			any = true;
		} else if (parse_u64(v->key, &ns)) {
			snprintf(le, sizeof(le), "%.9g", (double)ns / 1e9);
		} else {
			continue;
		}
		sample_u64(w, "_bucket", p, (const char *const[]){"le", le, NULL}, v->value);
	}
	if (!any)
		return;
	sample_seconds(w, "_sum", p, NULL, sum);
	sample_u64(w, "_count", p, NULL, count);
}

static void write_user_samples(struct writer *w, const struct metrics_pool *p)
{
	const struct family *f = w->f;

	if (f->src == SRC_USER_LIMIT && pool_u64(p, f->off) == 0)
		return; /* no limit: no sample, so that no ratio divides by 0 */
	for (size_t u = 0; u < p->nusers; u++) {
		char uid[16];
		uint64_t v =
			f->src == SRC_USER_LIMIT
				? pool_u64(p, f->off)
				: *(const uint64_t *)(const void *)((const char *)&p->users[u] +
								    f->off);

		snprintf(uid, sizeof(uid), "%" PRIu32, p->users[u].uid);
		sample_u64(w, "", p, (const char *const[]){"uid", uid, NULL}, v);
	}
}

static void write_samples(struct writer *w, const struct metrics_pool *p)
{
	const struct family *f = w->f;

	switch (f->src) {
	case SRC_UP:
		sample(w, "", p, NULL, p->have_stat ? "1" : "0");
		return;
	case SRC_INFO:
		if (p->have_stat)
			sample(w, "", p,
			       (const char *const[]){"datapath", p->datapath, "transport",
						     p->have_counters ? p->transport : "unknown",
						     NULL},
			       "1");
		return;
	case SRC_POOL:
		/* Limits of 0 mean none: left out, as the users' ones. */
		if (p->have_stat &&
		    (pool_u64(p, f->off) || strncmp(f->name, "poolfs_max_", 11) != 0))
			sample_u64(w, "", p, NULL, pool_u64(p, f->off));
		return;
	case SRC_USER:
	case SRC_USER_LIMIT:
		write_user_samples(w, p);
		return;
	case SRC_COUNTER:
		for (size_t i = 0; i < p->ncounters; i++)
			if (strcmp(p->counters[i].name, f->key) == 0 &&
			    (!f->label) == !p->counters[i].key[0])
				sample_u64(w, "", p,
					   f->label
						   ? (const char *const[]){f->label,
									   p->counters[i].key, NULL}
						   : NULL,
					   p->counters[i].value);
		return;
	case SRC_HISTOGRAM:
		write_histogram(w, p);
		return;
	case SRC_OPS_COUNT:
	case SRC_OPS_SECONDS:
		for (size_t i = 0; i < p->nops; i++) {
			const char *const labels[] = {f->label, p->ops[i].name, NULL};
			if (f->src == SRC_OPS_COUNT)
				sample_u64(w, "", p, labels, p->ops[i].value);
			else
				sample_seconds(w, "", p, labels, p->ops[i].ns);
		}
		return;
	}
}

int metrics_write(FILE *out, const struct metrics_pool *pools, size_t n)
{
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		struct writer w = {.out = out, .f = &families[i]};

		for (size_t k = 0; k < n; k++)
			write_samples(&w, &pools[k]);
	}
	return ferror(out) ? -EIO : 0;
}

/* ---- finding the pools ---------------------------------------------------------------------- */

/* mountinfo writes a space, tab, newline and backslash in a path as \040, \011, \012 and \134. */
static void unescape(char *s)
{
	char *d = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = '\0';
}

void metrics_mounts_free(char **mounts)
{
	for (size_t i = 0; mounts && mounts[i]; i++)
		free(mounts[i]);
	free(mounts);
}

int metrics_find_mounts(const char *text, char ***out)
{
	char **mounts = calloc(1, sizeof(*mounts)), **grown, *line = NULL, *w[64];
	size_t count = 0;
	int r = 0, n, sep;

	if (!mounts)
		return -ENOMEM;
	for (const char *s = text; r == 0 && *s;) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);

		free(line);
		line = strndup(s, len); /* a line's length has no limit (mount options) */
		s += len + (nl ? 1 : 0);
		if (!line) {
			r = -ENOMEM;
			break;
		}
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER */
		n = split(line, w, 63);
		if (n == 0)
			continue;
		for (sep = 6; sep < n && strcmp(w[sep], "-") != 0; sep++)
			;
		if (n < 7 || n > 63 || sep + 1 >= n) {
			r = -EINVAL;
			break;
		}
		if (strcmp(w[sep + 1], "fuse.poolfs") != 0)
			continue;
		grown = realloc(mounts, (count + 2) * sizeof(*grown));
		if (!grown) {
			r = -ENOMEM;
			break;
		}
		mounts = grown;
		mounts[count + 1] = NULL;
		mounts[count] = strdup(w[4]);
		if (!mounts[count]) {
			r = -ENOMEM;
			break;
		}
		unescape(mounts[count++]);
	}
	free(line);
	if (r < 0) {
		metrics_mounts_free(mounts);
		return r;
	}
	*out = mounts;
	return 0;
}
