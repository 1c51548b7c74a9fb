// SPDX-License-Identifier: GPL-2.0
/*
 * The replicator: this node's replication summary, read from the kernel
 * and published: see replication_agent.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "replication_agent.h"

struct hbmd_replicator {
	struct hbmd_kernel k;
	hbmd_repl_log_fn *log_fn;
	void *log_arg;

	uint64_t read_at;		/* the next read, UINT64_MAX: none (no stats_read) */
	uint64_t last_read;		/* 0: none yet */
	bool read_failed;		/* said */
	bool known;			/* cur from a read */
	struct hbm_repl cur;		/* as of the last read */

	bool put;			/* the key holds sent */
	struct hbm_repl sent;
	bool inflight;			/* a put of pending */
	struct hbm_repl pending;
	uint64_t put_at;		/* the last put's answer, 0: none */
};

int hbmd_replicator_new(struct hbmd_kernel k, hbmd_repl_log_fn *log, void *log_arg,
			struct hbmd_replicator **out)
{
	struct hbmd_replicator *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->k = k;
	r->log_fn = log;
	r->log_arg = log_arg;
	/* the first read at the first run: at start */
	r->read_at = k.ops->stats_read ? 0 : UINT64_MAX;
	*out = r;
	return 0;
}

void hbmd_replicator_free(struct hbmd_replicator *r)
{
	free(r);
}

void hbmd_replicator_poke(struct hbmd_replicator *r, uint64_t at)
{
	if (!r->k.ops->stats_read)
		return;
	if (r->last_read && at < r->last_read + HBMD_REPL_READ_GAP_MS)
		at = r->last_read + HBMD_REPL_READ_GAP_MS;
	if (at < r->read_at)
		r->read_at = at;
}

/* Something for the key: it differs from what the key holds (or there is none and something to say). */
static bool wants_put(const struct hbmd_replicator *r)
{
	if (!r->known || r->inflight)
		return false;
	return r->put ? !hbm_repl_equal(&r->cur, &r->sent) : !hbm_repl_zero(&r->cur);
}

uint64_t hbmd_replicator_deadline(const struct hbmd_replicator *r)
{
	uint64_t t = r->read_at;

	if (wants_put(r) && r->put_at + HBMD_REPL_PUBLISH_MS < t)
		t = r->put_at + HBMD_REPL_PUBLISH_MS;
	return t;
}

void hbmd_replicator_run(struct hbmd_replicator *r, uint64_t now)
{
	struct hbmd_kernel_stats s;
	char err[256] = "", text[128], was[128];
	struct hbm_repl next;
	int ret;

	if (now < r->read_at)
		return;
	r->last_read = now;
	r->read_at = now + HBMD_REPL_IDLE_MS;
	ret = r->k.ops->stats_read(r->k.ctx, &s, err, sizeof(err));
	if (ret) {
		if (!r->read_failed)
			r->log_fn(r->log_arg, LOG_WARNING, err);
		r->read_failed = true;
		r->read_at = now + HBMD_REPL_READ_GAP_MS;
		return;
	}
	r->read_failed = false;
	hbm_repl_from_stats(&s, &next);
	if (r->known && hbm_repl_equal(&next, &r->cur))
		return;
	hbm_repl_text(&next, text, sizeof(text));
	if (!r->known) {
		if (!hbm_repl_zero(&next)) {
			char msg[192];

			snprintf(msg, sizeof(msg), "replication: %llu replicated region%s here, %s",
				 (unsigned long long)next.regions, next.regions == 1 ? "" : "s",
				 text);
			r->log_fn(r->log_arg, hbm_repl_degraded(&next) ? LOG_WARNING : LOG_INFO,
				  msg);
		}
	} else if (hbm_repl_degraded(&next) || hbm_repl_degraded(&r->cur)) {
		char msg[320];

		hbm_repl_text(&r->cur, was, sizeof(was));
		snprintf(msg, sizeof(msg), "replication of this node's regions: %s (was: %s)", text,
			 was);
		r->log_fn(r->log_arg,
			  next.degraded > r->cur.degraded || next.lost > r->cur.lost ? LOG_WARNING :
										     LOG_INFO, msg);
	}
	r->cur = next;
	r->known = true;
}

bool hbmd_replicator_summary(const struct hbmd_replicator *r, struct hbm_repl *s)
{
	if (!r->known)
		return false;
	*s = r->cur;
	return true;
}

void hbmd_replicator_seen(struct hbmd_replicator *r, const struct hbm_repl *s)
{
	if (r->inflight)
		return;		/* the put's answer says */
	r->put = s != NULL;
	if (s)
		r->sent = *s;
}

bool hbmd_replicator_publish_due(struct hbmd_replicator *r, uint64_t now, uint64_t wall,
				 char *val, size_t len)
{
	if (!wants_put(r) || (r->put_at && now < r->put_at + HBMD_REPL_PUBLISH_MS))
		return false;
	if (hbm_repl_encode(&r->cur, wall, val, len))
		return false;
	r->inflight = true;
	r->pending = r->cur;
	return true;
}

void hbmd_replicator_publish_done(struct hbmd_replicator *r, int ret, uint64_t now)
{
	if (!r->inflight)
		return;
	r->inflight = false;
	r->put_at = now;	/* a failure: again in HBMD_REPL_PUBLISH_MS */
	if (ret)
		return;
	r->put = true;
	r->sent = r->pending;
}
