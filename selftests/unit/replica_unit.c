// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of the logic of replicated chunks (kmod/replica.c), built for
 * user space: which copies are good, which one a fetch reads and when a
 * failed fetch may go elsewhere, what a write-back that some copies missed
 * leaves, when a chunk wants a new copy, which copies re-replication drops,
 * and failure domains.  TAP output.
 */
#include <stdio.h>

#include "replica.h"
#include "tap.h"

#define UP	HBMPOOL_COPY_UPTODATE
#define SYNC	HBMPOOL_COPY_SYNCING
#define OUT	HBMPOOL_COPY_OUTDATED

static struct hbmpool_rcopy rc(u8 state, bool intact, bool reachable, u32 domain)
{
	return (struct hbmpool_rcopy){ .state = state, .intact = intact,
				       .linked = reachable, .reachable = reachable,
				       .domain = domain };
}

/* A copy whose home takes requests, but where a fetch failed (suspect). */
static struct hbmpool_rcopy suspect(void)
{
	struct hbmpool_rcopy c = rc(UP, true, true, 0);

	c.reachable = false;
	return c;
}

static void test_good(void)
{
	struct hbmpool_rcopy c[4] = {
		rc(UP, true, true, 0),		/* good */
		rc(UP, false, true, 0),		/* its home lost the memory */
		rc(OUT, true, true, 0),		/* missed a write */
		rc(SYNC, true, true, 0),	/* being filled */
	};

	ok(hbmpool_rcopy_good(&c[0]), "an up-to-date copy on intact memory is good");
	ok(!hbmpool_rcopy_good(&c[1]), "a copy on memory its home lost is not");
	ok(!hbmpool_rcopy_good(&c[2]), "an outdated copy is not, on intact memory too");
	ok(!hbmpool_rcopy_good(&c[3]), "a copy being filled is not");
	ok(hbmpool_replica_good(c, 4) == 1, "one good copy of four");
	ok(hbmpool_replica_good(c, 0) == 0, "no copy, none good");
}

static void test_pick(void)
{
	struct hbmpool_rcopy c[3];

	c[0] = rc(UP, true, true, 0);
	c[1] = rc(UP, true, true, 0);
	c[2] = rc(UP, true, true, 0);
	ok(hbmpool_replica_pick(c, 3, -1) == 0, "the first copy (nearest) when all are good");
	ok(hbmpool_replica_pick(c, 3, 0) == 1, "the next one when the first is skipped");
	c[0].reachable = false;
	ok(hbmpool_replica_pick(c, 3, -1) == 1, "an unreachable first copy is passed over");
	c[1].state = OUT;
	ok(hbmpool_replica_pick(c, 3, -1) == 2, "an outdated copy is never read");
	c[2].intact = false;
	ok(hbmpool_replica_pick(c, 3, -1) == 0,
	   "with no reachable good copy, the first good one (its failure reports the loss)");
	c[0].state = OUT;
	ok(hbmpool_replica_pick(c, 3, -1) == -1, "no good copy: none (the chunk is lost)");
	c[0] = rc(SYNC, true, true, 0);
	c[1] = rc(UP, true, true, 0);
	ok(hbmpool_replica_pick(c, 2, -1) == 1, "a move's target is never read");
}

static void test_suspect(void)
{
	struct hbmpool_rcopy c[3];

	c[0] = rc(UP, true, false, 0);		/* link down */
	c[1] = suspect();
	c[2] = rc(UP, true, true, 0);
	ok(hbmpool_replica_pick(c, 3, -1) == 2, "a reachable copy before a suspect one");
	c[2].reachable = c[2].linked = false;
	ok(hbmpool_replica_pick(c, 3, -1) == 1,
	   "no reachable copy: a suspect one (it takes requests) before one whose link is down");
	ok(hbmpool_replica_next(c, 3, 1UL << 1) == 0,
	   "the suspect one tried: the first good one left");
	ok(hbmpool_replica_source(c, 3) == 1,
	   "re-replication reads a suspect copy: only a request tells if it works again");
	c[1].linked = false;
	ok(hbmpool_replica_pick(c, 3, -1) == 0, "none linked: the first good one");
	ok(hbmpool_replica_source(c, 3) == -1,
	   "re-replication has no source while no good copy's home takes requests");
	c[0] = rc(OUT, true, true, 0);
	c[1] = suspect();
	c[2] = rc(UP, false, true, 0);
	ok(hbmpool_replica_source(c, 3) == 1, "only good copies are sources");
	c[1].state = OUT;
	ok(hbmpool_replica_source(c, 3) == -1, "no good copy: no source");
}

static void test_failover(void)
{
	struct hbmpool_rcopy c[3] = {
		rc(UP, true, true, 0), rc(UP, true, true, 0), rc(OUT, true, true, 0),
	};

	ok(hbmpool_replica_failover(c, 3, 0), "copy 0 failed: copy 1 serves");
	c[1].reachable = false;
	ok(!hbmpool_replica_failover(c, 3, 0),
	   "copy 0 failed and copy 1 is unreachable: no failover (the outdated one never serves)");
	c[1].reachable = true;
	c[1].intact = false;
	ok(!hbmpool_replica_failover(c, 3, 0), "copy 1 lost its memory: no failover");
	ok(!hbmpool_replica_failover(c, 1, 0), "a single copy has nothing to fail over to");
	ok(hbmpool_replica_failover(c, 3, -1), "a fetch from no known copy may go to a good one");
}

static void test_next(void)
{
	struct hbmpool_rcopy c[3] = {
		rc(UP, true, true, 0), rc(UP, true, false, 0), rc(UP, true, true, 0),
	};

	ok(hbmpool_replica_next(c, 3, 0x1) == 2,
	   "copy 0 failed: the next reachable good copy (2) before an unreachable one (1)");
	ok(hbmpool_replica_next(c, 3, 0x5) == 1,
	   "0 and 2 failed: the unreachable (suspect) good copy is tried too");
	ok(hbmpool_replica_next(c, 3, 0x7) == -1, "every copy tried: none left, the fetch fails");
	c[2].state = OUT;
	ok(hbmpool_replica_next(c, 3, 0x1) == 1, "an outdated copy is never tried");
	c[1].intact = false;
	ok(hbmpool_replica_next(c, 3, 0x1) == -1, "nor one on lost memory");
	ok(hbmpool_replica_next(c, 1, 0) == 0, "nothing tried: the only good copy");
}

static void test_wb_outcome(void)
{
	ok(hbmpool_replica_wb_outcome(2, 0) == HBMPOOL_WB_CLEAN, "every copy took it: clean");
	ok(hbmpool_replica_wb_outcome(1, 1) == HBMPOOL_WB_CLEAN_OUTDATE,
	   "one took it, one missed it: clean, the missing copy outdated");
	ok(hbmpool_replica_wb_outcome(1, 3) == HBMPOOL_WB_CLEAN_OUTDATE,
	   "one of four is enough");
	ok(hbmpool_replica_wb_outcome(0, 2) == HBMPOOL_WB_DIRTY, "none took it: dirty");
	ok(hbmpool_replica_wb_outcome(0, 0) == HBMPOOL_WB_DIRTY,
	   "no up-to-date copy was written: dirty, never acknowledged");
}

static void test_wants(void)
{
	struct hbmpool_rcopy c[3] = {
		rc(UP, true, true, 0), rc(OUT, true, true, 0), rc(UP, false, true, 0),
	};

	ok(hbmpool_replica_wants_copy(c, 3, 2), "one good copy of 2 wanted: re-replicate");
	ok(!hbmpool_replica_wants_copy(c, 3, 1), "one good of 1 wanted: nothing to do");
	ok(!hbmpool_replica_wants_copy(c + 1, 2, 2), "no good copy (lost): nothing to copy from");
	c[2] = rc(SYNC, true, true, 0);
	ok(!hbmpool_replica_wants_copy(c, 3, 2), "a copy is being filled: wait for it");
	ok(hbmpool_replica_discard(c, 3) == 0x2, "on completion the outdated copy goes, the target stays");
	c[2] = rc(UP, false, true, 0);
	ok(hbmpool_replica_discard(c, 3) == 0x6, "and a copy on lost memory goes too");
	c[1] = rc(UP, true, false, 0);
	ok(hbmpool_replica_discard(c, 3) == 0x4,
	   "an unreachable but good copy stays (its home may come back)");
}

static void test_domains(void)
{
	struct hbmpool_rcopy c[3] = {
		rc(UP, true, true, 1), rc(OUT, true, true, 2), rc(SYNC, true, true, 3),
	};

	ok(!hbmpool_replica_domain_free(c, 3, 1), "domain 1 holds a good copy: taken");
	ok(hbmpool_replica_domain_free(c, 3, 2), "domain 2 holds only an outdated copy: free");
	ok(!hbmpool_replica_domain_free(c, 3, 3), "domain 3 holds a copy being filled: taken");
	ok(hbmpool_replica_domain_free(c, 3, 4), "domain 4: free");
	ok(hbmpool_replica_domain_free(c, 3, 0), "no domain: always free");
}

int main(void)
{
	test_good();
	test_pick();
	test_suspect();
	test_failover();
	test_next();
	test_wb_outcome();
	test_wants();
	test_domains();
	return tap_finish();
}
