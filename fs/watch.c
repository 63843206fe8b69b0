/* watch: the epoll thread (see watch.h). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fault.h"
#include "log.h"
#include "watch.h"

struct registration {
	int fd;
	watch_fn fn;
	void *ctx;
	struct registration *next;
};

struct watch {
	int epfd;
	int stop_fd; /* eventfd: wakes the loop to stop */
	pthread_t thread;
	bool started;
	pthread_mutex_t regs_lock; /* guards the registration list (add from any thread) */
	struct registration *regs;
};

static void *watch_loop(void *arg)
{
	struct watch *w = arg;
	struct epoll_event ev[16];

	for (;;) {
		int n = epoll_wait(w->epfd, ev, 16, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_error("watch loop: epoll_wait: %m");
			return NULL;
		}
		for (int i = 0; i < n; i++) {
			struct registration *r = ev[i].data.ptr;
			if (!r)
				return NULL; /* the stop eventfd */
			r->fn(r->ctx, r->fd);
		}
	}
}

int watch_start(struct watch **out)
{
	struct watch *w = fault_calloc(1, sizeof(*w));
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
	int r;

	if (!w)
		return -ENOMEM;
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	w->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_mutex_init(&w->regs_lock, NULL);
	if (w->epfd < 0 || w->stop_fd < 0 ||
	    epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->stop_fd, &ev) < 0) {
		r = -errno;
		goto fail;
	}
	r = -pthread_create(&w->thread, NULL, watch_loop, w);
	if (r < 0)
		goto fail;
	w->started = true;
	*out = w;
	return 0;
fail:
	watch_stop(w);
	return r;
}

int watch_add(struct watch *w, int fd, watch_fn fn, void *ctx)
{
	struct registration *r = fault_calloc(1, sizeof(*r));
	struct epoll_event ev = {.events = EPOLLIN};

	if (!r)
		return -ENOMEM;
	r->fd = fd;
	r->fn = fn;
	r->ctx = ctx;
	ev.data.ptr = r;
	pthread_mutex_lock(&w->regs_lock);
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int e = -errno;
		pthread_mutex_unlock(&w->regs_lock);
		free(r);
		return e;
	}
	r->next = w->regs;
	w->regs = r;
	pthread_mutex_unlock(&w->regs_lock);
	return 0;
}

void watch_del(struct watch *w, int fd)
{
	pthread_mutex_lock(&w->regs_lock);
	for (struct registration **pp = &w->regs; *pp; pp = &(*pp)->next) {
		if ((*pp)->fd == fd) {
			struct registration *r = *pp;
			*pp = r->next;
			epoll_ctl(w->epfd, EPOLL_CTL_DEL, fd, NULL);
			free(r);
			break;
		}
	}
	pthread_mutex_unlock(&w->regs_lock);
}

void watch_stop(struct watch *w)
{
	if (!w)
		return;
	if (w->started) {
		uint64_t one = 1;
		if (write(w->stop_fd, &one, sizeof(one)) != sizeof(one))
			log_warn("watch loop: cannot wake it to stop: %m");
		pthread_join(w->thread, NULL);
	}
	while (w->regs) {
		struct registration *r = w->regs;
		w->regs = r->next;
		free(r);
	}
	if (w->epfd >= 0)
		close(w->epfd);
	if (w->stop_fd >= 0)
		close(w->stop_fd);
	pthread_mutex_destroy(&w->regs_lock);
	free(w);
}
