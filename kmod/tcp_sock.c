// SPDX-License-Identifier: GPL-2.0
/*
 * Socket I/O of the TCP transport, for both sides: whole frames, runs of
 * pages (their CRC32C: tcp_digest.c), and the handshake's HMAC-SHA256.
 * Every call may sleep; none takes a lock of the module.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/hash.h>
#include <linux/bvec.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <net/sock.h>

#include "hbmpool.h"
#include "tcp.h"

/* Send and receive timeouts of @sock; 0: wait forever. */
void hbmpool_tcp_set_timeouts(struct socket *sock, unsigned int ms)
{
	long t = ms ? msecs_to_jiffies(ms) : MAX_SCHEDULE_TIMEOUT;

	lock_sock(sock->sk);
	sock->sk->sk_sndtimeo = t;
	sock->sk->sk_rcvtimeo = t;
	release_sock(sock->sk);
}

/* Sends all of @msg's iterator.  0 or a negative errno. */
static int hbmpool_tcp_sendmsg(struct socket *sock, struct msghdr *msg)
{
	while (msg_data_left(msg)) {
		int n = sock_sendmsg(sock, msg);

		if (n <= 0)
			return n ? n : -ECONNRESET;
	}
	return 0;
}

/*
 * Receives all of @msg's iterator.  0, -EAGAIN (timeout), -ECONNRESET
 * (closed).  A @deadline (jiffies; 0: none) bounds the whole, not each
 * read: a peer that trickles bytes runs into it.
 */
static int hbmpool_tcp_recvmsg(struct socket *sock, struct msghdr *msg,
			       unsigned long deadline)
{
	while (msg_data_left(msg)) {
		int n;

		if (deadline) {
			long left = (long)(deadline - jiffies);

			if (left <= 0)
				return -EAGAIN;
			WRITE_ONCE(sock->sk->sk_rcvtimeo, left);
		}
		n = sock_recvmsg(sock, msg, MSG_WAITALL | MSG_NOSIGNAL);

		if (n == 0)
			return -ECONNRESET;
		if (n < 0)
			return n;
	}
	return 0;
}

int hbmpool_tcp_send(struct socket *sock, const void *buf, size_t len,
		     bool more)
{
	struct kvec vec = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_flags = MSG_NOSIGNAL | (more ? MSG_MORE : 0) };

	iov_iter_kvec(&msg.msg_iter, ITER_SOURCE, &vec, 1, len);
	return hbmpool_tcp_sendmsg(sock, &msg);
}

/* Fills @bv with @nr whole pages; returns the bytes. */
static size_t hbmpool_tcp_bvec(struct bio_vec *bv, struct page **pages,
			       unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++) {
		bv[i].bv_page = pages[i];
		bv[i].bv_len = PAGE_SIZE;
		bv[i].bv_offset = 0;
	}
	return (size_t)nr << PAGE_SHIFT;
}

/* Sends (@dir ITER_SOURCE) or receives (ITER_DEST) @nr whole pages. */
static int hbmpool_tcp_pages_io(struct socket *sock, struct page **pages,
				unsigned int nr, unsigned int dir, int flags)
{
	struct msghdr msg = { .msg_flags = flags };
	struct bio_vec *bv;
	size_t len;
	int err;

	bv = kmalloc_array(nr, sizeof(*bv), GFP_KERNEL);
	if (!bv)
		return -ENOMEM;
	len = hbmpool_tcp_bvec(bv, pages, nr);
	iov_iter_bvec(&msg.msg_iter, dir, bv, nr, len);
	err = dir == ITER_SOURCE ? hbmpool_tcp_sendmsg(sock, &msg) :
				   hbmpool_tcp_recvmsg(sock, &msg, 0);
	kfree(bv);
	return err;
}

int hbmpool_tcp_send_pages(struct socket *sock, struct page **pages,
			   unsigned int nr, bool more)
{
	return hbmpool_tcp_pages_io(sock, pages, nr, ITER_SOURCE,
				    MSG_NOSIGNAL | (more ? MSG_MORE : 0));
}

static int hbmpool_tcp_recv_until(struct socket *sock, void *buf, size_t len,
				  unsigned long deadline)
{
	struct kvec vec = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = {};

	iov_iter_kvec(&msg.msg_iter, ITER_DEST, &vec, 1, len);
	return hbmpool_tcp_recvmsg(sock, &msg, deadline);
}

int hbmpool_tcp_recv(struct socket *sock, void *buf, size_t len)
{
	return hbmpool_tcp_recv_until(sock, buf, len, 0);
}

int hbmpool_tcp_recv_pages(struct socket *sock, struct page **pages,
			   unsigned int nr)
{
	return hbmpool_tcp_pages_io(sock, pages, nr, ITER_DEST, 0);
}

/*
 * Sends one frame without page data: the header, then @payload (a
 * handshake frame's structure), with its digest if @flags ask for one.
 */
int hbmpool_tcp_send_frame(struct socket *sock, enum hbmw_op op, u16 flags,
			   u32 tag, u32 status, u64 offset, u32 length,
			   const void *payload, size_t payload_len)
{
	struct {
		struct hbmw_hdr h;
		u8 payload[sizeof(struct hbmw_hello)];
		__le32 ddgst;
	} __packed f;
	size_t len = sizeof(f.h) + payload_len;

	if (WARN_ON(payload_len > sizeof(f.payload)))
		return -EINVAL;
	hbmw_hdr_build(&f.h, op, flags, tag, status, offset, length);
	memcpy(f.payload, payload, payload_len);
	if (flags & HBMW_F_DDGST) {
		__le32 d = cpu_to_le32(~hbmw_crc32c(~0U, payload, payload_len));

		memcpy(f.payload + payload_len, &d, sizeof(d));
		len += sizeof(d);
	}
	return hbmpool_tcp_send(sock, &f, len, false);
}

/**
 * hbmpool_tcp_recv_frame - receive a header and a control payload
 * @sock: the connection
 * @role: the receiver's side
 * @h: out: the header, checked
 * @payload: out: a handshake frame's payload (up to @max bytes)
 * @max: room at @payload; frames that carry page data are refused
 * @why: out: the check that failed, when -EBADMSG
 * @deadline: jiffies by which the whole frame is in (the handshake's)
 *
 * Return: 0, -EBADMSG (a refused frame: @why says why), -EAGAIN (past the
 * deadline), or the socket's error.
 */
int hbmpool_tcp_recv_frame(struct socket *sock, enum hbmw_role role,
			   struct hbmw_hdr *h, void *payload, size_t max,
			   enum hbmw_err *why, unsigned long deadline)
{
	long len;
	int err;

	*why = HBMW_OK;
	err = hbmpool_tcp_recv_until(sock, h, sizeof(*h), deadline);
	if (err)
		return err;
	*why = hbmw_hdr_check(h, role);
	if (*why)
		return -EBADMSG;
	len = hbmw_payload_len(h);
	if (len > max || (le16_to_cpu(h->flags) & HBMW_F_DDGST)) {
		*why = HBMW_ERR_LENGTH;
		return -EBADMSG;
	}
	return len ? hbmpool_tcp_recv_until(sock, payload, len, deadline) : 0;
}

/*
 * The MAC a side proves the domain key with (wire-protocol.rst): HMAC-SHA256
 * of the labelled transcript.  -ENOKEY without a domain key.
 */
int hbmpool_tcp_mac(const struct hbmw_hello *hello,
		    const struct hbmw_challenge *challenge, bool from_home,
		    u8 mac[HBMW_MAC_LEN])
{
	u8 key[HBMPOOL_KEY_MAX];
	struct crypto_shash *tfm;
	unsigned int key_len;
	size_t tlen;
	u8 *t;
	int err;

	tlen = hbmw_transcript(NULL, 0, from_home, hello, challenge);
	t = kmalloc(tlen, GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	hbmw_transcript(t, tlen, from_home, hello, challenge);
	key_len = hbmpool_domain_key_get(key);
	err = -ENOKEY;
	if (!key_len)
		goto out_free;
	tfm = crypto_alloc_shash("hmac(sha256)", 0, 0);
	err = PTR_ERR_OR_ZERO(tfm);
	if (err)
		goto out_free;
	err = crypto_shash_setkey(tfm, key, key_len);
	if (!err)
		err = crypto_shash_tfm_digest(tfm, t, tlen, mac);
	crypto_free_shash(tfm);
out_free:
	memzero_explicit(key, sizeof(key));
	kfree(t);
	return err;
}
