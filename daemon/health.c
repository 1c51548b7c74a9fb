// SPDX-License-Identifier: GPL-2.0
/*
 * The health of this node's links, as pure logic: see health.h.
 */
#include <errno.h>
#include <string.h>

#include "config.h"
#include "health.h"

void hbm_health_conf_from(struct hbm_health_conf *hc, const struct hbm_config *c)
{
	uint64_t w = c->health_interval_ms ?
		     (c->error_window_ms + c->health_interval_ms - 1) / c->health_interval_ms : 1;

	memset(hc, 0, sizeof(*hc));
	hc->interval_ms = c->health_interval_ms;
	hc->degraded_rtt_ns = (uint64_t)c->degraded_rtt_us * 1000;
	hc->degraded_error_pct = c->degraded_error_pct;
	hc->down_error_pct = c->down_error_pct;
	hc->window = w < 1 ? 1 : w > HBM_HEALTH_WINDOW_MAX ? HBM_HEALTH_WINDOW_MAX : (unsigned int)w;
	hc->degrade_after = c->degrade_after;
	hc->down_after = c->down_after;
	hc->recover_after = c->recover_after;
	hc->hold_ms = c->hold_ms;
}

void hbm_health_init(struct hbm_link_health *h)
{
	memset(h, 0, sizeof(*h));
	h->state = HBM_HEALTH_UP;
}

/* cur - prev of a cumulative counter; *reset when it went back. */
static uint64_t delta(uint64_t cur, uint64_t prev, bool *reset)
{
	if (cur < prev)
		*reset = true;
	return cur - prev;
}

static unsigned int window_size(const struct hbm_health_conf *c)
{
	if (!c->window)
		return 1;
	return c->window > HBM_HEALTH_WINDOW_MAX ? HBM_HEALTH_WINDOW_MAX : c->window;
}

void hbm_health_reconf(struct hbm_link_health *h, const struct hbm_health_conf *old,
		       const struct hbm_health_conf *c)
{
	if (window_size(old) == window_size(c))
		return;
	memset(h->win_req, 0, sizeof(h->win_req));
	memset(h->win_fail, 0, sizeof(h->win_fail));
	h->win_pos = 0;
}

/* The sample's deltas into the window; the error rate over it (-1: too few requests). */
static int window_add(struct hbm_link_health *h, const struct hbm_health_conf *c,
		      uint64_t req, uint64_t fail)
{
	unsigned int w = window_size(c), i;
	uint64_t sreq = 0, sfail = 0;

	h->win_req[h->win_pos % w] = req;
	h->win_fail[h->win_pos % w] = fail;
	h->win_pos = (h->win_pos + 1) % w;
	for (i = 0; i < w; i++) {
		sreq += h->win_req[i];
		sfail += h->win_fail[i];
	}
	if (sreq < HBM_HEALTH_MIN_REQUESTS)
		return -1;
	return sfail >= sreq ? 100 : (int)(sfail * 100 / sreq);
}

/* The class of sample s (h->last is the previous one, if primed). */
static enum hbm_health classify(struct hbm_link_health *h, const struct hbm_health_conf *c,
				const struct hbm_health_sample *s)
{
	const struct hbm_health_sample *p = &h->last;
	uint64_t dreq = 0, dfail = 0, dflaps = 0;
	bool went_down = false, reset = false;
	int pct;

	if (h->primed) {
		dreq = delta(s->requests, p->requests, &reset);
		dfail = delta(s->errors, p->errors, &reset) +
			delta(s->retries, p->retries, &reset) +
			delta(s->digest_errors, p->digest_errors, &reset);
		dflaps = delta(s->flaps, p->flaps, &reset);
		if (reset) {	/* counted again from 0 */
			h->resets++;
			dreq = s->requests;
			dfail = s->errors + s->retries + s->digest_errors;
			dflaps = s->flaps;
		}
		/* after a reset the link is new: down at its start, its first flap its coming up */
		went_down = p->oper_up && !reset ? dflaps >= 1 : dflaps >= 2;
	}
	pct = window_add(h, c, dreq, dfail);
	h->error_pct = pct < 0 ? 0 : (unsigned int)pct;
	h->hard = !s->oper_up || went_down || s->khealth == HBM_KHEALTH_DOWN ||
		  s->khealth == HBM_KHEALTH_CONNECTING;
	if (h->hard || (pct >= 0 && (unsigned int)pct >= c->down_error_pct))
		return HBM_HEALTH_DOWN;
	if ((c->degraded_rtt_ns && s->rtt_ns > c->degraded_rtt_ns) ||
	    s->khealth == HBM_KHEALTH_DEGRADED ||
	    (pct >= 0 && (unsigned int)pct >= c->degraded_error_pct))
		return HBM_HEALTH_DEGRADED;
	return HBM_HEALTH_UP;
}

bool hbm_health_sample(struct hbm_link_health *h, const struct hbm_health_conf *c,
		       const struct hbm_health_sample *s)
{
	enum hbm_health cls = classify(h, c, s), prev = h->cls, to = h->state;
	bool first = !h->primed;

	h->samples++;
	h->last = *s;
	h->cls = cls;
	h->primed = true;
	if (first) {
		h->state = cls;
		h->changed_ms = s->t_ms;
		h->down_run = cls == HBM_HEALTH_DOWN;
		h->degr_run = cls != HBM_HEALTH_UP;
		return false;
	}
	h->down_run = cls == HBM_HEALTH_DOWN ? h->down_run + 1 : 0;
	h->degr_run = cls != HBM_HEALTH_UP ? h->degr_run + 1 : 0;
	if (cls > h->state) {
		h->good_run = 0;
		if (cls == HBM_HEALTH_DOWN && (h->hard || h->down_run >= c->down_after))
			to = HBM_HEALTH_DOWN;
		else if (h->state == HBM_HEALTH_UP && h->degr_run >= c->degrade_after)
			to = HBM_HEALTH_DEGRADED;
	} else if (cls < h->state) {
		h->good_worst = h->good_run && h->good_worst > cls ? h->good_worst : cls;
		h->good_run++;
		if (h->good_run >= c->recover_after && s->t_ms >= h->changed_ms + c->hold_ms)
			to = h->good_worst;
	} else {
		h->good_run = 0;
	}
	if (to != h->state) {
		h->state = to;
		h->changed_ms = s->t_ms;
		h->changes++;
		h->good_run = 0;
		return true;
	}
	if (cls != prev)
		h->suppressed++;
	return false;
}

bool hbm_health_publish_due(const struct hbm_link_health *h, const struct hbm_health_conf *c,
			    uint64_t now_ms)
{
	if (!h->primed)
		return false;
	(void)c;
	(void)now_ms;
	return !h->published || h->published_state != h->state;
}

void hbm_health_published(struct hbm_link_health *h, uint64_t now_ms)
{
	h->published = true;
	h->published_state = h->state;
	h->published_ms = now_ms;
}

uint64_t hbm_health_max_changes(const struct hbm_health_conf *c, uint64_t duration_ms)
{
	uint64_t p = (uint64_t)c->recover_after * c->interval_ms;

	if (c->hold_ms > p)
		p = c->hold_ms;
	if (!p)
		return UINT64_MAX;
	return 3 * (duration_ms / p) + 2;
}

const char *hbm_health_name(enum hbm_health h)
{
	switch (h) {
	case HBM_HEALTH_UP:
		return "up";
	case HBM_HEALTH_DEGRADED:
		return "degraded";
	case HBM_HEALTH_DOWN:
		return "down";
	}
	return "?";
}

int hbm_health_from_name(const char *s, enum hbm_health *h)
{
	if (!strcmp(s, "up"))
		*h = HBM_HEALTH_UP;
	else if (!strcmp(s, "degraded"))
		*h = HBM_HEALTH_DEGRADED;
	else if (!strcmp(s, "down"))
		*h = HBM_HEALTH_DOWN;
	else
		return -EINVAL;
	return 0;
}
