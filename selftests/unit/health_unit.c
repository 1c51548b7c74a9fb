// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of hbmpoold's link health (daemon/health.c) and of the link
 * matrix's keys and values in etcd (daemon/links.c): pure logic, no
 * kernel, no etcd.
 *
 *  - the [health] config into thresholds;
 *  - the class of a sample: RTT, error rate (and too few requests to
 *    judge), the transport's view, the kernel's oper state, a flap between
 *    two samples; a counter reset (the node added again);
 *  - hysteresis: worse after degrade_after / down_after samples, at once
 *    when the kernel has the link down; better only after recover_after
 *    good samples and hold_ms, to the worst class of the good run;
 *  - when to publish: first sample and changes only (no refresh);
 *  - a link flapping at 1 Hz for a minute (a simulated kernel at 10 ms):
 *    the changes (and publications, what placement would react to) stay
 *    within hbm_health_max_changes(), where a judge without hysteresis
 *    makes ~120; and random links for 10 minutes never exceed that bound;
 *  - links.c: keys, values both ways, bad values refused, the matrix from
 *    a range and from watch events.
 *
 * TAP output.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "health.h"
#include "links.h"
#include "tap.h"

/* The defaults of the config. */
static void conf_defaults(struct hbm_health_conf *hc)
{
	struct hbm_config c;

	memset(&c, 0, sizeof(c));
	c.health_interval_ms = 1000;
	c.degraded_rtt_us = 200000;
	c.degraded_error_pct = 5;
	c.down_error_pct = 50;
	c.error_window_ms = 10000;
	c.degrade_after = 3;
	c.down_after = 3;
	c.recover_after = 5;
	c.hold_ms = 10000;
	hbm_health_conf_from(hc, &c);
}

/* A healthy sample at t: up, live, 100 us, counters as given. */
static struct hbm_health_sample good(uint64_t t, uint64_t req)
{
	return (struct hbm_health_sample){ .t_ms = t, .oper_up = true,
		.khealth = HBM_KHEALTH_LIVE, .rtt_ns = 100000, .requests = req };
}

static void test_conf(void)
{
	struct hbm_health_conf hc;
	struct hbm_config c;

	conf_defaults(&hc);
	ok(hc.interval_ms == 1000 && hc.degraded_rtt_ns == 200000000ULL &&
	   hc.degraded_error_pct == 5 && hc.down_error_pct == 50 && hc.window == 10 &&
	   hc.degrade_after == 3 && hc.down_after == 3 && hc.recover_after == 5 &&
	   hc.hold_ms == 10000,
	   "config: thresholds from [health] (window 10 s / 1 s = 10 samples)");
	memset(&c, 0, sizeof(c));
	c.health_interval_ms = 100;
	c.error_window_ms = 600000;
	hbm_health_conf_from(&hc, &c);
	ok(hc.window == HBM_HEALTH_WINDOW_MAX, "config: a window of 6000 samples is cut to %d",
	   HBM_HEALTH_WINDOW_MAX);
	c.health_interval_ms = 1000;
	c.error_window_ms = 1500;
	hbm_health_conf_from(&hc, &c);
	ok(hc.window == 2, "config: 1.5 s / 1 s rounds up to 2 samples");
	ok(!strcmp(hbm_health_name(HBM_HEALTH_UP), "up") &&
	   !strcmp(hbm_health_name(HBM_HEALTH_DEGRADED), "degraded") &&
	   !strcmp(hbm_health_name(HBM_HEALTH_DOWN), "down"), "names");
}

/*
 * A reload: the error window's samples dropped when its size changes, kept
 * when it does not; the state kept either way.
 */
static void test_reconf(void)
{
	struct hbm_health_conf c, small;
	struct hbm_link_health h;
	struct hbm_health_sample s;
	unsigned int pos;
	int i;

	conf_defaults(&c);
	small = c;
	small.window = 2;
	hbm_health_init(&h);
	for (i = 0; i < 6; i++) {	/* 10 % failed: degraded */
		s = good((uint64_t)i * 1000, (uint64_t)i * 100);
		s.errors = (uint64_t)i * 10;
		hbm_health_sample(&h, &c, &s);
	}
	pos = h.win_pos;
	hbm_health_reconf(&h, &c, &c);
	ok(h.state == HBM_HEALTH_DEGRADED && pos && h.win_pos == pos && h.win_req[pos - 1] == 100,
	   "reload, the same window: its samples kept (%u)", pos);
	hbm_health_reconf(&h, &c, &small);
	for (i = 0; i < HBM_HEALTH_WINDOW_MAX && !h.win_req[i] && !h.win_fail[i]; i++)
		;
	ok(h.state == HBM_HEALTH_DEGRADED && h.win_pos == 0 && i == HBM_HEALTH_WINDOW_MAX,
	   "reload, another window size: its samples dropped, the state kept");
}

/* Feed n samples made by mk(i); returns the index of the first change (-1: none). */
static int feed(struct hbm_link_health *h, const struct hbm_health_conf *c, int n,
		struct hbm_health_sample (*mk)(int i, void *arg), void *arg)
{
	int i, first = -1;

	for (i = 0; i < n; i++) {
		struct hbm_health_sample s = mk(i, arg);

		if (hbm_health_sample(h, c, &s) && first < 0)
			first = i;
	}
	return first;
}

struct script {
	uint64_t t0;		/* time of sample 0 */
	uint64_t req0, err0;	/* counters at sample 0 */
	uint64_t req, err;	/* per sample */
	uint64_t rtt_ns;
	bool down;
	int khealth;
};

static struct hbm_health_sample scripted(int i, void *arg)
{
	struct script *sc = arg;
	struct hbm_health_sample s = good(sc->t0 + (uint64_t)i * 1000, sc->req0 + sc->req * i);

	s.errors = sc->err0 + sc->err * i;
	if (sc->rtt_ns)
		s.rtt_ns = sc->rtt_ns;
	s.oper_up = !sc->down;
	if (sc->khealth)
		s.khealth = sc->khealth;
	return s;
}

static void test_classes(void)
{
	struct hbm_health_conf c;
	struct hbm_link_health h;
	struct hbm_health_sample s;
	struct script sc;
	int i;

	conf_defaults(&c);
	hbm_health_init(&h);
	s = good(0, 0);
	s.oper_up = false;
	ok(!hbm_health_sample(&h, &c, &s) && h.state == HBM_HEALTH_DOWN && h.changes == 0,
	   "first sample: the state, no change (down)");

	/* RTT over the threshold: degraded after 3 samples in a row */
	hbm_health_init(&h);
	sc = (struct script){ .req = 100 };
	feed(&h, &c, 5, scripted, &sc);
	ok(h.state == HBM_HEALTH_UP && h.changes == 0, "a healthy link stays up");
	sc.t0 = 5000;
	sc.req0 = 500;
	sc.rtt_ns = 200000001;
	i = feed(&h, &c, 5, scripted, &sc);
	ok(i == 2 && h.state == HBM_HEALTH_DEGRADED && h.changes == 1,
	   "RTT over degraded_rtt_us: degraded at the 3rd sample in a row (%d)", i + 1);
	hbm_health_init(&h);
	sc = (struct script){ .req = 100, .rtt_ns = 200000000 };
	feed(&h, &c, 10, scripted, &sc);
	ok(h.state == HBM_HEALTH_UP, "RTT at the threshold: up");

	/* RTT high every other sample: never 3 in a row */
	hbm_health_init(&h);
	for (i = 0; i < 20; i++) {
		s = good((uint64_t)i * 1000, (uint64_t)i * 100);
		s.rtt_ns = i % 3 == 0 ? 100000 : 900000000;
		hbm_health_sample(&h, &c, &s);
	}
	ok(h.state == HBM_HEALTH_UP && h.suppressed >= 10,
	   "RTT high 2 samples of 3: held back, up (%llu held back)",
	   (unsigned long long)h.suppressed);

	/* errors: 10 % degraded, 60 % down */
	hbm_health_init(&h);
	sc = (struct script){ .req = 100, .err = 10 };
	i = feed(&h, &c, 6, scripted, &sc);
	ok(i == 3 && h.state == HBM_HEALTH_DEGRADED && h.error_pct == 10,
	   "10 %% of requests failed: degraded at the 3rd bad sample (%d, %u %%)", i, h.error_pct);
	c.degrade_after = 2;
	c.down_after = 4;
	hbm_health_init(&h);
	sc = (struct script){ .req = 100, .err = 60 };
	i = feed(&h, &c, 3, scripted, &sc);
	ok(i == 2 && h.state == HBM_HEALTH_DEGRADED,
	   "60 %% failed, degrade_after 2, down_after 4: degraded first (sample %d)", i);
	sc.t0 = 3000;
	sc.req0 = 300;
	sc.err0 = 180;
	i = feed(&h, &c, 3, scripted, &sc);
	ok(i == 1 && h.state == HBM_HEALTH_DOWN && !h.hard,
	   "... then down at the 4th bad sample, by error rate (not a hard down)");
	conf_defaults(&c);

	/* too few requests to judge */
	hbm_health_init(&h);
	sc = (struct script){ .req = 1, .err = 1 };
	feed(&h, &c, 9, scripted, &sc);
	ok(h.state == HBM_HEALTH_UP && h.error_pct == 0,
	   "every request failed, but only 8 in the window (< %d): not judged, up",
	   HBM_HEALTH_MIN_REQUESTS);
	feed(&h, &c, 1, scripted, &(struct script){ .t0 = 9000, .req0 = 9 + 100, .err0 = 9 + 100 });
	ok(h.error_pct == 100 && h.cls == HBM_HEALTH_DOWN, "... 117 failed of 117: down class");

	/* the transport's view */
	hbm_health_init(&h);
	sc = (struct script){ .req = 100, .khealth = HBM_KHEALTH_DEGRADED };
	feed(&h, &c, 4, scripted, &sc);
	ok(h.state == HBM_HEALTH_DEGRADED, "the transport says degraded: degraded");
	hbm_health_init(&h);
	sc = (struct script){ .req = 100 };
	feed(&h, &c, 3, scripted, &sc);
	sc = (struct script){ .t0 = 3000, .req0 = 300, .khealth = HBM_KHEALTH_CONNECTING };
	i = feed(&h, &c, 1, scripted, &sc);
	ok(i == 0 && h.state == HBM_HEALTH_DOWN && h.hard,
	   "the transport says connecting: down at once");

	/* the kernel has it down: down at once */
	hbm_health_init(&h);
	sc = (struct script){ .req = 100 };
	feed(&h, &c, 3, scripted, &sc);
	sc = (struct script){ .t0 = 3000, .req0 = 300, .down = true };
	i = feed(&h, &c, 1, scripted, &sc);
	ok(i == 0 && h.state == HBM_HEALTH_DOWN && h.changes == 1,
	   "oper state down in the kernel: down at the first sample");

	/* down and up again between two samples: the flap counter tells */
	hbm_health_init(&h);
	s = good(0, 0);
	s.flaps = 1;
	hbm_health_sample(&h, &c, &s);
	s = good(1000, 100);
	s.flaps = 1;
	ok(!hbm_health_sample(&h, &c, &s) && h.state == HBM_HEALTH_UP, "no flap: up");
	s = good(2000, 200);
	s.flaps = 3;
	ok(hbm_health_sample(&h, &c, &s) && h.state == HBM_HEALTH_DOWN && h.hard,
	   "up at both samples but the flap counter rose by 2: it was down between: down");
	hbm_health_init(&h);
	s = good(0, 0);
	s.oper_up = false;
	s.flaps = 4;
	hbm_health_sample(&h, &c, &s);
	s = good(1000, 100);
	s.flaps = 5;
	hbm_health_sample(&h, &c, &s);
	ok(h.cls == HBM_HEALTH_UP,
	   "down, then up with one flap (it came up): an up sample, not a flap");
}

static void test_reset(void)
{
	struct hbm_health_conf c;
	struct hbm_link_health h;
	struct hbm_health_sample s;
	int i;

	conf_defaults(&c);
	hbm_health_init(&h);
	for (i = 0; i < 5; i++) {
		s = good((uint64_t)i * 1000, 1000000 + (uint64_t)i * 100);
		s.errors = 5000;
		s.retries = 700;
		s.flaps = 9;
		hbm_health_sample(&h, &c, &s);
	}
	/* the node removed and added again: every counter from 0 */
	for (i = 5; i < 20; i++) {
		s = good((uint64_t)i * 1000, (uint64_t)(i - 5) * 100);
		s.flaps = 1;
		hbm_health_sample(&h, &c, &s);
	}
	ok(h.resets == 1 && h.state == HBM_HEALTH_UP && h.changes == 0 && h.error_pct == 0,
	   "counters back to 0 (node added again): one reset, no bogus delta, still up (resets %llu, changes %llu)",
	   (unsigned long long)h.resets, (unsigned long long)h.changes);
	hbm_health_init(&h);
	s = good(0, 1000);
	s.errors = 500;
	hbm_health_sample(&h, &c, &s);
	s = good(1000, 100);
	s.errors = 60;
	hbm_health_sample(&h, &c, &s);
	ok(h.resets == 1 && h.error_pct == 60,
	   "after a reset the new counts are the deltas: 60 failed of 100 (%u %%)", h.error_pct);
}

static void test_recovery(void)
{
	struct hbm_health_conf c;
	struct hbm_link_health h;
	struct hbm_health_sample s;
	uint64_t t;
	int i, at = -1;

	conf_defaults(&c);
	hbm_health_init(&h);
	s = good(0, 0);
	hbm_health_sample(&h, &c, &s);
	s = good(1000, 0);
	s.oper_up = false;
	hbm_health_sample(&h, &c, &s);
	ok(h.state == HBM_HEALTH_DOWN && h.changed_ms == 1000, "down at 1 s");
	for (i = 2; i < 30 && at < 0; i++) {
		s = good((uint64_t)i * 1000, 0);
		if (hbm_health_sample(&h, &c, &s))
			at = i;
	}
	ok(at == 11 && h.state == HBM_HEALTH_UP,
	   "good from 2 s: 5 good samples by 6 s, but up only at 11 s (hold_ms 10 s): %d s", at);

	c.hold_ms = 0;
	hbm_health_init(&h);
	s = good(0, 0);
	s.oper_up = false;
	hbm_health_sample(&h, &c, &s);
	for (i = 1, at = -1; i < 30 && at < 0; i++) {
		s = good((uint64_t)i * 1000, 0);
		if (i == 4) {
			s.oper_up = false;	/* breaks the run */
			s.flaps = 0;
		}
		if (hbm_health_sample(&h, &c, &s))
			at = i;
	}
	ok(at == 9, "hold 0: a down sample at 4 s restarts the 5 good ones: up at 9 s (%d)", at);

	/* down, then a run of degraded and up samples: better, to degraded */
	hbm_health_init(&h);
	s = good(0, 0);
	s.oper_up = false;
	hbm_health_sample(&h, &c, &s);
	for (i = 1; i <= 5; i++) {
		s = good((uint64_t)i * 1000, 0);
		s.rtt_ns = i == 3 ? 300000000 : 100000;
		hbm_health_sample(&h, &c, &s);
	}
	ok(h.state == HBM_HEALTH_DEGRADED && h.changes == 1,
	   "down, then 4 up samples and 1 slow one: degraded (the worst of the run)");
	for (i = 6, t = 0; i <= 10; i++) {
		s = good((uint64_t)i * 1000, 0);
		t += hbm_health_sample(&h, &c, &s);
	}
	ok(h.state == HBM_HEALTH_UP && t == 1, "... and up after 5 more good samples");
}

static void test_publish(void)
{
	struct hbm_health_conf c;
	struct hbm_link_health h;
	struct hbm_health_sample s;

	conf_defaults(&c);
	hbm_health_init(&h);
	ok(!hbm_health_publish_due(&h, &c, 0), "nothing to publish before a sample");
	s = good(0, 0);
	hbm_health_sample(&h, &c, &s);
	ok(hbm_health_publish_due(&h, &c, 0), "the first sample: due");
	hbm_health_published(&h, 0);
	s = good(1000, 100);
	s.rtt_ns = 150000;
	hbm_health_sample(&h, &c, &s);
	ok(!hbm_health_publish_due(&h, &c, 1000), "same state, other RTT: not due");
	s = good(2000, 200);
	s.oper_up = false;
	hbm_health_sample(&h, &c, &s);
	ok(hbm_health_publish_due(&h, &c, 2000), "a change: due");
	hbm_health_published(&h, 2000);
	ok(!hbm_health_publish_due(&h, &c, 2000 + 3600 * 1000),
	   "no change: not due again, even an hour later (no refresh)");
}

/*
 * A kernel link flapping: up for half a period, down for the other half
 * (the flap counter counting both), requests every 10 ms, failing while
 * down; sampled every c->interval_ms from phase_ms on for duration_ms.
 * Returns the state changes while it flaps; *pub the publications; then
 * the link steady up for settle_ms: *end its state.
 */
struct flap {
	uint64_t changes, publishes, suppressed;
	enum hbm_health end;
	uint64_t settle_changes;
};

#define REQS_PER_10MS	10	/* 0: an idle link */

static struct flap simulate(const struct hbm_health_conf *c, uint64_t period_ms,
			    uint64_t phase_ms, uint64_t duration_ms, uint64_t settle_ms,
			    uint64_t reqs)
{
	struct hbm_link_health h;
	struct hbm_health_sample s = { .khealth = HBM_KHEALTH_LIVE, .rtt_ns = 100000 };
	struct flap r = { 0 };
	uint64_t t, next = phase_ms;
	bool up = true, was;

	hbm_health_init(&h);
	for (t = 0; t < duration_ms + settle_ms; t += 10) {
		was = up;
		up = t >= duration_ms || (t % period_ms) < period_ms / 2;
		if (up != was)
			s.flaps++;
		s.oper_up = up;
		s.requests += reqs;
		if (!up)
			s.errors += reqs;
		if (t < next)
			continue;
		next += c->interval_ms;
		s.t_ms = t;
		if (hbm_health_sample(&h, c, &s)) {
			if (t < duration_ms)
				r.changes++;
			else
				r.settle_changes++;
		}
		if (hbm_health_publish_due(&h, c, t)) {
			hbm_health_published(&h, t);
			r.publishes += t < duration_ms;
		}
		if (t < duration_ms)
			r.suppressed = h.suppressed;
	}
	r.end = h.state;
	return r;
}

static void test_flapping(void)
{
	struct hbm_health_conf c, raw;
	uint64_t bound;
	struct flap f;

	conf_defaults(&c);
	bound = hbm_health_max_changes(&c, 60000);
	ok(bound == 3 * 6 + 2, "defaults: at most %llu changes a minute (P = max(hold 10 s, 5 x 1 s))",
	   (unsigned long long)bound);
	f = simulate(&c, 1000, 5, 60000, 30000, REQS_PER_10MS);
	ok(f.changes <= bound && f.changes == 1,
	   "1 Hz flap for 60 s, sampled every 1 s: %llu change (bound %llu)",
	   (unsigned long long)f.changes, (unsigned long long)bound);
	ok(f.publishes <= f.changes + 1,
	   "... published %llu times in the minute (first sample, changes): no placement storm",
	   (unsigned long long)f.publishes);
	ok(f.end == HBM_HEALTH_UP && f.settle_changes >= 1 && f.settle_changes <= 2,
	   "... up again once it stops (%llu changes: the error window empties, through degraded)",
	   (unsigned long long)f.settle_changes);

	c.interval_ms = 250;
	c.window = 40;
	bound = hbm_health_max_changes(&c, 60000);
	f = simulate(&c, 1000, 130, 60000, 30000, REQS_PER_10MS);
	ok(f.changes <= bound && f.changes == 1 && f.end == HBM_HEALTH_UP,
	   "sampled every 250 ms: %llu change (bound %llu), up at the end",
	   (unsigned long long)f.changes, (unsigned long long)bound);
	f = simulate(&c, 1000, 130, 60000, 30000, 0);
	ok(f.changes == 1 && f.suppressed >= 110 && f.end == HBM_HEALTH_UP,
	   "an idle link (no requests), every 250 ms: %llu change, %llu flaps held back",
	   (unsigned long long)f.changes, (unsigned long long)f.suppressed);

	/* the same without hysteresis: a storm */
	raw = c;
	raw.degrade_after = raw.down_after = raw.recover_after = 1;
	raw.hold_ms = 0;
	f = simulate(&raw, 1000, 130, 60000, 0, 0);
	ok(f.changes >= 110 && f.changes <= 125 && f.publishes >= f.changes,
	   "without hysteresis: %llu changes and %llu publications in the minute (~120)",
	   (unsigned long long)f.changes, (unsigned long long)f.publishes);
}

/* Random links for 10 minutes: never more changes than the bound, in any minute. */
static void test_random(void)
{
	struct hbm_health_conf c;
	struct hbm_link_health h;
	struct hbm_health_sample s = { 0 };
	uint64_t t, worst = 0, bound, changes_at[2000];
	unsigned int seed, n, i, j, k, bad = 0;

	conf_defaults(&c);
	c.hold_ms = 3000;
	bound = hbm_health_max_changes(&c, 60000);
	for (seed = 1; seed <= 20; seed++) {
		srandom(seed);
		hbm_health_init(&h);
		memset(&s, 0, sizeof(s));
		for (t = 0, n = 0; t < 600000; t += c.interval_ms) {
			s.t_ms = t;
			s.oper_up = random() % 4 != 0;
			s.flaps += random() % 3 == 0 ? (uint64_t)(random() % 3) : 0;
			s.khealth = (int)(random() % 5) - 1;
			s.rtt_ns = random() % 2 ? 100000 : 500000000;
			s.requests += (uint64_t)(random() % 50);
			s.errors += (uint64_t)(random() % 10);
			if (random() % 200 == 0)
				memset(&s.requests, 0, 5 * sizeof(uint64_t));	/* a reset */
			if (hbm_health_sample(&h, &c, &s) && n < 2000)
				changes_at[n++] = t;
		}
		for (i = 0, k = 0; i < n; i++) {
			for (j = i; j < n && changes_at[j] < changes_at[i] + 60000; j++)
				;
			if (j - i > k)
				k = j - i;
		}
		if (k > worst)
			worst = k;
		bad += k > bound;
	}
	ok(!bad && worst > 0,
	   "20 random links for 10 min: at most %llu changes in any minute (bound %llu)",
	   (unsigned long long)worst, (unsigned long long)bound);
}

/* ---- links.c ---- */

static struct hbm_etcd_kv kv(const char *key, const char *value)
{
	return (struct hbm_etcd_kv){ .key = (char *)key, .key_len = strlen(key),
		.value = (char *)value, .value_len = value ? strlen(value) : 0,
		.mod_revision = 7, .lease = 99 };
}

static void bad(const char *key, const char *value, const char *want, const char *what)
{
	struct hbm_etcd_kv k = kv(key, value);
	struct hbm_link l;
	char err[256] = "";
	int ret = hbm_link_parse("/p/d/links/", &k, &l, err, sizeof(err));

	ok(ret == -EPROTO && strstr(err, want), "links: %s refused (%s)", what, err);
}

static void test_links(void)
{
	const char *pfx = "/p/d/links/";
	struct hbm_link l = { .from = 3, .to = 1020, .state = HBM_HEALTH_DEGRADED,
		.rtt_us = 250000, .error_pct = 7, .changes = 4, .since_ms = 1764100000123ULL };
	struct hbm_link back;
	struct hbm_links t;
	struct hbm_etcd_kv kvs[4];
	struct hbm_etcd_event ev;
	char buf[128], err[256], *json = NULL;
	int ret;

	ok(!hbm_links_prefix(buf, sizeof(buf), "/p", "d") && !strcmp(buf, pfx),
	   "links: the prefix %s", buf);
	ok(!hbm_link_key(buf, sizeof(buf), "/p", "d", 3, 1020) && !strcmp(buf, "/p/d/links/3/1020"),
	   "links: the key %s", buf);
	ok(hbm_link_key(buf, sizeof(buf), "/p", "d", 3, 3) == -EINVAL &&
	   hbm_link_key(buf, sizeof(buf), "/p", "d", 1024, 3) == -EINVAL &&
	   hbm_link_key(buf, 10, "/p", "d", 3, 4) == -ENAMETOOLONG,
	   "links: no key to itself, over 1023, or too long");
	ret = hbm_link_encode(&l, &json);
	ok(!ret && json && !strcmp(json,
	   "{\"state\":\"degraded\",\"rtt_us\":250000,\"error_pct\":7,\"changes\":4,\"since\":1764100000123}"),
	   "links: the value %s", json ? json : "(none)");
	kvs[0] = kv("/p/d/links/3/1020", json);
	ret = hbm_link_parse(pfx, &kvs[0], &back, err, sizeof(err));
	ok(!ret && back.from == 3 && back.to == 1020 && back.state == l.state &&
	   back.rtt_us == l.rtt_us && back.error_pct == 7 && back.changes == 4 &&
	   back.since_ms == l.since_ms && back.lease == 99 && back.mod_revision == 7,
	   "links: and back %s", ret ? err : "");

	bad("/p/d/links/3/3", json, "not /p/d/links/FROM/TO", "a link to itself");
	bad("/p/d/links/03/1", json, "not /p/d/links/", "a leading zero");
	bad("/p/d/links/3/1024", json, "not /p/d/links/", "an id over 1023");
	bad("/p/d/links/3", json, "not /p/d/links/", "no TO");
	bad("/p/d/links/3/4/5", json, "not /p/d/links/", "one id too many");
	bad("/p/d/members/3", json, "not /p/d/links/", "another prefix");
	bad("/p/d/links/3/4", "{\"state\":\"fine\",\"rtt_us\":1,\"error_pct\":0,\"changes\":0,\"since\":0}",
	    "\"state\" is not", "an unknown state");
	bad("/p/d/links/3/4", "{\"state\":\"up\",\"rtt_us\":1,\"error_pct\":101,\"changes\":0,\"since\":0}",
	    "\"error_pct\" 101 is out of range", "an error rate over 100");
	bad("/p/d/links/3/4", "{\"state\":\"up\",\"rtt_us\":-1,\"error_pct\":1,\"changes\":0,\"since\":0}",
	    "\"rtt_us\" is negative", "a negative RTT");
	bad("/p/d/links/3/4", "{\"state\":\"up\",\"rtt_us\":1,\"error_pct\":1,\"since\":0}",
	    "no \"changes\"", "a missing field");
	bad("/p/d/links/3/4", "[1]", "not a JSON object", "an array");
	bad("/p/d/links/3/4", "{\"state\":", "not JSON", "a cut value");

	/* the matrix */
	kvs[1] = kv("/p/d/links/1/3", "{\"state\":\"up\",\"rtt_us\":90,\"error_pct\":0,\"changes\":0,\"since\":5}");
	kvs[2] = kv("/p/d/links/1/2", "{\"state\":\"down\",\"rtt_us\":0,\"error_pct\":0,\"changes\":1,\"since\":6}");
	kvs[3] = kv("/p/d/links/2/x", "{}");
	ret = hbm_links_build(pfx, kvs, 4, &t);
	ok(!ret && t.n == 3 && t.bad == 1 && t.l[0].from == 1 && t.l[0].to == 2 &&
	   t.l[1].to == 3 && t.l[2].from == 3 && hbm_links_find(&t, 1, 2)->state == HBM_HEALTH_DOWN &&
	   !hbm_links_find(&t, 2, 1),
	   "links: the matrix from a range: 3 links sorted, 1 bad left out");
	ev = (struct hbm_etcd_event){ .type = HBM_ETCD_EV_PUT,
		.kv = kv("/p/d/links/2/1", "{\"state\":\"degraded\",\"rtt_us\":9,\"error_pct\":0,\"changes\":2,\"since\":8}") };
	ret = hbm_links_apply(&t, pfx, &ev, err, sizeof(err));
	ok(!ret && t.n == 4 && hbm_links_find(&t, 2, 1) &&
	   hbm_links_find(&t, 2, 1)->state == HBM_HEALTH_DEGRADED && t.l[2].from == 2,
	   "links: a put event adds 2 -> 1, in order");
	ev.kv = kv("/p/d/links/2/1", "{\"state\":\"up\",\"rtt_us\":9,\"error_pct\":0,\"changes\":3,\"since\":9}");
	ret = hbm_links_apply(&t, pfx, &ev, err, sizeof(err));
	ok(!ret && t.n == 4 && hbm_links_find(&t, 2, 1)->state == HBM_HEALTH_UP &&
	   hbm_links_find(&t, 2, 1)->changes == 3, "links: another put replaces it");
	ev.kv = kv("/p/d/links/1/3", "garbage");
	ret = hbm_links_apply(&t, pfx, &ev, err, sizeof(err));
	ok(ret == -EPROTO && t.n == 3 && !hbm_links_find(&t, 1, 3),
	   "links: a bad put: -EPROTO, and the old value is gone");
	ev = (struct hbm_etcd_event){ .type = HBM_ETCD_EV_DELETE, .kv = kv("/p/d/links/1/2", NULL) };
	ret = hbm_links_apply(&t, pfx, &ev, err, sizeof(err));
	ok(!ret && t.n == 2 && !hbm_links_find(&t, 1, 2), "links: a delete removes it");
	ev.kv = kv("/p/d/links/nope", NULL);
	ok(hbm_links_apply(&t, pfx, &ev, err, sizeof(err)) == -EPROTO && t.n == 2,
	   "links: a delete of a bad key: -EPROTO, nothing changes");
	hbm_links_free(&t);
	free(json);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_conf();
	test_reconf();
	test_classes();
	test_reset();
	test_recovery();
	test_publish();
	test_flapping();
	test_random();
	test_links();
	return tap_finish();
}
