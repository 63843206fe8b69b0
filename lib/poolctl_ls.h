/* Internal to poolctl: the `ls` command, listing pool entries like `ls -l` with why each is alive
 * (docs/interface.md, "poolctl ls"). poolctl.c parses the options and calls poolctl_ls(). */
#ifndef POOLFS_POOLCTL_LS_H
#define POOLFS_POOLCTL_LS_H

#include <stdbool.h>

/* List each of the `n` paths (a folder: its entries; "." when n is 0) on stdout, as text or as
 * one JSON array. Returns 0, or 1 if some path could not be listed (a message on stderr). */
int poolctl_ls(int n, char **paths, bool json);

#endif
