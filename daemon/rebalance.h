/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rebalancing this node's chunks over the domain (issue 9), as pure logic:
 * no I/O.  When a node joins (or comes back), the leader asks every member
 * to rebalance; each member then moves a bounded number of its own chunks
 * per round (the kernel's resync-new, rate-limited by resync-mbps) from
 * the nodes that hold more than their share to those that hold less.
 *
 * A node's share of this member's chunk bytes is in proportion to its
 * placement weight (the kernel's effective weight: capacity and distance,
 * or the operator's) among the eligible nodes: live, link up, not
 * draining.  A chunk moves from donor d to receiver r only if
 *  - r is in the chunk's region's node set and has room for it,
 *  - d holds more than its share by at least the chunk and the slack,
 *  - r holds less than its share by at least half the chunk,
 * so every move shrinks the largest deviation and nothing moves back and
 * forth: a balanced domain plans no move, and a plan converges.
 * Chunks on ineligible nodes are the drain's business, not moved here.
 */
#ifndef HBMPOOLD_REBALANCE_H
#define HBMPOOLD_REBALANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HBM_RB_MAX_NODES	1024	/* HBMPOOL_MAX_NODES */

/* A node of the domain as the planner sees it. */
struct hbm_rb_node {
	uint32_t id;
	uint32_t weight;	/* effective weight, >= 1 */
	uint64_t free;		/* bytes not reserved at the home */
	bool eligible;		/* live, link up, not draining */
	/* set by the planner: */
	uint64_t used;		/* this member's chunk bytes there */
	int64_t target;		/* its share of them */
};

/* A chunk of one of this member's regions. */
struct hbm_rb_chunk {
	uint32_t region;
	uint32_t chunk;
	uint32_t node;		/* its up-to-date copy */
	uint64_t len;
	const uint64_t *set;	/* its region's node set: HBM_RB_MAX_NODES bits */
	bool busy;		/* being moved already */
};

struct hbm_rb_move {
	uint32_t region;
	uint32_t chunk;
	uint32_t from;
	uint32_t to;
};

/*
 * Plans at most @max moves into @out; returns how many.  @slack_pct: a
 * donor moves only what exceeds its share by more than this percent of
 * the share (and always by a chunk).  @nodes and @chunks are updated as
 * if the moves were done (used, free, node, busy).
 */
size_t hbm_rb_plan(struct hbm_rb_node *nodes, size_t nr_nodes,
		   struct hbm_rb_chunk *chunks, size_t nr_chunks,
		   unsigned int slack_pct, struct hbm_rb_move *out, size_t max);

/* The largest |used - target| over eligible nodes, after hbm_rb_plan(). */
uint64_t hbm_rb_imbalance(const struct hbm_rb_node *nodes, size_t nr_nodes);

#endif /* HBMPOOLD_REBALANCE_H */
