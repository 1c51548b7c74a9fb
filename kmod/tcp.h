/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The TCP transport: what its files share.
 *
 *  - tcp_sock.c:   socket I/O (whole frames, runs of pages, digests) and the
 *                  handshake's HMAC, for both sides;
 *  - tcp_client.c: the transport "tcp" (struct hbmpool_transport): one
 *                  connection per remote node, tagged requests, keepalive,
 *                  reconnection with backoff, the link's health; what the
 *                  transport "shm" (shm_client.c, shm.h) reuses of it is
 *                  in tcp_client.h, private to the two;
 *  - tcp_home.c:   the home side: the listener on this node's address and
 *                  one session per connected client, serving this node's
 *                  exported segment (export.c) and checking every request.
 *
 * The frames are those of wire.h (Documentation/wire-protocol.rst).
 */
#ifndef _HBMPOOL_TCP_H
#define _HBMPOOL_TCP_H

#include <linux/net.h>
#include <linux/types.h>

#include "wire.h"

struct hbmpool_node_conf;
struct page;
struct seq_file;

/* Timing of the TCP transport, in milliseconds. */
#define HBMPOOL_TCP_CONNECT_MS		2000	/* connect; each send of the handshake */
#define HBMPOOL_TCP_HANDSHAKE_MS	4000	/* the whole handshake, from HELLO */
#define HBMPOOL_TCP_PING_MS		1000	/* keepalive: a PING this often */
#define HBMPOOL_TCP_DEAD_MS		4000	/* nothing heard while waiting: dead */
#define HBMPOOL_TCP_IDLE_MS		30000	/* a home drops a client silent this long */
#define HBMPOOL_TCP_BACKOFF_MIN_MS	100
#define HBMPOOL_TCP_BACKOFF_MAX_MS	5000

/* A home's limits on its clients. */
#define HBMPOOL_TCP_MAX_SESSIONS	511	/* + the acceptor: WQ_UNBOUND_MAX_ACTIVE */
#define HBMPOOL_TCP_MAX_UNAUTH		32	/* in the handshake at once */

/* ---- tcp_sock.c ---- */

int hbmpool_tcp_send(struct socket *sock, const void *buf, size_t len,
		     bool more);
int hbmpool_tcp_send_pages(struct socket *sock, struct page **pages,
			   unsigned int nr, bool more);
int hbmpool_tcp_recv(struct socket *sock, void *buf, size_t len);
int hbmpool_tcp_recv_pages(struct socket *sock, struct page **pages,
			   unsigned int nr);
int hbmpool_tcp_send_frame(struct socket *sock, enum hbmw_op op, u16 flags,
			   u32 tag, u32 status, u64 offset, u32 length,
			   const void *payload, size_t payload_len);
int hbmpool_tcp_recv_frame(struct socket *sock, enum hbmw_role role,
			   struct hbmw_hdr *h, void *payload, size_t max,
			   enum hbmw_err *why, unsigned long deadline);
int hbmpool_tcp_mac(const struct hbmw_hello *hello,
		    const struct hbmw_challenge *challenge, bool from_home,
		    u8 mac[HBMW_MAC_LEN]);
void hbmpool_tcp_set_timeouts(struct socket *sock, unsigned int ms);

/* ---- tcp_digest.c ---- */

int hbmpool_tcp_digest_init(void);
void hbmpool_tcp_digest_exit(void);
u32 hbmpool_tcp_pages_digest(struct page **pages, unsigned int nr);
u32 hbmpool_tcp_pages_digest_each(struct page **pages, unsigned int nr,
				  u32 *crc);
bool hbmpool_tcp_digest_fold_ok(void);
u32 hbmpool_tcp_digest_fold(const u32 *crc, unsigned int nr);
void hbmpool_tcp_digest_show(struct seq_file *m);

/* ---- tcp_client.c ---- */

int hbmpool_tcp_client_init(void);
void hbmpool_tcp_client_exit(void);

/* ---- tcp_home.c ---- */

/* What a home counts: shown in the segment object and in debugfs. */
struct hbmpool_tcp_home_stats {
	u64 accepted;		/* connections accepted */
	u64 sessions;		/* authenticated sessions now */
	u64 auth_failures;	/* wrong key, domain, ids; unauthenticated drops */
	u64 rejected;		/* frames refused after the handshake */
	u64 reasons[HBMW_NR_ERRS];	/* per enum hbmw_err */
};

int hbmpool_tcp_home_init(void);
void hbmpool_tcp_home_exit(void);
int hbmpool_tcp_home_listen(const struct hbmpool_node_conf *conf);
void hbmpool_tcp_home_forget(u32 client);
void hbmpool_tcp_home_stats(struct hbmpool_tcp_home_stats *st);

#endif /* _HBMPOOL_TCP_H */
