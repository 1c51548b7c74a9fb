// SPDX-License-Identifier: GPL-2.0
/*
 * The rebalance planner (see rebalance.h): pure logic.
 */
#include "rebalance.h"

static bool rb_in_set(const uint64_t *set, uint32_t id)
{
	return id < HBM_RB_MAX_NODES && (set[id / 64] >> (id % 64)) & 1;
}

static struct hbm_rb_node *rb_node(struct hbm_rb_node *nodes, size_t nr,
				   uint32_t id)
{
	for (size_t i = 0; i < nr; i++)
		if (nodes[i].id == id)
			return &nodes[i];
	return NULL;
}

/* Each node's use and share of this member's chunk bytes. */
static void rb_shares(struct hbm_rb_node *nodes, size_t nr_nodes,
		      const struct hbm_rb_chunk *chunks, size_t nr_chunks)
{
	uint64_t total = 0, wsum = 0;
	size_t i;

	for (i = 0; i < nr_nodes; i++) {
		nodes[i].used = 0;
		nodes[i].target = 0;
		if (nodes[i].eligible)
			wsum += nodes[i].weight ? nodes[i].weight : 1;
	}
	for (i = 0; i < nr_chunks; i++) {
		struct hbm_rb_node *n = rb_node(nodes, nr_nodes, chunks[i].node);

		if (n)
			n->used += chunks[i].len;
		/* only what eligible nodes hold is shared among them */
		if (n && n->eligible)
			total += chunks[i].len;
	}
	for (i = 0; i < nr_nodes && wsum; i++)
		if (nodes[i].eligible)
			nodes[i].target = (int64_t)((double)total *
						    (nodes[i].weight ? nodes[i].weight : 1) /
						    (double)wsum);
}

static int64_t rb_over(const struct hbm_rb_node *n)
{
	return (int64_t)n->used - n->target;
}

/* The chunk on @d that may go to @r, or -1. */
static long rb_pick(const struct hbm_rb_node *d, const struct hbm_rb_node *r,
		    const struct hbm_rb_chunk *chunks, size_t nr_chunks,
		    uint64_t slack)
{
	for (size_t i = 0; i < nr_chunks; i++) {
		const struct hbm_rb_chunk *c = &chunks[i];
		int64_t len = (int64_t)c->len;

		if (c->busy || c->node != d->id || !rb_in_set(c->set, r->id) ||
		    c->len > r->free)
			continue;
		if (rb_over(d) < len + (int64_t)slack || -rb_over(r) < len / 2)
			continue;
		return (long)i;
	}
	return -1;
}

size_t hbm_rb_plan(struct hbm_rb_node *nodes, size_t nr_nodes,
		   struct hbm_rb_chunk *chunks, size_t nr_chunks,
		   unsigned int slack_pct, struct hbm_rb_move *out, size_t max)
{
	size_t n = 0;

	rb_shares(nodes, nr_nodes, chunks, nr_chunks);
	while (n < max) {
		struct hbm_rb_node *best_d = NULL, *best_r = NULL;
		long best_c = -1;

		/* the most over-share donor with a chunk that fits the most under-share receiver */
		for (size_t i = 0; i < nr_nodes; i++) {
			struct hbm_rb_node *d = &nodes[i];
			uint64_t slack = d->target > 0 ?
					 (uint64_t)d->target * slack_pct / 100 : 0;

			if (!d->eligible || rb_over(d) <= 0 ||
			    (best_d && rb_over(d) <= rb_over(best_d)))
				continue;
			for (size_t j = 0; j < nr_nodes; j++) {
				struct hbm_rb_node *r = &nodes[j];
				long c;

				if (!r->eligible || r == d || rb_over(r) >= 0 ||
				    (best_r && best_d == d && rb_over(r) >= rb_over(best_r)))
					continue;
				c = rb_pick(d, r, chunks, nr_chunks, slack);
				if (c < 0)
					continue;
				best_d = d;
				best_r = r;
				best_c = c;
			}
		}
		if (best_c < 0)
			break;
		out[n++] = (struct hbm_rb_move){
			.region = chunks[best_c].region,
			.chunk = chunks[best_c].chunk,
			.from = best_d->id,
			.to = best_r->id,
		};
		best_d->used -= chunks[best_c].len;
		best_d->free += chunks[best_c].len;
		best_r->used += chunks[best_c].len;
		best_r->free -= chunks[best_c].len;
		chunks[best_c].node = best_r->id;
		chunks[best_c].busy = true;
	}
	return n;
}

uint64_t hbm_rb_imbalance(const struct hbm_rb_node *nodes, size_t nr_nodes)
{
	uint64_t worst = 0;

	for (size_t i = 0; i < nr_nodes; i++) {
		int64_t o = rb_over(&nodes[i]);
		uint64_t a = o < 0 ? (uint64_t)-o : (uint64_t)o;

		if (nodes[i].eligible && a > worst)
			worst = a;
	}
	return worst;
}
