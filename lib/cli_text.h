/* Internal to poolctl: the pure pieces of its output (human sizes, poolfs-specific explanations of
 * errno values), kept apart from main() so unit tests can check the exact words.
 */
#ifndef POOLFS_CLI_TEXT_H
#define POOLFS_CLI_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A process id as poolctl takes it on its command line (--pid N): a decimal number from 1 to
 * INT_MAX (leading blanks allowed, as strtol takes them). True and *pid set, or false. */
bool cli_parse_pid(const char *s, pid_t *pid);

/* "0 B", "1023 B", "1.0 KiB", "1.5 GiB" ... (powers of 1024, one decimal above 1 KiB).
 * Returns the length, or -ERANGE if len is too small. */
int human_size(uint64_t bytes, char *buf, size_t len);

/* What a positive errno `err` means for poolctl command `cmd` ("hold", "release", "refs", "stat",
 * "mkjob", "mkunique") when poolfs gives it a specific meaning, e.g. ENODATA on release: "no hold of
 * yours on this entry". NULL when strerror(err) says it best. */
const char *poolctl_explain(const char *cmd, int err);

#endif
