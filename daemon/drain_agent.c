// SPDX-License-Identifier: GPL-2.0
/*
 * The drainer: this node's chunk moves off drained nodes, and the members'
 * progress: see drain_agent.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <json-c/json.h>
#include <linux/hbmpool_nl.h>

#include "drain_agent.h"

#define NIDS	(HBMD_DRAIN_MAX_ID + 1)

struct pub {
	bool known;			/* progress from a pass */
	bool put;			/* a key in etcd */
	struct hbm_drain_progress p;	/* as of the last pass */
	struct hbm_drain_progress sent;	/* as last put */
	uint64_t at;			/* the last put */
};

struct hbmd_drainer {
	struct hbmd_kernel k;
	uint32_t self;
	unsigned int conf_jobs;
	uint32_t mbps;
	hbmd_drain_log_fn *log_fn;
	void *log_arg;

	struct hbm_drain plan;
	uint64_t pass_at;		/* UINT64_MAX: none due */
	uint64_t last_pass;		/* when the last pass ran */
	bool active;			/* a drain exists */
	unsigned int jobs;		/* the limit of this drain, 0: not read yet */
	bool params_done;		/* [drain] mbps set (or said) */
	bool unsupported;		/* the kernel has no chunk moves (said) */
	bool read_failed;		/* said */
	struct pub pub[NIDS];

	struct hbmd_drain_report *rep;
	size_t nrep, caprep;
};

static void dlog(struct hbmd_drainer *d, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void dlog(struct hbmd_drainer *d, int level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	d->log_fn(d->log_arg, level, msg);
}

int hbmd_drainer_new(struct hbmd_kernel k, uint32_t self, unsigned int jobs, uint32_t mbps,
		     hbmd_drain_log_fn *log, void *log_arg, struct hbmd_drainer **out)
{
	struct hbmd_drainer *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	d->k = k;
	d->self = self;
	d->conf_jobs = jobs;
	d->mbps = mbps;
	d->log_fn = log;
	d->log_arg = log_arg;
	d->pass_at = UINT64_MAX;
	hbm_drain_init(&d->plan);
	*out = d;
	return 0;
}

void hbmd_drainer_free(struct hbmd_drainer *d)
{
	if (!d)
		return;
	hbm_drain_free(&d->plan);
	free(d->rep);
	free(d);
}

void hbmd_drainer_poke(struct hbmd_drainer *d, uint64_t at)
{
	/* a burst of events (each move says how it goes every second): one pass */
	if (d->last_pass && at < d->last_pass + HBMD_DRAIN_EVENT_GAP_MS)
		at = d->last_pass + HBMD_DRAIN_EVENT_GAP_MS;
	if (at < d->pass_at)
		d->pass_at = at;
}

static bool pub_differs(const struct hbm_drain_progress *a, const struct hbm_drain_progress *b)
{
	return a->chunks_left != b->chunks_left || a->bytes_left != b->bytes_left ||
	       a->failures != b->failures || a->lost != b->lost;
}

uint64_t hbmd_drainer_deadline(const struct hbmd_drainer *d)
{
	uint64_t t = d->active || d->pass_at != UINT64_MAX ? d->pass_at : UINT64_MAX;
	size_t id;

	for (id = 0; id < NIDS; id++) {
		const struct pub *p = &d->pub[id];

		if (p->known && (!p->put || pub_differs(&p->p, &p->sent)) &&
		    p->at + HBMD_DRAIN_PUBLISH_MS < t)
			t = p->at + HBMD_DRAIN_PUBLISH_MS;
	}
	return t;
}

/* The kernel has no chunk moves: said once, the drains only stop new chunks. */
static bool unsupported(struct hbmd_drainer *d, int ret, const char *err)
{
	if (ret != -EOPNOTSUPP && ret != -ENOSYS)
		return false;
	if (!d->unsupported)
		dlog(d, LOG_WARNING,
		     "drains: this kernel cannot move chunks (%s): drained nodes take no new chunks, but this node's chunks stay on them",
		     err);
	d->unsupported = true;
	return true;
}

/* [drain] mbps, and the limit of moves at once: once per drain. */
static void params(struct hbmd_drainer *d)
{
	char err[256] = "";
	uint32_t kjobs = 0;
	int ret;

	if (d->jobs)
		return;
	if (!d->k.ops->resync_params) {
		d->jobs = d->conf_jobs ? d->conf_jobs : 4;
		return;
	}
	ret = d->k.ops->resync_params(d->k.ctx, d->params_done ? UINT32_MAX : d->mbps, &kjobs,
				      err, sizeof(err));
	if (ret && !d->params_done)
		dlog(d, LOG_WARNING, "drains: [drain] mbps %u: %s", d->mbps, err);
	else if (!d->params_done && d->mbps != UINT32_MAX)
		dlog(d, LOG_INFO, "drains: chunk moves copy at most %u MiB/s ([drain] mbps)",
		     d->mbps);
	d->params_done = true;
	d->jobs = d->conf_jobs ? d->conf_jobs : kjobs ? kjobs : 4;
	dlog(d, LOG_INFO, "drains: at most %u chunk moves at once (%s)", d->jobs,
	     d->conf_jobs ? "[drain] jobs" : kjobs ? "the kernel's resync-jobs" : "default");
}

static int move_state(int s)
{
	switch (s) {
	case HBMPOOL_RESYNC_STATE_DONE:
		return HBM_DRAIN_DONE;
	case HBMPOOL_RESYNC_STATE_FAILED:
		return HBM_DRAIN_FAILED;
	case HBMPOOL_RESYNC_STATE_CANCELLED:
		return HBM_DRAIN_CANCELLED;
	default:
		return HBM_DRAIN_COPYING;
	}
}

static void pass(struct hbmd_drainer *d, const bool *drain, uint64_t now)
{
	struct hbmd_kernel_chunk *kc = NULL;
	struct hbmd_kernel_resync *km = NULL;
	struct hbm_drain_chunk *c = NULL;
	struct hbm_drain_move *m = NULL;
	struct hbm_drain_pass p = { 0 };
	size_t nkc = 0, nkm = 0, nc = 0, i;
	char err[256] = "";
	uint32_t mid;
	int ret;

	d->pass_at = now + HBMD_DRAIN_IDLE_MS;
	d->last_pass = now;
	if (!d->k.ops->chunks_read) {
		/* an ops table without regions (a test's): nothing to move */
		for (i = 0; i < NIDS; i++)
			if (drain[i] && !d->pub[i].known) {
				memset(&d->pub[i].p, 0, sizeof(d->pub[i].p));
				d->pub[i].known = true;
			}
		d->pass_at = UINT64_MAX;
		return;
	}
	if (!d->unsupported)
		params(d);
	ret = d->k.ops->chunks_read(d->k.ctx, &kc, &nkc, err, sizeof(err));
	if (!ret && !d->unsupported && d->k.ops->resync_read) {
		ret = d->k.ops->resync_read(d->k.ctx, &km, &nkm, err, sizeof(err));
		if (unsupported(d, ret, err))
			ret = 0;	/* the chunks are still counted */
	} else if (!ret && !d->k.ops->resync_read) {
		unsupported(d, -EOPNOTSUPP, "no resync_read");
	}
	if (ret) {
		if (!d->read_failed)
			dlog(d, LOG_WARNING, "drains: reading the kernel: %s (again in %d ms)", err,
			     HBM_DRAIN_PASS_MS);
		d->read_failed = true;
		d->pass_at = now + HBM_DRAIN_PASS_MS;
		goto out;
	}
	d->read_failed = false;
	c = calloc(nkc + 1, sizeof(*c));
	m = calloc(nkm + 1, sizeof(*m));
	if (!c || !m)
		goto nomem;
	for (i = 0; i < nkc; i++) {
		if (kc[i].node > HBMD_DRAIN_MAX_ID || !drain[kc[i].node])
			continue;
		c[nc++] = (struct hbm_drain_chunk){ .region = kc[i].region, .chunk = kc[i].index,
			.node = kc[i].node, .bytes = kc[i].bytes,
			.syncing = kc[i].syncing_node != HBMD_NO_NODE, .lost = kc[i].lost };
	}
	for (i = 0; i < nkm; i++)
		m[i] = (struct hbm_drain_move){ .id = km[i].id, .region = km[i].region,
			.chunk = km[i].chunk, .from = km[i].from,
			.state = move_state(km[i].state), .error = km[i].error };
	if (hbm_drain_plan(&d->plan, c, nc, m, nkm, d->jobs, now, &p))
		goto nomem;
	/* best effort: the kernel forgets an ended move in 60 s anyway */
	for (i = 0; i < p.nforget && d->k.ops->resync_del; i++)
		d->k.ops->resync_del(d->k.ctx, p.forget[i], err, sizeof(err));
	for (i = 0; i < p.ngave_up; i++) {
		const struct hbm_drain_chunk *g = &c[p.gave_up[i]];
		const struct hbm_drain_entry *e = hbm_drain_find(&d->plan, g->region, g->chunk);

		dlog(d, LOG_ERR,
		     "drain of node %u: region %u chunk %u could not be moved %u times (last: %s): given up for now, tried again every %d s",
		     g->node, g->region, g->chunk, e ? e->failures : 0,
		     e ? strerror(e->last_error) : "?", HBM_DRAIN_BACKOFF_MAX_MS / 1000);
	}
	for (i = 0; i < p.npick && d->k.ops->resync_new && !d->unsupported; i++) {
		const struct hbm_drain_chunk *pc = &c[p.pick[i]];

		mid = 0;
		ret = d->k.ops->resync_new(d->k.ctx, pc->region, pc->chunk, pc->node, &mid, err,
					   sizeof(err));
		if (unsupported(d, ret, err))
			break;
		if (ret && ret != -EBUSY)
			dlog(d, LOG_WARNING,
			     "drain of node %u: moving region %u chunk %u: %s (retried with back-off)",
			     pc->node, pc->region, pc->chunk, err);
		else if (!ret)
			dlog(d, LOG_DEBUG, "drain of node %u: region %u chunk %u moving (move %u)",
			     pc->node, pc->region, pc->chunk, mid);
		if (hbm_drain_issued(&d->plan, pc, ret, mid, now))
			goto nomem;
	}
	if (p.next_ms < d->pass_at)
		d->pass_at = p.next_ms;
	for (i = 0; i < NIDS; i++) {
		if (!drain[i])
			continue;
		uint64_t was = d->pub[i].known ? d->pub[i].p.lost : 0;

		hbm_drain_progress(&d->plan, c, nc, (uint32_t)i, &d->pub[i].p);
		d->pub[i].known = true;
		if (d->pub[i].p.lost > was)
			dlog(d, LOG_WARNING,
			     "drain of node %u: %llu chunks of this node's regions on it are lost (their home lost the memory that held them): nothing to move, not waited for",
			     (uint32_t)i, (unsigned long long)d->pub[i].p.lost);
	}
	goto out;
nomem:
	dlog(d, LOG_ERR, "drains: out of memory (again in %d ms)", HBM_DRAIN_PASS_MS);
	d->pass_at = now + HBM_DRAIN_PASS_MS;
out:
	hbm_drain_pass_free(&p);
	free(c);
	free(m);
	free(kc);
	free(km);
}

void hbmd_drainer_run(struct hbmd_drainer *d, const bool *drain, uint64_t now)
{
	bool any = false;
	size_t i;

	for (i = 0; i < NIDS && !any; i++)
		any = drain[i];
	if (!any) {
		if (d->active) {
			hbm_drain_free(&d->plan);
			hbm_drain_init(&d->plan);
			d->jobs = 0;
		}
		d->active = false;
		d->pass_at = UINT64_MAX;
		return;
	}
	if (!d->active) {
		d->active = true;
		d->jobs = 0;
		if (d->pass_at > now)
			d->pass_at = now;
	}
	if (now >= d->pass_at)
		pass(d, drain, now);
}

bool hbmd_drainer_publish_due(struct hbmd_drainer *d, uint32_t id, uint64_t now, uint64_t wall,
			      char *val, size_t len)
{
	struct pub *p;

	if (id > HBMD_DRAIN_MAX_ID)
		return false;
	p = &d->pub[id];
	if (!p->known || (p->put && !pub_differs(&p->p, &p->sent)))
		return false;
	if (p->at && now < p->at + HBMD_DRAIN_PUBLISH_MS)
		return false;
	snprintf(val, len,
		 "{\"chunks_left\":%" PRIu64 ",\"bytes_left\":%" PRIu64 ",\"failures\":%" PRIu64
		 ",\"lost\":%" PRIu64 ",\"updated\":%" PRIu64 "}", p->p.chunks_left,
		 p->p.bytes_left, p->p.failures, p->p.lost, wall);
	return true;
}

void hbmd_drainer_published(struct hbmd_drainer *d, uint32_t id, uint64_t now)
{
	if (id > HBMD_DRAIN_MAX_ID)
		return;
	d->pub[id].put = true;
	d->pub[id].sent = d->pub[id].p;
	d->pub[id].at = now;
}

void hbmd_drainer_publish_later(struct hbmd_drainer *d, uint32_t id, uint64_t now)
{
	if (id <= HBMD_DRAIN_MAX_ID)
		d->pub[id].at = now;
}

bool hbmd_drainer_end(struct hbmd_drainer *d, uint32_t id)
{
	bool put;

	if (id > HBMD_DRAIN_MAX_ID)
		return false;
	put = d->pub[id].put;
	memset(&d->pub[id], 0, sizeof(d->pub[id]));
	return put;
}

bool hbmd_drainer_progress(const struct hbmd_drainer *d, uint32_t id,
			   struct hbm_drain_progress *p)
{
	if (id > HBMD_DRAIN_MAX_ID || !d->pub[id].known)
		return false;
	*p = d->pub[id].p;
	return true;
}

/* ---- keys and the members' reports ---- */

static int parse_id(const char **s, uint32_t *id)
{
	const char *p = *s;
	uint32_t v = 0;

	if (*p < '0' || *p > '9' || (*p == '0' && p[1] >= '0' && p[1] <= '9'))
		return -EPROTO;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (uint32_t)(*p - '0');
		if (v > HBMD_DRAIN_MAX_ID)
			return -EPROTO;
	}
	*id = v;
	*s = p;
	return 0;
}

int hbmd_drain_key_parse(const char *drains_prefix, const char *key, uint32_t *node,
			 uint32_t *member)
{
	size_t n = strlen(drains_prefix);
	const char *p = key + n;

	if (strncmp(key, drains_prefix, n) || parse_id(&p, node))
		return -EPROTO;
	if (!*p) {
		*member = UINT32_MAX;
		return 0;
	}
	if (strncmp(p, "/progress/", 10))
		return -EPROTO;
	p += 10;
	if (parse_id(&p, member) || *p)
		return -EPROTO;
	return 0;
}

static struct hbmd_drain_report *rep_find(const struct hbmd_drainer *d, uint32_t node,
					  uint32_t member)
{
	size_t i;

	for (i = 0; i < d->nrep; i++)
		if (d->rep[i].node == node && d->rep[i].member == member)
			return &d->rep[i];
	return NULL;
}

const struct hbmd_drain_report *hbmd_drainer_report_of(const struct hbmd_drainer *d,
							uint32_t node, uint32_t member)
{
	return rep_find(d, node, member);
}

void hbmd_drainer_reports_clear(struct hbmd_drainer *d)
{
	d->nrep = 0;
}

static int get_u64(json_object *o, const char *name, uint64_t *v, char *err, size_t errlen)
{
	json_object *f;
	int64_t x;

	if (!json_object_object_get_ex(o, name, &f) || !json_object_is_type(f, json_type_int)) {
		snprintf(err, errlen, "no integer \"%s\"", name);
		return -EPROTO;
	}
	errno = 0;
	x = json_object_get_int64(f);
	if (errno || x < 0) {
		snprintf(err, errlen, "\"%s\" out of range", name);
		return -EPROTO;
	}
	*v = (uint64_t)x;
	return 0;
}

int hbmd_drainer_report(struct hbmd_drainer *d, uint32_t node, uint32_t member,
			const char *val, size_t len, char *err, size_t errlen)
{
	struct hbmd_drain_report r = { .node = node, .member = member }, *e;
	json_object *o;
	int ret;

	e = rep_find(d, node, member);
	if (!val) {
		if (e)
			*e = d->rep[--d->nrep];
		return 0;
	}
	o = json_tokener_parse(len ? val : "");
	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		snprintf(err, errlen, "not a JSON object");
		ret = -EPROTO;
		goto bad;
	}
	ret = get_u64(o, "chunks_left", &r.chunks_left, err, errlen);
	ret = ret ? ret : get_u64(o, "bytes_left", &r.bytes_left, err, errlen);
	ret = ret ? ret : get_u64(o, "failures", &r.failures, err, errlen);
	ret = ret ? ret : get_u64(o, "updated", &r.updated, err, errlen);
	/* "lost" is optional: members of an earlier version do not say it */
	if (!ret && json_object_object_get_ex(o, "lost", NULL))
		ret = get_u64(o, "lost", &r.lost, err, errlen);
	json_object_put(o);
	if (ret)
		goto bad;
	if (!e) {
		if (d->nrep == d->caprep) {
			size_t cap = d->caprep ? 2 * d->caprep : 16;

			e = realloc(d->rep, cap * sizeof(*e));
			if (!e)
				return -ENOMEM;
			d->rep = e;
			d->caprep = cap;
		}
		e = &d->rep[d->nrep++];
	}
	*e = r;
	return 0;
bad:
	if (e)
		*e = d->rep[--d->nrep];	/* a bad value is no report */
	return ret;
}
