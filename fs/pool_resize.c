/* pool_resize: a file's size against the quotas (SETATTR size, FALLOCATE), with the slow part
 * outside the pool lock. fallocate and ftruncate of a big file take milliseconds on huge pages
 * and hundreds of milliseconds on small ones, and under the lock every request of every user
 * would wait for them (docs/design.md "Locking and threads"). pool_resize runs three steps,
 * dropping the lock between them:
 *   begin  (lock held)  reserves the growth (ENOSPC / EDQUOT before a byte moves);
 *   I/O    (no lock)    backing_resize() or fallocate(2) on the caller's fd;
 *   commit (lock held)  settles the reservation to the outcome.
 * The kernel holds a file's inode lock around both requests, so resizes of one file never
 * overlap; what can run meanwhile (a page-cache write reserving, pool_stat catching up with a
 * passthrough write) only grows the reservation, and the commit gives back what begin reserved
 * only if nothing else changed it since. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/falloc.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "pool_internal.h"

/* A resize's state across its three steps. */
struct pool_resize {
	uint64_t ino;
	uid_t uid;	   /* the file's owner: its store (backing.h) */
	uint64_t end;	   /* the size (truncate) or the end of the range (fallocate) asked */
	uint64_t before;   /* the reservation before begin: given back if the I/O fails */
	uint64_t reserved; /* the reservation begin left */
	bool sets_size;	   /* truncate: the file ends at `end` afterwards */
	const char *payer; /* the memory cgroup the growth is charged to (memcg.h), NULL: ours */
};

/* Reserve per `how` for a resize of file `n` to `end`. 0, -EISDIR, -EFBIG, -ENOSPC or -EDQUOT
 * (then nothing changed). Every 0 is followed by resize_commit(), with the lock dropped for the
 * I/O between (node pointers are stale after it). */
static int resize_begin(struct pool *p, struct node *n, uint64_t end, unsigned how,
			struct pool_resize *rz)
{
	int r;

	if (node_is_dir(n))
		return -EISDIR;
	if (!pool_has_backing(n))
		return -EINVAL;
	if (end > (uint64_t)INT64_MAX)
		return -EFBIG;
	*rz = (struct pool_resize){.ino = n->ino,
				   .uid = n->uid,
				   .end = end,
				   .before = n->reserved,
				   .sets_size = how & POOL_RESIZE_SETS_SIZE};
	if ((how & POOL_RESIZE_GROWS) && end > n->reserved) {
		r = pool_reserve(p, n, end);
		if (r < 0)
			return r;
	}
	rz->reserved = n->reserved;
	pool_backing_changed(n);
	return 0;
}

/* Settle the reservation to the I/O's `result` (0 or negative errno). Returns the node, NULL if
 * it was freed meanwhile. */
static struct node *resize_commit(struct pool *p, const struct pool_resize *rz, int result)
{
	struct node *n = pool_node(p, rz->ino);
	int r = 0;

	if (!n)
		return NULL;
	/* A GETATTR during the I/O may have cached the size half-way. */
	pool_backing_changed(n);
	if (n->life.removed)
		return n; /* destroy() gave the reservation back already */
	if (result < 0) {
		if (n->reserved == rz->reserved)
			r = pool_account(p, n, rz->before);
	} else if (rz->sets_size && rz->end < n->reserved) {
		r = pool_account(p, n, rz->end);
	}
	if (r < 0)
		log_warn("inode %" PRIu64 ": settling the size after a resize: %s", n->ino,
			 strerror(-r));
	return n;
}

static int resize_once(struct pool *p, int fd, const struct pool_resize *rz,
		       const struct pool_fallocate *fa)
{
	if (!fa)
		return backing_resize(fd, rz->end, &p->memcg, rz->payer);
	/* A punched hole allocates nothing: no one to charge. */
	if (fa->mode & FALLOC_FL_PUNCH_HOLE)
		return fallocate(fd, fa->mode, fa->off, fa->len) < 0 ? -errno : 0;
	return backing_fallocate_charged(&p->memcg, rz->payer, fd, fa->mode, fa->off, fa->len);
}

/* What pool_resize was asked, across its tries; the payer's cgroup is read at the first I/O,
 * outside the lock. */
struct resize_ask {
	uint64_t end;
	unsigned how;
	int fd;
	const struct pool_fallocate *fa;
	pid_t payer;
	bool payer_read;
	char cg[PATH_MAX];
};

/* Who refused a try: nobody (it succeeded, or failed otherwise: an I/O error, the caller's
 * memory cgroup), the daemon's count, or the store though the count had reserved it. */
enum refusal { NOT_REFUSED, COUNT_REFUSED, STORE_REFUSED };

/* One try: begin, the I/O outside the lock, commit. */
static int resize_try(struct pool *p, struct node **np, struct resize_ask *ask, enum refusal *why)
{
	struct pool_resize rz;
	int r, fd = ask->fd, own_fd = -1;

	r = resize_begin(p, *np, ask->end, ask->how, &rz);
	*why = r == -ENOSPC || r == -EDQUOT ? COUNT_REFUSED : NOT_REFUSED;
	if (r < 0)
		return r;
	pool_unlock(p);
	if (!ask->fa)
		fault_stall(&p->fault);
	/* Who pays: the caller's memory cgroup. A caller outside our pid namespace (pid 0) or
	 * gone meanwhile cannot: then the daemon does. */
	if (!ask->payer_read) {
		ask->payer_read = true;
		if (ask->payer <= 0 ||
		    memcg_of(&p->memcg, ask->payer, ask->cg, sizeof(ask->cg)) < 0)
			ask->cg[0] = '\0';
	}
	rz.payer = ask->cg[0] ? ask->cg : NULL;
	if (fd < 0)
		fd = own_fd = backing_open_file(&p->backing, rz.uid, rz.ino, O_RDWR);
	r = fd < 0 ? (fd == -ENOENT ? -ESTALE : fd) : resize_once(p, fd, &rz, ask->fa);
	if (own_fd >= 0)
		close(own_fd);
	pool_lock(p);
	*why = r == -ENOSPC ? STORE_REFUSED : NOT_REFUSED;
	*np = resize_commit(p, &rz, r);
	return *np || r < 0 ? r : -ESTALE;
}

int pool_resize(struct pool *p, struct node **np, uint64_t end, unsigned how, int fd,
		const struct pool_fallocate *fa, pid_t payer, struct pool_room *room)
{
	struct resize_ask ask = {.end = end, .how = how, .fd = fd, .fa = fa, .payer = payer};
	uint64_t ino = (*np)->ino;
	enum refusal why;
	int r;

	/* Refused by the count or the store: try again while room comes back (pool_room_wait
	 * decides, and bounds the wait). */
	for (;;) {
		r = resize_try(p, np, &ask, &why);
		if (why == NOT_REFUSED || !pool_room_wait(p, room, why == STORE_REFUSED))
			break;
		*np = pool_node(p, ino);
		if (!*np)
			return -ESTALE;
	}
	/* Still full: passthrough writes the count never saw used the user's store up. */
	if (why == STORE_REFUSED && backing_per_user(&p->backing))
		r = backing_store_full_errno(&p->backing);
	return r;
}

int pool_charge_growth(struct pool *p, pid_t payer, int fd, uint64_t off, uint64_t end)
{
	char cg[PATH_MAX];
	struct stat st;
	int r;

	if (payer <= 0 || memcg_of(&p->memcg, payer, cg, sizeof(cg)) < 0 ||
	    strcmp(cg, p->memcg.self) == 0)
		return 0; /* the daemon pays, as the copy would make it */
	r = backing_fallocate_charged(&p->memcg, cg, fd, FALLOC_FL_KEEP_SIZE, (off_t)off,
				      (off_t)(end - off));
	/* A store without fallocate: the copy allocates, as before. */
	if (r == -EOPNOTSUPP)
		return 0;
	/* What a failed one allocated past the end goes: a truncate to the size it has (the
	 * kernel holds the inode's lock around a WRITE: nothing else grows it meanwhile). */
	if (r < 0 && (fstat(fd, &st) < 0 || ftruncate(fd, st.st_size) < 0))
		log_warn("backing file: could not free a failed allocation: %m");
	return r;
}
