/* npy_v1: hand-made .npy 1.0 headers (see npy_v1.h). */
#include <string.h>

#include "npy_v1.h"

size_t npy_v1_wrap(const char *dict, size_t align, unsigned char *out, size_t cap)
{
	/* magic and version 1.0: bytes, not a string */
	static const unsigned char magic[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
	size_t n = strlen(dict), total = (10 + n + 1 + align - 1) / align * align;

	if (total > cap)
		return 0;
	memcpy(out, magic, sizeof magic);
	out[8] = (unsigned char)((total - 10) & 0xff);
	out[9] = (unsigned char)((total - 10) >> 8);
	/* The dict is header bytes counted by out[8..9], padded below and ended by '\n': no NUL
	 * belongs after it. */
	memcpy(out + 10, dict, n); /* NOLINT(bugprone-not-null-terminated-result) */
	memset(out + 10 + n, ' ', total - 10 - n - 1);
	out[total - 1] = '\n';
	return total;
}
