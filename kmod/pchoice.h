/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The choice of a home for one chunk of a region, as pure logic over an
 * array of candidates (the nodes of the region's set, in ascending id
 * order): eligibility, the policies' orders, interleave's cursor and the
 * smooth weighted round-robin of weighted interleave.  placement.c fills
 * the array under hbmpool_nodes_lock and calls hbmpool_pchoose() once per
 * chunk.  Built into the module and into a user-space unit test
 * (selftests/unit/pchoice_unit.c); nothing here sleeps, locks or
 * allocates: the caller serialises.
 */
#ifndef _HBMPOOL_PCHOICE_H
#define _HBMPOOL_PCHOICE_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include "wire_user.h"	/* selftests/unit/: the unit test's stand-ins */
#endif

/* How a node of the set may take new chunks. */
enum hbmpool_pclass {
	HBMPOOL_PCLASS_OK,		/* live, not draining, link healthy */
	HBMPOOL_PCLASS_DEGRADED,	/* live, but its link is degraded: last resort */
	HBMPOOL_PCLASS_NEVER,		/* unreachable, link down, fenced, removed, draining */
};

struct hbmpool_pcand {
	u64 free;		/* bytes not reserved; the caller lowers it per chunk */
	u64 reserve;		/* bytes a chunk should leave free (full-pct), else last resort */
	s64 credit;		/* weighted interleave's running credit; 0 at the start */
	u32 id;
	u32 distance;
	u32 weight;		/* effective weight, >= 1 */
	u8 pclass;		/* enum hbmpool_pclass */
	bool preferred;		/* the region's preferred node (preferred policy) */
};

struct hbmpool_pstate {
	u32 policy;		/* HBMPOOL_POLICY_* */
	unsigned int next;	/* interleave: the candidate to try first */
};

/* Weights: 0 asks for the automatic one; set ones are 1..HBMPOOL_WEIGHT_MAX. */
u32 hbmpool_pweight_auto(u64 capacity, u32 distance);
int hbmpool_pchoose(struct hbmpool_pcand *c, unsigned int nr,
		    struct hbmpool_pstate *st, u64 len);
int hbmpool_pchoose_target(const struct hbmpool_pcand *c, unsigned int nr,
			   u32 policy, u64 len);

#endif /* _HBMPOOL_PCHOICE_H */
