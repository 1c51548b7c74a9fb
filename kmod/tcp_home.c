// SPDX-License-Identifier: GPL-2.0
/*
 * The home side of the TCP transport: a listener on this node's address
 * (its own node entry's addr and port, set with node-set) and one session
 * per connection, which authenticates the client (wire-protocol.rst,
 * "Handshake") and then serves its requests from this node's exported
 * segment, one at a time, in order.
 *
 * Every request is checked before a byte moves: the header (wire.c), the
 * range against the segment, the chunks the client holds (segment.c), the
 * data digest of a write, and the segment's incarnation.  A frame that
 * breaks the protocol is counted by reason and resets the connection; a
 * request the home understood but refuses gets a status.  A client that
 * authenticates again supersedes its older sessions: they are closed and
 * finished before the new one is welcomed, so that no request of an old
 * connection lands after the new one's.
 *
 * Sessions and the acceptor are work items on hbmpool_home_wq, which module
 * exit drains.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/algapi.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/kref.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "hbmpool.h"
#include "segment.h"
#include "tcp.h"

struct hbmpool_home_session {
	struct kref ref;
	struct list_head list;		/* on hbmpool_home.sessions, under its lock */
	struct work_struct work;
	struct socket *sock;		/* released with the last reference */
	struct completion done;		/* the session's work is over */
	u32 client;			/* authenticated client id */
	bool authed;			/* under hbmpool_home.lock */
	bool counted;			/* in nr_sessions, not nr_unauth; same lock */
	u64 incarnation;		/* of the segment the client was told */
	struct page **bounce;		/* HBMW_MAX_DATA / PAGE_SIZE slots */
	unsigned int nr_bounce;		/* allocated pages in @bounce */
	unsigned long bounce_used;	/* jiffies: a request last needed more than the reserve */
	u32 *crc;			/* each bounce page's CRC (segment_digest.c) */
	u64 *snap;			/* scratch of hbmpool_segment_read() */
	struct hbmw_hello hello;
	struct hbmw_challenge challenge;
};

/* The home: its listener, its sessions, its counters (atomics). */
static struct {
	struct mutex listen_mutex;	/* starting and stopping the listener */
	struct socket *listener;	/* under listen_mutex, and its address: */
	struct sockaddr_storage addr;
	int addr_len;
	struct work_struct accept_work;
	spinlock_t lock;		/* sessions, nr_sessions, nr_unauth */
	struct list_head sessions;
	unsigned int nr_sessions, nr_unauth;
	atomic64_t accepted, auth_failures, rejected, reasons[HBMW_NR_ERRS];
	/* bounce pages held by all sessions, and the most held at once */
	atomic_long_t bounce_pages, bounce_pages_max;
	/* reads answered with the pages' digests at rest, or digested again */
	atomic64_t reads_at_rest, reads_digested;
	struct dentry *debugfs, *debugfs_flip;
} hbmpool_home;

static struct workqueue_struct *hbmpool_home_wq;

static void hbmpool_home_session_free(struct kref *ref)
{
	struct hbmpool_home_session *s = container_of(ref, typeof(*s), ref);
	unsigned int i;

	for (i = 0; i < s->nr_bounce; i++)
		__free_page(s->bounce[i]);
	atomic_long_sub(s->nr_bounce, &hbmpool_home.bounce_pages);
	kfree(s->bounce);
	kfree(s->crc);
	kfree(s->snap);
	sock_release(s->sock);
	kfree(s);
}

static void hbmpool_home_session_put(struct hbmpool_home_session *s)
{
	kref_put(&s->ref, hbmpool_home_session_free);
}

/* Counts a refused frame or request, by reason. */
static void hbmpool_home_count_reject(enum hbmw_err why)
{
	atomic64_inc(&hbmpool_home.rejected);
	if (why < HBMW_NR_ERRS)
		atomic64_inc(&hbmpool_home.reasons[why]);
}

/* A frame the protocol forbids: counted; the caller resets the connection. */
static int hbmpool_home_reject(struct hbmpool_home_session *s,
			       enum hbmw_err why)
{
	hbmpool_home_count_reject(why);
	pr_info_ratelimited("home: client %u: frame refused (%s), connection reset\n",
			    s->client, hbmw_err_name(why));
	return -EPROTO;
}

/* A handshake refused: counted, and the connection closed. */
static int hbmpool_home_refuse(struct hbmpool_home_session *s, const char *why)
{
	struct sockaddr_storage peer = {};

	atomic64_inc(&hbmpool_home.auth_failures);
	if (kernel_getpeername(s->sock, (struct sockaddr *)&peer) < 0)
		peer.ss_family = AF_UNSPEC;
	pr_info_ratelimited("home: handshake from %pISpc refused: %s\n",
			    &peer, why);
	return -EPERM;
}

/*
 * Closes every session but @self, and waits until each is over: of client
 * @client only, or every one (@client U32_MAX: the module goes).  A session
 * leaves the list before it is over, so none is found twice; one that
 * another closer found is waited for here too.
 */
static void hbmpool_home_close_sessions(struct hbmpool_home_session *self,
					u32 client)
{
	struct hbmpool_home_session *s, *found;

	for (;;) {
		found = NULL;
		spin_lock(&hbmpool_home.lock);
		list_for_each_entry(s, &hbmpool_home.sessions, list) {
			if (s == self ||
			    (client != U32_MAX && !(s->authed && s->client == client)))
				continue;
			found = s;
			kref_get(&s->ref);
			break;
		}
		spin_unlock(&hbmpool_home.lock);
		if (!found)
			return;
		kernel_sock_shutdown(found->sock, SHUT_RDWR);
		wait_for_completion(&found->done);
		hbmpool_home_session_put(found);
	}
}

/**
 * hbmpool_tcp_home_forget - node @client was declared dead
 * @client: its id
 *
 * Its handshakes are refused from now on (it is no member); this ends its
 * sessions, so that none of its requests is served after this returns, and
 * frees the chunks it held in this node's segment.  May sleep.
 */
void hbmpool_tcp_home_forget(u32 client)
{
	u64 freed;

	hbmpool_home_close_sessions(NULL, client);
	freed = hbmpool_export_free_owner(client);
	if (freed)
		pr_info("home: node %u was fenced: its %llu bytes of chunks are freed\n",
			client, freed);
}

static int hbmpool_home_handshake(struct hbmpool_home_session *s)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(HBMPOOL_TCP_HANDSHAKE_MS);
	char domain[HBMPOOL_NAME_LEN];
	struct hbmpool_segment *seg;
	u8 mac[HBMW_MAC_LEN];
	struct hbmw_auth auth;
	enum hbmw_err why;
	struct hbmw_hdr h;
	u64 inc, size = 0;
	int err;

	err = hbmpool_tcp_recv_frame(s->sock, HBMW_ROLE_HOME, &h, &s->hello,
				     sizeof(s->hello), &why, deadline);
	if (err == -EBADMSG || (!err && h.opcode != HBMW_OP_HELLO))
		return hbmpool_home_refuse(s, why ? hbmw_err_name(why) : "no HELLO");
	if (err)
		return hbmpool_home_refuse(s, "no HELLO in time");
	hbmpool_domain_name(domain);
	if (!hbmw_hello_valid(&s->hello))
		return hbmpool_home_refuse(s, "malformed HELLO");
	if (strncmp(s->hello.domain, domain, HBMW_NAME_LEN))
		return hbmpool_home_refuse(s, "another domain");
	if (le32_to_cpu(s->hello.home_id) != READ_ONCE(hbmpool_self_id))
		return hbmpool_home_refuse(s, "meant for another node");
	s->client = le32_to_cpu(s->hello.client_id);
	if (!hbmpool_node_is_member(s->client))
		return hbmpool_home_refuse(s, "client is not a member of the domain");
	if (hbmpool_export_is_fenced())
		return hbmpool_home_refuse(s, "this node is fenced");

	seg = hbmpool_export_serve_begin(&inc);
	if (seg)
		size = seg->size;
	hbmpool_export_serve_end();
	if (!inc)
		return hbmpool_home_refuse(s, "this node exports no segment");
	s->incarnation = inc;
	s->challenge.incarnation = cpu_to_le64(inc);
	s->challenge.segment_size = cpu_to_le64(size);
	get_random_bytes(s->challenge.nonce, sizeof(s->challenge.nonce));
	err = hbmpool_tcp_send_frame(s->sock, HBMW_OP_CHALLENGE, 0, 0, 0, 0, 0,
				     &s->challenge, sizeof(s->challenge));
	if (err)
		return err;

	err = hbmpool_tcp_recv_frame(s->sock, HBMW_ROLE_HOME, &h, &auth,
				     sizeof(auth), &why, deadline);
	if (err == -EBADMSG || (!err && h.opcode != HBMW_OP_AUTH))
		return hbmpool_home_refuse(s, why ? hbmw_err_name(why) : "no AUTH");
	if (err)
		return hbmpool_home_refuse(s, "no AUTH in time");
	err = hbmpool_tcp_mac(&s->hello, &s->challenge, false, mac);
	if (err)
		return hbmpool_home_refuse(s, "no domain key set here");
	if (crypto_memneq(mac, auth.mac, sizeof(mac)))
		return hbmpool_home_refuse(s, "wrong domain key");

	hbmpool_home_close_sessions(s, s->client);	/* supersede older ones */
	spin_lock(&hbmpool_home.lock);
	s->authed = true;
	s->counted = true;
	hbmpool_home.nr_unauth--;
	hbmpool_home.nr_sessions++;
	spin_unlock(&hbmpool_home.lock);
	/*
	 * Fenced meanwhile?  Either hbmpool_tcp_home_forget() finds this
	 * session authed and ends it, or this sees the node fenced.
	 */
	if (!hbmpool_node_is_member(s->client))
		return hbmpool_home_refuse(s, "not a member of the domain");

	err = hbmpool_tcp_mac(&s->hello, &s->challenge, true, auth.mac);
	if (!err)
		err = hbmpool_tcp_send_frame(s->sock, HBMW_OP_WELCOME, 0, 0, 0, 0, 0,
					     &auth, sizeof(auth));
	memzero_explicit(mac, sizeof(mac));
	if (!err)
		pr_info("home: node %u connected\n", s->client);
	return err;
}

/*
 * Bounce pages a session keeps when idle (64 KiB); the ones beyond go once
 * no request has needed them for HBMPOOL_HOME_BOUNCE_IDLE.  A client that
 * streams windows of 128 pages would otherwise have its home allocate (and,
 * under init_on_alloc, zero) and free 112 pages per request; an idle
 * client's keepalive PINGs (every HBMPOOL_TCP_PING_MS) give its session the
 * chance to shrink.
 */
#define HBMPOOL_HOME_BOUNCE_KEEP	16
#define HBMPOOL_HOME_BOUNCE_IDLE	(2 * HZ)

/* Gives back the bounce pages beyond the reserve, once they sat idle. */
static void hbmpool_home_bounce_trim(struct hbmpool_home_session *s)
{
	if (s->nr_bounce <= HBMPOOL_HOME_BOUNCE_KEEP ||
	    time_before(jiffies, s->bounce_used + HBMPOOL_HOME_BOUNCE_IDLE))
		return;
	atomic_long_sub(s->nr_bounce - HBMPOOL_HOME_BOUNCE_KEEP,
			&hbmpool_home.bounce_pages);
	while (s->nr_bounce > HBMPOOL_HOME_BOUNCE_KEEP)
		__free_page(s->bounce[--s->nr_bounce]);
}

/* Makes sure @nr bounce pages exist. */
static int hbmpool_home_bounce(struct hbmpool_home_session *s, unsigned int nr)
{
	if (!s->bounce) {
		s->bounce = kcalloc(HBMW_MAX_DATA / PAGE_SIZE, sizeof(*s->bounce),
				    GFP_KERNEL);
		s->crc = kcalloc(HBMW_MAX_DATA / PAGE_SIZE, sizeof(*s->crc),
				 GFP_KERNEL);
		s->snap = kcalloc(HBMW_MAX_DATA / PAGE_SIZE, sizeof(*s->snap),
				  GFP_KERNEL);
		if (!s->bounce || !s->crc || !s->snap) {
			kfree(s->bounce);
			kfree(s->crc);
			kfree(s->snap);
			s->bounce = NULL;
			s->crc = NULL;
			s->snap = NULL;
			return -ENOMEM;
		}
	}
	if (nr > HBMPOOL_HOME_BOUNCE_KEEP)
		s->bounce_used = jiffies;
	while (s->nr_bounce < nr) {
		long held, max;

		s->bounce[s->nr_bounce] = alloc_page(GFP_KERNEL);
		if (!s->bounce[s->nr_bounce])
			return -ENOMEM;
		s->nr_bounce++;
		held = atomic_long_inc_return(&hbmpool_home.bounce_pages);
		max = atomic_long_read(&hbmpool_home.bounce_pages_max);
		while (held > max &&
		       !atomic_long_try_cmpxchg(&hbmpool_home.bounce_pages_max,
						&max, held))
			;
	}
	return 0;
}

/*
 * The status of a request for [@offset, +@len) of the segment: the segment
 * is the one the client was told of, the range lies in it, in a chunk the
 * client holds.  Counted when refused.
 */
static u32 hbmpool_home_check(struct hbmpool_home_session *s,
			      struct hbmpool_segment *seg, u64 inc,
			      u64 offset, u64 len)
{
	enum hbmw_err why = HBMW_ERR_RANGE;
	int err;

	if (!seg || inc != s->incarnation)
		return HBMW_S_FENCED;
	if (hbmw_range_check(offset, len, seg->size) == HBMW_OK) {
		err = hbmpool_segment_check(seg, offset, len, s->client);
		if (!err)
			return HBMW_S_OK;
		why = err == -EACCES ? HBMW_ERR_NOTYOURS : HBMW_ERR_RANGE;
	}
	hbmpool_home_count_reject(why);
	pr_info_ratelimited("home: client %u: [%llu, +%llu) refused: %s\n",
			    s->client, offset, len, hbmw_err_name(why));
	return why == HBMW_ERR_NOTYOURS ? HBMW_S_NOTYOURS : HBMW_S_RANGE;
}

static int hbmpool_home_respond(struct hbmpool_home_session *s,
				const struct hbmw_hdr *h, u32 status, u64 offset)
{
	return hbmpool_tcp_send_frame(s->sock, h->opcode, HBMW_F_RESP,
				      le32_to_cpu(h->tag), status, offset,
				      le32_to_cpu(h->length), NULL, 0);
}

static int hbmpool_home_read(struct hbmpool_home_session *s,
			     const struct hbmw_hdr *h)
{
	u64 offset = le64_to_cpu(h->offset), inc;
	u32 len = le32_to_cpu(h->length);
	unsigned int nr = len >> PAGE_SHIFT;
	struct hbmpool_segment *seg;
	bool at_rest = false;
	struct hbmw_hdr r;
	__le32 ddgst;
	u32 status;
	int err;

	err = hbmpool_home_bounce(s, nr);
	if (err)
		return err;
	seg = hbmpool_export_serve_begin(&inc);
	status = hbmpool_home_check(s, seg, inc, offset, len);
	if (!status)
		at_rest = hbmpool_segment_read(seg, offset, s->bounce, nr,
					       hbmpool_tcp_digest_fold_ok() ? s->snap : NULL,
					       s->crc);
	hbmpool_export_serve_end();
	if (status)
		return hbmpool_home_respond(s, h, status, offset);

	hbmw_hdr_build(&r, HBMW_OP_READ, HBMW_F_RESP | HBMW_F_DDGST,
		       le32_to_cpu(h->tag), 0, offset, len);
	if (at_rest) {
		ddgst = cpu_to_le32(hbmpool_tcp_digest_fold(s->crc, nr));
		atomic64_inc(&hbmpool_home.reads_at_rest);
	} else {
		ddgst = cpu_to_le32(hbmpool_tcp_pages_digest(s->bounce, nr));
		atomic64_inc(&hbmpool_home.reads_digested);
	}
	err = hbmpool_tcp_send(s->sock, &r, sizeof(r), true);
	if (!err)
		err = hbmpool_tcp_send_pages(s->sock, s->bounce, nr, true);
	if (!err)
		err = hbmpool_tcp_send(s->sock, &ddgst, sizeof(ddgst), false);
	return err;
}

static int hbmpool_home_write(struct hbmpool_home_session *s,
			      const struct hbmw_hdr *h)
{
	u64 offset = le64_to_cpu(h->offset), inc;
	u32 len = le32_to_cpu(h->length);
	unsigned int i, nr = len >> PAGE_SHIFT;
	struct hbmpool_segment *seg;
	u32 status = HBMW_S_OK;
	__le32 ddgst;
	int err;

	/* the payload is read whatever the verdict: the stream stays framed */
	err = hbmpool_home_bounce(s, nr);
	if (!err)
		err = hbmpool_tcp_recv_pages(s->sock, s->bounce, nr);
	if (err)
		return err;
	if (!(le16_to_cpu(h->flags) & HBMW_F_DDGST)) {
		status = HBMW_S_INVAL;		/* a write carries its digest */
		hbmpool_home_count_reject(HBMW_ERR_FLAGS);
	} else {
		err = hbmpool_tcp_recv(s->sock, &ddgst, sizeof(ddgst));
		if (err)
			return err;
		if (le32_to_cpu(ddgst) !=
		    hbmpool_tcp_pages_digest_each(s->bounce, nr, s->crc)) {
			status = HBMW_S_DIGEST;
			hbmpool_home_count_reject(HBMW_ERR_DIGEST);
			pr_info_ratelimited("home: client %u: write at %llu: bad data digest\n",
					    s->client, offset);
		}
	}
	if (!status) {
		seg = hbmpool_export_serve_begin(&inc);
		status = hbmpool_home_check(s, seg, inc, offset, len);
		for (i = 0; !status && i < nr; i++) {
			if (hbmpool_segment_write(seg, offset + ((u64)i << PAGE_SHIFT),
						  s->bounce[i], hbmpool_tcp_digest_fold_ok() ?
						  &s->crc[i] : NULL))
				status = HBMW_S_IO;
		}
		hbmpool_export_serve_end();
	}
	return hbmpool_home_respond(s, h, status, offset);
}

/* ALLOC, FREE and PING: the segment's allocator and its free bytes. */
static int hbmpool_home_control(struct hbmpool_home_session *s,
				const struct hbmw_hdr *h)
{
	u64 offset = le64_to_cpu(h->offset), inc, out = 0;
	u32 len = le32_to_cpu(h->length);
	struct hbmpool_segment *seg;
	u32 status = HBMW_S_OK;
	int err;

	seg = hbmpool_export_serve_begin(&inc);
	if (!seg || inc != s->incarnation) {
		status = HBMW_S_FENCED;
	} else if (h->opcode == HBMW_OP_ALLOC) {
		err = hbmpool_segment_alloc(seg, len, s->client, &out);
		if (err)
			status = hbmw_errno_status(err);
	} else if (h->opcode == HBMW_OP_FREE) {
		out = offset;
		if (hbmpool_segment_free(seg, offset, len, s->client)) {
			status = HBMW_S_NOTYOURS;
			hbmpool_home_count_reject(HBMW_ERR_NOTYOURS);
		}
	} else {
		out = hbmpool_segment_avail(seg);	/* PING: the free bytes */
	}
	hbmpool_export_serve_end();
	return hbmpool_home_respond(s, h, status, out);
}

static int hbmpool_home_serve(struct hbmpool_home_session *s)
{
	enum hbmw_err why;
	struct hbmw_hdr h;
	int err;

	hbmpool_tcp_set_timeouts(s->sock, HBMPOOL_TCP_IDLE_MS);
	for (;;) {
		err = hbmpool_tcp_recv(s->sock, &h, sizeof(h));
		if (err == -EAGAIN) {
			pr_info_ratelimited("home: node %u silent for %u ms: closed\n",
					    s->client, HBMPOOL_TCP_IDLE_MS);
			return err;
		}
		if (err)
			return err;
		why = hbmw_hdr_check(&h, HBMW_ROLE_HOME);
		if (why)
			return hbmpool_home_reject(s, why);
		switch (h.opcode) {
		case HBMW_OP_READ:
			err = hbmpool_home_read(s, &h);
			hbmpool_home_bounce_trim(s);
			break;
		case HBMW_OP_WRITE:
			err = hbmpool_home_write(s, &h);
			hbmpool_home_bounce_trim(s);
			break;
		case HBMW_OP_ALLOC:
		case HBMW_OP_FREE:
		case HBMW_OP_PING:
			err = hbmpool_home_control(s, &h);
			hbmpool_home_bounce_trim(s);
			break;
		case HBMW_OP_BYE:
			return 0;
		default:		/* a handshake frame after the handshake */
			return hbmpool_home_reject(s, HBMW_ERR_OPCODE);
		}
		if (err)
			return err;
	}
}

static void hbmpool_home_session_work(struct work_struct *work)
{
	struct hbmpool_home_session *s = container_of(work, typeof(*s), work);

	hbmpool_tcp_set_timeouts(s->sock, HBMPOOL_TCP_CONNECT_MS);
	if (!hbmpool_home_handshake(s)) {
		hbmpool_home_serve(s);
		pr_info("home: node %u disconnected\n", s->client);
	}
	sock_no_linger(s->sock->sk);	/* reset: nothing more of ours is read */
	kernel_sock_shutdown(s->sock, SHUT_RDWR);
	spin_lock(&hbmpool_home.lock);
	list_del(&s->list);
	if (s->counted)
		hbmpool_home.nr_sessions--;
	else
		hbmpool_home.nr_unauth--;
	spin_unlock(&hbmpool_home.lock);
	complete_all(&s->done);
	hbmpool_home_session_put(s);
}

/* A new connection: a session, unless the home is at its limits. */
static void hbmpool_home_new_session(struct socket *sock)
{
	struct hbmpool_home_session *s;
	bool full;

	atomic64_inc(&hbmpool_home.accepted);
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	spin_lock(&hbmpool_home.lock);
	full = hbmpool_home.nr_unauth >= HBMPOOL_TCP_MAX_UNAUTH ||
	       hbmpool_home.nr_sessions + hbmpool_home.nr_unauth >=
	       HBMPOOL_TCP_MAX_SESSIONS;
	if (s && !full) {
		kref_init(&s->ref);
		init_completion(&s->done);
		INIT_WORK(&s->work, hbmpool_home_session_work);
		s->sock = sock;
		s->client = U32_MAX;
		list_add_tail(&s->list, &hbmpool_home.sessions);
		hbmpool_home.nr_unauth++;
	}
	spin_unlock(&hbmpool_home.lock);
	if (!s || full) {
		atomic64_inc(&hbmpool_home.auth_failures);
		pr_info_ratelimited("home: too many connections: one refused\n");
		kfree(s);
		sock_no_linger(sock->sk);
		sock_release(sock);
		return;
	}
	tcp_sock_set_nodelay(sock->sk);
	queue_work(hbmpool_home_wq, &s->work);
}

/* Accepts until the listener is shut down; a failed accept is retried. */
static void hbmpool_home_accept_work(struct work_struct *work)
{
	struct socket *listener = hbmpool_home.listener, *sock;

	for (;;) {
		if (!kernel_accept(listener, &sock, 0)) {
			hbmpool_home_new_session(sock);
			continue;
		}
		if (READ_ONCE(listener->sk->sk_state) != TCP_LISTEN)
			return;		/* hbmpool_home_unlisten() */
		msleep(100);		/* out of memory, say: try again */
	}
}

/* Stops the listener, if any.  Sessions go on. */
static void hbmpool_home_unlisten(void)
{
	lockdep_assert_held(&hbmpool_home.listen_mutex);
	if (!hbmpool_home.listener)
		return;
	kernel_sock_shutdown(hbmpool_home.listener, SHUT_RDWR);
	flush_work(&hbmpool_home.accept_work);
	sock_release(hbmpool_home.listener);
	hbmpool_home.listener = NULL;
}

/* A listening socket on @ss, or an error. */
static int hbmpool_home_bind(const struct sockaddr_storage *ss, int len,
			     struct socket **sockp)
{
	struct socket *sock;
	int err;

	err = sock_create_kern(&init_net, ss->ss_family, SOCK_STREAM, IPPROTO_TCP,
			       &sock);
	if (err)
		return err;
	sock_set_reuseaddr(sock->sk);
	err = kernel_bind(sock, (struct sockaddr *)ss, len);
	if (!err)
		err = kernel_listen(sock, 128);
	if (err) {
		sock_release(sock);
		return err;
	}
	*sockp = sock;
	return 0;
}

/**
 * hbmpool_tcp_home_listen - listen on this node's address, or stop
 * @conf: this node's settings: addr_len 0 or port 0 stops listening
 *
 * The new listener is bound before the old one stops, so that a move that
 * fails leaves the old one listening; when only the old one stands in the
 * way (same port), it lets go, and takes the port back if the new address
 * cannot be had either.
 *
 * Return: 0 or the socket's error (-EADDRINUSE, -EADDRNOTAVAIL, ...); on
 * error the listener is the one before the call (unless it could not be
 * had back: then none).
 */
int hbmpool_tcp_home_listen(const struct hbmpool_node_conf *conf)
{
	struct sockaddr_storage ss = {}, old;
	struct socket *sock = NULL;
	int err = 0, len, old_len;

	mutex_lock(&hbmpool_home.listen_mutex);
	if (!conf->addr_len || !conf->port) {
		hbmpool_home_unlisten();
		goto out;
	}
	if (conf->addr_len == 4) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(conf->port);
		memcpy(&sin->sin_addr, conf->addr, 4);
		len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(conf->port);
		memcpy(&sin6->sin6_addr, conf->addr, 16);
		len = sizeof(*sin6);
	}
	if (hbmpool_home.listener && len == hbmpool_home.addr_len &&
	    !memcmp(&ss, &hbmpool_home.addr, len))
		goto out;		/* there already */
	err = hbmpool_home_bind(&ss, len, &sock);
	if (err == -EADDRINUSE && hbmpool_home.listener &&
	    inet_sk(hbmpool_home.listener->sk)->inet_sport == htons(conf->port)) {
		old = hbmpool_home.addr;
		old_len = hbmpool_home.addr_len;
		hbmpool_home_unlisten();
		err = hbmpool_home_bind(&ss, len, &sock);
		if (err && !hbmpool_home_bind(&old, old_len, &sock)) {
			ss = old;
			len = old_len;
			goto install;	/* back where it was; the error stands */
		}
	}
	if (err)
		goto out;
install:
	hbmpool_home_unlisten();
	hbmpool_home.listener = sock;
	hbmpool_home.addr = ss;
	hbmpool_home.addr_len = len;
	queue_work(hbmpool_home_wq, &hbmpool_home.accept_work);
	pr_info("home: listening on %pISpc\n", &ss);
out:
	mutex_unlock(&hbmpool_home.listen_mutex);
	return err;
}

void hbmpool_tcp_home_stats(struct hbmpool_tcp_home_stats *st)
{
	unsigned int i;

	spin_lock(&hbmpool_home.lock);
	st->sessions = hbmpool_home.nr_sessions;
	spin_unlock(&hbmpool_home.lock);
	st->accepted = atomic64_read(&hbmpool_home.accepted);
	st->auth_failures = atomic64_read(&hbmpool_home.auth_failures);
	st->rejected = atomic64_read(&hbmpool_home.rejected);
	for (i = 0; i < HBMW_NR_ERRS; i++)
		st->reasons[i] = atomic64_read(&hbmpool_home.reasons[i]);
}

static int hbmpool_home_debugfs_show(struct seq_file *m, void *v)
{
	struct hbmpool_tcp_home_stats st;
	unsigned int i;

	hbmpool_tcp_home_stats(&st);
	seq_printf(m, "accepted %llu\nsessions %llu\nauth_failures %llu\nrejected %llu\n",
		   st.accepted, st.sessions, st.auth_failures, st.rejected);
	for (i = 1; i < HBMW_NR_ERRS; i++)
		seq_printf(m, "rejected: %s %llu\n", hbmw_err_name(i), st.reasons[i]);
	seq_printf(m, "bounce_pages %ld\nbounce_pages_max %ld\n",
		   atomic_long_read(&hbmpool_home.bounce_pages),
		   atomic_long_read(&hbmpool_home.bounce_pages_max));
	seq_printf(m, "reads_digests_at_rest %lld\nreads_digested %lld\n",
		   atomic64_read(&hbmpool_home.reads_at_rest),
		   atomic64_read(&hbmpool_home.reads_digested));
	hbmpool_tcp_digest_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(hbmpool_home_debugfs);

/* debugfs "segment_flip": OFFSET flips a bit of the segment (fault injection) */
static int hbmpool_home_flip_set(void *data, u64 offset)
{
	return hbmpool_export_flip(offset);
}
DEFINE_DEBUGFS_ATTRIBUTE(hbmpool_home_flip_fops, NULL, hbmpool_home_flip_set,
			 "%llu\n");

int hbmpool_tcp_home_init(void)
{
	unsigned int i;

	mutex_init(&hbmpool_home.listen_mutex);
	spin_lock_init(&hbmpool_home.lock);
	INIT_LIST_HEAD(&hbmpool_home.sessions);
	INIT_WORK(&hbmpool_home.accept_work, hbmpool_home_accept_work);
	atomic64_set(&hbmpool_home.accepted, 0);
	atomic64_set(&hbmpool_home.auth_failures, 0);
	atomic64_set(&hbmpool_home.rejected, 0);
	for (i = 0; i < HBMW_NR_ERRS; i++)
		atomic64_set(&hbmpool_home.reasons[i], 0);
	atomic_long_set(&hbmpool_home.bounce_pages, 0);
	atomic_long_set(&hbmpool_home.bounce_pages_max, 0);
	atomic64_set(&hbmpool_home.reads_at_rest, 0);
	atomic64_set(&hbmpool_home.reads_digested, 0);
	hbmpool_home_wq = alloc_workqueue("hbmpool-home", WQ_UNBOUND,
					  HBMPOOL_TCP_MAX_SESSIONS + 1);
	if (!hbmpool_home_wq)
		return -ENOMEM;
	hbmpool_home.debugfs = debugfs_create_file("tcp_home", 0444,
						   hbmpool_debugfs_root, NULL,
						   &hbmpool_home_debugfs_fops);
	hbmpool_home.debugfs_flip = debugfs_create_file_unsafe("segment_flip", 0200,
							       hbmpool_debugfs_root, NULL,
							       &hbmpool_home_flip_fops);
	return 0;
}

/* Nothing listens or is served any more. */
void hbmpool_tcp_home_exit(void)
{
	mutex_lock(&hbmpool_home.listen_mutex);
	hbmpool_home_unlisten();
	mutex_unlock(&hbmpool_home.listen_mutex);
	hbmpool_home_close_sessions(NULL, U32_MAX);
	debugfs_remove(hbmpool_home.debugfs);
	debugfs_remove(hbmpool_home.debugfs_flip);
	destroy_workqueue(hbmpool_home_wq);
	mutex_destroy(&hbmpool_home.listen_mutex);
}
