// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of hbmpoold's use of the kernel's monitor group (issue 9:
 * subscribe, then dump; re-dump on overrun): two agents (nodes 1 and 2 of
 * domain "kmon") on fake kernels (fake_kernel.c, whose event channel the
 * test scripts) against a real etcd on 127.0.0.1 (etcd_rig.h), both driven
 * by one poll loop in this thread.  [health] interval_ms is 60 s and a
 * failed add is retried after HBMD_RETRY_MS (1 s): whatever happens within
 * REACT_MS of an event happens because of the event, not a timer.
 *
 *  1. each agent subscribes to its kernel's events before it first reads
 *     its nodes; once both joined, the events of the agents' own calls
 *     (node added, epoch) were read and made no dump; [placement]
 *     full_pct and avoid_degraded reach the kernel at start and at a reload;
 *  2. node 1's link to 2 goes down in the kernel: the link event makes the
 *     agent sample it at once (the change logged), not at the next tick;
 *     a region-change event on node 1 (degraded chunks): node 1 reads its
 *     regions and publishes its report, node 2 sees it, the leader warns;
 *     the same event again: nothing put; restored: zeros, the leader says
 *     "replication restored";
 *  3. an operator removes member node 2 from node 1's kernel (hbmctl node
 *     del): the event contradicts the agent's view, it reads the nodes
 *     once and adds node 2 again;
 *  4. node 2 removed again, its event lost, then an overrun: exactly one
 *     dump of the nodes and one of the links, the loss said once, node 2
 *     added again; a second overrun: one more dump, not said again;
 *  5. an operator fences member node 2 in node 1's kernel: removed, then
 *     added again; an operator adds node 5, no member: fenced, then removed
 *     (after HBMD_REMOVE_DELAY_MS);
 *  6. another program fences node 2 itself (netlink domain-set fenced): its
 *     agent is fenced, without a fence-self call of its own;
 *  7. another program fences node 1 itself, the event lost, then an
 *     overrun: the dump reads the domain's fenced flag (the self node's
 *     state is no guide: the kernel leaves it live), the agent is fenced.
 * Every fake kernel counts no violation (no node added twice, no unknown
 * node removed or fenced).
 *
 * Skipped (exit 4) without /usr/bin/etcd (or $HBM_ETCD).  TAP output;
 * HBM_VERBOSE=1 shows the agents' logs.
 */
#include <poll.h>
#include <syslog.h>

#include <json-c/json.h>

#include "tap.h"
#include "etcd_rig.h"

#include "agent.h"
#include "config.h"
#include "fake_kernel.h"
#include "loop.h"

#define NR		2
#define TTL_S		2
#define REACT_MS	300	/* an event's effect, at most */

struct node {
	uint32_t id;
	char conf_path[96];
	struct hbm_config conf;
	struct fake_kernel fk;
	struct hbmd_agent *a;
	/* log lines seen, by kind */
	unsigned int lost_warn, lost_debug, link_down, fenced_by_other;
	unsigned int repl_warn, repl_restored;	/* the leader's lines about member 1 */
};

static struct node nodes[NR];
static bool verbose;

static void log_cb(void *arg, int level, const char *msg)
{
	struct node *n = arg;

	if (strstr(msg, "kernel events were lost")) {
		if (level == LOG_WARNING)
			n->lost_warn++;
		else
			n->lost_debug++;
	}
	if (strstr(msg, "link 1 -> 2: up -> down"))
		n->link_down++;
	if (strstr(msg, "fenced in the kernel by someone else (domain-set fenced)"))
		n->fenced_by_other++;
	if (level == LOG_WARNING &&
	    !strcmp(msg, "leader: member 1: 3 chunks of 1 region degraded, 0 lost"))
		n->repl_warn++;
	if (level == LOG_INFO && !strcmp(msg, "leader: member 1: replication restored"))
		n->repl_restored++;
	if (verbose)
		printf("# %.3f node %u <%d> %s\n", now(), n->id, level, msg);
}

/* Drive both agents for up to ms, or until done() (checked between rounds). */
static bool pump(unsigned int ms, bool (*done)(void))
{
	struct pollfd fds[NR][HBMD_LOOP_MAX_FDS], all[NR * HBMD_LOOP_MAX_FDS];
	unsigned int k[NR], n, i, j;
	uint64_t end = hbmd_now_ms() + ms, d;
	int timeout;

	for (;;) {
		if (done && done())
			return true;
		if (hbmd_now_ms() >= end)
			return false;
		d = end;
		for (i = 0, n = 0; i < NR; i++) {
			k[i] = nodes[i].a ? hbmd_agent_fds(nodes[i].a, fds[i], HBMD_LOOP_MAX_FDS) : 0;
			memcpy(all + n, fds[i], k[i] * sizeof(fds[i][0]));
			n += k[i];
			if (nodes[i].a && hbmd_agent_deadline(nodes[i].a) < d)
				d = hbmd_agent_deadline(nodes[i].a);
		}
		timeout = d <= hbmd_now_ms() ? 0 : (int)(d - hbmd_now_ms());
		if (timeout > 10)
			timeout = 10;
		if (poll(all, n, timeout) < 0 && errno != EINTR)
			return false;
		for (i = 0, n = 0; i < NR; i++) {
			for (j = 0; j < k[i]; j++, n++)
				if (all[n].revents)
					hbmd_agent_event(nodes[i].a, all[n].fd, all[n].revents);
			if (nodes[i].a)
				hbmd_agent_tick(nodes[i].a);
		}
	}
}

static int write_conf(struct node *n, const char *key)
{
	FILE *f;

	snprintf(n->conf_path, sizeof(n->conf_path), "%s/kmon%u.conf", dir, n->id);
	f = fopen(n->conf_path, "w");
	if (!f)
		return -errno;
	fprintf(f,
		"[domain]\nname = kmon\nkey_file = %s\netcd_prefix = /hbmkmon\n"
		"[node]\nid = %u\naddress = 127.0.0.1\nport = %u\nsegment_size = 1M\n"
		"[etcd]\nendpoints = %s\nconnect_timeout_ms = 200\nrequest_timeout_ms = 300\n"
		"lease_ttl = %d\n"
		"[health]\ninterval_ms = 60000\nerror_window_ms = 60000\n",
		key, n->id, 7170 + n->id, url, TTL_S);
	return fclose(f) ? -errno : 0;
}

static int node_start(struct node *n)
{
	char *errors = NULL;
	int ret;

	fk_init(&n->fk, n->id, 2000 + n->id, false);
	ret = hbm_config_load(n->conf_path, &n->conf, &errors);
	if (ret) {
		printf("# %s", errors ? errors : "?\n");
		free(errors);
		return ret;
	}
	ret = hbmd_agent_new(&n->conf, fk_kernel(&n->fk), log_cb, n, &n->a);
	return ret ? ret : hbmd_agent_start(n->a);
}

static enum fk_state kstate(struct node *n, uint32_t id)
{
	enum fk_state s;

	pthread_mutex_lock(&n->fk.lock);
	s = n->fk.node[id];
	pthread_mutex_unlock(&n->fk.lock);
	return s;
}

static bool joined(void)
{
	return kstate(&nodes[0], 2) == FK_LIVE && kstate(&nodes[1], 1) == FK_LIVE &&
	       hbmd_agent_epoch(nodes[0].a) == hbmd_agent_epoch(nodes[1].a) &&
	       hbmd_agent_leader_id(nodes[0].a) > 0 && hbmd_agent_leader_id(nodes[1].a) > 0;
}

/* The log line "what", after line "after" of node 1's fake kernel. */
static bool logged_after(const char *what, const char *after)
{
	const char *p;
	int from = fk_find(&nodes[0].fk, after), n = 0;

	if (from < 0)
		return false;
	pthread_mutex_lock(&nodes[0].fk.lock);
	for (p = nodes[0].fk.log; *p; n++) {
		const char *e = strchr(p, '\n');
		size_t len = strlen(what);

		if (!e)
			e = p + strlen(p);
		if (n > from && (size_t)(e - p) >= len && !strncmp(p, what, len) &&
		    (p[len] == ' ' || p + len == e)) {
			pthread_mutex_unlock(&nodes[0].fk.lock);
			return true;
		}
		p = *e ? e + 1 : e;
	}
	pthread_mutex_unlock(&nodes[0].fk.lock);
	return false;
}

static bool node2_back(void)
{
	return kstate(&nodes[0], 2) == FK_LIVE;
}

static bool link_down_seen(void)
{
	return nodes[0].link_down > 0;
}

static bool node5_fenced(void)
{
	return kstate(&nodes[0], 5) == FK_FENCED;
}

static bool node5_gone(void)
{
	return kstate(&nodes[0], 5) == FK_ABSENT;
}

static bool node1_fenced(void)
{
	return hbmd_agent_state(nodes[0].a) == HBMD_AGENT_FENCED;
}

static bool node2_fenced(void)
{
	return hbmd_agent_state(nodes[1].a) == HBMD_AGENT_FENCED;
}

/* Node 1's view of member 2 in the kernel (hbmd_agent_member()). */
static const char *view_of_2(void)
{
	struct hbmd_agent_member m;
	size_t i;

	for (i = 0; !hbmd_agent_member(nodes[0].a, i, &m); i++)
		if (m.id == 2)
			return m.kernel;
	return "(none)";
}

/*
 * Node 2's view of member 1's replication report (hbmd_agent_json()):
 * its degraded chunks (-1: no report), lost chunks, when it was put.
 */
static int64_t repl_of_1(int64_t *lost, int64_t *updated)
{
	json_object *o = NULL, *r, *bm, *m, *x;
	char *json = NULL;
	int64_t degraded = -1;
	size_t i;

	if (hbmd_agent_json(nodes[1].a, &json))
		return -1;
	o = json_tokener_parse(json);
	free(json);
	if (o && json_object_object_get_ex(o, "replication", &r) &&
	    json_object_object_get_ex(r, "by_member", &bm))
		for (i = 0; i < json_object_array_length(bm); i++) {
			m = json_object_array_get_idx(bm, i);
			if (!json_object_object_get_ex(m, "id", &x) || json_object_get_int64(x) != 1)
				continue;
			json_object_object_get_ex(m, "degraded_chunks", &x);
			degraded = json_object_get_int64(x);
			json_object_object_get_ex(m, "lost_chunks", &x);
			*lost = json_object_get_int64(x);
			json_object_object_get_ex(m, "updated", &x);
			*updated = json_object_get_int64(x);
		}
	json_object_put(o);
	return degraded;
}

static bool node2_sees_degraded(void)
{
	int64_t lost, up;

	return repl_of_1(&lost, &up) == 3;
}

static bool node2_sees_restored(void)
{
	int64_t lost, up;

	return repl_of_1(&lost, &up) == 0;
}

/*
 * 2b. node 1's kernel says a replicated region's chunks are degraded
 * (region-change-ntf): node 1 reads its regions and puts its report, node
 * 2 (every member) sees it, the leader warns; the same again: no put;
 * restored: a report of zeros, the leader says so.
 */
static void test_replication(void)
{
	struct fake_kernel *fk = &nodes[0].fk;
	struct hbmd_kernel_stats deg = { .regions = 1, .replicated_regions = 1,
					 .degraded_regions = 1, .degraded_chunks = 3 },
				 good = { .regions = 1, .replicated_regions = 1 };
	int64_t lost = -1, up = 0, up2 = 0, degraded;
	unsigned int reads = fk->stats_reads;
	double t0 = now();
	bool seen;

	ok(repl_of_1(&lost, &up) == -1 && reads >= 1,
	   "no replicated region: no report of node 1 (%u reads of its regions since start)", reads);
	fk_region_change(fk, 7, 3, 0, &deg);
	seen = pump(3000, node2_sees_degraded);
	ok(seen && repl_of_1(&lost, &up) == 3 && lost == 0 && fk->stats_reads == reads + 1,
	   "region 7 of node 1 degraded (region-change-ntf): node 2 sees 3 degraded chunks, 0 lost, in %.0f ms (one read: %u)",
	   (now() - t0) * 1000, fk->stats_reads - reads);
	pump(200, NULL);
	ok(nodes[0].repl_warn + nodes[1].repl_warn == 1,
	   "the leader (node %d) warns: \"member 1: 3 chunks of 1 region degraded, 0 lost\" (%u, %u)",
	   hbmd_agent_leader_id(nodes[0].a), nodes[0].repl_warn, nodes[1].repl_warn);
	reads = fk->stats_reads;
	fk_region_change(fk, 7, 3, 0, &deg);
	pump(1500, NULL);
	degraded = repl_of_1(&lost, &up2);
	ok(degraded == 3 && up2 == up && fk->stats_reads == reads + 1,
	   "the same event again: read (%u), nothing put (updated %lld, was %lld)",
	   fk->stats_reads - reads, (long long)up2, (long long)up);
	t0 = now();
	fk_region_change(fk, 7, 0, 0, &good);
	seen = pump(3000, node2_sees_restored);
	pump(200, NULL);
	ok(seen && nodes[0].repl_restored + nodes[1].repl_restored == 1,
	   "re-replicated: node 2 sees 0 degraded chunks in %.0f ms, the leader says \"member 1: replication restored\"",
	   (now() - t0) * 1000);
}

/* A reload of node 1's config with new [placement] values: into its kernel at once. */
static void placement_reload(void)
{
	struct node *n = &nodes[0];
	struct hbm_config next;
	char *applied = NULL, *errors = NULL;
	FILE *f = fopen(n->conf_path, "a");
	int ret;

	if (!f || fprintf(f, "[placement]\nfull_pct = 80\navoid_degraded = no\n") < 0 || fclose(f)) {
		ok(0, "config of node 1 appended");
		return;
	}
	ret = hbm_config_load(n->conf_path, &next, &errors);
	free(errors);
	if (ret) {
		ok(0, "the new config loads");
		return;
	}
	ret = hbm_config_reload(&n->conf, &next, n->conf_path, &applied, &errors);
	hbm_config_free(&next);
	free(applied);
	free(errors);
	hbmd_agent_reconfigured(n->a);
	ok(ret == 2 && n->fk.placement_calls == 2 && n->fk.full_pct == 80 &&
	   n->fk.avoid_degraded == 0,
	   "a reload with full_pct 80, avoid_degraded no: both into the kernel (%d changes; %u, %d)",
	   ret, n->fk.full_pct, n->fk.avoid_degraded);
}

static void test_kmonitor(void)
{
	struct fake_kernel *fk = &nodes[0].fk;
	struct hbmd_kernel_link l = { .node_id = 2, .oper_state = 1,
				      .health = 2 /* HBMPOOL_LINK_HEALTH_LIVE */,
				      .rtt_ns = 100000 };
	unsigned int dumps, lreads, calls, i;
	char key[96];
	double t0, dt;
	bool good;
	FILE *f;

	snprintf(key, sizeof(key), "%s/kmon.key", dir);
	f = fopen(key, "w");
	if (!f || fwrite("0123456789abcdef0123456789abcdef", 1, 32, f) != 32 || fclose(f)) {
		ok(0, "the domain key file");
		return;
	}
	for (i = 0; i < NR; i++) {
		nodes[i].id = i + 1;
		if (write_conf(&nodes[i], key)) {
			ok(0, "config of node %u", nodes[i].id);
			return;
		}
	}

	/* 1. subscribe, then dump */
	for (i = 0, good = true; i < NR && good; i++)
		good = !node_start(&nodes[i]);
	ok(good, "two agents start");
	if (!good)
		return;
	for (i = 0, good = true; i < NR; i++)
		good = good && fk_find(&nodes[i].fk, "events-open") >= 0 &&
		       fk_find(&nodes[i].fk, "events-open") < fk_find(&nodes[i].fk, "nodes-read");
	ok(good, "each subscribes to its kernel's events (line %d) before it reads its nodes (line %d)",
	   fk_find(fk, "events-open"), fk_find(fk, "nodes-read"));
	ok(pump(5000, joined), "both join: each kernel has the other");
	pump(500, NULL);
	ok(fk->placement_calls == 1 && fk->full_pct == 95 && fk->avoid_degraded == 1,
	   "[placement] defaults into the kernel at start: full-pct %u, avoid-degraded %d (%u calls)",
	   fk->full_pct, fk->avoid_degraded, fk->placement_calls);
	placement_reload();
	ok(fk->events_reads > 0 && fk_count(fk, "nodes-read") == 1 && fk->evq_n == 0,
	   "the events of the agents' own calls were read (%u reads), and made no dump (%u nodes-read)",
	   fk->events_reads, fk_count(fk, "nodes-read"));

	/* 2. a link event: sampled at once */
	lreads = fk->link_reads;
	fk_set_link(fk, &l);
	pump(REACT_MS, NULL);
	ok(fk->link_reads == lreads + 1, "a new link 1 -> 2 in the kernel: its event samples it (%u link reads)",
	   fk->link_reads - lreads);
	lreads = fk->link_reads;
	l.oper_state = 0;
	l.health = 0;	/* HBMPOOL_LINK_HEALTH_DOWN */
	t0 = now();
	fk_set_link(fk, &l);
	good = pump(REACT_MS, link_down_seen);
	dt = now() - t0;
	ok(good && fk->link_reads == lreads + 1,
	   "link 1 -> 2 down in the kernel: sampled at once on its event (%.0f ms, %u link reads; the timer's interval is 60 s)",
	   dt * 1000, fk->link_reads - lreads);
	l.oper_state = 1;
	l.health = 2;
	fk_set_link(fk, &l);
	pump(REACT_MS, NULL);

	test_replication();

	/* 3. an operator removes a member */
	dumps = fk_count(fk, "nodes-read");
	t0 = now();
	fk_operator(fk, "del", 2, true);
	good = pump(REACT_MS, node2_back);
	dt = now() - t0;
	ok(good && logged_after("add 2", "op-del 2"),
	   "hbmctl node del 2 behind node 1's agent: added again at once (%.0f ms; retries are every %d ms)",
	   dt * 1000, HBMD_RETRY_MS);
	ok(fk_count(fk, "nodes-read") == dumps + 1,
	   "the node-del event contradicted the view: one dump of the nodes (%u)",
	   fk_count(fk, "nodes-read") - dumps);
	pump(200, NULL);
	ok(!strcmp(view_of_2(), "live") && fk_count(fk, "nodes-read") == dumps + 1,
	   "node 1's view of node 2: %s; the echo of its own add made no dump", view_of_2());

	/* 4. a lost event, then an overrun */
	dumps = fk_count(fk, "nodes-read");
	lreads = fk->link_reads;
	fk_operator(fk, "del", 2, false);
	pump(REACT_MS, NULL);
	ok(kstate(&nodes[0], 2) == FK_ABSENT && !strcmp(view_of_2(), "live"),
	   "node 2 removed, its event lost: the agent cannot know (its view: %s)", view_of_2());
	t0 = now();
	fk_overrun(fk);
	good = pump(REACT_MS, node2_back);
	dt = now() - t0;
	pump(500, NULL);
	ok(good && fk->overruns_read == 1 && logged_after("add 2", "op-del 2 (event lost)"),
	   "an overrun: node 2 added again (%.0f ms)", dt * 1000);
	ok(fk_count(fk, "nodes-read") == dumps + 1 && fk->link_reads == lreads + 1,
	   "an overrun: exactly one dump of the nodes (%u) and one of the links (%u)",
	   fk_count(fk, "nodes-read") - dumps, fk->link_reads - lreads);
	ok(nodes[0].lost_warn == 1 && !strcmp(view_of_2(), "live"),
	   "the loss said once (%u); node 1's view of node 2: %s", nodes[0].lost_warn,
	   view_of_2());
	dumps = fk_count(fk, "nodes-read");
	calls = fk->calls;
	fk_overrun(fk);
	pump(REACT_MS, NULL);
	ok(fk_count(fk, "nodes-read") == dumps + 1 && nodes[0].lost_warn == 1 &&
	   nodes[0].lost_debug == 1 && fk->calls == calls + 2,
	   "a second overrun: one more dump (the domain and the nodes: %u reads), not said again, nothing changed",
	   fk->calls - calls);

	/* 5. an operator fences a member; adds a node that is no member */
	fk_operator(fk, "fence", 2, true);
	good = pump(REACT_MS, NULL);
	ok(kstate(&nodes[0], 2) == FK_LIVE && logged_after("del 2", "op-fence 2") &&
	   logged_after("add 2", "op-fence 2"),
	   "hbmctl node set 2 state fenced behind node 1's agent: removed and added again at once");
	t0 = now();
	fk_operator(fk, "add", 5, true);
	good = pump(REACT_MS, node5_fenced);
	ok(good && logged_after("fence 5", "op-add 5"),
	   "hbmctl node new 5 (no member) behind node 1's agent: fenced at once (%.0f ms)",
	   (now() - t0) * 1000);
	good = pump(HBMD_REMOVE_DELAY_MS + 500, node5_gone);
	ok(good && logged_after("del 5", "op-add 5"), "and removed %.2f s later", now() - t0);

	/* 6. an operator fences node 2 itself */
	t0 = now();
	fk_operator(&nodes[1].fk, "fence-self", 0, true);
	good = pump(REACT_MS, node2_fenced);
	ok(good && nodes[1].fenced_by_other == 1 && fk_count(&nodes[1].fk, "fence-self") == 0,
	   "domain-set fenced on node 2 by another program: its agent is fenced (%.0f ms), without a call of its own",
	   (now() - t0) * 1000);

	/*
	 * 7. node 1 fenced by another program, its event lost, then an
	 * overrun: the dump reads the domain's fenced flag (the kernel's self
	 * node stays live, as the real one's does).
	 */
	fk_operator(fk, "fence-self", 0, false);
	pump(REACT_MS, NULL);
	ok(hbmd_agent_state(nodes[0].a) == HBMD_AGENT_RUNNING,
	   "node 1 fenced by another program, its event lost: the agent cannot know");
	t0 = now();
	fk_overrun(fk);
	good = pump(REACT_MS, node1_fenced);
	ok(good && nodes[0].fenced_by_other == 1 && fk_count(fk, "fence-self") == 0,
	   "then an overrun: the dump reads the domain's fenced flag, the agent is fenced (%.0f ms), without a call of its own",
	   (now() - t0) * 1000);

	for (i = 0, good = true; i < NR; i++) {
		if (nodes[i].fk.violations)
			printf("# node %u: %s\n", nodes[i].id, nodes[i].fk.violation);
		good = good && !nodes[i].fk.violations;
	}
	ok(good, "no fake kernel saw a call a kernel would refuse");
}

int main(void)
{
	int status, i;

	verbose = getenv("HBM_VERBOSE") != NULL;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (etcd_rig_begin("the kernel's events", &status))
		return status;
	test_kmonitor();
	for (i = 0; i < NR; i++) {
		if (nodes[i].a) {
			hbmd_agent_stop(nodes[i].a, true);
			hbmd_agent_free(nodes[i].a);
			hbm_config_free(&nodes[i].conf);
		}
	}
	etcd_stop();
	return tap_finish();
}
