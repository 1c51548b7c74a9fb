// SPDX-License-Identifier: GPL-2.0
/*
 * The membership scale experiment: see mscale.h.  One thread, one curl
 * multi (etcd_multi.c); every simulated node is a small state machine
 * driven by its transfers' callbacks and by a scan of the leases after
 * every wait.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base64.h"
#include "etcd.h"
#include "etcd_multi.h"
#include "lease.h"
#include "membership.h"
#include "mscale.h"

#define PREFIX		"/hbmpool"
#define ELOG		32
#define JOIN_TIMEOUT_S	600

enum nstate { N_WAIT, N_JOINING, N_RUN, N_DEAD, N_FENCED, N_FAILED };

struct node {
	struct sim *s;
	uint32_t id;
	enum nstate st;
	struct hbm_lease lease;
	bool leased;
	int step;			/* joining: 0 grant, 1 create, 2 range and watch */
	uint64_t retry_at;		/* of a failed grant or create */
	uint64_t incarnation;
	uint64_t sent;			/* the grant's */
	uint64_t last_ka_sent;		/* the last keepalive sent (or the grant) */
	struct hbm_emulti_xfer *ka, *req, *watch;
	struct hbm_members t;
	uint64_t watch_heard, resync_at;
	/* as the agent: keys under the domain prefix as of wrev, every event up to wrev applied */
	int64_t keys, wrev;
	uint64_t probe_heard;		/* watch_heard when its probe was sent */
	uint64_t up, down, up0, down0;
	bool full;
	bool first_range;		/* registered, waiting for its first range */
	double *seen;			/* per dead node: s after the kill, < 0: not yet */
	struct { int64_t rev; double t; } el[ELOG];	/* epochs after the kill */
	unsigned int nel;
};

struct sim {
	const struct mscale_opts *o;
	struct mscale_result *r;
	struct hbm_emulti *m;
	struct node *nodes;
	char mprefix[128], dprefix[128];
	uint64_t margin, retry, t0;
	unsigned int joining, next, full, registered, ranging;
	bool joined, killed;
	/* idle probes sent, answered (or failed), and their HTTP bytes */
	uint64_t probes_sent, probe_replies, probe_up, probe_down;
	double kill_t;
	int dead_of[HBM_MEMBER_MAX_ID + 1];	/* id -> index among the dead, -1 */
	uint32_t *dead;
	int64_t *del_rev;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void say(struct sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct sim *s, const char *fmt, ...)
{
	va_list ap;

	if (!s->o->log)
		return;
	fprintf(s->o->log, "# [%7.2f] ", (now_ms() - s->t0) / 1000.0);
	va_start(ap, fmt);
	vfprintf(s->o->log, fmt, ap);
	va_end(ap);
	fputc('\n', s->o->log);
	fflush(s->o->log);
}

static void node_stop(struct node *n, enum nstate st)
{
	struct sim *s = n->s;

	if (n->st == N_JOINING && n->step < 2)
		s->joining--;
	if (n->first_range && n->req)
		s->ranging--;
	n->first_range = false;
	n->st = st;
	hbm_emulti_cancel(s->m, n->ka);
	hbm_emulti_cancel(s->m, n->req);
	hbm_emulti_cancel(s->m, n->watch);
	n->ka = n->req = n->watch = NULL;
}

static void fail(struct node *n, const char *what, const char *why)
{
	say(n->s, "node %u: %s: %s", n->id, what, why);
	n->s->r->failed++;
	node_stop(n, N_FAILED);
}

static bool live(const struct node *n)
{
	return n->st == N_JOINING || n->st == N_RUN;
}

/* The table changed: the epoch log after the kill, the join's progress. */
static void table_changed(struct node *n, int64_t old_epoch)
{
	struct sim *s = n->s;

	if (s->killed && n->t.epoch != old_epoch && n->nel < ELOG) {
		n->el[n->nel].rev = n->t.epoch;
		n->el[n->nel].t = now_s() - s->kill_t;
		n->nel++;
	}
	if (!n->full && n->t.n == s->o->nodes) {
		n->full = true;
		s->full++;
	}
}

/* A member gone from n's table: a detection if it is a dead one. */
static void gone(struct node *n, uint32_t id, int64_t rev)
{
	struct sim *s = n->s;
	int d = id <= HBM_MEMBER_MAX_ID ? s->dead_of[id] : -1;

	if (d < 0) {
		s->r->other_leaves++;
		return;
	}
	if (n->seen[d] < 0)
		n->seen[d] = now_s() - s->kill_t;
	if (rev > s->del_rev[d])
		s->del_rev[d] = rev;
}

static int on_msg(const struct hbm_etcd_watch_msg *msg, void *arg)
{
	struct node *n = arg;
	size_t plen = strlen(n->s->mprefix), i;
	int64_t old = n->t.epoch;
	char err[256];
	int ret;

	n->watch_heard = now_ms();
	for (i = 0; i < msg->n; i++) {
		const struct hbm_etcd_event *ev = &msg->events[i];
		bool had;

		/* the agent's record of the domain, which its probe checks */
		if (ev->kv.mod_revision > n->wrev)
			n->wrev = ev->kv.mod_revision;
		if (ev->type == HBM_ETCD_EV_DELETE)
			n->keys--;
		else if (ev->kv.version == 1)
			n->keys++;	/* created */
		if (strncmp(ev->kv.key, n->s->mprefix, plen))
			continue;
		had = false;
		if (ev->type == HBM_ETCD_EV_DELETE) {
			char *end;
			unsigned long id = strtoul(ev->kv.key + plen, &end, 10);

			had = !*end && hbm_members_find(&n->t, (uint32_t)id);
			ret = hbm_members_apply(&n->t, n->s->mprefix, ev, err, sizeof(err));
			if (!ret && had)
				gone(n, (uint32_t)id, ev->kv.mod_revision);
		} else {
			ret = hbm_members_apply(&n->t, n->s->mprefix, ev, err, sizeof(err));
		}
		if (ret == -ENOMEM)
			return ret;
		if (ret)
			say(n->s, "node %u: membership: %s", n->id, err);
	}
	table_changed(n, old);
	return 0;
}

static void resync(struct node *n);

static void on_end(void *arg, int err, const char *why)
{
	struct node *n = arg;

	n->watch = NULL;
	if (!live(n))
		return;
	say(n->s, "node %u: the watch ended (%d: %s): reading the domain again", n->id, err, why);
	n->resync_at = now_ms() + 200;
}

static void range_done(void *arg, int err, long status, const char *reply, uint64_t up,
		       uint64_t down)
{
	struct node *n = arg;
	struct sim *s = n->s;
	struct hbm_etcd_kvs kvs;
	struct hbm_etcd_kv *mkv;
	struct hbm_members next;
	size_t i, k = 0, plen = strlen(s->mprefix);
	int64_t rev = 0, old = n->t.epoch;
	char why[256];
	char *body;
	int ret;

	n->req = NULL;
	n->up += up;
	n->down += down;
	if (n->first_range) {
		n->first_range = false;
		s->ranging--;
	}
	if (err || status != 200) {
		say(s, "node %u: range: %d, HTTP %ld", n->id, err, status);
		n->resync_at = now_ms() + 1000;
		return;
	}
	ret = hbm_etcd_reply_range(reply, &kvs, &rev, why, sizeof(why));
	if (ret) {
		fail(n, "range", why);
		return;
	}
	mkv = calloc(kvs.n + 1, sizeof(*mkv));
	if (!mkv) {
		hbm_etcd_kvs_free(&kvs);
		fail(n, "range", "out of memory");
		return;
	}
	for (i = 0; i < kvs.n; i++)
		if (!strncmp(kvs.kv[i].key, s->mprefix, plen))
			mkv[k++] = kvs.kv[i];	/* shallow: kvs owns the strings */
	n->keys = (int64_t)kvs.n;
	n->wrev = rev;
	ret = hbm_members_build(s->mprefix, mkv, k, &next);
	free(mkv);
	hbm_etcd_kvs_free(&kvs);
	if (ret) {
		fail(n, "range", "out of memory");
		return;
	}
	/* as the agent: a member gone since the last table left at most at rev */
	for (i = 0; i < n->t.n; i++) {
		if (!hbm_members_find(&next, n->t.m[i].id)) {
			if (next.epoch < rev)
				next.epoch = rev;
			if (s->killed)
				gone(n, n->t.m[i].id, 0);
		}
	}
	if (next.epoch < n->t.epoch)
		next.epoch = n->t.epoch;	/* never backwards */
	hbm_members_free(&n->t);
	n->t = next;
	table_changed(n, old);
	ret = hbm_etcd_body_watch(s->dprefix, true, rev + 1, &body);
	if (!ret)
		ret = hbm_emulti_watch(s->m, body, on_msg, on_end, n, &n->up, &n->down, &n->watch);
	if (ret) {
		say(s, "node %u: watch: %s", n->id, strerror(-ret));
		n->resync_at = now_ms() + 1000;
		return;
	}
	n->watch_heard = now_ms();
	if (n->st == N_JOINING)
		n->st = N_RUN;
}

static void resync(struct node *n)
{
	struct sim *s = n->s;
	char *body;
	int ret;

	n->resync_at = UINT64_MAX;
	if (s->joined)
		s->r->resyncs++;
	ret = hbm_etcd_body_range(s->dprefix, true, &body);
	if (!ret)
		ret = hbm_emulti_post(s->m, "/v3/kv/range", body, s->o->request_ms, range_done, n,
				      &n->req);
	if (ret)
		n->resync_at = now_ms() + 1000;
}

/* ---- the agent's probe of a quiet watch: etcd.c's hbm_etcd_body_probe() and reply ---- */

const char *mscale_idle_name(enum mscale_idle idle)
{
	static const char *const names[] = { "probe", "resync", "none" };

	return (unsigned int)idle < 3 ? names[idle] : "?";
}

/* The watch missed something, or the probe could not tell: read the domain. */
static void reread(struct node *n)
{
	hbm_emulti_cancel(n->s->m, n->watch);
	n->watch = NULL;
	n->resync_at = now_ms();
}

static void probe_done(void *arg, int err, long status, const char *reply, uint64_t up,
		       uint64_t down)
{
	struct node *n = arg;
	struct sim *s = n->s;
	int64_t count, max_mod;
	char why[256];
	int ret;

	n->req = NULL;
	n->up += up;
	n->down += down;
	s->probe_replies++;
	s->probe_up += up;
	s->probe_down += down;
	if (!n->watch)
		return;		/* it ended meanwhile: read again already */
	ret = err || status != 200 ? -EIO :
	      hbm_etcd_reply_probe(reply, &count, &max_mod, NULL, why, sizeof(why));
	if (ret) {
		/* as the agent: no answer, the domain is read again */
		if (err || status != 200)
			snprintf(why, sizeof(why), "%d, HTTP %ld", err, status);
		say(s, "node %u: probe: %s: reading the domain again", n->id, why);
		s->r->probe_failed++;
		reread(n);
		return;
	}
	s->r->probes++;
	if (!s->killed)
		s->r->quiet_probes++;
	/*
	 * The agent's probe blocks its loop; this one does not, and a watch
	 * message that arrived meanwhile shows the watch alive (and makes
	 * the comparison below stale): as good as an answer.
	 */
	if (n->watch_heard != n->probe_heard)
		return;
	if (count == n->keys && max_mod <= n->wrev) {
		n->watch_heard = now_ms();
		return;
	}
	say(s, "node %u: the watch missed changes (etcd has %" PRId64 " keys up to revision %" PRId64 ", the watch %" PRId64 " up to %" PRId64 "): reading the domain again",
	    n->id, count, max_mod, n->keys, n->wrev);
	s->r->probe_missed++;
	if (!s->killed)
		s->r->quiet_missed++;
	reread(n);
}

static void probe(struct node *n)
{
	struct sim *s = n->s;
	char *body;
	int ret;

	ret = hbm_etcd_body_probe(s->dprefix, true, &body);
	if (!ret)
		ret = hbm_emulti_post(s->m, "/v3/kv/range", body, s->o->request_ms, probe_done, n,
				      &n->req);
	if (ret) {
		say(s, "node %u: probe: %s: reading the domain again", n->id, strerror(-ret));
		s->r->probe_failed++;
		reread(n);
		return;
	}
	s->probes_sent++;
	n->probe_heard = n->watch_heard;
}

static void create_done(void *arg, int err, long status, const char *reply, uint64_t up,
			uint64_t down)
{
	struct node *n = arg;
	struct hbm_etcd_kvs ex;
	char why[256];
	bool created;
	int ret;

	n->req = NULL;
	n->up += up;
	n->down += down;
	if (err || status != 200) {
		/* as a daemon restarted by systemd would, a second later */
		say(n->s, "node %u: create: %d, HTTP %ld: again in 1 s", n->id, err, status);
		n->s->r->retries++;
		n->retry_at = now_ms() + 1000;
		return;
	}
	ret = hbm_etcd_reply_create(reply, &created, &ex, NULL, why, sizeof(why));
	/* a retried create that had been applied finds the key under its own lease */
	if (!ret && !created && ex.n == 1 && ex.kv[0].lease == n->lease.id)
		created = true;
	hbm_etcd_kvs_free(&ex);
	if (ret || !created) {
		fail(n, "create", ret ? why : "the key exists");
		return;
	}
	n->step = 2;
	n->first_range = true;
	n->s->registered++;
	n->s->joining--;
}

static void do_create(struct node *n)
{
	struct sim *s = n->s;
	struct hbm_member mb = {
		.id = n->id, .port = 7070, .incarnation = n->incarnation,
		.segment_bytes = 16ull << 30, .capacity = 16ull << 30,
	};
	char key[160], *val, *body;
	int ret;

	snprintf(mb.addr, sizeof(mb.addr), "10.%u.%u.%u", n->id >> 8, n->id & 255, 1);
	ret = hbm_member_key(key, sizeof(key), PREFIX, s->o->domain, n->id);
	if (!ret)
		ret = hbm_member_encode(&mb, &val);
	if (!ret) {
		ret = hbm_etcd_body_create(key, val, strlen(val), n->lease.id, &body);
		free(val);
	}
	if (!ret)
		ret = hbm_emulti_post(s->m, "/v3/kv/txn", body, s->o->request_ms, create_done, n,
				      &n->req);
	if (ret)
		fail(n, "create", strerror(-ret));
}

static void grant_done(void *arg, int err, long status, const char *reply, uint64_t up,
		       uint64_t down)
{
	struct node *n = arg;
	struct sim *s = n->s;
	int64_t id, ttl;
	char why[256];
	int ret;

	n->req = NULL;
	n->up += up;
	n->down += down;
	if (err || status != 200) {
		say(s, "node %u: grant: %d, HTTP %ld: again in 1 s", n->id, err, status);
		s->r->retries++;
		n->retry_at = now_ms() + 1000;
		return;
	}
	ret = hbm_etcd_reply_grant(reply, &id, &ttl, NULL, why, sizeof(why));
	if (!ret)
		ret = hbm_lease_granted(&n->lease, id, ttl, n->sent, s->margin, s->retry);
	if (ret) {
		fail(n, "grant", ret == -EPROTO ? why : strerror(-ret));
		return;
	}
	n->leased = true;
	n->last_ka_sent = n->sent;
	n->incarnation = ((uint64_t)rand() << 32 | (uint64_t)rand()) | 1;
	n->step = 1;
	do_create(n);
}

static void do_grant(struct node *n)
{
	struct sim *s = n->s;
	char *body;
	int ret;

	n->sent = now_ms();
	ret = hbm_etcd_body_grant(s->o->ttl_s, &body);
	if (!ret)
		ret = hbm_emulti_post(s->m, "/v3/lease/grant", body, s->o->request_ms, grant_done,
				      n, &n->req);
	if (ret)
		fail(n, "grant", strerror(-ret));
}

static void start_node(struct node *n)
{
	n->st = N_JOINING;
	n->s->joining++;
	do_grant(n);
}

static void ka_done(void *arg, int err, long status, const char *reply, uint64_t up,
		    uint64_t down)
{
	struct node *n = arg;
	char why[256];
	int64_t ttl = 0;
	int ret;

	n->ka = NULL;
	n->up += up;
	n->down += down;
	if (err || status != 200) {
		hbm_lease_failed(&n->lease, false, now_ms());
		say(n->s, "node %u: keepalive: %d, HTTP %ld", n->id, err, status);
		return;
	}
	ret = hbm_etcd_reply_keepalive(reply, n->lease.id, &ttl, NULL, why, sizeof(why));
	if (!ret)
		hbm_lease_renewed(&n->lease, ttl, now_ms());
	else
		hbm_lease_failed(&n->lease, ret == -ENOENT, now_ms());
	if (ret)
		say(n->s, "node %u: keepalive: %s", n->id, why);
}

/* lease.c's discipline, as the agent applies it. */
static void lease_tick(struct node *n, uint64_t now)
{
	struct sim *s = n->s;
	enum hbm_lease_action act = hbm_lease_tick(&n->lease, now);
	char *body;

	if (act == HBM_LEASE_RENEW) {
		if (now + s->o->request_ms >= n->lease.valid_until - n->lease.margin_ms) {
			hbm_lease_failed(&n->lease, false, now);
			return;
		}
		hbm_lease_sent(&n->lease, now);
		n->last_ka_sent = now;
		if (hbm_etcd_body_keepalive(n->lease.id, &body) ||
		    hbm_emulti_post(s->m, "/v3/lease/keepalive", body, s->o->request_ms, ka_done,
				    n, &n->ka))
			hbm_lease_failed(&n->lease, false, now);
	} else if (act == HBM_LEASE_FENCE) {
		say(s, "node %u: lease %" PRIx64 " not renewed in time: fenced", n->id,
		    n->lease.id);
		s->r->fenced++;
		node_stop(n, N_FENCED);
	}
}

static void scan(struct sim *s)
{
	uint64_t now = now_ms(), idle = 2ull * s->o->ttl_s * 1000;
	unsigned int i;

	while (s->next < s->o->nodes && s->joining < s->o->starting)
		start_node(&s->nodes[s->next++]);
	for (i = 0; i < s->o->nodes; i++) {
		struct node *n = &s->nodes[i];

		if (!live(n))
			continue;
		if (n->leased)
			lease_tick(n, now);
		if (!live(n))
			continue;
		if (n->step < 2) {
			if (!n->req && now >= n->retry_at)
				n->step ? do_create(n) : do_grant(n);
			continue;
		}
		if (n->watch && !n->req && now >= n->watch_heard + idle) {
			if (s->o->idle == MSCALE_IDLE_PROBE)
				probe(n);
			else if (s->o->idle == MSCALE_IDLE_RESYNC)
				reread(n);
		}
		if (n->first_range) {
			/*
			 * Every node registers before any reads the domain, as a
			 * domain booting at once would: the table comes from one
			 * range each, not from N watch events each.
			 */
			if (!n->req && s->registered + s->r->failed >= s->o->nodes &&
			    s->ranging < (s->o->ranging ? s->o->ranging : s->o->starting)) {
				s->ranging++;
				resync(n);
			}
			continue;
		}
		if (!n->watch && !n->req && now >= n->resync_at)
			resync(n);
	}
}

static double self_cpu(void);

static void loop_for(struct sim *s, double secs, bool (*until)(struct sim *s))
{
	double end = now_s() + secs, last = now_s();

	while (now_s() < end && !(until && until(s))) {
		double t1 = now_s(), c1 = self_cpu(), t2;

		hbm_emulti_run(s->m, 2);
		t2 = now_s();
		scan(s);
		if (now_s() - t1 > 0.5) {
			s->r->stalls++;
			if (now_s() - t1 > s->r->stall_max_s) {
				s->r->stall_max_s = now_s() - t1;
				s->r->stall_max_cpu_s = self_cpu() - c1;
			}
			say(s, "the loop stalled: %.0f ms in curl and callbacks, %.0f ms in the scan, %.0f ms on a CPU",
			    (t2 - t1) * 1000, (now_s() - t2) * 1000, (self_cpu() - c1) * 1000);
		}
		if (now_s() - last >= 5) {
			last = now_s();
			say(s, "%u running, %u joining, %u with every member, %u transfers",
			    s->next - s->joining, s->joining, s->full, hbm_emulti_active(s->m));
		}
	}
}

static bool all_full(struct sim *s)
{
	return s->full == s->o->nodes || s->r->failed || s->r->fenced;
}

static bool all_seen(struct sim *s)
{
	unsigned int i, d;

	for (i = 0; i < s->o->nodes; i++) {
		const struct node *n = &s->nodes[i];

		if (n->st != N_RUN)
			continue;
		for (d = 0; d < s->o->kill; d++)
			if (n->seen[d] < 0)
				return false;
	}
	return true;
}

struct snap {
	double t;
	double cpu, etcd_cpu;
	struct hbm_emulti_counts c;
	uint64_t probes, probe_up, probe_down;
};

static double self_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

/* etcd's user + system time from /proc, 0 if unknown. */
static double etcd_cpu(const struct sim *s)
{
	unsigned long ut = 0, st = 0;
	char path[64], buf[1024], *p;
	FILE *f;

	if (s->o->etcd_pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", s->o->etcd_pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	/* after the comm: state, then fields 4..13, then utime (14) and stime (15) */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut,
			 &st) != 2)
		return 0;
	return (double)(ut + st) / sysconf(_SC_CLK_TCK);
}

static void snap(struct sim *s, struct snap *sn)
{
	unsigned int i;

	sn->t = now_s();
	sn->cpu = self_cpu();
	sn->etcd_cpu = etcd_cpu(s);
	hbm_emulti_counts(s->m, &sn->c);
	sn->probes = s->probes_sent;
	sn->probe_up = s->probe_up;
	sn->probe_down = s->probe_down;
	for (i = 0; i < s->o->nodes; i++) {
		s->nodes[i].up0 = s->nodes[i].up;
		s->nodes[i].down0 = s->nodes[i].down;
	}
}

static void rates(struct sim *s, const struct snap *a, struct mscale_counts *c)
{
	struct hbm_emulti_counts b;
	double up = 0, down = 0;
	unsigned int i, k = 0;

	c->s = now_s() - a->t;
	c->cpu = (self_cpu() - a->cpu) / c->s;
	c->etcd_cpu = (etcd_cpu(s) - a->etcd_cpu) / c->s;
	hbm_emulti_counts(s->m, &b);
	c->rps = (b.requests - a->c.requests) / c->s;
	c->msgs = (b.watch_msgs - a->c.watch_msgs) / c->s;
	c->up_max = c->down_max = 0;
	for (i = 0; i < s->o->nodes; i++) {
		const struct node *n = &s->nodes[i];
		double u = (n->up - n->up0) / c->s, d = (n->down - n->down0) / c->s;

		if (n->st != N_RUN)
			continue;
		k++;
		up += u;
		down += d;
		if (u > c->up_max)
			c->up_max = u;
		if (d > c->down_max)
			c->down_max = d;
	}
	c->up = k ? up / k : 0;
	c->down = k ? down / k : 0;
	c->probes = (s->probes_sent - a->probes) / c->s;
	c->probe_up = k ? (s->probe_up - a->probe_up) / c->s / k : 0;
	c->probe_down = k ? (s->probe_down - a->probe_down) / c->s / k : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(const double *v, size_t n, double p)
{
	size_t i = (size_t)ceil(p * n);

	return v[i ? i - 1 : 0];
}

static void results(struct sim *s)
{
	struct mscale_result *r = s->r;
	unsigned int i, d, k = 0, nl = 0;
	double *det, *lag, first = INFINITY, last = -INFINITY;
	int64_t target = 0;

	det = calloc((size_t)s->o->nodes * s->o->kill + 1, sizeof(*det));
	lag = calloc((size_t)s->o->nodes * s->o->kill + 1, sizeof(*lag));
	if (!det || !lag) {
		snprintf(r->err, sizeof(r->err), "out of memory");
		goto out;
	}
	for (d = 0; d < s->o->kill; d++)
		if (s->del_rev[d] > target)
			target = s->del_rev[d];
	r->epoch_after = target;
	for (i = 0; i < s->o->nodes; i++) {
		const struct node *n = &s->nodes[i];
		double reach = -1;

		if (n->st != N_RUN)
			continue;
		r->survivors++;
		for (d = 0; d < s->o->kill; d++) {
			const struct node *dn = &s->nodes[s->dead[d]];
			/*
			 * The lease's proven end (lease.c: the last renewal
			 * answered, from when it was sent + TTL).  A keepalive
			 * in flight at the crash may have reached etcd and
			 * extended it further: lag is then an overestimate.
			 */
			double end = (dn->lease.valid_until - s->t0) / 1000.0;

			r->pairs++;
			if (n->seen[d] < 0) {
				r->pairs_missed++;
				continue;
			}
			det[k++] = n->seen[d];
			/* the lease's proven end, on the clock of s->kill_t */
			lag[nl++] = s->kill_t + n->seen[d] - (s->t0 / 1000.0 + end);
		}
		for (d = 0; d < n->nel; d++) {
			if (n->el[d].rev >= target) {
				reach = n->el[d].t;
				break;
			}
		}
		if (reach < 0 || !target) {
			r->not_agreed++;
			continue;
		}
		if (reach < first)
			first = reach;
		if (reach > last)
			last = reach;
	}
	if (k) {
		qsort(det, k, sizeof(*det), cmp_double);
		qsort(lag, nl, sizeof(*lag), cmp_double);
		r->det_min = det[0];
		r->det_med = pct(det, k, 0.5);
		r->det_p99 = pct(det, k, 0.99);
		r->det_max = det[k - 1];
		r->lag_min = lag[0];
		r->lag_max = lag[nl - 1];
	}
	if (last >= first) {
		r->first_at_s = first;
		r->last_at_s = last;
		r->agree_s = last - first;
	}
	if (s->probe_replies) {
		r->probe_up_each = (double)s->probe_up / s->probe_replies;
		r->probe_down_each = (double)s->probe_down / s->probe_replies;
	}
	r->done = true;
out:
	free(det);
	free(lag);
}

static void revoke_done(void *arg, int err, long status, const char *reply, uint64_t up,
			uint64_t down)
{
	(void)arg; (void)err; (void)status; (void)reply; (void)up; (void)down;
}

int mscale_run(const struct mscale_opts *o, struct mscale_result *r)
{
	struct sim sim = { .o = o, .r = r }, *s = &sim;
	struct snap steady, event, join;
	unsigned int i, d;
	int ret;

	memset(r, 0, sizeof(*r));
	r->nodes = o->nodes;
	if (!o->nodes || o->nodes > HBM_MEMBER_MAX_ID + 1 || o->kill >= o->nodes || !o->ttl_s ||
	    !o->starting || o->idle > MSCALE_IDLE_NONE) {
		snprintf(r->err, sizeof(r->err), "bad options");
		return -EINVAL;
	}
	s->t0 = now_ms();
	s->margin = 100 + o->ttl_s * 1000ull / 50;	/* the agent's */
	s->retry = o->ttl_s * 1000ull / 10;
	srand((unsigned int)s->t0);
	if (hbm_members_prefix(s->mprefix, sizeof(s->mprefix), PREFIX, o->domain) ||
	    snprintf(s->dprefix, sizeof(s->dprefix), "%s/%s/", PREFIX, o->domain) >=
	    (int)sizeof(s->dprefix)) {
		snprintf(r->err, sizeof(r->err), "domain name too long");
		return -EINVAL;
	}
	s->nodes = calloc(o->nodes, sizeof(*s->nodes));
	s->dead = calloc(o->kill + 1, sizeof(*s->dead));
	s->del_rev = calloc(o->kill + 1, sizeof(*s->del_rev));
	ret = hbm_emulti_open(o->endpoint, 1000, &s->m);
	if (!s->nodes || !s->dead || !s->del_rev || ret) {
		snprintf(r->err, sizeof(r->err), "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i <= HBM_MEMBER_MAX_ID; i++)
		s->dead_of[i] = -1;
	for (i = 0; i < o->nodes; i++) {
		struct node *n = &s->nodes[i];

		n->s = s;
		n->id = i;
		n->resync_at = UINT64_MAX;
		n->seen = malloc((o->kill + 1) * sizeof(*n->seen));
		if (!n->seen) {
			ret = -ENOMEM;
			goto out;
		}
		for (d = 0; d <= o->kill; d++)
			n->seen[d] = -1;
	}

	/* the join */
	join.t = now_s();
	join.cpu = self_cpu();
	join.etcd_cpu = etcd_cpu(s);
	say(s, "%u nodes join, %u at a time, lease TTL %u s, idle watches: %s", o->nodes,
	    o->starting, o->ttl_s, mscale_idle_name(o->idle));
	loop_for(s, JOIN_TIMEOUT_S, all_full);
	if (s->full != o->nodes) {
		snprintf(r->err, sizeof(r->err), "the join did not complete: %u of %u nodes see every node (%u failed, %u fenced)",
			 s->full, o->nodes, r->failed, r->fenced);
		ret = -ETIMEDOUT;
		goto out;
	}
	r->join_s = (now_ms() - s->t0) / 1000.0;
	r->join_cpu = self_cpu() - join.cpu;
	r->join_etcd_cpu = etcd_cpu(s) - join.etcd_cpu;
	s->joined = true;
	say(s, "every node sees every node after %.2f s", r->join_s);

	/* the steady state */
	snap(s, &steady);
	loop_for(s, o->steady_s, NULL);
	rates(s, &steady, &r->steady);
	r->epoch_before = s->nodes[0].t.epoch;
	r->quiet_resyncs = r->resyncs;

	/* the crash */
	for (d = 0; d < o->kill; d++) {
		s->dead[d] = d * o->nodes / o->kill + o->nodes / o->kill / 2;
		s->dead_of[s->dead[d]] = (int)d;
	}
	for (i = 0; i < o->nodes; i++)
		if (s->nodes[i].watch)
			r->watch_streams++;
	snap(s, &event);
	s->kill_t = now_s();
	s->killed = true;
	for (d = 0; d < o->kill; d++)
		node_stop(&s->nodes[s->dead[d]], N_DEAD);
	r->killed = o->kill;
	say(s, "%u nodes killed, epoch %" PRId64 ", %u watch streams", o->kill, r->epoch_before,
	    r->watch_streams);
	loop_for(s, 3.0 * o->ttl_s + 10, all_seen);
	rates(s, &event, &r->event);
	results(s);
	say(s, "every survivor saw every dead node go after %.2f s", now_s() - s->kill_t);
	ret = 0;
out:
	if (s->m) {
		/* leave etcd clean for the next run: the leases go, and their keys */
		for (i = 0; s->nodes && i < o->nodes; i++) {
			struct node *n = &s->nodes[i];
			char *body;

			if (n->st == N_DEAD || !n->leased)
				continue;
			node_stop(n, N_FAILED);
			if (!hbm_etcd_body_keepalive(n->lease.id, &body))
				hbm_emulti_post(s->m, "/v3/lease/revoke", body, 5000, revoke_done,
						n, NULL);
		}
		for (i = 0; i < 5000 && hbm_emulti_active(s->m); i++)
			hbm_emulti_run(s->m, 2);
		hbm_emulti_close(s->m);
	}
	for (i = 0; s->nodes && i < o->nodes; i++) {
		hbm_members_free(&s->nodes[i].t);
		free(s->nodes[i].seen);
	}
	free(s->nodes);
	free(s->dead);
	free(s->del_rev);
	return ret;
}

void mscale_print_header(FILE *f)
{
	fprintf(f, "%5s %4s %7s | %6s %6s %6s %6s %6s | %6s %6s | %7s %7s %8s | %9s %9s %9s %9s | %s\n",
		"nodes", "ttl", "join_s", "det_mn", "det_md", "det_99", "det_mx", "lagmax",
		"agr_s", "miss", "rps_st", "rps_ev", "msg/s_ev", "up_st", "down_st", "up_ev",
		"down_ev", "fenced/other/resync/probe");
}

void mscale_print(FILE *f, const struct mscale_result *r, const struct mscale_opts *o)
{
	if (!r->done) {
		fprintf(f, "%5u %4u   failed: %s\n", o->nodes, o->ttl_s, r->err);
		return;
	}
	fprintf(f, "%5u %4u %7.2f | %6.2f %6.2f %6.2f %6.2f %6.2f | %6.3f %6u | %7.1f %7.1f %8.1f | %9.1f %9.1f %9.1f %9.1f | %u/%u/%u/%u\n",
		r->nodes, o->ttl_s, r->join_s, r->det_min, r->det_med, r->det_p99, r->det_max,
		r->lag_max, r->agree_s, r->pairs_missed + r->not_agreed, r->steady.rps,
		r->event.rps, r->event.msgs, r->steady.up, r->steady.down, r->event.up,
		r->event.down, r->fenced, r->other_leaves, r->resyncs, r->probes);
}
