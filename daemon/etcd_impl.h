/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside the etcd client: the client's state and the transport helpers
 * that etcd.c (synchronous calls, watches) and etcd_async.c (requests in
 * the caller's event loop) share.  Not an API: only these two include it.
 */
#ifndef HBMPOOLD_ETCD_IMPL_H
#define HBMPOOLD_ETCD_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include <curl/curl.h>

#include "etcd.h"

#define REPLY_MAX	(64u << 20)	/* a reply larger than this is refused */

/* A reply as it arrives (hbm_etcd_on_data(), NUL-terminated). */
struct hbm_etcd_buf {
	char *p;
	size_t len, cap;
	bool too_big;
};

struct hbm_etcd {
	CURL *curl;			/* the synchronous calls' handle */
	struct curl_slist *hdrs;
	char **endpoints;
	unsigned int nr, cur;		/* cur: the endpoint the next call tries first */
	char *ca, *cert, *key;
	long connect_ms, request_ms;
	char err[512];
};

/* curl's write callback into a struct hbm_etcd_buf. */
size_t hbm_etcd_on_data(char *ptr, size_t size, size_t nmemb, void *arg);
/* The options every handle gets (POST, JSON, timeouts but the request's, TLS). */
int hbm_etcd_setup_handle(struct hbm_etcd *e, CURL *c);
/* Should the next endpoint be tried after this failure? */
bool hbm_etcd_transport_failure(CURLcode r);
int hbm_etcd_curl_errno(CURLcode r);

#endif /* HBMPOOLD_ETCD_IMPL_H */
