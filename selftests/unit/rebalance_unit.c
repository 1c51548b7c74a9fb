// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of hbmpoold's rebalance planner (daemon/rebalance.c): pure
 * logic, no kernel, no etcd.
 *
 *  - a balanced domain plans nothing;
 *  - a node joins an empty-handed domain: half the chunks go to it (equal
 *    weights), a quarter (weights 3:1), and a second plan moves nothing;
 *  - only into a region's node set, only into room, never from or to an
 *    ineligible node (draining, down), at most max moves a round;
 *  - one move a round converges without moving anything back;
 *  - random domains: every round lowers or keeps the largest deviation,
 *    no chunk returns to a node it left, and the plans end.
 *
 * TAP output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rebalance.h"
#include "tap.h"

#define MIB	(1ULL << 20)
#define CHUNK	(2 * MIB)
#define MAXC	512

static uint64_t all_set[HBM_RB_MAX_NODES / 64];
static struct hbm_rb_chunk ch[MAXC];
static struct hbm_rb_move mv[MAXC];

static void set_add(uint64_t *set, uint32_t id)
{
	set[id / 64] |= 1ULL << (id % 64);
}

static size_t chunks_on(uint32_t node, size_t n, const uint64_t *set)
{
	for (size_t i = 0; i < n; i++)
		ch[i] = (struct hbm_rb_chunk){ .region = 1 + (uint32_t)i / 8,
					       .chunk = (uint32_t)i % 8,
					       .node = node, .len = CHUNK,
					       .set = set };
	return n;
}

static unsigned int count_on(uint32_t node, size_t n)
{
	unsigned int k = 0;

	for (size_t i = 0; i < n; i++)
		k += ch[i].node == node;
	return k;
}

static void unbusy(size_t n)
{
	for (size_t i = 0; i < n; i++)
		ch[i].busy = false;
}

static void test_join(void)
{
	struct hbm_rb_node nd[2] = {
		{ .id = 1, .weight = 10, .free = 1ULL << 30, .eligible = true },
		{ .id = 2, .weight = 10, .free = 1ULL << 30, .eligible = true },
	};
	size_t n = chunks_on(1, 10, all_set), k;

	k = hbm_rb_plan(nd, 2, ch, n, 0, mv, MAXC);
	ok(k == 5 && count_on(1, n) == 5 && count_on(2, n) == 5,
	   "a node joins: 5 of 10 chunks go to it (%zu planned)", k);
	ok(mv[0].from == 1 && mv[0].to == 2, "moves go from node 1 to node 2");
	unbusy(n);
	ok(hbm_rb_plan(nd, 2, ch, n, 0, mv, MAXC) == 0, "a balanced domain plans nothing");

	n = chunks_on(1, 12, all_set);
	nd[0] = (struct hbm_rb_node){ .id = 1, .weight = 30, .free = 1ULL << 30, .eligible = true };
	nd[1] = (struct hbm_rb_node){ .id = 2, .weight = 10, .free = 1ULL << 30, .eligible = true };
	k = hbm_rb_plan(nd, 2, ch, n, 0, mv, MAXC);
	ok(count_on(2, n) == 3, "weights 3:1: a quarter of 12 chunks moves (%u)", count_on(2, n));

	n = chunks_on(1, 11, all_set);
	k = hbm_rb_plan(nd, 2, ch, n, 0, mv, 2);
	ok(k == 2, "at most max moves a round (%zu)", k);
}

static void test_limits(void)
{
	static uint64_t set12[HBM_RB_MAX_NODES / 64];
	struct hbm_rb_node nd[3] = {
		{ .id = 1, .weight = 10, .free = 1ULL << 30, .eligible = true },
		{ .id = 2, .weight = 10, .free = 1ULL << 30, .eligible = true },
		{ .id = 3, .weight = 10, .free = 1ULL << 30, .eligible = true },
	};
	size_t n, k, i;
	int bad = 0;

	set_add(set12, 1);
	set_add(set12, 2);
	n = chunks_on(1, 12, set12);
	k = hbm_rb_plan(nd, 3, ch, n, 0, mv, MAXC);
	for (i = 0; i < k; i++)
		bad |= mv[i].to == 3;
	ok(!bad && count_on(3, n) == 0 && k > 0,
	   "only into the region's node set (%zu moves, none to node 3)", k);

	n = chunks_on(1, 12, all_set);
	nd[1].free = CHUNK;	/* room for one */
	nd[2].free = 0;
	k = hbm_rb_plan(nd, 3, ch, n, 0, mv, MAXC);
	ok(k == 1 && count_on(2, n) == 1, "only into room (%zu moves)", k);

	n = chunks_on(1, 12, all_set);
	nd[1].free = nd[2].free = 1ULL << 30;
	nd[2].eligible = false;	/* draining */
	k = hbm_rb_plan(nd, 3, ch, n, 0, mv, MAXC);
	ok(count_on(3, n) == 0 && count_on(2, n) == 6,
	   "never to an ineligible node; the share counts eligible ones only");

	n = chunks_on(3, 12, all_set);
	k = hbm_rb_plan(nd, 3, ch, n, 0, mv, MAXC);
	ok(k == 0, "never from an ineligible node: that is the drain's business");

	n = chunks_on(1, 12, all_set);
	nd[2].eligible = true;
	for (i = 0; i < 4; i++)
		ch[i].busy = true;	/* being moved */
	k = hbm_rb_plan(nd, 3, ch, n, 0, mv, MAXC);
	bad = 0;
	for (i = 0; i < k; i++)
		bad |= mv[i].region == 1 && mv[i].chunk < 4;
	ok(!bad, "a chunk being moved is not planned again");

	n = chunks_on(1, 10, all_set);
	nd[0].free = nd[1].free = nd[2].free = 1ULL << 30;
	k = hbm_rb_plan(nd, 2, ch, n, 50, mv, MAXC);
	ok(k == 2, "slack: 10 chunks, shares of 5, 50%% slack: %zu moves, not 5", k);
}

/* One move a round, as the agent does under its rate limit: no chunk comes back. */
static void test_rounds(void)
{
	struct hbm_rb_node nd[4];
	uint32_t left[MAXC];
	size_t n, rounds = 0, moves = 0, k;
	uint64_t last = UINT64_MAX;
	int back = 0, worse = 0;

	for (uint32_t i = 0; i < 4; i++)
		nd[i] = (struct hbm_rb_node){ .id = 10 + i, .weight = 5 + 5 * i,
					      .free = 1ULL << 30, .eligible = true };
	n = chunks_on(10, 100, all_set);
	for (size_t i = 0; i < n; i++)
		left[i] = UINT32_MAX;
	do {
		size_t before[MAXC];

		for (size_t i = 0; i < n; i++)
			before[i] = ch[i].node;
		k = hbm_rb_plan(nd, 4, ch, n, 0, mv, 1);
		for (size_t i = 0; i < n; i++) {
			if (ch[i].node != before[i]) {
				back |= ch[i].node == left[i];
				left[i] = (uint32_t)before[i];
			}
		}
		unbusy(n);
		worse |= hbm_rb_imbalance(nd, 4) > last;
		last = hbm_rb_imbalance(nd, 4);
		moves += k;
		rounds++;
	} while (k && rounds < 1000);
	ok(rounds < 1000 && !back && !worse,
	   "one move a round: %zu moves, converged, none back, never worse", moves);
	ok(count_on(13, n) > count_on(11, n), "the heavier node holds more (%u > %u)",
	   count_on(13, n), count_on(11, n));
}

static void test_random(void)
{
	unsigned int seed = 7, fails = 0;

	for (int t = 0; t < 300; t++) {
		struct hbm_rb_node nd[8];
		size_t nn = 2 + rand_r(&seed) % 7, n = 1 + rand_r(&seed) % 200, k;
		uint64_t last = UINT64_MAX;
		int rounds = 0;

		for (size_t i = 0; i < nn; i++)
			nd[i] = (struct hbm_rb_node){
				.id = (uint32_t)i * 3,
				.weight = 1 + rand_r(&seed) % 100,
				.free = (uint64_t)(rand_r(&seed) % 300) * CHUNK,
				.eligible = rand_r(&seed) % 5 != 0,
			};
		for (size_t i = 0; i < n; i++)
			ch[i] = (struct hbm_rb_chunk){ .region = (uint32_t)i, .chunk = 0,
						       .node = nd[rand_r(&seed) % nn].id,
						       .len = CHUNK, .set = all_set };
		do {
			k = hbm_rb_plan(nd, nn, ch, n, (unsigned int)(rand_r(&seed) % 20),
					mv, 1 + rand_r(&seed) % 8);
			unbusy(n);
			if (hbm_rb_imbalance(nd, nn) > last)
				fails++;
			last = hbm_rb_imbalance(nd, nn);
		} while (k && ++rounds < 2000);
		if (rounds >= 2000)
			fails++;
		for (size_t i = 0; i < nn; i++)
			if (nd[i].free > (1ULL << 62))
				fails++;	/* room went negative */
	}
	ok(!fails, "300 random domains: never worse, always converge, never over room (%u)",
	   fails);
}

int main(void)
{
	memset(all_set, 0xff, sizeof(all_set));
	test_join();
	test_limits();
	test_rounds();
	test_random();
	return tap_finish();
}
