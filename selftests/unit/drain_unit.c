// SPDX-License-Identifier: GPL-2.0
/*
 * drain_unit: the drain planner (daemon/drain.c), pure logic: which chunk
 * moves are issued, the concurrency limit, back-off and giving up (and
 * retrying anyway), ended moves forgotten, the progress numbers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "drain.h"
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

int main(void)
{
	t_backoff();
	t_jobs();
	t_failures();
	t_nodes();
	return tap_finish();
}
