// SPDX-License-Identifier: GPL-2.0
/*
 * The logic of replicated chunks.  See replica.h.
 *
 * A copy is good when it is up to date and its home still has the memory
 * it was placed in (not a new incarnation, not fenced).  Only good copies
 * are read; an outdated copy (it missed a write) or one on lost memory
 * never is, whatever its home says later.  A chunk with no good copy is
 * lost.
 *
 * A fetch reads the first good copy in map order (nearest first) whose
 * home is reachable; when none is, the first good one whose home still
 * takes requests (a fetch failed there: it is suspect), else the first
 * good one, whose failure then reports the loss of service.  A fetch that
 * failed is retried from the next good copy it has not tried
 * (hbmpool_replica_next()); one that timed out, whose pages the transport
 * may still write, is fetched again into new pages from another good copy
 * that is reachable (hbmpool_replica_failover()).
 *
 * A write-back goes to every up-to-date copy (and a move's target).  If
 * at least one took it, it succeeded: the copies that missed it are marked
 * outdated before anything can read the pages from them again; if none
 * did, the pages stay dirty.  A chunk with fewer good copies than the
 * region's replicas, at least one good and no copy being filled, wants a
 * new copy, read from a good copy whose home takes requests
 * (hbmpool_replica_source()); when it is filled, the copies that are not
 * good are dropped.
 * A new copy never shares a failure domain (other than none) with a good
 * copy.
 */
#include "replica.h"

bool hbmpool_rcopy_good(const struct hbmpool_rcopy *c)
{
	return c->state == HBMPOOL_COPY_UPTODATE && c->intact;
}

/* How many of the @n copies at @c are good. */
unsigned int hbmpool_replica_good(const struct hbmpool_rcopy *c, unsigned int n)
{
	unsigned int i, good = 0;

	for (i = 0; i < n; i++)
		good += hbmpool_rcopy_good(&c[i]);
	return good;
}

/*
 * The copy a fetch reads, other than @skip (-1: none): the first good and
 * reachable one, else the first good and linked (suspect) one, else the
 * first good one.  -1: no good copy (the chunk is
 * lost, or its only good copy is @skip).
 */
int hbmpool_replica_pick(const struct hbmpool_rcopy *c, unsigned int n,
			 int skip)
{
	return hbmpool_replica_next(c, n, skip >= 0 ? 1UL << skip : 0);
}

/* Whether a fetch from copy @failed that failed may go to another copy. */
bool hbmpool_replica_failover(const struct hbmpool_rcopy *c, unsigned int n,
			      int failed)
{
	int i = hbmpool_replica_pick(c, n, failed);

	return i >= 0 && c[i].reachable;
}

/*
 * The copy a fetch that failed at the copies of @tried (bit i: copy i)
 * retries from: the first good one not tried, reachable ones first, then
 * linked ones.  A fetch retried this way tries each copy at most once.
 * -1: none is left.
 */
int hbmpool_replica_next(const struct hbmpool_rcopy *c, unsigned int n,
			 unsigned long tried)
{
	int i, linked = -1, first = -1;

	for (i = 0; i < (int)n && i < (int)(8 * sizeof(tried)); i++) {
		if ((tried & (1UL << i)) || !hbmpool_rcopy_good(&c[i]))
			continue;
		if (c[i].reachable)
			return i;
		if (linked < 0 && c[i].linked)
			linked = i;
		if (first < 0)
			first = i;
	}
	return linked >= 0 ? linked : first;
}

/*
 * The copy a re-replication reads: the one a fetch reads, if its home
 * takes requests, a suspect one too: only a request tells whether it
 * works again, and a region nobody uses sends none.  -1: none.
 */
int hbmpool_replica_source(const struct hbmpool_rcopy *c, unsigned int n)
{
	int i = hbmpool_replica_pick(c, n, -1);

	return i >= 0 && c[i].linked ? i : -1;
}

/* @took and @missed: up-to-date copies that took a write-back, and not. */
enum hbmpool_wb_outcome hbmpool_replica_wb_outcome(unsigned int took,
						   unsigned int missed)
{
	if (!took)
		return HBMPOOL_WB_DIRTY;
	return missed ? HBMPOOL_WB_CLEAN_OUTDATE : HBMPOOL_WB_CLEAN;
}

/* Whether a chunk with copies @c wants one more (re-replication). */
bool hbmpool_replica_wants_copy(const struct hbmpool_rcopy *c, unsigned int n,
				unsigned int replicas)
{
	unsigned int i, good = hbmpool_replica_good(c, n);

	for (i = 0; i < n; i++)
		if (c[i].state == HBMPOOL_COPY_SYNCING)
			return false;
	return good && good < replicas;
}

/* The copies a completed re-replication drops: bit i, copy i is not good. */
unsigned long hbmpool_replica_discard(const struct hbmpool_rcopy *c,
				      unsigned int n)
{
	unsigned long mask = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		if (c[i].state != HBMPOOL_COPY_SYNCING && !hbmpool_rcopy_good(&c[i]))
			mask |= 1UL << i;
	return mask;
}

/* Whether a new copy in failure domain @domain keeps the good copies' apart. */
bool hbmpool_replica_domain_free(const struct hbmpool_rcopy *c, unsigned int n,
				 u32 domain)
{
	unsigned int i;

	if (!domain)
		return true;
	for (i = 0; i < n; i++)
		if (c[i].domain == domain &&
		    (hbmpool_rcopy_good(&c[i]) || c[i].state == HBMPOOL_COPY_SYNCING))
			return false;
	return true;
}
