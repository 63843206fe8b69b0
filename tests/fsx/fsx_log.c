/* fsx_log: ring of recent operations (see fsx_log.h). */
#include "fsx_log.h"

struct fsx_logent *log_add(struct fsx_log *l, unsigned long opnum, const char *op, const char *how,
			   size_t off, size_t len, size_t size_before)
{
	struct fsx_logent *e = &l->ent[l->count % FSX_LOG_CAP];

	l->count++;
	e->opnum = opnum;
	e->op = op;
	e->how = how ? how : "";
	e->off = off;
	e->len = len;
	e->off2 = e->len2 = 0;
	e->size_before = size_before;
	e->size_after = size_before;
	e->note = NULL;
	return e;
}

void log_print_one(FILE *out, const struct fsx_logent *e)
{
	/* hex offsets line up with page boundaries at a glance */
	fprintf(out, "%6lu %-9s %-12s", e->opnum, e->op, e->how);
	if (e->len)
		fprintf(out, " 0x%06zx..0x%06zx (len 0x%06zx)", e->off, e->off + e->len, e->len);
	else
		fprintf(out, " %-34s", "");
	if (e->len2)
		fprintf(out, " [0x%06zx..0x%06zx]", e->off2, e->off2 + e->len2);
	fprintf(out, " size 0x%06zx -> 0x%06zx%s%s\n", e->size_before, e->size_after,
		e->note ? "  " : "", e->note ? e->note : "");
}

void log_print_last(FILE *out, const struct fsx_log *l, unsigned n)
{
	unsigned long have = l->count < FSX_LOG_CAP ? l->count : FSX_LOG_CAP;
	unsigned long first;

	if (n > have)
		n = (unsigned)have;
	first = l->count - n;
	for (unsigned long i = first; i < l->count; i++)
		log_print_one(out, &l->ent[i % FSX_LOG_CAP]);
}
