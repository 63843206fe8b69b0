/* holds: hold records and scope parsing (see holds.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "holds.h"
#include "poolfs_names.h"

/* The scopes that are a word alone; "pid:N" carries a number. "process" is a pid hold whose
 * pid the pool fills in. */
static const struct {
	const char *word;
	enum hold_kind kind;
} scope_words[] = {
	{POOLFS_SCOPE_WORD_PIN, HOLD_PIN},
	{POOLFS_SCOPE_WORD_PROCESS, HOLD_PID},
	{POOLFS_SCOPE_WORD_SESSION, HOLD_SESSION},
	{POOLFS_SCOPE_WORD_CGROUP, HOLD_CGROUP},
};

int hold_request_parse(const char *value, size_t len, struct hold_request *out)
{
	char text[32];
	char *end;
	long v;

	if (!value)
		return -EINVAL;
	/* setfattr and friends may pass the terminating NUL or a newline; accept exactly one. */
	if (len > 0 && (value[len - 1] == '\0' || value[len - 1] == '\n'))
		len--;
	if (len == 0 || len >= sizeof(text) || memchr(value, '\0', len))
		return -EINVAL;
	memcpy(text, value, len);
	text[len] = '\0';

	out->pid = 0;
	for (size_t i = 0; i < ARRAY_SIZE(scope_words); i++) {
		if (strcmp(text, scope_words[i].word) == 0) {
			out->kind = scope_words[i].kind;
			return 0;
		}
	}
	if (strncmp(text, POOLFS_SCOPE_WORD_PID ":", 4) == 0) {
		if (text[4] < '1' || text[4] > '9')
			return -EINVAL;
		errno = 0;
		v = strtol(text + 4, &end, 10);
		if (errno || *end || v <= 0 || v > INT_MAX)
			return -EINVAL;
		out->kind = HOLD_PID;
		out->pid = (pid_t)v;
		return 0;
	}
	return -EINVAL;
}

void hold_link(struct hold **node_list, struct hold *h)
{
	h->node_next = *node_list;
	*node_list = h;
	h->src_prev = NULL;
	h->src_next = NULL;
	if (h->src) {
		h->src_next = h->src->holds;
		if (h->src_next)
			h->src_next->src_prev = h;
		h->src->holds = h;
	}
}

void hold_unlink(struct hold **node_list, struct hold *h)
{
	for (struct hold **p = node_list; *p; p = &(*p)->node_next) {
		if (*p == h) {
			*p = h->node_next;
			break;
		}
	}
	h->node_next = NULL;
	if (h->src) {
		if (h->src_prev)
			h->src_prev->src_next = h->src_next;
		else
			h->src->holds = h->src_next;
		if (h->src_next)
			h->src_next->src_prev = h->src_prev;
	}
	h->src_next = h->src_prev = NULL;
}

size_t hold_count(const struct hold *node_list)
{
	size_t n = 0;

	for (; node_list; node_list = node_list->node_next)
		n++;
	return n;
}

int hold_format_scope(const struct hold *h, char *buf, size_t len)
{
	int n;

	if (!h->src)
		n = snprintf(buf, len, POOLFS_SCOPE_WORD_PIN);
	else if (h->src->kind == HOLD_PID)
		n = snprintf(buf, len, POOLFS_SCOPE_WORD_PID ":%d", (int)h->src->pid);
	else if (h->src->kind == HOLD_SESSION)
		n = snprintf(buf, len, POOLFS_SCOPE_WORD_SESSION ":%d", (int)h->src->pid);
	else
		n = snprintf(buf, len, POOLFS_SCOPE_WORD_CGROUP ":%s",
			     h->src->cgroup ? h->src->cgroup : "?");
	return (n < 0 || (size_t)n >= len) ? -ENAMETOOLONG : 0;
}

size_t hold_autohold_kinds(enum autohold_choice choice, enum hold_kind out[2])
{
	switch (choice) {
	case AUTOHOLD_PROCESS:
		out[0] = HOLD_PID;
		return 1;
	case AUTOHOLD_SESSION:
		out[0] = HOLD_SESSION;
		out[1] = HOLD_PID;
		return 2;
	case AUTOHOLD_CGROUP:
		out[0] = HOLD_CGROUP;
		out[1] = HOLD_PID;
		return 2;
	case AUTOHOLD_NONE:
	default:
		return 0;
	}
}
