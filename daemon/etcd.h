/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small etcd v3 client over etcd's JSON gateway (grpc-gateway, etcd 3.4:
 * POST /v3/kv/range, /v3/kv/put, /v3/kv/deleterange, /v3/kv/txn,
 * /v3/lease/grant, /v3/lease/keepalive, /v3/lease/revoke, /v3/watch), with
 * libcurl and json-c.  Keys and values travel base64-encoded; 64-bit
 * numbers are JSON strings; fields equal to zero are left out.
 *
 * Calls are synchronous: each is one HTTP request, bounded by the connect
 * and request timeouts of the options (etcd_async.h has the same requests
 * driven by the caller's event loop).  A request that could not reach an
 * endpoint (refused, unresolved, TLS failure, timeout, or etcd answering
 * "unavailable") is tried on the next endpoint, each endpoint once per
 * call; the endpoint that answered is used first by the next call.  A
 * retried put or txn may thus have been applied by an endpoint that timed
 * out: hbm_etcd_create() callers compare the existing key's lease with
 * theirs (it is returned when the key was there).
 *
 * Every call returns 0 or a negative errno, and on failure leaves a message
 * naming the endpoint and etcd's own text in hbm_etcd_error():
 *
 *   -ECONNREFUSED, -EHOSTUNREACH, -ETIMEDOUT, -EIO  no endpoint answered
 *   -ENOENT    the lease is unknown or expired (keepalive, revoke)
 *   -EINVAL    etcd refused the request (gRPC INVALID_ARGUMENT)
 *   -EACCES    authentication or permission refused
 *   -ENOSPC    etcd is out of quota
 *   -EPROTO    the reply is not what the API says (bad JSON, bad base64...)
 *   -ENOMEM
 *
 * Every reply's header revision (the store's revision when etcd answered)
 * goes to *rev, which may be NULL.
 *
 * Watches: hbm_etcd_watch() is a blocking stream; hbm_etcd_awatch_*() is
 * the same stream driven by the caller's event loop (curl's multi socket
 * interface).  Both feed its parser (struct hbm_etcd_watch_parser), which
 * is separate and pure: it takes whatever chunks the transport delivers.
 */
#ifndef HBMPOOLD_ETCD_H
#define HBMPOOLD_ETCD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pollfd;
struct hbm_etcd;

struct hbm_etcd_opts {
	const char *const *endpoints;	/* "http(s)://host:port" */
	unsigned int nr_endpoints;
	const char *ca_file;		/* NULL: the system's CAs */
	const char *cert_file;		/* client certificate, NULL: none */
	const char *key_file;		/* its key */
	unsigned int connect_timeout_ms;
	unsigned int request_timeout_ms;	/* the whole request */
};

/* A key and its value, NUL-terminated (the NUL not counted in the lengths). */
struct hbm_etcd_kv {
	char *key;
	size_t key_len;
	char *value;
	size_t value_len;
	int64_t create_revision;
	int64_t mod_revision;
	int64_t version;
	int64_t lease;			/* 0: none */
};

struct hbm_etcd_kvs {
	struct hbm_etcd_kv *kv;		/* sorted by key, as etcd returns them */
	size_t n;
	bool more;			/* etcd had more than it returned */
};

void hbm_etcd_kvs_free(struct hbm_etcd_kvs *kvs);
void hbm_etcd_kv_free(struct hbm_etcd_kv *kv);

int hbm_etcd_open(const struct hbm_etcd_opts *opts, struct hbm_etcd **out);
void hbm_etcd_close(struct hbm_etcd *e);
/* The message of the last failure ("" if none). */
const char *hbm_etcd_error(const struct hbm_etcd *e);
/* The endpoint the next call tries first. */
const char *hbm_etcd_endpoint(const struct hbm_etcd *e);

/* A lease of ttl_s seconds: its id and the TTL etcd granted (may be more). */
int hbm_etcd_lease_grant(struct hbm_etcd *e, int64_t ttl_s, int64_t *id, int64_t *granted_ttl,
			 int64_t *rev);
/* Renew the lease once; *ttl (may be NULL) is its new TTL.  -ENOENT: gone. */
int hbm_etcd_lease_keepalive(struct hbm_etcd *e, int64_t id, int64_t *ttl, int64_t *rev);
/* Revoke the lease: every key attached to it is deleted.  -ENOENT: gone. */
int hbm_etcd_lease_revoke(struct hbm_etcd *e, int64_t id, int64_t *rev);

/* Put key = value, attached to lease (0: none). */
int hbm_etcd_put(struct hbm_etcd *e, const char *key, const void *value, size_t value_len,
		 int64_t lease, int64_t *rev);
/* The key, or every key starting with it (prefix); out is freed by the caller. */
int hbm_etcd_get(struct hbm_etcd *e, const char *key, bool prefix, struct hbm_etcd_kvs *out,
		 int64_t *rev);
/*
 * How many keys there are (every key starting with key, if prefix) and the
 * highest mod_revision among them (0: none), in one small range (limit 1,
 * sorted by mod_revision, keys only): a cheap check that a watch of them
 * missed nothing (a put raises the revision, a deletion lowers the count).
 */
int hbm_etcd_probe(struct hbm_etcd *e, const char *key, bool prefix, int64_t *count,
		   int64_t *max_mod, int64_t *rev);
/* Delete the key, or every key starting with it; *deleted (may be NULL) counts them. */
int hbm_etcd_delete(struct hbm_etcd *e, const char *key, bool prefix, int64_t *deleted,
		    int64_t *rev);
/*
 * One transaction: if key does not exist (create_revision == 0), put it
 * with value under lease and set *created; else leave it and return it in
 * *existing (may be NULL; one kv, freed by the caller).  For leader
 * election and registration.
 */
int hbm_etcd_create(struct hbm_etcd *e, const char *key, const void *value, size_t value_len,
		    int64_t lease, bool *created, struct hbm_etcd_kvs *existing, int64_t *rev);

/*
 * The same requests without the transport, for a caller that sends them
 * itself (etcd_multi.c: many at once over curl's multi interface).  A body
 * is the malloc'ed JSON to POST (/v3/lease/grant, /v3/lease/keepalive,
 * /v3/kv/txn, /v3/kv/range, /v3/watch); a reply is the body of an HTTP 200
 * answer, parsed as the calls above parse it: 0 or -EPROTO, -ENOENT (the
 * lease is gone), an error of the stream..., with the reason in err.
 */
int hbm_etcd_body_grant(int64_t ttl_s, char **body);
int hbm_etcd_body_keepalive(int64_t id, char **body);
int hbm_etcd_body_create(const char *key, const void *value, size_t value_len, int64_t lease,
			 char **body);
int hbm_etcd_body_range(const char *key, bool prefix, char **body);
/* /v3/kv/put, /v3/kv/deleterange, and hbm_etcd_probe()'s /v3/kv/range */
int hbm_etcd_body_put(const char *key, const void *value, size_t value_len, int64_t lease,
		      char **body);
int hbm_etcd_body_delete(const char *key, bool prefix, char **body);
int hbm_etcd_body_probe(const char *key, bool prefix, char **body);
int hbm_etcd_body_watch(const char *key, bool prefix, int64_t start, char **body);
int hbm_etcd_reply_grant(const char *reply, int64_t *id, int64_t *ttl, int64_t *rev, char *err,
			 size_t errlen);
int hbm_etcd_reply_keepalive(const char *reply, int64_t id, int64_t *ttl, int64_t *rev,
			     char *err, size_t errlen);
int hbm_etcd_reply_create(const char *reply, bool *created, struct hbm_etcd_kvs *existing,
			  int64_t *rev, char *err, size_t errlen);
int hbm_etcd_reply_range(const char *reply, struct hbm_etcd_kvs *out, int64_t *rev, char *err,
			 size_t errlen);
int hbm_etcd_reply_put(const char *reply, int64_t *rev, char *err, size_t errlen);
int hbm_etcd_reply_delete(const char *reply, int64_t *deleted, int64_t *rev, char *err,
			  size_t errlen);
int hbm_etcd_reply_probe(const char *reply, int64_t *count, int64_t *max_mod, int64_t *rev,
			 char *err, size_t errlen);
/*
 * The body of an answer other than HTTP 200 (the gateway's
 * {"error": "...", "code": N, "message": "..."}, or anything): its errno
 * (the gRPC code's, else -EIO) and "HTTP 503: message (gRPC code 14)" in err.
 */
int hbm_etcd_reply_http_error(long status, const char *body, char *err, size_t errlen);

/* Watches. */
enum hbm_etcd_ev_type {
	HBM_ETCD_EV_PUT,
	HBM_ETCD_EV_DELETE,	/* kv.mod_revision is the deletion's revision, no value */
};

struct hbm_etcd_event {
	enum hbm_etcd_ev_type type;
	struct hbm_etcd_kv kv;
};

/* One message of a watch stream. */
struct hbm_etcd_watch_msg {
	int64_t revision;		/* header */
	int64_t watch_id;
	bool created;			/* the watch is set up */
	bool canceled;			/* etcd ended the watch */
	int64_t compact_revision;	/* canceled: the start was compacted away */
	const char *cancel_reason;	/* "" if none */
	struct hbm_etcd_event *events;
	size_t n;
};

/* What a watch callback returns: 0 goes on, non-zero stops and is returned. */
typedef int hbm_etcd_watch_fn(const struct hbm_etcd_watch_msg *m, void *arg);

/*
 * The parser of a watch stream: a sequence of JSON objects, each
 * {"result": {...}} or {"error": {...}}, cut anywhere by the transport.
 * hbm_etcd_watch_feed() calls fn once per complete message and returns 0,
 * fn's non-zero return, -EPROTO (bad data; message in p->err; the parser
 * then refuses everything), -ECANCELED / the error's errno for an error
 * message from etcd (message in p->err), or -ENOMEM.
 */
struct hbm_etcd_watch_parser {
	void *tok;			/* json_tokener */
	int dead;			/* the error it failed with, 0 while good */
	char err[256];
};

int hbm_etcd_watch_parser_init(struct hbm_etcd_watch_parser *p);
void hbm_etcd_watch_parser_fini(struct hbm_etcd_watch_parser *p);
int hbm_etcd_watch_feed(struct hbm_etcd_watch_parser *p, const char *buf, size_t len,
			hbm_etcd_watch_fn *fn, void *arg);

/*
 * Watch key (or the prefix) from revision start (0: from now on), calling
 * fn on every message until it returns non-zero (returned), etcd cancels
 * the watch (-ECANCELED after fn saw the message), the stream breaks, or
 * nothing arrives for idle_s seconds (-ETIMEDOUT; 0: wait for ever).  One
 * endpoint after another until one accepts the watch.
 */
int hbm_etcd_watch(struct hbm_etcd *e, const char *key, bool prefix, int64_t start,
		   unsigned int idle_s, hbm_etcd_watch_fn *fn, void *arg);

/*
 * A watch driven by the caller's event loop (curl's multi socket
 * interface): no thread, no blocking.  The loop waits on the descriptors
 * hbm_etcd_watch_fds() lists (poll() events) and for at most
 * hbm_etcd_watch_timeout() ms, then calls hbm_etcd_watch_event() for each
 * ready descriptor, or with fd -1 when the timeout passed.  fn is called
 * from there for every message.  hbm_etcd_watch_event() returns 0 while
 * the watch runs, else how it ended: fn's non-zero return, -ECANCELED, the
 * stream's error, -EPIPE if etcd closed it; the message is in
 * hbm_etcd_watch_error().  An endpoint that cannot be reached before the
 * first message is replaced by the next one; a stream that breaks later
 * ends the watch: start again from the last revision seen + 1.  Nothing
 * here times out an idle stream: the loop decides.
 */
struct hbm_etcd_awatch;

int hbm_etcd_awatch_start(struct hbm_etcd *e, const char *key, bool prefix, int64_t start,
			  hbm_etcd_watch_fn *fn, void *arg, struct hbm_etcd_awatch **out);
/* Up to n descriptors with the poll() events wanted; returns how many. */
unsigned int hbm_etcd_awatch_fds(const struct hbm_etcd_awatch *w, struct pollfd *fds,
				 unsigned int n);
/* How long the loop may wait, in ms; -1: only for the descriptors. */
long hbm_etcd_awatch_timeout(const struct hbm_etcd_awatch *w);
int hbm_etcd_awatch_event(struct hbm_etcd_awatch *w, int fd, short revents);
const char *hbm_etcd_awatch_error(const struct hbm_etcd_awatch *w);
void hbm_etcd_awatch_stop(struct hbm_etcd_awatch *w);

#endif /* HBMPOOLD_ETCD_H */
