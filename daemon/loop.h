/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hbmpoold's event loop on io_uring (liburing): one wait covers a set of
 * descriptors (the etcd watch's sockets, the control socket...), the
 * signals the daemon handles (a signalfd: SIGTERM, SIGINT, SIGHUP) and a
 * deadline (a timerfd on CLOCK_MONOTONIC: lease renewals, the watchdog).
 *
 * The set of descriptors changes from one wait to the next (curl opens and
 * closes sockets), so each wait arms one poll request per descriptor and,
 * once something is ready, cancels the others and reaps every completion
 * before it returns: nothing stays armed between two waits.
 */
#ifndef HBMPOOLD_LOOP_H
#define HBMPOOLD_LOOP_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include <liburing.h>

#define HBMD_LOOP_MAX_FDS	60

struct hbmd_loop {
	struct io_uring ring;
	int sigfd;			/* -1 without signals */
	int timerfd;
};

/*
 * signals: block SIGTERM, SIGINT and SIGHUP and take them through a
 * signalfd (the caller's other threads, if any, must block them too).
 * Returns 0 or -errno with the reason in err.
 */
int hbmd_loop_init(struct hbmd_loop *l, bool signals, char *err, size_t errlen);
void hbmd_loop_fini(struct hbmd_loop *l);

/* CLOCK_MONOTONIC in ms, the clock of every deadline. */
uint64_t hbmd_now_ms(void);

/*
 * Wait until one of the n descriptors is ready (fds[i].revents set, as
 * poll() does), a signal arrives (*sig, else 0) or the clock reaches
 * deadline_ms (UINT64_MAX: no deadline).  Returns how many descriptors
 * are ready, or -errno (-E2BIG: more than HBMD_LOOP_MAX_FDS).
 */
int hbmd_loop_wait(struct hbmd_loop *l, struct pollfd *fds, unsigned int n, uint64_t deadline_ms,
		   int *sig);

#endif /* HBMPOOLD_LOOP_H */
