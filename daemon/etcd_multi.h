/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Many etcd requests and watch streams at once from one thread: curl's
 * multi socket interface over epoll, on one endpoint of etcd's JSON
 * gateway.  The bodies and replies are etcd.c's (hbm_etcd_body_*(),
 * hbm_etcd_reply_*(), the watch parser); this is only their transport.
 * Written for the membership scale benchmark (tools/bench/), where one
 * process plays 1024 nodes; the daemon itself still uses etcd.c.
 *
 * Requests are POSTs: the callback gets the HTTP status and the reply (or a
 * negative errno when no answer came), and the bytes the request moved (HTTP
 * headers and bodies, both ways).  A watch calls its message callback for
 * every message of the stream, and its end callback once when the stream
 * ends (never after hbm_emulti_cancel()).  Callbacks run inside
 * hbm_emulti_run(); they may start new transfers and cancel others, but
 * not the one they are called for.
 */
#ifndef HBMPOOLD_ETCD_MULTI_H
#define HBMPOOLD_ETCD_MULTI_H

#include <stdint.h>

#include "etcd.h"

struct hbm_emulti;
struct hbm_emulti_xfer;

/* err: 0 or a negative errno (no answer); reply NUL-terminated ("" if none). */
typedef void hbm_emulti_done_fn(void *arg, int err, long status, const char *reply,
				uint64_t up, uint64_t down);
/* The watch ended: err is fn's return, -EPIPE (etcd closed it), -EIO... */
typedef void hbm_emulti_end_fn(void *arg, int err, const char *why);

struct hbm_emulti_counts {
	uint64_t requests;		/* POSTs and watches started */
	uint64_t watch_msgs;		/* watch messages delivered */
	uint64_t up, down;		/* bytes, as the callbacks report them */
};

int hbm_emulti_open(const char *endpoint, unsigned int connect_ms, struct hbm_emulti **out);
void hbm_emulti_close(struct hbm_emulti *m);
/* POST body (consumed, freed by the transfer) to path; timeout for the whole request. */
int hbm_emulti_post(struct hbm_emulti *m, const char *path, char *body, unsigned int timeout_ms,
		    hbm_emulti_done_fn *fn, void *arg, struct hbm_emulti_xfer **out);
/* A watch (body from hbm_etcd_body_watch(), consumed); its bytes also go to *up, *down. */
int hbm_emulti_watch(struct hbm_emulti *m, char *body, hbm_etcd_watch_fn *fn,
		     hbm_emulti_end_fn *end, void *arg, uint64_t *up, uint64_t *down,
		     struct hbm_emulti_xfer **out);
/* Stop a transfer; no callback follows. */
void hbm_emulti_cancel(struct hbm_emulti *m, struct hbm_emulti_xfer *x);
/* Wait up to max_wait_ms for the descriptors and curl's timer; run what is due. */
int hbm_emulti_run(struct hbm_emulti *m, int max_wait_ms);
void hbm_emulti_counts(const struct hbm_emulti *m, struct hbm_emulti_counts *c);
/* Transfers running. */
unsigned int hbm_emulti_active(const struct hbm_emulti *m);

#endif /* HBMPOOLD_ETCD_MULTI_H */
