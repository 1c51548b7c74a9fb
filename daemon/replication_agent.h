/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The replicator: the agent's part that tells the domain how this node's
 * replicated regions fare (issue 10: "the leader is told"), without etcd.
 *
 * The kernel keeps the copies of a replicated chunk and restores them by
 * itself; it announces a region whose degraded or lost chunk count
 * changed (region-change-ntf, at most once a second per region).  On such
 * an event, on a region's creation or deletion, after lost events (an
 * overrun) and at start, a read of the kernel's regions is due (stats_read:
 * region-get dump), at most once every HBMD_REPL_READ_GAP_MS, and every
 * HBMD_REPL_IDLE_MS anyway (a kernel without the event).  Its summary
 * (replication.h) is to be published as PREFIX/DOMAIN/replication/SELF
 * under the lease when it changed (at most once every HBMD_REPL_PUBLISH_MS),
 * once there is anything to say; the agent puts it
 * (hbmd_replicator_publish_due(), hbmd_replicator_publish_done()).
 */
#ifndef HBMPOOLD_REPLICATION_AGENT_H
#define HBMPOOLD_REPLICATION_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel.h"
#include "replication.h"

#define HBMD_REPL_READ_GAP_MS	1000	/* at most one read of the regions a second */
#define HBMD_REPL_IDLE_MS	30000	/* a read anyway */
#define HBMD_REPL_PUBLISH_MS	1000	/* at most one put a second */

typedef void hbmd_repl_log_fn(void *arg, int level, const char *msg);

struct hbmd_replicator;

int hbmd_replicator_new(struct hbmd_kernel k, hbmd_repl_log_fn *log, void *log_arg,
			struct hbmd_replicator **out);
void hbmd_replicator_free(struct hbmd_replicator *r);

/* A read of the kernel's regions due at the soonest at (ms): an event. */
void hbmd_replicator_poke(struct hbmd_replicator *r, uint64_t at);
/* When the next read or put is due (UINT64_MAX: none). */
uint64_t hbmd_replicator_deadline(const struct hbmd_replicator *r);
/* The read, if due. */
void hbmd_replicator_run(struct hbmd_replicator *r, uint64_t now);
/* This node's summary as last read; false before the first read. */
bool hbmd_replicator_summary(const struct hbmd_replicator *r, struct hbm_repl *s);

/*
 * The etcd key holds s (the agent found this node's key in a range: a
 * daemon restarted on the same lease), or, s NULL, there is none (someone
 * deleted it): what a put changes is judged against it.
 */
void hbmd_replicator_seen(struct hbmd_replicator *r, const struct hbm_repl *s);
/*
 * A value to put now: true with the JSON in val (the summary differs from
 * the key's, or there is no key and something to say; at most once every
 * HBMD_REPL_PUBLISH_MS: else false, and the deadline says when).  Then
 * hbmd_replicator_publish_done() with the put's result (0: in etcd), at
 * most one put in flight.
 */
bool hbmd_replicator_publish_due(struct hbmd_replicator *r, uint64_t now, uint64_t wall,
				 char *val, size_t len);
void hbmd_replicator_publish_done(struct hbmd_replicator *r, int ret, uint64_t now);

#endif /* HBMPOOLD_REPLICATION_AGENT_H */
