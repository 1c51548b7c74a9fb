/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A fake kernel for the agent's test: the ops of daemon/kernel.h on a
 * table of nodes, every call logged (one line each) and the rules a real
 * kernel would enforce checked (violations counted): no node added twice,
 * no unknown node fenced or removed, the epoch never decreasing, no change
 * once this node fenced itself (reads are fine).  unsupported: node_fence,
 * set_epoch and fence_self answer -EOPNOTSUPP, as a kernel without issue
 * 9's kernel side does (the calls are still logged).  For the metrics,
 * nodes carry their capacity (the segment's for this node, the add's for
 * a peer), each live peer has a link (up, live, rtt 250 us) and stats_read
 * gives the counters in stats (set them at will; reads are not logged).
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
	uint64_t next_incarnation;	/* the segment's, given by setup */
	char log[32768];
	size_t log_len;
	unsigned int calls, set_epoch_calls;
	unsigned int violations;
	char violation[256];		/* the first one */
	enum fk_state node[1024];
	uint64_t capacity[1024];
	struct hbmd_kernel_stats stats;
	uint64_t epoch;
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
};

void fk_init(struct fake_kernel *fk, uint32_t self_id, uint64_t incarnation, bool unsupported);
struct hbmd_kernel fk_kernel(struct fake_kernel *fk);
/* The number of the first log line that is s, or starts with s and a space; -1: none. */
int fk_find(struct fake_kernel *fk, const char *s);
/* Set (add if new) the link to node id as the next links_read returns it. */
void fk_set_link(struct fake_kernel *fk, const struct hbmd_kernel_link *l);

#endif /* HBM_UNIT_FAKE_KERNEL_H */
