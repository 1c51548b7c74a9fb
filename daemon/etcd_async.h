/* SPDX-License-Identifier: GPL-2.0 */
/*
 * etcd's unary requests driven by the caller's event loop: the calls of
 * etcd.h a running daemon makes (lease keepalive, put, delete,
 * create-if-absent, range, probe) over curl's multi socket interface, with
 * the options of a struct hbm_etcd (its endpoints, TLS files, connect and
 * request timeouts).  No thread, and nothing here blocks.
 *
 * The loop waits on the descriptors hbm_etcd_async_fds() lists (poll()
 * events) and until hbm_etcd_async_deadline(), then calls
 * hbm_etcd_async_event() for each ready descriptor it owns
 * (hbm_etcd_async_owns()), or with fd -1 once the deadline passed: the
 * callbacks of the requests that ended run from there, never from the
 * start or cancel calls.
 *
 * Each request goes to the client's current endpoint; one that could not
 * reach it (refused, unresolved, TLS failure, timeout, HTTP 502/503 or
 * etcd's "unavailable") goes on to the next, each endpoint once, each try
 * bounded by the request timeout (and by the request's deadline, if it has
 * one); the endpoint that answered is the one the next request (and the
 * client's synchronous calls) tries first.  The result carries the errno
 * and the message etcd.h's synchronous call would give (the message also
 * naming the endpoint and path).
 *
 * At most HBM_ETCD_ASYNC_MAX_XFERS requests run at once (a connection
 * each, kept alive between requests); the others wait in order, a request
 * started with HBM_ETCD_URGENT (a lease keepalive) ahead of the rest.
 *
 * hbm_etcd_async_cancel() of a request, or _cancel_all(), frees it at once
 * and no callback follows.  A callback may start requests and cancel other
 * ones; its own request is freed when the callback returns.
 */
#ifndef HBMPOOLD_ETCD_ASYNC_H
#define HBMPOOLD_ETCD_ASYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "etcd.h"

struct pollfd;
struct hbm_etcd_async;
struct hbm_etcd_req;

#define HBM_ETCD_ASYNC_MAX_XFERS	8
/* The most descriptors hbm_etcd_async_fds() lists (happy eyeballs may need two a connection). */
#define HBM_ETCD_ASYNC_MAX_FDS		(2 * HBM_ETCD_ASYNC_MAX_XFERS)

enum hbm_etcd_op {
	HBM_ETCD_KEEPALIVE,
	HBM_ETCD_PUT,
	HBM_ETCD_DELETE,
	HBM_ETCD_CREATE,
	HBM_ETCD_RANGE,
	HBM_ETCD_PROBE,
};

/* How a request ended, as etcd.h's synchronous call would return it. */
struct hbm_etcd_result {
	enum hbm_etcd_op op;
	int ret;			/* 0 or a negative errno (etcd.h's list) */
	const char *err;		/* the message, "" when ret is 0 */
	uint64_t started_ms;		/* CLOCK_MONOTONIC, when it was started */
	uint64_t sent_ms;		/* when its last try was sent */
	int64_t rev;			/* the reply's header revision */
	int64_t ttl;			/* keepalive: the lease's new TTL (s) */
	int64_t deleted;		/* delete: how many keys */
	bool created;			/* create: the key was created */
	/*
	 * range: the keys; create: the existing key when not created.  Freed
	 * after the callback: a callback that keeps them moves them out and
	 * zeroes this.
	 */
	struct hbm_etcd_kvs kvs;
	int64_t count, max_mod;		/* probe (hbm_etcd_probe()) */
};

typedef void hbm_etcd_done_fn(void *arg, struct hbm_etcd_result *r);

/* Flags of a request. */
#define HBM_ETCD_URGENT		0x1	/* ahead of the requests waiting to run */

int hbm_etcd_async_open(struct hbm_etcd *e, struct hbm_etcd_async **out);
/* Every request cancelled (no callback), everything freed; not from a callback. */
void hbm_etcd_async_close(struct hbm_etcd_async *as);

/*
 * Start a request.  deadline_ms (CLOCK_MONOTONIC, 0: none): the request
 * ends by then at the latest (-ETIMEDOUT), whatever the timeouts and the
 * endpoints left.  *out (may be NULL) is the request until its callback
 * returns or it is cancelled.  0, or -ENOMEM / -EINVAL (no callback then).
 */
int hbm_etcd_async_keepalive(struct hbm_etcd_async *as, int64_t id, unsigned int flags,
			     uint64_t deadline_ms, hbm_etcd_done_fn *fn, void *arg,
			     struct hbm_etcd_req **out);
int hbm_etcd_async_put(struct hbm_etcd_async *as, const char *key, const void *value,
		       size_t value_len, int64_t lease, hbm_etcd_done_fn *fn, void *arg,
		       struct hbm_etcd_req **out);
int hbm_etcd_async_delete(struct hbm_etcd_async *as, const char *key, bool prefix,
			  hbm_etcd_done_fn *fn, void *arg, struct hbm_etcd_req **out);
int hbm_etcd_async_create(struct hbm_etcd_async *as, const char *key, const void *value,
			  size_t value_len, int64_t lease, hbm_etcd_done_fn *fn, void *arg,
			  struct hbm_etcd_req **out);
int hbm_etcd_async_range(struct hbm_etcd_async *as, const char *key, bool prefix,
			 hbm_etcd_done_fn *fn, void *arg, struct hbm_etcd_req **out);
int hbm_etcd_async_probe(struct hbm_etcd_async *as, const char *key, bool prefix,
			 hbm_etcd_done_fn *fn, void *arg, struct hbm_etcd_req **out);

/* Stop a request: freed now, no callback (nothing if it is the one being called back). */
void hbm_etcd_async_cancel(struct hbm_etcd_async *as, struct hbm_etcd_req *r);
void hbm_etcd_async_cancel_all(struct hbm_etcd_async *as);
/* Requests started and not yet ended (running or waiting). */
unsigned int hbm_etcd_async_pending(const struct hbm_etcd_async *as);

/* Up to n descriptors with the poll() events wanted; returns how many. */
unsigned int hbm_etcd_async_fds(const struct hbm_etcd_async *as, struct pollfd *fds,
				unsigned int n);
bool hbm_etcd_async_owns(const struct hbm_etcd_async *as, int fd);
/* When hbm_etcd_async_event(as, -1, 0) is due (CLOCK_MONOTONIC ms; UINT64_MAX: never). */
uint64_t hbm_etcd_async_deadline(const struct hbm_etcd_async *as);
/* fd ready with revents, or fd -1: the deadline.  Runs the callbacks of the requests that ended. */
void hbm_etcd_async_event(struct hbm_etcd_async *as, int fd, short revents);

#endif /* HBMPOOLD_ETCD_ASYNC_H */
