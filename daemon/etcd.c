// SPDX-License-Identifier: GPL-2.0
/*
 * etcd v3 over its JSON gateway, with libcurl and json-c: see etcd.h.
 *
 * One curl easy handle serves the synchronous calls (it keeps the
 * connection alive between them); a watch has a handle of its own.
 * Replies are untrusted input: every field is type-checked, and anything
 * unexpected is -EPROTO with a message, never a crash.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <json-c/json.h>

#include "base64.h"
#include "etcd.h"
#include "etcd_impl.h"


static void seterr(struct hbm_etcd *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void seterr(struct hbm_etcd *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->err, sizeof(e->err), fmt, ap);
	va_end(ap);
}

const char *hbm_etcd_error(const struct hbm_etcd *e)
{
	return e->err;
}

const char *hbm_etcd_endpoint(const struct hbm_etcd *e)
{
	return e->endpoints[e->cur];
}

void hbm_etcd_kv_free(struct hbm_etcd_kv *kv)
{
	free(kv->key);
	free(kv->value);
	memset(kv, 0, sizeof(*kv));
}

void hbm_etcd_kvs_free(struct hbm_etcd_kvs *kvs)
{
	size_t i;

	for (i = 0; i < kvs->n; i++)
		hbm_etcd_kv_free(&kvs->kv[i]);
	free(kvs->kv);
	memset(kvs, 0, sizeof(*kvs));
}

/* ---- JSON helpers: untrusted input ---- */

/*
 * A 64-bit integer field: the gateway writes int64 as a string, uint64 too;
 * a JSON number is accepted as well.  Absent: 0 (proto3 leaves zeros out).
 */
static int j_int(json_object *o, const char *name, int64_t *out, char *err, size_t errlen)
{
	json_object *v;
	const char *s;
	char *end;

	*out = 0;
	if (!json_object_object_get_ex(o, name, &v) || json_object_is_type(v, json_type_null))
		return 0;
	if (json_object_is_type(v, json_type_int)) {
		*out = json_object_get_int64(v);
		return 0;
	}
	if (!json_object_is_type(v, json_type_string))
		goto bad;
	s = json_object_get_string(v);
	if (!*s || (*s != '-' && (*s < '0' || *s > '9')))
		goto bad;
	errno = 0;
	*out = strtoll(s, &end, 10);
	if (*end || errno == ERANGE) {
		/* a uint64 over INT64_MAX (lease and member ids are int64 in etcd) */
		goto bad;
	}
	return 0;
bad:
	snprintf(err, errlen, "\"%s\" is not a 64-bit integer", name);
	return -EPROTO;
}

static int j_bool(json_object *o, const char *name, bool *out, char *err, size_t errlen)
{
	json_object *v;

	*out = false;
	if (!json_object_object_get_ex(o, name, &v) || json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_boolean)) {
		snprintf(err, errlen, "\"%s\" is not a boolean", name);
		return -EPROTO;
	}
	*out = json_object_get_boolean(v);
	return 0;
}

/* A base64 field into a NUL-terminated buffer; absent: "" when !required. */
static int j_b64(json_object *o, const char *name, bool required, char **out, size_t *len,
		 char *err, size_t errlen)
{
	json_object *v;
	int ret;

	if (!json_object_object_get_ex(o, name, &v) || json_object_is_type(v, json_type_null)) {
		if (required) {
			snprintf(err, errlen, "no \"%s\"", name);
			return -EPROTO;
		}
		return hbm_b64_decode("", out, len);
	}
	if (!json_object_is_type(v, json_type_string)) {
		snprintf(err, errlen, "\"%s\" is not a string", name);
		return -EPROTO;
	}
	ret = hbm_b64_decode(json_object_get_string(v), out, len);
	if (ret == -EINVAL) {
		snprintf(err, errlen, "\"%s\" is not base64", name);
		return -EPROTO;
	}
	return ret;
}

/* An object field; absent is fine (NULL) unless required. */
static int j_obj(json_object *o, const char *name, bool required, json_object **out, char *err,
		 size_t errlen)
{
	json_object *v;

	*out = NULL;
	if (!json_object_object_get_ex(o, name, &v) || json_object_is_type(v, json_type_null)) {
		if (!required)
			return 0;
		snprintf(err, errlen, "no \"%s\"", name);
		return -EPROTO;
	}
	if (!json_object_is_type(v, json_type_object)) {
		snprintf(err, errlen, "\"%s\" is not an object", name);
		return -EPROTO;
	}
	*out = v;
	return 0;
}

static int j_header_rev(json_object *o, int64_t *rev, char *err, size_t errlen)
{
	json_object *h;
	int64_t r;
	int ret;

	ret = j_obj(o, "header", true, &h, err, errlen);
	if (!ret)
		ret = j_int(h, "revision", &r, err, errlen);
	if (!ret && rev)
		*rev = r;
	return ret;
}

static int parse_kv(json_object *o, bool need_value, struct hbm_etcd_kv *kv, char *err,
		    size_t errlen)
{
	int ret;

	memset(kv, 0, sizeof(*kv));
	if (!json_object_is_type(o, json_type_object)) {
		snprintf(err, errlen, "a kv is not an object");
		return -EPROTO;
	}
	ret = j_b64(o, "key", true, &kv->key, &kv->key_len, err, errlen);
	if (!ret)
		ret = j_b64(o, "value", false, &kv->value, &kv->value_len, err, errlen);
	if (!ret)
		ret = j_int(o, "create_revision", &kv->create_revision, err, errlen);
	if (!ret)
		ret = j_int(o, "mod_revision", &kv->mod_revision, err, errlen);
	if (!ret)
		ret = j_int(o, "version", &kv->version, err, errlen);
	if (!ret)
		ret = j_int(o, "lease", &kv->lease, err, errlen);
	if (!ret && need_value && kv->create_revision <= 0) {
		snprintf(err, errlen, "a kv without a create_revision");
		ret = -EPROTO;
	}
	if (ret)
		hbm_etcd_kv_free(kv);
	return ret;
}

static int parse_kvs(json_object *o, struct hbm_etcd_kvs *out, char *err, size_t errlen)
{
	json_object *arr;
	size_t i, n;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = j_bool(o, "more", &out->more, err, errlen);
	if (ret)
		return ret;
	if (!json_object_object_get_ex(o, "kvs", &arr) || json_object_is_type(arr, json_type_null))
		return 0;
	if (!json_object_is_type(arr, json_type_array)) {
		snprintf(err, errlen, "\"kvs\" is not an array");
		return -EPROTO;
	}
	n = json_object_array_length(arr);
	if (!n)
		return 0;
	out->kv = calloc(n, sizeof(*out->kv));
	if (!out->kv)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		ret = parse_kv(json_object_array_get_idx(arr, i), true, &out->kv[i], err, errlen);
		if (ret) {
			hbm_etcd_kvs_free(out);
			return ret;
		}
		out->n++;
	}
	return 0;
}

/* gRPC status codes (google.golang.org/grpc/codes) as errnos. */
static int grpc_errno(int64_t code)
{
	switch (code) {
	case 1:	return -ECANCELED;	/* Canceled */
	case 3:	return -EINVAL;		/* InvalidArgument */
	case 4:	return -ETIMEDOUT;	/* DeadlineExceeded */
	case 5:	return -ENOENT;		/* NotFound */
	case 6:	return -EEXIST;		/* AlreadyExists */
	case 7:	return -EACCES;		/* PermissionDenied */
	case 8:	return -ENOSPC;		/* ResourceExhausted */
	case 9:	return -EPERM;		/* FailedPrecondition */
	case 11: return -ERANGE;	/* OutOfRange */
	case 12: return -EOPNOTSUPP;	/* Unimplemented */
	case 14: return -EAGAIN;	/* Unavailable */
	case 16: return -EACCES;	/* Unauthenticated */
	default: return -EIO;
	}
}

/*
 * An error inside a gRPC stream's reply (HTTP 200):
 * {"error": {"grpc_code": N, "http_code": N, "message": "...", ...}}.
 */
static int stream_error(json_object *err_obj, const char *what, char *why, size_t wl)
{
	const char *msg = "no message";
	int64_t code = 0;
	json_object *v;

	j_int(err_obj, "grpc_code", &code, why, wl);
	if (json_object_object_get_ex(err_obj, "message", &v) &&
	    json_object_is_type(v, json_type_string))
		msg = json_object_get_string(v);
	snprintf(why, wl, "%s: %s (gRPC code %" PRId64 ")", what, msg, code);
	return code ? grpc_errno(code) : -EIO;
}

/* ---- requests ---- */

size_t hbm_etcd_on_data(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct hbm_etcd_buf *b = arg;
	size_t n = size * nmemb;
	char *p;

	if (b->len + n + 1 > REPLY_MAX) {
		b->too_big = true;
		return 0;
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;

		while (cap < b->len + n + 1)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			return 0;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, ptr, n);
	b->len += n;
	b->p[b->len] = '\0';
	return n;
}

int hbm_etcd_setup_handle(struct hbm_etcd *e, CURL *c)
{
	CURLcode r = CURLE_OK;

#define SET(opt, val) do { if (r == CURLE_OK) r = curl_easy_setopt(c, opt, val); } while (0)
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_POST, 1L);
	SET(CURLOPT_HTTPHEADER, e->hdrs);
	SET(CURLOPT_CONNECTTIMEOUT_MS, e->connect_ms);
	SET(CURLOPT_PROXY, "");		/* never an http_proxy from the environment */
	SET(CURLOPT_NOPROXY, "*");
	SET(CURLOPT_PROTOCOLS_STR, "http,https");
	if (e->ca)
		SET(CURLOPT_CAINFO, e->ca);
	if (e->cert)
		SET(CURLOPT_SSLCERT, e->cert);
	if (e->key)
		SET(CURLOPT_SSLKEY, e->key);
#undef SET
	if (r != CURLE_OK) {
		seterr(e, "etcd: curl setup: %s", curl_easy_strerror(r));
		return -EINVAL;
	}
	return 0;
}

/* Should the next endpoint be tried after this failure? */
bool hbm_etcd_transport_failure(CURLcode r)
{
	switch (r) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
		return true;
	default:
		return false;
	}
}

int hbm_etcd_curl_errno(CURLcode r)
{
	switch (r) {
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_COULDNT_RESOLVE_HOST:
		return -EHOSTUNREACH;
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
		return -EPROTO;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	default:
		return -EIO;
	}
}

/*
 * An error reply of the gateway: {"error": "...", "code": N, "message": "..."}.
 * Returns its errno and writes its text to e->err.
 */
static int error_reply(struct hbm_etcd *e, const char *ep, const char *path, long status,
		       const char *body)
{
	char why[384];
	int ret = hbm_etcd_reply_http_error(status, body, why, sizeof(why));

	seterr(e, "etcd %s%s: %s", ep, path, why);
	return ret;
}

/*
 * POST req to path on one endpoint after the other; *resp is the parsed
 * reply object of the first that answers 200.
 */
static int call(struct hbm_etcd *e, const char *path, json_object *req, json_object **resp)
{
	const char *body = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	struct hbm_etcd_buf b = { 0 };
	char url[512];
	unsigned int tried;
	int ret = -EIO;

	*resp = NULL;
	e->err[0] = '\0';
	if (!body)
		return -ENOMEM;
	for (tried = 0; tried < e->nr; tried++) {
		const char *ep = e->endpoints[e->cur];
		CURLcode r;
		long status = 0;

		b.len = 0;
		b.too_big = false;
		snprintf(url, sizeof(url), "%s%s", ep, path);
		curl_easy_setopt(e->curl, CURLOPT_URL, url);
		curl_easy_setopt(e->curl, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(e->curl, CURLOPT_TIMEOUT_MS, e->request_ms);
		curl_easy_setopt(e->curl, CURLOPT_WRITEFUNCTION, hbm_etcd_on_data);
		curl_easy_setopt(e->curl, CURLOPT_WRITEDATA, &b);
		r = curl_easy_perform(e->curl);
		if (r == CURLE_OK)
			curl_easy_getinfo(e->curl, CURLINFO_RESPONSE_CODE, &status);
		if (r != CURLE_OK) {
			ret = b.too_big ? -EPROTO : hbm_etcd_curl_errno(r);
			seterr(e, "etcd %s%s: %s", ep, path,
			       b.too_big ? "reply larger than 64 MiB" : curl_easy_strerror(r));
			if (!hbm_etcd_transport_failure(r))
				break;
		} else if (status != 200) {
			ret = error_reply(e, ep, path, status, b.p ? b.p : "");
			if (ret != -EAGAIN && status != 502 && status != 503)
				break;
		} else {
			json_object *o = json_tokener_parse(b.p ? b.p : "");

			if (!o || !json_object_is_type(o, json_type_object)) {
				json_object_put(o);
				seterr(e, "etcd %s%s: the reply is not a JSON object", ep, path);
				ret = -EPROTO;
				break;
			}
			*resp = o;
			ret = 0;
			break;
		}
		e->cur = (e->cur + 1) % e->nr;
	}
	if (ret && tried >= e->nr && e->nr > 1) {
		char last[sizeof(e->err)];

		memcpy(last, e->err, sizeof(last));
		seterr(e, "all %u etcd endpoints failed; the last: %s", e->nr, last);
	}
	free(b.p);
	return ret;
}

/* A reply field's failure, with the endpoint and path. */
static int bad_reply(struct hbm_etcd *e, const char *path, int ret, const char *why)
{
	seterr(e, "etcd %s%s: bad reply: %s", hbm_etcd_endpoint(e), path, why);
	return ret;
}

/* ---- request builders ---- */

static int add_str(json_object *o, const char *name, const char *s)
{
	json_object *v = json_object_new_string(s);

	if (!v || json_object_object_add(o, name, v)) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static int add_b64(json_object *o, const char *name, const void *data, size_t len)
{
	char *s = hbm_b64_encode(data, len);
	int ret;

	if (!s)
		return -ENOMEM;
	ret = add_str(o, name, s);
	free(s);
	return ret;
}

static int add_int(json_object *o, const char *name, int64_t v)
{
	char s[24];

	snprintf(s, sizeof(s), "%" PRId64, v);
	return add_str(o, name, s);
}

/* key, and range_end = the first key after every key starting with key. */
static int add_range(json_object *o, const char *key, bool prefix)
{
	size_t n = strlen(key);
	char *end;
	int ret;

	ret = add_b64(o, "key", key, n);
	if (ret || !prefix)
		return ret;
	end = strdup(key);
	if (!end)
		return -ENOMEM;
	while (n && (unsigned char)end[n - 1] == 0xff)
		n--;
	if (n) {
		end[n - 1]++;
		ret = add_b64(o, "range_end", end, n);
	} else {
		ret = add_b64(o, "range_end", "", 1);	/* "\0": every key */
	}
	free(end);
	return ret;
}

/* ---- the calls ---- */

int hbm_etcd_open(const struct hbm_etcd_opts *o, struct hbm_etcd **out)
{
	struct hbm_etcd *e;
	unsigned int i;

	*out = NULL;
	if (!o->nr_endpoints)
		return -EINVAL;
	if (curl_global_init(CURL_GLOBAL_DEFAULT))
		return -ENOMEM;
	e = calloc(1, sizeof(*e));
	if (!e)
		goto err_global;
	e->endpoints = calloc(o->nr_endpoints, sizeof(*e->endpoints));
	if (!e->endpoints)
		goto err_free;
	for (i = 0; i < o->nr_endpoints; i++) {
		size_t n = strlen(o->endpoints[i]);

		e->endpoints[i] = strdup(o->endpoints[i]);
		if (!e->endpoints[i])
			goto err_free;
		e->nr++;
		if (n && e->endpoints[i][n - 1] == '/')
			e->endpoints[i][n - 1] = '\0';
	}
	e->ca = o->ca_file ? strdup(o->ca_file) : NULL;
	e->cert = o->cert_file ? strdup(o->cert_file) : NULL;
	e->key = o->key_file ? strdup(o->key_file) : NULL;
	if ((o->ca_file && !e->ca) || (o->cert_file && !e->cert) || (o->key_file && !e->key))
		goto err_free;
	e->connect_ms = o->connect_timeout_ms ? o->connect_timeout_ms : 1000;
	e->request_ms = o->request_timeout_ms ? o->request_timeout_ms : 2000;
	e->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	if (!e->hdrs)
		goto err_free;
	e->curl = curl_easy_init();
	if (!e->curl)
		goto err_free;
	if (hbm_etcd_setup_handle(e, e->curl))
		goto err_free;
	*out = e;
	return 0;

err_free:
	hbm_etcd_close(e);
	return -ENOMEM;
err_global:
	curl_global_cleanup();
	return -ENOMEM;
}

void hbm_etcd_close(struct hbm_etcd *e)
{
	unsigned int i;

	if (!e)
		return;
	if (e->curl)
		curl_easy_cleanup(e->curl);
	curl_slist_free_all(e->hdrs);
	for (i = 0; i < e->nr; i++)
		free(e->endpoints[i]);
	free(e->endpoints);
	free(e->ca);
	free(e->cert);
	free(e->key);
	free(e);
	curl_global_cleanup();
}

/* Run a request built in req (consumed); the reply in *resp, header checked. */
static int run(struct hbm_etcd *e, const char *path, json_object *req, int built,
	       json_object **resp, int64_t *rev)
{
	char why[128];
	int ret;

	*resp = NULL;
	if (built) {
		json_object_put(req);
		return built;
	}
	ret = call(e, path, req, resp);
	json_object_put(req);
	if (ret)
		return ret;
	ret = j_header_rev(*resp, rev, why, sizeof(why));
	if (ret) {
		json_object_put(*resp);
		*resp = NULL;
		return bad_reply(e, path, ret, why);
	}
	return 0;
}

static int grant_reply(json_object *resp, int64_t *id, int64_t *granted_ttl, char *why,
		       size_t wl)
{
	int64_t v_id, v_ttl;
	int ret;

	ret = j_int(resp, "ID", &v_id, why, wl);
	if (!ret)
		ret = j_int(resp, "TTL", &v_ttl, why, wl);
	if (!ret && v_id <= 0) {
		snprintf(why, wl, "no lease ID");
		ret = -EPROTO;
	}
	if (ret)
		return ret;
	*id = v_id;
	if (granted_ttl)
		*granted_ttl = v_ttl;
	return 0;
}

int hbm_etcd_lease_grant(struct hbm_etcd *e, int64_t ttl_s, int64_t *id, int64_t *granted_ttl,
			 int64_t *rev)
{
	static const char path[] = "/v3/lease/grant";
	json_object *req = json_object_new_object(), *resp;
	char why[128];
	int ret;

	if (!req)
		return -ENOMEM;
	ret = run(e, path, req, add_int(req, "TTL", ttl_s), &resp, rev);
	if (ret)
		return ret;
	ret = grant_reply(resp, id, granted_ttl, why, sizeof(why));
	json_object_put(resp);
	if (ret)
		return bad_reply(e, path, ret, why);
	return 0;
}

/*
 * A stream in gRPC: the gateway answers one {"result": {...}} per request,
 * or {"error": {...}}.  -ENOENT (message in why) when the lease is gone.
 */
static int keepalive_reply(json_object *resp, int64_t id, int64_t *ttl, int64_t *rev,
			   bool *stream_err, char *why, size_t wl)
{
	json_object *res;
	int64_t v_ttl;
	int ret;

	*stream_err = false;
	ret = j_obj(resp, "error", false, &res, why, wl);
	if (!ret && res) {
		*stream_err = true;
		return stream_error(res, "etcd refused the keepalive", why, wl);
	}
	if (!ret)
		ret = j_obj(resp, "result", true, &res, why, wl);
	if (!ret)
		ret = j_header_rev(res, rev, why, wl);
	if (!ret)
		ret = j_int(res, "TTL", &v_ttl, why, wl);
	if (ret)
		return ret;
	if (v_ttl <= 0) {
		*stream_err = true;
		snprintf(why, wl, "lease %" PRId64 " not found (expired or revoked)", id);
		return -ENOENT;
	}
	if (ttl)
		*ttl = v_ttl;
	return 0;
}

int hbm_etcd_lease_keepalive(struct hbm_etcd *e, int64_t id, int64_t *ttl, int64_t *rev)
{
	static const char path[] = "/v3/lease/keepalive";
	json_object *req = json_object_new_object(), *resp;
	bool stream_err;
	char why[128];
	int ret;

	if (!req)
		return -ENOMEM;
	ret = add_int(req, "ID", id);
	if (ret) {
		json_object_put(req);
		return ret;
	}
	ret = call(e, path, req, &resp);
	json_object_put(req);
	if (ret)
		return ret;
	ret = keepalive_reply(resp, id, ttl, rev, &stream_err, why, sizeof(why));
	json_object_put(resp);
	if (ret && stream_err) {
		seterr(e, "etcd %s%s: %s", hbm_etcd_endpoint(e), path, why);
		return ret;
	}
	if (ret)
		return bad_reply(e, path, ret, why);
	return 0;
}

int hbm_etcd_lease_revoke(struct hbm_etcd *e, int64_t id, int64_t *rev)
{
	json_object *req = json_object_new_object(), *resp;
	int ret;

	if (!req)
		return -ENOMEM;
	ret = run(e, "/v3/lease/revoke", req, add_int(req, "ID", id), &resp, rev);
	json_object_put(resp);
	return ret;
}

static int build_put(json_object *req, const char *key, const void *value, size_t len,
		     int64_t lease)
{
	int ret = add_b64(req, "key", key, strlen(key));

	if (!ret)
		ret = add_b64(req, "value", value, len);
	if (!ret && lease)
		ret = add_int(req, "lease", lease);
	return ret;
}

int hbm_etcd_put(struct hbm_etcd *e, const char *key, const void *value, size_t value_len,
		 int64_t lease, int64_t *rev)
{
	json_object *req = json_object_new_object(), *resp;
	int ret;

	if (!req)
		return -ENOMEM;
	ret = run(e, "/v3/kv/put", req, build_put(req, key, value, value_len, lease), &resp, rev);
	json_object_put(resp);
	return ret;
}

int hbm_etcd_get(struct hbm_etcd *e, const char *key, bool prefix, struct hbm_etcd_kvs *out,
		 int64_t *rev)
{
	static const char path[] = "/v3/kv/range";
	json_object *req = json_object_new_object(), *resp;
	char why[128];
	int ret;

	memset(out, 0, sizeof(*out));
	if (!req)
		return -ENOMEM;
	ret = run(e, path, req, add_range(req, key, prefix), &resp, rev);
	if (ret)
		return ret;
	ret = parse_kvs(resp, out, why, sizeof(why));
	json_object_put(resp);
	if (ret == -EPROTO)
		return bad_reply(e, path, ret, why);
	return ret;
}

/* limit 1, sorted by mod_revision, keys only: the count and the newest key */
static int build_probe(json_object *req, const char *key, bool prefix)
{
	json_object *t;
	int ret;

	ret = add_range(req, key, prefix);
	if (!ret)
		ret = add_int(req, "limit", 1);
	if (!ret)
		ret = add_str(req, "sort_order", "DESCEND");
	if (!ret)
		ret = add_str(req, "sort_target", "MOD");
	if (!ret) {
		t = json_object_new_boolean(1);
		if (!t || json_object_object_add(req, "keys_only", t)) {
			json_object_put(t);
			ret = -ENOMEM;
		}
	}
	return ret;
}

static int probe_reply(json_object *resp, int64_t *count, int64_t *max_mod, char *why,
		       size_t wl)
{
	struct hbm_etcd_kvs kvs;
	int ret;

	ret = j_int(resp, "count", count, why, wl);
	if (!ret)
		ret = parse_kvs(resp, &kvs, why, wl);
	if (ret)
		return ret;
	if (*count > 0 && !kvs.n) {
		/* keys, but not the newest of them: no answer to trust */
		snprintf(why, wl, "\"count\" is %" PRId64 " but no key came", *count);
		hbm_etcd_kvs_free(&kvs);
		return -EPROTO;
	}
	*max_mod = kvs.n ? kvs.kv[0].mod_revision : 0;
	hbm_etcd_kvs_free(&kvs);
	return 0;
}

int hbm_etcd_probe(struct hbm_etcd *e, const char *key, bool prefix, int64_t *count,
		   int64_t *max_mod, int64_t *rev)
{
	static const char path[] = "/v3/kv/range";
	json_object *req = json_object_new_object(), *resp;
	char why[128];
	int ret;

	if (!req)
		return -ENOMEM;
	ret = run(e, path, req, build_probe(req, key, prefix), &resp, rev);
	if (ret)
		return ret;
	ret = probe_reply(resp, count, max_mod, why, sizeof(why));
	json_object_put(resp);
	if (ret == -EPROTO)
		return bad_reply(e, path, ret, why);
	return ret;
}

int hbm_etcd_delete(struct hbm_etcd *e, const char *key, bool prefix, int64_t *deleted,
		    int64_t *rev)
{
	static const char path[] = "/v3/kv/deleterange";
	json_object *req = json_object_new_object(), *resp;
	char why[128];
	int64_t n;
	int ret;

	if (!req)
		return -ENOMEM;
	ret = run(e, path, req, add_range(req, key, prefix), &resp, rev);
	if (ret)
		return ret;
	ret = j_int(resp, "deleted", &n, why, sizeof(why));
	json_object_put(resp);
	if (ret)
		return bad_reply(e, path, ret, why);
	if (deleted)
		*deleted = n;
	return 0;
}

/*
 * {"compare": [{"key": K, "target": "CREATE", "result": "EQUAL",
 *               "create_revision": "0"}],
 *  "success": [{"request_put": {...}}], "failure": [{"request_range": {"key": K}}]}
 */
static int build_create(json_object *req, const char *key, const void *value, size_t len,
			int64_t lease)
{
	json_object *cmp = json_object_new_object(), *put = json_object_new_object();
	json_object *rng = json_object_new_object(), *a;
	json_object *succ = json_object_new_object(), *fail = json_object_new_object();
	int ret = -ENOMEM;

	if (!cmp || !put || !rng || !succ || !fail)
		goto out;
	ret = add_b64(cmp, "key", key, strlen(key));
	ret = ret ? ret : add_str(cmp, "target", "CREATE");
	ret = ret ? ret : add_str(cmp, "result", "EQUAL");
	ret = ret ? ret : add_int(cmp, "create_revision", 0);
	ret = ret ? ret : build_put(put, key, value, len, lease);
	ret = ret ? ret : add_b64(rng, "key", key, strlen(key));
	if (ret)
		goto out;
	json_object_object_add(succ, "request_put", put);
	put = NULL;
	json_object_object_add(fail, "request_range", rng);
	rng = NULL;
	a = json_object_new_array();
	if (!a || json_object_array_add(a, cmp))
		goto out_a;
	cmp = NULL;
	json_object_object_add(req, "compare", a);
	a = json_object_new_array();
	if (!a || json_object_array_add(a, succ))
		goto out_a;
	succ = NULL;
	json_object_object_add(req, "success", a);
	a = json_object_new_array();
	if (!a || json_object_array_add(a, fail))
		goto out_a;
	fail = NULL;
	json_object_object_add(req, "failure", a);
	ret = 0;
	goto out;
out_a:
	json_object_put(a);
	ret = -ENOMEM;
out:
	json_object_put(cmp);
	json_object_put(put);
	json_object_put(rng);
	json_object_put(succ);
	json_object_put(fail);
	return ret;
}

/* The txn's reply: created, or the existing key in *kvs (one kv). */
static int create_reply(json_object *resp, bool *ok, struct hbm_etcd_kvs *kvs, char *why,
			size_t wl)
{
	json_object *arr, *r0 = NULL, *rr;
	int ret;

	memset(kvs, 0, sizeof(*kvs));
	ret = j_bool(resp, "succeeded", ok, why, wl);
	if (ret || *ok)
		return ret;
	/* failure: responses[0].response_range holds the existing key */
	if (json_object_object_get_ex(resp, "responses", &arr) &&
	    json_object_is_type(arr, json_type_array) && json_object_array_length(arr) == 1)
		r0 = json_object_array_get_idx(arr, 0);
	if (!r0 || !json_object_is_type(r0, json_type_object)) {
		snprintf(why, wl, "a failed txn without its one response");
		return -EPROTO;
	}
	ret = j_obj(r0, "response_range", true, &rr, why, wl);
	if (!ret)
		ret = parse_kvs(rr, kvs, why, wl);
	if (!ret && kvs->n != 1) {
		/* deleted between the compare and the range? not in one txn */
		snprintf(why, wl, "the txn failed but the key is not there");
		ret = -EPROTO;
	}
	if (ret)
		hbm_etcd_kvs_free(kvs);
	return ret;
}

int hbm_etcd_create(struct hbm_etcd *e, const char *key, const void *value, size_t value_len,
		    int64_t lease, bool *created, struct hbm_etcd_kvs *existing, int64_t *rev)
{
	static const char path[] = "/v3/kv/txn";
	json_object *req = json_object_new_object(), *resp;
	struct hbm_etcd_kvs kvs = { 0 };
	char why[128];
	bool ok = false;
	int ret;

	*created = false;
	if (existing)
		memset(existing, 0, sizeof(*existing));
	if (!req)
		return -ENOMEM;
	ret = run(e, path, req, build_create(req, key, value, value_len, lease), &resp, rev);
	if (ret)
		return ret;
	ret = create_reply(resp, &ok, &kvs, why, sizeof(why));
	json_object_put(resp);
	if (ret)
		return ret == -ENOMEM ? ret : bad_reply(e, path, ret, why);
	*created = ok;
	if (existing)
		*existing = kvs;
	else
		hbm_etcd_kvs_free(&kvs);
	return 0;
}

/* ---- bodies and replies without the transport (etcd.h) ---- */

/* req (consumed) as a malloc'ed string, unless built failed. */
static int body_of(json_object *req, int built, char **body)
{
	const char *s;

	*body = NULL;
	if (!built) {
		s = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
		*body = s ? strdup(s) : NULL;
		built = *body ? 0 : -ENOMEM;
	}
	json_object_put(req);
	return built;
}

int hbm_etcd_body_grant(int64_t ttl_s, char **body)
{
	json_object *req = json_object_new_object();

	return req ? body_of(req, add_int(req, "TTL", ttl_s), body) : -ENOMEM;
}

int hbm_etcd_body_keepalive(int64_t id, char **body)
{
	json_object *req = json_object_new_object();

	return req ? body_of(req, add_int(req, "ID", id), body) : -ENOMEM;
}

int hbm_etcd_body_create(const char *key, const void *value, size_t value_len, int64_t lease,
			 char **body)
{
	json_object *req = json_object_new_object();

	return req ? body_of(req, build_create(req, key, value, value_len, lease), body) :
		     -ENOMEM;
}

int hbm_etcd_body_range(const char *key, bool prefix, char **body)
{
	json_object *req = json_object_new_object();

	return req ? body_of(req, add_range(req, key, prefix), body) : -ENOMEM;
}

int hbm_etcd_body_put(const char *key, const void *value, size_t value_len, int64_t lease,
		      char **body)
{
	json_object *req = json_object_new_object();

	return req ? body_of(req, build_put(req, key, value, value_len, lease), body) : -ENOMEM;
}

int hbm_etcd_body_delete(const char *key, bool prefix, char **body)
{
	json_object *req = json_object_new_object();

	return req ? body_of(req, add_range(req, key, prefix), body) : -ENOMEM;
}

int hbm_etcd_body_probe(const char *key, bool prefix, char **body)
{
	json_object *req = json_object_new_object();

	return req ? body_of(req, build_probe(req, key, prefix), body) : -ENOMEM;
}

static int build_watch(json_object *req, const char *key, bool prefix, int64_t start)
{
	json_object *cr = json_object_new_object();
	int ret;

	ret = cr ? add_range(cr, key, prefix) : -ENOMEM;
	if (!ret && start)
		ret = add_int(cr, "start_revision", start);
	if (!ret && json_object_object_add(req, "create_request", cr))
		ret = -ENOMEM;
	if (ret)
		json_object_put(cr);
	return ret;
}

int hbm_etcd_body_watch(const char *key, bool prefix, int64_t start, char **body)
{
	json_object *req = json_object_new_object();

	return req ? body_of(req, build_watch(req, key, prefix, start), body) : -ENOMEM;
}

/* The reply as a JSON object with its header's revision. */
static int reply_obj(const char *reply, json_object **o, int64_t *rev, char *err, size_t errlen)
{
	int ret;

	*o = json_tokener_parse(reply);
	if (!*o || !json_object_is_type(*o, json_type_object)) {
		json_object_put(*o);
		*o = NULL;
		snprintf(err, errlen, "the reply is not a JSON object");
		return -EPROTO;
	}
	ret = j_header_rev(*o, rev, err, errlen);
	if (ret) {
		json_object_put(*o);
		*o = NULL;
	}
	return ret;
}

int hbm_etcd_reply_grant(const char *reply, int64_t *id, int64_t *ttl, int64_t *rev, char *err,
			 size_t errlen)
{
	json_object *o;
	int ret = reply_obj(reply, &o, rev, err, errlen);

	if (!ret)
		ret = grant_reply(o, id, ttl, err, errlen);
	json_object_put(o);
	return ret;
}

int hbm_etcd_reply_keepalive(const char *reply, int64_t id, int64_t *ttl, int64_t *rev,
			     char *err, size_t errlen)
{
	json_object *o = json_tokener_parse(reply);
	bool stream_err;
	int ret;

	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		snprintf(err, errlen, "the reply is not a JSON object");
		return -EPROTO;
	}
	ret = keepalive_reply(o, id, ttl, rev, &stream_err, err, errlen);
	json_object_put(o);
	return ret;
}

int hbm_etcd_reply_create(const char *reply, bool *created, struct hbm_etcd_kvs *existing,
			  int64_t *rev, char *err, size_t errlen)
{
	struct hbm_etcd_kvs kvs;
	json_object *o;
	bool ok = false;
	int ret = reply_obj(reply, &o, rev, err, errlen);

	*created = false;
	if (existing)
		memset(existing, 0, sizeof(*existing));
	if (!ret)
		ret = create_reply(o, &ok, &kvs, err, errlen);
	json_object_put(o);
	if (ret)
		return ret;
	*created = ok;
	if (existing)
		*existing = kvs;
	else
		hbm_etcd_kvs_free(&kvs);
	return 0;
}

int hbm_etcd_reply_range(const char *reply, struct hbm_etcd_kvs *out, int64_t *rev, char *err,
			 size_t errlen)
{
	json_object *o;
	int ret = reply_obj(reply, &o, rev, err, errlen);

	memset(out, 0, sizeof(*out));
	if (!ret)
		ret = parse_kvs(o, out, err, errlen);
	json_object_put(o);
	return ret;
}

int hbm_etcd_reply_put(const char *reply, int64_t *rev, char *err, size_t errlen)
{
	json_object *o;
	int ret = reply_obj(reply, &o, rev, err, errlen);

	json_object_put(o);
	return ret;
}

int hbm_etcd_reply_delete(const char *reply, int64_t *deleted, int64_t *rev, char *err,
			  size_t errlen)
{
	json_object *o;
	int64_t n = 0;
	int ret = reply_obj(reply, &o, rev, err, errlen);

	if (!ret)
		ret = j_int(o, "deleted", &n, err, errlen);
	json_object_put(o);
	if (!ret && deleted)
		*deleted = n;
	return ret;
}

int hbm_etcd_reply_probe(const char *reply, int64_t *count, int64_t *max_mod, int64_t *rev,
			 char *err, size_t errlen)
{
	json_object *o;
	int ret = reply_obj(reply, &o, rev, err, errlen);

	if (!ret)
		ret = probe_reply(o, count, max_mod, err, errlen);
	json_object_put(o);
	return ret;
}

int hbm_etcd_reply_http_error(long status, const char *body, char *err, size_t errlen)
{
	json_object *o = json_tokener_parse(body ? body : ""), *m;
	const char *msg = NULL;
	int64_t code = 0;
	char tmp[64];
	int ret = -EIO;

	if (o && json_object_is_type(o, json_type_object)) {
		if (!j_int(o, "code", &code, tmp, sizeof(tmp)) && code)
			ret = grpc_errno(code);
		if (json_object_object_get_ex(o, "message", &m) &&
		    json_object_is_type(m, json_type_string))
			msg = json_object_get_string(m);
	}
	snprintf(err, errlen, "HTTP %ld: %s (gRPC code %" PRId64 ")", status,
		 msg ? msg : "no message", code);
	json_object_put(o);
	return ret;
}

/* ---- watch ---- */

int hbm_etcd_watch_parser_init(struct hbm_etcd_watch_parser *p)
{
	memset(p, 0, sizeof(*p));
	p->tok = json_tokener_new();
	return p->tok ? 0 : -ENOMEM;
}

void hbm_etcd_watch_parser_fini(struct hbm_etcd_watch_parser *p)
{
	if (p->tok)
		json_tokener_free(p->tok);
	p->tok = NULL;
}

static void free_events(struct hbm_etcd_watch_msg *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		hbm_etcd_kv_free(&m->events[i].kv);
	free(m->events);
	m->events = NULL;
	m->n = 0;
}

/* One message: {"result": {...}} or {"error": {...}}. */
static int watch_msg(struct hbm_etcd_watch_parser *p, json_object *o, hbm_etcd_watch_fn *fn,
		     void *arg)
{
	struct hbm_etcd_watch_msg m = { .cancel_reason = "" };
	json_object *res, *arr, *v;
	char *why = p->err;
	size_t wl = sizeof(p->err), i, n;
	int ret;

	if (!json_object_is_type(o, json_type_object)) {
		snprintf(why, wl, "a watch message is not a JSON object");
		return -EPROTO;
	}
	ret = j_obj(o, "error", false, &res, why, wl);
	if (ret)
		return ret;
	if (res)
		return stream_error(res, "etcd ended the watch", why, wl);
	ret = j_obj(o, "result", true, &res, why, wl);
	if (!ret)
		ret = j_header_rev(res, &m.revision, why, wl);
	if (!ret)
		ret = j_int(res, "watch_id", &m.watch_id, why, wl);
	if (!ret)
		ret = j_bool(res, "created", &m.created, why, wl);
	if (!ret)
		ret = j_bool(res, "canceled", &m.canceled, why, wl);
	if (!ret)
		ret = j_int(res, "compact_revision", &m.compact_revision, why, wl);
	if (ret)
		return ret;
	if (json_object_object_get_ex(res, "cancel_reason", &v) &&
	    json_object_is_type(v, json_type_string))
		m.cancel_reason = json_object_get_string(v);
	if (json_object_object_get_ex(res, "events", &arr) &&
	    !json_object_is_type(arr, json_type_null)) {
		if (!json_object_is_type(arr, json_type_array)) {
			snprintf(why, wl, "\"events\" is not an array");
			return -EPROTO;
		}
		n = json_object_array_length(arr);
		m.events = n ? calloc(n, sizeof(*m.events)) : NULL;
		if (n && !m.events)
			return -ENOMEM;
		for (i = 0; i < n; i++) {
			json_object *ev = json_object_array_get_idx(arr, i), *kv, *t;
			struct hbm_etcd_event *e = &m.events[i];

			if (!json_object_is_type(ev, json_type_object)) {
				snprintf(why, wl, "an event is not an object");
				ret = -EPROTO;
				break;
			}
			e->type = HBM_ETCD_EV_PUT;	/* 0, left out */
			if (json_object_object_get_ex(ev, "type", &t)) {
				const char *s = json_object_get_string(t);

				if (json_object_is_type(t, json_type_string) && !strcmp(s, "DELETE"))
					e->type = HBM_ETCD_EV_DELETE;
				else if (json_object_is_type(t, json_type_int) &&
					 json_object_get_int64(t) == 1)
					e->type = HBM_ETCD_EV_DELETE;
				else if (!(json_object_is_type(t, json_type_string) &&
					   !strcmp(s, "PUT")) &&
					 !(json_object_is_type(t, json_type_int) &&
					   json_object_get_int64(t) == 0)) {
					snprintf(why, wl, "an event of unknown type");
					ret = -EPROTO;
					break;
				}
			}
			ret = j_obj(ev, "kv", true, &kv, why, wl);
			if (!ret)
				ret = parse_kv(kv, e->type == HBM_ETCD_EV_PUT, &e->kv, why, wl);
			if (ret)
				break;
			m.n++;
		}
		if (ret) {
			free_events(&m);
			return ret;
		}
	}
	ret = fn(&m, arg);
	free_events(&m);
	if (!ret && m.canceled) {
		snprintf(why, wl, "etcd canceled the watch: %s%s (compact revision %" PRId64 ")",
			 *m.cancel_reason ? "" : "no reason", m.cancel_reason, m.compact_revision);
		return -ECANCELED;
	}
	return ret;
}

int hbm_etcd_watch_feed(struct hbm_etcd_watch_parser *p, const char *buf, size_t len,
			hbm_etcd_watch_fn *fn, void *arg)
{
	json_tokener *tok = p->tok;
	json_object *o;
	enum json_tokener_error jerr;
	size_t used;
	int ret;

	if (p->dead)
		return p->dead;
	while (len) {
		/* json-c takes an int length */
		int chunk = len > (1u << 30) ? 1 << 30 : (int)len;

		o = json_tokener_parse_ex(tok, buf, chunk);
		jerr = json_tokener_get_error(tok);
		if (!o) {
			if (jerr == json_tokener_continue) {
				buf += chunk;
				len -= chunk;
				continue;
			}
			snprintf(p->err, sizeof(p->err), "bad JSON in the watch stream: %s",
				 json_tokener_error_desc(jerr));
			p->dead = -EPROTO;
			return p->dead;
		}
		used = json_tokener_get_parse_end(tok);
		json_tokener_reset(tok);
		ret = watch_msg(p, o, fn, arg);
		json_object_put(o);
		if (ret) {
			if (ret < 0)
				p->dead = ret;
			return ret;
		}
		buf += used;
		len -= used;
	}
	return 0;
}

struct watch_ctx {
	struct hbm_etcd_watch_parser p;
	hbm_etcd_watch_fn *fn;
	void *arg;
	int ret;
	bool got_any;
	unsigned int idle_s;
	struct timespec last;		/* CLOCK_MONOTONIC of the last data */
	bool idle;			/* aborted: nothing for idle_s */
};

static double since(const struct timespec *t)
{
	struct timespec n;

	clock_gettime(CLOCK_MONOTONIC, &n);
	return (n.tv_sec - t->tv_sec) + (n.tv_nsec - t->tv_nsec) / 1e9;
}

/* curl calls this about once a second even when nothing arrives. */
static int on_watch_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut,
			     curl_off_t un)
{
	struct watch_ctx *w = arg;

	(void)dt; (void)dn; (void)ut; (void)un;
	if (w->idle_s && since(&w->last) >= w->idle_s) {
		w->idle = true;
		return 1;
	}
	return 0;
}

static size_t on_watch_data(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct watch_ctx *w = arg;
	size_t n = size * nmemb;

	w->got_any = true;
	clock_gettime(CLOCK_MONOTONIC, &w->last);
	w->ret = hbm_etcd_watch_feed(&w->p, ptr, n, w->fn, w->arg);
	return w->ret ? 0 : n;
}

int hbm_etcd_watch(struct hbm_etcd *e, const char *key, bool prefix, int64_t start,
		   unsigned int idle_s, hbm_etcd_watch_fn *fn, void *arg)
{
	static const char path[] = "/v3/watch";
	json_object *req = json_object_new_object(), *cr = json_object_new_object();
	struct watch_ctx w = { .fn = fn, .arg = arg };
	const char *body;
	unsigned int tried;
	char url[512];
	CURL *c = NULL;
	int ret;

	e->err[0] = '\0';
	ret = !req || !cr ? -ENOMEM : add_range(cr, key, prefix);
	if (!ret && start)
		ret = add_int(cr, "start_revision", start);
	if (!ret) {
		json_object_object_add(req, "create_request", cr);
		cr = NULL;
	}
	body = ret ? NULL : json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	if (!ret && !body)
		ret = -ENOMEM;
	if (!ret)
		ret = hbm_etcd_watch_parser_init(&w.p);
	if (ret)
		goto out;
	c = curl_easy_init();
	if (!c || hbm_etcd_setup_handle(e, c)) {
		ret = -ENOMEM;
		goto out_parser;
	}
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_watch_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &w);
	w.idle_s = idle_s;
	clock_gettime(CLOCK_MONOTONIC, &w.last);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_watch_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, &w);
	for (tried = 0; tried < e->nr; tried++) {
		const char *ep = e->endpoints[e->cur];
		long status = 0;
		CURLcode r;

		snprintf(url, sizeof(url), "%s%s", ep, path);
		curl_easy_setopt(c, CURLOPT_URL, url);
		r = curl_easy_perform(c);
		if (w.ret) {
			ret = w.ret;
			if (ret < 0)
				seterr(e, "etcd %s%s: %s", ep, path, w.p.err);
			break;
		}
		if (w.idle) {
			seterr(e, "etcd %s%s: nothing for %u s", ep, path, idle_s);
			ret = -ETIMEDOUT;
			break;
		}
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
		if (r == CURLE_OK && status == 200) {
			seterr(e, "etcd %s%s: the watch stream ended", ep, path);
			ret = -EPIPE;
			break;
		}
		if (r == CURLE_OK) {
			seterr(e, "etcd %s%s: HTTP %ld", ep, path, status);
			ret = -EIO;
			break;
		}
		ret = hbm_etcd_curl_errno(r);
		seterr(e, "etcd %s%s: %s", ep, path, curl_easy_strerror(r));
		/* a stream that delivered messages and then broke is not retried */
		if (w.got_any || !hbm_etcd_transport_failure(r))
			break;
		e->cur = (e->cur + 1) % e->nr;
	}
	curl_easy_cleanup(c);
out_parser:
	hbm_etcd_watch_parser_fini(&w.p);
out:
	json_object_put(cr);
	json_object_put(req);
	return ret;
}

/* ---- a watch in the caller's event loop (curl multi socket) ---- */

#define AW_MAX_FDS	4	/* one connection; room for curl's resolver and happy eyeballs */

struct hbm_etcd_awatch {
	struct hbm_etcd *e;
	CURLM *multi;
	CURL *c;
	json_object *req;		/* holds the body curl sends */
	struct watch_ctx w;
	struct pollfd fds[AW_MAX_FDS];
	unsigned int nfds;
	bool overflow;			/* curl wanted more descriptors than we keep */
	long timeout_ms;
	unsigned int tried;
	int ended;			/* how it ended, 0 while running */
	char err[512];
};

static int aw_socket(CURL *c, curl_socket_t s, int what, void *arg, void *sockp)
{
	struct hbm_etcd_awatch *aw = arg;
	unsigned int i;

	(void)c;
	(void)sockp;
	for (i = 0; i < aw->nfds && aw->fds[i].fd != s; i++)
		;
	if (what == CURL_POLL_REMOVE) {
		if (i < aw->nfds)
			aw->fds[i] = aw->fds[--aw->nfds];
		return 0;
	}
	if (i == aw->nfds) {
		if (aw->nfds == AW_MAX_FDS) {
			aw->overflow = true;
			return -1;
		}
		aw->nfds++;
	}
	aw->fds[i].fd = s;
	aw->fds[i].events = (what & CURL_POLL_IN ? POLLIN : 0) | (what & CURL_POLL_OUT ? POLLOUT : 0);
	aw->fds[i].revents = 0;
	return 0;
}

static int aw_timer(CURLM *m, long timeout_ms, void *arg)
{
	struct hbm_etcd_awatch *aw = arg;

	(void)m;
	aw->timeout_ms = timeout_ms;
	return 0;
}

static int aw_begin(struct hbm_etcd_awatch *aw)
{
	char url[512];
	int running;

	snprintf(url, sizeof(url), "%s/v3/watch", aw->e->endpoints[aw->e->cur]);
	curl_easy_setopt(aw->c, CURLOPT_URL, url);
	if (curl_multi_add_handle(aw->multi, aw->c) != CURLM_OK)
		return -ENOMEM;
	/* let curl open its connection and arm its timer */
	curl_multi_socket_action(aw->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	return 0;
}

int hbm_etcd_awatch_start(struct hbm_etcd *e, const char *key, bool prefix, int64_t start,
			  hbm_etcd_watch_fn *fn, void *arg, struct hbm_etcd_awatch **out)
{
	struct hbm_etcd_awatch *aw;
	json_object *cr;
	const char *body;
	int ret;

	*out = NULL;
	aw = calloc(1, sizeof(*aw));
	if (!aw)
		return -ENOMEM;
	aw->e = e;
	aw->timeout_ms = -1;
	aw->w.fn = fn;
	aw->w.arg = arg;
	aw->req = json_object_new_object();
	cr = json_object_new_object();
	ret = !aw->req || !cr ? -ENOMEM : add_range(cr, key, prefix);
	if (!ret && start)
		ret = add_int(cr, "start_revision", start);
	if (ret) {
		json_object_put(cr);
		goto err;
	}
	json_object_object_add(aw->req, "create_request", cr);
	body = json_object_to_json_string_ext(aw->req, JSON_C_TO_STRING_PLAIN);
	ret = -ENOMEM;
	if (!body || hbm_etcd_watch_parser_init(&aw->w.p))
		goto err;
	aw->multi = curl_multi_init();
	aw->c = curl_easy_init();
	if (!aw->multi || !aw->c || hbm_etcd_setup_handle(e, aw->c))
		goto err;
	curl_easy_setopt(aw->c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(aw->c, CURLOPT_WRITEFUNCTION, on_watch_data);
	curl_easy_setopt(aw->c, CURLOPT_WRITEDATA, &aw->w);
	curl_multi_setopt(aw->multi, CURLMOPT_SOCKETFUNCTION, aw_socket);
	curl_multi_setopt(aw->multi, CURLMOPT_SOCKETDATA, aw);
	curl_multi_setopt(aw->multi, CURLMOPT_TIMERFUNCTION, aw_timer);
	curl_multi_setopt(aw->multi, CURLMOPT_TIMERDATA, aw);
	ret = aw_begin(aw);
	if (ret)
		goto err;
	*out = aw;
	return 0;
err:
	hbm_etcd_awatch_stop(aw);
	return ret;
}

unsigned int hbm_etcd_awatch_fds(const struct hbm_etcd_awatch *aw, struct pollfd *fds,
				 unsigned int n)
{
	unsigned int i;

	if (aw->ended)
		return 0;
	for (i = 0; i < aw->nfds && i < n; i++)
		fds[i] = aw->fds[i];
	return i;
}

long hbm_etcd_awatch_timeout(const struct hbm_etcd_awatch *aw)
{
	return aw->ended ? -1 : aw->timeout_ms;
}

const char *hbm_etcd_awatch_error(const struct hbm_etcd_awatch *aw)
{
	return aw->err;
}

/* The transfer is over: how, and whether the next endpoint should be tried. */
static int aw_done(struct hbm_etcd_awatch *aw, CURLcode r)
{
	const char *ep = aw->e->endpoints[aw->e->cur];
	long status = 0;

	if (aw->w.ret) {
		if (aw->w.ret < 0)
			snprintf(aw->err, sizeof(aw->err), "etcd %s/v3/watch: %s", ep, aw->w.p.err);
		return aw->w.ret;
	}
	curl_easy_getinfo(aw->c, CURLINFO_RESPONSE_CODE, &status);
	if (r == CURLE_OK && status == 200) {
		snprintf(aw->err, sizeof(aw->err), "etcd %s/v3/watch: the watch stream ended", ep);
		return -EPIPE;
	}
	if (r == CURLE_OK) {
		snprintf(aw->err, sizeof(aw->err), "etcd %s/v3/watch: HTTP %ld", ep, status);
		return -EIO;
	}
	snprintf(aw->err, sizeof(aw->err), "etcd %s/v3/watch: %s", ep, curl_easy_strerror(r));
	if (aw->w.got_any || !hbm_etcd_transport_failure(r) || ++aw->tried >= aw->e->nr)
		return hbm_etcd_curl_errno(r);
	/* nothing arrived from this endpoint: the next one */
	curl_multi_remove_handle(aw->multi, aw->c);
	aw->e->cur = (aw->e->cur + 1) % aw->e->nr;
	return aw_begin(aw);
}

int hbm_etcd_awatch_event(struct hbm_etcd_awatch *aw, int fd, short revents)
{
	int running, ev = 0, left;
	CURLMsg *msg;

	if (aw->ended)
		return aw->ended;
	if (fd >= 0) {
		ev |= revents & POLLIN ? CURL_CSELECT_IN : 0;
		ev |= revents & POLLOUT ? CURL_CSELECT_OUT : 0;
		ev |= revents & (POLLERR | POLLHUP) ? CURL_CSELECT_ERR : 0;
	}
	if (curl_multi_socket_action(aw->multi, fd >= 0 ? fd : CURL_SOCKET_TIMEOUT, ev,
				     &running) != CURLM_OK) {
		snprintf(aw->err, sizeof(aw->err), "etcd watch: curl multi failed");
		aw->ended = -EIO;
		return aw->ended;
	}
	if (aw->overflow) {
		snprintf(aw->err, sizeof(aw->err), "etcd watch: more than %d descriptors",
			 AW_MAX_FDS);
		aw->ended = -EMFILE;
		return aw->ended;
	}
	while ((msg = curl_multi_info_read(aw->multi, &left))) {
		int ret;

		if (msg->msg != CURLMSG_DONE)
			continue;
		ret = aw_done(aw, msg->data.result);
		if (ret) {
			aw->ended = ret;
			return ret;
		}
		break;	/* a new transfer: its messages come later */
	}
	return 0;
}

void hbm_etcd_awatch_stop(struct hbm_etcd_awatch *aw)
{
	if (!aw)
		return;
	if (aw->multi && aw->c)
		curl_multi_remove_handle(aw->multi, aw->c);
	if (aw->c)
		curl_easy_cleanup(aw->c);
	if (aw->multi)
		curl_multi_cleanup(aw->multi);
	hbm_etcd_watch_parser_fini(&aw->w.p);
	json_object_put(aw->req);
	free(aw);
}
