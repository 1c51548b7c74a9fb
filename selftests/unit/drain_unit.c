// SPDX-License-Identifier: GPL-2.0
/*
 * drain_unit: the drain planner (daemon/drain.c), pure logic: which chunk
 * moves are issued, the concurrency limit, back-off and giving up (and
 * retrying anyway), ended moves forgotten, the progress numbers.  Then the
 * drainer (daemon/drain_agent.c) on a scripted kernel: nothing read
 * without a drain, resync-new from the drained node up to the kernel's
 * resync-jobs, [drain] mbps set, moves followed to their end, resync-del
 * of ended ones, the progress to publish (once a second at most, only
 * when it changed), the progress keys and values of the members.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>
#include <syslog.h>

#include <linux/hbmpool_nl.h>

#include "drain.h"
#include "drain_agent.h"
#include "tap.h"

#define MIB	(1ULL << 20)

static struct hbm_drain_chunk ch(uint32_t region, uint32_t chunk, uint32_t node)
{
	return (struct hbm_drain_chunk){ .region = region, .chunk = chunk, .node = node,
					 .bytes = 2 * MIB };
}

static void t_backoff(void)
{
	ok(hbm_drain_backoff_ms(1) == 1000, "back-off: 1 s after the first failure");
	ok(hbm_drain_backoff_ms(2) == 2000 && hbm_drain_backoff_ms(5) == 16000,
	   "back-off doubles: 2 s, ..., 16 s");
	ok(hbm_drain_backoff_ms(6) == 30000 && hbm_drain_backoff_ms(100) == 30000 &&
	   hbm_drain_backoff_ms(~0u) == 30000, "back-off: at most 30 s, however many failures");
}

static void t_jobs(void)
{
	struct hbm_drain_chunk c[10];
	struct hbm_drain_move m[10];
	struct hbm_drain_pass p;
	struct hbm_drain_progress pr;
	struct hbm_drain d;
	size_t i, nm = 0;
	uint64_t now = 1000000;
	int ret;

	hbm_drain_init(&d);
	for (i = 0; i < 10; i++)
		c[i] = ch(1, (uint32_t)i, 3);
	ret = hbm_drain_plan(&d, c, 10, NULL, 0, 4, now, &p);
	ok(!ret && p.npick == 4, "10 chunks, jobs 4: 4 moves issued (%zu)", p.npick);
	ok(p.pick[0] == 0 && p.pick[3] == 3, "in list order");
	ok(p.next_ms == now + HBM_DRAIN_PASS_MS, "next pass in %d ms", HBM_DRAIN_PASS_MS);
	for (i = 0; i < p.npick; i++) {
		hbm_drain_issued(&d, &c[p.pick[i]], 0, (uint32_t)(100 + i), now);
		m[nm++] = (struct hbm_drain_move){ .id = (uint32_t)(100 + i), .region = 1,
			.chunk = (uint32_t)p.pick[i], .from = 3, .state = HBM_DRAIN_COPYING };
		c[p.pick[i]].syncing = true;
	}
	hbm_drain_pass_free(&p);
	hbm_drain_progress(&d, c, 10, 3, &pr);
	ok(pr.chunks_left == 10 && pr.bytes_left == 20 * MIB && pr.moving == 4 &&
	   !pr.failures, "progress: 10 left (moves in progress count), 20 MiB, 4 moving");

	/* the same state again: nothing new while 4 copy */
	hbm_drain_plan(&d, c, 10, m, nm, 4, now + 1000, &p);
	ok(p.npick == 0 && p.in_flight == 4, "4 in flight: no new move");
	hbm_drain_pass_free(&p);

	/* two end done: they leave the list, two more are issued, the ended ones forgotten */
	m[0].state = HBM_DRAIN_DONE;
	m[1].state = HBM_DRAIN_DONE;
	c[0] = c[9];
	c[1] = c[8];
	hbm_drain_plan(&d, c, 8, m, nm, 4, now + 2000, &p);
	ok(p.nforget == 2 && ((p.forget[0] == 100 && p.forget[1] == 101) ||
			      (p.forget[0] == 101 && p.forget[1] == 100)),
	   "2 moves done: resync-del of both (%zu)", p.nforget);
	ok(p.npick == 2 && p.in_flight == 2, "2 more issued, 2 in flight");
	ok(d.moved == 2, "2 moved");
	hbm_drain_pass_free(&p);

	/* a move someone else started (hbmctl): counted, not ours to forget */
	memset(c, 0, sizeof(c));
	c[0] = ch(2, 0, 3);
	m[0] = (struct hbm_drain_move){ .id = 7, .region = 2, .chunk = 0, .from = 3,
					.state = HBM_DRAIN_COPYING };
	hbm_drain_plan(&d, c, 1, m, 1, 1, now + 3000, &p);
	ok(p.npick == 0 && p.in_flight == 1 && p.nforget == 0,
	   "an operator's move of the chunk: in flight, no second move");
	hbm_drain_pass_free(&p);
	m[0].state = HBM_DRAIN_FAILED;
	hbm_drain_plan(&d, c, 1, m, 1, 1, now + 4000, &p);
	ok(p.npick == 1 && p.nforget == 0, "it failed: ours now, no resync-del of theirs");
	hbm_drain_pass_free(&p);

	/* nothing left: nothing due */
	hbm_drain_plan(&d, NULL, 0, NULL, 0, 4, now + 5000, &p);
	ok(p.npick == 0 && p.next_ms == UINT64_MAX && d.n == 0,
	   "no chunk left: no pass due, nothing remembered");
	hbm_drain_pass_free(&p);
	hbm_drain_free(&d);
}

static void t_failures(void)
{
	struct hbm_drain_chunk c[2] = { ch(1, 0, 3), ch(1, 1, 3) };
	struct hbm_drain_move m;
	const struct hbm_drain_entry *e;
	struct hbm_drain_progress pr;
	struct hbm_drain_pass p;
	struct hbm_drain d;
	uint64_t now = 5000, due;
	unsigned int i, tries = 0, gave = 0;

	hbm_drain_init(&d);
	/* chunk 0 refused with ENOSPC every time; chunk 1 not in the list (jobs 1) */
	hbm_drain_plan(&d, c, 1, NULL, 0, 1, now, &p);
	ok(p.npick == 1, "first try");
	hbm_drain_issued(&d, &c[0], -ENOSPC, 0, now);
	hbm_drain_pass_free(&p);
	e = hbm_drain_find(&d, 1, 0);
	ok(e && e->failures == 1 && e->retry_at == now + 1000 && e->last_error == ENOSPC,
	   "refused: 1 failure, retry in 1 s");
	hbm_drain_plan(&d, c, 1, NULL, 0, 1, now + 999, &p);
	ok(p.npick == 0 && p.next_ms == now + 1000, "not before its back-off; next pass then");
	hbm_drain_pass_free(&p);
	hbm_drain_progress(&d, c, 1, 3, &pr);
	ok(pr.chunks_left == 1 && pr.failures == 1 && !pr.given_up, "progress: 1 failure");

	/* keep failing: the back-off doubles, given up once at 6 (said once), retried at 30 s */
	for (i = 0; i < 12; i++) {
		e = hbm_drain_find(&d, 1, 0);
		due = e->retry_at;
		hbm_drain_plan(&d, c, 1, NULL, 0, 1, due, &p);
		gave += (unsigned int)p.ngave_up;
		if (p.npick) {
			tries++;
			hbm_drain_issued(&d, &c[0], -ENOSPC, 0, due);
		}
		hbm_drain_pass_free(&p);
		now = due;
	}
	e = hbm_drain_find(&d, 1, 0);
	ok(tries == 12, "a chunk given up is still retried (%u tries)", tries);
	ok(gave == 1 && e->given_up, "given up once, said once (%u)", gave);
	ok(e->retry_at - now == 30000, "retried every 30 s (%llu)",
	   (unsigned long long)(e->retry_at - now));
	hbm_drain_progress(&d, c, 1, 3, &pr);
	ok(pr.failures == 1 && pr.given_up == 1, "progress: 1 failure, 1 given up");

	/* a fresh chunk goes first, before the failing one */
	c[1] = ch(1, 1, 3);
	hbm_drain_plan(&d, c, 2, NULL, 0, 1, e->retry_at, &p);
	ok(p.npick == 1 && p.pick[0] == 1, "jobs 1: the chunk that never failed first");
	hbm_drain_issued(&d, &c[1], 0, 55, now);
	hbm_drain_pass_free(&p);

	/* EBUSY is no failure */
	hbm_drain_issued(&d, &c[0], -EBUSY, 0, now);
	ok(hbm_drain_find(&d, 1, 0)->failures == 13, "EBUSY: no failure counted");

	/* the move of chunk 1 fails in the kernel: a failure, forgotten, back-off */
	m = (struct hbm_drain_move){ .id = 55, .region = 1, .chunk = 1, .from = 3,
				     .state = HBM_DRAIN_FAILED, .error = ETIMEDOUT };
	hbm_drain_plan(&d, c, 2, &m, 1, 1, now + 10, &p);
	e = hbm_drain_find(&d, 1, 1);
	ok(p.nforget == 1 && p.forget[0] == 55, "a failed move: resync-del");
	ok(e && e->failures == 1 && e->last_error == ETIMEDOUT && e->retry_at == now + 10 + 1000,
	   "its failure: ETIMEDOUT, retried in 1 s");
	hbm_drain_pass_free(&p);

	/* then done: failures forgotten */
	hbm_drain_issued(&d, &c[1], 0, 56, now + 2000);
	m = (struct hbm_drain_move){ .id = 56, .region = 1, .chunk = 1, .from = 3,
				     .state = HBM_DRAIN_DONE };
	hbm_drain_plan(&d, c, 1, &m, 1, 1, now + 3000, &p);
	ok(!hbm_drain_find(&d, 1, 1), "moved: its failures forgotten");
	hbm_drain_pass_free(&p);

	/* a move that vanished (expired) is no verdict */
	hbm_drain_issued(&d, &c[0], 0, 77, now);
	hbm_drain_plan(&d, c, 1, NULL, 0, 1, now + 4000, &p);
	e = hbm_drain_find(&d, 1, 0);
	ok(e && !e->move_id && e->failures == 13, "a move gone from the kernel: no failure");
	hbm_drain_pass_free(&p);
	hbm_drain_free(&d);
}

static void t_nodes(void)
{
	struct hbm_drain_chunk c[5] = { ch(1, 0, 2), ch(1, 1, 3), ch(2, 0, 3), ch(2, 1, 2),
					ch(2, 2, 3) };
	struct hbm_drain_progress p2, p3, p4;
	struct hbm_drain_pass p;
	struct hbm_drain d;

	hbm_drain_init(&d);
	c[4].bytes = 4096;	/* a region's last chunk may be short */
	hbm_drain_plan(&d, c, 5, NULL, 0, 64, 0, &p);
	ok(p.npick == 5, "two drained nodes, jobs 64: every chunk at once");
	hbm_drain_issued(&d, &c[1], -ENODEV, 0, 0);
	hbm_drain_pass_free(&p);
	hbm_drain_progress(&d, c, 5, 2, &p2);
	hbm_drain_progress(&d, c, 5, 3, &p3);
	hbm_drain_progress(&d, c, 5, 4, &p4);
	ok(p2.chunks_left == 2 && p2.bytes_left == 4 * MIB && !p2.failures,
	   "node 2: 2 chunks, 4 MiB");
	ok(p3.chunks_left == 3 && p3.bytes_left == 4 * MIB + 4096 && p3.failures == 1,
	   "node 3: 3 chunks, 4 MiB + 4 KiB, 1 failure");
	ok(!p4.chunks_left && !p4.bytes_left, "node 4: nothing");
	/* jobs 0 is taken as 1 */
	hbm_drain_plan(&d, c, 5, NULL, 0, 0, 5000, &p);
	ok(p.npick == 1, "jobs 0: one at a time");
	hbm_drain_pass_free(&p);
	hbm_drain_free(&d);
}

/* Lost chunks are never picked, not left, counted apart; a drain of only lost chunks is done. */
static void t_lost(void)
{
	struct hbm_drain_chunk c[4] = { ch(1, 0, 3), ch(1, 1, 3), ch(2, 0, 3), ch(2, 1, 4) };
	struct hbm_drain_progress p3, p4;
	struct hbm_drain_pass p;
	struct hbm_drain d;
	size_t i;
	bool picked_lost = false;

	hbm_drain_init(&d);
	c[1].lost = c[2].lost = c[3].lost = true;
	hbm_drain_plan(&d, c, 4, NULL, 0, 8, 0, &p);
	for (i = 0; i < p.npick; i++)
		picked_lost |= c[p.pick[i]].lost;
	ok(p.npick == 1 && !picked_lost, "1 movable and 3 lost chunks: only the movable one picked");
	hbm_drain_issued(&d, &c[0], 0, 7, 0);
	hbm_drain_pass_free(&p);
	hbm_drain_progress(&d, c, 4, 3, &p3);
	hbm_drain_progress(&d, c, 4, 4, &p4);
	ok(p3.chunks_left == 1 && p3.bytes_left == 2 * MIB && p3.lost == 2 && p3.moving == 1,
	   "node 3: 1 chunk left (moving), 2 lost not left");
	ok(!p4.chunks_left && !p4.bytes_left && p4.lost == 1 && !p4.failures,
	   "node 4: only a lost chunk: nothing left, so the drain is done");
	/* the move ended done, the chunk gone from the list: only lost ones remain */
	hbm_drain_plan(&d, &c[1], 3, NULL, 0, 8, 1000, &p);
	ok(!p.npick && !p.in_flight && p.next_ms == UINT64_MAX,
	   "only lost chunks: nothing to do, no pass due");
	hbm_drain_pass_free(&p);
	hbm_drain_progress(&d, &c[1], 3, 3, &p3);
	ok(!p3.chunks_left && p3.lost == 2, "node 3: done, 2 lost");
	hbm_drain_free(&d);
}

/* ---- the drainer on a scripted kernel ---- */

static struct {
	struct hbmd_kernel_chunk c[16];
	size_t nc;
	struct hbmd_kernel_resync m[16];
	size_t nm;
	unsigned int reads, news, dels, params;
	uint32_t mbps_set, next_id;
	int new_ret;
	unsigned int errors;	/* log lines at LOG_ERR */
} fk;

static int fk_chunks(void *ctx, struct hbmd_kernel_chunk **c, size_t *n, char *err, size_t len)
{
	(void)ctx;
	(void)err;
	(void)len;
	fk.reads++;
	*c = calloc(fk.nc + 1, sizeof(**c));
	if (!*c)
		return -ENOMEM;
	memcpy(*c, fk.c, fk.nc * sizeof(**c));
	*n = fk.nc;
	return 0;
}

static int fk_moves(void *ctx, struct hbmd_kernel_resync **m, size_t *n, char *err, size_t len)
{
	(void)ctx;
	(void)err;
	(void)len;
	*m = calloc(fk.nm + 1, sizeof(**m));
	if (!*m)
		return -ENOMEM;
	memcpy(*m, fk.m, fk.nm * sizeof(**m));
	*n = fk.nm;
	return 0;
}

static int fk_new(void *ctx, uint32_t region, uint32_t chunk, uint32_t from, uint32_t *id,
		  char *err, size_t len)
{
	size_t i;

	(void)ctx;
	fk.news++;
	if (fk.new_ret) {
		snprintf(err, len, "resync-new: %s", strerror(-fk.new_ret));
		return fk.new_ret;
	}
	*id = ++fk.next_id;
	fk.m[fk.nm++] = (struct hbmd_kernel_resync){ .id = *id, .region = region, .chunk = chunk,
		.from = from, .to = 9, .state = HBMPOOL_RESYNC_STATE_COPYING };
	for (i = 0; i < fk.nc; i++)
		if (fk.c[i].region == region && fk.c[i].index == chunk)
			fk.c[i].syncing_node = 9;
	return 0;
}

static int fk_del(void *ctx, uint32_t id, char *err, size_t len)
{
	size_t i;

	(void)ctx;
	(void)err;
	(void)len;
	fk.dels++;
	for (i = 0; i < fk.nm; i++)
		if (fk.m[i].id == id) {
			fk.m[i] = fk.m[--fk.nm];
			return 0;
		}
	return -ENOENT;
}

static int fk_params(void *ctx, uint32_t mbps, uint32_t *jobs, char *err, size_t len)
{
	(void)ctx;
	(void)err;
	(void)len;
	fk.params++;
	fk.mbps_set = mbps;
	*jobs = 2;
	return 0;
}

/* Move id done: the chunk is on node 9 now (no longer listed on the drained node). */
static void fk_done(uint32_t id)
{
	size_t i, j;

	for (i = 0; i < fk.nm; i++) {
		if (fk.m[i].id != id)
			continue;
		fk.m[i].state = HBMPOOL_RESYNC_STATE_DONE;
		for (j = 0; j < fk.nc; j++)
			if (fk.c[j].region == fk.m[i].region && fk.c[j].index == fk.m[i].chunk) {
				fk.c[j].node = 9;
				fk.c[j].syncing_node = HBMD_NO_NODE;
			}
	}
}

static void fk_log(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level <= LOG_ERR)
		fk.errors++;
	printf("# log %d: %s\n", level, msg);
}

static const struct hbmd_kernel_ops fk_ops = {
	.chunks_read = fk_chunks,
	.resync_new = fk_new,
	.resync_read = fk_moves,
	.resync_del = fk_del,
	.resync_params = fk_params,
};

static void t_drainer(void)
{
	struct hbmd_kernel k = { .ops = &fk_ops };
	static bool drain[HBMD_DRAIN_MAX_ID + 1];
	struct hbm_drain_progress p;
	struct hbmd_drainer *d;
	uint64_t now = 100000;
	char val[256];
	uint32_t i;

	memset(&fk, 0, sizeof(fk));
	for (i = 0; i < 4; i++)
		fk.c[fk.nc++] = (struct hbmd_kernel_chunk){ .region = 1, .index = i, .node = 3,
			.syncing_node = HBMD_NO_NODE, .bytes = MIB };
	fk.c[fk.nc++] = (struct hbmd_kernel_chunk){ .region = 1, .index = 4, .node = 2,
		.syncing_node = HBMD_NO_NODE, .bytes = MIB };
	ok(!hbmd_drainer_new(k, 1, 0, 100, fk_log, NULL, &d), "a drainer");
	hbmd_drainer_run(d, drain, now);
	ok(fk.reads == 0 && hbmd_drainer_deadline(d) == UINT64_MAX,
	   "no drain: nothing read, nothing due");
	ok(!hbmd_drainer_publish_due(d, 3, now, 1, val, sizeof(val)), "no drain: nothing to publish");

	drain[3] = true;
	hbmd_drainer_poke(d, now);
	hbmd_drainer_run(d, drain, now);
	ok(fk.reads == 1 && fk.params == 1 && fk.mbps_set == 100,
	   "drain of 3: the chunks read, [drain] mbps 100 set");
	ok(fk.news == 2 && fk.nm == 2 && fk.m[0].from == 3 && fk.m[0].chunk == 0 &&
	   fk.m[1].chunk == 1, "the kernel's resync-jobs 2: two moves from node 3 (%u)", fk.news);
	ok(hbmd_drainer_progress(d, 3, &p) && p.chunks_left == 4 && p.bytes_left == 4 * MIB,
	   "progress: 4 chunks (node 2's chunk not counted), 4 MiB");
	ok(hbmd_drainer_publish_due(d, 3, now, 1234, val, sizeof(val)) &&
	   !strcmp(val, "{\"chunks_left\":4,\"bytes_left\":4194304,\"failures\":0,\"lost\":0,\"updated\":1234}"),
	   "the progress to publish: %s", val);
	hbmd_drainer_published(d, 3, now);
	ok(!hbmd_drainer_publish_due(d, 3, now + 2000, 1, val, sizeof(val)),
	   "unchanged: not published again");
	ok(hbmd_drainer_deadline(d) <= now + HBM_DRAIN_PASS_MS, "moves in flight: a pass within 1 s");

	hbmd_drainer_run(d, drain, now + 500);
	ok(fk.reads == 1, "not before its time");
	fk_done(1);
	hbmd_drainer_run(d, drain, now + 1000);
	ok(fk.reads == 2 && fk.dels == 1 && fk.news == 3,
	   "a move done: resync-del of it, the next chunk moves");
	ok(hbmd_drainer_progress(d, 3, &p) && p.chunks_left == 3, "3 left");
	ok(!hbmd_drainer_publish_due(d, 3, now + 999, 1, val, sizeof(val)) &&
	   hbmd_drainer_publish_due(d, 3, now + 1000, 1, val, sizeof(val)) &&
	   strstr(val, "\"chunks_left\":3,"), "changed: published, at most once a second");
	hbmd_drainer_published(d, 3, now + 1000);

	/* refusals: back-off, then the rest done */
	fk.new_ret = -ENOSPC;
	fk_done(2);
	fk_done(3);
	hbmd_drainer_run(d, drain, now + 2000);
	ok(hbmd_drainer_progress(d, 3, &p) && fk.news == 4 && p.failures == 1 && p.chunks_left == 1,
	   "the last chunk refused, ENOSPC: a failure (%llu)", (unsigned long long)p.failures);
	fk.new_ret = 0;
	hbmd_drainer_run(d, drain, now + 2500);
	ok(fk.news == 4, "not retried before its back-off");
	hbmd_drainer_run(d, drain, now + 3100);
	ok(fk.news == 5, "retried after 1 s");
	fk_done(fk.next_id);
	hbmd_drainer_run(d, drain, now + 4100);
	ok(hbmd_drainer_progress(d, 3, &p) && !p.chunks_left && !p.bytes_left && !p.failures,
	   "drained: nothing left");
	ok(hbmd_drainer_deadline(d) == now + 4100 + HBMD_DRAIN_IDLE_MS ||
	   hbmd_drainer_deadline(d) <= now + 4100 + HBMD_DRAIN_PUBLISH_MS,
	   "idle: the next pass in %d ms (or a publish due)", HBMD_DRAIN_IDLE_MS);

	/* the drain ends: nothing more, the key to delete */
	drain[3] = false;
	ok(hbmd_drainer_end(d, 3) && !hbmd_drainer_end(d, 3), "drain ended: our key to delete, once");
	i = fk.reads;
	hbmd_drainer_run(d, drain, now + 20000);
	ok(fk.reads == i && hbmd_drainer_deadline(d) == UINT64_MAX,
	   "no drain: nothing read, nothing due");
	ok(fk.errors == 0, "no error logged");
	hbmd_drainer_free(d);
}

static void t_reports(void)
{
	struct hbmd_drainer *d;
	struct hbmd_kernel k = { .ops = &fk_ops };
	const struct hbmd_drain_report *r;
	const char *pre = "/p/d/drains/";
	uint32_t node, member;
	char err[128];

	ok(!hbmd_drain_key_parse(pre, "/p/d/drains/3", &node, &member) && node == 3 &&
	   member == UINT32_MAX, "drains/3: a drain");
	ok(!hbmd_drain_key_parse(pre, "/p/d/drains/3/progress/1023", &node, &member) &&
	   node == 3 && member == 1023, "drains/3/progress/1023: a report");
	ok(hbmd_drain_key_parse(pre, "/p/d/drains/03", &node, &member) &&
	   hbmd_drain_key_parse(pre, "/p/d/drains/1024", &node, &member) &&
	   hbmd_drain_key_parse(pre, "/p/d/drains/3/progress/", &node, &member) &&
	   hbmd_drain_key_parse(pre, "/p/d/drains/3/progress/1x", &node, &member) &&
	   hbmd_drain_key_parse(pre, "/p/d/drains/3/other/1", &node, &member) &&
	   hbmd_drain_key_parse(pre, "/p/d/drains/", &node, &member) &&
	   hbmd_drain_key_parse(pre, "/p/x/drains/3", &node, &member),
	   "bad keys refused (03, 1024, no member, 1x, other, none, another prefix)");

	hbmd_drainer_new(k, 1, 0, UINT32_MAX, fk_log, NULL, &d);
	ok(!hbmd_drainer_report(d, 3, 2, "{\"chunks_left\":5,\"bytes_left\":10,\"failures\":1,\"updated\":7}",
				 62, err, sizeof(err)) &&
	   (r = hbmd_drainer_report_of(d, 3, 2)) && r->chunks_left == 5 && r->bytes_left == 10 &&
	   r->failures == 1 && r->updated == 7, "a report taken");
	ok(hbmd_drainer_report(d, 3, 2, "{\"chunks_left\":-1,\"bytes_left\":0,\"failures\":0,\"updated\":1}",
			       61, err, sizeof(err)) == -EPROTO && !hbmd_drainer_report_of(d, 3, 2),
	   "a negative count: refused, the report dropped (%s)", err);
	ok(hbmd_drainer_report(d, 3, 2, "[1]", 3, err, sizeof(err)) == -EPROTO &&
	   hbmd_drainer_report(d, 3, 2, "{\"chunks_left\":\"5\"}", 18, err, sizeof(err)) == -EPROTO &&
	   hbmd_drainer_report(d, 3, 2, "", 0, err, sizeof(err)) == -EPROTO &&
	   hbmd_drainer_report(d, 3, 2, "{\"chunks_left\":1", 16, err, sizeof(err)) == -EPROTO,
	   "no object, a string count, empty, cut: refused");
	hbmd_drainer_report(d, 3, 4, "{\"chunks_left\":0,\"bytes_left\":0,\"failures\":0,\"updated\":1}",
			    60, err, sizeof(err));
	ok(!hbmd_drainer_report(d, 3, 5, "{\"chunks_left\":0,\"bytes_left\":0,\"failures\":0,\"lost\":3,\"updated\":1}",
				 71, err, sizeof(err)) && (r = hbmd_drainer_report_of(d, 3, 5)) &&
	   r->lost == 3 && !hbmd_drainer_report_of(d, 3, 4)->lost,
	   "lost taken; a report without it (an earlier version) has 0");
	ok(hbmd_drainer_report(d, 3, 5, "{\"chunks_left\":0,\"bytes_left\":0,\"failures\":0,\"lost\":-2,\"updated\":1}",
			       72, err, sizeof(err)) == -EPROTO && !hbmd_drainer_report_of(d, 3, 5),
	   "a negative lost: refused (%s)", err);
	ok(hbmd_drainer_report_of(d, 3, 4) && !hbmd_drainer_report(d, 3, 4, NULL, 0, err, sizeof(err)) &&
	   !hbmd_drainer_report_of(d, 3, 4), "deleted: gone");
	hbmd_drainer_free(d);
}

int main(void)
{
	t_backoff();
	t_jobs();
	t_failures();
	t_nodes();
	t_lost();
	t_drainer();
	t_reports();
	return tap_finish();
}
