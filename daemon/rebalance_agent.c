// SPDX-License-Identifier: GPL-2.0
/*
 * The rebalancer: this node's chunk moves toward the nodes under their
 * share after a member joined: see rebalance_agent.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <json-c/json.h>
#include <linux/hbmpool_nl.h>

#include "rebalance.h"
#include "rebalance_agent.h"

#define MAX_INFLIGHT	64
#define MAX_SKIP	(2 * HBMD_REBALANCE_MAX_FAILURES)

struct hbmd_rebalancer {
	struct hbmd_kernel k;
	uint32_t self;
	unsigned int jobs;
	hbmd_rebalance_log_fn *log_fn;
	void *log_arg;

	bool active;
	uint32_t node;			/* the member whose join asked for it */
	uint64_t requested_at;		/* ms: the request */
	bool node_seen;			/* node live in this kernel: planning began */
	uint64_t pass_at;		/* UINT64_MAX: none due */
	uint32_t inflight[MAX_INFLIGHT];	/* our moves copying */
	size_t ninflight;
	unsigned int moved, failed;	/* this rebalance */
	/* chunks whose move failed in this rebalance: not tried again (a lost chunk) */
	struct { uint32_t region, chunk; } skip[MAX_SKIP];
	size_t nskip;
	uint64_t moved_total;
	bool read_failed;		/* said */
};

static void rlog(struct hbmd_rebalancer *r, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void rlog(struct hbmd_rebalancer *r, int level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->log_fn(r->log_arg, level, msg);
}

int hbmd_rebalancer_new(struct hbmd_kernel k, uint32_t self, unsigned int jobs,
			hbmd_rebalance_log_fn *log, void *log_arg, struct hbmd_rebalancer **out)
{
	struct hbmd_rebalancer *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->k = k;
	r->self = self;
	r->jobs = jobs ? jobs : 2;
	if (r->jobs > MAX_INFLIGHT)
		r->jobs = MAX_INFLIGHT;
	r->log_fn = log;
	r->log_arg = log_arg;
	r->pass_at = UINT64_MAX;
	*out = r;
	return 0;
}

void hbmd_rebalancer_free(struct hbmd_rebalancer *r)
{
	free(r);
}

void hbmd_rebalancer_request(struct hbmd_rebalancer *r, uint32_t node, uint64_t now)
{
	if (!r->active) {
		r->moved = r->failed = 0;
		r->nskip = 0;
		rlog(r, LOG_INFO, "rebalance: node %u joined; moving this node's interleaved chunks toward their shares",
		     node);
	}
	r->active = true;
	r->node = node;
	r->requested_at = now;
	r->node_seen = false;
	r->pass_at = now;
}

static void end(struct hbmd_rebalancer *r, int level, const char *why);

/*
 * The joined node live in this kernel, with its free bytes known?  Its add
 * and the transport's handshake come after the join in etcd.  A node's
 * state is live from its add on, before its link connects; its free bytes
 * become known with the link (the kernel calls a link live only once the
 * home has told them, in the answer to the first PING).  Until then a plan
 * would see the node ineligible or full and call the domain balanced: the
 * rebalance waits for it, up to HBMD_REBALANCE_JOIN_WAIT_MS.
 */
static bool node_ready(struct hbmd_rebalancer *r, const struct hbmd_kernel_node *kn, size_t nkn,
		       uint64_t now)
{
	size_t i;

	if (r->node_seen)
		return true;
	for (i = 0; i < nkn; i++)
		if (kn[i].id == r->node && !kn[i].self &&
		    kn[i].state == HBMPOOL_NODE_STATE_LIVE && kn[i].free) {
			r->node_seen = true;
			return true;
		}
	if (now >= r->requested_at + HBMD_REBALANCE_JOIN_WAIT_MS)
		end(r, LOG_WARNING, "the node never became live with room in this kernel");
	return false;
}

uint64_t hbmd_rebalancer_deadline(const struct hbmd_rebalancer *r)
{
	return r->active ? r->pass_at : UINT64_MAX;
}

bool hbmd_rebalancer_active(const struct hbmd_rebalancer *r)
{
	return r->active;
}

uint64_t hbmd_rebalancer_moved(const struct hbmd_rebalancer *r)
{
	return r->moved_total;
}

static void skip_add(struct hbmd_rebalancer *r, uint32_t region, uint32_t chunk)
{
	if (r->nskip < MAX_SKIP)
		r->skip[r->nskip++] = (typeof(r->skip[0])){ region, chunk };
}

static bool skipped(const struct hbmd_rebalancer *r, uint32_t region, uint32_t chunk)
{
	for (size_t i = 0; i < r->nskip; i++)
		if (r->skip[i].region == region && r->skip[i].chunk == chunk)
			return true;
	return false;
}

static void end(struct hbmd_rebalancer *r, int level, const char *why)
{
	rlog(r, level, "rebalance after node %u's join: %s: %u moved, %u failed", r->node, why,
	     r->moved, r->failed);
	r->active = false;
	r->pass_at = UINT64_MAX;
}

/* Our moves that ended: counted and forgotten (resync-del). */
static void follow(struct hbmd_rebalancer *r, const struct hbmd_kernel_resync *mv, size_t nmv)
{
	char err[256];
	size_t i, j;

	for (i = 0; i < r->ninflight;) {
		const struct hbmd_kernel_resync *m = NULL;

		for (j = 0; j < nmv; j++)
			if (mv[j].id == r->inflight[i])
				m = &mv[j];
		if (m && m->state == HBMPOOL_RESYNC_STATE_COPYING) {
			i++;
			continue;
		}
		if (m && m->state == HBMPOOL_RESYNC_STATE_DONE) {
			r->moved++;
			r->moved_total++;
		} else {
			r->failed++;
			if (m)
				skip_add(r, m->region, m->chunk);
			rlog(r, LOG_WARNING, "rebalance: move %u of region %u chunk %u %s%s%s",
			     r->inflight[i], m ? m->region : 0, m ? m->chunk : 0,
			     !m ? "vanished" : m->state == HBMPOOL_RESYNC_STATE_FAILED ? "failed: " :
			     "was cancelled", m && m->error ? strerror(m->error) : "", "");
		}
		if (m && r->k.ops->resync_del(r->k.ctx, m->id, err, sizeof(err)) &&
		    !strstr(err, "no such"))
			rlog(r, LOG_DEBUG, "rebalance: resync-del %u: %s", m->id, err);
		r->inflight[i] = r->inflight[--r->ninflight];
	}
}

static bool in_set(const uint64_t *set, uint32_t id)
{
	return id < HBMD_SET_WORDS * 64 && (set[id / 64] >> (id % 64)) & 1;
}

static bool set_known(const uint64_t *set)
{
	for (int i = 0; i < HBMD_SET_WORDS; i++)
		if (set[i])
			return true;
	return false;
}

/* Plan and start what fits in flight. */
static void plan(struct hbmd_rebalancer *r, const struct hbmd_kernel_node *kn, size_t nkn,
		 const struct hbmd_kernel_chunk *kc, size_t nkc)
{
	struct hbm_rb_node *nodes = calloc(nkn ? nkn : 1, sizeof(*nodes));
	struct hbm_rb_chunk *chunks = calloc(nkc ? nkc : 1, sizeof(*chunks));
	struct hbm_rb_move mv[MAX_INFLIGHT];
	size_t nn = 0, nc = 0, n, i, max;
	char err[256];

	if (!nodes || !chunks) {
		rlog(r, LOG_ERR, "rebalance: out of memory");
		goto out;
	}
	for (i = 0; i < nkn; i++) {
		if (kn[i].self || kn[i].id == r->self)
			continue;
		nodes[nn++] = (struct hbm_rb_node){
			.id = kn[i].id,
			.weight = kn[i].weight ? kn[i].weight : 1,
			.free = kn[i].free,
			.eligible = kn[i].state == HBMPOOL_NODE_STATE_LIVE && !kn[i].draining,
		};
	}
	for (i = 0; i < nkc; i++) {
		if ((kc[i].policy != HBMPOOL_PLACEMENT_POLICY_INTERLEAVE &&
		     kc[i].policy != HBMPOOL_PLACEMENT_POLICY_WEIGHTED_INTERLEAVE) ||
		    !set_known(kc[i].set) || !in_set(kc[i].set, kc[i].node) || kc[i].lost)
			continue;	/* a lost chunk takes no room where it was: not counted */
		chunks[nc++] = (struct hbm_rb_chunk){
			.region = kc[i].region,
			.chunk = kc[i].index,
			.node = kc[i].node,
			.len = kc[i].bytes,
			.set = kc[i].set,
			/* counted where it is, not moved: moving, or failed already */
			.busy = kc[i].syncing_node != HBMD_NO_NODE ||
				skipped(r, kc[i].region, kc[i].index),
		};
	}
	max = r->jobs > r->ninflight ? r->jobs - r->ninflight : 0;
	n = max ? hbm_rb_plan(nodes, nn, chunks, nc, 0, mv, max) : 0;
	for (i = 0; i < n; i++) {
		uint32_t id;
		int ret = r->k.ops->resync_new_to(r->k.ctx, mv[i].region, mv[i].chunk, mv[i].from,
						  mv[i].to, &id, err, sizeof(err));

		if (ret) {
			r->failed++;
			skip_add(r, mv[i].region, mv[i].chunk);
			rlog(r, LOG_WARNING, "rebalance: moving region %u chunk %u from %u to %u: %s",
			     mv[i].region, mv[i].chunk, mv[i].from, mv[i].to, err);
			continue;
		}
		rlog(r, LOG_INFO, "rebalance: move %u: region %u chunk %u, node %u -> %u", id,
		     mv[i].region, mv[i].chunk, mv[i].from, mv[i].to);
		r->inflight[r->ninflight++] = id;
	}
	if (!n && !r->ninflight)
		end(r, r->failed ? LOG_WARNING : LOG_NOTICE,
		    r->failed ? "done, but some chunks could not move" : "balanced");
	else if (r->failed >= HBMD_REBALANCE_MAX_FAILURES)
		end(r, LOG_WARNING, "stopped after too many failed moves, until the next join");
out:
	free(nodes);
	free(chunks);
}

void hbmd_rebalancer_run(struct hbmd_rebalancer *r, bool draining, uint64_t now)
{
	struct hbmd_kernel_node *kn = NULL;
	struct hbmd_kernel_chunk *kc = NULL;
	struct hbmd_kernel_resync *mv = NULL;
	size_t nkn = 0, nkc = 0, nmv = 0;
	char err[256];
	int ret;

	if (!r->active || now < r->pass_at)
		return;
	r->pass_at = now + HBMD_REBALANCE_PASS_MS;
	if (!r->k.ops->resync_new_to || !r->k.ops->chunks_read || !r->k.ops->resync_read) {
		end(r, LOG_WARNING, "the kernel interface has no chunk moves");
		return;
	}
	if (draining) {
		r->pass_at = now + HBMD_REBALANCE_WAIT_MS;	/* the drain first */
		return;
	}
	ret = r->k.ops->resync_read(r->k.ctx, &mv, &nmv, err, sizeof(err));
	if (!ret)
		ret = r->k.ops->nodes_read(r->k.ctx, &kn, &nkn, err, sizeof(err));
	if (!ret)
		ret = r->k.ops->chunks_read(r->k.ctx, &kc, &nkc, err, sizeof(err));
	if (ret) {
		if (!r->read_failed)
			rlog(r, LOG_WARNING, "rebalance: reading the kernel: %s; trying again", err);
		r->read_failed = true;
		goto out;
	}
	r->read_failed = false;
	follow(r, mv, nmv);
	if (node_ready(r, kn, nkn, now))
		plan(r, kn, nkn, kc, nkc);
out:
	free(kn);
	free(kc);
	free(mv);
}

int hbmd_rebalance_encode(uint32_t node, int64_t epoch, char *buf, size_t len)
{
	int n = snprintf(buf, len, "{\"node\":%u,\"epoch\":%lld}", node, (long long)epoch);

	return n < 0 || (size_t)n >= len ? -ENOMEM : 0;
}

int hbmd_rebalance_parse(const char *val, size_t len, uint32_t *node, char *err, size_t errlen)
{
	struct json_tokener *tok = json_tokener_new();
	json_object *o = NULL, *v;
	int64_t id;
	int ret = -EPROTO;

	if (!tok)
		return -ENOMEM;
	o = json_tokener_parse_ex(tok, val, (int)len);
	json_tokener_free(tok);
	if (!o || !json_object_is_type(o, json_type_object)) {
		snprintf(err, errlen, "not a JSON object");
		goto out;
	}
	if (!json_object_object_get_ex(o, "node", &v) || !json_object_is_type(v, json_type_int)) {
		snprintf(err, errlen, "no node");
		goto out;
	}
	id = json_object_get_int64(v);
	if (id < 0 || id >= HBMD_SET_WORDS * 64) {
		snprintf(err, errlen, "node %lld out of range", (long long)id);
		goto out;
	}
	*node = (uint32_t)id;
	ret = 0;
out:
	json_object_put(o);
	return ret;
}
