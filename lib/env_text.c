/* poolctl env's words: folder prefix, shell quoting, the exported lines. Pure functions;
 * poolctl_env.c creates the folder and prints.
 */
#include "env_text.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int env_folder_prefix(const char *jobid, char *buf, size_t len)
{
	size_t n = jobid ? strlen(jobid) : 0;
	int w;

	if (n > ENV_JOBID_MAX || (jobid && strspn(jobid, "0123456789") != n))
		return -EINVAL;
	w = n ? snprintf(buf, len, "job-%s-", jobid) : snprintf(buf, len, "job-");
	if (w < 0 || (size_t)w >= len)
		return -ERANGE;
	return w;
}

int env_shell_quote(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	/* Worst case per byte is 4 ('\''), plus the two quotes and the NUL. */
#define PUT(c)                                                                                     \
	do {                                                                                       \
		if (o + 1 >= len)                                                                  \
			return -ERANGE;                                                            \
		buf[o++] = (c);                                                                    \
	} while (0)
	PUT('\'');
	for (; *s; s++) {
		if (*s == '\'') {
			PUT('\'');
			PUT('\\');
			PUT('\'');
			PUT('\'');
		} else {
			PUT(*s);
		}
	}
	PUT('\'');
#undef PUT
	buf[o] = '\0';
	return (int)o;
}

int env_format(const char *job, char *buf, size_t len)
{
	static const char *const names[] = {"POOLFS_JOB", "JOBLIB_TEMP_FOLDER", "TMPDIR"};
	char q[4 * 4096 + 3];
	size_t o = 0;
	int r;

	if ((r = env_shell_quote(job, q, sizeof q)) < 0)
		return r;
	for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
		int w = snprintf(buf + o, len - o, "%s=%s; export %s\n", names[k], q, names[k]);
		if (w < 0 || (size_t)w >= len - o)
			return -ERANGE;
		o += (size_t)w;
	}
	return (int)o;
}
