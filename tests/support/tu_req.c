/* One request by path (testutil.h, tu_request): what the table-driven suites (integration's
 * test_access and test_lifetime, faults' test_badinput, stress's test_churn) ask of a pool, a row
 * at a time, made the same way for all of them: the call, its fixed modes and buffers, and its
 * errno as the result. No cmocka here: children of another uid make requests too. */
#include "testutil.h"

int tu_request(const struct tu_req *q)
{
	struct timespec now[2] = {{0, UTIME_NOW}, {0, UTIME_NOW}};
	size_t vlen = q->val ? (q->vlen ? q->vlen : strlen(q->val)) : 0;
	char buf[4096];
	struct stat st;
	long r = -1;

	errno = 0;
	switch (q->op) {
	case TU_REQ_OPEN:
		r = open(q->path, q->flags, 0600);
		if (r >= 0)
			close((int)r);
		break;
	case TU_REQ_STAT:
		r = stat(q->path, &st);
		break;
	case TU_REQ_LSTAT:
		r = lstat(q->path, &st);
		break;
	case TU_REQ_TRUNCATE:
		r = truncate(q->path, q->len);
		break;
	case TU_REQ_UNLINK:
		r = unlink(q->path);
		break;
	case TU_REQ_RMDIR:
		r = rmdir(q->path);
		break;
	case TU_REQ_MKDIR:
		r = mkdir(q->path, 0700);
		break;
	case TU_REQ_RENAME:
		r = rename(q->path, q->to);
		break;
	case TU_REQ_RENAME2:
		r = renameat2(AT_FDCWD, q->path, AT_FDCWD, q->to, (unsigned)q->flags);
		break;
	case TU_REQ_LINK:
		r = link(q->path, q->to);
		break;
	case TU_REQ_GETXATTR:
		r = getxattr(q->path, q->name, buf, sizeof(buf));
		break;
	case TU_REQ_SETXATTR:
		r = setxattr(q->path, q->name, q->val, vlen, 0);
		break;
	case TU_REQ_LISTXATTR:
		r = listxattr(q->path, buf, sizeof(buf));
		break;
	case TU_REQ_REMOVEXATTR:
		r = removexattr(q->path, q->name);
		break;
	case TU_REQ_CHMOD:
		r = chmod(q->path, 0600);
		break;
	case TU_REQ_UTIMENS:
		r = utimensat(AT_FDCWD, q->path, now, 0);
		break;
	case TU_REQ_ACCESS:
		r = access(q->path, q->flags);
		break;
	case TU_REQ_MKFIFO:
		r = mkfifo(q->path, 0600);
		break;
	case TU_REQ_BIND:
	case TU_REQ_CONNECT:
		r = tu_unix_socket(q->path, q->op == TU_REQ_BIND ? TU_SOCK_BIND : TU_SOCK_CONNECT);
		if (r >= 0)
			close((int)r);
		break;
	default:
		return EINVAL; /* no such request: the row is wrong */
	}
	return r == -1 ? errno : 0;
}
