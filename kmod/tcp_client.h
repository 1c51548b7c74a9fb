/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The TCP transport's client side, as the transports built on it see it:
 * tcp_client.c is the transport "tcp"; shm_client.c, the transport "shm",
 * is the same transport with another data path for READ and WRITE.  Not
 * for the rest of the module (tcp.h is).
 *
 * The one hook: a node's hbmpool_tcp_node.data (NULL for "tcp"), set by
 * the other transport's attach before it calls hbmpool_tcp_attach().
 */
#ifndef _HBMPOOL_TCP_CLIENT_H
#define _HBMPOOL_TCP_CLIENT_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "hbmpool.h"
#include "linkstate.h"
#include "wire.h"

struct hbmpool_tcp_node;
struct socket;
struct task_struct;

/* One request on the wire. */
struct hbmpool_tcp_cmd {
	struct list_head list;		/* on a pending or send list */
	struct hbmpool_req *req;	/* the core's transfer, or NULL */
	struct kref ref;		/* commands of the transport's own */
	struct completion done;		/* ALLOC: its caller waits */
	u8 op;				/* enum hbmw_op */
	u32 tag;
	u64 offset;
	u32 length;
	u32 data_gen;			/* the home's data the request is about */
	u64 sent_ns;
	int status;
	u64 result;			/* ALLOC: the offset; PING: the home's free bytes */
	atomic_t alloc_state;		/* ALLOC: HBMPOOL_TCP_ALLOC_* */
};

struct hbmpool_tcp_conn {
	struct hbmpool_tcp_node *tn;
	struct socket *sock;
	struct task_struct *rx;		/* the receive thread */
	struct work_struct tx_work;
	spinlock_t lock;		/* tags, inflight, send_list, dead, progress */
	struct hbmpool_tcp_cmd *tags[HBMW_MAX_TAGS];
	unsigned int inflight;
	struct list_head send_list;
	bool dead;
	unsigned long progress;		/* jiffies: last response, or first send after idle */
};

/*
 * Another data path for the core's READ and WRITE, instead of the wire:
 *
 * @xfer:  tx_work hands it each READ or WRITE (process context, no lock
 *         held) instead of sending it.  It completes the command
 *         (hbmpool_tcp_cmd_done()) and returns false, or puts it back on
 *         the send list, fails the connection (hbmpool_tcp_conn_fail())
 *         and returns true: tx_work then stops.
 * @check: after a successful handshake, before the connection is used:
 *         0 keeps it; -EPERM refuses it as a failed handshake would be
 *         (counted in auth_failures), any other error as a failed connect.
 */
struct hbmpool_tcp_data_path {
	bool (*xfer)(struct hbmpool_tcp_conn *conn, struct hbmpool_tcp_cmd *cmd);
	int (*check)(struct hbmpool_tcp_node *tn, const struct hbmw_challenge *ch);
};

/* A remote node: node->priv (first in a larger struct for "shm"). */
struct hbmpool_tcp_node {
	struct hbmpool_node *node;
	const struct hbmpool_tcp_data_path *data;	/* NULL: the wire */
	struct mutex mutex;		/* connecting and tearing down */
	/* conn, pending, health, incarnation, seg_size, shut, await_free */
	spinlock_t lock;
	struct hbmpool_tcp_conn *conn;
	struct list_head pending;	/* commands waiting for a connection */
	struct delayed_work connect_work;
	struct delayed_work keepalive_work;
	struct work_struct reset_work;
	struct hbmpool_lhealth health;
	u64 incarnation;		/* the home's, 0 before the first handshake */
	u64 seg_size;			/* the home's segment, as the handshake said */
	bool shut;
	bool await_free;		/* connected; live at the first PING answer */
	u64 free_bytes;			/* READ_ONCE: as last told, +- allocs/frees */
	atomic64_t bytes, retries, digest_errors, reconnects, auth_failures;
};

static inline struct hbmpool_tcp_node *to_tn(struct hbmpool_node *node)
{
	return node->priv;
}

static inline bool hbmpool_lstate_up(enum hbmpool_lstate s)
{
	return s == HBMPOOL_LSTATE_LIVE || s == HBMPOOL_LSTATE_DEGRADED;
}

/* For a data path. */
void hbmpool_tcp_cmd_done(struct hbmpool_tcp_node *tn,
			  struct hbmpool_tcp_cmd *cmd, int status);
void hbmpool_tcp_conn_fail(struct hbmpool_tcp_conn *conn, int err);

/* The transport's ops, which a transport built on it shares. */
int hbmpool_tcp_attach(struct hbmpool_node *node, const void *params);
void hbmpool_tcp_submit(struct hbmpool_node *node, struct hbmpool_req *req);
int hbmpool_tcp_alloc_chunks(struct hbmpool_node *node, u64 len, u64 *offset);
void hbmpool_tcp_free_chunks(struct hbmpool_node *node, u64 offset, u64 len,
			     u32 gen);
u64 hbmpool_tcp_free_bytes(struct hbmpool_node *node);
void hbmpool_tcp_shutdown(struct hbmpool_node *node);
void hbmpool_tcp_release(struct hbmpool_node *node);
void hbmpool_tcp_link_admin(struct hbmpool_node *node, bool up);
void hbmpool_tcp_link_info(struct hbmpool_node *node,
			   struct hbmpool_link_info *li);
void hbmpool_tcp_fence(struct hbmpool_node *node);

#endif /* _HBMPOOL_TCP_CLIENT_H */
