/* holds_support: links, testutil.h's struct chan carrying ints up (pids, "ready" marks) from
 * children and grandchildren and "go" bytes down from the test. */
#include <errno.h>
#include <unistd.h>

#include "holdtest.h"

void link_far_end(struct chan *l)
{
	close(l->up[0]);
	close(l->down[1]);
	l->up[0] = l->down[1] = -1;
}

void link_drop(struct chan *l)
{
	for (int i = 0; i < 2; i++) {
		if (l->up[i] >= 0)
			close(l->up[i]);
		if (l->down[i] >= 0)
			close(l->down[i]);
		l->up[i] = l->down[i] = -1;
	}
}

void link_near_end(struct chan *l)
{
	close(l->up[1]);
	close(l->down[0]);
	l->up[1] = l->down[0] = -1;
}

void link_close_near(struct chan *l)
{
	link_drop(l);
}

int link_send(struct chan *l, int v)
{
	return write(l->up[1], &v, sizeof(v)) == (ssize_t)sizeof(v) ? 0 : -EPIPE;
}

int link_recv(struct chan *l, int *v, int timeout_ms)
{
	int r = fd_wait_readable(l->up[0], timeout_ms);

	if (r < 0)
		return r;
	return read(l->up[0], v, sizeof(*v)) == (ssize_t)sizeof(*v) ? 0 : -EPIPE;
}

int link_wait_go(struct chan *l)
{
	return chan_get(l->down[0], 10 * CHILD_MS);
}
