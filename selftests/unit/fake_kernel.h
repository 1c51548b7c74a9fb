/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A fake kernel for the agent's test: the ops of daemon/kernel.h on a
 * table of nodes, every call logged (one line each) and the rules a real
 * kernel would enforce checked (violations counted): no node added twice,
 * no unknown node fenced or removed, the epoch never decreasing, no change
 * once this node fenced itself (reads are fine), a distance in 11..255 and
 * a link type scaleup..scaleacross at add and at node_place ("place ID
 * distance D link L", a peer in the table only: a node-change event);
 * node_failure_domain ("failure-domain ID FD") of a peer in the table
 * only: a node-change event; node_drain ("drain ID 1|0") of a peer in the table only, not this node
 * (the kernel refuses draining on its own entry): a node-change event.  unsupported: node_fence,
 * set_epoch and fence_self answer -EOPNOTSUPP, as a kernel without issue
 * 9's kernel side does (the calls are still logged).  The segment: setup
 * makes one (incarnation next_incarnation) if there is none, else keeps it;
 * a new one ends a fence, which survives "segment-del" (fk_operator).  For the metrics,
 * nodes carry their capacity (the segment's for this node, the add's for
 * a peer), each live peer has a link (up, live, rtt 250 us) and stats_read
 * gives the counters in stats (set them at will, or with fk_region_change();
 * reads are counted in stats_reads, not logged).
 * Events (kernel.h's event channel): once events_open (logged
 * "events-open") made its eventfd, every change of the table is an event,
 * as the kernel's monitor group has it (node add/del/change, then a domain
 * change; the epoch, fence-self (a domain change only); the segment at
 * setup; a link whose oper state fk_set_link() changes); the queue holds
 * FK_EVQ events, more is an overrun.  fk_overrun() injects one; fk_operator() changes the table as
 * hbmctl would, behind the agent's back (logged "op-..."), with or
 * without its event.  Reads of events are counted (events_reads), not
 * logged.
 * Thread-safe (lock).
 */
#ifndef HBM_UNIT_FAKE_KERNEL_H
#define HBM_UNIT_FAKE_KERNEL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "kernel.h"

enum fk_state { FK_ABSENT, FK_LIVE, FK_FENCED };

struct fake_kernel {
	pthread_mutex_t lock;
	uint32_t self_id;
	bool unsupported;
	unsigned int refuse_del;	/* the next node_remove calls: -EBUSY */
	uint64_t next_incarnation;	/* a new segment's, given by setup */
	bool segment;			/* one is exported (setup made it) */
	uint64_t incarnation;		/* its incarnation */
	char log[32768];
	size_t log_len;
	unsigned int calls, set_epoch_calls;
	unsigned int violations;
	char violation[256];		/* the first one */
	enum fk_state node[1024];
	bool draining[1024];		/* node-set draining; cleared by add and del */
	uint64_t capacity[1024];
	uint32_t failure_domain[1024];	/* add's, then node_failure_domain's */
	struct hbmd_kernel_stats stats;
	unsigned int stats_reads;	/* stats_read calls (not logged) */
	/* placement_params: the last values and the calls (not logged) */
	uint32_t full_pct;
	int avoid_degraded;		/* -1: never set */
	unsigned int placement_calls;
	uint64_t epoch;
	/*
	 * This node fenced (domain-set fenced): the domain's flag, as the
	 * kernel has it; the self node stays live in nodes_read.  Only a new
	 * segment (setup without one) clears it.
	 */
	bool self_fenced;
	uint64_t self_fenced_ms;	/* CLOCK_MONOTONIC */
	/*
	 * The links links_read returns, as the test scripts them (under the
	 * lock); reads of them are counted in link_reads, not logged and not
	 * in calls (the health sampler reads them every interval).
	 */
	struct hbmd_kernel_link links[8];
	unsigned int nr_links;
	unsigned int link_reads;
	/* events */
	int evfd;			/* -1 until events_open */
#define FK_EVQ 256
	struct hbmd_kernel_event evq[FK_EVQ];
	unsigned int evq_n;
	bool ev_lost;			/* an overrun to report first */
	uint64_t evseq;
	unsigned int events_reads, overruns_read;
};

void fk_init(struct fake_kernel *fk, uint32_t self_id, uint64_t incarnation, bool unsupported);
struct hbmd_kernel fk_kernel(struct fake_kernel *fk);
/* The number of the first log line that is s, or starts with s and a space; -1: none. */
int fk_find(struct fake_kernel *fk, const char *s);
/* Set (add if new) the link to node id as the next links_read returns it. */
void fk_set_link(struct fake_kernel *fk, const struct hbmd_kernel_link *l);
/*
 * Region region's chunks changed health (region-change-ntf: degraded,
 * lost): the stats stats_read gives from now on are s (its sums), and the
 * event is queued.
 */
void fk_region_change(struct fake_kernel *fk, uint32_t region, uint32_t degraded, uint32_t lost,
		      const struct hbmd_kernel_stats *s);
/* The next events_read reports a loss (and the queued events are lost). */
void fk_overrun(struct fake_kernel *fk);
/*
 * An operator's change, as hbmctl makes it: "del" (node del), "fence" (node
 * set state fenced), "add" (node new), "fence-self" (domain set fenced),
 * "segment-del" (segment del; id unused);
 * notify: with its events (else they are lost, unseen).  -errno if the
 * table does not allow it.
 */
int fk_operator(struct fake_kernel *fk, const char *op, uint32_t id, bool notify);
/* "nodes-read" lines in the log (the agent's dumps of the nodes). */
unsigned int fk_count(struct fake_kernel *fk, const char *s);

#endif /* HBM_UNIT_FAKE_KERNEL_H */
