/* libpoolfs: the client library of poolfs, a FUSE pool whose files vanish when nothing uses them.
 *
 * This header owns the public C API. Everything here talks to a mounted pool only through files and
 * extended attributes (user.poolfs.hold, user.poolfs.refs, user.poolfs.stat; see docs/interface.md),
 * so it works from any process that can see the mount.
 *
 * Conventions:
 *   - Every call returns 0 on success (or a documented non-negative value, e.g. a file descriptor)
 *     and a negative errno value on failure (-EINVAL, -ENOENT, ...). errno itself is left as the
 *     system calls set it; use the return value.
 *   - Errors shared by every call taking a path: whatever open(2)/stat(2)/xattr calls give for that
 *     path (-ENOENT, -ENOTDIR, -EACCES for another user's entry, -ENAMETOOLONG, -ESTALE for an entry
 *     the pool has just removed, ...).
 *   - -ENOTSUP (== -EOPNOTSUPP on Linux) from the hold/refs/usage calls means "this path is not on a
 *     poolfs pool": the filesystem does not answer user.poolfs.* attributes.
 *   - No call keeps global state; every call is thread-safe.
 *
 * Build with:  cc prog.c $(pkg-config --cflags --libs poolfs)
 */
#ifndef POOLFS_H
#define POOLFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "poolfs_names.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define POOLFS_API __attribute__((visibility("default")))
#else
#define POOLFS_API
#endif

/* ---------------------------------------------------------------------------------------------
 * Holds: keep an entry (and, for a folder, its whole subtree) alive after its last handle and
 * mapping are gone. A hold belongs to the calling user.
 */

enum poolfs_scope {
	/* only in poolfs_refs() output: a scope this library does not know */
	POOLFS_SCOPE_UNKNOWN = -1,
	POOLFS_SCOPE_PIN = 0, /* until released, until the entry is unlinked, or unmount */
	POOLFS_SCOPE_PID,     /* until process `pid` exits */
	POOLFS_SCOPE_PROCESS, /* until the calling process exits */
	POOLFS_SCOPE_SESSION, /* until the caller's session leader exits (the usual choice) */
	POOLFS_SCOPE_CGROUP,  /* until the caller's cgroup v2 group has no process left */
};

/* Take a hold on `path` with `scope`; `pid` is used only with POOLFS_SCOPE_PID (pass 0 otherwise).
 * Several holds may be taken on one entry.
 * Returns 0, or:
 *   -EINVAL   bad scope value, or pid <= 0 with POOLFS_SCOPE_PID (also what the daemon answers to a
 *             scope it does not accept);
 *   -ESRCH    POOLFS_SCOPE_PID and process `pid` does not exist;
 *   -EACCES   the entry belongs to another user;
 *   -ENOPROTOOPT  the pool cannot watch this scope here (it answered EOPNOTSUPP): cgroup without
 *             a cgroup v2 hierarchy or from the root cgroup, or any scope but pin when the daemon
 *             runs without its watchers; POOLFS_SCOPE_PIN always works;
 *   -ENOTSUP  `path` is not on a poolfs pool (checked first, so nothing is written to other
 *             filesystems, which would otherwise store user.poolfs.hold as a plain attribute). */
POOLFS_API int poolfs_hold(const char *path, enum poolfs_scope scope, pid_t pid);

/* Drop all of the caller's holds on `path` (holds on folders above it are not touched).
 * Returns 0, or -ENODATA (the caller has no hold on this entry), -EACCES, -ENOTSUP (not on a pool). */
POOLFS_API int poolfs_release(const char *path);

/* ---------------------------------------------------------------------------------------------
 * References: what keeps an entry alive (user.poolfs.refs).
 */

#define POOLFS_REFS_MAX_HOLDS 16
#define POOLFS_SCOPE_TEXT_MAX 256

struct poolfs_hold_info {
	/* PIN, PID (also how "process" holds are reported), SESSION, CGROUP, or UNKNOWN for a
	 * scope newer than this library; PROCESS (pid 0) only for a daemon that writes a bare
	 * "process" line */
	enum poolfs_scope scope;
	pid_t pid;     /* PID: the process; SESSION: the session leader; else 0 */
	uid_t uid;     /* the owner of the hold */
	int truncated; /* 1 if `text` was cut to fit (a very long cgroup path) */
	/* the scope as the daemon wrote it: "pin", "pid:N", "session:N", "cgroup:/PATH";
	 * NUL-terminated */
	char text[POOLFS_SCOPE_TEXT_MAX];
};

struct poolfs_refs {
	uint64_t opens;	   /* open handles (file or folder handles) on this entry */
	int mapped;	   /* 1 if a memory mapping may still be live */
	int folder;	   /* 1 if the entry is a folder (then `children` is valid) */
	uint64_t children; /* number of child entries (folders only, else 0) */
	uint64_t nholds;   /* total number of holds on this entry (the daemon's count) */
	/* how many of them are described in holds[] (at most POOLFS_REFS_MAX_HOLDS; fewer than
	 * nholds when there are more) */
	unsigned nlisted;
	struct poolfs_hold_info holds[POOLFS_REFS_MAX_HOLDS];
	/* the entry's names (hard links; 0 once unlinked), or 0 from a daemon that does not say.
	 * Last, in what was the struct's tail padding: the struct keeps its size and layout. */
	uint32_t names;
};

/* Read what keeps `path` alive. Returns 0, or -ENOTSUP (not on a pool), -EACCES, -EPROTO (the
 * daemon's answer is not in the documented format: a version mismatch). */
POOLFS_API int poolfs_refs(const char *path, struct poolfs_refs *out);

/* ---------------------------------------------------------------------------------------------
 * Pool usage (user.poolfs.stat).
 */

#define POOLFS_USAGE_MAX_USERS 64

struct poolfs_user_usage {
	uid_t uid;
	uint64_t entries; /* this user's files and folders */
	uint64_t bytes;	  /* bytes reserved for them in the backing store */
	uint64_t meta;	  /* daemon memory for their xattrs and holds (0 from older daemons) */
};

struct poolfs_usage {
	uint64_t entries;	   /* files and folders in the pool (all users) */
	uint64_t bytes;		   /* bytes reserved in the backing store (all users) */
	uint64_t max_size;	   /* pool quota in bytes, 0 if unlimited */
	uint64_t max_user_size;	   /* per-user quota in bytes (data and metadata), 0 if unlimited */
	uint64_t meta;		   /* daemon memory for xattrs and holds (all users) */
	uint64_t max_user_entries; /* files and folders per user, 0 if unlimited */
	uint64_t max_user_meta;	   /* xattr and hold memory per user in bytes, 0 if unlimited */
	char datapath[32];	   /* "pagecache" or "passthrough" (NUL-terminated) */
	/* number of per-user lines the daemon sent (only the caller's own unless the caller is
	 * root) */
	unsigned nusers;
	unsigned nlisted; /* how many are in users[] (at most POOLFS_USAGE_MAX_USERS) */
	struct poolfs_user_usage users[POOLFS_USAGE_MAX_USERS];
};

/* Read the usage of the pool that `path` (its root or any entry in it) belongs to.
 * Returns 0, or -ENOTSUP (not on a pool), -EPROTO (unexpected answer format). */
POOLFS_API int poolfs_usage(const char *path, struct poolfs_usage *out);

/* Write the mountpoint of the pool containing `path` to buf (NUL-terminated): the path is made
 * absolute and canonical (realpath), then walked up while the device number stays the same.
 * Returns 0, or -ERANGE (buf too small), -ENOTSUP (the top of that filesystem is not a poolfs pool),
 * or the errno of realpath/stat. */
POOLFS_API int poolfs_pool_root(const char *path, char *buf, size_t len);

/* ---------------------------------------------------------------------------------------------
 * Unique names and job folders.
 */

/* Create a new file in `dir` named "<prefix><pid>-<tid>-<uuid><suffix>" (joblib's pattern; uuid is a
 * random libuuid in its lowercase 36-character form) with open(O_CREAT | O_EXCL | O_CLOEXEC | flags,
 * mode), retrying with a fresh uuid if the name exists. `flags` must hold an access mode (normally
 * O_RDWR) and may add e.g. O_NONBLOCK; O_DIRECTORY, O_PATH and O_TMPFILE are refused. prefix and
 * suffix may be NULL (empty) and must not contain '/'. If out_path is not NULL the full path is
 * written there (NUL-terminated). On a pool the file is removed as soon as nothing uses it: keep the
 * returned fd open (or take a hold) while it is needed.
 * Returns the new file descriptor (>= 0), or:
 *   -EINVAL        bad flags, or '/' in prefix/suffix;
 *   -ERANGE        out_path is not NULL and len is too small for the path (nothing is created);
 *   -ENAMETOOLONG  the path or the name is too long;
 *   -EEXIST        every name tried existed (practically impossible);
 *   or the errno of open(2). */
POOLFS_API int poolfs_mkunique(const char *dir, const char *prefix, const char *suffix, int flags,
			       mode_t mode, char *out_path, size_t len);

/* Create a folder "job-<uuid>" (mode 0700) in `pool` (the pool root or any folder in it) and take a
 * hold on it with `scope` (`pid` as for poolfs_hold(); POOLFS_SCOPE_SESSION is the usual choice: the
 * folder and everything in it go once the job's session has ended and nothing uses them). The path
 * is written to out_path (NUL-terminated). If the hold cannot be taken the folder is removed again
 * and the hold's error is returned.
 * Returns 0, or -ERANGE (out_path too small; nothing is created), the errno of mkdir(2), or an error
 * of poolfs_hold() (-EINVAL, -ESRCH, -ENOPROTOOPT, -ENOTSUP...). */
POOLFS_API int poolfs_mkjob(const char *pool, enum poolfs_scope scope, pid_t pid, char *out_path,
			    size_t len);

/* ---------------------------------------------------------------------------------------------
 * Typed arrays in numpy's .npy format, mapped with MAP_SHARED, so numpy.load(path, mmap_mode="r")
 * reads what C wrote and C maps what numpy.save() wrote. Only little-endian hosts are supported.
 */

enum poolfs_dtype {
	POOLFS_DTYPE_F8 = 0, /* '<f8'  double */
	POOLFS_DTYPE_F4,     /* '<f4'  float */
	POOLFS_DTYPE_I8,     /* '<i8'  int64_t */
	POOLFS_DTYPE_I4,     /* '<i4'  int32_t */
	POOLFS_DTYPE_I2,     /* '<i2'  int16_t */
	POOLFS_DTYPE_I1,     /* '|i1'  int8_t */
	POOLFS_DTYPE_U8,     /* '<u8'  uint64_t */
	POOLFS_DTYPE_U4,     /* '<u4'  uint32_t */
	POOLFS_DTYPE_U2,     /* '<u2'  uint16_t */
	POOLFS_DTYPE_U1,     /* '|u1'  uint8_t */
	POOLFS_DTYPE_B1,     /* '|b1'  bool stored as one byte, 0 or 1 */
	POOLFS_DTYPE_C16,    /* '<c16' double complex (two doubles: real, imaginary) */
	POOLFS_DTYPE_C8,     /* '<c8'  float complex (two floats) */
	POOLFS_DTYPE_COUNT
};

/* numpy allows 64 dimensions since numpy 2 (32 before). */
#define POOLFS_ARRAY_MAX_DIMS 64

struct poolfs_array {
	/* the first element (page-aligned mapping + header size, which is a multiple of 64 for
	 * files this library or numpy writes); not to be dereferenced when nbytes == 0 */
	void *data;
	size_t nbytes;	 /* bytes of element data: itemsize * nelems */
	size_t nelems;	 /* product of shape (1 for ndim == 0) */
	size_t itemsize; /* bytes per element */
	enum poolfs_dtype dtype;
	int ndim; /* 0 (a scalar) .. POOLFS_ARRAY_MAX_DIMS */
	size_t shape[POOLFS_ARRAY_MAX_DIMS];
	int fortran_order;  /* 1: column-major (first index fastest); 0: C order */
	int writable;	    /* 1 if mapped PROT_READ | PROT_WRITE */
	size_t data_offset; /* where the data starts in the file (the header length) */
	/* private to the library */
	void *map_base;
	size_t map_len;
};

/* Errors of the array calls:
 *   -EINVAL     a bad argument from the caller (NULL, dtype out of range, ndim < 0 or too large,
 *               flags other than O_RDONLY/O_RDWR);
 *   -EPROTO     the file is not a well-formed .npy file: bad magic, truncated or malformed header
 *               (syntax, quoting, missing/duplicate/unknown keys, negative dimension), header over
 *               1 MiB;
 *   -ENOTSUP    a well-formed .npy file using what this library does not map: a dtype outside the
 *               list above (big-endian, structured, strings, objects), a format version other than
 *               1.0/2.0/3.0, more than POOLFS_ARRAY_MAX_DIMS dimensions, or data not aligned for its
 *               element type;
 *   -EOVERFLOW  the shape's size (product * itemsize, plus header) does not fit in size_t/off_t;
 *   -ENODATA    the file is shorter than its header says (truncated, or still being written);
 *   -EEXIST     (create) the file exists;
 *   -ENOSPC / -EDQUOT  (create) the pool or the user's quota is full;
 *   or the errno of open/fstat/pread/ftruncate/mmap. */

/* Create a new .npy file (O_EXCL, mode 0600: never clobbers a file someone may have mapped) for an
 * array of `dtype` with `ndim` dimensions `shape` (may be NULL when ndim == 0), in C order or Fortran
 * order. The header is format 1.0 (2.0 if it would not fit in 65535 bytes) padded with spaces so the
 * data starts at a multiple of 64; the file is extended to its full size (the data reads as zeros)
 * and mapped read-write. On failure the file is removed again. Fill *out; release with
 * poolfs_array_close(). On a pool the file lives while it stays mapped or held: take a hold
 * (poolfs_hold) if readers must find it after you close it. */
POOLFS_API int poolfs_array_create(const char *path, enum poolfs_dtype dtype, int ndim,
				   const size_t *shape, int fortran_order,
				   struct poolfs_array *out);

/* Open an existing .npy file, validate its header (magic, version, the 'descr', 'fortran_order' and
 * 'shape' keys, the file size) and map its data: flags O_RDONLY (PROT_READ) or O_RDWR (PROT_READ |
 * PROT_WRITE, changes are shared with every other mapper). Fill *out. */
POOLFS_API int poolfs_array_open(const char *path, int flags, struct poolfs_array *out);

/* Write a writable array's changes back (msync MS_SYNC; nothing to do for a read-only one).
 * Returns 0, -EINVAL (not an open array), or the errno of msync. */
POOLFS_API int poolfs_array_sync(struct poolfs_array *a);

/* Unmap the array and clear *a. Safe on a zeroed struct or a closed array (returns 0). Returns 0,
 * -EINVAL (a is NULL) or the errno of munmap. */
POOLFS_API int poolfs_array_close(struct poolfs_array *a);

/* The .npy type string of a dtype ("<f8", "|u1"...), or NULL if dtype is out of range. */
POOLFS_API const char *poolfs_dtype_descr(enum poolfs_dtype dtype);

/* The element size in bytes of a dtype, or 0 if dtype is out of range. */
POOLFS_API size_t poolfs_dtype_size(enum poolfs_dtype dtype);

#ifdef __cplusplus
}
#endif

#endif /* POOLFS_H */
