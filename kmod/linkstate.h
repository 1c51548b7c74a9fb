/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The health of a link to a remote node, as pure logic: its state machine
 * (connecting, live, degraded, down), its round-trip time (an EWMA, as
 * TCP's SRTT, and a log2 histogram), its error rate, and the delay before
 * the next reconnection attempt (exponential backoff with jitter).  The
 * transports feed it what they see; the core publishes the state.  Built
 * into the module and into a user-space unit test
 * (selftests/unit/linkstate_unit.c); nothing here sleeps, locks or
 * allocates: the caller serialises.
 */
#ifndef _HBMPOOL_LINKSTATE_H
#define _HBMPOOL_LINKSTATE_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include "wire_user.h"	/* selftests/unit/: the unit test's stand-ins */
#endif

#define HBMPOOL_RTT_BUCKETS	32	/* bucket i: [2^i, 2^(i+1)) ns */

enum hbmpool_lstate {
	HBMPOOL_LSTATE_DOWN,		/* no connection; waiting to retry */
	HBMPOOL_LSTATE_CONNECTING,	/* connecting or in the handshake */
	HBMPOOL_LSTATE_LIVE,
	HBMPOOL_LSTATE_DEGRADED,	/* live, but slow or failing often */
};

enum hbmpool_lev {
	HBMPOOL_LEV_CONNECT,	/* an attempt starts */
	HBMPOOL_LEV_UP,		/* the handshake completed */
	HBMPOOL_LEV_LOST,	/* the connection failed or closed */
	HBMPOOL_LEV_OK,		/* a request completed; arg: its latency in ns */
	HBMPOOL_LEV_ERROR,	/* a request failed (timeouts included) */
};

/* When a live link counts as degraded, and when it is healthy again. */
struct hbmpool_lthresholds {
	u64 degraded_rtt_ns;	/* RTT EWMA above this: degraded */
	u32 degraded_errors;	/* error EWMA, per 1024 requests, above this: degraded */
	u32 backoff_min_ms;	/* first retry delay */
	u32 backoff_max_ms;	/* the delay doubles up to this */
};

struct hbmpool_lhealth {
	enum hbmpool_lstate state;
	u64 rtt_ewma_ns;	/* 0 until the first sample */
	u32 err_ewma;		/* failed requests per 1024, smoothed */
	u32 attempts;		/* failed attempts since the last success */
	u64 requests, errors, flaps;
	u64 rtt_hist[HBMPOOL_RTT_BUCKETS];
};

void hbmpool_lhealth_init(struct hbmpool_lhealth *h);
bool hbmpool_lhealth_event(struct hbmpool_lhealth *h,
			   const struct hbmpool_lthresholds *t,
			   enum hbmpool_lev ev, u64 arg);
u32 hbmpool_lhealth_backoff_ms(const struct hbmpool_lhealth *h,
			       const struct hbmpool_lthresholds *t, u32 random);
const char *hbmpool_lstate_name(enum hbmpool_lstate s);

#endif /* _HBMPOOL_LINKSTATE_H */
