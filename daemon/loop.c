// SPDX-License-Identifier: GPL-2.0
/*
 * hbmpoold's event loop on io_uring (see loop.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"

#define TAG_SIG		(HBMD_LOOP_MAX_FDS + 0)
#define TAG_TIMER	(HBMD_LOOP_MAX_FDS + 1)
#define TAG_CANCEL	(HBMD_LOOP_MAX_FDS + 2)
#define RING_ENTRIES	64			/* the fds, the two, the cancel */

uint64_t hbmd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int hbmd_loop_init(struct hbmd_loop *l, bool signals, char *err, size_t errlen)
{
	sigset_t set;
	int ret;

	l->sigfd = -1;
	l->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (l->timerfd < 0) {
		ret = -errno;
		snprintf(err, errlen, "timerfd_create: %s", strerror(errno));
		return ret;
	}
	if (signals) {
		sigemptyset(&set);
		sigaddset(&set, SIGTERM);
		sigaddset(&set, SIGINT);
		sigaddset(&set, SIGHUP);
		if (!sigprocmask(SIG_BLOCK, &set, NULL))
			l->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
		if (l->sigfd < 0) {
			ret = -errno;
			snprintf(err, errlen, "signalfd: %s", strerror(errno));
			close(l->timerfd);
			return ret;
		}
	}
	ret = io_uring_queue_init(RING_ENTRIES, &l->ring, 0);
	if (ret) {
		snprintf(err, errlen, "io_uring_queue_init: %s%s", strerror(-ret),
			 ret == -EPERM ? " (io_uring disabled by kernel.io_uring_disabled?)" : "");
		if (l->sigfd >= 0)
			close(l->sigfd);
		close(l->timerfd);
		return ret;
	}
	return 0;
}

void hbmd_loop_fini(struct hbmd_loop *l)
{
	io_uring_queue_exit(&l->ring);
	if (l->sigfd >= 0)
		close(l->sigfd);
	close(l->timerfd);
}

static int arm_timer(struct hbmd_loop *l, uint64_t deadline_ms)
{
	struct itimerspec its = { 0 };

	if (deadline_ms != UINT64_MAX) {
		its.it_value.tv_sec = (time_t)(deadline_ms / 1000);
		its.it_value.tv_nsec = (long)(deadline_ms % 1000) * 1000000;
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1;	/* 0 would disarm it */
	}
	return timerfd_settime(l->timerfd, TFD_TIMER_ABSTIME, &its, NULL) ? -errno : 0;
}

static void add_poll(struct hbmd_loop *l, int fd, short events, uint64_t tag)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&l->ring);	/* room: RING_ENTRIES */

	io_uring_prep_poll_add(sqe, fd, (unsigned int)events);
	io_uring_sqe_set_data64(sqe, tag);
}

int hbmd_loop_wait(struct hbmd_loop *l, struct pollfd *fds, unsigned int n, uint64_t deadline_ms,
		   int *sig)
{
	unsigned int i, armed = 0, reaped = 0, ready = 0;
	bool cancel_done = false, canceling = false, timer = false, sigready = false;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	uint64_t tag;
	int ret, res;

	*sig = 0;
	if (n > HBMD_LOOP_MAX_FDS)
		return -E2BIG;
	ret = arm_timer(l, deadline_ms);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		fds[i].revents = 0;
		add_poll(l, fds[i].fd, fds[i].events, i);
		armed++;
	}
	if (l->sigfd >= 0) {
		add_poll(l, l->sigfd, POLLIN, TAG_SIG);
		armed++;
	}
	add_poll(l, l->timerfd, POLLIN, TAG_TIMER);
	armed++;
	ret = io_uring_submit(&l->ring);
	if (ret < 0)
		return ret;

	/* Every poll completes once: ready, or canceled once one is. */
	while (reaped < armed || (canceling && !cancel_done)) {
		ret = io_uring_wait_cqe(&l->ring, &cqe);
		if (ret == -EINTR)
			continue;
		if (ret)
			return ret;	/* cannot happen with a sane ring */
		tag = io_uring_cqe_get_data64(cqe);
		res = cqe->res;
		io_uring_cqe_seen(&l->ring, cqe);
		if (tag == TAG_CANCEL) {
			cancel_done = true;
			continue;
		}
		reaped++;
		if (res > 0) {
			if (tag < n) {
				fds[tag].revents = (short)res;
				ready++;
			} else if (tag == TAG_SIG) {
				sigready = true;
			} else {
				timer = true;
			}
		} else if (res < 0 && res != -ECANCELED && tag < n) {
			fds[tag].revents = POLLERR;	/* e.g. a closed descriptor */
			ready++;
		}
		if (!canceling && reaped < armed) {
			sqe = io_uring_get_sqe(&l->ring);
			io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
			io_uring_sqe_set_data64(sqe, TAG_CANCEL);
			ret = io_uring_submit(&l->ring);
			if (ret < 0)
				return ret;
			canceling = true;
		}
	}
	if (timer) {
		uint64_t ticks;

		if (read(l->timerfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
			return -errno;
	}
	if (sigready) {
		struct signalfd_siginfo si;

		if (read(l->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			*sig = (int)si.ssi_signo;
	}
	return (int)ready;
}
