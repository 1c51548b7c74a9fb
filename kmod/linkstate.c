// SPDX-License-Identifier: GPL-2.0
/*
 * The link health state machine.  See linkstate.h.
 *
 *   DOWN --CONNECT--> CONNECTING --UP--> LIVE <--> DEGRADED
 *     ^                   |                |           |
 *     +-------LOST--------+------LOST------+----LOST---+
 *
 * LIVE becomes DEGRADED when the RTT EWMA or the error EWMA crosses its
 * threshold, and comes back when both are below three quarters of theirs
 * (hysteresis, so that a link on the edge does not flap).  Built into the
 * unit test now; the TCP transport links it into the module.
 */
#ifdef __KERNEL__
#include <linux/kernel.h>
#include <linux/string.h>
#endif

#include "linkstate.h"

void hbmpool_lhealth_init(struct hbmpool_lhealth *h)
{
	memset(h, 0, sizeof(*h));
	h->state = HBMPOOL_LSTATE_DOWN;
}

static unsigned int hbmpool_rtt_bucket(u64 ns)
{
	unsigned int b = 0;

	while (ns > 1 && b < HBMPOOL_RTT_BUCKETS - 1) {
		ns >>= 1;
		b++;
	}
	return b;
}

/* EWMA with weight 1/8, as TCP's SRTT; the first sample is taken whole. */
static void hbmpool_rtt_sample(struct hbmpool_lhealth *h, u64 ns)
{
	if (!h->rtt_ewma_ns)
		h->rtt_ewma_ns = ns ?: 1;
	else
		h->rtt_ewma_ns = h->rtt_ewma_ns - (h->rtt_ewma_ns >> 3) + (ns >> 3);
	h->rtt_hist[hbmpool_rtt_bucket(ns)]++;
}

/* Error EWMA in 1/1024 units, weight 1/16. */
static void hbmpool_err_sample(struct hbmpool_lhealth *h, bool failed)
{
	h->err_ewma = h->err_ewma - (h->err_ewma >> 4) + (failed ? 1024 >> 4 : 0);
}

static bool hbmpool_lhealth_bad(const struct hbmpool_lhealth *h,
				const struct hbmpool_lthresholds *t)
{
	return (t->degraded_rtt_ns && h->rtt_ewma_ns > t->degraded_rtt_ns) ||
	       (t->degraded_errors && h->err_ewma > t->degraded_errors);
}

static bool hbmpool_lhealth_good(const struct hbmpool_lhealth *h,
				 const struct hbmpool_lthresholds *t)
{
	return (!t->degraded_rtt_ns || h->rtt_ewma_ns <= t->degraded_rtt_ns / 4 * 3) &&
	       (!t->degraded_errors || h->err_ewma <= t->degraded_errors / 4 * 3);
}

/**
 * hbmpool_lhealth_event - feed what the transport saw
 * @h: the link's health
 * @t: its thresholds
 * @ev: what happened
 * @arg: HBMPOOL_LEV_OK: the request's latency in ns
 *
 * Events that make no sense in the current state (a request completing on
 * a link that is down, say) are counted but move nothing.  Return: whether
 * the state changed.
 */
bool hbmpool_lhealth_event(struct hbmpool_lhealth *h,
			   const struct hbmpool_lthresholds *t,
			   enum hbmpool_lev ev, u64 arg)
{
	enum hbmpool_lstate from = h->state;
	bool live = from == HBMPOOL_LSTATE_LIVE || from == HBMPOOL_LSTATE_DEGRADED;

	switch (ev) {
	case HBMPOOL_LEV_CONNECT:
		if (from == HBMPOOL_LSTATE_DOWN)
			h->state = HBMPOOL_LSTATE_CONNECTING;
		break;
	case HBMPOOL_LEV_UP:
		if (from == HBMPOOL_LSTATE_CONNECTING) {
			h->state = HBMPOOL_LSTATE_LIVE;
			h->attempts = 0;
			h->err_ewma = 0;	/* a new connection starts clean */
		}
		break;
	case HBMPOOL_LEV_LOST:
		if (from != HBMPOOL_LSTATE_DOWN) {
			h->state = HBMPOOL_LSTATE_DOWN;
			if (!live)
				h->attempts++;	/* the attempt failed */
		}
		break;
	case HBMPOOL_LEV_OK:
	case HBMPOOL_LEV_ERROR:
		h->requests++;
		if (ev == HBMPOOL_LEV_ERROR)
			h->errors++;
		if (!live)
			break;
		if (ev == HBMPOOL_LEV_OK)
			hbmpool_rtt_sample(h, arg);
		hbmpool_err_sample(h, ev == HBMPOOL_LEV_ERROR);
		if (from == HBMPOOL_LSTATE_LIVE && hbmpool_lhealth_bad(h, t))
			h->state = HBMPOOL_LSTATE_DEGRADED;
		else if (from == HBMPOOL_LSTATE_DEGRADED && hbmpool_lhealth_good(h, t))
			h->state = HBMPOOL_LSTATE_LIVE;
		break;
	}
	if (h->state == from)
		return false;
	h->flaps++;
	return true;
}

/**
 * hbmpool_lhealth_backoff_ms - how long to wait before the next attempt
 * @h: the link's health
 * @t: its thresholds
 * @random: a random number, for the jitter
 *
 * backoff_min_ms doubled per failed attempt, up to backoff_max_ms, then
 * between half and all of it (jitter, so that nodes that lost one peer
 * together do not all retry at once).
 */
u32 hbmpool_lhealth_backoff_ms(const struct hbmpool_lhealth *h,
			       const struct hbmpool_lthresholds *t, u32 random)
{
	u64 d = t->backoff_min_ms ?: 1;
	u32 i;

	for (i = 0; i < h->attempts && d < t->backoff_max_ms; i++)
		d <<= 1;
	if (d > t->backoff_max_ms)
		d = t->backoff_max_ms;
	return (u32)(d / 2 + random % (d / 2 + 1));
}

const char *hbmpool_lstate_name(enum hbmpool_lstate s)
{
	static const char * const names[] = {
		[HBMPOOL_LSTATE_DOWN] = "down",
		[HBMPOOL_LSTATE_CONNECTING] = "connecting",
		[HBMPOOL_LSTATE_LIVE] = "live",
		[HBMPOOL_LSTATE_DEGRADED] = "degraded",
	};

	return s < ARRAY_SIZE(names) ? names[s] : "?";
}
