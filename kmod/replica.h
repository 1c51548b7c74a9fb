/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The logic of replicated chunks, as pure functions over the copies of one
 * chunk: which copies are good, which one a fetch reads, what a write-back
 * that some copies missed leaves behind, when a chunk needs another copy
 * and which copies a re-replication discards.  placement.c, fault.c,
 * cache.c and resync.c describe a chunk map's copies with
 * hbmpool_map_rcopies() and ask here.  Built into the module and into a
 * user-space unit test (selftests/unit/replica_unit.c); nothing here
 * sleeps, locks or allocates.
 */
#ifndef _HBMPOOL_REPLICA_H
#define _HBMPOOL_REPLICA_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include "wire_user.h"	/* selftests/unit/: the unit test's stand-ins */
#endif

/* What a copy of a chunk holds (struct hbmpool_copy.state). */
enum hbmpool_copy_state {
	HBMPOOL_COPY_UPTODATE,		/* read from it, write to it */
	HBMPOOL_COPY_SYNCING,		/* being filled (resync.c): written, never read */
	HBMPOOL_COPY_OUTDATED,		/* missed a write: neither read nor written */
};

/* One copy of a chunk, as the logic sees it. */
struct hbmpool_rcopy {
	u8 state;		/* enum hbmpool_copy_state */
	bool intact;		/* its home has the memory it was placed in, not fenced */
	bool linked;		/* its home takes requests: live, link not set down */
	bool reachable;		/* linked, and no fetch failed there since a success */
	u32 domain;		/* its home's failure domain; 0: none */
};

/* What a write-back leaves, from its requests to the up-to-date copies. */
enum hbmpool_wb_outcome {
	HBMPOOL_WB_CLEAN,		/* every copy took it */
	HBMPOOL_WB_CLEAN_OUTDATE,	/* some did: the others are outdated first */
	HBMPOOL_WB_DIRTY,		/* none did: the pages stay dirty */
};

bool hbmpool_rcopy_good(const struct hbmpool_rcopy *c);
unsigned int hbmpool_replica_good(const struct hbmpool_rcopy *c, unsigned int n);
int hbmpool_replica_pick(const struct hbmpool_rcopy *c, unsigned int n,
			 int skip);
bool hbmpool_replica_failover(const struct hbmpool_rcopy *c, unsigned int n,
			      int failed);
int hbmpool_replica_next(const struct hbmpool_rcopy *c, unsigned int n,
			 unsigned long tried);
enum hbmpool_wb_outcome hbmpool_replica_wb_outcome(unsigned int took,
						   unsigned int missed);
int hbmpool_replica_source(const struct hbmpool_rcopy *c, unsigned int n);
bool hbmpool_replica_wants_copy(const struct hbmpool_rcopy *c, unsigned int n,
				unsigned int replicas);
unsigned long hbmpool_replica_discard(const struct hbmpool_rcopy *c,
				      unsigned int n);
bool hbmpool_replica_domain_free(const struct hbmpool_rcopy *c, unsigned int n,
				 u32 domain);

#endif /* _HBMPOOL_REPLICA_H */
