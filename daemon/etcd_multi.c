// SPDX-License-Identifier: GPL-2.0
/*
 * Many etcd requests and watches over curl's multi socket interface and
 * epoll: see etcd_multi.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "etcd_multi.h"

#define REPLY_MAX	(64u << 20)
#define EV_BATCH	256

struct hbm_emulti {
	CURLM *multi;
	int epfd;
	long timeout_ms;		/* curl's timer, -1: none */
	struct timespec timer_set;	/* when it was set */
	struct curl_slist *hdrs;
	char *endpoint;
	long connect_ms;
	unsigned int active;
	struct hbm_emulti_xfer *xfers;	/* every transfer running */
	struct hbm_emulti_counts n;
};

struct hbm_emulti_xfer {
	struct hbm_emulti *m;
	struct hbm_emulti_xfer *next, **pprev;
	CURL *c;
	char *body;
	bool watch;
	/* a request */
	char *buf;
	size_t len, cap;
	bool too_big;
	hbm_emulti_done_fn *done;
	/* a watch */
	struct hbm_etcd_watch_parser p;
	hbm_etcd_watch_fn *fn;
	hbm_emulti_end_fn *end;
	uint64_t *up, *down;
	int ret;
	void *arg;
};

static int on_socket(CURL *c, curl_socket_t s, int what, void *arg, void *sockp)
{
	struct hbm_emulti *m = arg;
	struct epoll_event ev = { .data.fd = s };

	(void)c;
	if (what == CURL_POLL_REMOVE) {
		epoll_ctl(m->epfd, EPOLL_CTL_DEL, s, NULL);
		curl_multi_assign(m->multi, s, NULL);
		return 0;
	}
	ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
	if (!sockp) {
		if (epoll_ctl(m->epfd, EPOLL_CTL_ADD, s, &ev) && errno == EEXIST)
			epoll_ctl(m->epfd, EPOLL_CTL_MOD, s, &ev);
		curl_multi_assign(m->multi, s, m);	/* "known" */
	} else {
		epoll_ctl(m->epfd, EPOLL_CTL_MOD, s, &ev);
	}
	return 0;
}

static int on_timer(CURLM *multi, long timeout_ms, void *arg)
{
	struct hbm_emulti *m = arg;

	(void)multi;
	m->timeout_ms = timeout_ms;
	clock_gettime(CLOCK_MONOTONIC, &m->timer_set);
	return 0;
}

int hbm_emulti_open(const char *endpoint, unsigned int connect_ms, struct hbm_emulti **out)
{
	struct hbm_emulti *m;

	*out = NULL;
	if (curl_global_init(CURL_GLOBAL_DEFAULT))
		return -ENOMEM;
	m = calloc(1, sizeof(*m));
	if (!m) {
		curl_global_cleanup();
		return -ENOMEM;
	}
	m->epfd = epoll_create1(EPOLL_CLOEXEC);
	m->multi = curl_multi_init();
	m->endpoint = strdup(endpoint);
	m->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	m->timeout_ms = -1;
	m->connect_ms = connect_ms ? connect_ms : 1000;
	if (m->epfd < 0 || !m->multi || !m->endpoint || !m->hdrs) {
		hbm_emulti_close(m);
		return -ENOMEM;
	}
	if (m->endpoint[0] && m->endpoint[strlen(m->endpoint) - 1] == '/')
		m->endpoint[strlen(m->endpoint) - 1] = '\0';
	curl_multi_setopt(m->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
	curl_multi_setopt(m->multi, CURLMOPT_SOCKETDATA, m);
	curl_multi_setopt(m->multi, CURLMOPT_TIMERFUNCTION, on_timer);
	curl_multi_setopt(m->multi, CURLMOPT_TIMERDATA, m);
	*out = m;
	return 0;
}

static void xfer_free(struct hbm_emulti_xfer *x)
{
	if (x->c)
		curl_easy_cleanup(x->c);
	if (x->watch)
		hbm_etcd_watch_parser_fini(&x->p);
	free(x->body);
	free(x->buf);
	free(x);
}

static void unlink_xfer(struct hbm_emulti *m, struct hbm_emulti_xfer *x)
{
	curl_multi_remove_handle(m->multi, x->c);
	m->active--;
	*x->pprev = x->next;
	if (x->next)
		x->next->pprev = x->pprev;
}

void hbm_emulti_cancel(struct hbm_emulti *m, struct hbm_emulti_xfer *x)
{
	if (!x)
		return;
	unlink_xfer(m, x);
	xfer_free(x);
}

void hbm_emulti_close(struct hbm_emulti *m)
{
	if (!m)
		return;
	while (m->xfers)
		hbm_emulti_cancel(m, m->xfers);
	if (m->multi)
		curl_multi_cleanup(m->multi);
	if (m->epfd >= 0)
		close(m->epfd);
	curl_slist_free_all(m->hdrs);
	free(m->endpoint);
	free(m);
	curl_global_cleanup();
}

static size_t on_reply(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct hbm_emulti_xfer *x = arg;
	size_t n = size * nmemb;
	char *p;

	if (x->len + n + 1 > REPLY_MAX) {
		x->too_big = true;
		return 0;
	}
	if (x->len + n + 1 > x->cap) {
		size_t cap = x->cap ? x->cap : 1024;

		while (cap < x->len + n + 1)
			cap *= 2;
		p = realloc(x->buf, cap);
		if (!p)
			return 0;
		x->buf = p;
		x->cap = cap;
	}
	memcpy(x->buf + x->len, ptr, n);
	x->len += n;
	x->buf[x->len] = '\0';
	return n;
}

/* Counts watch messages on their way to the caller's callback. */
static int count_msg(const struct hbm_etcd_watch_msg *msg, void *arg)
{
	struct hbm_emulti_xfer *x = arg;

	x->m->n.watch_msgs++;
	return x->fn(msg, x->arg);
}

static size_t on_watch(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct hbm_emulti_xfer *x = arg;
	size_t n = size * nmemb;

	*x->down += n;
	x->m->n.down += n;
	x->ret = hbm_etcd_watch_feed(&x->p, ptr, n, count_msg, x);
	return x->ret ? 0 : n;
}

static int start(struct hbm_emulti *m, struct hbm_emulti_xfer *x, const char *path,
		 unsigned int timeout_ms)
{
	char url[512];
	CURLcode r = CURLE_OK;

	x->m = m;
	x->c = curl_easy_init();
	if (!x->c)
		return -ENOMEM;
	snprintf(url, sizeof(url), "%s%s", m->endpoint, path);
#define SET(opt, val) do { if (r == CURLE_OK) r = curl_easy_setopt(x->c, opt, val); } while (0)
	SET(CURLOPT_URL, url);
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_POST, 1L);
	SET(CURLOPT_HTTPHEADER, m->hdrs);
	SET(CURLOPT_POSTFIELDS, x->body);
	SET(CURLOPT_CONNECTTIMEOUT_MS, m->connect_ms);
	SET(CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	SET(CURLOPT_PROXY, "");
	SET(CURLOPT_NOPROXY, "*");
	SET(CURLOPT_PRIVATE, x);
	SET(CURLOPT_WRITEFUNCTION, x->watch ? on_watch : on_reply);
	SET(CURLOPT_WRITEDATA, x);
#undef SET
	if (r != CURLE_OK || curl_multi_add_handle(m->multi, x->c) != CURLM_OK)
		return -ENOMEM;
	m->active++;
	m->n.requests++;
	x->next = m->xfers;
	x->pprev = &m->xfers;
	if (m->xfers)
		m->xfers->pprev = &x->next;
	m->xfers = x;
	return 0;
}

int hbm_emulti_post(struct hbm_emulti *m, const char *path, char *body, unsigned int timeout_ms,
		    hbm_emulti_done_fn *fn, void *arg, struct hbm_emulti_xfer **out)
{
	struct hbm_emulti_xfer *x = calloc(1, sizeof(*x));
	int ret;

	if (out)
		*out = NULL;
	if (!x) {
		free(body);
		return -ENOMEM;
	}
	x->body = body;
	x->done = fn;
	x->arg = arg;
	ret = start(m, x, path, timeout_ms);
	if (ret) {
		xfer_free(x);
		return ret;
	}
	if (out)
		*out = x;
	return 0;
}

int hbm_emulti_watch(struct hbm_emulti *m, char *body, hbm_etcd_watch_fn *fn,
		     hbm_emulti_end_fn *end, void *arg, uint64_t *up, uint64_t *down,
		     struct hbm_emulti_xfer **out)
{
	struct hbm_emulti_xfer *x = calloc(1, sizeof(*x));
	int ret;

	*out = NULL;
	if (!x) {
		free(body);
		return -ENOMEM;
	}
	x->body = body;
	x->watch = true;
	x->fn = fn;
	x->end = end;
	x->arg = arg;
	x->up = up;
	x->down = down;
	ret = hbm_etcd_watch_parser_init(&x->p);
	if (!ret)
		ret = start(m, x, "/v3/watch", 0);
	if (ret) {
		xfer_free(x);
		return ret;
	}
	*out = x;
	return 0;
}

static void finished(struct hbm_emulti *m, CURL *c, CURLcode r)
{
	struct hbm_emulti_xfer *x = NULL;
	curl_off_t dl = 0;
	long status = 0, req = 0, hdr = 0;
	uint64_t up, down;
	char why[300];

	curl_easy_getinfo(c, CURLINFO_PRIVATE, (char **)&x);
	if (!x)
		return;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(c, CURLINFO_REQUEST_SIZE, &req);
	curl_easy_getinfo(c, CURLINFO_HEADER_SIZE, &hdr);
	curl_easy_getinfo(c, CURLINFO_SIZE_DOWNLOAD_T, &dl);
	/* REQUEST_SIZE holds the request line, the headers and the body (checked) */
	up = (uint64_t)req;
	down = (uint64_t)hdr + (x->watch ? 0 : (uint64_t)dl);
	unlink_xfer(m, x);
	m->n.up += up;
	m->n.down += down;
	if (x->watch) {
		*x->up += up;
		*x->down += down;
		if (x->ret)
			snprintf(why, sizeof(why), "%s", x->ret < 0 ? x->p.err : "stopped");
		else if (r != CURLE_OK)
			snprintf(why, sizeof(why), "%s", curl_easy_strerror(r));
		else
			snprintf(why, sizeof(why), "HTTP %ld, the stream ended", status);
		x->end(x->arg, x->ret ? x->ret : r != CURLE_OK ? -EIO : -EPIPE, why);
	} else {
		int err = 0;

		if (r != CURLE_OK)
			err = x->too_big ? -EPROTO : r == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT :
			      r == CURLE_COULDNT_CONNECT ? -ECONNREFUSED : -EIO;
		x->done(x->arg, err, status, x->buf ? x->buf : "", up, down);
	}
	xfer_free(x);
}

static long elapsed_ms(const struct timespec *t)
{
	struct timespec n;

	clock_gettime(CLOCK_MONOTONIC, &n);
	return (n.tv_sec - t->tv_sec) * 1000 + (n.tv_nsec - t->tv_nsec) / 1000000;
}

int hbm_emulti_run(struct hbm_emulti *m, int max_wait_ms)
{
	struct epoll_event ev[EV_BATCH];
	int wait = max_wait_ms, n, i, running;
	CURLMsg *msg;
	int left;

	if (m->timeout_ms >= 0) {
		long rest = m->timeout_ms - elapsed_ms(&m->timer_set);

		if (rest < wait)
			wait = rest < 0 ? 0 : (int)rest;
	}
	n = epoll_wait(m->epfd, ev, EV_BATCH, wait);
	if (n < 0 && errno != EINTR)
		return -errno;
	for (i = 0; i < n; i++) {
		int what = (ev[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) |
			   (ev[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
			   (ev[i].events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);

		curl_multi_socket_action(m->multi, ev[i].data.fd, what, &running);
	}
	if (m->timeout_ms >= 0 && elapsed_ms(&m->timer_set) >= m->timeout_ms) {
		m->timeout_ms = -1;
		curl_multi_socket_action(m->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	}
	while ((msg = curl_multi_info_read(m->multi, &left))) {
		if (msg->msg == CURLMSG_DONE)
			finished(m, msg->easy_handle, msg->data.result);
	}
	return 0;
}

void hbm_emulti_counts(const struct hbm_emulti *m, struct hbm_emulti_counts *c)
{
	*c = m->n;
}

unsigned int hbm_emulti_active(const struct hbm_emulti *m)
{
	return m->active;
}
