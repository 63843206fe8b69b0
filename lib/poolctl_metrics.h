/* Internal to poolctl: the `metrics` command, the pools' state and counters in Prometheus's text
 * format (docs/monitoring.md). poolctl.c parses the options and calls poolctl_metrics(). */
#ifndef POOLFS_POOLCTL_METRICS_H
#define POOLFS_POOLCTL_METRICS_H

#include <stdbool.h>

/* The metrics of the pools mounted on the `n` paths, and with `all` of every pool mounted in
 * this mount namespace, to stdout or, with `output`, to that file, replaced at once (a new file
 * renamed over it, so that node_exporter never reads half of one). Returns 0, or 1 if a pool did
 * not answer or the file could not be written (a message on stderr; what could be read is still
 * written, a pool that did not answer as poolfs_up 0). */
int poolctl_metrics(int n, char **paths, bool all, const char *output);

#endif
