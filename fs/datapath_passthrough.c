/* datapath_passthrough: the zero-copy data path (docs/design.md "Data paths"), libfuse >= 3.17, Linux >= 6.9.
 *
 * Each file's backing tmpfs file is registered once (one backing_id per inode, shared by its
 * opens) and the kernel sends read/write/mmap straight to it; a small file opened read-only goes
 * through the page cache instead. RELEASE then comes at close() even while mappings live, so
 * after the last release the node is "maybe mapped" until proven free (mapping_proof.c), unless
 * every handle since it was last known unmapped was write-only: mmap needs a readable file, so
 * then there is nothing to prove. Writes and stores through passthrough bypass the daemon: each
 * file with such a handle is in the pool's `unseen` set until its size is read once nothing can
 * change it (the last RELEASE, or the proof of its last mapping's end), so that usage is counted
 * without re-reading every file (docs/design.md "Work that grows with the pool"). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datapath.h"
#include "log.h"
#include "mapping_proof.h"

static int passthrough_init(struct pool *p, struct fuse_conn_info *conn)
{
	(void)p;
	if (!(conn->capable & FUSE_CAP_PASSTHROUGH))
		return -EOPNOTSUPP;
	fuse_set_feature_flag(conn, FUSE_CAP_PASSTHROUGH);
	/* Passthrough and the writeback cache exclude each other. */
	fuse_unset_feature_flag(conn, FUSE_CAP_WRITEBACK_CACHE);
	/* Page-cache handles never share a file with passthrough ones, and their first open drops
	 * what a passthrough handle went around (keep_cache): the kernel need not drop the cache
	 * when it sees mtime move, which would throw away what cache_push put there. */
	fuse_unset_feature_flag(conn, FUSE_CAP_AUTO_INVAL_DATA);
	/* The backing tmpfs is not stacked: one level (us) on top of it. Without a depth > 0 the
	 * kernel silently turns passthrough off. */
	conn->max_backing_stack_depth = 1;
	return 0;
}

/* Below this size a read-only first open takes the page cache instead of passthrough. */
#define CACHED_OPEN_MAX ((off_t)1 << 20)

/* Up to this size a file's first cached open hands the kernel its content (cache_push). A READ
 * would copy the same bytes, one round trip later; the bound keeps what the opener may never
 * read, and the pool lock's hold, small. */
#define CACHE_PUSH_MAX ((size_t)64 << 10)

/* Which way the handles of `n` go, chosen by its first open (the kernel refuses to mix the two
 * on one inode): a small file opened read-only is read through the daemon and the page cache,
 * like on the page-cache path. Then the kernel sends RELEASE only after the last mapping, so its
 * last close needs no registration, no lease probe and no close event: what `grep -r` over a
 * tree pays per file. Big files and every writer keep zero-copy passthrough, and so does a file
 * a passthrough mapping may still use: a page-cache reader would not see its stores. *size is
 * the file's size where a first open read it, else -1. */
static bool open_cached(struct node *n, int fd, const struct fuse_file_info *fi, off_t *size)
{
	struct stat st;

	*size = -1;
	if (n->life.opens > 1)
		return n->io_cached;
	if ((fi->flags & O_ACCMODE) != O_RDONLY || n->life.maybe_mapped)
		return false;
	/* An idle file's size is in its node (pool_stat filled it at the LOOKUP): no fstat. */
	if (n->battr_valid)
		*size = n->battr.st_size;
	else if (fstat(fd, &st) == 0)
		*size = st.st_size;
	return *size >= 0 && *size < CACHED_OPEN_MAX;
}

/* Give the kernel's page cache of `n` the whole file, `size` bytes of `fd`, before the answer to
 * its first cached open: the read that follows finds it there instead of asking with a READ, a
 * round trip that `grep -r` and a data loader's first epoch pay per file (docs/design.md
 * "Passthrough path"). Only where the cache is empty (cache_used unset) and this open is the
 * only handle: the store then overwrites nothing and meets no page that a reader holds locked
 * while it waits for a READ (one queued behind this very request on its io_uring ring would
 * never be served); the pool lock, held, keeps every other open out until the answer. The
 * buffer is on the stack (a request thread's is RLIMIT_STACK's, 8 MiB by default), not a malloc
 * under the lock. 0, or a negative errno: the first read then asks, as it would without. */
static int cache_push(struct pool *p, struct node *n, int fd, off_t size)
{
	char buf[CACHE_PUSH_MAX];
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT((size_t)size);
	ssize_t got;

	got = pread(fd, buf, (size_t)size, 0);
	if (got < 0)
		return -errno;
	if (got != size)
		return -EAGAIN; /* an idle file cannot change its size: not seen */
	bv.buf[0].mem = buf;
	return fuse_lowlevel_notify_store(p->session, n->ino, 0, &bv, 0);
}

static int passthrough_open(struct pool *p, struct node *n, fuse_req_t req, int fd, int *spare_id,
			    struct fuse_file_info *fi)
{
	off_t size;
	int r;

	n->io_cached = open_cached(n, fd, fi, &size);
	if (n->io_cached) {
		/* The cache is dropped only if a passthrough handle was opened since it was filled
		 * (its writes and mapped stores bypass it): an unchanged file is read again from
		 * the cache, with no READ and no stale atime (docs/design.md "Caching"). */
		fi->keep_cache = n->cache_fresh;
		if (!n->cache_used && n->life.opens == 1 && size > 0 &&
		    (size_t)size <= CACHE_PUSH_MAX) {
			r = cache_push(p, n, fd, size);
			if (r == 0)
				fi->keep_cache = 1; /* the cache holds what was just put there */
			else
				log_debug("inode %" PRIu64 ": page cache not filled at open: %s",
					  n->ino, strerror(-r));
		}
		n->cache_fresh = true;
		n->cache_used = true;
		return 0;
	}
	n->cache_fresh = false;
	r = pool_unseen_track(p, n);
	if (r < 0)
		return r;
	if ((fi->flags & O_ACCMODE) != O_WRONLY)
		n->may_map = true;
	if (!n->backing_id && *spare_id > 0) {
		n->backing_id = *spare_id;
		*spare_id = 0;
	} else if (!n->backing_id) {
		int id = fuse_passthrough_open(req, fd);
		if (id <= 0) {
			log_error("registering the backing file of inode %" PRIu64 " failed (%d)",
				  n->ino, id);
			return id < 0 ? id : -EIO;
		}
		n->backing_id = id;
	}
	fi->backing_id = n->backing_id;
	fi->keep_cache = 0;
	return 0;
}

/* FUSE_DEV_IOC_BACKING_CLOSE from <linux/fuse.h> >= 6.9 (bookworm's headers predate it). */
#ifndef FUSE_DEV_IOC_BACKING_CLOSE
#define FUSE_DEV_IOC_BACKING_CLOSE _IOW(229, 2, uint32_t)
#endif

/* Drop the kernel's registration of a backing file. fuse_passthrough_close() wants a request,
 * but the last release may come after a reply failed and its request was freed: the
 * registration belongs to the connection, so the session's device fd serves as well. */
static int backing_unregister(struct pool *p, int backing_id)
{
	uint32_t id = (uint32_t)backing_id;

	if (ioctl(fuse_session_fd(p->session), FUSE_DEV_IOC_BACKING_CLOSE, &id) < 0)
		return -errno;
	return 0;
}

/* RELEASE's last handle, in three steps (datapath.h): the registration is dropped and the node
 * probed outside the lock, so that the next LOOKUP or OPEN does not wait behind an ioctl, an
 * open, two fcntl and a close. The probe often comes a moment too early (the closing process's
 * backing file goes just after RELEASE): the soon list and that file's close event follow. It
 * still runs, because the close event may have come first, while the handle was open, and
 * because every moment the entry stays "maybe mapped" after its last close is a moment it stays
 * listed with nothing using it. */
static void passthrough_release_begin(struct pool *p, struct node *n, struct dp_release *rel)
{
	(void)p;
	if (n->io_cached) {
		/* Page-cache handles: RELEASE came after the last mapping, nothing to prove. */
		n->io_cached = false;
		*rel = (struct dp_release){.pending = false};
		return;
	}
	/* Only write-only handles since the file was last known unmapped: none could map it (mmap
	 * needs a readable file), so there is nothing to prove, only the registration to drop. */
	*rel = (struct dp_release){.pending = true,
				   .probe = n->life.maybe_mapped || n->may_map,
				   .ino = n->ino,
				   .uid = n->uid,
				   .open_gen = n->open_gen,
				   .usage_gen = n->usage_gen,
				   .was_watched = n->close_watched,
				   .backing_id = n->backing_id};
	/* An OPEN while we work registers anew instead of reusing what we drop. */
	n->backing_id = 0;
	if (rel->probe) {
		if (!n->life.maybe_mapped)
			poolstats_gauge(&p->stats.maybe_mapped, 1);
		n->life.maybe_mapped = true;
		n->may_map = false; /* now part of maybe_mapped, until proven free */
	}
}

static void passthrough_release_io(struct pool *p, struct dp_release *rel)
{
	if (rel->backing_id) {
		int r = backing_unregister(p, rel->backing_id);
		if (r < 0)
			log_warn("closing the backing registration of inode %" PRIu64 ": %s",
				 rel->ino, strerror(-r));
	}
	if (rel->probe) {
		rel->busy = proof_probe(p, rel->uid, rel->ino);
		/* Still in use: have its last close reported, then look again, since that close
		 * may have come between the probe and the mark. */
		if (rel->busy) {
			rel->watch_added = proof_watch_file(p, rel->uid, rel->ino);
			rel->busy = proof_probe(p, rel->uid, rel->ino);
		}
	}
	/* No handle and no mapping left: the size writes may have moved unseen is final now. */
	if (!rel->busy) {
		struct stat st;

		rel->sized = backing_stat(&p->backing, rel->uid, rel->ino, &st) == 0;
		rel->size = rel->sized ? (uint64_t)st.st_size : 0;
	}
}

static void passthrough_release_commit(struct pool *p, struct node *n, const struct dp_release *rel)
{
	if (n && rel->watch_added) {
		n->close_watched = true;
		if (!n->life.maybe_mapped)
			/* proven free meanwhile, before the mark was noted */
			proof_unwatch_file(p, n);
	}
	/* Nothing was proven (write-only handles); or freed, opened again since (its own release
	 * probes), or proven free by a close event: nothing to do for the proof. */
	if (rel->probe && n && proof_waiting(n) && n->open_gen == rel->open_gen) {
		if (!rel->busy)
			proof_set_free(p, n, false); /* free at its last close: removed for that */
		else
			/* Usually the closing process's backing file is still going: its close
			 * event, which follows, or the first re-probe proves the node free. A
			 * mark this release made may have come after that close: doubtful. */
			proof_soon_add(p, n->ino, !rel->was_watched);
	}
	if (n && rel->sized)
		pool_unseen_released(p, n, rel->size, rel->usage_gen, rel->open_gen);
}

/* OPEN and CREATE, before the lock: a read-only handle may go through the page cache
 * (open_cached decides under the lock, and registers there if it must); any other needs a
 * registration unless the file has one already, which only the lock can tell: made here, and
 * dropped after the lock if it was not needed. */
static int passthrough_register_early(struct pool *p, fuse_req_t req, int fd, int flags)
{
	int id;

	(void)p;
	if ((flags & O_ACCMODE) == O_RDONLY)
		return 0;
	id = fuse_passthrough_open(req, fd);
	if (id <= 0) {
		log_error("registering a new backing file failed (%d)", id);
		return id < 0 ? id : -EIO;
	}
	return id;
}

static void passthrough_unregister(struct pool *p, int backing_id)
{
	int r = backing_unregister(p, backing_id);

	if (r < 0)
		log_warn("closing an unused backing registration: %s", strerror(-r));
}

const struct datapath datapath_passthrough = {
	.name = "passthrough",
	.init = passthrough_init,
	.start = proof_start,
	.stop = proof_stop,
	.open = passthrough_open,
	.register_early = passthrough_register_early,
	.unregister = passthrough_unregister,
	.release_begin = passthrough_release_begin,
	.release_io = passthrough_release_io,
	.release_commit = passthrough_release_commit,
	.prove_now = proof_recheck_now,
};
