/* idle_halt: whether this machine is a VM whose idle CPUs halt at once (the haltpoll cpuidle
 * driver with its polling off), read from sysfs, so that the daemon can say so once at start.
 * There a request that wakes the daemon, or the answer that wakes its caller, on an idle CPU
 * waits for the host to run that CPU again, and small-file work runs several times slower than
 * with polling (docs/performance.md "Tuning a node"). The setting is the machine's: the daemon
 * reads it and never changes it. Needs no FUSE and no pool. */
#ifndef POOLFS_IDLE_HALT_H
#define POOLFS_IDLE_HALT_H

/* Below the sysfs mount. */
#define IDLE_HALT_DRIVER "/devices/system/cpu/cpuidle/current_driver"
#define IDLE_HALT_POLL_NS "/module/haltpoll/parameters/guest_halt_poll_ns"

/* 1 if `sysfs` (the sysfs mount: "/sys") shows the haltpoll cpuidle driver with
 * guest_halt_poll_ns 0, 0 if it shows another driver or polling on, or a negative errno:
 * -ENOENT where a file is missing (no cpuidle driver, a container without them), -EINVAL for a
 * value that is not a number. */
int idle_halt_at_once(const char *sysfs);

#endif
