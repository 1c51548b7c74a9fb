// SPDX-License-Identifier: GPL-2.0
/*
 * The domain's link matrix from etcd's keys, as pure logic: see links.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "links.h"
#include "membership.h"
#include "sorted.h"

int hbm_links_prefix(char *buf, size_t len, const char *prefix, const char *domain)
{
	int n = snprintf(buf, len, "%s/%s/links/", prefix, domain);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int hbm_link_key(char *buf, size_t len, const char *prefix, const char *domain, uint32_t from,
		 uint32_t to)
{
	int n;

	if (from > HBM_MEMBER_MAX_ID || to > HBM_MEMBER_MAX_ID || from == to)
		return -EINVAL;
	n = snprintf(buf, len, "%s/%s/links/%" PRIu32 "/%" PRIu32, prefix, domain, from, to);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int add(json_object *o, const char *name, json_object *v)
{
	if (!v || json_object_object_add(o, name, v)) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

int hbm_link_encode(const struct hbm_link *l, char **json)
{
	json_object *o = json_object_new_object();
	const char *s;
	int ret;

	*json = NULL;
	if (!o)
		return -ENOMEM;
	ret = add(o, "state", json_object_new_string(hbm_health_name(l->state)));
	ret = ret ? ret : add(o, "rtt_us", json_object_new_uint64(l->rtt_us));
	ret = ret ? ret : add(o, "error_pct", json_object_new_uint64(l->error_pct));
	ret = ret ? ret : add(o, "changes", json_object_new_uint64(l->changes));
	ret = ret ? ret : add(o, "since", json_object_new_uint64(l->since_ms));
	if (!ret) {
		s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
		*json = s ? strdup(s) : NULL;
		ret = *json ? 0 : -ENOMEM;
	}
	json_object_put(o);
	return ret;
}

/* An id 0..1023, decimal, no sign, no leading zero, ending at *end ('/' or NUL). */
static int id_at(const char *s, char stop, uint32_t *id, const char **end)
{
	uint32_t v = 0;
	const char *p = s;

	for (; *p && *p != stop; p++) {
		if (*p < '0' || *p > '9' || p - s >= 4)
			return -EINVAL;
		v = v * 10 + (uint32_t)(*p - '0');
	}
	if (p == s || (s[0] == '0' && p - s > 1) || v > HBM_MEMBER_MAX_ID || *p != stop)
		return -EINVAL;
	*id = v;
	*end = p;
	return 0;
}

/* FROM/TO after the prefix. */
static int key_ids(const char *links_prefix, const struct hbm_etcd_kv *kv, uint32_t *from,
		   uint32_t *to)
{
	size_t plen = strlen(links_prefix);
	const char *p;

	if (kv->key_len != strlen(kv->key) || strncmp(kv->key, links_prefix, plen) ||
	    id_at(kv->key + plen, '/', from, &p) || id_at(p + 1, '\0', to, &p) || *from == *to)
		return -EINVAL;
	return 0;
}

int hbm_link_parse(const char *links_prefix, const struct hbm_etcd_kv *kv, struct hbm_link *l,
		   char *err, size_t errlen)
{
	char why[192];
	json_object *o, *v;
	uint64_t u;
	int ret;

	memset(l, 0, sizeof(*l));
	if (key_ids(links_prefix, kv, &l->from, &l->to)) {
		snprintf(err, errlen, "%.*s: not %sFROM/TO with two ids 0..%d", (int)strnlen(kv->key, 128),
			 kv->key, links_prefix, HBM_MEMBER_MAX_ID);
		return -EPROTO;
	}
	o = hbm_json_object(kv->value ? kv->value : "", kv->value_len, why, sizeof(why));
	if (!o) {
		snprintf(err, errlen, "%s: %s", kv->key, why);
		return -EPROTO;
	}
	ret = -EPROTO;
	if (!json_object_object_get_ex(o, "state", &v) || !json_object_is_type(v, json_type_string) ||
	    hbm_health_from_name(json_object_get_string(v), &l->state))
		snprintf(why, sizeof(why), "\"state\" is not up, degraded or down");
	else if (!hbm_json_u64(o, "rtt_us", 0, UINT64_MAX - 1, &l->rtt_us, why, sizeof(why)) &&
		 !hbm_json_u64(o, "error_pct", 0, 100, &u, why, sizeof(why)) &&
		 !hbm_json_u64(o, "changes", 0, UINT64_MAX - 1, &l->changes, why, sizeof(why)) &&
		 !hbm_json_u64(o, "since", 0, UINT64_MAX - 1, &l->since_ms, why, sizeof(why))) {
		l->error_pct = (unsigned int)u;
		ret = 0;
	}
	json_object_put(o);
	if (ret) {
		snprintf(err, errlen, "%s: %s", kv->key, why);
		memset(l, 0, sizeof(*l));
		return ret;
	}
	l->mod_revision = kv->mod_revision;
	l->lease = kv->lease;
	return 0;
}

static int cmp(uint32_t f1, uint32_t t1, uint32_t f2, uint32_t t2)
{
	if (f1 != f2)
		return f1 < f2 ? -1 : 1;
	return t1 < t2 ? -1 : t1 > t2;
}

static int by_ids(const void *a, const void *b)
{
	const struct hbm_link *x = a, *y = b;

	return cmp(x->from, x->to, y->from, y->to);
}

/* The index of (from, to), or where it would go. */
static size_t lookup(const struct hbm_links *t, uint32_t from, uint32_t to, bool *found)
{
	const struct hbm_link key = { .from = from, .to = to };

	return hbm_sorted_pos(t->l, t->n, sizeof(t->l[0]), &key, by_ids, found);
}

int hbm_links_build(const char *links_prefix, const struct hbm_etcd_kv *kvs, size_t n,
		    struct hbm_links *out)
{
	char err[320];
	size_t i, k;

	memset(out, 0, sizeof(*out));
	if (!n)
		return 0;
	out->l = calloc(n, sizeof(*out->l));
	if (!out->l)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (hbm_link_parse(links_prefix, &kvs[i], &out->l[out->n], err, sizeof(err)))
			out->bad++;
		else
			out->n++;
	}
	qsort(out->l, out->n, sizeof(*out->l), by_ids);
	/* one key per pair in etcd: a duplicate cannot be; keep the last */
	for (i = 0, k = 0; i < out->n; i++) {
		if (k && out->l[k - 1].from == out->l[i].from && out->l[k - 1].to == out->l[i].to)
			k--;
		out->l[k++] = out->l[i];
	}
	out->n = k;
	return 0;
}

static void remove_at(struct hbm_links *t, size_t i)
{
	memmove(&t->l[i], &t->l[i + 1], (t->n - i - 1) * sizeof(*t->l));
	t->n--;
}

int hbm_links_apply(struct hbm_links *t, const char *links_prefix,
		    const struct hbm_etcd_event *ev, char *err, size_t errlen)
{
	struct hbm_link l, *p;
	uint32_t from, to;
	bool found;
	size_t i;
	int ret;

	if (ev->type == HBM_ETCD_EV_DELETE) {
		if (key_ids(links_prefix, &ev->kv, &from, &to)) {
			snprintf(err, errlen, "%.*s: not a link key", (int)strnlen(ev->kv.key, 128),
				 ev->kv.key);
			return -EPROTO;
		}
		i = lookup(t, from, to, &found);
		if (found)
			remove_at(t, i);
		return 0;
	}
	ret = hbm_link_parse(links_prefix, &ev->kv, &l, err, errlen);
	if (ret) {
		if (!key_ids(links_prefix, &ev->kv, &from, &to)) {
			i = lookup(t, from, to, &found);
			if (found)
				remove_at(t, i);
		}
		return ret;
	}
	i = lookup(t, l.from, l.to, &found);
	if (found) {
		t->l[i] = l;
		return 0;
	}
	p = realloc(t->l, (t->n + 1) * sizeof(*t->l));
	if (!p)
		return -ENOMEM;
	t->l = p;
	memmove(&t->l[i + 1], &t->l[i], (t->n - i) * sizeof(*t->l));
	t->l[i] = l;
	t->n++;
	return 0;
}

const struct hbm_link *hbm_links_find(const struct hbm_links *t, uint32_t from, uint32_t to)
{
	bool found;
	size_t i = lookup(t, from, to, &found);

	return found ? &t->l[i] : NULL;
}

void hbm_links_free(struct hbm_links *t)
{
	free(t->l);
	memset(t, 0, sizeof(*t));
}
