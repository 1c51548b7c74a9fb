/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The drainer: the agent's part that empties drained nodes of this node's
 * chunks (issue 9), and what it knows of the other members' progress.
 *
 * While any drain key PREFIX/DOMAIN/drains/N exists, a pass (every
 * HBM_DRAIN_PASS_MS while moves are in flight, at a failed chunk's
 * back-off, 100 ms after the kernel's resync and region events (500 ms
 * after the last pass at the soonest), else
 * every HBMD_DRAIN_IDLE_MS) reads this node's chunks (region-get dump
 * with the chunks flag) and the kernel's moves (resync-get dump), lets the
 * planner (drain.h) choose, issues resync-new from N for its picks, and
 * resync-del for its own moves that ended.  At most [drain] jobs moves at
 * once, else the kernel's resync-jobs.  With no drain, nothing runs.
 *
 * Progress: this node's chunks left on N, published by the agent as
 * PREFIX/DOMAIN/drains/N/progress/SELF under its lease (JSON:
 * chunks_left, bytes_left, failures, lost, updated: wall-clock ms; lost
 * chunks are not left: nothing can move them), when it
 * changes and at most once every HBMD_DRAIN_PUBLISH_MS; deleted when the
 * drain ends.  The others' progress keys come from the agent's range and
 * watch (hbmd_drainer_report()), summed for the control socket's view.
 *
 * No etcd here: the agent publishes (hbmd_drainer_publish_due()).
 */
#ifndef HBMPOOLD_DRAIN_AGENT_H
#define HBMPOOLD_DRAIN_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drain.h"
#include "kernel.h"

#define HBMD_DRAIN_IDLE_MS	10000	/* a pass while draining with nothing in flight */
#define HBMD_DRAIN_EVENT_MS	100	/* after a resync or region event */
#define HBMD_DRAIN_EVENT_GAP_MS	500	/* ... but not sooner after the last pass */
#define HBMD_DRAIN_PUBLISH_MS	1000	/* at most one progress put per drain per second */
#define HBMD_DRAIN_MAX_ID	1023

typedef void hbmd_drain_log_fn(void *arg, int level, const char *msg);

struct hbmd_drainer;

/* A member's progress of a drain, as published. */
struct hbmd_drain_report {
	uint32_t node, member;
	uint64_t chunks_left, bytes_left, failures, lost, updated;
};

/*
 * jobs: [drain] jobs (0: the kernel's resync-jobs); mbps: [drain] mbps
 * (UINT32_MAX: the kernel's resync-mbps kept), set on the first pass.
 */
int hbmd_drainer_new(struct hbmd_kernel k, uint32_t self, unsigned int jobs, uint32_t mbps,
		     hbmd_drain_log_fn *log, void *log_arg, struct hbmd_drainer **out);
void hbmd_drainer_free(struct hbmd_drainer *d);

/* A pass due no later than at (ms); a drain began or ended, or an event. */
void hbmd_drainer_poke(struct hbmd_drainer *d, uint64_t at);
/* When the next pass or put is due (UINT64_MAX: none). */
uint64_t hbmd_drainer_deadline(const struct hbmd_drainer *d);
/*
 * Do a pass if due.  drain[id] for id in 0..HBMD_DRAIN_MAX_ID: the drain
 * keys.  No drain: nothing read, nothing due.
 */
void hbmd_drainer_run(struct hbmd_drainer *d, const bool *drain, uint64_t now);

/*
 * A progress value of id's drain to put now: true with the JSON in val
 * (changed since the last put, or never put; at most once every
 * HBMD_DRAIN_PUBLISH_MS: else false, and the deadline says when).  Call
 * hbmd_drainer_published() once it is in etcd.
 */
bool hbmd_drainer_publish_due(struct hbmd_drainer *d, uint32_t id, uint64_t now, uint64_t wall,
			      char *val, size_t len);
void hbmd_drainer_published(struct hbmd_drainer *d, uint32_t id, uint64_t now);
/* The put could not be made now: again in HBMD_DRAIN_PUBLISH_MS. */
void hbmd_drainer_publish_later(struct hbmd_drainer *d, uint32_t id, uint64_t now);
/* id's drain ended: true if this node had put a progress key (to delete). */
bool hbmd_drainer_end(struct hbmd_drainer *d, uint32_t id);
/* This node's progress of id's drain, false before its first pass. */
bool hbmd_drainer_progress(const struct hbmd_drainer *d, uint32_t id,
			   struct hbm_drain_progress *p);

/*
 * A key under the drains prefix: a drain ("N": *member = UINT32_MAX) or a
 * progress key ("N/progress/M").  0, or -EPROTO.
 */
int hbmd_drain_key_parse(const char *drains_prefix, const char *key, uint32_t *node,
			 uint32_t *member);
/*
 * A progress key's value (NULL: deleted) for node's drain from member.
 * 0, or -EPROTO with the reason in err (the report is dropped), -ENOMEM.
 */
int hbmd_drainer_report(struct hbmd_drainer *d, uint32_t node, uint32_t member,
			const char *val, size_t len, char *err, size_t errlen);
/* Every report forgotten (before a range brings them all again). */
void hbmd_drainer_reports_clear(struct hbmd_drainer *d);
/* member's report of node's drain (NULL: none). */
const struct hbmd_drain_report *hbmd_drainer_report_of(const struct hbmd_drainer *d,
							uint32_t node, uint32_t member);

#endif /* HBMPOOLD_DRAIN_AGENT_H */
