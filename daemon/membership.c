// SPDX-License-Identifier: GPL-2.0
/*
 * The domain's membership from etcd's keys, as pure logic: see
 * membership.h.  Values come from other nodes through etcd: untrusted,
 * every field checked.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "membership.h"
#include "sorted.h"

static int keyf(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int keyf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int hbm_members_prefix(char *buf, size_t len, const char *prefix, const char *domain)
{
	return keyf(buf, len, "%s/%s/members/", prefix, domain);
}

int hbm_member_key(char *buf, size_t len, const char *prefix, const char *domain, uint32_t id)
{
	if (id > HBM_MEMBER_MAX_ID)
		return -EINVAL;
	return keyf(buf, len, "%s/%s/members/%" PRIu32, prefix, domain, id);
}

int hbm_incarnation_key(char *buf, size_t len, const char *prefix, const char *domain,
			uint32_t id)
{
	if (id > HBM_MEMBER_MAX_ID)
		return -EINVAL;
	return keyf(buf, len, "%s/%s/incarnations/%" PRIu32, prefix, domain, id);
}

int hbm_drains_prefix(char *buf, size_t len, const char *prefix, const char *domain)
{
	return keyf(buf, len, "%s/%s/drains/", prefix, domain);
}

int hbm_drain_key(char *buf, size_t len, const char *prefix, const char *domain, uint32_t id)
{
	if (id > HBM_MEMBER_MAX_ID)
		return -EINVAL;
	return keyf(buf, len, "%s/%s/drains/%" PRIu32, prefix, domain, id);
}

int hbm_drain_id(const char *drains_prefix, const char *key, uint32_t *id)
{
	size_t n = strlen(drains_prefix);
	const char *p = key + n;
	uint32_t v = 0;

	if (strncmp(key, drains_prefix, n) || !*p || (*p == '0' && p[1]))
		return -EPROTO;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EPROTO;
		v = v * 10 + (uint32_t)(*p - '0');
		if (v > HBM_MEMBER_MAX_ID)
			return -EPROTO;
	}
	*id = v;
	return 0;
}

int hbm_leader_key(char *buf, size_t len, const char *prefix, const char *domain)
{
	return keyf(buf, len, "%s/%s/leader", prefix, domain);
}

/* ---- values ---- */

static int add_u64(json_object *o, const char *name, uint64_t v)
{
	json_object *j = json_object_new_uint64(v);

	if (!j || json_object_object_add(o, name, j)) {
		json_object_put(j);
		return -ENOMEM;
	}
	return 0;
}

static int to_string(json_object *o, char **json)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);

	*json = s ? strdup(s) : NULL;
	json_object_put(o);
	return *json ? 0 : -ENOMEM;
}

static int add_string(json_object *o, const char *name, const char *v)
{
	json_object *j = json_object_new_string(v);

	if (!j || json_object_object_add(o, name, j)) {
		json_object_put(j);
		return -ENOMEM;
	}
	return 0;
}

/* "location": only the levels named; nothing when none is. */
static int add_location(json_object *o, const struct hbm_location *l)
{
	json_object *lo;
	int ret = 0;

	if (!hbm_location_known(l))
		return 0;
	lo = json_object_new_object();
	if (!lo)
		return -ENOMEM;
	if (*l->site)
		ret = add_string(lo, "site", l->site);
	if (!ret && *l->rack)
		ret = add_string(lo, "rack", l->rack);
	if (!ret && *l->tray)
		ret = add_string(lo, "tray", l->tray);
	if (!ret && json_object_object_add(o, "location", lo))
		ret = -ENOMEM;
	else if (!ret)
		return 0;
	json_object_put(lo);
	return ret;
}

int hbm_member_encode(const struct hbm_member *m, char **json)
{
	json_object *o = json_object_new_object(), *a;
	int ret;

	*json = NULL;
	if (!o)
		return -ENOMEM;
	ret = add_u64(o, "id", m->id);
	a = ret ? NULL : json_object_new_string(m->addr);
	if (!ret && (!a || json_object_object_add(o, "addr", a))) {
		json_object_put(a);
		ret = -ENOMEM;
	}
	ret = ret ? ret : add_u64(o, "port", m->port);
	ret = ret ? ret : add_u64(o, "segment_bytes", m->segment_bytes);
	ret = ret ? ret : add_u64(o, "capacity", m->capacity);
	ret = ret ? ret : add_u64(o, "incarnation", m->incarnation);
	ret = ret ? ret : add_location(o, &m->loc);
	if (!ret && m->failure_domain)
		ret = add_u64(o, "failure_domain", m->failure_domain);
	if (ret) {
		json_object_put(o);
		return ret;
	}
	return to_string(o, json);
}

int hbm_leader_encode(uint32_t id, uint64_t incarnation, char **json)
{
	json_object *o = json_object_new_object();
	int ret;

	*json = NULL;
	if (!o)
		return -ENOMEM;
	ret = add_u64(o, "id", id);
	ret = ret ? ret : add_u64(o, "incarnation", incarnation);
	if (ret) {
		json_object_put(o);
		return ret;
	}
	return to_string(o, json);
}

/*
 * The value as one JSON object and nothing else (trailing whitespace
 * aside).  NULL with the reason in err.
 */
static json_object *parse_object(const char *v, size_t len, char *err, size_t errlen)
{
	enum json_tokener_error jerr;
	json_tokener *tok;
	char *copy;
	json_object *o;
	size_t end;

	if (memchr(v, '\0', len)) {
		snprintf(err, errlen, "a NUL byte in the value");
		return NULL;
	}
	if (len > 65536) {
		snprintf(err, errlen, "a value of %zu bytes (at most 65536)", len);
		return NULL;
	}
	/* a copy with its NUL: json-c needs an end to know that "3" is complete */
	copy = malloc(len + 1);
	tok = json_tokener_new();
	if (!tok || !copy) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	memcpy(copy, v, len);
	copy[len] = '\0';
	o = json_tokener_parse_ex(tok, copy, (int)len + 1);
	jerr = json_tokener_get_error(tok);
	if (!o && jerr == json_tokener_success) {
		snprintf(err, errlen, "not a JSON object");	/* null */
		goto fail;
	}
	if (!o) {
		snprintf(err, errlen, "not JSON: %s", jerr == json_tokener_continue ?
			 "unexpected end" : json_tokener_error_desc(jerr));
		goto fail;
	}
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	free(copy);
	while (end < len && strchr(" \t\r\n", v[end]))
		end++;
	if (end < len) {
		snprintf(err, errlen, "data after the JSON object");
		json_object_put(o);
		return NULL;
	}
	if (!json_object_is_type(o, json_type_object)) {
		snprintf(err, errlen, "not a JSON object");
		json_object_put(o);
		return NULL;
	}
	return o;
fail:
	if (tok)
		json_tokener_free(tok);
	free(copy);
	return NULL;
}

/* A required unsigned integer field in [min, max]. */
static int get_u64(json_object *o, const char *name, uint64_t min, uint64_t max, uint64_t *out,
		   char *err, size_t errlen)
{
	json_object *v;
	uint64_t u;

	if (!json_object_object_get_ex(o, name, &v)) {
		snprintf(err, errlen, "no \"%s\"", name);
		return -EPROTO;
	}
	if (!json_object_is_type(v, json_type_int)) {
		snprintf(err, errlen, "\"%s\" is not an integer", name);
		return -EPROTO;
	}
	errno = 0;
	if (json_object_get_int64(v) < 0) {
		snprintf(err, errlen, "\"%s\" is negative", name);
		return -EPROTO;
	}
	u = json_object_get_uint64(v);
	if (errno == ERANGE || u == UINT64_MAX) {
		/* json-c clamps what does not fit to UINT64_MAX */
		snprintf(err, errlen, "\"%s\" is too large", name);
		return -EPROTO;
	}
	if (u < min || u > max) {
		snprintf(err, errlen, "\"%s\" %" PRIu64 " is out of range %" PRIu64 "..%" PRIu64,
			 name, u, min, max);
		return -EPROTO;
	}
	*out = u;
	return 0;
}

/* The id at the end of a key: decimal 0..1023, no sign, no leading zero. */
static int key_id(const char *s, uint32_t *id)
{
	uint32_t v = 0;
	const char *p;

	if (!*s || (s[0] == '0' && s[1]) || strlen(s) > 4)
		return -EINVAL;
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		v = v * 10 + (*p - '0');
	}
	if (v > HBM_MEMBER_MAX_ID)
		return -EINVAL;
	*id = v;
	return 0;
}

/* An optional name of "location" into buf ("" if absent). */
static int get_loc_name(json_object *lo, const char *name, char *buf, char *err, size_t errlen)
{
	json_object *v;

	buf[0] = '\0';
	if (!json_object_object_get_ex(lo, name, &v))
		return 0;
	if (!json_object_is_type(v, json_type_string) || !json_object_get_string_len(v) ||
	    json_object_get_string_len(v) > HBM_LOC_NAME_MAX ||
	    strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v) ||
	    !hbm_location_name_valid(json_object_get_string(v))) {
		snprintf(err, errlen, "\"location\" \"%s\" is not a name of 1..%d A-Z a-z 0-9 . _ -",
			 name, HBM_LOC_NAME_MAX);
		return -EPROTO;
	}
	strcpy(buf, json_object_get_string(v));
	return 0;
}

/* The optional "location": absent (a daemon before locations) is none known. */
static int get_location(json_object *o, struct hbm_location *l, char *err, size_t errlen)
{
	json_object *lo;
	int ret;

	memset(l, 0, sizeof(*l));
	if (!json_object_object_get_ex(o, "location", &lo))
		return 0;
	if (!json_object_is_type(lo, json_type_object)) {
		snprintf(err, errlen, "\"location\" is not an object");
		return -EPROTO;
	}
	ret = get_loc_name(lo, "site", l->site, err, errlen);
	if (!ret)
		ret = get_loc_name(lo, "rack", l->rack, err, errlen);
	if (!ret)
		ret = get_loc_name(lo, "tray", l->tray, err, errlen);
	return ret;
}

static int member_fields(json_object *o, uint32_t kid, struct hbm_member *m, char *err,
			 size_t errlen)
{
	struct in6_addr a;
	json_object *v;
	uint64_t u;
	int ret;

	ret = get_u64(o, "id", 0, HBM_MEMBER_MAX_ID, &u, err, errlen);
	if (ret)
		return ret;
	if (u != kid) {
		snprintf(err, errlen, "\"id\" %" PRIu64 " is not the key's %" PRIu32, u, kid);
		return -EPROTO;
	}
	m->id = u;
	if (!json_object_object_get_ex(o, "addr", &v) || !json_object_is_type(v, json_type_string)) {
		snprintf(err, errlen, "no \"addr\" string");
		return -EPROTO;
	}
	if (json_object_get_string_len(v) >= HBM_ADDR_MAX ||
	    strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v) ||
	    (inet_pton(AF_INET, json_object_get_string(v), &a) != 1 &&
	     inet_pton(AF_INET6, json_object_get_string(v), &a) != 1)) {
		snprintf(err, errlen, "\"addr\" is not an IPv4 or IPv6 address");
		return -EPROTO;
	}
	strcpy(m->addr, json_object_get_string(v));
	ret = get_u64(o, "port", 1, 65535, &u, err, errlen);
	if (ret)
		return ret;
	m->port = u;
	ret = get_u64(o, "segment_bytes", 0, UINT64_MAX - 1, &m->segment_bytes, err, errlen);
	if (!ret)
		ret = get_u64(o, "capacity", 0, m->segment_bytes, &m->capacity, err, errlen);
	if (!ret)
		ret = get_u64(o, "incarnation", 1, UINT64_MAX - 1, &m->incarnation, err, errlen);
	if (!ret)
		ret = get_location(o, &m->loc, err, errlen);
	/* Optional: absent (a daemon before failure domains, or none) is 0. */
	if (!ret && json_object_object_get_ex(o, "failure_domain", &v)) {
		ret = get_u64(o, "failure_domain", 0, UINT32_MAX, &u, err, errlen);
		m->failure_domain = (uint32_t)u;
	}
	return ret;
}

int hbm_member_parse(const char *members_prefix, const struct hbm_etcd_kv *kv,
		     struct hbm_member *m, char *err, size_t errlen)
{
	size_t plen = strlen(members_prefix);
	char why[192];
	json_object *o;
	uint32_t kid;
	int ret;

	memset(m, 0, sizeof(*m));
	if (kv->key_len != strlen(kv->key) || strncmp(kv->key, members_prefix, plen)) {
		snprintf(err, errlen, "%.*s: not under %s", (int)strnlen(kv->key, 128), kv->key,
			 members_prefix);
		return -EPROTO;
	}
	if (key_id(kv->key + plen, &kid)) {
		snprintf(err, errlen, "%.*s: the key does not end in an id 0..%d", (int)strnlen(kv->key, 128),
			 kv->key, HBM_MEMBER_MAX_ID);
		return -EPROTO;
	}
	o = parse_object(kv->value ? kv->value : "", kv->value_len, why, sizeof(why));
	if (!o) {
		snprintf(err, errlen, "%s: %s", kv->key, why);
		return -EPROTO;
	}
	ret = member_fields(o, kid, m, why, sizeof(why));
	json_object_put(o);
	if (ret) {
		snprintf(err, errlen, "%s: %s", kv->key, why);
		memset(m, 0, sizeof(*m));
		return ret;
	}
	m->create_revision = kv->create_revision;
	m->mod_revision = kv->mod_revision;
	m->lease = kv->lease;
	return 0;
}

int hbm_leader_parse(const struct hbm_etcd_kv *kv, struct hbm_leader *l, char *err,
		     size_t errlen)
{
	char why[192];
	json_object *o;
	uint64_t id = 0, inc = 0;
	int ret;

	memset(l, 0, sizeof(*l));
	o = parse_object(kv->value ? kv->value : "", kv->value_len, why, sizeof(why));
	if (!o) {
		snprintf(err, errlen, "%s: %s", kv->key, why);
		return -EPROTO;
	}
	ret = get_u64(o, "id", 0, HBM_MEMBER_MAX_ID, &id, why, sizeof(why));
	if (!ret)
		ret = get_u64(o, "incarnation", 1, UINT64_MAX - 1, &inc, why, sizeof(why));
	json_object_put(o);
	if (!ret && kv->lease <= 0) {
		/* a leader that cannot lose its key would lead for ever */
		snprintf(why, sizeof(why), "the leader key has no lease");
		ret = -EPROTO;
	}
	if (ret) {
		snprintf(err, errlen, "%s: %s", kv->key, why);
		return ret;
	}
	l->id = id;
	l->incarnation = inc;
	l->lease = kv->lease;
	l->term = kv->create_revision;
	return 0;
}

/* ---- the table ---- */

static int err_add(struct hbm_members *t, const char *msg)
{
	size_t old = t->errors ? strlen(t->errors) : 0, n = strlen(msg);
	char *p = realloc(t->errors, old + n + 2);

	if (!p)
		return -ENOMEM;
	memcpy(p + old, msg, n);
	p[old + n] = '\n';
	p[old + n + 1] = '\0';
	t->errors = p;
	return 0;
}

static int by_id(const void *a, const void *b)
{
	const struct hbm_member *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

void hbm_members_free(struct hbm_members *t)
{
	free(t->m);
	free(t->errors);
	memset(t, 0, sizeof(*t));
}

int hbm_members_build(const char *members_prefix, const struct hbm_etcd_kv *kvs, size_t n,
		      struct hbm_members *out)
{
	char err[320];
	size_t i, j, k;
	int ret;

	memset(out, 0, sizeof(*out));
	if (n) {
		out->m = calloc(n, sizeof(*out->m));
		if (!out->m)
			return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		if (kvs[i].mod_revision > out->epoch)
			out->epoch = kvs[i].mod_revision;
		if (hbm_member_parse(members_prefix, &kvs[i], &out->m[out->n], err, sizeof(err))) {
			out->bad++;
			if (err_add(out, err))
				goto err_nomem;
			continue;
		}
		out->n++;
	}
	if (out->n)
		qsort(out->m, out->n, sizeof(*out->m), by_id);
	/* one key per id in etcd; a duplicate means a broken source: refuse both */
	for (i = 0, k = 0; i < out->n; i = j) {
		for (j = i + 1; j < out->n && out->m[j].id == out->m[i].id; j++)
			;
		if (j - i > 1) {
			snprintf(err, sizeof(err), "member %" PRIu32 ": %zu entries", out->m[i].id,
				 j - i);
			out->bad += j - i;
			if (err_add(out, err))
				goto err_nomem;
			continue;
		}
		out->m[k++] = out->m[i];
	}
	out->n = k;
	return 0;
err_nomem:
	ret = -ENOMEM;
	hbm_members_free(out);
	return ret;
}

int hbm_members_copy(const struct hbm_members *src, struct hbm_members *dst)
{
	memset(dst, 0, sizeof(*dst));
	if (src->n) {
		dst->m = malloc(src->n * sizeof(*dst->m));
		if (!dst->m)
			return -ENOMEM;
		memcpy(dst->m, src->m, src->n * sizeof(*dst->m));
	}
	if (src->errors) {
		dst->errors = strdup(src->errors);
		if (!dst->errors) {
			free(dst->m);
			dst->m = NULL;
			return -ENOMEM;
		}
	}
	dst->n = src->n;
	dst->epoch = src->epoch;
	dst->bad = src->bad;
	return 0;
}

/* The index of id, or where it would go (*found false). */
static int member_cmp(const void *key, const void *elem)
{
	uint32_t a = *(const uint32_t *)key, b = ((const struct hbm_member *)elem)->id;

	return (a > b) - (a < b);
}

static size_t lookup(const struct hbm_members *t, uint32_t id, bool *found)
{
	return hbm_sorted_pos(t->m, t->n, sizeof(t->m[0]), &id, member_cmp, found);
}

const struct hbm_member *hbm_members_find(const struct hbm_members *t, uint32_t id)
{
	bool found;
	size_t i = lookup(t, id, &found);

	return found ? &t->m[i] : NULL;
}

static void remove_at(struct hbm_members *t, size_t i)
{
	memmove(&t->m[i], &t->m[i + 1], (t->n - i - 1) * sizeof(*t->m));
	t->n--;
}

int hbm_members_apply(struct hbm_members *t, const char *members_prefix,
		      const struct hbm_etcd_event *ev, char *err, size_t errlen)
{
	size_t plen = strlen(members_prefix), i;
	struct hbm_member m, *p;
	uint32_t id;
	bool found;
	int ret;

	if (ev->kv.mod_revision > t->epoch)
		t->epoch = ev->kv.mod_revision;
	if (ev->type == HBM_ETCD_EV_DELETE) {
		if (ev->kv.key_len != strlen(ev->kv.key) ||
		    strncmp(ev->kv.key, members_prefix, plen) || key_id(ev->kv.key + plen, &id)) {
			snprintf(err, errlen, "%.*s: not a member key", (int)strnlen(ev->kv.key, 128),
				 ev->kv.key);
			return -EPROTO;
		}
		i = lookup(t, id, &found);
		if (found)
			remove_at(t, i);
		return 0;
	}
	ret = hbm_member_parse(members_prefix, &ev->kv, &m, err, errlen);
	if (ret) {
		/* the key's old value is gone: so is the member, if the key was one */
		if (ev->kv.key_len == strlen(ev->kv.key) &&
		    !strncmp(ev->kv.key, members_prefix, plen) && !key_id(ev->kv.key + plen, &id)) {
			i = lookup(t, id, &found);
			if (found)
				remove_at(t, i);
		}
		return ret;
	}
	i = lookup(t, m.id, &found);
	if (found) {
		t->m[i] = m;
		return 0;
	}
	p = realloc(t->m, (t->n + 1) * sizeof(*t->m));
	if (!p)
		return -ENOMEM;
	t->m = p;
	memmove(&t->m[i + 1], &t->m[i], (t->n - i) * sizeof(*t->m));
	t->m[i] = m;
	t->n++;
	return 0;
}

static unsigned int changes(const struct hbm_member *a, const struct hbm_member *b)
{
	unsigned int c = 0;

	if (strcmp(a->addr, b->addr) || a->port != b->port)
		c |= HBM_MCH_ADDR;
	if (a->segment_bytes != b->segment_bytes)
		c |= HBM_MCH_SEGMENT;
	if (a->capacity != b->capacity)
		c |= HBM_MCH_CAPACITY;
	if (a->incarnation != b->incarnation)
		c |= HBM_MCH_INCARNATION;
	if (!hbm_location_equal(&a->loc, &b->loc))
		c |= HBM_MCH_LOCATION;
	if (a->failure_domain != b->failure_domain)
		c |= HBM_MCH_FAILURE_DOMAIN;
	return c;
}

int hbm_members_diff(const struct hbm_members *a, const struct hbm_members *b,
		     struct hbm_member_event **ev, size_t *n)
{
	struct hbm_member_event *e;
	size_t i = 0, j = 0, k = 0;
	unsigned int c;

	*ev = NULL;
	*n = 0;
	if (!a->n && !b->n)
		return 0;
	e = calloc(a->n + b->n, sizeof(*e));	/* at most one event per id of either */
	if (!e)
		return -ENOMEM;
	while (i < a->n || j < b->n) {
		if (j == b->n || (i < a->n && a->m[i].id < b->m[j].id)) {
			e[k].type = HBM_MEMBER_LEAVE;
			e[k].id = a->m[i].id;
			e[k++].old = a->m[i++];
		} else if (i == a->n || b->m[j].id < a->m[i].id) {
			e[k].type = HBM_MEMBER_JOIN;
			e[k].id = b->m[j].id;
			e[k++].new = b->m[j++];
		} else {
			c = changes(&a->m[i], &b->m[j]);
			if (c) {
				e[k].type = HBM_MEMBER_CHANGE;
				e[k].id = a->m[i].id;
				e[k].changed = c;
				e[k].old = a->m[i];
				e[k++].new = b->m[j];
			}
			i++;
			j++;
		}
	}
	if (!k) {
		free(e);
		return 0;
	}
	*ev = e;
	*n = k;
	return 0;
}

json_object *hbm_json_object(const char *v, size_t len, char *err, size_t errlen)
{
	return parse_object(v, len, err, errlen);
}

int hbm_json_u64(json_object *o, const char *name, uint64_t min, uint64_t max, uint64_t *out,
		 char *err, size_t errlen)
{
	return get_u64(o, name, min, max, out, err, errlen);
}

/* ---- topology (topology.h) ---- */

bool hbm_location_name_valid(const char *s)
{
	size_t n = strlen(s);

	if (n > HBM_LOC_NAME_MAX)
		return false;
	for (; *s; s++)
		if (!(*s >= 'a' && *s <= 'z') && !(*s >= 'A' && *s <= 'Z') &&
		    !(*s >= '0' && *s <= '9') && *s != '-' && *s != '_' && *s != '.')
			return false;
	return true;
}

bool hbm_location_known(const struct hbm_location *l)
{
	return *l->site || *l->rack || *l->tray;
}

bool hbm_location_equal(const struct hbm_location *a, const struct hbm_location *b)
{
	return !strcmp(a->site, b->site) && !strcmp(a->rack, b->rack) && !strcmp(a->tray, b->tray);
}

int hbm_location_format(const struct hbm_location *l, char *buf, size_t len)
{
	int ret;

	if (!hbm_location_known(l))
		ret = keyf(buf, len, "%s", "");
	else
		ret = keyf(buf, len, "%s/%s/%s", *l->site ? l->site : "-",
			   *l->rack ? l->rack : "-", *l->tray ? l->tray : "-");
	return ret ? -ENOSPC : 0;
}

enum hbm_relation hbm_topology_relation(const struct hbm_location *self,
					const struct hbm_location *peer)
{
	bool site_same = !strcmp(self->site, peer->site);
	bool rack_same = site_same && !strcmp(self->rack, peer->rack);

	if (rack_same && *self->tray && !strcmp(self->tray, peer->tray))
		return HBM_REL_TRAY;
	if (site_same && *self->rack && !strcmp(self->rack, peer->rack))
		return HBM_REL_RACK;
	if (*self->site && site_same)
		return HBM_REL_SITE;
	return HBM_REL_OTHER;
}

const char *hbm_relation_name(enum hbm_relation r)
{
	switch (r) {
	case HBM_REL_TRAY:
		return "tray";
	case HBM_REL_RACK:
		return "rack";
	case HBM_REL_SITE:
		return "site";
	case HBM_REL_OTHER:
	case HBM_REL_COUNT:
		break;
	}
	return "other";
}

int hbm_topology_link_type(const struct hbm_location *self, const struct hbm_location *peer)
{
	switch (hbm_topology_relation(self, peer)) {
	case HBM_REL_TRAY:
		return HBM_LINK_SCALEUP;
	case HBM_REL_RACK:
	case HBM_REL_SITE:
		return HBM_LINK_SCALEOUT;
	default:
		/* across sites only when both name theirs; else not known to be */
		return *self->site && *peer->site ? HBM_LINK_SCALEACROSS : HBM_LINK_SCALEOUT;
	}
}

enum hbm_relation hbm_topology_place(const struct hbm_location *self,
				     const struct hbm_location *peer,
				     const struct hbm_distances *dist, uint32_t *distance,
				     int *link_type)
{
	enum hbm_relation r = hbm_topology_relation(self, peer);

	*distance = dist->d[r];
	*link_type = hbm_topology_link_type(self, peer);
	return r;
}

const char *hbm_link_type_name(int link_type)
{
	switch (link_type) {
	case HBM_LINK_SCALEUP:
		return "scaleup";
	case HBM_LINK_SCALEOUT:
		return "scaleout";
	case HBM_LINK_SCALEACROSS:
		return "scaleacross";
	}
	return "?";
}
