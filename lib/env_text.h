/* Internal to poolctl env: the pure pieces (the job folder's name prefix from SLURM_JOB_ID, shell
 * quoting, the lines a job script evaluates), kept apart from the file system so unit tests check
 * the exact text. See docs/interface.md, "poolctl env".
 */
#ifndef POOLFS_ENV_TEXT_H
#define POOLFS_ENV_TEXT_H

#include <stddef.h>

/* Longest job id accepted (Slurm's are 32-bit numbers; array tasks have their own). */
#define ENV_JOBID_MAX 20

/* The name prefix of a job folder: "job-<jobid>-" when `jobid` is a non-empty string of digits,
 * "job-" when `jobid` is NULL or empty. Returns the length, -EINVAL if `jobid` is not digits (or
 * longer than ENV_JOBID_MAX), -ERANGE if len is too small. */
int env_folder_prefix(const char *jobid, char *buf, size_t len);

/* `s` quoted for a POSIX shell: inside single quotes, each ' written as '\''. Returns the length,
 * or -ERANGE if len is too small. */
int env_shell_quote(const char *s, char *buf, size_t len);

/* The lines a job script evaluates with eval "$(poolctl env)": POOLFS_JOB, JOBLIB_TEMP_FOLDER and
 * TMPDIR set to `job` (quoted) and exported, one "NAME='VALUE'; export NAME" per line. Returns the
 * length, or -ERANGE if len is too small. */
int env_format(const char *job, char *buf, size_t len);

#endif
