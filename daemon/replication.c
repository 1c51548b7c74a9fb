// SPDX-License-Identifier: GPL-2.0
/*
 * The members' replication summaries: see replication.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <json-c/json.h>

#include "membership.h"
#include "replication.h"
#include "sorted.h"

void hbm_repl_from_stats(const struct hbmd_kernel_stats *s, struct hbm_repl *r)
{
	r->regions = s->replicated_regions;
	r->degraded_regions = s->degraded_regions;
	/* lost chunks are degraded too: kept so whatever the sums say */
	r->degraded = s->degraded_chunks > s->lost_chunks ? s->degraded_chunks : s->lost_chunks;
	r->lost = s->lost_chunks;
	if (r->degraded && !r->degraded_regions)
		r->degraded_regions = 1;	/* at least one region holds them */
	if (r->degraded_regions > r->degraded)
		r->degraded_regions = r->degraded;
}

bool hbm_repl_equal(const struct hbm_repl *a, const struct hbm_repl *b)
{
	return a->regions == b->regions && a->degraded_regions == b->degraded_regions &&
	       a->degraded == b->degraded && a->lost == b->lost;
}

bool hbm_repl_degraded(const struct hbm_repl *r)
{
	return r->degraded || r->lost;
}

bool hbm_repl_zero(const struct hbm_repl *r)
{
	return !r->regions && !hbm_repl_degraded(r);
}

int hbm_repl_prefix(char *buf, size_t len, const char *prefix, const char *domain)
{
	int n = snprintf(buf, len, "%s/%s/replication/", prefix, domain);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int hbm_repl_key(char *buf, size_t len, const char *prefix, const char *domain, uint32_t id)
{
	int n;

	if (id > HBM_MEMBER_MAX_ID)
		return -EINVAL;
	n = snprintf(buf, len, "%s/%s/replication/%" PRIu32, prefix, domain, id);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int hbm_repl_key_id(const char *repl_prefix, const char *key, uint32_t *id)
{
	/* the same form as a drain's key: PREFIX then the decimal id */
	return hbm_drain_id(repl_prefix, key, id);
}

int hbm_repl_encode(const struct hbm_repl *r, uint64_t wall_ms, char *buf, size_t len)
{
	int n = snprintf(buf, len,
			 "{\"regions\":%" PRIu64 ",\"degraded_regions\":%" PRIu64
			 ",\"degraded_chunks\":%" PRIu64 ",\"lost_chunks\":%" PRIu64
			 ",\"updated\":%" PRIu64 "}",
			 r->regions, r->degraded_regions, r->degraded, r->lost, wall_ms);

	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

int hbm_repl_parse(const char *val, size_t len, struct hbm_repl *r, uint64_t *updated,
		   char *err, size_t errlen)
{
	static const uint64_t max = UINT64_MAX - 1;
	struct hbm_repl x = { 0 };
	uint64_t up = 0;
	json_object *o;
	int ret;

	if (!val || !len) {
		snprintf(err, errlen, "an empty value");
		return -EPROTO;
	}
	o = hbm_json_object(val, len, err, errlen);
	if (!o)
		return -EPROTO;
	ret = hbm_json_u64(o, "regions", 0, max, &x.regions, err, errlen);
	ret = ret ? ret : hbm_json_u64(o, "degraded_regions", 0, max, &x.degraded_regions, err,
				       errlen);
	ret = ret ? ret : hbm_json_u64(o, "degraded_chunks", 0, max, &x.degraded, err, errlen);
	ret = ret ? ret : hbm_json_u64(o, "lost_chunks", 0, max, &x.lost, err, errlen);
	ret = ret ? ret : hbm_json_u64(o, "updated", 0, max, &up, err, errlen);
	json_object_put(o);
	if (ret)
		return -EPROTO;
	if (x.lost > x.degraded) {
		snprintf(err, errlen, "\"lost_chunks\" %" PRIu64 " > \"degraded_chunks\" %" PRIu64
			 " (lost chunks are degraded too)", x.lost, x.degraded);
		return -EPROTO;
	}
	if (x.degraded_regions > x.degraded || (x.degraded && !x.degraded_regions)) {
		snprintf(err, errlen, "\"degraded_regions\" %" PRIu64 " does not fit %" PRIu64
			 " degraded chunks", x.degraded_regions, x.degraded);
		return -EPROTO;
	}
	*r = x;
	*updated = up;
	return 0;
}

void hbm_repl_text(const struct hbm_repl *r, char *buf, size_t len)
{
	if (!hbm_repl_degraded(r)) {
		snprintf(buf, len, "all copies good");
		return;
	}
	snprintf(buf, len, "%" PRIu64 " chunk%s of %" PRIu64 " region%s degraded, %" PRIu64 " lost",
		 r->degraded, r->degraded == 1 ? "" : "s", r->degraded_regions,
		 r->degraded_regions == 1 ? "" : "s", r->lost);
}

int hbm_repl_change(uint32_t member, const struct hbm_repl *was, const struct hbm_repl *now,
		    char *msg, size_t len)
{
	static const struct hbm_repl none;
	char text[128];

	if (!was)
		was = &none;
	if (!now) {
		if (!hbm_repl_degraded(was))
			return -1;
		hbm_repl_text(was, text, sizeof(text));
		snprintf(msg, len, "member %" PRIu32 ": gone (its report went with its lease) with %s",
			 member, text);
		return LOG_INFO;
	}
	if (!hbm_repl_degraded(now)) {
		if (!hbm_repl_degraded(was))
			return -1;
		snprintf(msg, len, "member %" PRIu32 ": replication restored", member);
		return LOG_INFO;
	}
	if (now->degraded == was->degraded && now->lost == was->lost &&
	    now->degraded_regions == was->degraded_regions)
		return -1;
	hbm_repl_text(now, text, sizeof(text));
	snprintf(msg, len, "member %" PRIu32 ": %s", member, text);
	return now->degraded > was->degraded || now->lost > was->lost ? LOG_WARNING : LOG_INFO;
}

/* ---- the domain's view ---- */

void hbm_repl_view_init(struct hbm_repl_view *v)
{
	memset(v, 0, sizeof(*v));
}

void hbm_repl_view_free(struct hbm_repl_view *v)
{
	free(v->rep);
	hbm_repl_view_init(v);
}

void hbm_repl_view_clear(struct hbm_repl_view *v)
{
	v->n = 0;
}

static int report_cmp(const void *key, const void *elem)
{
	uint32_t a = *(const uint32_t *)key, b = ((const struct hbm_repl_report *)elem)->member;

	return (a > b) - (a < b);
}

/* The index of member's report, or where it goes (*found false). */
static size_t view_pos(const struct hbm_repl_view *v, uint32_t member, bool *found)
{
	return hbm_sorted_pos(v->rep, v->n, sizeof(v->rep[0]), &member, report_cmp, found);
}

static void view_drop(struct hbm_repl_view *v, size_t i)
{
	memmove(&v->rep[i], &v->rep[i + 1], (v->n - i - 1) * sizeof(v->rep[0]));
	v->n--;
}

int hbm_repl_view_set(struct hbm_repl_view *v, uint32_t member, const char *val, size_t len,
		      char *err, size_t errlen)
{
	struct hbm_repl_report r = { .member = member };
	bool found;
	size_t i = view_pos(v, member, &found);
	int ret;

	if (!val) {
		if (found)
			view_drop(v, i);
		return 0;
	}
	ret = hbm_repl_parse(val, len, &r.r, &r.updated, err, errlen);
	if (ret) {
		if (found)
			view_drop(v, i);	/* a bad value is no report */
		return ret;
	}
	if (!found) {
		if (v->n == v->cap) {
			size_t cap = v->cap ? 2 * v->cap : 16;
			struct hbm_repl_report *p = realloc(v->rep, cap * sizeof(*p));

			if (!p)
				return -ENOMEM;
			v->rep = p;
			v->cap = cap;
		}
		memmove(&v->rep[i + 1], &v->rep[i], (v->n - i) * sizeof(v->rep[0]));
		v->n++;
	}
	v->rep[i] = r;
	return 0;
}

const struct hbm_repl_report *hbm_repl_view_find(const struct hbm_repl_view *v, uint32_t member)
{
	bool found;
	size_t i = view_pos(v, member, &found);

	return found ? &v->rep[i] : NULL;
}

unsigned int hbm_repl_view_total(const struct hbm_repl_view *v, struct hbm_repl *total)
{
	unsigned int bad = 0;
	size_t i;

	memset(total, 0, sizeof(*total));
	for (i = 0; i < v->n; i++) {
		const struct hbm_repl *r = &v->rep[i].r;

		total->regions += r->regions;
		total->degraded_regions += r->degraded_regions;
		total->degraded += r->degraded;
		total->lost += r->lost;
		bad += hbm_repl_degraded(r);
	}
	return bad;
}
