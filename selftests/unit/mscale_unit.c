// SPDX-License-Identifier: GPL-2.0
/*
 * The membership core at small scale (issue 9), the smoke mode of
 * tools/bench/membership_scale: 32 simulated nodes (tools/bench/mscale.c)
 * against a real etcd on 127.0.0.1 with a 2 s lease TTL; 10 crash at once.
 * Every survivor must see every dead node go within TTL + 1 s of the
 * crash, never before the dead lease's proven end, and all survivors must
 * reach the new epoch within 2 s of each other; no survivor may lose its
 * lease.  Idle watches are checked as the agent checks them (a probe of the
 * domain's key count and newest revision after 2 TTLs of quiet, the same
 * body as hbm_etcd_probe()'s): every node must probe before the crash and
 * none may read the domain again while it is quiet.  About 12 s.  Skipped
 * (exit 4) without /usr/bin/etcd.
 */
#include "tap.h"
#include "etcd_rig.h"
#include "mscale.h"

#define NODES	32
#define KILL	10
#define TTL	2

/* hbm_etcd_probe()'s body for "/hbmpool/smoke/" (daemon/etcd.c) */
#define PROBE_BODY \
	"{\"key\":\"L2hibXBvb2wvc21va2Uv\",\"range_end\":\"L2hibXBvb2wvc21va2Uw\"," \
	"\"limit\":\"1\",\"sort_order\":\"DESCEND\",\"sort_target\":\"MOD\",\"keys_only\":true}"

/* The probe's request and the parse of its replies, without etcd. */
static void probe_format(void)
{
	int64_t count, max_mod;
	char *body = NULL, why[256];
	int ret;

	ret = hbm_etcd_body_probe("/hbmpool/smoke/", true, &body);
	ok(!ret && body && !strcmp(body, PROBE_BODY), "the probe's body is the agent's: %s",
	   body ? body : "(none)");
	free(body);
	ret = hbm_etcd_reply_probe("{\"header\":{\"revision\":\"9\"},\"kvs\":[{\"key\":\"eA==\","
				 "\"create_revision\":\"3\",\"mod_revision\":\"8\"}],"
				 "\"more\":true,\"count\":\"33\"}", &count, &max_mod, NULL, why, sizeof(why));
	ok(!ret && count == 33 && max_mod == 8, "a probe's reply: %lld keys up to revision %lld",
	   (long long)count, (long long)max_mod);
	ret = hbm_etcd_reply_probe("{\"header\":{\"revision\":\"9\"}}", &count, &max_mod, NULL,
				   why, sizeof(why));
	ok(!ret && !count && !max_mod, "an empty domain's: no keys");
	ret = hbm_etcd_reply_probe("{\"header\":{\"revision\":\"9\"},\"count\":\"2\"}", &count, &max_mod, NULL, why, sizeof(why));
	ok(ret == -EPROTO, "keys without a newest is a bad reply (%s)", ret ? why : "accepted");
}

int main(void)
{
	struct mscale_opts o = {
		.domain = "smoke", .nodes = NODES, .kill = KILL, .ttl_s = TTL,
		.request_ms = TTL * 1000 / 4, .steady_s = 2 * TTL + 1, .starting = 32,
		.idle = MSCALE_IDLE_PROBE, .log = stdout,
	};
	struct mscale_result r;
	int status, ret;

	printf("# mscale_unit: %d nodes, %d crash, lease TTL %d s\n", NODES, KILL, TTL);
	probe_format();
	if (etcd_rig_begin("mscale_unit", &status))
		return status;
	o.endpoint = url;
	ret = mscale_run(&o, &r);
	ok(!ret && r.done, "the experiment ran (%s)", ret ? r.err : "ok");
	ok(!r.failed, "every node joined (%u failed)", r.failed);
	ok(r.join_s < 10, "every node saw every node after %.2f s", r.join_s);
	ok(r.watch_streams == NODES, "%u watch streams at the crash", r.watch_streams);
	ok(!r.fenced, "no survivor lost its lease (%u did)", r.fenced);
	ok(r.survivors == NODES - KILL, "%u survivors", r.survivors);
	ok(r.pairs == (NODES - KILL) * KILL && !r.pairs_missed,
	   "every survivor saw every dead node go (%u of %u pairs missed)", r.pairs_missed,
	   r.pairs);
	ok(!r.other_leaves, "no live node seen leaving (%u)", r.other_leaves);
	ok(r.det_max <= TTL + 1.0, "detection %.2f..%.2f s (median %.2f) <= TTL + 1 s",
	   r.det_min, r.det_max, r.det_med);
	ok(r.lag_min >= -0.05,
	   "no dead node removed before its lease's proven end (%.3f..%.3f s after it)",
	   r.lag_min, r.lag_max);
	ok(r.epoch_after > r.epoch_before, "the epoch rose: %lld -> %lld",
	   (long long)r.epoch_before, (long long)r.epoch_after);
	ok(!r.not_agreed && r.agree_s <= 2.0,
	   "every survivor reached epoch %lld, within %.3f s of each other (%u did not)",
	   (long long)r.epoch_after, r.agree_s, r.not_agreed);
	/* a keepalive per node every TTL / 3 at least */
	ok(r.steady.rps >= 0.8 * NODES * 3 / TTL, "%.1f requests/s in the steady state",
	   r.steady.rps);
	ok(r.quiet_probes >= NODES, "idle watches were probed before the crash (%u probes)",
	   r.quiet_probes);
	ok(!r.quiet_missed && !r.probe_failed && !r.quiet_resyncs,
	   "no probe read the quiet domain again (%u said missed, %u failed, %u ranges)",
	   r.quiet_missed, r.probe_failed, r.quiet_resyncs);
	ok(r.steady.probes > 0 && r.probe_up_each > 0 && r.probe_down_each > 0,
	   "probes counted in the traffic: %.1f/s, %.0f / %.0f B each", r.steady.probes,
	   r.probe_up_each, r.probe_down_each);
	mscale_print_header(stdout);
	mscale_print(stdout, &r, &o);
	etcd_stop();
	return tap_finish();
}
