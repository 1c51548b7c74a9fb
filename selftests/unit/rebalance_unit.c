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
 *    no chunk returns to a node it left, and the plans end;
 *  - the rebalancer (daemon/rebalance_agent.c) on a scripted kernel: only
 *    after a request, at most jobs moves in flight, from and to as planned,
 *    only interleaved regions, nothing while a drain runs, ends balanced
 *    (half the chunks moved), a chunk whose move failed not tried again;
 *    the rebalance key's value both ways.
 *
 * TAP output.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <linux/hbmpool_nl.h>

#include "rebalance.h"
#include "rebalance_agent.h"
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

/* ---- the rebalancer on a scripted kernel ---- */

#define FK_CHUNKS	16

static struct {
	struct hbmd_kernel_node n[3];
	struct hbmd_kernel_chunk c[FK_CHUNKS];
	size_t nc;
	struct hbmd_kernel_resync m[64];
	size_t nm;
	uint32_t next_id;
	unsigned int reads, news, bad_moves, new_fail, errors;
	char last_log[256];
} fk;

static int fk_nodes(void *ctx, struct hbmd_kernel_node **n, size_t *nr, char *err, size_t len)
{
	(void)ctx; (void)err; (void)len;
	fk.reads++;
	*n = malloc(sizeof(fk.n));
	if (!*n)
		return -ENOMEM;
	memcpy(*n, fk.n, sizeof(fk.n));
	*nr = 3;
	return 0;
}

static int fk_chunks(void *ctx, struct hbmd_kernel_chunk **c, size_t *nr, char *err, size_t len)
{
	(void)ctx; (void)err; (void)len;
	*c = malloc(sizeof(fk.c));
	if (!*c)
		return -ENOMEM;
	memcpy(*c, fk.c, sizeof(fk.c));
	*nr = fk.nc;
	return 0;
}

static int fk_moves(void *ctx, struct hbmd_kernel_resync **m, size_t *nr, char *err, size_t len)
{
	(void)ctx; (void)err; (void)len;
	*m = calloc(fk.nm + 1, sizeof(**m));
	if (!*m)
		return -ENOMEM;
	memcpy(*m, fk.m, fk.nm * sizeof(**m));
	*nr = fk.nm;
	return 0;
}

static int fk_new_to(void *ctx, uint32_t region, uint32_t chunk, uint32_t from, uint32_t to,
		     uint32_t *id, char *err, size_t len)
{
	(void)ctx;
	fk.news++;
	if (fk.new_fail) {
		snprintf(err, len, "resync-new: %s", strerror(EBUSY));
		return -EBUSY;
	}
	for (size_t i = 0; i < fk.nc; i++) {
		if (fk.c[i].region != region || fk.c[i].index != chunk)
			continue;
		if (fk.c[i].node != from || fk.c[i].policy == HBMPOOL_PLACEMENT_POLICY_BIND ||
		    fk.c[i].syncing_node != HBMD_NO_NODE || fk.c[i].lost)
			fk.bad_moves++;
		fk.c[i].syncing_node = to;
	}
	*id = ++fk.next_id;
	fk.m[fk.nm++] = (struct hbmd_kernel_resync){ .id = *id, .region = region, .chunk = chunk,
		.from = from, .to = to, .state = HBMPOOL_RESYNC_STATE_COPYING };
	return 0;
}

static int fk_del(void *ctx, uint32_t id, char *err, size_t len)
{
	(void)ctx; (void)err; (void)len;
	for (size_t i = 0; i < fk.nm; i++)
		if (fk.m[i].id == id) {
			fk.m[i] = fk.m[--fk.nm];
			return 0;
		}
	return -ENOENT;
}

static const struct hbmd_kernel_ops fk_ops = {
	.nodes_read = fk_nodes,
	.chunks_read = fk_chunks,
	.resync_new_to = fk_new_to,
	.resync_read = fk_moves,
	.resync_del = fk_del,
};

/* Every copying move ends done: its chunk lives on its target. */
static void fk_finish(void)
{
	for (size_t i = 0; i < fk.nm; i++) {
		if (fk.m[i].state != HBMPOOL_RESYNC_STATE_COPYING)
			continue;
		fk.m[i].state = HBMPOOL_RESYNC_STATE_DONE;
		for (size_t j = 0; j < fk.nc; j++)
			if (fk.c[j].region == fk.m[i].region && fk.c[j].index == fk.m[i].chunk) {
				fk.c[j].node = fk.m[i].to;
				fk.c[j].syncing_node = HBMD_NO_NODE;
			}
	}
}

static unsigned int fk_copying(void)
{
	unsigned int k = 0;

	for (size_t i = 0; i < fk.nm; i++)
		k += fk.m[i].state == HBMPOOL_RESYNC_STATE_COPYING;
	return k;
}

static unsigned int fk_on(uint32_t node)
{
	unsigned int k = 0;

	for (size_t i = 0; i < fk.nc; i++)
		k += fk.c[i].node == node;
	return k;
}

static void fk_log(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level <= LOG_ERR)
		fk.errors++;
	snprintf(fk.last_log, sizeof(fk.last_log), "%s", msg);
	printf("# log %d: %s\n", level, msg);
}

static void fk_reset(void)
{
	memset(&fk, 0, sizeof(fk));
	fk.n[0] = (struct hbmd_kernel_node){ .id = 0, .self = true };
	fk.n[1] = (struct hbmd_kernel_node){ .id = 1, .free = 1ULL << 30, .weight = 10 };
	fk.n[2] = (struct hbmd_kernel_node){ .id = 2, .free = 1ULL << 30, .weight = 10 };
	/* region 1 interleaved over 1,2 (12 chunks, all on 1); region 2 bound (4 on 1) */
	for (uint32_t i = 0; i < FK_CHUNKS; i++) {
		struct hbmd_kernel_chunk *c = &fk.c[fk.nc++];

		*c = (struct hbmd_kernel_chunk){ .region = i < 12 ? 1 : 2, .index = i % 12,
			.node = 1, .syncing_node = HBMD_NO_NODE, .bytes = CHUNK,
			.policy = i < 12 ? HBMPOOL_PLACEMENT_POLICY_INTERLEAVE :
					   HBMPOOL_PLACEMENT_POLICY_BIND };
		c->set[0] = (1ULL << 1) | (1ULL << 2);
	}
}

/* Passes of r, every move finished after each, until it ends (at most 100): how many. */
static unsigned int run_done(struct hbmd_rebalancer *r, uint64_t *now)
{
	unsigned int rounds = 0;

	while (hbmd_rebalancer_active(r) && rounds++ < 100) {
		hbmd_rebalancer_run(r, false, *now);
		fk_finish();
		*now += HBMD_REBALANCE_PASS_MS;
	}
	return rounds;
}

static void test_rebalancer(void)
{
	struct hbmd_kernel k = { .ops = &fk_ops };
	struct hbmd_rebalancer *r;
	uint64_t now = 1000;
	unsigned int rounds = 0, max_copying = 0;

	fk_reset();
	if (hbmd_rebalancer_new(k, 0, 2, fk_log, NULL, &r)) {
		ok(0, "rebalancer created");
		return;
	}
	hbmd_rebalancer_run(r, false, now);
	ok(!fk.reads && hbmd_rebalancer_deadline(r) == UINT64_MAX && !hbmd_rebalancer_active(r),
	   "no request, no pass and nothing due");
	hbmd_rebalancer_request(r, 2, now);
	hbmd_rebalancer_run(r, true, now);
	ok(!fk.reads && hbmd_rebalancer_deadline(r) == now + HBMD_REBALANCE_WAIT_MS,
	   "while a drain runs: nothing read, the next look in %d ms", HBMD_REBALANCE_WAIT_MS);
	now += HBMD_REBALANCE_WAIT_MS;
	while (hbmd_rebalancer_active(r) && rounds++ < 100) {
		hbmd_rebalancer_run(r, false, now);
		if (fk_copying() > max_copying)
			max_copying = fk_copying();
		fk_finish();
		now += HBMD_REBALANCE_PASS_MS;
	}
	ok(!hbmd_rebalancer_active(r) && rounds < 100, "the rebalance ends (%u passes)", rounds);
	ok(fk_on(2) == 6 && hbmd_rebalancer_moved(r) == 6,
	   "half of the interleaved region's 12 chunks moved to node 2 (%u, %llu done)",
	   fk_on(2), (unsigned long long)hbmd_rebalancer_moved(r));
	ok(max_copying <= 2, "at most jobs (2) moves in flight (%u)", max_copying);
	ok(!fk.bad_moves, "every move from the chunk's node, of an interleaved region, not moving");
	ok(fk.c[12].node == 1 && fk.c[15].node == 1, "the bound region's chunks stay");
	ok(!fk.nm, "every ended move was forgotten (resync-del)");
	ok(strstr(fk.last_log, "balanced") != NULL, "its end is logged: %s", fk.last_log);

	/* node 2 joined but is not live here yet: the rebalance waits for it, then moves */
	fk_reset();
	fk.n[2].state = HBMPOOL_NODE_STATE_UNREACHABLE;
	hbmd_rebalancer_request(r, 2, now);
	for (rounds = 0; rounds < 5; rounds++) {
		hbmd_rebalancer_run(r, false, now);
		now += HBMD_REBALANCE_PASS_MS;
	}
	ok(hbmd_rebalancer_active(r) && !fk.news,
	   "the joined node not live in this kernel: no move, still waiting (%u tries)", fk.news);
	fk.n[2].state = HBMPOOL_NODE_STATE_LIVE;
	rounds = run_done(r, &now);
	ok(!hbmd_rebalancer_active(r) && fk_on(2) == 6,
	   "once it is live: the rebalance runs (%u chunks to node 2)", fk_on(2));
	/*
	 * live (a node's state is, from its add on), but its link not up yet:
	 * no free bytes known (0 until the home answers the first PING)
	 */
	fk_reset();
	{
		uint64_t free2 = fk.n[2].free;

		fk.n[2].free = 0;
		hbmd_rebalancer_request(r, 2, now);
		for (rounds = 0; rounds < 5; rounds++) {
			hbmd_rebalancer_run(r, false, now);
			now += HBMD_REBALANCE_PASS_MS;
		}
		ok(hbmd_rebalancer_active(r) && !fk.news,
		   "the joined node live with no free bytes known yet: still waiting, not balanced (%u tries)",
		   fk.news);
		fk.n[2].free = free2;
	}
	rounds = run_done(r, &now);
	ok(!hbmd_rebalancer_active(r) && fk_on(2) == 6,
	   "once its free bytes are known: the rebalance runs (%u chunks to node 2)", fk_on(2));
	/* never live: the rebalance ends after HBMD_REBALANCE_JOIN_WAIT_MS, nothing moved */
	fk_reset();
	fk.n[2].state = HBMPOOL_NODE_STATE_UNREACHABLE;
	hbmd_rebalancer_request(r, 2, now);
	rounds = 0;
	while (hbmd_rebalancer_active(r) && rounds++ < 1000) {
		hbmd_rebalancer_run(r, false, now);
		now += HBMD_REBALANCE_PASS_MS;
	}
	ok(!hbmd_rebalancer_active(r) && !fk.news &&
	   rounds >= HBMD_REBALANCE_JOIN_WAIT_MS / HBMD_REBALANCE_PASS_MS &&
	   strstr(fk.last_log, "never became live") != NULL,
	   "never live: it ends after %u passes, nothing moved: %s", rounds, fk.last_log);

	/* 4 of the interleaved chunks are lost: never moved, and they take no room */
	fk_reset();
	for (uint32_t i = 0; i < 4; i++)
		fk.c[i].lost = true;
	hbmd_rebalancer_request(r, 2, now);
	rounds = run_done(r, &now);
	ok(!hbmd_rebalancer_active(r) && !fk.bad_moves && fk_on(2) == 4,
	   "4 lost chunks: none moved, 4 of the 8 others moved to node 2 (%u)", fk_on(2));

	/* a kernel that refuses every move: the rebalance gives up */
	fk_reset();
	fk.new_fail = 1;
	hbmd_rebalancer_request(r, 2, now);
	rounds = 0;
	while (hbmd_rebalancer_active(r) && rounds++ < 100) {
		hbmd_rebalancer_run(r, false, now);
		now += HBMD_REBALANCE_PASS_MS;
	}
	ok(!hbmd_rebalancer_active(r) && fk.news == 12 && rounds < 100,
	   "refused moves: each interleaved chunk tried once (%u tries), then it ends", fk.news);
	ok(strstr(fk.last_log, "could not move") != NULL, "said: %s", fk.last_log);
	ok(!fk.errors, "no error logged");
	hbmd_rebalancer_free(r);
}

static void test_key(void)
{
	char buf[96], err[128];
	uint32_t node = 0;

	ok(!hbmd_rebalance_encode(7, 42, buf, sizeof(buf)) &&
	   !hbmd_rebalance_parse(buf, strlen(buf), &node, err, sizeof(err)) && node == 7,
	   "the rebalance key's value both ways: %s", buf);
	ok(hbmd_rebalance_parse("{\"node\":4096}", 13, &node, err, sizeof(err)) == -EPROTO,
	   "a node out of range is refused: %s", err);
	ok(hbmd_rebalance_parse("nope", 4, &node, err, sizeof(err)) == -EPROTO,
	   "not JSON is refused: %s", err);
	ok(hbmd_rebalance_parse("{}", 2, &node, err, sizeof(err)) == -EPROTO,
	   "no node is refused: %s", err);
}

int main(void)
{
	memset(all_set, 0xff, sizeof(all_set));
	test_join();
	test_limits();
	test_rounds();
	test_random();
	test_rebalancer();
	test_key();
	return tap_finish();
}
