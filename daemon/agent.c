// SPDX-License-Identifier: GPL-2.0
/*
 * hbmpoold's per-node state machine: see agent.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "agent.h"
#include "drain_agent.h"
#include "replication_agent.h"
#include "rebalance_agent.h"
#include "etcd.h"
#include "etcd_async.h"
#include "etcd_writer.h"
#include "health.h"
#include "links.h"
#include "membership.h"
#include "shm_discover.h"

#define KEY_MAX		256
#define NR_IDS		(HBM_MEMBER_MAX_ID + 1)
/* Where peers' ivshmem devices are looked for (shm_discover.h). */
#define SHM_SYSFS	"/sys"

/* The kernel's view of a peer, as this agent left it. */
enum kstate {
	K_ABSENT,
	K_PRESENT,
	K_FENCED,		/* declared dead, node-del due at remove_due[] */
};

/* Operations a kernel may not have yet (reported once). */
enum kop {
	KOP_NODE_FENCE,
	KOP_SET_EPOCH,
	KOP_FENCE_SELF,
	NR_KOPS,
};

static const char *const kop_names[NR_KOPS] = {
	"declaring a node fenced (node-set state fenced)",
	"the membership epoch (domain-set epoch)",
	"fencing this node (domain-set fenced)",
};

struct hbmd_agent {
	const struct hbm_config *conf;
	struct hbmd_kernel k;
	hbmd_log_fn *log_fn;
	void *log_arg;
	enum hbmd_agent_state state;

	struct hbm_etcd *etcd;
	uint64_t call_bound_ms;		/* the longest a synchronous etcd call takes */
	struct hbm_lease lease;
	uint64_t incarnation;
	char members_prefix[KEY_MAX], member_key[KEY_MAX], leader_key[KEY_MAX];
	char incarnation_key[KEY_MAX];
	char domain_prefix[KEY_MAX];

	struct hbm_members members;	/* as applied to the kernel */
	int64_t epoch_pushed;
	bool epoch_failed;
	enum kstate kstate[NR_IDS];
	uint64_t remove_due[NR_IDS];	/* K_FENCED: when to node-del */
	/* K_PRESENT: the distance and link type it has from us, 0: not known */
	uint32_t kdist[NR_IDS];
	int klink[NR_IDS];
	bool kshm[NR_IDS];		/* K_PRESENT: its transport is shm (a scale-up link) */
	bool place_unsupported;		/* the ops have no node_place (said) */
	/* drains: PREFIX/DOMAIN/drains/ID in etcd, and what each kernel node has */
	char drains_prefix[KEY_MAX];
	bool drain[NR_IDS];		/* a key for it in etcd (member or not) */
	int8_t kdrain[NR_IDS];		/* K_PRESENT: its draining in the kernel, -1: not known */
	bool drain_unsupported;		/* no node_drain, or the kernel lacks it (said) */
	struct hbmd_drainer *drainer;	/* this node's chunk moves, the members' progress */
	struct hbmd_rebalancer *rebalancer;	/* this node's moves after a join */
	/* replication: this node's summary, every member's report (replication.h) */
	char repl_prefix[KEY_MAX], repl_key[KEY_MAX];
	struct hbmd_replicator *repl;
	struct hbm_repl_view repl_view;
	bool bad_repl;			/* a bad replication report was said */
	char rebalance_key[KEY_MAX];	/* PREFIX/DOMAIN/rebalance: the leader's request */
	bool table_taken;		/* a first membership table was taken */
	bool rebalance_due;		/* the leader puts the rebalance key */
	uint32_t rebalance_node;	/* the member that joined */
	bool bad_report;		/* a bad progress value was said */
	/* hbmd_agent_leave(): a drain of this node, then leaving */
	bool leaving, leave_seen, left;
	uint64_t leave_nag_at;		/* leave_waiting()'s next line, 0: not armed */
	bool add_failed;		/* members still to add (or place) in the kernel */
	uint64_t add_retry_at;
	unsigned int unsupported;	/* 1 << enum kop, reported */

	/*
	 * The steady state's etcd requests (etcd_async.h), serviced by the
	 * loop like the watch: one of each in flight at most; the keys
	 * written again and again (links, drain progress, the rebalance
	 * request) through the writer, one write in flight per key.
	 */
	struct hbm_etcd_async *as;
	struct hbm_ewriter *ew;
	struct hbm_etcd_req *renew_req, *elect_req, *resync_req, *probe_req;
	bool elect_again;		/* the leader key was deleted during an election */
	const struct hbm_etcd_awatch *probe_watch;	/* the watch probe_req checks */
	bool link_stale[NR_IDS];	/* a link's key whose deletion failed: again */
	struct hbm_drain_progress progress_sent[NR_IDS];	/* the put in flight */
	uint32_t rebalance_gen;		/* a rebalance request more */

	struct hbm_etcd_awatch *watch;
	bool in_watch;			/* in its callback: it cannot be freed now */
	int64_t watch_rev;		/* every event up to it applied */
	int64_t domain_keys;		/* keys under domain_prefix as of watch_rev */
	uint64_t watch_deadline;	/* curl's timeout, UINT64_MAX: none */
	uint64_t watch_heard;		/* its last message */
	uint64_t resync_at;		/* range + new watch due, UINT64_MAX: none */

	bool leader;
	struct hbm_leader cur;		/* the leader as last seen */
	bool cur_known;
	uint64_t elect_at;		/* an election due, UINT64_MAX: none */

	/* link health (health.h) and the domain's link matrix (links.h) */
	struct hbm_health_conf hconf;
	struct hbm_link_health *lh[NR_IDS];	/* this node's link to each peer */
	uint64_t health_at;		/* the next sample, UINT64_MAX: none */
	bool links_failed;		/* reading the kernel's links failed (said) */
	char links_prefix[KEY_MAX];
	struct hbm_links links;		/* every node's published links */

	/* the kernel's events (its monitor group), kernel.h */
	int kev_fd;			/* -1: none */
	bool kev_failed;		/* reading them failed (said) */
	uint64_t kdump_at;		/* the nodes read again, UINT64_MAX: not due */
	unsigned int overruns;		/* events lost: said once */

	char status[256];
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void alog(struct hbmd_agent *a, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void alog(struct hbmd_agent *a, int level, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (a->log_fn)
		a->log_fn(a->log_arg, level, buf);
}

static void set_status(struct hbmd_agent *a)
{
	if (a->state == HBMD_AGENT_FENCED)
		return;		/* the reason stays */
	snprintf(a->status, sizeof(a->status), "%s: node %u, %zu members, epoch %lld, %s",
		 a->state == HBMD_AGENT_RUNNING ? "member" : "stopped", a->conf->node_id,
		 a->members.n, (long long)a->members.epoch,
		 a->leader ? "leader" : a->cur_known ? "follower" : "no leader");
}

/*
 * A kernel operation's result: -EOPNOTSUPP is reported once per operation
 * and taken as done; 0 otherwise, or the error.
 */
static int kresult(struct hbmd_agent *a, enum kop op, int ret, const char *err)
{
	if (ret != -EOPNOTSUPP)
		return ret;
	if (!(a->unsupported & (1u << op))) {
		a->unsupported |= 1u << op;
		alog(a, LOG_WARNING,
		     "the kernel does not support %s yet (issue 9's kernel side): %s; going on without it",
		     kop_names[op], err);
	}
	return 0;
}

/* ---- etcd requests in flight ---- */

/* What a keyed write was (etcd_writer.h's tag): kind, then an id and a value. */
enum { EW_LINK = 1, EW_LINK_DEL, EW_PROGRESS, EW_PROGRESS_DEL, EW_REBALANCE, EW_REPL };
#define EW_TAG(kind, id, x)	((uint64_t)(kind) << 56 | (uint64_t)(x) << 24 | (uint64_t)(id))
#define EW_KIND(tag)		((unsigned int)((tag) >> 56))
#define EW_ID(tag)		((uint32_t)((tag) & 0xffffff))
#define EW_X(tag)		((uint32_t)(((tag) >> 24) & 0xffffffff))

/*
 * Every request in flight dropped (fenced, stopped): no callback follows,
 * so nothing a late answer says is taken.
 */
static void etcd_cancel_all(struct hbmd_agent *a)
{
	hbm_ew_cancel_all(a->ew);
	if (a->as)
		hbm_etcd_async_cancel_all(a->as);
	a->renew_req = a->elect_req = a->resync_req = a->probe_req = NULL;
}

/* ---- fencing ---- */

static void watch_stop(struct hbmd_agent *a)
{
	if (a->in_watch)
		return;		/* watch_poke() stops it on the way out */
	if (a->watch)
		hbm_etcd_awatch_stop(a->watch);
	a->watch = NULL;
	a->watch_deadline = UINT64_MAX;
	a->resync_at = UINT64_MAX;
}

/*
 * Fence this node: final; the agent acts no more.  in_kernel: the kernel
 * has it fenced already (someone else did it): no call.
 */
static void fence_as(struct hbmd_agent *a, const char *why, bool in_kernel)
{
	char err[256] = "";
	int ret;

	if (a->state == HBMD_AGENT_FENCED)
		return;
	a->state = HBMD_AGENT_FENCED;
	a->lease.state = HBM_LEASE_FENCED;
	a->leader = false;
	watch_stop(a);
	etcd_cancel_all(a);
	ret = in_kernel ? 0 :
	      kresult(a, KOP_FENCE_SELF, a->k.ops->fence_self(a->k.ctx, err, sizeof(err)), err);
	if (ret)
		alog(a, LOG_CRIT, "fencing this node in the kernel failed: %s", err);
	alog(a, LOG_ERR, "node %u fenced: %s; it rejoins only with a new segment (incarnation)",
	     a->conf->node_id, why);
	snprintf(a->status, sizeof(a->status), "fenced: %s", why);
}

static void fence(struct hbmd_agent *a, const char *why)
{
	fence_as(a, why, false);
}

/* ---- the kernel's nodes ---- */

/* Node id is no longer in the kernel: what the agent knew of it goes. */
static void kforget(struct hbmd_agent *a, uint32_t id)
{
	a->kstate[id] = K_ABSENT;
	a->remove_due[id] = 0;
	a->kdist[id] = 0;
	a->klink[id] = 0;
	a->kdrain[id] = 0;
	a->kshm[id] = false;
}

static void kremove(struct hbmd_agent *a, uint32_t id)
{
	char err[256] = "";
	int ret = a->k.ops->node_remove(a->k.ctx, id, err, sizeof(err));

	if (!ret || ret == -ENOENT) {
		kforget(a, id);
		alog(a, LOG_INFO, "node %u removed from the kernel", id);
		return;
	}
	alog(a, LOG_WARNING, "%s; trying again in %d ms", err, HBMD_RETRY_MS);
	a->remove_due[id] = now_ms() + HBMD_RETRY_MS;
}

static void kleave(struct hbmd_agent *a, uint32_t id, const char *why)
{
	char err[256] = "";
	int ret;

	if (a->kstate[id] == K_ABSENT)
		return;
	if (a->kstate[id] == K_PRESENT) {
		ret = a->k.ops->node_fence(a->k.ctx, id, err, sizeof(err));
		ret = kresult(a, KOP_NODE_FENCE, ret, err);
		if (ret)
			alog(a, LOG_ERR, "node %u: %s; removing it anyway", id, err);
		a->kstate[id] = K_FENCED;
		a->remove_due[id] = now_ms() + HBMD_REMOVE_DELAY_MS;
		alog(a, LOG_NOTICE, "node %u %s: fenced in the kernel, removed in %d ms", id, why,
		     HBMD_REMOVE_DELAY_MS);
	}
}

/*
 * A peer's distance and link type: its location relative to this node's
 * (topology.h), but a peer reached through transport shm is on a
 * load/store fabric: scale-up, whatever the locations say.
 */
static enum hbm_relation peer_place(const struct hbmd_agent *a, const struct hbm_member *m,
				    bool shm, uint32_t *dist, int *link)
{
	enum hbm_relation r = hbm_topology_place(&a->conf->loc, &m->loc, &a->conf->dist, dist,
						 link);

	if (shm)
		*link = HBM_LINK_SCALEUP;
	return r;
}

/*
 * A member in the kernel gets the distance and link type of its location
 * relative to this node's (topology.h), if it has others: its location
 * changed, the [distance] table did, or the agent does not know what the
 * kernel has (a node added before this daemon started).
 */
static void kplace(struct hbmd_agent *a, const struct hbm_member *m)
{
	enum hbm_relation r;
	char err[256] = "";
	uint32_t dist;
	int link, ret;

	if (m->id == a->conf->node_id || a->kstate[m->id] != K_PRESENT)
		return;
	r = peer_place(a, m, a->kshm[m->id], &dist, &link);
	if (a->kdist[m->id] == dist && a->klink[m->id] == link)
		return;
	if (!a->k.ops->node_place) {
		if (!a->place_unsupported)
			alog(a, LOG_WARNING,
			     "node %u: cannot change a node's distance and link type in this kernel interface: it keeps them until it joins again",
			     m->id);
		a->place_unsupported = true;
		return;
	}
	ret = a->k.ops->node_place(a->k.ctx, m->id, dist, link, err, sizeof(err));
	if (ret) {
		alog(a, LOG_WARNING, "node %u: distance %u, %s link: %s; trying again in %d ms",
		     m->id, dist, hbm_link_type_name(link), err, HBMD_RETRY_MS);
		a->add_failed = true;
		a->add_retry_at = now_ms() + HBMD_RETRY_MS;
		return;
	}
	alog(a, LOG_NOTICE, "node %u: distance %u, %s link (%s%s)", m->id, dist,
	     hbm_link_type_name(link), r == HBM_REL_OTHER ? "location other or not known" : "same ",
	     r == HBM_REL_OTHER ? "" : hbm_relation_name(r));
	a->kdist[m->id] = dist;
	a->klink[m->id] = link;
}

/*
 * A peer in the kernel gets the draining of its key in etcd (a drain
 * today only stops new chunks: moving the chunks placed on it needs the
 * kernel's chunk migration).  Not this node: the kernel refuses draining
 * on its own entry; the other nodes' kernels stop placing on it.
 */
static void kdrain_sync(struct hbmd_agent *a, uint32_t id)
{
	char err[256] = "";
	bool want = a->drain[id];
	int ret;

	if (id == a->conf->node_id || a->kstate[id] != K_PRESENT || a->kdrain[id] == want ||
	    a->drain_unsupported)
		return;
	ret = a->k.ops->node_drain ? a->k.ops->node_drain(a->k.ctx, id, want, err, sizeof(err)) :
				     -EOPNOTSUPP;
	if (ret == -EOPNOTSUPP) {
		alog(a, LOG_WARNING,
		     "node %u: this kernel does not support draining (node-set draining): drains are not applied here",
		     id);
		a->drain_unsupported = true;
		return;
	}
	if (ret) {
		alog(a, LOG_WARNING, "node %u: %s: %s; trying again in %d ms", id,
		     want ? "draining" : "ending its drain", err, HBMD_RETRY_MS);
		a->add_failed = true;
		a->add_retry_at = now_ms() + HBMD_RETRY_MS;
		return;
	}
	a->kdrain[id] = want;
	alog(a, LOG_NOTICE, want ? "node %u: draining in the kernel (it takes no new chunks)" :
				   "node %u: no longer draining in the kernel (it takes new chunks)", id);
}

/*
 * [placement] full_pct and avoid_degraded into the kernel's placement (its
 * params full-pct and avoid-degraded): a nearly full node, and one whose
 * link is degraded, take new chunks only when no other node has room.
 */
static int kplacement_params(struct hbmd_agent *a)
{
	char err[256];
	int ret;

	if (!a->k.ops->placement_params)
		return 0;
	ret = a->k.ops->placement_params(a->k.ctx, a->conf->full_pct, a->conf->avoid_degraded,
					 err, sizeof(err));
	if (ret)
		alog(a, LOG_ERR, "setting placement's full-pct %u and avoid-degraded %d: %s",
		     a->conf->full_pct, a->conf->avoid_degraded, err);
	else
		alog(a, LOG_DEBUG, "placement: full-pct %u, avoid-degraded %d", a->conf->full_pct,
		     a->conf->avoid_degraded);
	return ret;
}

/*
 * A member in the kernel gets the failure domain its value names (0:
 * none): it named another one, or the node was in the kernel before it
 * joined (added with what: not known).  One node-set; a refusal is said
 * and left (the kernel keeps the old one until the node joins again).
 */
static void kfdomain(struct hbmd_agent *a, const struct hbm_member *m)
{
	char err[256] = "";
	int ret;

	if (m->id == a->conf->node_id || a->kstate[m->id] != K_PRESENT)
		return;
	if (!a->k.ops->node_failure_domain) {
		alog(a, LOG_WARNING,
		     "node %u: cannot set a node's failure domain in this kernel interface: it keeps the one it was added with",
		     m->id);
		return;
	}
	ret = a->k.ops->node_failure_domain(a->k.ctx, m->id, m->failure_domain, err,
					    sizeof(err));
	if (ret)
		alog(a, LOG_WARNING,
		     "node %u: failure domain %u: %s; the kernel keeps its old one until the node joins again",
		     m->id, m->failure_domain, err);
	else
		alog(a, LOG_NOTICE, "node %u: failure domain %u%s", m->id, m->failure_domain,
		     m->failure_domain ? "" : " (none)");
}

/*
 * The ivshmem device here that holds m's segment, into dev ("" none), if
 * [shm] discover: looked for at each join, so that a peer whose device
 * header was not there when it joined is found when it joins again (a
 * new incarnation); until then it stays on tcp.
 */
static void shm_lookup(struct hbmd_agent *a, const struct hbm_member *m, char *dev, size_t len)
{
	const struct hbmd_shm_want w = {
		.domain = a->conf->domain, .node_id = m->id, .incarnation = m->incarnation,
		.size = m->segment_bytes,
	};
	char seen[512];
	int ret;

	dev[0] = '\0';
	if (!a->conf->shm_discover)
		return;
	ret = hbmd_shm_find(SHM_SYSFS, &w, dev, len, seen, sizeof(seen));
	if (ret < 0)
		alog(a, LOG_WARNING, "node %u: no shm: listing %s/bus/pci/devices: %s", m->id,
		     SHM_SYSFS, strerror(-ret));
	else if (*seen)
		alog(a, LOG_INFO, "node %u: %s; ivshmem devices here: %s", m->id,
		     ret ? "its segment's device found" : "no device holds its segment", seen);
}

static int kjoin(struct hbmd_agent *a, const struct hbm_member *m)
{
	struct hbmd_kernel_peer p = {
		.id = m->id, .addr = m->addr, .port = m->port,
		.failure_domain = m->failure_domain,
		.capacity = m->segment_bytes < HBMD_PEER_CAPACITY_MAX ? m->segment_bytes :
			    HBMD_PEER_CAPACITY_MAX,
	};
	char err[256] = "", dev[HBM_CONF_PCI_MAX + 1];
	enum hbm_relation r;
	bool existed = false;
	int ret;

	if (a->kstate[m->id] == K_FENCED)
		kremove(a, m->id);	/* the old incarnation goes first */
	if (a->kstate[m->id] == K_PRESENT)
		return 0;
	if (a->kstate[m->id] == K_FENCED) {	/* not removed yet: later */
		a->add_failed = true;
		a->add_retry_at = now_ms() + HBMD_RETRY_MS;
		return -EBUSY;
	}
	shm_lookup(a, m, dev, sizeof(dev));
	p.device = *dev ? dev : NULL;
	r = peer_place(a, m, p.device, &p.distance, &p.link_type);
	ret = a->k.ops->node_add(a->k.ctx, &p, err, sizeof(err));
	if (ret && ret != -EEXIST && p.device) {
		alog(a, LOG_WARNING, "node %u: the kernel refuses transport shm on %s (%s): tcp instead",
		     m->id, dev, err);
		p.device = NULL;
		r = peer_place(a, m, false, &p.distance, &p.link_type);
		ret = a->k.ops->node_add(a->k.ctx, &p, err, sizeof(err));
	}
	if (ret == -EEXIST) {
		alog(a, LOG_WARNING, "node %u was in the kernel already (%s): kept", m->id, err);
		existed = true;
		ret = 0;
	}
	if (ret) {
		alog(a, LOG_ERR, "node %u joined but cannot be added: %s; trying again in %d ms",
		     m->id, err, HBMD_RETRY_MS);
		a->add_failed = true;
		a->add_retry_at = now_ms() + HBMD_RETRY_MS;
		return ret;
	}
	a->kstate[m->id] = K_PRESENT;
	a->kdist[m->id] = existed ? 0 : p.distance;
	a->klink[m->id] = existed ? 0 : p.link_type;
	a->kdrain[m->id] = existed ? -1 : 0;
	a->kshm[m->id] = !existed && p.device;
	alog(a, LOG_NOTICE,
	     "node %u joined: %s port %u, %llu bytes, incarnation %llu; distance %u, %s link (%s%s); transport %s%s",
	     m->id, m->addr, m->port, (unsigned long long)m->segment_bytes,
	     (unsigned long long)m->incarnation, p.distance, hbm_link_type_name(p.link_type),
	     p.device ? "shm" : r == HBM_REL_OTHER ? "location other or not known" : "same ",
	     p.device ? "" : r == HBM_REL_OTHER ? "" : hbm_relation_name(r),
	     existed ? "as the kernel has it" : p.device ? "shm on " : "tcp",
	     !existed && p.device ? dev : "");
	if (existed) {
		kplace(a, m);	/* what it was added with is not known */
		if (m->failure_domain)
			kfdomain(a, m);
	}
	kdrain_sync(a, m->id);	/* node-new has no draining: a drained node gets it now */
	return 0;
}

static void push_epoch(struct hbmd_agent *a)
{
	char err[256] = "";
	int ret;

	if (a->members.epoch <= a->epoch_pushed)
		return;
	ret = a->k.ops->set_epoch(a->k.ctx, (uint64_t)a->members.epoch, err, sizeof(err));
	ret = kresult(a, KOP_SET_EPOCH, ret, err);
	if (ret) {
		if (!a->epoch_failed)
			alog(a, LOG_ERR, "epoch %lld: %s; trying again", (long long)a->members.epoch,
			     err);
		a->epoch_failed = true;
		return;
	}
	a->epoch_failed = false;
	a->epoch_pushed = a->members.epoch;
	alog(a, LOG_INFO, "epoch %lld", (long long)a->epoch_pushed);
}

/*
 * Members not in the kernel yet (a failed add): again; those in it whose
 * distance or link type is not what their location gives (a failed
 * node-set, or added before this daemon started): set.
 */
static void retry_adds(struct hbmd_agent *a)
{
	size_t i;

	a->add_failed = false;
	for (i = 0; i < a->members.n; i++) {
		const struct hbm_member *m = &a->members.m[i];

		if (m->id == a->conf->node_id)
			continue;
		if (a->kstate[m->id] != K_PRESENT) {
			kjoin(a, m);
		} else {
			kplace(a, m);
			kdrain_sync(a, m->id);
		}
	}
}

/* The events that took the table from old to new, applied to the kernel. */
static void apply_events(struct hbmd_agent *a, const struct hbm_member_event *ev, size_t n)
{
	char why[128];
	size_t i;

	for (i = 0; i < n && a->state == HBMD_AGENT_RUNNING; i++) {
		const struct hbm_member_event *e = &ev[i];

		if (e->id == a->conf->node_id) {
			if (e->type == HBM_MEMBER_LEAVE) {
				fence(a, "this node's key was deleted from etcd");
			} else if (e->new.incarnation != a->incarnation) {
				snprintf(why, sizeof(why),
					 "this node's key holds incarnation %llu, not ours (%llu): another daemon with id %u?",
					 (unsigned long long)e->new.incarnation,
					 (unsigned long long)a->incarnation, e->id);
				fence(a, why);
			}
			continue;
		}
		/* a join after this daemon's first table: the leader asks for a rebalance */
		if (a->table_taken && (e->type == HBM_MEMBER_JOIN ||
				       (e->type == HBM_MEMBER_CHANGE &&
					(e->changed & HBM_MCH_INCARNATION)))) {
			a->rebalance_due = true;
			a->rebalance_node = e->id;
			a->rebalance_gen++;
		}
		switch (e->type) {
		case HBM_MEMBER_JOIN:
			kjoin(a, &e->new);
			break;
		case HBM_MEMBER_LEAVE:
			kleave(a, e->id, "left");
			break;
		case HBM_MEMBER_CHANGE:
			if (e->changed & (HBM_MCH_ADDR | HBM_MCH_INCARNATION)) {
				kleave(a, e->id, e->changed & HBM_MCH_INCARNATION ?
				       "came back with a new incarnation" : "moved");
				kjoin(a, &e->new);
			} else {
				if (e->changed & HBM_MCH_LOCATION)
					kplace(a, &e->new);
				if (e->changed & HBM_MCH_FAILURE_DOMAIN)
					kfdomain(a, &e->new);
				if (e->changed & HBM_MCH_CAPACITY)
					alog(a, LOG_DEBUG, "node %u: capacity %llu", e->id,
					     (unsigned long long)e->new.capacity);
			}
			break;
		}
	}
}

/* Make next the table: apply the difference to the kernel; next is taken. */
static int take_table(struct hbmd_agent *a, struct hbm_members *next)
{
	struct hbm_member_event *ev = NULL;
	size_t n = 0;
	int ret;

	if (next->epoch < a->members.epoch)
		next->epoch = a->members.epoch;	/* never backwards (a resync) */
	ret = hbm_members_diff(&a->members, next, &ev, &n);
	if (ret) {
		hbm_members_free(next);
		alog(a, LOG_ERR, "membership: %s", strerror(-ret));
		return ret;
	}
	hbm_members_free(&a->members);
	a->members = *next;
	memset(next, 0, sizeof(*next));
	apply_events(a, ev, n);
	free(ev);
	a->table_taken = true;
	if (a->state == HBMD_AGENT_RUNNING)
		push_epoch(a);
	set_status(a);
	return 0;
}

/* ---- link health ---- */

static uint64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static bool can_start(const struct hbmd_agent *a);
static void repl_leader_says(struct hbmd_agent *a);

/*
 * This node's link to peer to, into etcd under the lease: a write of the
 * writer (after the one in flight, if any); published once it succeeded
 * (ew_done()).
 */
static void link_publish(struct hbmd_agent *a, uint32_t to, struct hbm_link_health *h)
{
	uint64_t now = now_ms(), wall = wall_ms(), age = now - h->changed_ms;
	struct hbm_link l = {
		.from = a->conf->node_id, .to = to, .state = h->state,
		.rtt_us = h->last.rtt_ns / 1000, .error_pct = h->error_pct,
		.changes = h->changes, .since_ms = wall > age ? wall - age : 0,
	};
	char key[KEY_MAX], *val = NULL;
	int ret;

	if (!can_start(a))
		return;		/* at the next sample */
	ret = hbm_link_key(key, sizeof(key), a->conf->etcd_prefix, a->conf->domain, l.from, to);
	ret = ret ? ret : hbm_link_encode(&l, &val);
	ret = ret ? ret : hbm_ew_put(a->ew, key, val, strlen(val), a->lease.id,
				     EW_TAG(EW_LINK, to, h->state));
	free(val);
	if (ret)
		alog(a, LOG_WARNING, "publishing link %u -> %u: %s", l.from, to, strerror(-ret));
}

/* Delete this node's link to peer to from etcd (after a put in flight). */
static void link_unpublish(struct hbmd_agent *a, uint32_t to)
{
	char key[KEY_MAX];
	int ret;

	a->link_stale[to] = false;
	ret = hbm_link_key(key, sizeof(key), a->conf->etcd_prefix, a->conf->domain,
			   a->conf->node_id, to);
	ret = ret ? ret : hbm_ew_delete(a->ew, key, EW_TAG(EW_LINK_DEL, to, 0));
	if (ret)
		a->link_stale[to] = true;	/* at the next sample */
}

/*
 * The link to peer to left the kernel: its key goes (after a put of it in
 * flight; tried again at the next sample if the deletion fails).
 */
static void link_forget(struct hbmd_agent *a, uint32_t to)
{
	struct hbm_link_health *h = a->lh[to];
	char key[KEY_MAX];

	if (h->published ||
	    (!hbm_link_key(key, sizeof(key), a->conf->etcd_prefix, a->conf->domain,
			   a->conf->node_id, to) && hbm_ew_busy(a->ew, key))) {
		if (!can_start(a))
			return;
		link_unpublish(a, to);
	}
	alog(a, LOG_INFO, "link %u -> %u: gone from the kernel", a->conf->node_id, to);
	free(h);
	a->lh[to] = NULL;
}

/* One link's sample: judged, logged when its state changes, published when due. */
static void link_sample(struct hbmd_agent *a, const struct hbmd_kernel_link *kl, uint64_t now)
{
	struct hbm_health_sample s = {
		.t_ms = now, .oper_up = kl->oper_state == 1 /* HBMPOOL_LINK_STATE_UP */,
		.khealth = kl->health, .rtt_ns = kl->rtt_ns, .requests = kl->requests,
		.errors = kl->errors, .retries = kl->retries, .digest_errors = kl->digest_errors,
		.flaps = kl->flaps,
	};
	struct hbm_link_health *h = a->lh[kl->node_id];
	enum hbm_health from;
	bool first;

	if (!h) {
		h = malloc(sizeof(*h));
		if (!h)
			return;
		hbm_health_init(h);
		a->lh[kl->node_id] = h;
	}
	first = !h->primed;
	from = h->state;
	if (hbm_health_sample(h, &a->hconf, &s))
		alog(a, h->state == HBM_HEALTH_UP ? LOG_NOTICE : LOG_WARNING,
		     "link %u -> %u: %s -> %s (kernel: %s%s, rtt %llu us, errors %u%%; change %llu, %llu flaps held back)",
		     a->conf->node_id, kl->node_id, hbm_health_name(from),
		     hbm_health_name(h->state), s.oper_up ? "up" : "down",
		     h->hard && s.oper_up ? ", went down since the last sample" : "",
		     (unsigned long long)(s.rtt_ns / 1000), h->error_pct,
		     (unsigned long long)h->changes, (unsigned long long)h->suppressed);
	else if (first)
		alog(a, LOG_INFO, "link %u -> %u: %s", a->conf->node_id, kl->node_id,
		     hbm_health_name(h->state));
	if (hbm_health_publish_due(h, &a->hconf, now))
		link_publish(a, kl->node_id, h);
}

/*
 * Every [health] interval_ms: the kernel's links to members, judged;
 * links that left the kernel, forgotten.  only (NULL: every link): the
 * links a kernel event named, sampled at once, off the timer.
 */
static void sample_links_of(struct hbmd_agent *a, const bool *only)
{
	struct hbmd_kernel_link *kl = NULL;
	uint64_t now = now_ms();
	bool seen[NR_IDS] = { false };
	char err[256] = "";
	size_t n = 0, i;
	int ret;

	if (!only)
		a->health_at = now + a->hconf.interval_ms;
	ret = a->k.ops->links_read(a->k.ctx, &kl, &n, err, sizeof(err));
	if (ret) {
		if (!a->links_failed)
			alog(a, LOG_WARNING, "reading the kernel's links: %s; trying again", err);
		a->links_failed = true;
		return;
	}
	a->links_failed = false;
	for (i = 0; i < n && a->state == HBMD_AGENT_RUNNING; i++) {
		uint32_t id = kl[i].node_id;

		if (id >= NR_IDS || id == a->conf->node_id || !hbm_members_find(&a->members, id))
			continue;	/* not a peer, or one on its way out of the kernel */
		seen[id] = true;
		if (!only || only[id])
			link_sample(a, &kl[i], now);
	}
	free(kl);
	for (i = 0; i < NR_IDS; i++)
		if (a->lh[i] && !seen[i] && (!only || only[i]))
			link_forget(a, (uint32_t)i);
	for (i = 0; i < NR_IDS && !only && can_start(a); i++)
		if (a->link_stale[i] && !a->lh[i])
			link_unpublish(a, (uint32_t)i);
}

static void sample_links(struct hbmd_agent *a)
{
	sample_links_of(a, NULL);
}

/* A watch event under the links prefix. */
static int links_event(struct hbmd_agent *a, const struct hbm_etcd_event *ev)
{
	char err[256];
	int ret = hbm_links_apply(&a->links, a->links_prefix, ev, err, sizeof(err));

	if (ret == -EPROTO) {
		alog(a, LOG_WARNING, "links: %s", err);
		return 0;
	}
	return ret;
}

/* The matrix from a range. */
static int links_take(struct hbmd_agent *a, const struct hbm_etcd_kv *kvs, size_t n)
{
	struct hbm_links next;
	int ret = hbm_links_build(a->links_prefix, kvs, n, &next);

	if (ret)
		return ret;
	if (next.bad)
		alog(a, LOG_WARNING, "links: %u bad entries left out", next.bad);
	hbm_links_free(&a->links);
	a->links = next;
	return 0;
}

/* ---- leader election ---- */

/* A synchronous call (hbmd_agent_drain()) would end before the fence time. */
static bool can_block(struct hbmd_agent *a)
{
	return a->lease.state == HBM_LEASE_HELD &&
	       now_ms() + a->call_bound_ms < a->lease.valid_until - a->lease.margin_ms;
}

/*
 * A request may start: the lease is held.  Nothing waits for it, and
 * fencing does not (hbm_lease_tick() in every tick): an answer after the
 * fence is dropped with the request (etcd_cancel_all()).
 */
static bool can_start(const struct hbmd_agent *a)
{
	return a->state == HBMD_AGENT_RUNNING && a->lease.state == HBM_LEASE_HELD && a->as;
}

static void see_leader(struct hbmd_agent *a, const struct hbm_etcd_kv *kv)
{
	struct hbm_leader l;
	char err[256];

	if (hbm_leader_parse(kv, &l, err, sizeof(err))) {
		alog(a, LOG_WARNING, "leader key: %s", err);
		return;
	}
	if (!a->cur_known || l.term != a->cur.term) {
		if (l.id != a->conf->node_id || l.lease != a->lease.id)
			alog(a, LOG_INFO, "leader: node %u (term %lld)", l.id, (long long)l.term);
	}
	a->cur = l;
	a->cur_known = true;
	a->leader = l.id == a->conf->node_id && l.lease == a->lease.id;
}

/* The create-if-absent of the leader key answered. */
static void elect_done(void *arg, struct hbm_etcd_result *r)
{
	struct hbmd_agent *a = arg;
	bool again = a->elect_again;

	a->elect_req = NULL;
	a->elect_again = false;
	if (a->state != HBMD_AGENT_RUNNING)
		return;
	if (r->ret) {
		alog(a, LOG_WARNING, "leader election: %s", r->err);
		a->elect_at = now_ms() + HBMD_RETRY_MS;
		return;
	}
	if (r->created) {
		a->leader = true;
		a->cur = (struct hbm_leader){ .id = a->conf->node_id,
			.incarnation = a->incarnation, .lease = a->lease.id, .term = r->rev };
		a->cur_known = true;
		alog(a, LOG_NOTICE, "this node is the leader (term %lld)", (long long)r->rev);
		repl_leader_says(a);
	} else if (r->kvs.n) {
		see_leader(a, &r->kvs.kv[0]);
		/* the key it found may be the one whose deletion came meanwhile */
		if (again)
			a->elect_at = now_ms();
	}
	set_status(a);
}

static void elect(struct hbmd_agent *a)
{
	char *val = NULL;
	int ret;

	a->elect_at = UINT64_MAX;
	if (a->elect_req) {
		a->elect_again = true;	/* once this one answered */
		return;
	}
	if (!can_start(a)) {
		a->elect_at = now_ms() + HBMD_RETRY_MS;
		return;
	}
	ret = hbm_leader_encode(a->conf->node_id, a->incarnation, &val);
	if (!ret)
		ret = hbm_etcd_async_create(a->as, a->leader_key, val, strlen(val), a->lease.id,
					    elect_done, a, &a->elect_req);
	free(val);
	if (ret) {
		alog(a, LOG_WARNING, "leader election: %s", strerror(-ret));
		a->elect_at = now_ms() + HBMD_RETRY_MS;
	}
}

/* ---- drains ---- */

static void drain_changed(struct hbmd_agent *a, uint32_t id, bool on);

/* A member's progress report of a drain (val NULL: deleted). */
static void drain_report(struct hbmd_agent *a, uint32_t node, uint32_t member, const char *val,
			 size_t len)
{
	char err[128];
	int ret = hbmd_drainer_report(a->drainer, node, member, val, len, err, sizeof(err));

	if (ret == -EPROTO && !a->bad_report) {
		alog(a, LOG_WARNING, "drains: node %u's progress of the drain of node %u: %s (ignored; said once)",
		     member, node, err);
		a->bad_report = true;
	}
}

/*
 * A watch event under the drains prefix: node ID's drain begins or ends,
 * or a member's progress of one.
 */
static void drain_event(struct hbmd_agent *a, const struct hbm_etcd_event *ev)
{
	bool on = ev->type != HBM_ETCD_EV_DELETE;
	uint32_t id, member;

	if (hbmd_drain_key_parse(a->drains_prefix, ev->kv.key, &id, &member)) {
		alog(a, LOG_WARNING, "drains: %s is no drain key (ignored)", ev->kv.key);
		return;
	}
	if (member != UINT32_MAX) {
		drain_report(a, id, member, on ? ev->kv.value : NULL, on ? ev->kv.value_len : 0);
		return;
	}
	if (a->drain[id] == on)
		return;
	a->drain[id] = on;
	alog(a, LOG_NOTICE, on ? "node %u is draining: it takes no new chunks" :
				 "node %u's drain ended: it takes new chunks again", id);
	kdrain_sync(a, id);
	drain_changed(a, id, on);
}

/* The drains from a range (every key under the drains prefix). */
static void drains_take(struct hbmd_agent *a, const bool *next)
{
	uint32_t id;

	for (id = 0; id < NR_IDS; id++) {
		if (a->drain[id] == next[id])
			continue;
		a->drain[id] = next[id];
		alog(a, LOG_NOTICE, next[id] ? "node %u is draining: it takes no new chunks" :
					       "node %u's drain ended: it takes new chunks again", id);
		kdrain_sync(a, id);
		drain_changed(a, id, next[id]);
	}
}

int hbmd_agent_drain(struct hbmd_agent *a, uint32_t id, bool on, char *err, size_t errlen)
{
	char key[KEY_MAX], val[128];
	int64_t rev, deleted = 0;
	bool created = false;
	int ret;

	if (id > HBM_MEMBER_MAX_ID) {
		snprintf(err, errlen, "node %u is not a node id (0..%d)", id, HBM_MEMBER_MAX_ID);
		return -EINVAL;
	}
	if (a->state != HBMD_AGENT_RUNNING) {
		snprintf(err, errlen, "this daemon is not a member of the domain (%s)", a->status);
		return -EAGAIN;
	}
	if (!can_block(a)) {
		snprintf(err, errlen,
			 "this daemon's lease is too close to its end for an etcd call: try again");
		return -EAGAIN;
	}
	ret = hbm_drain_key(key, sizeof(key), a->conf->etcd_prefix, a->conf->domain, id);
	if (ret) {
		snprintf(err, errlen, "the drain key: %s", strerror(-ret));
		return ret;
	}
	if (on) {
		snprintf(val, sizeof(val), "{\"node\":%u,\"by\":%u,\"since\":%llu}", id,
			 a->conf->node_id, (unsigned long long)wall_ms());
		/* a transaction: an existing drain is kept as it is (since) */
		ret = hbm_etcd_create(a->etcd, key, val, strlen(val), 0, &created, NULL, &rev);
	} else {
		ret = hbm_etcd_delete(a->etcd, key, false, &deleted, &rev);
	}
	if (ret) {
		snprintf(err, errlen, "etcd: %s", hbm_etcd_error(a->etcd));
		return ret;
	}
	alog(a, LOG_NOTICE, "%s of node %u requested on the control socket (%s)",
	     on ? "a drain" : "the end of the drain", id,
	     on ? (created ? "written to etcd" : "already draining") :
		  (deleted ? "deleted from etcd" : "it was not draining"));
	return 0;
}

/* PREFIX/DOMAIN/drains/ID/progress/SELF */
static int progress_key(const struct hbmd_agent *a, uint32_t id, char *key, size_t len)
{
	int n = snprintf(key, len, "%s%u/progress/%u", a->drains_prefix, id, a->conf->node_id);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Node id's drain began or ended (its key seen in a watch or a range). */
static void drain_changed(struct hbmd_agent *a, uint32_t id, bool on)
{
	char key[KEY_MAX];

	hbmd_drainer_poke(a->drainer, now_ms());
	if (id == a->conf->node_id && a->leaving) {
		if (on) {
			a->leave_seen = true;
		} else if (a->leave_seen) {
			a->leaving = a->leave_seen = false;
			alog(a, LOG_WARNING,
			     "the drain of this node ended (undrained): the leave is cancelled, node %u stays in the domain",
			     id);
			set_status(a);
		}
	}
	if (on || !hbmd_drainer_end(a->drainer, id))
		return;
	/*
	 * our progress key of the drain: gone with the drain (else with the
	 * lease), after a put of it in flight
	 */
	if (progress_key(a, id, key, sizeof(key)) || !can_start(a))
		return;
	if (hbm_ew_delete(a->ew, key, EW_TAG(EW_PROGRESS_DEL, id, 0)))
		alog(a, LOG_WARNING, "drains: deleting %s: out of memory (it goes with the lease)",
		     key);
}

/*
 * Every drain's report of this node's progress, when due (drain_agent.h):
 * one put in flight per drain; published once it succeeded (ew_done()).
 */
static void drains_publish(struct hbmd_agent *a)
{
	char key[KEY_MAX], val[256];
	uint64_t now = now_ms();
	uint32_t id;

	for (id = 0; id < NR_IDS; id++) {
		if (!a->drain[id] || progress_key(a, id, key, sizeof(key)) ||
		    hbm_ew_busy(a->ew, key) ||
		    !hbmd_drainer_publish_due(a->drainer, id, now, wall_ms(), val, sizeof(val)))
			continue;
		if (!can_start(a) || !hbmd_drainer_progress(a->drainer, id, &a->progress_sent[id]) ||
		    hbm_ew_put(a->ew, key, val, strlen(val), a->lease.id, EW_TAG(EW_PROGRESS, id, 0)))
			hbmd_drainer_publish_later(a->drainer, id, now);
	}
}

/*
 * Node id's drain summed over the members' reports: whether every member
 * reported, and none has a chunk left.
 */
static bool drain_done(const struct hbmd_agent *a, uint32_t id)
{
	const struct hbmd_drain_report *r;
	size_t i;

	for (i = 0; i < a->members.n; i++) {
		r = hbmd_drainer_report_of(a->drainer, id, a->members.m[i].id);
		if (!r || r->chunks_left)
			return false;
	}
	return a->members.n > 0;
}

/*
 * Leaving, not done yet: every HBMD_LEAVE_NAG_MS, say which members the
 * leave waits for (no report yet, or chunks left on this node), so that an
 * operator sees a member that never reports (a daemon of an older version,
 * a stuck one) instead of a leave that silently never ends.
 */
static void leave_waiting(struct hbmd_agent *a)
{
	const struct hbmd_drain_report *r;
	char who[256] = "";
	size_t i, len = 0;
	uint64_t now = now_ms();

	if (!a->leave_nag_at) {
		a->leave_nag_at = now + HBMD_LEAVE_NAG_MS;
		return;
	}
	if (now < a->leave_nag_at)
		return;
	a->leave_nag_at = now + HBMD_LEAVE_NAG_MS;
	for (i = 0; i < a->members.n && len < sizeof(who) - 32; i++) {
		r = hbmd_drainer_report_of(a->drainer, a->conf->node_id, a->members.m[i].id);
		if (!r)
			len += (size_t)snprintf(who + len, sizeof(who) - len, " %u (no report)",
						a->members.m[i].id);
		else if (r->chunks_left)
			len += (size_t)snprintf(who + len, sizeof(who) - len, " %u (%llu chunks)",
						a->members.m[i].id,
						(unsigned long long)r->chunks_left);
	}
	alog(a, LOG_NOTICE, "leaving: waiting for members:%s", len ? who : " (their reports)");
}

/*
 * Left: the others fence this node (its lease is gone), and a fenced node
 * rejoins only with a new incarnation, so the segment goes now (nothing
 * is left on it): the next start exports a new one and joins.  A segment
 * a client still holds chunks of (-EBUSY) stays: said, and the next start
 * refuses it until an operator deletes it.
 */
static void leave_segment(struct hbmd_agent *a)
{
	char err[256];
	int ret;

	if (!a->k.ops->segment_del)
		return;
	ret = a->k.ops->segment_del(a->k.ctx, err, sizeof(err));
	if (ret)
		alog(a, LOG_WARNING,
		     "left, but this node's segment stays (%s): the next start needs a new one (hbmctl segment del)",
		     err);
	else
		alog(a, LOG_NOTICE,
		     "segment deleted (incarnation %llu): the next start exports a new one and joins again",
		     (unsigned long long)a->incarnation);
}

/* Leaving: once this node's drain is done, out of the domain. */
static void leave_check(struct hbmd_agent *a)
{
	char key[KEY_MAX];
	int64_t rev;

	if (!a->leaving || !a->leave_seen)
		return;
	if (!drain_done(a, a->conf->node_id)) {
		leave_waiting(a);
		return;
	}
	alog(a, LOG_NOTICE,
	     "node %u is drained (every member reports no chunk left on it): leaving the domain",
	     a->conf->node_id);
	hbmd_agent_stop(a, true);
	leave_segment(a);
	/* then its drain, so that a node with this id joins later undrained */
	if (!hbm_drain_key(key, sizeof(key), a->conf->etcd_prefix, a->conf->domain,
			   a->conf->node_id) &&
	    hbm_etcd_delete(a->etcd, key, false, NULL, &rev))
		alog(a, LOG_WARNING, "deleting %s: %s (undrain %u by hand)", key,
		     hbm_etcd_error(a->etcd), a->conf->node_id);
	a->left = true;
	a->leaving = false;
	snprintf(a->status, sizeof(a->status), "left the domain (drained)");
}

int hbmd_agent_leave(struct hbmd_agent *a, char *err, size_t errlen)
{
	int ret;

	if (a->leaving) {
		alog(a, LOG_INFO, "leave requested again: already leaving");
		return 0;
	}
	ret = hbmd_agent_drain(a, a->conf->node_id, true, err, errlen);
	if (ret)
		return ret;
	a->leaving = true;
	a->leave_nag_at = 0;
	a->leave_seen = a->drain[a->conf->node_id];
	alog(a, LOG_NOTICE,
	     "leave requested on the control socket: node %u drains itself, and leaves once every member reports no chunk left on it",
	     a->conf->node_id);
	set_status(a);
	return 0;
}

bool hbmd_agent_left(const struct hbmd_agent *a)
{
	return a->left;
}

bool hbmd_agent_leaving(const struct hbmd_agent *a)
{
	return a->leaving;
}

/* ---- rebalance after a join ---- */

static bool any_drain(const struct hbmd_agent *a)
{
	for (size_t i = 0; i < NR_IDS; i++)
		if (a->drain[i])
			return true;
	return false;
}

/* The leader's request changed: a rebalance here too (a deletion asks nothing). */
static void rebalance_event(struct hbmd_agent *a, const struct hbm_etcd_event *ev)
{
	char err[128];
	uint32_t node;

	if (ev->type == HBM_ETCD_EV_DELETE)
		return;
	if (hbmd_rebalance_parse(ev->kv.value, ev->kv.value_len, &node, err, sizeof(err))) {
		alog(a, LOG_WARNING, "%s: %s; ignored", a->rebalance_key, err);
		return;
	}
	hbmd_rebalancer_request(a->rebalancer, node, now_ms());
}

/* The leader: a member joined, so every member rebalances (the key's change says so). */
static void rebalance_put(struct hbmd_agent *a)
{
	char val[96];
	int ret;

	if (!a->rebalance_due)
		return;
	if (!a->leader) {
		a->rebalance_due = false;	/* the leader saw the join too */
		return;
	}
	if (hbm_ew_busy(a->ew, a->rebalance_key) || !can_start(a))
		return;		/* its answer says (ew_done()) */
	if (hbmd_rebalance_encode(a->rebalance_node, a->members.epoch, val, sizeof(val))) {
		a->rebalance_due = false;
		return;
	}
	ret = hbm_ew_put(a->ew, a->rebalance_key, val, strlen(val), 0,
			 EW_TAG(EW_REBALANCE, a->rebalance_node, a->rebalance_gen));
	if (ret)
		alog(a, LOG_WARNING, "asking for a rebalance: %s; trying again", strerror(-ret));
}

/* ---- replication (replication.h) ---- */

/*
 * member's replication report (val NULL: its key deleted) into the view;
 * the leader says what changed.
 */
static void repl_report(struct hbmd_agent *a, uint32_t member, const char *val, size_t len)
{
	const struct hbm_repl_report *r = hbm_repl_view_find(&a->repl_view, member);
	struct hbm_repl was = r ? r->r : (struct hbm_repl){ 0 };
	bool had = r != NULL;
	char err[256] = "", msg[256];
	int ret, level;

	ret = hbm_repl_view_set(&a->repl_view, member, val, len, err, sizeof(err));
	if (ret) {
		if (ret != -EPROTO || !a->bad_repl)
			alog(a, LOG_WARNING, "replication: node %u's report: %s (ignored%s)", member,
			     ret == -EPROTO ? err : strerror(-ret),
			     ret == -EPROTO ? "; said once" : "");
		a->bad_repl |= ret == -EPROTO;
		return;
	}
	r = hbm_repl_view_find(&a->repl_view, member);
	level = hbm_repl_change(member, had ? &was : NULL, r ? &r->r : NULL, msg, sizeof(msg));
	if (a->leader && level >= 0)
		alog(a, level, "leader: %s", msg);
}

/* A watch event under the replication prefix. */
static void repl_event(struct hbmd_agent *a, const struct hbm_etcd_event *ev)
{
	uint32_t id;

	if (hbm_repl_key_id(a->repl_prefix, ev->kv.key, &id)) {
		alog(a, LOG_WARNING, "replication: %s is no report's key (ignored)", ev->kv.key);
		return;
	}
	repl_report(a, id, ev->type == HBM_ETCD_EV_DELETE ? NULL : ev->kv.value,
		    ev->type == HBM_ETCD_EV_DELETE ? 0 : ev->kv.value_len);
	/* this node's own key deleted behind its back (not by its lease): put again */
	if (id == a->conf->node_id && ev->type == HBM_ETCD_EV_DELETE)
		hbmd_replicator_seen(a->repl, NULL);
}

/*
 * The reports from a range: every key under the prefix, and a report no
 * longer there deleted.  This node's own key (a restart on the same
 * lease) is what its next put is judged against.
 */
static void repls_take(struct hbmd_agent *a, const struct hbm_etcd_kvs *kvs)
{
	const struct hbm_repl_report *own;
	bool *seen = calloc(NR_IDS, sizeof(*seen));
	uint32_t gone[64], id;
	size_t i, n;

	if (!seen) {
		alog(a, LOG_ERR, "replication: the reports: out of memory (kept as they were)");
		return;
	}
	for (i = 0; i < kvs->n; i++)
		if (!hbm_repl_key_id(a->repl_prefix, kvs->kv[i].key, &id)) {
			seen[id] = true;
			repl_report(a, id, kvs->kv[i].value, kvs->kv[i].value_len);
		}
	do {
		for (i = 0, n = 0; i < a->repl_view.n && n < 64; i++)
			if (!seen[a->repl_view.rep[i].member])
				gone[n++] = a->repl_view.rep[i].member;
		for (i = 0; i < n; i++)
			repl_report(a, gone[i], NULL, 0);
	} while (n == 64);
	free(seen);
	own = hbm_repl_view_find(&a->repl_view, a->conf->node_id);
	if (own)
		hbmd_replicator_seen(a->repl, &own->r);
}

/* The leader, newly: the members whose chunks are degraded now. */
static void repl_leader_says(struct hbmd_agent *a)
{
	char msg[256];
	size_t i;

	for (i = 0; i < a->repl_view.n; i++)
		if (hbm_repl_change(a->repl_view.rep[i].member, NULL, &a->repl_view.rep[i].r, msg,
				    sizeof(msg)) >= 0)
			alog(a, LOG_WARNING, "leader: %s", msg);
}

/* This node's summary, when due (replication_agent.h): one put in flight. */
static void repl_publish(struct hbmd_agent *a)
{
	char val[256];
	uint64_t now = now_ms();
	int ret;

	if (!can_start(a) || hbm_ew_busy(a->ew, a->repl_key) ||
	    !hbmd_replicator_publish_due(a->repl, now, wall_ms(), val, sizeof(val)))
		return;
	ret = hbm_ew_put(a->ew, a->repl_key, val, strlen(val), a->lease.id,
			 EW_TAG(EW_REPL, a->conf->node_id, 0));
	if (ret)
		hbmd_replicator_publish_done(a->repl, ret, now);
}

/* A keyed write answered (etcd_writer.h). */
static void ew_done(void *arg, uint64_t tag, const struct hbm_etcd_result *r)
{
	struct hbmd_agent *a = arg;
	uint32_t id = EW_ID(tag), x = EW_X(tag);
	struct hbm_drain_progress now_p;
	uint64_t now = now_ms();

	if (a->state != HBMD_AGENT_RUNNING || id >= NR_IDS)
		return;
	switch (EW_KIND(tag)) {
	case EW_LINK:
		if (r->ret) {
			alog(a, LOG_WARNING, "publishing link %u -> %u: %s", a->conf->node_id, id,
			     r->err);
		} else if (a->lh[id]) {
			/* the state it carried, as of when it was sent */
			hbm_health_published(a->lh[id], r->sent_ms);
			a->lh[id]->published_state = (enum hbm_health)x;
		}
		break;
	case EW_LINK_DEL:
		if (!r->ret)
			break;
		alog(a, LOG_WARNING, "deleting link %u -> %u: %s", a->conf->node_id, id, r->err);
		if (!a->lh[id])
			a->link_stale[id] = true;	/* at the next sample */
		break;
	case EW_PROGRESS:
		if (!a->drain[id])
			break;		/* the drain ended meanwhile */
		if (r->ret) {
			alog(a, LOG_WARNING, "drains: publishing node %u's progress: %s (again in %d ms)",
			     id, r->err, HBMD_DRAIN_PUBLISH_MS);
			hbmd_drainer_publish_later(a->drainer, id, now);
		} else if (hbmd_drainer_progress(a->drainer, id, &now_p) &&
			   !memcmp(&now_p, &a->progress_sent[id], sizeof(now_p))) {
			hbmd_drainer_published(a->drainer, id, now);
		} else {
			/* it moved on while the put was in flight: the newer one, in time */
			hbmd_drainer_publish_later(a->drainer, id, now);
		}
		break;
	case EW_PROGRESS_DEL:
		if (r->ret)
			alog(a, LOG_WARNING, "drains: deleting node %u's progress: %s (it goes with the lease)",
			     id, r->err);
		break;
	case EW_REPL:
		if (r->ret)
			alog(a, LOG_WARNING, "replication: publishing this node's report: %s (again in %d ms)",
			     r->err, HBMD_REPL_PUBLISH_MS);
		hbmd_replicator_publish_done(a->repl, r->ret, now);
		break;
	case EW_REBALANCE:
		if (r->ret) {
			alog(a, LOG_WARNING, "asking for a rebalance: %s; trying again", r->err);
			break;
		}
		if (x == a->rebalance_gen)
			a->rebalance_due = false;
		alog(a, LOG_INFO, "leader: node %u joined: every member rebalances", id);
		break;
	}
}

/* ---- the watch ---- */

static int on_watch(const struct hbm_etcd_watch_msg *m, void *arg)
{
	struct hbmd_agent *a = arg;
	struct hbm_members next;
	bool members = false;
	char err[256];
	size_t i;
	int ret;

	if (a->state != HBMD_AGENT_RUNNING)
		return 0;
	a->watch_heard = now_ms();
	if (m->canceled) {
		alog(a, LOG_WARNING, "etcd ended the watch%s%s%s", *m->cancel_reason ? ": " : "",
		     m->cancel_reason, m->compact_revision ? " (compacted)" : "");
		return 0;	/* -ECANCELED follows */
	}
	if (!m->n)
		return 0;
	if (hbm_members_copy(&a->members, &next))
		return -ENOMEM;
	for (i = 0; i < m->n; i++) {
		const struct hbm_etcd_event *ev = &m->events[i];

		if (ev->kv.mod_revision > a->watch_rev)
			a->watch_rev = ev->kv.mod_revision;
		if (ev->type == HBM_ETCD_EV_DELETE)
			a->domain_keys--;
		else if (ev->kv.version == 1)
			a->domain_keys++;	/* created */
		if (!strcmp(ev->kv.key, a->leader_key)) {
			if (ev->type == HBM_ETCD_EV_DELETE) {
				alog(a, LOG_INFO, "the leader (node %d) is gone: election",
				     a->cur_known ? (int)a->cur.id : -1);
				a->cur_known = false;
				a->leader = false;
				a->elect_at = now_ms();
			} else {
				see_leader(a, &ev->kv);
			}
			continue;
		}
		if (!strncmp(ev->kv.key, a->drains_prefix, strlen(a->drains_prefix))) {
			drain_event(a, ev);
			continue;
		}
		if (!strcmp(ev->kv.key, a->rebalance_key)) {
			rebalance_event(a, ev);
			continue;
		}
		if (!strncmp(ev->kv.key, a->repl_prefix, strlen(a->repl_prefix))) {
			repl_event(a, ev);
			continue;
		}
		if (!strncmp(ev->kv.key, a->links_prefix, strlen(a->links_prefix))) {
			ret = links_event(a, ev);
			if (ret) {
				hbm_members_free(&next);
				return ret;
			}
			continue;
		}
		if (strncmp(ev->kv.key, a->members_prefix, strlen(a->members_prefix)))
			continue;	/* not ours */
		members = true;
		ret = hbm_members_apply(&next, a->members_prefix, ev, err, sizeof(err));
		if (ret == -EPROTO) {
			alog(a, LOG_WARNING, "membership: %s", err);
		} else if (ret) {
			hbm_members_free(&next);
			return ret;
		}
	}
	if (members)
		return take_table(a, &next);
	hbm_members_free(&next);
	set_status(a);
	return 0;
}

/*
 * The domain (members and leader) read at one revision (kvs, consumed):
 * take it, and watch from the next.  At start and after a watch ended (a
 * resync sees the deletions the watch missed as leaves).
 */
static int resync_take(struct hbmd_agent *a, struct hbm_etcd_kvs *rkvs, int64_t rev)
{
	struct hbm_etcd_kvs kvs = *rkvs;
	struct hbm_etcd_kv *mkv, *lkv;
	struct hbm_members next;
	const struct hbm_etcd_kv *leader = NULL;
	bool drains[NR_IDS] = { false };
	size_t i, n = 0, nl = 0;
	uint32_t id, member;
	int ret;

	memset(rkvs, 0, sizeof(*rkvs));
	mkv = calloc(kvs.n + 1, sizeof(*mkv));
	lkv = calloc(kvs.n + 1, sizeof(*lkv));
	if (!mkv || !lkv) {
		free(mkv);
		free(lkv);
		hbm_etcd_kvs_free(&kvs);
		return -ENOMEM;
	}
	for (i = 0; i < kvs.n; i++) {
		if (!strcmp(kvs.kv[i].key, a->leader_key))
			leader = &kvs.kv[i];
		else if (!strncmp(kvs.kv[i].key, a->members_prefix, strlen(a->members_prefix)))
			mkv[n++] = kvs.kv[i];	/* shallow: kvs owns the strings */
		else if (!strncmp(kvs.kv[i].key, a->links_prefix, strlen(a->links_prefix)))
			lkv[nl++] = kvs.kv[i];
		else if (!strncmp(kvs.kv[i].key, a->drains_prefix, strlen(a->drains_prefix)) &&
			 !hbmd_drain_key_parse(a->drains_prefix, kvs.kv[i].key, &id, &member))
			drains[id] |= member == UINT32_MAX;
	}
	/* the members' progress reports, all again */
	hbmd_drainer_reports_clear(a->drainer);
	for (i = 0; i < kvs.n; i++)
		if (!strncmp(kvs.kv[i].key, a->drains_prefix, strlen(a->drains_prefix)) &&
		    !hbmd_drain_key_parse(a->drains_prefix, kvs.kv[i].key, &id, &member) &&
		    member != UINT32_MAX)
			drain_report(a, id, member, kvs.kv[i].value, kvs.kv[i].value_len);
	repls_take(a, &kvs);
	ret = links_take(a, lkv, nl);
	free(lkv);
	ret = ret ? ret : hbm_members_build(a->members_prefix, mkv, n, &next);
	free(mkv);
	if (ret) {
		hbm_etcd_kvs_free(&kvs);
		return ret;
	}
	if (next.errors)
		alog(a, LOG_WARNING, "membership: %u bad entries:\n%s", next.bad, next.errors);
	/* A member gone since the last table: its deletion is at most rev. */
	for (i = 0; i < a->members.n; i++)
		if (!hbm_members_find(&next, a->members.m[i].id) && next.epoch < rev)
			next.epoch = rev;
	if (leader) {
		see_leader(a, leader);
	} else {
		a->cur_known = false;
		a->leader = false;
		a->elect_at = now_ms();
	}
	a->domain_keys = (int64_t)kvs.n;
	hbm_etcd_kvs_free(&kvs);
	a->watch_rev = rev;
	/* the drains first: a member added by take_table gets its drain at once */
	drains_take(a, drains);
	ret = take_table(a, &next);
	if (ret || a->state != HBMD_AGENT_RUNNING)
		return ret;

	ret = hbm_etcd_awatch_start(a->etcd, a->domain_prefix, true, rev + 1, on_watch, a,
				    &a->watch);
	if (ret) {
		alog(a, LOG_WARNING, "watching %s: %s", a->domain_prefix, hbm_etcd_error(a->etcd));
		a->watch = NULL;
		a->resync_at = now_ms() + HBMD_RETRY_MS;
		return ret;
	}
	a->watch_deadline = now_ms();	/* let curl start */
	a->watch_heard = now_ms();
	return 0;
}

/* At start, before the loop serves: one synchronous range. */
static int resync(struct hbmd_agent *a)
{
	struct hbm_etcd_kvs kvs = { 0 };
	int64_t rev;
	int ret;

	a->resync_at = UINT64_MAX;
	if (!can_block(a)) {
		a->resync_at = now_ms() + HBMD_RETRY_MS;
		return -EAGAIN;
	}
	ret = hbm_etcd_get(a->etcd, a->domain_prefix, true, &kvs, &rev);
	if (ret) {
		alog(a, LOG_WARNING, "reading the domain: %s", hbm_etcd_error(a->etcd));
		a->resync_at = now_ms() + HBMD_RETRY_MS;
		return ret;
	}
	return resync_take(a, &kvs, rev);
}

static void resync_done(void *arg, struct hbm_etcd_result *r)
{
	struct hbmd_agent *a = arg;
	int ret;

	a->resync_req = NULL;
	if (a->state != HBMD_AGENT_RUNNING || a->watch)
		return;
	if (r->ret) {
		alog(a, LOG_WARNING, "reading the domain: %s", r->err);
		a->resync_at = now_ms() + HBMD_RETRY_MS;
		return;
	}
	ret = resync_take(a, &r->kvs, r->rev);
	if (ret && a->state == HBMD_AGENT_RUNNING && !a->watch &&
	    a->resync_at == UINT64_MAX)
		a->resync_at = now_ms() + HBMD_RETRY_MS;
}

/* Running: the range in the loop (resync_done()). */
static void resync_start(struct hbmd_agent *a)
{
	a->resync_at = UINT64_MAX;
	if (a->resync_req)
		return;
	if (!can_start(a) || hbm_etcd_async_range(a->as, a->domain_prefix, true, resync_done, a,
						  &a->resync_req))
		a->resync_at = now_ms() + HBMD_RETRY_MS;
}

/*
 * A watch that says nothing for this long is read again: etcd sends
 * nothing on a quiet prefix, and a connection to a dead endpoint may never
 * break; a resync costs one range.
 */
static uint64_t watch_idle_ms(const struct hbmd_agent *a)
{
	return 2 * (uint64_t)a->conf->lease_ttl_s * 1000;
}

/*
 * The probe answered: if the watch missed something (or etcd did not
 * answer), the domain is read again.
 */
static void probe_done(void *arg, struct hbm_etcd_result *r)
{
	struct hbmd_agent *a = arg;

	a->probe_req = NULL;
	if (a->state != HBMD_AGENT_RUNNING || !a->watch || a->watch != a->probe_watch)
		return;		/* that watch ended meanwhile: read again already */
	if (r->ret) {
		alog(a, LOG_INFO, "checking %s: %s: reading the domain again", a->domain_prefix,
		     r->err);
	} else if (a->watch_rev >= r->rev ||
		   (r->count == a->domain_keys && r->max_mod <= a->watch_rev)) {
		return;		/* it saw everything up to the probe */
	} else {
		alog(a, LOG_INFO,
		     "the watch of %s missed changes (etcd has %lld keys up to revision %lld, the watch %lld up to %lld): reading the domain again",
		     a->domain_prefix, (long long)r->count, (long long)r->max_mod,
		     (long long)a->domain_keys, (long long)a->watch_rev);
	}
	watch_stop(a);
	a->resync_at = now_ms();
}

/*
 * The watch said nothing for a while: a quiet domain, or a stream that
 * died without breaking.  One small range tells (hbm_etcd_probe(): the
 * count and the newest revision of the domain's keys), instead of reading
 * the whole domain, which at a thousand nodes costs etcd more than all
 * the renewals; its answer comes in probe_done().
 */
static void watch_probe(struct hbmd_agent *a)
{
	if (a->probe_req || !can_start(a))
		return;		/* ask again later */
	a->probe_watch = a->watch;
	if (hbm_etcd_async_probe(a->as, a->domain_prefix, true, probe_done, a, &a->probe_req))
		a->probe_req = NULL;
}

static void watch_ended(struct hbmd_agent *a, int ret)
{
	if (a->state != HBMD_AGENT_RUNNING)
		return;
	alog(a, LOG_WARNING, "the watch of %s ended (%s): reading the domain again",
	     a->domain_prefix, a->watch ? hbm_etcd_awatch_error(a->watch) : strerror(-ret));
	watch_stop(a);
	a->resync_at = now_ms() + 200;
}

static void watch_poke(struct hbmd_agent *a, int fd, short revents)
{
	long t;
	int ret;

	if (!a->watch)
		return;
	a->in_watch = true;
	ret = hbm_etcd_awatch_event(a->watch, fd, revents);
	a->in_watch = false;
	if (a->state != HBMD_AGENT_RUNNING) {
		watch_stop(a);	/* fenced from the callback */
		return;
	}
	if (ret) {
		watch_ended(a, ret);
		return;
	}
	t = hbm_etcd_awatch_timeout(a->watch);
	a->watch_deadline = t < 0 ? UINT64_MAX : now_ms() + (uint64_t)t;
}

/* ---- the kernel's events ---- */

static const char *const kstate_names[] = { "absent", "live", "fenced" };

/*
 * Whether this node is fenced in the kernel now: the domain's fenced flag
 * (domain-get), which domain-set fenced raises and only a new segment
 * clears.  The self node's state is no guide: the kernel never sets it to
 * fenced.  A kernel that cannot say: not fenced (a failed read is logged).
 */
static bool kernel_fenced(struct hbmd_agent *a)
{
	struct hbmd_kernel_domain d;
	char err[256] = "";

	if (a->k.ops->domain_read(a->k.ctx, &d, err, sizeof(err))) {
		alog(a, LOG_WARNING, "reading the kernel's domain: %s", err);
		return false;
	}
	return d.fenced;
}

/*
 * A domain event said "fenced": true when it was sent, and maybe no more
 * (a segment-new after it, at start, clears the flag).  Ask the kernel; a
 * kernel that cannot say is believed as the event says.
 */
static bool kernel_fenced_now(struct hbmd_agent *a)
{
	struct hbmd_kernel_domain d;
	char err[256] = "";

	if (a->k.ops->domain_read(a->k.ctx, &d, err, sizeof(err)))
		return true;
	if (!d.fenced)
		alog(a, LOG_DEBUG, "a domain event said fenced, the kernel says no more: ignored");
	return d.fenced;
}

/*
 * The kernel's nodes read again (after an event that contradicts this
 * agent's view, or events lost), and the view brought to them:
 *  - a node removed by someone else (hbmctl node del): absent; a member is
 *    added again at once (then by the retries of a failed add);
 *  - a live node fenced by someone else (hbmctl node set state fenced):
 *    removed at once, and a member added again (as at start);
 *  - a node added by someone else: a member's is kept; a node that is no
 *    member is fenced and removed (as at start: the daemon owns the table);
 *  - this node fenced in the kernel by another program (domain-set
 *    fenced): the agent is fenced (final), as if it had done it.
 * A node this agent fences and removes stays so, whatever the kernel says
 * meanwhile.
 */
static void knodes_reconcile(struct hbmd_agent *a)
{
	struct hbmd_kernel_node *kn = NULL;
	enum kstate k[NR_IDS];
	bool kd[NR_IDS], ks[NR_IDS];
	bool readd = false;
	char err[256] = "";
	size_t nkn = 0, i;
	uint32_t id;
	int ret;

	a->kdump_at = UINT64_MAX;
	/*
	 * This node fenced: the domain's flag (domain-get fenced), not the
	 * self node's state, which the kernel never sets to fenced.  Read here
	 * too because the domain event that said so may be among those lost.
	 */
	if (kernel_fenced(a)) {
		fence_as(a, "this node was fenced in the kernel by someone else (domain-set fenced)",
			 true);
		return;
	}
	ret = a->k.ops->nodes_read(a->k.ctx, &kn, &nkn, err, sizeof(err));
	if (ret) {
		alog(a, LOG_WARNING, "reading the kernel's nodes: %s; trying again in %d ms", err,
		     HBMD_RETRY_MS);
		a->kdump_at = now_ms() + HBMD_RETRY_MS;
		return;
	}
	for (i = 0; i < NR_IDS; i++) {
		k[i] = K_ABSENT;
		kd[i] = false;
		ks[i] = false;
	}
	for (i = 0; i < nkn; i++) {
		if (kn[i].self)
			continue;
		if (kn[i].id < NR_IDS && kn[i].state != HBMD_NODE_REMOVED) {
			k[kn[i].id] = kn[i].state == HBMD_NODE_FENCED ? K_FENCED : K_PRESENT;
			kd[kn[i].id] = kn[i].draining;
			ks[kn[i].id] = kn[i].shm;
		}
	}
	free(kn);
	for (id = 0; id < NR_IDS; id++) {
		bool member = hbm_members_find(&a->members, id) != NULL;

		if (id == a->conf->node_id || k[id] == a->kstate[id])
			continue;
		if (k[id] == K_ABSENT) {
			alog(a, LOG_WARNING, "node %u was removed from the kernel by someone else (it was %s here)%s",
			     id, kstate_names[a->kstate[id]],
			     member && a->kstate[id] == K_PRESENT ? ": adding it again" : "");
			readd = readd || (member && a->kstate[id] == K_PRESENT);
			kforget(a, id);
		} else if (k[id] == K_FENCED) {
			alog(a, LOG_WARNING, "node %u is fenced in the kernel by someone else: removing it%s",
			     id, member ? ", then adding it again" : "");
			a->kstate[id] = K_FENCED;
			a->remove_due[id] = now_ms();
			readd = readd || member;
		} else if (a->kstate[id] == K_ABSENT) {
			a->kstate[id] = K_PRESENT;
			a->kdist[id] = 0;	/* added with what distance: not known */
			a->klink[id] = 0;
			a->kdrain[id] = kd[id];
			a->kshm[id] = ks[id];
			if (member) {
				alog(a, LOG_NOTICE, "node %u was added to the kernel by someone else: kept (a member)",
				     id);
				kdrain_sync(a, id);
			} else {
				kleave(a, id, "was added to the kernel by someone else but is no member");
			}
		}
		/* live in the kernel, fenced here: its removal goes on */
	}
	if (readd) {
		/* the fenced ones are removed first (kjoin), the others added now */
		for (id = 0; id < NR_IDS; id++)
			if (a->kstate[id] == K_FENCED && a->remove_due[id] <= now_ms() &&
			    hbm_members_find(&a->members, id))
				kremove(a, id);
		retry_adds(a);
	}
	set_status(a);
}

/* Does a node event agree with what this agent left in the kernel? */
static bool kevent_agrees(const struct hbmd_agent *a, const struct hbmd_kernel_event *e)
{
	enum kstate k = e->kind == HBMD_KEV_NODE_DEL || e->state == HBMD_NODE_REMOVED ? K_ABSENT :
			e->state == HBMD_NODE_FENCED ? K_FENCED : K_PRESENT;

	return a->kstate[e->id] == k;
}

/*
 * The kernel's events, drained.  A node event that agrees with this
 * agent's view (most are the echo of its own calls) changes nothing; one
 * that does not, or a loss, makes it read the nodes again (once per
 * batch); a link event samples that link's health at once; a loss samples
 * every link too.
 */
static void kevents(struct hbmd_agent *a)
{
	struct hbmd_kernel_event ev[64];
	bool links[NR_IDS] = { false }, any_link = false, dump = false, lost = false;
	char err[256] = "";
	unsigned int rounds;
	int n, i;

	for (rounds = 0; rounds < 16; rounds++) {
		n = a->k.ops->events_read(a->k.ctx, ev, sizeof(ev) / sizeof(ev[0]), err,
					  sizeof(err));
		if (n < 0) {
			if (!a->kev_failed)
				alog(a, LOG_WARNING, "%s", err);
			a->kev_failed = true;
			break;
		}
		a->kev_failed = false;
		for (i = 0; i < n; i++) {
			const struct hbmd_kernel_event *e = &ev[i];

			switch (e->kind) {
			case HBMD_KEV_OVERRUN:
				lost = true;
				break;
			case HBMD_KEV_NODE_ADD:
			case HBMD_KEV_NODE_DEL:
			case HBMD_KEV_NODE_CHANGE:
				/*
				 * The self node's events say nothing of a fence
				 * (the domain's events do, below).
				 */
				if (!e->self && e->id < NR_IDS && !kevent_agrees(a, e))
					dump = true;
				break;
			case HBMD_KEV_LINK:
				if (e->id < NR_IDS) {
					links[e->id] = true;
					any_link = true;
				}
				break;
			case HBMD_KEV_DOMAIN:
				if (e->fenced && a->state == HBMD_AGENT_RUNNING &&
				    kernel_fenced_now(a))
					fence_as(a, "this node was fenced in the kernel by someone else (domain-set fenced)",
						 true);
				break;
			case HBMD_KEV_SEGMENT:
				alog(a, LOG_DEBUG, "the kernel's segment changed (event %llu)",
				     (unsigned long long)e->seq);
				break;
			case HBMD_KEV_REGION:
				/* a region came or went: its chunks with it */
				hbmd_replicator_poke(a->repl, now_ms());
				/* fall through */
			case HBMD_KEV_RESYNC:
				/* a move or a region changed: a drain's pass soon */
				hbmd_drainer_poke(a->drainer, now_ms() + HBMD_DRAIN_EVENT_MS);
				break;
			case HBMD_KEV_REGION_CHANGE:
				/* its chunks' copies: the summary read again */
				alog(a, LOG_DEBUG, "region %u: %u chunks degraded, %u lost (event %llu)",
				     e->id, e->degraded, e->lost, (unsigned long long)e->seq);
				hbmd_replicator_poke(a->repl, now_ms());
				break;
			}
		}
		if ((size_t)n < sizeof(ev) / sizeof(ev[0]))
			break;
	}
	if (a->state != HBMD_AGENT_RUNNING)
		return;
	if (lost) {
		a->overruns++;
		alog(a, a->overruns == 1 ? LOG_WARNING : LOG_DEBUG,
		     "kernel events were lost (the monitor socket overran%s): reading the kernel's nodes and links again",
		     a->overruns == 1 ? "; said once" : "");
		dump = true;
	}
	if (lost)
		hbmd_replicator_poke(a->repl, now_ms());
	if (dump)
		knodes_reconcile(a);
	if (a->state != HBMD_AGENT_RUNNING)
		return;
	if (lost)
		sample_links(a);
	else if (any_link)
		sample_links_of(a, links);
}

/* ---- start ---- */

static int read_key(struct hbmd_agent *a, unsigned char *key, size_t *len)
{
	ssize_t r;
	int fd = open(a->conf->key_file, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		alog(a, LOG_ERR, "%s: %s", a->conf->key_file, strerror(errno));
		return -errno;
	}
	r = read(fd, key, 65);
	close(fd);
	if (r < 16 || r > 64) {
		alog(a, LOG_ERR, "%s: a domain key is 16 to 64 bytes", a->conf->key_file);
		return -EINVAL;
	}
	*len = (size_t)r;
	return 0;
}

int hbmd_agent_new(const struct hbm_config *conf, struct hbmd_kernel kernel, hbmd_log_fn *log,
		   void *log_arg, struct hbmd_agent **out)
{
	struct hbmd_agent *a = calloc(1, sizeof(*a));

	if (!a) {
		kernel.ops->close(kernel.ctx);
		return -ENOMEM;
	}
	a->conf = conf;
	a->k = kernel;
	a->log_fn = log;
	a->log_arg = log_arg;
	a->watch_deadline = UINT64_MAX;
	a->resync_at = UINT64_MAX;
	a->elect_at = UINT64_MAX;
	a->health_at = UINT64_MAX;
	a->kev_fd = -1;
	a->kdump_at = UINT64_MAX;
	hbm_health_conf_from(&a->hconf, conf);
	snprintf(a->status, sizeof(a->status), "starting");
	if (hbmd_drainer_new(kernel, conf->node_id, conf->drain_jobs,
			     conf->drain_mbps == HBM_CONF_UNSET ? UINT32_MAX : conf->drain_mbps,
			     log, log_arg, &a->drainer)) {
		kernel.ops->close(kernel.ctx);
		free(a);
		return -ENOMEM;
	}
	if (hbmd_rebalancer_new(kernel, conf->node_id, conf->drain_jobs, log, log_arg,
				&a->rebalancer)) {
		hbmd_drainer_free(a->drainer);
		kernel.ops->close(kernel.ctx);
		free(a);
		return -ENOMEM;
	}
	hbm_repl_view_init(&a->repl_view);
	if (hbmd_replicator_new(kernel, log, log_arg, &a->repl)) {
		hbmd_rebalancer_free(a->rebalancer);
		hbmd_drainer_free(a->drainer);
		kernel.ops->close(kernel.ctx);
		free(a);
		return -ENOMEM;
	}
	*out = a;
	return 0;
}

/* This node's member value, from the config. */
static void self_member(const struct hbmd_agent *a, struct hbm_member *me)
{
	*me = (struct hbm_member){
		.id = a->conf->node_id, .port = a->conf->port,
		.segment_bytes = a->conf->segment_bytes, .capacity = a->conf->segment_bytes,
		.incarnation = a->incarnation, .loc = a->conf->loc,
		.failure_domain = a->conf->failure_domain,
	};
	snprintf(me->addr, sizeof(me->addr), "%s", a->conf->address);
}

/* This node's key, under the lease; an old one of ours is taken over. */
static int do_register(struct hbmd_agent *a, bool report)
{
	struct hbm_etcd_kvs ex = { 0 };
	struct hbm_member me, old;
	bool created = false;
	char *val = NULL, err[256];
	int ret;

	self_member(a, &me);
	ret = hbm_member_encode(&me, &val);
	if (ret)
		return ret;
	ret = hbm_etcd_create(a->etcd, a->member_key, val, strlen(val), a->lease.id, &created,
			      &ex, NULL);
	free(val);
	if (ret) {
		alog(a, LOG_ERR, "registering %s: %s", a->member_key, hbm_etcd_error(a->etcd));
		return ret;
	}
	if (created || (ex.n && ex.kv[0].lease == a->lease.id)) {
		hbm_etcd_kvs_free(&ex);
		alog(a, LOG_NOTICE, "node %u registered: %s, incarnation %llu, lease %llx (%llu s)",
		     me.id, a->member_key, (unsigned long long)a->incarnation,
		     (unsigned long long)a->lease.id, (unsigned long long)a->lease.ttl_ms / 1000);
		return 0;
	}
	ret = ex.n ? hbm_member_parse(a->members_prefix, &ex.kv[0], &old, err, sizeof(err)) :
		-EPROTO;
	if (report && !ret)
		alog(a, LOG_WARNING,
		     "node %u is registered already (%s port %u, incarnation %llu, lease %llx): this node before a restart on another segment, or another daemon with this id; its lease must expire first",
		     me.id, old.addr, old.port, (unsigned long long)old.incarnation,
		     (unsigned long long)ex.kv[0].lease);
	else if (report)
		alog(a, LOG_WARNING, "node %u is registered already: %s", me.id,
		     ex.n ? err : "(no value)");
	hbm_etcd_kvs_free(&ex);
	return -EEXIST;
}

/*
 * A registration taken over holds what the daemon before this one wrote:
 * if the config names another location or failure domain now, the value
 * is written again with them, under the lease taken over, so that the
 * others set this node's new distance and failure domain (theirs: a
 * change of its location or failure domain only; nothing else of the
 * value changes here: a new address would be a leave and a join, its
 * chunks lost, and is not what a restart on the same segment does).  A
 * failure is said and left: the old value still describes a live segment.
 */
static void republish(struct hbmd_agent *a, const struct hbm_member *old)
{
	struct hbm_member me = *old;
	char *val = NULL, was[3 * HBM_LOC_NAME_MAX + 8], now[3 * HBM_LOC_NAME_MAX + 8];
	int ret;

	if (hbm_location_equal(&a->conf->loc, &old->loc) &&
	    a->conf->failure_domain == old->failure_domain)
		return;
	me.loc = a->conf->loc;
	me.failure_domain = a->conf->failure_domain;
	hbm_location_format(&old->loc, was, sizeof(was));
	hbm_location_format(&me.loc, now, sizeof(now));
	ret = hbm_member_encode(&me, &val);
	if (!ret)
		ret = hbm_etcd_put(a->etcd, a->member_key, val, strlen(val), a->lease.id, NULL);
	free(val);
	if (ret)
		alog(a, LOG_WARNING,
		     "%s: writing this node's new location (%s) and failure domain (%u): %s; the others keep %s and %u",
		     a->member_key, *now ? now : "none", me.failure_domain,
		     ret == -ENOMEM ? strerror(ENOMEM) : hbm_etcd_error(a->etcd),
		     *was ? was : "none", old->failure_domain);
	else
		alog(a, LOG_NOTICE,
		     "%s: this node's location is now %s (was %s), its failure domain %u (was %u)",
		     a->member_key, *now ? now : "none", *was ? was : "none", me.failure_domain,
		     old->failure_domain);
}

/*
 * A daemon restarted on the same segment: its key is there, with our
 * incarnation, under a lease that still lives: keep that lease.  0: taken
 * over; -ENOENT: no key of this segment; -ESTALE: the key of this segment,
 * its lease gone (or going); else etcd failed (the message in the client).
 */
static int take_over(struct hbmd_agent *a, uint64_t margin, uint64_t retry)
{
	struct hbm_etcd_kvs kvs = { 0 };
	struct hbm_member old;
	int64_t ttl = 0;
	uint64_t sent;
	char err[256];
	int ret;

	ret = hbm_etcd_get(a->etcd, a->member_key, false, &kvs, NULL);
	if (ret)
		return ret;
	ret = -ENOENT;
	if (kvs.n != 1 ||
	    hbm_member_parse(a->members_prefix, &kvs.kv[0], &old, err, sizeof(err)) ||
	    old.incarnation != a->incarnation)
		goto out;
	ret = -ESTALE;
	if (!kvs.kv[0].lease)
		goto out;
	sent = now_ms();
	ret = hbm_etcd_lease_keepalive(a->etcd, kvs.kv[0].lease, &ttl, NULL);
	if (ret == -ENOENT || (!ret && ttl <= 0)) {
		ret = -ESTALE;
		goto out;
	}
	if (ret)
		goto out;
	if (hbm_lease_granted(&a->lease, kvs.kv[0].lease, ttl, sent, margin, retry)) {
		ret = -ESTALE;		/* too little of it left to renew in time */
		goto out;
	}
	/* etcd may report less than the full TTL: renew at once then */
	a->lease.ttl_ms = (uint64_t)a->conf->lease_ttl_s * 1000;
	a->lease.renew_at = sent;
	alog(a, LOG_NOTICE, "took over lease %llx of this node's registration (same segment)",
	     (unsigned long long)kvs.kv[0].lease);
	republish(a, &old);
out:
	hbm_etcd_kvs_free(&kvs);
	return ret;
}

/*
 * No live registration of this segment to take over.  If the segment was
 * registered before (its incarnation recorded), its lease ran out while no
 * daemon renewed it: the others have fenced it (its chunks on their
 * segments freed), so it must not come back as if nothing happened.  Fence
 * it here too: -ESTALE.  Else record the incarnation, before the member
 * key exists, and go on.
 */
static int check_incarnation(struct hbmd_agent *a)
{
	struct hbm_etcd_kvs kvs = { 0 };
	char val[24], err[256] = "";
	bool lapsed;
	int ret, n;

	ret = hbm_etcd_get(a->etcd, a->incarnation_key, false, &kvs, NULL);
	if (ret) {
		alog(a, LOG_ERR, "reading %s: %s", a->incarnation_key, hbm_etcd_error(a->etcd));
		return ret;
	}
	n = snprintf(val, sizeof(val), "%llu", (unsigned long long)a->incarnation);
	lapsed = kvs.n == 1 && kvs.kv[0].value_len == (size_t)n &&
		 !memcmp(kvs.kv[0].value, val, (size_t)n);
	hbm_etcd_kvs_free(&kvs);
	if (lapsed) {
		ret = a->k.ops->fence_self(a->k.ctx, err, sizeof(err));
		alog(a, LOG_ERR,
		     "this segment (incarnation %s) was a member, and its lease ran out while no daemon renewed it: the others have fenced it%s%s; it rejoins only with a new segment (hbmctl segment del, then start hbmpoold again)",
		     val, ret ? "; fencing it in this kernel failed: " : ", and so does this kernel",
		     ret ? err : "");
		return -ESTALE;
	}
	ret = hbm_etcd_put(a->etcd, a->incarnation_key, val, (size_t)n, 0, NULL);
	if (ret)
		alog(a, LOG_ERR, "recording %s: %s", a->incarnation_key, hbm_etcd_error(a->etcd));
	return ret;
}

int hbmd_agent_start(struct hbmd_agent *a)
{
	const struct hbm_config *c = a->conf;
	struct hbm_etcd_opts o = {
		.endpoints = (const char *const *)c->endpoints, .nr_endpoints = c->nr_endpoints,
		.ca_file = c->ca_file, .cert_file = c->cert_file, .key_file = c->key_file_tls,
		.connect_timeout_ms = c->connect_timeout_ms,
		.request_timeout_ms = c->request_timeout_ms,
	};
	struct hbmd_kernel_setup s = {
		.domain = c->domain, .self_id = c->node_id, .segment_bytes = c->segment_bytes,
		.addr = c->address, .port = c->port,
		.segment_device = strcmp(c->segment_provider, "shm") ? NULL : c->segment_device,
	};
	struct hbmd_kernel_node *kn = NULL;
	unsigned char key[65];
	uint64_t ttl_ms = (uint64_t)c->lease_ttl_s * 1000, margin, retry, sent;
	struct hbmd_kernel_domain dom;
	int64_t id, granted;
	char err[256] = "";
	size_t nkn = 0, i;
	uint64_t wait_until;
	unsigned int tries;
	int ret;

	/* The clocks' rate difference over a TTL, generously. */
	margin = 100 + ttl_ms / 50;
	retry = ttl_ms / 10;
	a->call_bound_ms = (uint64_t)c->request_timeout_ms * c->nr_endpoints;
	if (a->call_bound_ms + margin >= ttl_ms / 3)
		alog(a, LOG_WARNING,
		     "[etcd] request_timeout_ms x %u endpoints (%llu ms) is over a third of lease_ttl: a renewal that fails on every endpoint leaves no time for another, and the node fences",
		     c->nr_endpoints, (unsigned long long)a->call_bound_ms);
	if (hbm_members_prefix(a->members_prefix, KEY_MAX, c->etcd_prefix, c->domain) ||
	    hbm_member_key(a->member_key, KEY_MAX, c->etcd_prefix, c->domain, c->node_id) ||
	    hbm_leader_key(a->leader_key, KEY_MAX, c->etcd_prefix, c->domain) ||
	    hbm_incarnation_key(a->incarnation_key, KEY_MAX, c->etcd_prefix, c->domain,
				c->node_id) ||
	    hbm_links_prefix(a->links_prefix, KEY_MAX, c->etcd_prefix, c->domain) ||
	    hbm_drains_prefix(a->drains_prefix, KEY_MAX, c->etcd_prefix, c->domain) ||
	    hbm_repl_prefix(a->repl_prefix, KEY_MAX, c->etcd_prefix, c->domain) ||
	    hbm_repl_key(a->repl_key, KEY_MAX, c->etcd_prefix, c->domain, c->node_id) ||
	    snprintf(a->rebalance_key, KEY_MAX, "%s/%s/rebalance", c->etcd_prefix,
		     c->domain) >= KEY_MAX ||
	    snprintf(a->domain_prefix, KEY_MAX, "%s/%s/", c->etcd_prefix, c->domain) >= KEY_MAX) {
		alog(a, LOG_ERR, "etcd keys of domain %s too long", c->domain);
		return -ENAMETOOLONG;
	}

	/*
	 * The kernel's events first, then its nodes: a change after the
	 * subscription is in the events, so none falls between the two.
	 */
	if (a->k.ops->events_open) {
		ret = a->k.ops->events_open(a->k.ctx, err, sizeof(err));
		if (ret < 0)
			alog(a, LOG_WARNING,
			     "the kernel's events: %s; its changes by others are not seen until a restart",
			     err);
		a->kev_fd = ret < 0 ? -1 : ret;
	}

	/* The kernel's nodes, as this agent finds them. */
	ret = a->k.ops->nodes_read(a->k.ctx, &kn, &nkn, err, sizeof(err));
	if (ret) {
		alog(a, LOG_ERR, "reading the kernel's nodes: %s", err);
		return ret;
	}
	for (i = 0; i < nkn; i++) {
		if (!kn[i].self && kn[i].id < NR_IDS) {
			a->kstate[kn[i].id] = kn[i].state == HBMD_NODE_FENCED ? K_FENCED : K_PRESENT;
			a->kdrain[kn[i].id] = kn[i].draining;
			a->kshm[kn[i].id] = kn[i].shm;
		}
	}
	free(kn);

	/* domain, key, segment */
	ret = read_key(a, key, &s.key_len);
	if (ret)
		return ret;
	s.key = key;
	ret = a->k.ops->setup(a->k.ctx, &s, &a->incarnation, err, sizeof(err));
	explicit_bzero(key, sizeof(key));
	if (ret) {
		alog(a, LOG_ERR, "setting the kernel up: %s", err);
		return ret;
	}
	ret = kplacement_params(a);
	if (ret)
		return ret;
	/*
	 * The domain, one read.  A fenced node stops here, before etcd.  Its
	 * fence is the domain's flag, which only a new segment clears: read
	 * after setup, which kept the segment (still fenced, if it was) or
	 * made a new one (as after hbmctl segment del: the flag, still up
	 * until then, is gone).  The epoch never goes back, also across a
	 * restart: the table built from a range cannot see a deletion after
	 * the last put (membership.h).
	 */
	ret = a->k.ops->domain_read(a->k.ctx, &dom, err, sizeof(err));
	if (ret) {
		alog(a, LOG_ERR, "reading the kernel's domain (epoch, fenced): %s", err);
		return ret;
	}
	if (dom.fenced) {
		alog(a, LOG_ERR,
		     "this node is fenced in the kernel: it rejoins only with a new segment (hbmctl segment del, then start hbmpoold again)");
		return -ESTALE;
	}
	a->members.epoch = (int64_t)dom.epoch;
	a->epoch_pushed = (int64_t)dom.epoch;

	ret = hbm_etcd_open(&o, &a->etcd);
	if (!ret)
		ret = hbm_etcd_async_open(a->etcd, &a->as);
	if (!ret)
		ret = hbm_ew_open(a->as, ew_done, a, &a->ew);
	if (ret) {
		alog(a, LOG_ERR, "etcd client: %s", strerror(-ret));
		return ret;
	}
	/*
	 * Else a new lease.  This node's key held under another live lease
	 * (this node before a crash, on another segment) is waited for, as
	 * long as a lease of our TTL lasts; then it is another daemon.
	 */
	wait_until = now_ms() + ((uint64_t)c->lease_ttl_s + 2) * 1000;
	ret = take_over(a, margin, retry);
	if (ret == -ENOENT || ret == -ESTALE)
		ret = check_incarnation(a);
	else if (ret)
		alog(a, LOG_ERR, "reading %s: %s", a->member_key, hbm_etcd_error(a->etcd));
	else
		goto registered;
	if (ret)
		return ret;
	for (tries = 0;; tries++) {
		sent = now_ms();
		ret = hbm_etcd_lease_grant(a->etcd, c->lease_ttl_s, &id, &granted, NULL);
		if (ret) {
			alog(a, LOG_ERR, "lease: %s", hbm_etcd_error(a->etcd));
			return ret;
		}
		ret = hbm_lease_granted(&a->lease, id, granted, sent, margin, retry);
		if (ret) {
			alog(a, LOG_ERR, "lease of %lld s: no time to renew it", (long long)granted);
			return ret;
		}
		ret = do_register(a, !tries || now_ms() >= wait_until);
		if (!ret)
			break;
		hbm_etcd_lease_revoke(a->etcd, id, NULL);
		if (ret == -EEXIST && now_ms() >= wait_until)
			alog(a, LOG_ERR, "node %u's key did not expire: another daemon has id %u?",
			     c->node_id, c->node_id);
		if (ret != -EEXIST || now_ms() >= wait_until)
			return ret;
		if (!tries)
			alog(a, LOG_NOTICE, "waiting up to %u s for it to expire",
			     c->lease_ttl_s + 2);
		usleep(500000);
	}
registered:
	a->state = HBMD_AGENT_RUNNING;

	/*
	 * The kernel's nodes that are no members: fenced and removed by
	 * take_table() (they are in kstate, not in the empty table); members
	 * the kernel lacks are added.
	 */
	for (i = 0; i < NR_IDS; i++) {
		if (a->kstate[i] == K_FENCED)
			a->remove_due[i] = now_ms();
	}
	ret = resync(a);
	if (ret && ret != -EAGAIN && a->state == HBMD_AGENT_RUNNING) {
		a->state = HBMD_AGENT_NEW;
		return ret;
	}
	if (a->state != HBMD_AGENT_RUNNING)
		return -ESTALE;
	/* nodes in the kernel that are no members */
	for (i = 0; i < NR_IDS; i++)
		if (a->kstate[i] == K_PRESENT && !hbm_members_find(&a->members, (uint32_t)i))
			kleave(a, (uint32_t)i, "is in the kernel but no member");
	retry_adds(a);
	if (a->elect_at != UINT64_MAX)
		elect(a);
	a->health_at = now_ms();
	set_status(a);
	return 0;
}

void hbmd_agent_reconfigured(struct hbmd_agent *a)
{
	struct hbm_health_conf old = a->hconf;
	uint64_t now = now_ms();
	unsigned int i;

	hbm_health_conf_from(&a->hconf, a->conf);
	for (i = 0; i < NR_IDS; i++)
		if (a->lh[i])
			hbm_health_reconf(a->lh[i], &old, &a->hconf);
	if (a->health_at != UINT64_MAX && a->health_at > now + a->hconf.interval_ms)
		a->health_at = now + a->hconf.interval_ms;
	/* [placement]: the kernel's last resorts; a failure is said, the old values stay */
	if (a->state == HBMD_AGENT_RUNNING)
		kplacement_params(a);
	/* [distance]: the members in the kernel get the new distances now */
	if (a->state == HBMD_AGENT_RUNNING)
		for (i = 0; i < a->members.n; i++)
			kplace(a, &a->members.m[i]);
}

/* ---- the loop's side ---- */

unsigned int hbmd_agent_fds(struct hbmd_agent *a, struct pollfd *fds, unsigned int n)
{
	unsigned int k = 0;

	if (a->state != HBMD_AGENT_RUNNING)
		return 0;
	if (a->kev_fd >= 0 && k < n)
		fds[k++] = (struct pollfd){ .fd = a->kev_fd, .events = POLLIN };
	if (a->watch)
		k += hbm_etcd_awatch_fds(a->watch, fds + k, n - k);
	if (a->as)
		k += hbm_etcd_async_fds(a->as, fds + k, n - k);
	return k;
}

static uint64_t min64(uint64_t x, uint64_t y)
{
	return x < y ? x : y;
}

uint64_t hbmd_agent_deadline(const struct hbmd_agent *a)
{
	uint64_t d = UINT64_MAX;
	size_t i;

	if (a->state != HBMD_AGENT_RUNNING)
		return d;
	d = min64(d, hbm_lease_next(&a->lease));
	d = min64(d, a->watch_deadline);
	if (a->as)
		d = min64(d, hbm_etcd_async_deadline(a->as));
	if (a->watch)
		d = min64(d, a->watch_heard + watch_idle_ms(a));
	d = min64(d, a->resync_at);
	d = min64(d, a->elect_at);
	if (a->add_failed)
		d = min64(d, a->add_retry_at);
	if (a->epoch_failed)
		d = min64(d, now_ms() + HBMD_RETRY_MS);
	d = min64(d, a->health_at);
	d = min64(d, a->kdump_at);
	d = min64(d, hbmd_drainer_deadline(a->drainer));
	d = min64(d, hbmd_rebalancer_deadline(a->rebalancer));
	d = min64(d, hbmd_replicator_deadline(a->repl));
	if (a->rebalance_due && a->leader)
		d = min64(d, now_ms());
	if (a->leaving)
		d = min64(d, now_ms() + HBMD_RETRY_MS);
	for (i = 0; i < NR_IDS; i++)
		if (a->kstate[i] == K_FENCED)
			d = min64(d, a->remove_due[i]);
	return d;
}

void hbmd_agent_event(struct hbmd_agent *a, int fd, short revents)
{
	if (a->state != HBMD_AGENT_RUNNING)
		return;
	if (fd >= 0 && fd == a->kev_fd)
		kevents(a);
	else if (a->as && hbm_etcd_async_owns(a->as, fd))
		hbm_etcd_async_event(a->as, fd, revents);	/* the callbacks run here */
	else
		watch_poke(a, fd, revents);
}

static bool lease_step(struct hbmd_agent *a);

/* The keepalive answered (before the fence time: else it was cancelled). */
static void renew_done(void *arg, struct hbm_etcd_result *r)
{
	struct hbmd_agent *a = arg;
	uint64_t now = now_ms();

	a->renew_req = NULL;
	if (a->state != HBMD_AGENT_RUNNING)
		return;
	if (!r->ret && r->ttl > 0) {
		hbm_lease_renewed(&a->lease, r->ttl, now);
	} else if (r->ret == -ENOENT || !r->ret) {
		hbm_lease_failed(&a->lease, true, now);	/* etcd says it is gone */
	} else {
		hbm_lease_failed(&a->lease, false, now);
		alog(a, a->lease.failures > 1 ? LOG_WARNING : LOG_INFO,
		     "renewing lease %llx failed (%u in a row): %s",
		     (unsigned long long)a->lease.id, a->lease.failures, r->err);
	}
	lease_step(a);
}

/*
 * A keepalive, in the loop (renew_done()).  It ends by the fence time at
 * the latest (its deadline): an answer after it would come too late, and
 * the fence does not wait for it (lease_step() in every tick).
 */
static void renew(struct hbmd_agent *a)
{
	uint64_t now = now_ms();
	int ret;

	if (a->renew_req)
		return;
	hbm_lease_sent(&a->lease, now);
	ret = hbm_etcd_async_keepalive(a->as, a->lease.id, HBM_ETCD_URGENT,
				       a->lease.valid_until - a->lease.margin_ms, renew_done, a,
				       &a->renew_req);
	if (ret) {
		a->renew_req = NULL;
		hbm_lease_failed(&a->lease, false, now);
		alog(a, LOG_WARNING, "renewing lease %llx: %s", (unsigned long long)a->lease.id,
		     strerror(-ret));
	}
}

/* lease.c's decision now: renew, or fence.  True if the agent is fenced. */
static bool lease_step(struct hbmd_agent *a)
{
	enum hbm_lease_action act;
	char why[160];

	if (a->state != HBMD_AGENT_RUNNING)
		return a->state == HBMD_AGENT_FENCED;
	act = hbm_lease_tick(&a->lease, now_ms());
	if (act == HBM_LEASE_RENEW) {
		renew(a);
		act = hbm_lease_tick(&a->lease, now_ms());
	}
	if (act != HBM_LEASE_FENCE)
		return false;
	snprintf(why, sizeof(why),
		 "lease %llx could not be renewed: it may have expired on etcd (%u renewals failed)",
		 (unsigned long long)a->lease.id, a->lease.failures);
	fence(a, why);
	return true;
}

void hbmd_agent_tick(struct hbmd_agent *a)
{
	uint64_t now;
	size_t i;

	if (a->state != HBMD_AGENT_RUNNING)
		return;
	/* curl's timers, and the callbacks of requests that ended */
	if (a->as && now_ms() >= hbm_etcd_async_deadline(a->as))
		hbm_etcd_async_event(a->as, -1, 0);
	if (a->state != HBMD_AGENT_RUNNING || lease_step(a))
		return;
	now = now_ms();
	if (a->watch && now >= a->watch_deadline)
		watch_poke(a, -1, 0);
	if (a->state != HBMD_AGENT_RUNNING)
		return;
	if (a->watch && now_ms() >= a->watch_heard + watch_idle_ms(a)) {
		alog(a, LOG_DEBUG, "no word from the watch for %llu ms: checking the domain",
		     (unsigned long long)watch_idle_ms(a));
		watch_probe(a);
		a->watch_heard = now_ms();
	}
	if (!a->watch && now_ms() >= a->resync_at)
		resync_start(a);
	if (a->state != HBMD_AGENT_RUNNING)
		return;
	now = now_ms();
	for (i = 0; i < NR_IDS; i++)
		if (a->kstate[i] == K_FENCED && now >= a->remove_due[i])
			kremove(a, (uint32_t)i);
	if (a->add_failed && now >= a->add_retry_at)
		retry_adds(a);
	if (now >= a->kdump_at)
		knodes_reconcile(a);
	if (a->state != HBMD_AGENT_RUNNING)
		return;
	if (a->epoch_failed)
		push_epoch(a);
	if (now_ms() >= a->elect_at)
		elect(a);
	if (a->state == HBMD_AGENT_RUNNING && now_ms() >= a->health_at)
		sample_links(a);
	if (a->state != HBMD_AGENT_RUNNING)
		return;
	hbmd_drainer_run(a->drainer, a->drain, now_ms());
	drains_publish(a);
	rebalance_put(a);
	hbmd_rebalancer_run(a->rebalancer, any_drain(a), now_ms());
	hbmd_replicator_run(a->repl, now_ms());
	repl_publish(a);
	leave_check(a);
}

void hbmd_agent_stop(struct hbmd_agent *a, bool revoke)
{
	if (a->state != HBMD_AGENT_RUNNING)
		return;
	watch_stop(a);
	etcd_cancel_all(a);
	a->state = HBMD_AGENT_STOPPED;
	a->leader = false;
	/* shutdown: the loop serves nothing more for the agent; synchronous */
	if (revoke) {
		if (hbm_etcd_lease_revoke(a->etcd, a->lease.id, NULL))
			alog(a, LOG_WARNING, "revoking lease %llx: %s; it expires in %llu s",
			     (unsigned long long)a->lease.id, hbm_etcd_error(a->etcd),
			     (unsigned long long)a->lease.ttl_ms / 1000);
		else
			alog(a, LOG_NOTICE, "node %u left the domain (lease revoked)",
			     a->conf->node_id);
	}
	set_status(a);
}

void hbmd_agent_free(struct hbmd_agent *a)
{
	size_t i;

	if (!a)
		return;
	watch_stop(a);
	hbm_ew_free(a->ew);
	hbm_etcd_async_close(a->as);	/* no callback */
	if (a->etcd)
		hbm_etcd_close(a->etcd);
	hbm_members_free(&a->members);
	for (i = 0; i < NR_IDS; i++)
		free(a->lh[i]);
	hbm_links_free(&a->links);
	hbmd_drainer_free(a->drainer);
	hbmd_rebalancer_free(a->rebalancer);
	hbmd_replicator_free(a->repl);
	hbm_repl_view_free(&a->repl_view);
	a->k.ops->close(a->k.ctx);
	free(a);
}

enum hbmd_agent_state hbmd_agent_state(const struct hbmd_agent *a)
{
	return a->state;
}

bool hbmd_agent_is_leader(const struct hbmd_agent *a)
{
	return a->state == HBMD_AGENT_RUNNING && a->leader;
}

int hbmd_agent_leader_id(const struct hbmd_agent *a)
{
	return a->cur_known ? (int)a->cur.id : -1;
}

int64_t hbmd_agent_epoch(const struct hbmd_agent *a)
{
	return a->members.epoch;
}

size_t hbmd_agent_nr_members(const struct hbmd_agent *a)
{
	return a->members.n;
}

uint64_t hbmd_agent_incarnation(const struct hbmd_agent *a)
{
	return a->incarnation;
}

const struct hbm_lease *hbmd_agent_lease(const struct hbmd_agent *a)
{
	return &a->lease;
}

const struct hbm_links *hbmd_agent_links(const struct hbmd_agent *a)
{
	return &a->links;
}

const char *hbmd_agent_status(const struct hbmd_agent *a)
{
	return a->status;
}

/*
 * A member's location (the levels it names), and for a peer the relation,
 * distance and link type this node gives it from there (what kplace()
 * sets; the kernel may still have others, until a node-set succeeds).
 */
static int member_topology_json(const struct hbmd_agent *a, const struct hbm_member *mb,
				json_object *m)
{
	json_object *lo = json_object_new_object();
	enum hbm_relation r;
	uint32_t dist;
	int link, bad = !lo;

	if (!lo)
		return 1;
	if (*mb->loc.site)
		bad |= json_object_object_add(lo, "site", json_object_new_string(mb->loc.site));
	if (*mb->loc.rack)
		bad |= json_object_object_add(lo, "rack", json_object_new_string(mb->loc.rack));
	if (*mb->loc.tray)
		bad |= json_object_object_add(lo, "tray", json_object_new_string(mb->loc.tray));
	bad |= json_object_object_add(m, "location", lo);
	if (mb->failure_domain)
		bad |= json_object_object_add(m, "failure_domain",
					      json_object_new_int64(mb->failure_domain));
	if (mb->id == a->conf->node_id)
		return bad;
	r = peer_place(a, mb, a->kshm[mb->id], &dist, &link);
	bad |= json_object_object_add(m, "relation", json_object_new_string(hbm_relation_name(r)));
	bad |= json_object_object_add(m, "distance", json_object_new_int64(dist));
	bad |= json_object_object_add(m, "link_type",
				      json_object_new_string(hbm_link_type_name(link)));
	if (a->kstate[mb->id] == K_PRESENT)
		bad |= json_object_object_add(m, "transport",
					      json_object_new_string(a->kshm[mb->id] ? "shm" : "tcp"));
	return bad;
}

/*
 * "drain_progress": per drained node, the members' reports summed:
 * [{"node": 3, "chunks_left": 5, "bytes_left": 10485760, "failures": 0,
 *   "lost": 0, "members": 3, "reported": 2, "not_reported": [2], "done": false,
 *   "by_member": [{"id": 1, "chunks_left": 5, ...,"updated": ms}, ...]}]
 * Lost chunks are not left (nothing can move them); a drain is done when
 * every member reported and none has a chunk left.
 */
#define ADD(obj, k, v) (bad |= json_object_object_add((obj), (k), (v)))
static int drain_progress_json(const struct hbmd_agent *a, json_object *o)
{
	const struct hbmd_drain_report *r;
	json_object *arr = json_object_new_array(), *d, *bm, *m, *wait;
	uint64_t chunks, bytes, fails, lost;
	unsigned int reported;
	size_t i;
	uint32_t id;
	int bad = !arr;

	for (id = 0; arr && id < NR_IDS && !bad; id++) {
		if (!a->drain[id])
			continue;
		d = json_object_new_object();
		bm = json_object_new_array();
		wait = json_object_new_array();
		if (!d || !bm || !wait) {
			json_object_put(d);
			json_object_put(bm);
			json_object_put(wait);
			bad = 1;
			break;
		}
		chunks = bytes = fails = lost = 0;
		reported = 0;
		for (i = 0; i < a->members.n; i++) {
			r = hbmd_drainer_report_of(a->drainer, id, a->members.m[i].id);
			if (!r) {
				/* a member whose report the drain waits for */
				bad |= json_object_array_add(wait,
					json_object_new_int64(a->members.m[i].id));
				continue;
			}
			reported++;
			chunks += r->chunks_left;
			bytes += r->bytes_left;
			fails += r->failures;
			lost += r->lost;
			m = json_object_new_object();
			if (!m) {
				bad = 1;
				break;
			}
			ADD(m, "id", json_object_new_int64(r->member));
			ADD(m, "chunks_left", json_object_new_uint64(r->chunks_left));
			ADD(m, "bytes_left", json_object_new_uint64(r->bytes_left));
			ADD(m, "failures", json_object_new_uint64(r->failures));
			ADD(m, "lost", json_object_new_uint64(r->lost));
			ADD(m, "updated", json_object_new_uint64(r->updated));
			bad |= json_object_array_add(bm, m);
		}
		ADD(d, "node", json_object_new_int64(id));
		ADD(d, "chunks_left", json_object_new_uint64(chunks));
		ADD(d, "bytes_left", json_object_new_uint64(bytes));
		ADD(d, "failures", json_object_new_uint64(fails));
		ADD(d, "lost", json_object_new_uint64(lost));
		ADD(d, "members", json_object_new_int64((int64_t)a->members.n));
		ADD(d, "reported", json_object_new_int64(reported));
		ADD(d, "not_reported", wait);
		ADD(d, "done", json_object_new_boolean(drain_done(a, id)));
		ADD(d, "by_member", bm);
		bad |= json_object_array_add(arr, d);
	}
	if (arr)
		ADD(o, "drain_progress", arr);
	return bad;
}

/*
 * "replication": every member's report summed, and each report:
 * {"regions": 2, "degraded_regions": 1, "degraded_chunks": 3, "lost_chunks": 0,
 *  "members_degraded": 1,
 *  "by_member": [{"id": 1, "regions": 1, "degraded_regions": 1,
 *                 "degraded_chunks": 3, "lost_chunks": 0, "updated": ms}, ...]}
 */
static void repl_fields(json_object *o, const struct hbm_repl *r, int *bad)
{
	*bad |= json_object_object_add(o, "regions", json_object_new_uint64(r->regions));
	*bad |= json_object_object_add(o, "degraded_regions",
				       json_object_new_uint64(r->degraded_regions));
	*bad |= json_object_object_add(o, "degraded_chunks", json_object_new_uint64(r->degraded));
	*bad |= json_object_object_add(o, "lost_chunks", json_object_new_uint64(r->lost));
}

static int replication_json(const struct hbmd_agent *a, json_object *o)
{
	json_object *rj = json_object_new_object(), *bm = json_object_new_array(), *m;
	struct hbm_repl total;
	unsigned int degraded = hbm_repl_view_total(&a->repl_view, &total);
	int bad = 0;
	size_t i;

	if (!rj || !bm) {
		json_object_put(rj);
		json_object_put(bm);
		return 1;
	}
	repl_fields(rj, &total, &bad);
	bad |= json_object_object_add(rj, "members_degraded", json_object_new_int64(degraded));
	for (i = 0; i < a->repl_view.n && !bad; i++) {
		m = json_object_new_object();
		if (!m) {
			bad = 1;
			break;
		}
		bad |= json_object_object_add(m, "id",
					      json_object_new_int64(a->repl_view.rep[i].member));
		repl_fields(m, &a->repl_view.rep[i].r, &bad);
		bad |= json_object_object_add(m, "updated",
					      json_object_new_uint64(a->repl_view.rep[i].updated));
		bad |= json_object_array_add(bm, m);
	}
	bad |= json_object_object_add(rj, "by_member", bm);
	bad |= json_object_object_add(o, "replication", rj);
	return bad;
}

int hbmd_agent_json(const struct hbmd_agent *a, char **json)
{
	static const char *const states[] = { "new", "member", "fenced", "stopped" };
	static const char *const kstates[] = { "absent", "live", "fenced" };
	json_object *o = json_object_new_object(), *l, *ms, *m;
	uint64_t now = now_ms();
	int64_t proven = 0;
	char id[24];
	size_t i;
	int bad = !o;

	if (bad)
		return -ENOMEM;
	ADD(o, "node", json_object_new_int64(a->conf->node_id));
	ADD(o, "state", json_object_new_string(states[a->state]));
	ADD(o, "status", json_object_new_string(a->status));
	ADD(o, "epoch", json_object_new_int64(a->members.epoch));
	ADD(o, "leader", a->cur_known ? json_object_new_int64(a->cur.id) : NULL);
	ADD(o, "is_leader", json_object_new_boolean(hbmd_agent_is_leader(a)));
	ADD(o, "incarnation", json_object_new_uint64(a->incarnation));
	l = json_object_new_object();
	bad |= !l;
	if (l) {
		snprintf(id, sizeof(id), "%llx", (unsigned long long)a->lease.id);
		ADD(l, "id", json_object_new_string(id));
		ADD(l, "ttl_ms", json_object_new_uint64(a->lease.ttl_ms));
		if (a->lease.state == HBM_LEASE_HELD && a->lease.valid_until > now)
			proven = (int64_t)(a->lease.valid_until - now);
		ADD(l, "proven_for_ms", json_object_new_int64(proven));
		ADD(o, "lease", l);
	}
	ms = json_object_new_array();
	bad |= !ms;
	for (i = 0; ms && i < a->members.n; i++) {
		const struct hbm_member *mb = &a->members.m[i];

		m = json_object_new_object();
		if (!m) {
			bad = 1;
			break;
		}
		ADD(m, "id", json_object_new_int64(mb->id));
		ADD(m, "addr", json_object_new_string(mb->addr));
		ADD(m, "port", json_object_new_int(mb->port));
		ADD(m, "segment_bytes", json_object_new_uint64(mb->segment_bytes));
		ADD(m, "capacity", json_object_new_uint64(mb->capacity));
		ADD(m, "incarnation", json_object_new_uint64(mb->incarnation));
		ADD(m, "kernel", json_object_new_string(mb->id == a->conf->node_id ? "self" :
							kstates[a->kstate[mb->id]]));
		ADD(m, "draining", json_object_new_boolean(a->drain[mb->id]));
		bad |= member_topology_json(a, mb, m);
		bad |= json_object_array_add(ms, m);
	}
	if (ms)
		ADD(o, "members", ms);
	ms = json_object_new_array();
	bad |= !ms;
	for (i = 0; ms && i < NR_IDS; i++)
		if (a->drain[i])
			bad |= json_object_array_add(ms, json_object_new_int64((int64_t)i));
	if (ms)
		ADD(o, "drains", ms);
	ADD(o, "leaving", json_object_new_boolean(a->leaving));
	ADD(o, "left", json_object_new_boolean(a->left));
	bad |= drain_progress_json(a, o);
	bad |= replication_json(a, o);
	ms = json_object_new_array();
	bad |= !ms;
	for (i = 0; ms && i < a->links.n; i++) {
		const struct hbm_link *lk = &a->links.l[i];

		m = json_object_new_object();
		if (!m) {
			bad = 1;
			break;
		}
		ADD(m, "from", json_object_new_int64(lk->from));
		ADD(m, "to", json_object_new_int64(lk->to));
		ADD(m, "state", json_object_new_string(hbm_health_name(lk->state)));
		ADD(m, "rtt_us", json_object_new_uint64(lk->rtt_us));
		ADD(m, "error_pct", json_object_new_int64(lk->error_pct));
		ADD(m, "changes", json_object_new_uint64(lk->changes));
		ADD(m, "since", json_object_new_uint64(lk->since_ms));
		bad |= json_object_array_add(ms, m);
	}
	if (ms)
		ADD(o, "links", ms);
#undef ADD
	*json = bad ? NULL : strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return *json ? 0 : -ENOMEM;
}

int hbmd_agent_member(const struct hbmd_agent *a, size_t i, struct hbmd_agent_member *m)
{
	static const char *const kstates[] = { "absent", "live", "fenced" };
	const struct hbm_member *mb;

	if (i >= a->members.n)
		return -ENOENT;
	mb = &a->members.m[i];
	m->id = mb->id;
	m->kernel = mb->id == a->conf->node_id ? "self" : kstates[a->kstate[mb->id]];
	m->capacity = mb->capacity;
	return 0;
}

struct hbmd_kernel hbmd_agent_kernel(const struct hbmd_agent *a)
{
	return a->k;
}
