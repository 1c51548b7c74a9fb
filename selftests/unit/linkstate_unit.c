// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of the link health state machine (kmod/linkstate.c), built for
 * user space: the transitions of a link's life (connect, up, lost, retry),
 * degradation by latency and by errors with hysteresis, the RTT EWMA and
 * histogram, events that make no sense in a state, and the backoff with
 * its bounds and jitter.  TAP output.
 */
#include <stdarg.h>
#include <stdio.h>

#include "linkstate.h"
#include "tap.h"


static const struct hbmpool_lthresholds thr = {
	.degraded_rtt_ns = 1000000,	/* 1 ms */
	.degraded_errors = 102,		/* ~10 % */
	.backoff_min_ms = 100,
	.backoff_max_ms = 10000,
};

static void test_life(void)
{
	struct hbmpool_lhealth h;

	hbmpool_lhealth_init(&h);
	ok(h.state == HBMPOOL_LSTATE_DOWN, "a new link is down");
	ok(!hbmpool_lhealth_event(&h, &thr, HBMPOOL_LEV_UP, 0) && h.state == HBMPOOL_LSTATE_DOWN,
	   "up without an attempt moves nothing");
	ok(hbmpool_lhealth_event(&h, &thr, HBMPOOL_LEV_CONNECT, 0) &&
	   h.state == HBMPOOL_LSTATE_CONNECTING, "connect: connecting");
	ok(hbmpool_lhealth_event(&h, &thr, HBMPOOL_LEV_LOST, 0) &&
	   h.state == HBMPOOL_LSTATE_DOWN && h.attempts == 1, "a failed attempt: down, counted");
	hbmpool_lhealth_event(&h, &thr, HBMPOOL_LEV_CONNECT, 0);
	ok(hbmpool_lhealth_event(&h, &thr, HBMPOOL_LEV_UP, 0) && h.state == HBMPOOL_LSTATE_LIVE &&
	   h.attempts == 0, "handshake done: live, attempts reset");
	ok(!hbmpool_lhealth_event(&h, &thr, HBMPOOL_LEV_OK, 50000) && h.rtt_ewma_ns == 50000,
	   "the first sample sets the RTT");
	ok(h.rtt_hist[15] == 1, "50 us lands in bucket 15 ([32768, 65536) ns)");
	ok(hbmpool_lhealth_event(&h, &thr, HBMPOOL_LEV_LOST, 0) && h.state == HBMPOOL_LSTATE_DOWN &&
	   h.attempts == 0, "a live link lost: down, not a failed attempt");
	ok(!hbmpool_lhealth_event(&h, &thr, HBMPOOL_LEV_OK, 1) && h.requests == 2 &&
	   h.rtt_hist[0] == 0, "a completion on a down link is counted, not sampled");
	ok(h.flaps == 5, "every change of state is a flap (%llu)", (unsigned long long)h.flaps);
}

static void test_degraded(void)
{
	struct hbmpool_lhealth h;
	int i, n;

	hbmpool_lhealth_init(&h);
	hbmpool_lhealth_event(&h, &thr, HBMPOOL_LEV_CONNECT, 0);
	hbmpool_lhealth_event(&h, &thr, HBMPOOL_LEV_UP, 0);
	for (i = 0; i < 100; i++)
		hbmpool_lhealth_event(&h, &thr, HBMPOOL_LEV_OK, 100000);
	ok(h.state == HBMPOOL_LSTATE_LIVE, "100 us requests: live");
	for (n = 0; n < 100 && h.state == HBMPOOL_LSTATE_LIVE; n++)
		hbmpool_lhealth_event(&h, &thr, HBMPOOL_LEV_OK, 5000000);
	ok(h.state == HBMPOOL_LSTATE_DEGRADED && n > 1 && n < 30,
	   "5 ms requests: degraded after %d of them (smoothed, not at once)", n);
	for (n = 0; n < 200 && h.state == HBMPOOL_LSTATE_DEGRADED; n++)
		hbmpool_lhealth_event(&h, &thr, HBMPOOL_LEV_OK, 900000);
	ok(h.state == HBMPOOL_LSTATE_DEGRADED,
	   "0.9 ms requests (under the threshold, over 3/4 of it): still degraded");
	for (n = 0; n < 200 && h.state == HBMPOOL_LSTATE_DEGRADED; n++)
		hbmpool_lhealth_event(&h, &thr, HBMPOOL_LEV_OK, 100000);
	ok(h.state == HBMPOOL_LSTATE_LIVE, "100 us again: live after %d", n);

	for (i = 0; i < 200; i++)
		hbmpool_lhealth_event(&h, &thr, i % 50 ? HBMPOOL_LEV_OK : HBMPOOL_LEV_ERROR, 100000);
	ok(h.state == HBMPOOL_LSTATE_LIVE, "2 %% of requests failing: live (err %u/1024)", h.err_ewma);
	for (n = 0; n < 100 && h.state == HBMPOOL_LSTATE_LIVE; n++)
		hbmpool_lhealth_event(&h, &thr, n % 2 ? HBMPOOL_LEV_OK : HBMPOOL_LEV_ERROR, 100000);
	ok(h.state == HBMPOOL_LSTATE_DEGRADED, "half failing: degraded after %d", n);
	for (n = 0; n < 500 && h.state == HBMPOOL_LSTATE_DEGRADED; n++)
		hbmpool_lhealth_event(&h, &thr, HBMPOOL_LEV_OK, 100000);
	ok(h.state == HBMPOOL_LSTATE_LIVE && n > 5, "all succeeding: live again after %d", n);
	hbmpool_lhealth_event(&h, &thr, HBMPOOL_LEV_LOST, 0);
	hbmpool_lhealth_event(&h, &thr, HBMPOOL_LEV_CONNECT, 0);
	hbmpool_lhealth_event(&h, &thr, HBMPOOL_LEV_UP, 0);
	ok(h.err_ewma == 0, "a new connection starts with no error history");
}

static void test_backoff(void)
{
	struct hbmpool_lhealth h;
	u32 lo = ~0U, hi = 0;

	hbmpool_lhealth_init(&h);
	ok(hbmpool_lhealth_backoff_ms(&h, &thr, 0) == 50 &&
	   hbmpool_lhealth_backoff_ms(&h, &thr, 50) == 100,
	   "no failed attempt: 50..100 ms (half to all of the minimum)");
	h.attempts = 3;
	ok(hbmpool_lhealth_backoff_ms(&h, &thr, 0) == 400 &&
	   hbmpool_lhealth_backoff_ms(&h, &thr, 400) == 800, "3 failed attempts: 400..800 ms");
	h.attempts = 40;
	for (u32 r = 0; r < 100000; r += 7) {
		u32 d = hbmpool_lhealth_backoff_ms(&h, &thr, r * 2654435761U);

		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
	}
	ok(lo >= 5000 && hi <= 10000 && hi > lo,
	   "many failed attempts: capped, jittered within [5000, 10000] ms (%u..%u)", lo, hi);
	ok(!strcmp(hbmpool_lstate_name(HBMPOOL_LSTATE_DEGRADED), "degraded"), "state names");
}

int main(void)
{
	test_life();
	test_degraded();
	test_backoff();
	return tap_finish();
}
