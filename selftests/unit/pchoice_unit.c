// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of the choice of a chunk's home (kmod/pchoice.c), built for
 * user space: eligibility (never, degraded only as a last resort, room),
 * bind and preferred by distance, interleave's round-robin, weighted
 * interleave's shares, a move's target, and the automatic weight.  TAP output.
 */
#include <stdio.h>

#include <linux/hbmpool.h>

#include "pchoice.h"
#include "tap.h"

#define MIB	(1ULL << 20)
#define CHUNK	(2 * MIB)

static void cand(struct hbmpool_pcand *c, u32 id, u32 distance, u32 weight,
		 u64 free, unsigned int pclass)
{
	*c = (struct hbmpool_pcand){ .id = id, .distance = distance,
				     .weight = weight, .free = free,
				     .pclass = pclass };
}

/* Places @n chunks as placement.c does; counts per candidate into @got. */
static int run(struct hbmpool_pcand *c, unsigned int nr, u32 policy,
	       unsigned int n, unsigned int *got, int *seq)
{
	struct hbmpool_pstate st = { .policy = policy };
	unsigned int i;
	int k;

	for (i = 0; i < nr; i++)
		got[i] = 0;
	for (i = 0; i < n; i++) {
		k = hbmpool_pchoose(c, nr, &st, CHUNK);
		if (k < 0)
			return -1;
		if (seq)
			seq[i] = k;
		c[k].free -= CHUNK;
		got[k]++;
	}
	return 0;
}

static void test_weighted(void)
{
	struct hbmpool_pcand c[3];
	unsigned int got[3] = { 0 };
	int seq[8] = { 0 }, i, burst = 0, run_len = 0;

	cand(&c[0], 1, 20, 1, 64 * MIB, HBMPOOL_PCLASS_OK);
	cand(&c[1], 2, 20, 3, 64 * MIB, HBMPOOL_PCLASS_OK);
	i = run(c, 2, HBMPOOL_POLICY_WEIGHTED_INTERLEAVE, 8, got, seq);
	ok(!i && got[0] == 2 && got[1] == 6, "weights 1:3, 8 chunks: 2 and 6 (got %u, %u)",
	   got[0], got[1]);
	for (i = 1; i < 8; i++) {
		run_len = seq[i] == 1 && seq[i - 1] == 1 ? run_len + 1 : 0;
		if (run_len > burst)
			burst = run_len;
	}
	ok(burst <= 2, "smooth: the heavy node never gets more than 3 in a row");

	cand(&c[0], 1, 20, 1, 64 * MIB, HBMPOOL_PCLASS_OK);
	cand(&c[1], 2, 20, 3, 64 * MIB, HBMPOOL_PCLASS_OK);
	cand(&c[2], 3, 20, 5, 64 * MIB, HBMPOOL_PCLASS_NEVER);
	ok(!run(c, 3, HBMPOOL_POLICY_WEIGHTED_INTERLEAVE, 12, got, NULL) &&
	   got[0] == 3 && got[1] == 9 && got[2] == 0,
	   "a node that is never eligible gets nothing, the rest keep their shares");

	cand(&c[0], 1, 20, 1, 4 * MIB, HBMPOOL_PCLASS_OK);
	cand(&c[1], 2, 20, 1, 64 * MIB, HBMPOOL_PCLASS_OK);
	ok(!run(c, 2, HBMPOOL_POLICY_WEIGHTED_INTERLEAVE, 10, got, NULL) &&
	   got[0] == 2 && got[1] == 8, "a full node drops out, the other takes the rest");
}

static void test_interleave(void)
{
	struct hbmpool_pcand c[3];
	unsigned int got[3] = { 0 };
	int seq[6] = { 0 };

	cand(&c[0], 1, 20, 1, 64 * MIB, HBMPOOL_PCLASS_OK);
	cand(&c[1], 2, 30, 1, 64 * MIB, HBMPOOL_PCLASS_OK);
	cand(&c[2], 3, 40, 1, 64 * MIB, HBMPOOL_PCLASS_OK);
	ok(!run(c, 3, HBMPOOL_POLICY_INTERLEAVE, 6, got, seq) &&
	   seq[0] == 0 && seq[1] == 1 && seq[2] == 2 && seq[3] == 0,
	   "interleave: chunk i on node i mod n when all are eligible");

	cand(&c[1], 2, 30, 1, 64 * MIB, HBMPOOL_PCLASS_NEVER);
	cand(&c[0], 1, 20, 1, 64 * MIB, HBMPOOL_PCLASS_OK);
	cand(&c[2], 3, 40, 1, 64 * MIB, HBMPOOL_PCLASS_OK);
	ok(!run(c, 3, HBMPOOL_POLICY_INTERLEAVE, 6, got, NULL) &&
	   got[0] == 3 && got[1] == 0 && got[2] == 3,
	   "interleave skips an ineligible node");

	cand(&c[0], 1, 20, 1, 64 * MIB, HBMPOOL_PCLASS_DEGRADED);
	cand(&c[1], 2, 30, 1, 64 * MIB, HBMPOOL_PCLASS_OK);
	cand(&c[2], 3, 40, 1, 64 * MIB, HBMPOOL_PCLASS_OK);
	ok(!run(c, 3, HBMPOOL_POLICY_INTERLEAVE, 6, got, NULL) &&
	   got[0] == 0 && got[1] == 3 && got[2] == 3,
	   "interleave avoids a degraded node while others are eligible");

	cand(&c[0], 1, 20, 1, 64 * MIB, HBMPOOL_PCLASS_DEGRADED);
	cand(&c[1], 2, 30, 1, 2 * MIB, HBMPOOL_PCLASS_OK);
	cand(&c[2], 3, 40, 1, 2 * MIB, HBMPOOL_PCLASS_OK);
	ok(!run(c, 3, HBMPOOL_POLICY_INTERLEAVE, 5, got, NULL) &&
	   got[0] == 3 && got[1] == 1 && got[2] == 1,
	   "a degraded node takes what the others cannot");
}

static void test_bind(void)
{
	struct hbmpool_pcand c[3];
	unsigned int got[3] = { 0 };
	int seq[4] = { 0 };

	cand(&c[0], 1, 40, 1, 64 * MIB, HBMPOOL_PCLASS_OK);
	cand(&c[1], 2, 20, 1, 4 * MIB, HBMPOOL_PCLASS_OK);
	cand(&c[2], 3, 30, 1, 64 * MIB, HBMPOOL_PCLASS_OK);
	ok(!run(c, 3, HBMPOOL_POLICY_BIND, 4, got, seq) &&
	   seq[0] == 1 && seq[1] == 1 && seq[2] == 2 && seq[3] == 2,
	   "bind: nearest first, then the next nearest when it is full");

	cand(&c[0], 1, 40, 1, 64 * MIB, HBMPOOL_PCLASS_OK);
	cand(&c[1], 2, 20, 1, 64 * MIB, HBMPOOL_PCLASS_NEVER);
	cand(&c[2], 3, 30, 1, 64 * MIB, HBMPOOL_PCLASS_DEGRADED);
	ok(!run(c, 3, HBMPOOL_POLICY_BIND, 2, got, NULL) && got[0] == 2,
	   "bind: a draining node never, a degraded one after a farther healthy one");

	cand(&c[0], 1, 20, 1, 64 * MIB, HBMPOOL_PCLASS_OK);
	cand(&c[1], 2, 20, 1, 64 * MIB, HBMPOOL_PCLASS_OK);
	cand(&c[2], 3, 90, 1, 64 * MIB, HBMPOOL_PCLASS_OK);
	c[2].preferred = true;
	ok(!run(c, 3, HBMPOOL_POLICY_PREFERRED, 2, got, NULL) && got[2] == 2,
	   "preferred: the preferred node though farther");
	c[2].pclass = HBMPOOL_PCLASS_NEVER;
	ok(!run(c, 3, HBMPOOL_POLICY_PREFERRED, 2, got, NULL) && got[0] == 2,
	   "preferred: an ineligible preferred node is passed over, lowest id on a tie");
}

static void test_none(void)
{
	struct hbmpool_pcand c[2];
	struct hbmpool_pstate st = { .policy = HBMPOOL_POLICY_BIND };
	u32 p;

	for (p = 0; p <= HBMPOOL_POLICY_MAX; p++) {
		cand(&c[0], 1, 20, 1, 64 * MIB, HBMPOOL_PCLASS_NEVER);
		cand(&c[1], 2, 20, 1, CHUNK - 4096, HBMPOOL_PCLASS_OK);
		st.policy = p;
		ok(hbmpool_pchoose(c, 2, &st, CHUNK) == -1,
		   "policy %u: no eligible node, no choice", p);
	}
	ok(hbmpool_pchoose(c, 0, &st, CHUNK) == -1, "an empty set, no choice");
}

/* A move's target: nearest under bind, most free under the interleaves. */
static void test_target(void)
{
	struct hbmpool_pcand c[4];
	u32 p;

	cand(&c[0], 1, 30, 1, 8 * MIB, HBMPOOL_PCLASS_OK);
	cand(&c[1], 2, 20, 1, 4 * MIB, HBMPOOL_PCLASS_OK);
	cand(&c[2], 3, 10, 1, 64 * MIB, HBMPOOL_PCLASS_NEVER);
	cand(&c[3], 4, 40, 1, 16 * MIB, HBMPOOL_PCLASS_DEGRADED);
	ok(hbmpool_pchoose_target(c, 4, HBMPOOL_POLICY_BIND, CHUNK) == 1,
	   "bind: the nearest eligible node (never-class skipped)");
	ok(hbmpool_pchoose_target(c, 4, HBMPOOL_POLICY_INTERLEAVE, CHUNK) == 0,
	   "interleave: the healthy node with the most free bytes");
	ok(hbmpool_pchoose_target(c, 4, HBMPOOL_POLICY_WEIGHTED_INTERLEAVE, CHUNK) == 0,
	   "weighted interleave: the healthy node with the most free bytes");
	c[0].free = CHUNK - 4096;
	c[1].free = 0;
	ok(hbmpool_pchoose_target(c, 4, HBMPOOL_POLICY_BIND, CHUNK) == 3,
	   "no healthy node with room: the degraded one");
	c[3].pclass = HBMPOOL_PCLASS_NEVER;
	for (p = 0; p <= HBMPOOL_POLICY_MAX; p++)
		ok(hbmpool_pchoose_target(c, 4, p, CHUNK) == -1,
		   "policy %u: no node with room, no target", p);
	ok(hbmpool_pchoose_target(c, 0, HBMPOOL_POLICY_BIND, CHUNK) == -1,
	   "an empty set, no target");
}

/* full-pct: a node a chunk would leave with less than its reserve is a last resort. */
static void test_full(void)
{
	struct hbmpool_pcand c[3];
	unsigned int got[3] = { 0 };
	int seq[6] = { 0 }, rc;

	/* node 1 nearest, 16 MiB free of which 8 MiB reserved: 4 chunks of 2 MiB, then node 2 */
	cand(&c[0], 1, 20, 1, 16 * MIB, HBMPOOL_PCLASS_OK);
	cand(&c[1], 2, 40, 1, 64 * MIB, HBMPOOL_PCLASS_OK);
	c[0].reserve = 8 * MIB;
	rc = run(c, 2, HBMPOOL_POLICY_BIND, 6, got, seq);
	ok(!rc && got[0] == 4 && got[1] == 2 && seq[3] == 0 && seq[4] == 1,
	   "bind: the nearest node until the chunk would cut into its reserve, then the next (%u, %u)",
	   got[0], got[1]);
	/* no other node with room: the reserve is used (a last resort, not a refusal) */
	cand(&c[0], 1, 20, 1, 16 * MIB, HBMPOOL_PCLASS_OK);
	cand(&c[1], 2, 40, 1, 0, HBMPOOL_PCLASS_OK);
	c[0].reserve = 8 * MIB;
	rc = run(c, 2, HBMPOOL_POLICY_BIND, 8, got, NULL);
	ok(!rc && got[0] == 8,
	   "no other room: the nearly full node takes chunks into its reserve (%u)", got[0]);
	/* nearly full ranks with degraded: both after a healthy node with room, and among themselves by the policy */
	cand(&c[0], 1, 20, 1, 4 * MIB, HBMPOOL_PCLASS_OK);
	cand(&c[1], 2, 30, 1, 64 * MIB, HBMPOOL_PCLASS_DEGRADED);
	cand(&c[2], 3, 90, 1, 4 * MIB, HBMPOOL_PCLASS_OK);
	c[0].reserve = 4 * MIB;
	run(c, 3, HBMPOOL_POLICY_BIND, 3, got, seq);
	ok(seq[0] == 2 && seq[1] == 2 && seq[2] == 0,
	   "a healthy far node first; then nearly full and degraded nodes in bind order (%d %d %d)",
	   seq[0], seq[1], seq[2]);
	/* a move's target passes over the nearly full node too */
	cand(&c[0], 1, 20, 1, 64 * MIB, HBMPOOL_PCLASS_OK);
	cand(&c[1], 2, 30, 1, 8 * MIB, HBMPOOL_PCLASS_OK);
	c[0].reserve = 63 * MIB;
	ok(hbmpool_pchoose_target(c, 2, HBMPOOL_POLICY_INTERLEAVE, CHUNK) == 1,
	   "move target: the node with the most free bytes unless the chunk cuts into its reserve");
}

static void test_auto_weight(void)
{
	ok(hbmpool_pweight_auto(64 * MIB, 20) == 32, "64 MiB at distance 20 weighs 32");
	ok(hbmpool_pweight_auto(1024 * MIB, 40) == 256, "1 GiB at distance 40 weighs 256");
	ok(hbmpool_pweight_auto(4096, 255) == 1, "at least 1");
	ok(hbmpool_pweight_auto(64ULL << 30, 11) <= HBMPOOL_WEIGHT_MAX,
	   "64 GiB at distance 11 stays within the maximum (%u)",
	   hbmpool_pweight_auto(64ULL << 30, 11));
}

int main(void)
{
	test_weighted();
	test_interleave();
	test_bind();
	test_none();
	test_target();
	test_full();
	test_auto_weight();
	return tap_finish();
}
