/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The drain planner: pure logic, no kernel, no etcd (drain_agent.c drives
 * it).  A drain of node N (the key PREFIX/DOMAIN/drains/N) makes every
 * member move its own chunks off N: a chunk belongs to the node whose
 * region placed it, and only that node's kernel can move it (resync-new
 * with from-node-id N, the target chosen by placement).
 *
 * Each pass the caller gives the planner what the kernel says now:
 *
 *  - the chunks of this node's regions whose up-to-date copy is on a
 *    draining node (region-get dump with the chunks flag), each with its
 *    bytes and whether a move of it is in progress (syncing-node-id);
 *  - the moves the kernel has (resync-get dump): copying, or ended in the
 *    last 60 s;
 *
 * and the planner says which chunks to move now (at most jobs moves in
 * flight, oldest failures last), which ended moves of its own to forget
 * (resync-del), and when the next pass is due.  A move that fails (its
 * resync-new refused, or the move ended failed or cancelled) is retried
 * after an exponential back-off, HBM_DRAIN_BACKOFF_MIN_MS doubling up to
 * HBM_DRAIN_BACKOFF_MAX_MS; after HBM_DRAIN_GIVE_UP failures in a row the
 * chunk is *given up*: reported once (a failure the operator must see),
 * and still retried every HBM_DRAIN_BACKOFF_MAX_MS, so a drain never
 * silently stops.  A chunk that leaves the list (moved, its region freed,
 * the drain ended) is forgotten with its failures.
 *
 * A *lost* chunk (its home lost the memory that held it: region-get's
 * lost flag) has nothing to move: it is never picked, and counted apart,
 * so a drain of a node that came back with new memory ends.
 *
 * Progress per drained node: chunks and bytes left (moves in progress
 * included: the chunk still lives there until the switch; lost chunks not),
 * chunks whose last try failed, chunks given up, lost chunks.
 */
#ifndef HBMPOOLD_DRAIN_H
#define HBMPOOLD_DRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HBM_DRAIN_BACKOFF_MIN_MS	1000
#define HBM_DRAIN_BACKOFF_MAX_MS	30000
#define HBM_DRAIN_GIVE_UP		6	/* failures in a row: 1+2+4+8+16 s of retries */
#define HBM_DRAIN_PASS_MS		1000	/* a pass while moves are in flight */

/* A chunk of this node's regions on a draining node. */
struct hbm_drain_chunk {
	uint32_t region, chunk;
	uint32_t node;		/* where its up-to-date copy lives (draining) */
	uint64_t bytes;
	bool syncing;		/* the kernel has a move of it in progress */
	bool lost;		/* its data is gone (region-get's lost): never moved */
};

enum hbm_drain_move_state {
	HBM_DRAIN_COPYING,	/* as enum hbmpool_nl_resync_state */
	HBM_DRAIN_DONE,
	HBM_DRAIN_FAILED,
	HBM_DRAIN_CANCELLED,
};

/* A move as the kernel has it. */
struct hbm_drain_move {
	uint32_t id, region, chunk, from;
	int state;		/* enum hbm_drain_move_state */
	int error;		/* failed: a positive errno */
};

/* A chunk with failures, or a move of ours in flight. */
struct hbm_drain_entry {
	uint32_t region, chunk, node;
	uint32_t move_id;	/* our move in flight, 0: none */
	unsigned int failures;	/* in a row */
	int last_error;		/* positive errno */
	uint64_t retry_at;	/* no new try before (ms) */
	bool given_up;		/* said */
	bool seen;		/* in this pass's list */
};

struct hbm_drain {
	struct hbm_drain_entry *e;
	size_t n, cap;
	uint64_t moved;		/* our moves that ended done */
	uint64_t failed;	/* failures seen (refusals and failed moves) */
};

/* What a pass decided. */
struct hbm_drain_pass {
	size_t *pick;		/* indexes into the chunks to move now */
	size_t npick;
	uint32_t *forget;	/* ended moves of ours: resync-del them */
	size_t nforget;
	size_t *gave_up;	/* indexes of chunks given up in this pass (say them) */
	size_t ngave_up;
	unsigned int in_flight;	/* moves copying (ours and others' of listed chunks) */
	uint64_t next_ms;	/* the next pass is due (absolute), UINT64_MAX: none needed */
};

struct hbm_drain_progress {
	uint64_t chunks_left, bytes_left;	/* lost chunks not included */
	uint64_t lost;		/* chunks on the node whose data is gone: nothing to move */
	uint64_t failures;	/* chunks left whose last try failed */
	uint64_t given_up;	/* of which given up */
	uint64_t moving;	/* chunks being moved */
};

void hbm_drain_init(struct hbm_drain *d);
void hbm_drain_free(struct hbm_drain *d);
void hbm_drain_pass_free(struct hbm_drain_pass *p);

/* The back-off after failures (>= 1) in a row. */
uint64_t hbm_drain_backoff_ms(unsigned int failures);

/*
 * One pass at now (ms): chunks (c, nc: every chunk on every draining node)
 * and moves (m, nm) as the kernel has them, at most jobs (>= 1) moves in
 * flight.  0, or -ENOMEM (p freed).  Free p with hbm_drain_pass_free().
 */
int hbm_drain_plan(struct hbm_drain *d, const struct hbm_drain_chunk *c, size_t nc,
		   const struct hbm_drain_move *m, size_t nm, unsigned int jobs, uint64_t now,
		   struct hbm_drain_pass *p);

/*
 * The caller issued the move of chunk c (a pick): the kernel's answer.
 * ret 0: the move's id; -EBUSY: someone else moves it (no failure); any
 * other -errno: a failure, retried after the back-off.  0 or -ENOMEM.
 */
int hbm_drain_issued(struct hbm_drain *d, const struct hbm_drain_chunk *c, int ret,
		     uint32_t id, uint64_t now);

/* The progress of node's drain (c, nc as given to the last pass). */
void hbm_drain_progress(const struct hbm_drain *d, const struct hbm_drain_chunk *c, size_t nc,
			uint32_t node, struct hbm_drain_progress *p);

/* The entry of a chunk (NULL: none), for tests and logs. */
const struct hbm_drain_entry *hbm_drain_find(const struct hbm_drain *d, uint32_t region,
					     uint32_t chunk);

#endif /* HBMPOOLD_DRAIN_H */
