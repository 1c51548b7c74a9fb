/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The health of this node's links (issue 9), as pure logic: no I/O, no
 * clock; the caller gives every sample its time (CLOCK_MONOTONIC, ms).
 *
 * Every interval_ms the agent reads the kernel's links (link-get dump) and
 * gives each one's sample here: the oper state, the transport's health, the
 * RTT EWMA and the cumulative counters (requests, errors with timeouts
 * included, retries, digest errors, flaps: oper-state changes).
 *
 * Each sample gets a class:
 *   down      the kernel has the link down now, or had it down since the
 *             previous sample (its flaps counter says so: more than 0 if
 *             the link was up then, more than 1 if it was down), or the
 *             transport says down or connecting ("hard" down); or the
 *             error rate over the window is at least down_error_pct;
 *   degraded  the RTT EWMA is over degraded_rtt, the error rate is at least
 *             degraded_error_pct, or the transport says degraded;
 *   up        otherwise.
 * The error rate is (errors + retries + digest errors) / requests over the
 * last error_window_ms of samples, judged only once the window holds
 * HBM_HEALTH_MIN_REQUESTS requests (an idle link is not sick).  A counter
 * that goes back (the node removed and added again) is a reset: the
 * deltas are the new values, and the link is taken as new (down at its
 * start: one flap is its coming up, two are a flap).
 *
 * Hysteresis, so that a flapping link does not cause a storm of changes:
 *  - worse: a hard down is down at once (the kernel already fails requests
 *    on it); a down by error rate after down_after down samples in a row;
 *    degraded after degrade_after samples in a row that are degraded or
 *    down;
 *  - better: only after recover_after samples in a row better than the
 *    state, and hold_ms after the last change; the state becomes the worst
 *    class of those samples.
 * So every improvement is at least P = max(hold_ms, recover_after x
 * interval_ms) after the change before it (samples interval_ms apart), and
 * between two improvements a link gets worse at most twice (up, degraded,
 * down): in any time T it changes at most 3 x floor(T / P) + 2 times,
 * however it flaps (hbm_health_max_changes()).  A link that flaps at a period shorter than
 * recover_after samples never recovers while it flaps: one change.
 *
 * The first sample sets the state without a change.  The agent publishes
 * a link when hbm_health_publish_due() says so: never published, or its
 * state changed since the last publication.  Nothing else: a steady domain
 * writes no link key (its RTT and error rate in etcd are those of the last
 * change; the metrics and the kernel have the current ones), so the link
 * keys cost etcd and its watchers nothing while no link changes.
 */
#ifndef HBMPOOLD_HEALTH_H
#define HBMPOOLD_HEALTH_H

#include <stdbool.h>
#include <stdint.h>

struct hbm_config;

/* Worse is greater. */
enum hbm_health {
	HBM_HEALTH_UP,
	HBM_HEALTH_DEGRADED,
	HBM_HEALTH_DOWN,
};

#define HBM_HEALTH_WINDOW_MAX	64	/* samples in the error window, at most */
#define HBM_HEALTH_MIN_REQUESTS	10	/* in the window, before its error rate counts */

/* The kernel's hbmpool_nl_link_health, as the dump gives it (-1: none). */
#define HBM_KHEALTH_NONE	(-1)
#define HBM_KHEALTH_DOWN	0
#define HBM_KHEALTH_CONNECTING	1
#define HBM_KHEALTH_LIVE	2
#define HBM_KHEALTH_DEGRADED	3

struct hbm_health_conf {
	uint64_t interval_ms;
	uint64_t degraded_rtt_ns;
	unsigned int degraded_error_pct;
	unsigned int down_error_pct;
	unsigned int window;		/* samples, 1..HBM_HEALTH_WINDOW_MAX */
	unsigned int degrade_after, down_after, recover_after;
	uint64_t hold_ms;
};

/* From the config's [health] section. */
void hbm_health_conf_from(struct hbm_health_conf *hc, const struct hbm_config *c);

/* One reading of a link. */
struct hbm_health_sample {
	uint64_t t_ms;
	bool oper_up;
	int khealth;			/* HBM_KHEALTH_* */
	uint64_t rtt_ns;		/* EWMA, 0: none yet */
	uint64_t requests, errors, retries, digest_errors, flaps;
};

struct hbm_link_health {
	enum hbm_health state;
	bool primed;			/* a sample was seen */
	struct hbm_health_sample last;
	enum hbm_health cls;		/* the last sample's class */
	bool hard;			/* ... and it was a hard down */
	unsigned int error_pct;		/* over the window; 0 when not judged */
	uint64_t changed_ms;		/* the state entered */
	unsigned int degr_run, down_run, good_run;
	enum hbm_health good_worst;	/* the worst class of the good run */
	uint64_t win_req[HBM_HEALTH_WINDOW_MAX], win_fail[HBM_HEALTH_WINDOW_MAX];
	unsigned int win_pos;
	/* counted since the start */
	uint64_t samples, changes, suppressed, resets;
	/* publication */
	bool published;
	enum hbm_health published_state;
	uint64_t published_ms;
};

void hbm_health_init(struct hbm_link_health *h);
/*
 * The config changed from old to c (a reload): when the error window's
 * size changed, its samples are dropped (the rate is built again over the
 * new window); the state, its runs and the publication are kept, and the
 * next sample is judged with c.
 */
void hbm_health_reconf(struct hbm_link_health *h, const struct hbm_health_conf *old,
		       const struct hbm_health_conf *c);
/*
 * Take one sample (times never going back).  Returns whether the state
 * changed (never on the first sample).  suppressed counts the samples
 * whose class differs from the previous sample's but did not change the
 * state: what a judge without hysteresis would have passed on.
 */
bool hbm_health_sample(struct hbm_link_health *h, const struct hbm_health_conf *c,
		       const struct hbm_health_sample *s);
bool hbm_health_publish_due(const struct hbm_link_health *h, const struct hbm_health_conf *c,
			    uint64_t now_ms);
void hbm_health_published(struct hbm_link_health *h, uint64_t now_ms);
/* The most changes hysteresis lets through in duration_ms (see above). */
uint64_t hbm_health_max_changes(const struct hbm_health_conf *c, uint64_t duration_ms);

/* "up", "degraded", "down"; and back (-EINVAL if none). */
const char *hbm_health_name(enum hbm_health h);
int hbm_health_from_name(const char *s, enum hbm_health *h);

#endif /* HBMPOOLD_HEALTH_H */
