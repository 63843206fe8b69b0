/* size_arg: the size arguments of the test tools (see size_arg.h). */
#include <errno.h>
#include <stdlib.h>

#include "size_arg.h"

int size_arg_parse(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	/* strtoull takes "-1" as a huge number: refuse the sign itself */
	if (errno || end == s || *s == '-')
		return -EINVAL;
	switch (*end) {
	case 'k':
	case 'K':
		v <<= 10;
		end++;
		break;
	case 'm':
	case 'M':
		v <<= 20;
		end++;
		break;
	case 'g':
	case 'G':
		v <<= 30;
		end++;
		break;
	default:
		goto done;
	}
	if (end[0] == 'i' && end[1] == 'B')
		end += 2;
	else if (end[0] == 'B')
		end++;
done:
	if (*end || v == 0)
		return -EINVAL;
	*out = (size_t)v;
	return 0;
}
