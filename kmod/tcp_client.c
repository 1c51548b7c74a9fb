// SPDX-License-Identifier: GPL-2.0
/*
 * The TCP transport, client side: how this node reaches the segment of a
 * remote home over TCP (transport "tcp").
 *
 * Per remote node (node->priv, struct hbmpool_tcp_node) one connection at
 * a time (struct hbmpool_tcp_conn), made by connect_work: TCP connect, then
 * the authenticated handshake of wire-protocol.rst.  Requests are commands
 * (struct hbmpool_tcp_cmd): the core's page transfers (READ, WRITE, in
 * req->pdu) and the transport's own ALLOC, FREE and PING.  A command waits
 * on the node's pending list while no connection is up, then on the
 * connection's send list until tx_work gives it one of HBMW_MAX_TAGS tags
 * and sends it; the connection's receive thread matches each response to
 * its tag and completes the command.  So up to 256 requests are in flight
 * per connection, and the home answers them in order.
 *
 * A connection fails on any error of its socket, a refused frame, or when
 * requests wait for longer than HBMPOOL_TCP_DEAD_MS with nothing heard
 * (keepalive_work pings every HBMPOOL_TCP_PING_MS).  reset_work then tears
 * it down: requests whose owner still waits go back to the pending list
 * (counted as retries) and are sent again on the next connection; the rest
 * are completed with an error.  connect_work retries with exponential
 * backoff (linkstate.c).  A home that answers with another incarnation has
 * lost what this node placed there: hbmpool_node_data_lost() tells the
 * core, which fails those chunks with SIGBUS and never reads them again.
 *
 * Another transport can be this one with another data path for the core's
 * READ and WRITE (the transport "shm", shm_client.c): its attach sets the
 * node's hbmpool_tcp_node.data (struct hbmpool_tcp_data_path,
 * tcp_client.h), and then tx_work hands each READ and WRITE to ->xfer()
 * instead of sending it, and a connection is used only once ->check()
 * accepted what its handshake said.  It shares this file's ops and per-node
 * state; that hook is all this file knows of it.
 *
 * Locks: hbmpool_tcp_node.mutex serialises connecting and tearing down;
 * hbmpool_tcp_node.lock protects conn, pending, health and the home's
 * learned state; hbmpool_tcp_conn.lock protects the tags, the send list and
 * dead, and nests inside the node's lock.  No lock is held across socket
 * I/O.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/algapi.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/kthread.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "hbmpool.h"
#include "linkstate.h"
#include "tcp.h"
#include "tcp_client.h"

/* Who is left with an ALLOC's answer: its caller, or the transport. */
enum {
	HBMPOOL_TCP_ALLOC_WAITING,	/* the caller waits */
	HBMPOOL_TCP_ALLOC_ANSWERED,	/* the caller takes the answer */
	HBMPOOL_TCP_ALLOC_ABANDONED,	/* the caller gave up: a chunk given is freed */
};

static unsigned int tcp_degraded_rtt_ms = 200;
module_param(tcp_degraded_rtt_ms, uint, 0444);
MODULE_PARM_DESC(tcp_degraded_rtt_ms,
		 "a TCP link whose round-trip EWMA is above this is degraded, ms (0: never; default 200)");

static unsigned int tcp_degraded_errors = 64;
module_param(tcp_degraded_errors, uint, 0444);
MODULE_PARM_DESC(tcp_degraded_errors,
		 "a TCP link failing more requests than this per 1024 (EWMA) is degraded (0: never; default 64)");

/* Set once at init from the module parameters. */
static struct hbmpool_lthresholds hbmpool_tcp_thresholds = {
	.backoff_min_ms = HBMPOOL_TCP_BACKOFF_MIN_MS,
	.backoff_max_ms = HBMPOOL_TCP_BACKOFF_MAX_MS,
};

static struct workqueue_struct *hbmpool_tcp_wq;

/* ---- link health ---- */

/*
 * Feeds the health machine; publishes a change: the node is live while the
 * link is, and unreachable once an attempt to reconnect failed (a lost
 * connection is retried at once first); a link up again clears the node's
 * suspect flag.  Process context.
 */
static void hbmpool_tcp_health(struct hbmpool_tcp_node *tn, enum hbmpool_lev ev,
			       u64 arg)
{
	struct hbmpool_node *node = tn->node;
	enum hbmpool_lstate from, to;
	bool changed, unreachable;

	spin_lock(&tn->lock);
	from = tn->health.state;
	changed = hbmpool_lhealth_event(&tn->health, &hbmpool_tcp_thresholds, ev, arg);
	to = tn->health.state;
	unreachable = to == HBMPOOL_LSTATE_DOWN && tn->health.attempts;
	spin_unlock(&tn->lock);
	if (!changed)
		return;
	might_sleep();
	/* connected again, even before the node was called unreachable */
	if (hbmpool_lstate_up(to) && !hbmpool_lstate_up(from))
		hbmpool_node_unsuspect(node);
	if (hbmpool_lstate_up(to) && READ_ONCE(node->state) == HBMPOOL_NODE_UNREACHABLE)
		hbmpool_node_link_changed(node, true);
	else if (unreachable && READ_ONCE(node->state) == HBMPOOL_NODE_LIVE)
		hbmpool_node_link_changed(node, false);
	else
		hbmpool_event(HBMPOOL_EVENT_LINK_CHANGE, node);
}

/* How long to wait before the next attempt to connect. */
static u32 hbmpool_tcp_backoff_ms(struct hbmpool_tcp_node *tn)
{
	u32 ms;

	spin_lock(&tn->lock);
	ms = hbmpool_lhealth_backoff_ms(&tn->health, &hbmpool_tcp_thresholds,
					get_random_u32());
	spin_unlock(&tn->lock);
	return ms;
}

/* ---- commands ---- */

static void hbmpool_tcp_cmd_free(struct kref *ref)
{
	kfree(container_of(ref, struct hbmpool_tcp_cmd, ref));
}

/*
 * A PING answered: the home's free bytes are known.  The first answer on a
 * new connection makes the link live, so that nothing sees the node live
 * with nothing free (placement would fail with ENOSPC, a rebalancer would
 * find nothing to move).  Process context (the receive thread).
 */
static void hbmpool_tcp_free_known(struct hbmpool_tcp_node *tn)
{
	bool up;

	spin_lock(&tn->lock);
	up = tn->await_free;
	tn->await_free = false;
	spin_unlock(&tn->lock);
	if (up)
		hbmpool_tcp_health(tn, HBMPOOL_LEV_UP, 0);
}

/*
 * The home allocated (@freed false) or freed @len bytes: the free bytes
 * follow at once, not only from the next PING's answer.  Answers come in
 * the order the home served the requests, so a PING answered later
 * includes the change and one answered earlier did not.  Without the
 * frees, regions created and freed faster than the keepalive made a home
 * with room look full (ENOSPC).
 */
static void hbmpool_tcp_free_account(struct hbmpool_tcp_node *tn, bool freed,
				     u64 len)
{
	u64 free;

	spin_lock(&tn->lock);
	free = READ_ONCE(tn->free_bytes);
	if (freed)
		free = min(free + len, tn->seg_size);
	else
		free = free > len ? free - len : 0;
	WRITE_ONCE(tn->free_bytes, free);
	spin_unlock(&tn->lock);
}

static struct hbmpool_tcp_cmd *hbmpool_tcp_cmd_new(u8 op, u64 offset, u32 length)
{
	struct hbmpool_tcp_cmd *cmd = kzalloc(sizeof(*cmd), GFP_KERNEL);

	if (!cmd)
		return NULL;
	kref_init(&cmd->ref);
	init_completion(&cmd->done);
	cmd->op = op;
	cmd->offset = offset;
	cmd->length = length;
	return cmd;
}

static void hbmpool_tcp_queue(struct hbmpool_tcp_node *tn,
			      struct hbmpool_tcp_cmd *cmd);

/* A command is over: the core's request completes, our own is told. */
void hbmpool_tcp_cmd_done(struct hbmpool_tcp_node *tn,
			  struct hbmpool_tcp_cmd *cmd, int status)
{
	struct hbmpool_tcp_cmd *undo;

	if (cmd->req) {
		if (!status)
			atomic64_add(cmd->length, &tn->bytes);
		hbmpool_req_complete(cmd->req, status);
		return;
	}
	cmd->status = status;
	if (!status && cmd->op == HBMW_OP_PING) {
		WRITE_ONCE(tn->free_bytes, cmd->result);
		hbmpool_tcp_free_known(tn);
	}
	if (!status && (cmd->op == HBMW_OP_ALLOC || cmd->op == HBMW_OP_FREE))
		hbmpool_tcp_free_account(tn, cmd->op == HBMW_OP_FREE, cmd->length);
	if (cmd->op == HBMW_OP_ALLOC &&
	    atomic_cmpxchg(&cmd->alloc_state, HBMPOOL_TCP_ALLOC_WAITING,
			   HBMPOOL_TCP_ALLOC_ANSWERED) == HBMPOOL_TCP_ALLOC_ABANDONED &&
	    !status) {
		/* nobody takes the chunk: give it back */
		undo = hbmpool_tcp_cmd_new(HBMW_OP_FREE, cmd->result, cmd->length);
		if (undo) {
			undo->data_gen = cmd->data_gen;
			hbmpool_tcp_queue(tn, undo);
		}
	}
	complete(&cmd->done);
	kref_put(&cmd->ref, hbmpool_tcp_cmd_free);
}

/*
 * Queues @cmd: on the connection if one is up, else on the pending list.
 * Any context but hard interrupt.
 */
static void hbmpool_tcp_queue(struct hbmpool_tcp_node *tn,
			      struct hbmpool_tcp_cmd *cmd)
{
	struct hbmpool_tcp_conn *conn;
	bool queued = false;

	spin_lock(&tn->lock);
	if (tn->shut) {
		spin_unlock(&tn->lock);
		hbmpool_tcp_cmd_done(tn, cmd, -ENODEV);
		return;
	}
	conn = tn->conn;
	if (conn) {
		spin_lock(&conn->lock);
		if (!conn->dead) {
			list_add_tail(&cmd->list, &conn->send_list);
			queued = true;
		}
		spin_unlock(&conn->lock);
		if (queued)
			queue_work(hbmpool_tcp_wq, &conn->tx_work);
	}
	if (!queued)
		list_add_tail(&cmd->list, &tn->pending);
	spin_unlock(&tn->lock);
}

/* Keeps @cmd (and its request) alive across a send that races its answer. */
static void hbmpool_tcp_cmd_hold(struct hbmpool_tcp_cmd *cmd)
{
	if (cmd->req)
		kref_get(&cmd->req->ref);
	else
		kref_get(&cmd->ref);
}

static void hbmpool_tcp_cmd_unhold(struct hbmpool_tcp_cmd *cmd)
{
	if (cmd->req)
		hbmpool_req_put(cmd->req);
	else
		kref_put(&cmd->ref, hbmpool_tcp_cmd_free);
}

/* ---- a connection ---- */

/* The connection failed: reset_work tears it down.  Any context. */
void hbmpool_tcp_conn_fail(struct hbmpool_tcp_conn *conn, int err)
{
	bool first;

	spin_lock(&conn->lock);
	first = !conn->dead;
	conn->dead = true;
	spin_unlock(&conn->lock);
	if (first) {
		pr_info_ratelimited("node %u: connection lost (%d)\n",
				    conn->tn->node->id, err);
		queue_work(hbmpool_tcp_wq, &conn->tn->reset_work);
	}
}

static int hbmpool_tcp_send_cmd(struct hbmpool_tcp_conn *conn,
				struct hbmpool_tcp_cmd *cmd)
{
	bool write = cmd->op == HBMW_OP_WRITE;
	struct hbmw_hdr h;
	__le32 ddgst;
	int err;

	hbmw_hdr_build(&h, cmd->op, write ? HBMW_F_DDGST : 0, cmd->tag, 0,
		       cmd->offset, cmd->length);
	cmd->sent_ns = ktime_get_ns();
	err = hbmpool_tcp_send(conn->sock, &h, sizeof(h), write);
	if (err || !write)
		return err;
	ddgst = cpu_to_le32(hbmpool_tcp_pages_digest(cmd->req->pages,
						     cmd->req->nr_pages));
	err = hbmpool_tcp_send_pages(conn->sock, cmd->req->pages,
				     cmd->req->nr_pages, true);
	if (!err)
		err = hbmpool_tcp_send(conn->sock, &ddgst, sizeof(ddgst), false);
	return err;
}

/*
 * A request about the home's data before it was lost is never sent: a
 * transfer, or the FREE of a chunk placed then.
 */
static bool hbmpool_tcp_cmd_stale(struct hbmpool_tcp_node *tn,
				  struct hbmpool_tcp_cmd *cmd)
{
	return (cmd->req || cmd->op == HBMW_OP_FREE) &&
	       cmd->data_gen != hbmpool_node_data_gen(tn->node);
}

/* Sends what the send list holds while tags are free. */
static void hbmpool_tcp_tx_work(struct work_struct *work)
{
	struct hbmpool_tcp_conn *conn = container_of(work, typeof(*conn), tx_work);
	struct hbmpool_tcp_cmd *cmd;
	unsigned int tag;
	int err;

	for (;;) {
		spin_lock(&conn->lock);
		if (conn->dead || list_empty(&conn->send_list)) {
			spin_unlock(&conn->lock);
			return;
		}
		for (tag = 0; tag < HBMW_MAX_TAGS && conn->tags[tag]; tag++)
			;
		if (tag == HBMW_MAX_TAGS) {	/* the receiver requeues us */
			spin_unlock(&conn->lock);
			return;
		}
		cmd = list_first_entry(&conn->send_list, struct hbmpool_tcp_cmd, list);
		list_del_init(&cmd->list);
		if (hbmpool_tcp_cmd_stale(conn->tn, cmd)) {
			spin_unlock(&conn->lock);
			hbmpool_tcp_cmd_done(conn->tn, cmd, -EIO);
			continue;
		}
		if (conn->tn->data && cmd->req) {	/* not on the wire */
			spin_unlock(&conn->lock);
			if (conn->tn->data->xfer(conn, cmd))
				return;
			cond_resched();		/* copies, one after the other */
			continue;
		}
		cmd->tag = tag;
		conn->tags[tag] = cmd;
		if (!conn->inflight++)
			conn->progress = jiffies;
		/* a home may answer before we are done sending: hold it */
		hbmpool_tcp_cmd_hold(cmd);
		spin_unlock(&conn->lock);
		err = hbmpool_tcp_send_cmd(conn, cmd);
		hbmpool_tcp_cmd_unhold(cmd);
		if (err) {
			hbmpool_tcp_conn_fail(conn, err);
			return;
		}
	}
}

/* Receives the payload of a READ response into its request's pages. */
static int hbmpool_tcp_rx_read(struct hbmpool_tcp_conn *conn,
			       struct hbmpool_tcp_cmd *cmd,
			       const struct hbmw_hdr *h, int *status)
{
	struct hbmpool_req *req = cmd->req;
	__le32 ddgst;
	int err;

	if (le32_to_cpu(h->length) != cmd->length ||
	    le64_to_cpu(h->offset) != cmd->offset)
		return -EPROTO;		/* the payload's size is not ours to trust */
	err = hbmpool_tcp_recv_pages(conn->sock, req->pages, req->nr_pages);
	if (err)
		return err;
	if (!(le16_to_cpu(h->flags) & HBMW_F_DDGST)) {
		*status = -EBADMSG;	/* data comes with its digest */
		return 0;
	}
	err = hbmpool_tcp_recv(conn->sock, &ddgst, sizeof(ddgst));
	if (err)
		return err;
	if (le32_to_cpu(ddgst) != hbmpool_tcp_pages_digest(req->pages, req->nr_pages)) {
		atomic64_inc(&conn->tn->digest_errors);
		pr_warn_ratelimited("node %u: bad data digest at %llu\n",
				    conn->tn->node->id, cmd->offset);
		*status = -EBADMSG;
	}
	return 0;
}

/* Receives one response and completes its command. */
static int hbmpool_tcp_rx_one(struct hbmpool_tcp_conn *conn)
{
	struct hbmpool_tcp_node *tn = conn->tn;
	struct hbmpool_tcp_cmd *cmd;
	enum hbmw_err why;
	struct hbmw_hdr h;
	bool kick;
	int status, err;
	u32 tag;

	err = hbmpool_tcp_recv(conn->sock, &h, sizeof(h));
	if (err)
		return err;
	why = hbmw_hdr_check(&h, HBMW_ROLE_CLIENT);
	if (why) {
		pr_warn_ratelimited("node %u: frame refused: %s\n", tn->node->id,
				    hbmw_err_name(why));
		return -EPROTO;
	}
	tag = le32_to_cpu(h.tag);
	spin_lock(&conn->lock);
	cmd = conn->tags[tag];
	if (!cmd || cmd->op != h.opcode || !(le16_to_cpu(h.flags) & HBMW_F_RESP)) {
		spin_unlock(&conn->lock);
		pr_warn_ratelimited("node %u: unexpected frame (opcode %u, tag %u)\n",
				    tn->node->id, h.opcode, tag);
		return -EPROTO;
	}
	conn->tags[tag] = NULL;
	conn->inflight--;
	conn->progress = jiffies;
	kick = !list_empty(&conn->send_list);
	spin_unlock(&conn->lock);
	if (kick)
		queue_work(hbmpool_tcp_wq, &conn->tx_work);

	status = hbmw_status_errno(le32_to_cpu(h.status));
	err = 0;
	if (h.opcode == HBMW_OP_READ && !status)
		err = hbmpool_tcp_rx_read(conn, cmd, &h, &status);
	cmd->result = le64_to_cpu(h.offset);
	if (err)
		status = err;
	hbmpool_tcp_health(tn, status ? HBMPOOL_LEV_ERROR : HBMPOOL_LEV_OK,
			   ktime_get_ns() - cmd->sent_ns);
	if (status == -ENODEV && cmd->req)
		status = -EIO;		/* a new incarnation: the reconnect learns it */
	hbmpool_tcp_cmd_done(tn, cmd, status);
	if (!err && le32_to_cpu(h.status) == HBMW_S_FENCED)
		err = -ESTALE;		/* reconnect: the home's segment changed */
	return err;
}

static int hbmpool_tcp_rx_thread(void *data)
{
	struct hbmpool_tcp_conn *conn = data;
	int err = 0;

	while (!kthread_should_stop() && !err)
		err = hbmpool_tcp_rx_one(conn);
	if (err)
		hbmpool_tcp_conn_fail(conn, err);
	/* reset_work stops us */
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

/*
 * Tears @conn down (it is no longer tn->conn): its commands go back to the
 * pending list if @requeue and their owner still waits, else complete with
 * @err.  Under tn->mutex.
 */
static void hbmpool_tcp_conn_destroy(struct hbmpool_tcp_node *tn,
				     struct hbmpool_tcp_conn *conn, bool requeue,
				     int err)
{
	struct hbmpool_tcp_cmd *cmd, *next;
	LIST_HEAD(drained);
	LIST_HEAD(retry);
	unsigned int tag;

	lockdep_assert_held(&tn->mutex);
	sock_no_linger(conn->sock->sk);
	kernel_sock_shutdown(conn->sock, SHUT_RDWR);
	if (conn->rx)
		kthread_stop(conn->rx);
	spin_lock(&conn->lock);
	conn->dead = true;		/* tx_work sends nothing more */
	spin_unlock(&conn->lock);
	cancel_work_sync(&conn->tx_work);

	spin_lock(&conn->lock);
	for (tag = 0; tag < HBMW_MAX_TAGS; tag++) {
		if (conn->tags[tag]) {
			list_add_tail(&conn->tags[tag]->list, &drained);
			conn->tags[tag] = NULL;
		}
	}
	list_splice_tail_init(&conn->send_list, &drained);
	spin_unlock(&conn->lock);

	list_for_each_entry_safe(cmd, next, &drained, list) {
		/* a FREE waits for the next connection, unless the node goes */
		bool again = cmd->req ? requeue && !cmd->req->timed_out &&
					!hbmpool_tcp_cmd_stale(tn, cmd) :
				cmd->op == HBMW_OP_FREE && !READ_ONCE(tn->shut);

		list_del_init(&cmd->list);
		if (again) {
			list_add_tail(&cmd->list, &retry);
			atomic64_inc(&tn->retries);
		} else {
			hbmpool_tcp_cmd_done(tn, cmd, err);
		}
	}
	spin_lock(&tn->lock);
	list_splice(&retry, &tn->pending);	/* before what came since */
	spin_unlock(&tn->lock);
	sock_release(conn->sock);
	kfree(conn);
}

/* ---- connecting ---- */

static int hbmpool_tcp_sockaddr(struct hbmpool_node *node,
				struct sockaddr_storage *ss)
{
	struct hbmpool_node_conf conf;

	hbmpool_node_conf_read(node, &conf);
	memset(ss, 0, sizeof(*ss));
	if (!conf.port || !conf.addr_len)
		return -EDESTADDRREQ;
	if (conf.addr_len == 4) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(conf.port);
		memcpy(&sin->sin_addr, conf.addr, 4);
		return sizeof(*sin);
	}
	((struct sockaddr_in6 *)ss)->sin6_family = AF_INET6;
	((struct sockaddr_in6 *)ss)->sin6_port = htons(conf.port);
	memcpy(&((struct sockaddr_in6 *)ss)->sin6_addr, conf.addr, 16);
	return sizeof(struct sockaddr_in6);
}

/* The client's half of the handshake.  -EPERM: the home refused or failed its proof. */
static int hbmpool_tcp_handshake(struct hbmpool_tcp_node *tn, struct socket *sock,
				 struct hbmw_challenge *ch)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(HBMPOOL_TCP_HANDSHAKE_MS);
	struct hbmw_hello hello = {};
	struct hbmw_auth auth;
	u8 mac[HBMW_MAC_LEN];
	enum hbmw_err why;
	struct hbmw_hdr h;
	int err;

	hbmpool_domain_name(hello.domain);
	hello.client_id = cpu_to_le32(READ_ONCE(hbmpool_self_id));
	hello.home_id = cpu_to_le32(tn->node->id);
	hello.client_incarnation = cpu_to_le64(1);
	get_random_bytes(hello.nonce, sizeof(hello.nonce));
	err = hbmpool_tcp_send_frame(sock, HBMW_OP_HELLO, 0, 0, 0, 0, 0,
				     &hello, sizeof(hello));
	if (err)
		return err;
	err = hbmpool_tcp_recv_frame(sock, HBMW_ROLE_CLIENT, &h, ch, sizeof(*ch), &why,
				     deadline);
	if (err == -ECONNRESET)
		return -EPERM;		/* the home closed: it refused us */
	if (err)
		return err;
	if (h.opcode != HBMW_OP_CHALLENGE)
		return -EPROTO;
	err = hbmpool_tcp_mac(&hello, ch, false, auth.mac);
	if (err)
		return err;
	err = hbmpool_tcp_send_frame(sock, HBMW_OP_AUTH, 0, 0, 0, 0, 0,
				     &auth, sizeof(auth));
	if (err)
		return err;
	err = hbmpool_tcp_recv_frame(sock, HBMW_ROLE_CLIENT, &h, &auth, sizeof(auth), &why,
				     deadline);
	if (err == -ECONNRESET)
		return -EPERM;
	if (err)
		return err;
	if (h.opcode != HBMW_OP_WELCOME)
		return -EPROTO;
	err = hbmpool_tcp_mac(&hello, ch, true, mac);
	if (!err && crypto_memneq(mac, auth.mac, sizeof(mac)))
		err = -EPERM;		/* the home does not hold the key */
	return err;
}

static int hbmpool_tcp_dial(struct hbmpool_tcp_node *tn, struct socket **sockp,
			    struct hbmw_challenge *ch)
{
	struct sockaddr_storage ss;
	struct socket *sock;
	int len, err;

	len = hbmpool_tcp_sockaddr(tn->node, &ss);
	if (len < 0)
		return len;
	err = sock_create_kern(&init_net, ss.ss_family, SOCK_STREAM, IPPROTO_TCP, &sock);
	if (err)
		return err;
	tcp_sock_set_nodelay(sock->sk);
	hbmpool_tcp_set_timeouts(sock, HBMPOOL_TCP_CONNECT_MS);
	err = kernel_connect(sock, (struct sockaddr *)&ss, len, 0);
	if (!err)
		err = hbmpool_tcp_handshake(tn, sock, ch);
	if (!err && tn->data)
		err = tn->data->check(tn, ch);
	if (err) {
		if (err == -EPERM) {
			atomic64_inc(&tn->auth_failures);
			pr_warn_ratelimited("node %u: handshake refused (domain, key or membership)\n",
					    tn->node->id);
		}
		sock_no_linger(sock->sk);
		sock_release(sock);
		return err;
	}
	hbmpool_tcp_set_timeouts(sock, 0);
	*sockp = sock;
	return 0;
}

/*
 * The home's incarnation changed: what this node placed there is gone.
 * Every pending request about it fails, the core forgets the chunks.
 */
static void hbmpool_tcp_lost(struct hbmpool_tcp_node *tn)
{
	struct hbmpool_tcp_cmd *cmd, *next;
	LIST_HEAD(failed);

	hbmpool_node_data_lost_begin(tn->node);
	spin_lock(&tn->lock);
	list_splice_init(&tn->pending, &failed);
	spin_unlock(&tn->lock);
	list_for_each_entry_safe(cmd, next, &failed, list) {
		list_del_init(&cmd->list);
		hbmpool_tcp_cmd_done(tn, cmd, -EIO);
	}
	hbmpool_node_data_lost_end(tn->node);
}

static void hbmpool_tcp_connect_work(struct work_struct *work)
{
	struct hbmpool_tcp_node *tn = container_of(to_delayed_work(work),
						   struct hbmpool_tcp_node,
						   connect_work);
	struct hbmpool_node *node = tn->node;
	struct hbmpool_tcp_cmd *ping;
	struct hbmpool_tcp_conn *conn;
	struct hbmw_challenge ch;
	struct socket *sock;
	u64 inc;
	int err;

	mutex_lock(&tn->mutex);
	if (tn->shut || tn->conn || READ_ONCE(node->admin_down))
		goto out;
	hbmpool_tcp_health(tn, HBMPOOL_LEV_CONNECT, 0);
	conn = kzalloc(sizeof(*conn), GFP_KERNEL);
	err = -ENOMEM;
	if (conn)
		err = hbmpool_tcp_dial(tn, &sock, &ch);
	if (err) {
		kfree(conn);
		hbmpool_tcp_health(tn, HBMPOOL_LEV_LOST, 0);
		queue_delayed_work(hbmpool_tcp_wq, &tn->connect_work,
				   msecs_to_jiffies(hbmpool_tcp_backoff_ms(tn)));
		goto out;
	}
	inc = le64_to_cpu(ch.incarnation);
	if (tn->incarnation && inc != tn->incarnation) {
		pr_warn("node %u: the home's memory is new (incarnation %llx, was %llx): its chunks are lost\n",
			node->id, inc, tn->incarnation);
		hbmpool_tcp_lost(tn);
	}
	spin_lock(&tn->lock);
	tn->incarnation = inc;
	tn->seg_size = le64_to_cpu(ch.segment_size);
	spin_unlock(&tn->lock);
	WRITE_ONCE(node->capacity, le64_to_cpu(ch.segment_size));

	conn->tn = tn;
	conn->sock = sock;
	spin_lock_init(&conn->lock);
	INIT_LIST_HEAD(&conn->send_list);
	INIT_WORK(&conn->tx_work, hbmpool_tcp_tx_work);
	conn->rx = kthread_run(hbmpool_tcp_rx_thread, conn, "hbmpool-tcp%u", node->id);
	if (IS_ERR(conn->rx)) {
		conn->rx = NULL;
		hbmpool_tcp_conn_destroy(tn, conn, true, -ENOMEM);
		hbmpool_tcp_health(tn, HBMPOOL_LEV_LOST, 0);
		queue_delayed_work(hbmpool_tcp_wq, &tn->connect_work, HZ);
		goto out;
	}
	atomic64_inc(&tn->reconnects);
	/* first on the wire, before the requests that waited: its answer makes the link live */
	ping = hbmpool_tcp_cmd_new(HBMW_OP_PING, 0, 0);
	spin_lock(&tn->lock);
	tn->conn = conn;
	tn->await_free = true;	/* live at the first PING's answer */
	spin_lock(&conn->lock);
	if (ping)
		list_add_tail(&ping->list, &conn->send_list);
	list_splice_tail_init(&tn->pending, &conn->send_list);
	spin_unlock(&conn->lock);
	queue_work(hbmpool_tcp_wq, &conn->tx_work);
	spin_unlock(&tn->lock);
	pr_info("node %u: connected, segment %llu MiB\n", node->id,
		le64_to_cpu(ch.segment_size) >> 20);
	if (!ping)	/* the keepalive sends one */
		mod_delayed_work(hbmpool_tcp_wq, &tn->keepalive_work, 0);
out:
	mutex_unlock(&tn->mutex);
}

/* Takes the connection away from @tn, if any; the caller destroys it. */
static struct hbmpool_tcp_conn *hbmpool_tcp_take_conn(struct hbmpool_tcp_node *tn,
						      bool only_dead)
{
	struct hbmpool_tcp_conn *conn;

	lockdep_assert_held(&tn->mutex);
	spin_lock(&tn->lock);
	conn = tn->conn;
	if (conn && only_dead && !READ_ONCE(conn->dead))
		conn = NULL;
	if (conn)
		tn->conn = NULL;
	spin_unlock(&tn->lock);
	return conn;
}

static void hbmpool_tcp_reset_work(struct work_struct *work)
{
	struct hbmpool_tcp_node *tn = container_of(work, typeof(*tn), reset_work);
	struct hbmpool_tcp_conn *conn;

	mutex_lock(&tn->mutex);
	conn = hbmpool_tcp_take_conn(tn, true);
	if (conn) {
		hbmpool_tcp_conn_destroy(tn, conn, true, -ECONNRESET);
		hbmpool_tcp_health(tn, HBMPOOL_LEV_LOST, 0);
		/* under the lock: shutdown's cancel of connect_work stays done */
		spin_lock(&tn->lock);
		if (!tn->shut)
			mod_delayed_work(hbmpool_tcp_wq, &tn->connect_work, 0);
		spin_unlock(&tn->lock);
	}
	mutex_unlock(&tn->mutex);
}

/*
 * Every HBMPOOL_TCP_PING_MS: a connection that waits for answers and heard
 * nothing for HBMPOOL_TCP_DEAD_MS is dead; otherwise a PING measures it and
 * learns the home's free bytes.  Requests whose owner gave up while they
 * waited for a connection are completed.
 */
static void hbmpool_tcp_keepalive_work(struct work_struct *work)
{
	struct hbmpool_tcp_node *tn = container_of(to_delayed_work(work),
						   struct hbmpool_tcp_node,
						   keepalive_work);
	struct hbmpool_tcp_cmd *cmd, *next, *ping;
	struct hbmpool_tcp_conn *conn;
	LIST_HEAD(expired);
	bool dead = false;

	ping = hbmpool_tcp_cmd_new(HBMW_OP_PING, 0, 0);
	spin_lock(&tn->lock);
	list_for_each_entry_safe(cmd, next, &tn->pending, list) {
		if (cmd->req && cmd->req->timed_out)
			list_move_tail(&cmd->list, &expired);
	}
	conn = tn->conn;
	if (conn) {
		spin_lock(&conn->lock);
		dead = conn->inflight && time_after(jiffies, conn->progress +
					msecs_to_jiffies(HBMPOOL_TCP_DEAD_MS));
		spin_unlock(&conn->lock);
		if (dead)
			hbmpool_tcp_conn_fail(conn, -ETIMEDOUT);
	}
	spin_unlock(&tn->lock);
	list_for_each_entry_safe(cmd, next, &expired, list) {
		list_del_init(&cmd->list);
		hbmpool_tcp_cmd_done(tn, cmd, -ETIMEDOUT);
	}
	if (ping && conn && !dead)
		hbmpool_tcp_queue(tn, ping);
	else
		kfree(ping);
	if (!READ_ONCE(tn->shut))
		queue_delayed_work(hbmpool_tcp_wq, &tn->keepalive_work,
				   msecs_to_jiffies(HBMPOOL_TCP_PING_MS));
}

/* ---- the transport's operations ---- */

int hbmpool_tcp_attach(struct hbmpool_node *node, const void *params)
{
	struct hbmpool_tcp_node *tn = to_tn(node);

	tn->node = node;
	mutex_init(&tn->mutex);
	spin_lock_init(&tn->lock);
	INIT_LIST_HEAD(&tn->pending);
	INIT_DELAYED_WORK(&tn->connect_work, hbmpool_tcp_connect_work);
	INIT_DELAYED_WORK(&tn->keepalive_work, hbmpool_tcp_keepalive_work);
	INIT_WORK(&tn->reset_work, hbmpool_tcp_reset_work);
	hbmpool_lhealth_init(&tn->health);
	tn->free_bytes = 0;		/* nothing placed before the home told */
	queue_delayed_work(hbmpool_tcp_wq, &tn->connect_work, 0);
	queue_delayed_work(hbmpool_tcp_wq, &tn->keepalive_work,
			   msecs_to_jiffies(HBMPOOL_TCP_PING_MS));
	return 0;
}

void hbmpool_tcp_submit(struct hbmpool_node *node, struct hbmpool_req *req)
{
	struct hbmpool_tcp_cmd *cmd = req->pdu;

	INIT_LIST_HEAD(&cmd->list);
	cmd->req = req;
	cmd->op = req->op == HBMPOOL_REQ_READ ? HBMW_OP_READ : HBMW_OP_WRITE;
	cmd->offset = req->offset;
	cmd->length = req->nr_pages << PAGE_SHIFT;
	cmd->data_gen = req->data_gen;
	hbmpool_tcp_queue(to_tn(node), cmd);
}

int hbmpool_tcp_alloc_chunks(struct hbmpool_node *node, u64 len, u64 *offset)
{
	struct hbmpool_tcp_node *tn = to_tn(node);
	struct hbmpool_tcp_cmd *cmd;
	long left;
	int err;

	if (len > U32_MAX || !PAGE_ALIGNED(len))
		return -EINVAL;
	spin_lock(&tn->lock);
	err = tn->conn && hbmpool_lstate_up(tn->health.state) ? 0 : -ENOLINK;
	spin_unlock(&tn->lock);
	if (err)
		return err;
	cmd = hbmpool_tcp_cmd_new(HBMW_OP_ALLOC, 0, len);
	if (!cmd)
		return -ENOMEM;
	cmd->data_gen = hbmpool_node_data_gen(node);
	kref_get(&cmd->ref);		/* ours; the queue has the other */
	hbmpool_tcp_queue(tn, cmd);
	left = msecs_to_jiffies(READ_ONCE(hbmpool_fetch_timeout_ms));
	left = wait_for_completion_killable_timeout(&cmd->done, left);
	/* gave up, unless the answer came meanwhile: then it is ours */
	if (left <= 0 &&
	    atomic_cmpxchg(&cmd->alloc_state, HBMPOOL_TCP_ALLOC_WAITING,
			   HBMPOOL_TCP_ALLOC_ABANDONED) == HBMPOOL_TCP_ALLOC_ANSWERED) {
		wait_for_completion(&cmd->done);
		left = 1;
	}
	if (left > 0) {
		err = cmd->status;
		*offset = cmd->result;
	} else {
		/* the home may still give it; it stays the home's until we leave */
		err = left ? left : -ETIMEDOUT;
	}
	kref_put(&cmd->ref, hbmpool_tcp_cmd_free);
	return err;
}

void hbmpool_tcp_free_chunks(struct hbmpool_node *node, u64 offset, u64 len,
			     u32 gen)
{
	struct hbmpool_tcp_cmd *cmd = hbmpool_tcp_cmd_new(HBMW_OP_FREE, offset, len);

	if (cmd)
		cmd->data_gen = gen;
	if (!cmd) {
		pr_warn("node %u: out of memory: [%llu, +%llu) stays allocated at the home\n",
			node->id, offset, len);
		return;
	}
	hbmpool_tcp_queue(to_tn(node), cmd);
}

u64 hbmpool_tcp_free_bytes(struct hbmpool_node *node)
{
	return READ_ONCE(to_tn(node)->free_bytes);
}

/* Drops the connection and fails what waits for one with @err. */
static void hbmpool_tcp_disconnect(struct hbmpool_tcp_node *tn, int err)
{
	struct hbmpool_tcp_cmd *cmd, *next;
	struct hbmpool_tcp_conn *conn;
	LIST_HEAD(failed);

	mutex_lock(&tn->mutex);
	conn = hbmpool_tcp_take_conn(tn, false);
	if (conn)
		hbmpool_tcp_conn_destroy(tn, conn, false, err);
	spin_lock(&tn->lock);
	list_for_each_entry_safe(cmd, next, &tn->pending, list) {
		if (cmd->req || tn->shut)
			list_move_tail(&cmd->list, &failed);
	}
	spin_unlock(&tn->lock);
	list_for_each_entry_safe(cmd, next, &failed, list) {
		list_del_init(&cmd->list);
		hbmpool_tcp_cmd_done(tn, cmd, err);
	}
	if (conn)
		hbmpool_tcp_health(tn, HBMPOOL_LEV_LOST, 0);
	mutex_unlock(&tn->mutex);
}

void hbmpool_tcp_shutdown(struct hbmpool_node *node)
{
	struct hbmpool_tcp_node *tn = to_tn(node);

	spin_lock(&tn->lock);
	tn->shut = true;
	spin_unlock(&tn->lock);
	cancel_delayed_work_sync(&tn->connect_work);
	cancel_delayed_work_sync(&tn->keepalive_work);
	hbmpool_tcp_disconnect(tn, -ENODEV);
	cancel_work_sync(&tn->reset_work);
}

/* Declared dead: as if it left; the node stays in the table until deleted. */
void hbmpool_tcp_fence(struct hbmpool_node *node)
{
	hbmpool_tcp_shutdown(node);
}

void hbmpool_tcp_release(struct hbmpool_node *node)
{
	struct hbmpool_tcp_node *tn = to_tn(node);

	if (tn->node)		/* attached */
		mutex_destroy(&tn->mutex);
}

void hbmpool_tcp_link_admin(struct hbmpool_node *node, bool up)
{
	struct hbmpool_tcp_node *tn = to_tn(node);

	if (up) {
		mod_delayed_work(hbmpool_tcp_wq, &tn->connect_work, 0);
		return;
	}
	cancel_delayed_work_sync(&tn->connect_work);
	hbmpool_tcp_disconnect(tn, -ENOLINK);
}

void hbmpool_tcp_link_info(struct hbmpool_node *node,
			   struct hbmpool_link_info *li)
{
	struct hbmpool_tcp_node *tn = to_tn(node);

	spin_lock(&tn->lock);
	li->health = tn->health.state;
	li->rtt_ns = tn->health.rtt_ewma_ns;
	memcpy(li->rtt_hist, tn->health.rtt_hist, sizeof(li->rtt_hist));
	li->incarnation = tn->incarnation;
	spin_unlock(&tn->lock);
	li->bytes = atomic64_read(&tn->bytes);
	li->retries = atomic64_read(&tn->retries);
	li->digest_errors = atomic64_read(&tn->digest_errors);
	li->connects = atomic64_read(&tn->reconnects);
	li->auth_failures = atomic64_read(&tn->auth_failures);
}

static const struct hbmpool_transport_ops hbmpool_tcp_ops = {
	.attach = hbmpool_tcp_attach,
	.submit = hbmpool_tcp_submit,
	.alloc_chunks = hbmpool_tcp_alloc_chunks,
	.free_chunks = hbmpool_tcp_free_chunks,
	.free_bytes = hbmpool_tcp_free_bytes,
	.shutdown = hbmpool_tcp_shutdown,
	.release = hbmpool_tcp_release,
	.link_admin = hbmpool_tcp_link_admin,
	.link_info = hbmpool_tcp_link_info,
	.fence = hbmpool_tcp_fence,
};

static struct hbmpool_transport hbmpool_tcp_transport = {
	.name = "tcp",
	.owner = THIS_MODULE,
	.api = HBMPOOL_TRANSPORT_API,
	.node_priv_size = sizeof(struct hbmpool_tcp_node),
	.req_pdu_size = sizeof(struct hbmpool_tcp_cmd),
	.ops = &hbmpool_tcp_ops,
};

int hbmpool_tcp_client_init(void)
{
	int err;

	if (tcp_degraded_errors > 1024) {
		pr_err("tcp_degraded_errors: 0..1024\n");
		return -EINVAL;
	}
	hbmpool_tcp_thresholds.degraded_rtt_ns = (u64)tcp_degraded_rtt_ms * NSEC_PER_MSEC;
	hbmpool_tcp_thresholds.degraded_errors = tcp_degraded_errors;
	hbmpool_tcp_wq = alloc_workqueue("hbmpool-tcp", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!hbmpool_tcp_wq)
		return -ENOMEM;
	err = hbmpool_transport_register(&hbmpool_tcp_transport);
	if (err)
		destroy_workqueue(hbmpool_tcp_wq);
	return err;
}

void hbmpool_tcp_client_exit(void)
{
	hbmpool_transport_unregister(&hbmpool_tcp_transport);
	destroy_workqueue(hbmpool_tcp_wq);
}
