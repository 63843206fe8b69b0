/* fsx_model: the expected contents of the file under test (see fsx_model.h). */
#include "fsx_model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int model_init(struct fsx_model *m, size_t maxlen)
{
	m->buf = calloc(maxlen ? maxlen : 1, 1);
	if (!m->buf)
		return -ENOMEM;
	m->size = 0;
	m->maxlen = maxlen;
	return 0;
}

void model_free(struct fsx_model *m)
{
	free(m->buf);
	m->buf = NULL;
}

void model_write(struct fsx_model *m, size_t off, const unsigned char *src, size_t len)
{
	memcpy(m->buf + off, src, len);
	if (off + len > m->size)
		m->size = off + len;
}

void model_truncate(struct fsx_model *m, size_t size)
{
	if (size < m->size)
		memset(m->buf + size, 0, m->size - size);
	m->size = size;
}

void model_zero(struct fsx_model *m, size_t off, size_t len)
{
	if (off >= m->size)
		return;
	if (len > m->size - off)
		len = m->size - off;
	memset(m->buf + off, 0, len);
}

void model_extend(struct fsx_model *m, size_t size)
{
	if (size > m->size)
		m->size = size;
}

/* The expected byte at pos: the buffer holds zeroes past size, and nothing lives past maxlen. */
static unsigned char model_at(const struct fsx_model *m, size_t pos)
{
	return pos < m->maxlen ? m->buf[pos] : 0;
}

long model_diff(const struct fsx_model *m, size_t off, const unsigned char *got, size_t len)
{
	size_t inside = off < m->maxlen ? m->maxlen - off : 0;

	if (inside > len)
		inside = len;
	/* memcmp first: the common case is a match, and it is much faster than a byte loop */
	if (inside && memcmp(m->buf + off, got, inside) != 0) {
		for (size_t i = 0; i < inside; i++)
			if (m->buf[off + i] != got[i])
				return (long)i;
	}
	for (size_t i = inside; i < len; i++)
		if (got[i] != 0)
			return (long)i;
	return -1;
}

size_t model_count_diff(const struct fsx_model *m, size_t off, const unsigned char *got, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += model_at(m, off + i) != got[i];
	return n;
}

void fsx_pattern(unsigned char *dst, size_t off, size_t len, unsigned long opnum)
{
	/* 255 values (1..255) mixed from the op number, the byte offset and the page number: a page
	 * written by another op, or shifted by any amount, compares unequal almost everywhere. */
	unsigned long k = opnum * 2654435761UL;

	for (size_t i = 0; i < len; i++) {
		size_t pos = off + i;

		dst[i] = (unsigned char)((k + pos * 7 + (pos >> 12) * 131 + (pos >> 8)) % 255 + 1);
	}
}
