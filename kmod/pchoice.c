// SPDX-License-Identifier: GPL-2.0
/*
 * The choice of a chunk's home.  See pchoice.h.
 *
 * A candidate is eligible for a chunk of @len bytes when its class is not
 * NEVER and it has @len bytes free.  Candidates of class OK are chosen
 * first; those of class DEGRADED only when no OK one is eligible.  An OK
 * candidate that the chunk would leave with fewer than its reserve bytes
 * free (the full-pct parameter) counts as DEGRADED for that chunk: a
 * nearly full node is a last resort too.  Within a class:
 *
 *   bind, preferred       the preferred node (preferred policy only), then
 *                         the lowest distance, then the lowest id;
 *   interleave            round-robin: the first eligible candidate at or
 *                         after the cursor, which then moves past it;
 *   weighted interleave   smooth weighted round-robin (as nginx's upstream
 *                         balancer): every eligible candidate gains its
 *                         weight, the one with the most credit (lowest id
 *                         on a tie) is chosen and loses the sum of the
 *                         weights.  Over any run of chunks during which the
 *                         same candidates stay eligible, each gets its
 *                         share to within one chunk, and exactly its share
 *                         over a multiple of the sum of the weights.
 *
 * All of it is deterministic: the same set, states and weights give the
 * same placement.
 */
#include <linux/hbmpool.h>

#include "pchoice.h"

/*
 * The automatic weight of a node: proportional to its capacity and
 * inversely to its distance, capacity_MiB * HBMPOOL_DISTANCE_LOCAL /
 * distance, at least 1 (a 64 MiB node at distance 20 weighs 32; one of
 * 1 GiB at distance 40, 256).  The capacity is at most 64 GiB, so the
 * result is at most 59578, within HBMPOOL_WEIGHT_MAX.
 */
u32 hbmpool_pweight_auto(u64 capacity, u32 distance)
{
	u64 mib = capacity >> 20;
	u32 w;

	if (mib > HBMPOOL_WEIGHT_MAX)
		mib = HBMPOOL_WEIGHT_MAX;
	if (distance <= HBMPOOL_DISTANCE_LOCAL)
		distance = HBMPOOL_DISTANCE_LOCAL + 1;
	w = (u32)mib * HBMPOOL_DISTANCE_LOCAL / distance;
	if (w > HBMPOOL_WEIGHT_MAX)
		w = HBMPOOL_WEIGHT_MAX;
	return w ? w : 1;
}

/* @c's class for a chunk of @len bytes: OK but nearly full is DEGRADED. */
static unsigned int hbmpool_pclass_for(const struct hbmpool_pcand *c, u64 len)
{
	if (c->pclass == HBMPOOL_PCLASS_OK && c->free - len < c->reserve)
		return HBMPOOL_PCLASS_DEGRADED;
	return c->pclass;
}

static bool hbmpool_pfits(const struct hbmpool_pcand *c, unsigned int pclass,
			  u64 len)
{
	return c->free >= len && hbmpool_pclass_for(c, len) == pclass;
}

/* Whether @a comes before @b for bind and preferred. */
static bool hbmpool_pbefore(const struct hbmpool_pcand *a,
			    const struct hbmpool_pcand *b)
{
	if (a->preferred != b->preferred)
		return a->preferred;
	if (a->distance != b->distance)
		return a->distance < b->distance;
	return a->id < b->id;
}

/* The candidate for a chunk among those of class @pclass, or @nr. */
static unsigned int hbmpool_pchoose_class(struct hbmpool_pcand *c,
					  unsigned int nr,
					  struct hbmpool_pstate *st,
					  unsigned int pclass, u64 len)
{
	unsigned int i, k, best = nr;
	s64 total = 0;

	switch (st->policy) {
	case HBMPOOL_POLICY_INTERLEAVE:
		for (k = 0; k < nr; k++) {
			i = (st->next + k) % nr;
			if (hbmpool_pfits(&c[i], pclass, len)) {
				best = i;
				st->next = (i + 1) % nr;
				break;
			}
		}
		break;
	case HBMPOOL_POLICY_WEIGHTED_INTERLEAVE:
		for (i = 0; i < nr; i++) {
			if (!hbmpool_pfits(&c[i], pclass, len))
				continue;
			c[i].credit += c[i].weight;
			total += c[i].weight;
			if (best == nr || c[i].credit > c[best].credit)
				best = i;
		}
		if (best < nr)
			c[best].credit -= total;
		break;
	default:	/* bind, preferred */
		for (i = 0; i < nr; i++)
			if (hbmpool_pfits(&c[i], pclass, len) &&
			    (best == nr || hbmpool_pbefore(&c[i], &c[best])))
				best = i;
		break;
	}
	return best;
}

/**
 * hbmpool_pchoose - the home of the next chunk
 * @c: the candidates, in ascending id order
 * @nr: how many
 * @st: the policy and its state across the chunks of one placement
 * @len: the chunk's length
 *
 * Does not lower the chosen candidate's free bytes: the caller does once
 * the home has granted the chunk, or sets its class to NEVER if the home
 * refused it, and asks again.
 *
 * Return: the index of the chosen candidate, or -1 if none is eligible.
 */
int hbmpool_pchoose(struct hbmpool_pcand *c, unsigned int nr,
		    struct hbmpool_pstate *st, u64 len)
{
	unsigned int pclass, best;

	if (!nr)
		return -1;
	for (pclass = HBMPOOL_PCLASS_OK; pclass < HBMPOOL_PCLASS_NEVER; pclass++) {
		best = hbmpool_pchoose_class(c, nr, st, pclass, len);
		if (best < nr)
			return best;
	}
	return -1;
}

/*
 * The target of a chunk's move: under bind and preferred the first in
 * their order (preferred, nearest, lowest id), under the interleaves the
 * one with the most free bytes, so that a drain spreads its chunks; the
 * healthy class before the degraded one.  -1: none fits.
 */
int hbmpool_pchoose_target(const struct hbmpool_pcand *c, unsigned int nr,
			   u32 policy, u64 len)
{
	unsigned int pclass, i, best;

	for (pclass = HBMPOOL_PCLASS_OK; pclass < HBMPOOL_PCLASS_NEVER; pclass++) {
		best = nr;
		for (i = 0; i < nr; i++) {
			if (!hbmpool_pfits(&c[i], pclass, len))
				continue;
			if (best == nr)
				best = i;
			else if (policy == HBMPOOL_POLICY_INTERLEAVE ||
				 policy == HBMPOOL_POLICY_WEIGHTED_INTERLEAVE ?
				 c[i].free > c[best].free :
				 hbmpool_pbefore(&c[i], &c[best]))
				best = i;
		}
		if (best < nr)
			return best;
	}
	return -1;
}
