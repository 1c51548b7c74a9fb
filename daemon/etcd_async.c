// SPDX-License-Identifier: GPL-2.0
/*
 * etcd requests in the caller's event loop: see etcd_async.h.
 *
 * A request is on one of three lists: waiting (for a transfer slot, or for
 * its next endpoint), running (its easy handle in the multi handle), done
 * (ended, its callback due).  Callbacks run only from
 * hbm_etcd_async_event(), off the done list, so that nothing is called
 * from inside curl or from the caller's start and cancel calls.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "etcd.h"
#include "etcd_async.h"
#include "etcd_impl.h"

enum { L_NONE, L_WAIT, L_RUN, L_DONE };

struct req_list {
	struct hbm_etcd_req *head, *tail;
	unsigned int n;
};

struct hbm_etcd_req {
	struct hbm_etcd_async *as;
	struct hbm_etcd_req *prev, *next;
	int list;			/* L_* */
	enum hbm_etcd_op op;
	const char *path;
	char *body;
	int64_t lease_id;		/* keepalive */
	uint64_t deadline;		/* 0: none */
	hbm_etcd_done_fn *fn;
	void *arg;
	CURL *c;
	struct hbm_etcd_buf b;
	unsigned int ep;		/* the endpoint of this try */
	unsigned int tried;		/* endpoints that failed */
	struct hbm_etcd_result res;
	char err[640];
};

struct hbm_etcd_async {
	struct hbm_etcd *e;
	CURLM *multi;
	struct req_list wait, run, done;
	struct hbm_etcd_req *calling;	/* its callback runs */
	struct pollfd fds[HBM_ETCD_ASYNC_MAX_FDS];
	unsigned int nfds;
	bool overflow;			/* curl wanted more descriptors than we keep */
	uint64_t timer;			/* curl's, CLOCK_MONOTONIC; UINT64_MAX: none */
};

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void l_add(struct req_list *l, struct hbm_etcd_req *r, bool front, int which)
{
	r->prev = r->next = NULL;
	if (front) {
		r->next = l->head;
		if (l->head)
			l->head->prev = r;
		else
			l->tail = r;
		l->head = r;
	} else {
		r->prev = l->tail;
		if (l->tail)
			l->tail->next = r;
		else
			l->head = r;
		l->tail = r;
	}
	l->n++;
	r->list = which;
}

static struct req_list *list_of(struct hbm_etcd_async *as, struct hbm_etcd_req *r)
{
	switch (r->list) {
	case L_WAIT: return &as->wait;
	case L_RUN: return &as->run;
	case L_DONE: return &as->done;
	default: return NULL;
	}
}

static void l_del(struct hbm_etcd_async *as, struct hbm_etcd_req *r)
{
	struct req_list *l = list_of(as, r);

	if (!l)
		return;
	if (r->prev)
		r->prev->next = r->next;
	else
		l->head = r->next;
	if (r->next)
		r->next->prev = r->prev;
	else
		l->tail = r->prev;
	l->n--;
	r->prev = r->next = NULL;
	r->list = L_NONE;
}

static void req_free(struct hbm_etcd_async *as, struct hbm_etcd_req *r)
{
	if (r->c) {
		if (r->list == L_RUN)
			curl_multi_remove_handle(as->multi, r->c);
		curl_easy_cleanup(r->c);
	}
	l_del(as, r);
	hbm_etcd_kvs_free(&r->res.kvs);
	free(r->b.p);
	free(r->body);
	free(r);
}

/* ---- curl's callbacks ---- */

static int on_socket(CURL *c, curl_socket_t s, int what, void *arg, void *sockp)
{
	struct hbm_etcd_async *as = arg;
	unsigned int i;

	(void)c;
	(void)sockp;
	for (i = 0; i < as->nfds && as->fds[i].fd != s; i++)
		;
	if (what == CURL_POLL_REMOVE) {
		if (i < as->nfds)
			as->fds[i] = as->fds[--as->nfds];
		return 0;
	}
	if (i == as->nfds) {
		if (as->nfds == HBM_ETCD_ASYNC_MAX_FDS) {
			as->overflow = true;
			return -1;
		}
		as->nfds++;
	}
	as->fds[i].fd = s;
	as->fds[i].events = (what & CURL_POLL_IN ? POLLIN : 0) | (what & CURL_POLL_OUT ? POLLOUT : 0);
	as->fds[i].revents = 0;
	return 0;
}

static int on_timer(CURLM *m, long timeout_ms, void *arg)
{
	struct hbm_etcd_async *as = arg;

	(void)m;
	as->timer = timeout_ms < 0 ? UINT64_MAX : mono_ms() + (uint64_t)timeout_ms;
	return 0;
}

/* ---- the requests' life ---- */

int hbm_etcd_async_open(struct hbm_etcd *e, struct hbm_etcd_async **out)
{
	struct hbm_etcd_async *as = calloc(1, sizeof(*as));

	*out = NULL;
	if (!as)
		return -ENOMEM;
	as->e = e;
	as->timer = UINT64_MAX;
	as->multi = curl_multi_init();
	if (!as->multi) {
		free(as);
		return -ENOMEM;
	}
	curl_multi_setopt(as->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
	curl_multi_setopt(as->multi, CURLMOPT_SOCKETDATA, as);
	curl_multi_setopt(as->multi, CURLMOPT_TIMERFUNCTION, on_timer);
	curl_multi_setopt(as->multi, CURLMOPT_TIMERDATA, as);
	curl_multi_setopt(as->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS,
			  (long)HBM_ETCD_ASYNC_MAX_XFERS);
	curl_multi_setopt(as->multi, CURLMOPT_MAXCONNECTS, (long)HBM_ETCD_ASYNC_MAX_XFERS);
	*out = as;
	return 0;
}

void hbm_etcd_async_cancel_all(struct hbm_etcd_async *as)
{
	struct req_list *ls[] = { &as->wait, &as->run, &as->done };
	struct hbm_etcd_req *r, *next;
	size_t i;

	for (i = 0; i < sizeof(ls) / sizeof(ls[0]); i++)
		for (r = ls[i]->head; r; r = next) {
			next = r->next;
			req_free(as, r);
		}
}

void hbm_etcd_async_close(struct hbm_etcd_async *as)
{
	if (!as)
		return;
	hbm_etcd_async_cancel_all(as);
	curl_multi_cleanup(as->multi);
	free(as);
}

void hbm_etcd_async_cancel(struct hbm_etcd_async *as, struct hbm_etcd_req *r)
{
	if (!r || r == as->calling)
		return;
	req_free(as, r);
}

unsigned int hbm_etcd_async_pending(const struct hbm_etcd_async *as)
{
	return as->wait.n + as->run.n + as->done.n;
}

/* The request ended with r->res.ret and r->err: its callback is due. */
static void finish(struct hbm_etcd_async *as, struct hbm_etcd_req *r)
{
	if (r->res.ret) {
		if (r->tried >= as->e->nr && as->e->nr > 1) {
			char last[sizeof(r->err)];

			memcpy(last, r->err, sizeof(last));
			snprintf(r->err, sizeof(r->err), "all %u etcd endpoints failed; the last: %.560s",
				 as->e->nr, last);
		}
	} else {
		r->err[0] = '\0';
	}
	l_add(&as->done, r, false, L_DONE);
}

/* One try of r on endpoint r->ep; false if it could not begin (r finished). */
static bool begin(struct hbm_etcd_async *as, struct hbm_etcd_req *r)
{
	const char *ep = as->e->endpoints[r->ep];
	uint64_t now = mono_ms();
	long timeout = as->e->request_ms;
	char url[512];

	if (r->deadline) {
		if (now >= r->deadline) {
			snprintf(r->err, sizeof(r->err), "etcd %s%s: %s", ep, r->path,
				 r->tried ? "no time left for the next endpoint before the deadline" :
					    "its deadline passed before it could be sent");
			r->res.ret = -ETIMEDOUT;
			finish(as, r);
			return false;
		}
		if (r->deadline - now < (uint64_t)timeout)
			timeout = (long)(r->deadline - now);
	}
	if (!r->c) {
		r->c = curl_easy_init();
		if (!r->c || hbm_etcd_setup_handle(as->e, r->c)) {
			snprintf(r->err, sizeof(r->err), "etcd %s%s: curl setup failed", ep, r->path);
			r->res.ret = -ENOMEM;
			finish(as, r);
			return false;
		}
		curl_easy_setopt(r->c, CURLOPT_POSTFIELDS, r->body);
		curl_easy_setopt(r->c, CURLOPT_WRITEFUNCTION, hbm_etcd_on_data);
		curl_easy_setopt(r->c, CURLOPT_WRITEDATA, &r->b);
		curl_easy_setopt(r->c, CURLOPT_PRIVATE, r);
	}
	r->b.len = 0;
	r->b.too_big = false;
	if (r->b.p)
		r->b.p[0] = '\0';
	snprintf(url, sizeof(url), "%s%s", ep, r->path);
	curl_easy_setopt(r->c, CURLOPT_URL, url);
	curl_easy_setopt(r->c, CURLOPT_TIMEOUT_MS, timeout);
	r->res.sent_ms = now;
	if (curl_multi_add_handle(as->multi, r->c) != CURLM_OK) {
		snprintf(r->err, sizeof(r->err), "etcd %s%s: curl multi failed", ep, r->path);
		r->res.ret = -ENOMEM;
		finish(as, r);
		return false;
	}
	l_add(&as->run, r, false, L_RUN);
	return true;
}

/* Start what waits while there is room. */
static void pump(struct hbm_etcd_async *as)
{
	struct hbm_etcd_req *r;

	while (as->run.n < HBM_ETCD_ASYNC_MAX_XFERS && (r = as->wait.head)) {
		l_del(as, r);
		begin(as, r);
	}
}

static int start(struct hbm_etcd_async *as, enum hbm_etcd_op op, const char *path, char *body,
		 int built, int64_t lease_id, unsigned int flags, uint64_t deadline,
		 hbm_etcd_done_fn *fn, void *arg, struct hbm_etcd_req **out)
{
	struct hbm_etcd_req *r;

	if (out)
		*out = NULL;
	if (built) {
		free(body);
		return built;
	}
	if (!fn) {
		free(body);
		return -EINVAL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		free(body);
		return -ENOMEM;
	}
	r->as = as;
	r->op = op;
	r->path = path;
	r->body = body;
	r->lease_id = lease_id;
	r->deadline = deadline;
	r->fn = fn;
	r->arg = arg;
	r->ep = as->e->cur;
	r->res.op = op;
	r->res.err = r->err;
	r->res.started_ms = mono_ms();
	l_add(&as->wait, r, flags & HBM_ETCD_URGENT, L_WAIT);
	if (out)
		*out = r;
	pump(as);
	return 0;
}

int hbm_etcd_async_keepalive(struct hbm_etcd_async *as, int64_t id, unsigned int flags,
			     uint64_t deadline_ms, hbm_etcd_done_fn *fn, void *arg,
			     struct hbm_etcd_req **out)
{
	char *body;
	int ret = hbm_etcd_body_keepalive(id, &body);

	return start(as, HBM_ETCD_KEEPALIVE, "/v3/lease/keepalive", body, ret, id, flags,
		     deadline_ms, fn, arg, out);
}

int hbm_etcd_async_put(struct hbm_etcd_async *as, const char *key, const void *value,
		       size_t value_len, int64_t lease, hbm_etcd_done_fn *fn, void *arg,
		       struct hbm_etcd_req **out)
{
	char *body;
	int ret = hbm_etcd_body_put(key, value, value_len, lease, &body);

	return start(as, HBM_ETCD_PUT, "/v3/kv/put", body, ret, 0, 0, 0, fn, arg, out);
}

int hbm_etcd_async_delete(struct hbm_etcd_async *as, const char *key, bool prefix,
			  hbm_etcd_done_fn *fn, void *arg, struct hbm_etcd_req **out)
{
	char *body;
	int ret = hbm_etcd_body_delete(key, prefix, &body);

	return start(as, HBM_ETCD_DELETE, "/v3/kv/deleterange", body, ret, 0, 0, 0, fn, arg, out);
}

int hbm_etcd_async_create(struct hbm_etcd_async *as, const char *key, const void *value,
			  size_t value_len, int64_t lease, hbm_etcd_done_fn *fn, void *arg,
			  struct hbm_etcd_req **out)
{
	char *body;
	int ret = hbm_etcd_body_create(key, value, value_len, lease, &body);

	return start(as, HBM_ETCD_CREATE, "/v3/kv/txn", body, ret, 0, 0, 0, fn, arg, out);
}

int hbm_etcd_async_range(struct hbm_etcd_async *as, const char *key, bool prefix,
			 hbm_etcd_done_fn *fn, void *arg, struct hbm_etcd_req **out)
{
	char *body;
	int ret = hbm_etcd_body_range(key, prefix, &body);

	return start(as, HBM_ETCD_RANGE, "/v3/kv/range", body, ret, 0, 0, 0, fn, arg, out);
}

int hbm_etcd_async_probe(struct hbm_etcd_async *as, const char *key, bool prefix,
			 hbm_etcd_done_fn *fn, void *arg, struct hbm_etcd_req **out)
{
	char *body;
	int ret = hbm_etcd_body_probe(key, prefix, &body);

	return start(as, HBM_ETCD_PROBE, "/v3/kv/range", body, ret, 0, 0, 0, fn, arg, out);
}

/* An HTTP 200 reply, parsed for r's op. */
static int parse(struct hbm_etcd_req *r, char *why, size_t wl)
{
	const char *reply = r->b.p ? r->b.p : "";
	struct hbm_etcd_result *res = &r->res;

	switch (r->op) {
	case HBM_ETCD_KEEPALIVE:
		return hbm_etcd_reply_keepalive(reply, r->lease_id, &res->ttl, &res->rev, why, wl);
	case HBM_ETCD_PUT:
		return hbm_etcd_reply_put(reply, &res->rev, why, wl);
	case HBM_ETCD_DELETE:
		return hbm_etcd_reply_delete(reply, &res->deleted, &res->rev, why, wl);
	case HBM_ETCD_CREATE:
		return hbm_etcd_reply_create(reply, &res->created, &res->kvs, &res->rev, why, wl);
	case HBM_ETCD_RANGE:
		return hbm_etcd_reply_range(reply, &res->kvs, &res->rev, why, wl);
	case HBM_ETCD_PROBE:
		return hbm_etcd_reply_probe(reply, &res->count, &res->max_mod, &res->rev, why, wl);
	}
	return -EINVAL;
}

/* r's try ended (removed from the multi handle): done, or the next endpoint. */
static void try_ended(struct hbm_etcd_async *as, struct hbm_etcd_req *r, CURLcode code)
{
	struct hbm_etcd *e = as->e;
	const char *ep = e->endpoints[r->ep];
	bool next = false;
	long status = 0;
	char why[384];
	int ret;

	if (code == CURLE_OK)
		curl_easy_getinfo(r->c, CURLINFO_RESPONSE_CODE, &status);
	if (code != CURLE_OK) {
		ret = r->b.too_big ? -EPROTO : hbm_etcd_curl_errno(code);
		snprintf(r->err, sizeof(r->err), "etcd %s%s: %s", ep, r->path,
			 r->b.too_big ? "reply larger than 64 MiB" : curl_easy_strerror(code));
		next = !r->b.too_big && hbm_etcd_transport_failure(code);
	} else if (status != 200) {
		ret = hbm_etcd_reply_http_error(status, r->b.p, why, sizeof(why));
		snprintf(r->err, sizeof(r->err), "etcd %s%s: %s", ep, r->path, why);
		next = ret == -EAGAIN || status == 502 || status == 503;
	} else {
		ret = parse(r, why, sizeof(why));
		if (ret == -EPROTO)
			snprintf(r->err, sizeof(r->err), "etcd %s%s: bad reply: %s", ep, r->path, why);
		else if (ret)
			snprintf(r->err, sizeof(r->err), "etcd %s%s: %s", ep, r->path, why);
		if (!ret)
			e->cur = r->ep;	/* it answered: the next request starts there */
	}
	r->res.ret = ret;
	if (next) {
		if (e->cur == r->ep)
			e->cur = (r->ep + 1) % e->nr;
		if (++r->tried < e->nr) {
			r->ep = (r->ep + 1) % e->nr;
			l_add(&as->wait, r, true, L_WAIT);	/* first in line */
			return;
		}
	}
	finish(as, r);
}

unsigned int hbm_etcd_async_fds(const struct hbm_etcd_async *as, struct pollfd *fds,
				unsigned int n)
{
	unsigned int i;

	for (i = 0; i < as->nfds && i < n; i++)
		fds[i] = as->fds[i];
	return i;
}

bool hbm_etcd_async_owns(const struct hbm_etcd_async *as, int fd)
{
	unsigned int i;

	for (i = 0; i < as->nfds; i++)
		if (as->fds[i].fd == fd)
			return true;
	return false;
}

uint64_t hbm_etcd_async_deadline(const struct hbm_etcd_async *as)
{
	return as->done.n ? 0 : as->timer;
}

void hbm_etcd_async_event(struct hbm_etcd_async *as, int fd, short revents)
{
	struct hbm_etcd_req *r;
	int running, ev = 0, left;
	CURLMsg *msg;

	if (as->calling)
		return;		/* not from a callback */
	if (fd >= 0) {
		ev |= revents & POLLIN ? CURL_CSELECT_IN : 0;
		ev |= revents & POLLOUT ? CURL_CSELECT_OUT : 0;
		ev |= revents & (POLLERR | POLLHUP) ? CURL_CSELECT_ERR : 0;
	} else if (as->timer != UINT64_MAX && mono_ms() < as->timer) {
		ev = -1;	/* curl's timer is not due: only the callbacks */
	}
	if (ev >= 0)
		curl_multi_socket_action(as->multi, fd >= 0 ? fd : CURL_SOCKET_TIMEOUT, ev,
					 &running);
	while ((msg = curl_multi_info_read(as->multi, &left))) {
		CURL *c = msg->easy_handle;
		CURLcode code = msg->data.result;

		if (msg->msg != CURLMSG_DONE)
			continue;
		r = NULL;
		curl_easy_getinfo(c, CURLINFO_PRIVATE, (char **)&r);
		curl_multi_remove_handle(as->multi, c);
		if (!r)
			continue;
		l_del(as, r);
		try_ended(as, r, code);
	}
	if (as->overflow) {
		/* curl could not watch a socket: fail what runs rather than hang */
		as->overflow = false;
		while ((r = as->run.head)) {
			curl_multi_remove_handle(as->multi, r->c);
			l_del(as, r);
			snprintf(r->err, sizeof(r->err), "etcd: more than %d descriptors",
				 HBM_ETCD_ASYNC_MAX_FDS);
			r->res.ret = -EMFILE;
			finish(as, r);
		}
	}
	pump(as);
	while ((r = as->done.head)) {
		l_del(as, r);
		as->calling = r;
		r->fn(r->arg, &r->res);
		as->calling = NULL;
		req_free(as, r);
		pump(as);
	}
}
