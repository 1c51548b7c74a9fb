// SPDX-License-Identifier: GPL-2.0
/*
 * The hbmpool wire protocol's pure logic: building and checking frame
 * headers, the payload each frame carries, range and digest checks, the
 * status codes, and the handshake transcript that both sides MAC.  See
 * wire.h and Documentation/wire-protocol.rst.
 *
 * Built into the module (the TCP transport) and into the unit test.  The
 * module's CRC32C is lib/crc32's __crc32c_le(), built into every kernel,
 * so the module needs no libcrc32c.
 */
#ifdef __KERNEL__
#include <linux/crc32.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>
#endif

#include "wire.h"

#ifdef __KERNEL__
u32 hbmw_crc32c(u32 crc, const void *buf, size_t len)
{
	return __crc32c_le(crc, buf, len);
}
#else
/* Bitwise CRC32C (Castagnoli, reflected 0x82f63b78), as the kernel's crc32c(). */
u32 hbmw_crc32c(u32 crc, const void *buf, size_t len)
{
	const u8 *p = buf;
	int k;

	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78U & -(crc & 1));
	}
	return crc;
}
#endif

/* CRC32C as the protocol uses it: seed ~0, final inversion. */
static u32 hbmw_digest(const void *buf, size_t len)
{
	return ~hbmw_crc32c(~0U, buf, len);
}

/* Fills @h, hcrc included. */
void hbmw_hdr_build(struct hbmw_hdr *h, enum hbmw_op op, u16 flags, u32 tag,
		    u32 status, u64 offset, u32 length)
{
	h->magic = cpu_to_le32(HBMW_MAGIC);
	h->version = HBMW_VERSION;
	h->opcode = op;
	h->flags = cpu_to_le16(flags);
	h->tag = cpu_to_le32(tag);
	h->status = cpu_to_le32(status);
	h->offset = cpu_to_le64(offset);
	h->length = cpu_to_le32(length);
	h->hcrc = cpu_to_le32(hbmw_digest(h, offsetof(struct hbmw_hdr, hcrc)));
}

/* Bytes of a control frame's payload (HELLO .. WELCOME), or -1. */
static long hbmw_control_len(u8 op)
{
	switch (op) {
	case HBMW_OP_HELLO:
		return sizeof(struct hbmw_hello);
	case HBMW_OP_CHALLENGE:
		return sizeof(struct hbmw_challenge);
	case HBMW_OP_AUTH:
	case HBMW_OP_WELCOME:
		return sizeof(struct hbmw_auth);
	}
	return -1;
}

/*
 * Bytes of payload that follow header @h (the digest not counted): the
 * data of a WRITE request and of a READ response, the fixed structure of
 * a handshake frame, none otherwise.  A failed response carries none.
 * -1 for an opcode the protocol does not have.
 */
long hbmw_payload_len(const struct hbmw_hdr *h)
{
	bool resp = le16_to_cpu(h->flags) & HBMW_F_RESP;

	switch (h->opcode) {
	case HBMW_OP_HELLO:
	case HBMW_OP_CHALLENGE:
	case HBMW_OP_AUTH:
	case HBMW_OP_WELCOME:
		return hbmw_control_len(h->opcode);
	case HBMW_OP_READ:
		return resp && !h->status ? le32_to_cpu(h->length) : 0;
	case HBMW_OP_WRITE:
		return resp ? 0 : le32_to_cpu(h->length);
	case HBMW_OP_ALLOC:
	case HBMW_OP_FREE:
	case HBMW_OP_PING:
	case HBMW_OP_BYE:
		return 0;
	}
	return -1;
}

/* The handshake frames are neither requests nor responses: who sends which. */
static bool hbmw_handshake_from_home(u8 op)
{
	return op == HBMW_OP_CHALLENGE || op == HBMW_OP_WELCOME;
}

static enum hbmw_err hbmw_length_check(const struct hbmw_hdr *h)
{
	u32 len = le32_to_cpu(h->length);

	switch (h->opcode) {
	case HBMW_OP_READ:
	case HBMW_OP_WRITE:
		if (!len || len > HBMW_MAX_DATA || len % HBMW_PAGE_SIZE)
			return HBMW_ERR_LENGTH;
		break;
	case HBMW_OP_ALLOC:
	case HBMW_OP_FREE:
		if (!len || len % HBMW_PAGE_SIZE)
			return HBMW_ERR_LENGTH;
		break;
	default:		/* control frames: the payload is implied */
		if (len)
			return HBMW_ERR_LENGTH;
	}
	return HBMW_OK;
}

/**
 * hbmw_hdr_check - is @h a header that @role may receive?
 * @h: as received
 * @role: the receiver's side of the connection
 *
 * Checks everything the header alone tells: magic, version, its CRC,
 * opcode, flags, direction (a home receives requests and the client's
 * handshake frames, a client the rest), tag, status, and the length the
 * opcode allows.  Ranges against a segment and ownership are the home's
 * business (hbmw_range_check() and the segment's records).
 */
enum hbmw_err hbmw_hdr_check(const struct hbmw_hdr *h, enum hbmw_role role)
{
	u16 flags = le16_to_cpu(h->flags);
	bool resp = flags & HBMW_F_RESP;
	bool to_client = role == HBMW_ROLE_CLIENT;
	bool handshake;

	if (le32_to_cpu(h->magic) != HBMW_MAGIC)
		return HBMW_ERR_MAGIC;
	if (h->version != HBMW_VERSION)
		return HBMW_ERR_VERSION;
	if (le32_to_cpu(h->hcrc) != hbmw_digest(h, offsetof(struct hbmw_hdr, hcrc)))
		return HBMW_ERR_HCRC;
	if (!h->opcode || h->opcode > HBMW_OP_MAX)
		return HBMW_ERR_OPCODE;
	if (flags & ~HBMW_F_ALL)
		return HBMW_ERR_FLAGS;
	handshake = hbmw_control_len(h->opcode) >= 0;
	if (handshake) {
		if (resp || hbmw_handshake_from_home(h->opcode) != to_client)
			return HBMW_ERR_DIRECTION;
	} else if (resp != to_client) {
		return HBMW_ERR_DIRECTION;
	}
	if (le32_to_cpu(h->tag) >= HBMW_MAX_TAGS)
		return HBMW_ERR_TAG;
	if (le32_to_cpu(h->status) > HBMW_S_MAX || (h->status && !resp))
		return HBMW_ERR_STATUS;
	/* a response's length echoes its request; a failed one may not */
	if (!(resp && h->status)) {
		enum hbmw_err err = hbmw_length_check(h);

		if (err)
			return err;
	}
	if ((flags & HBMW_F_DDGST) && hbmw_payload_len(h) <= 0)
		return HBMW_ERR_FLAGS;	/* a digest of nothing */
	return HBMW_OK;
}

/* [@offset, @offset + @length) inside a segment of @segment_size bytes, page aligned. */
enum hbmw_err hbmw_range_check(u64 offset, u64 length, u64 segment_size)
{
	if (offset % HBMW_PAGE_SIZE || length % HBMW_PAGE_SIZE || !length ||
	    offset >= segment_size || length > segment_size - offset)
		return HBMW_ERR_RANGE;
	return HBMW_OK;
}

/* The digest that followed @len bytes of payload. */
enum hbmw_err hbmw_digest_check(const void *payload, size_t len, __le32 digest)
{
	return le32_to_cpu(digest) == hbmw_digest(payload, len) ? HBMW_OK :
								  HBMW_ERR_DIGEST;
}

static const int hbmw_errnos[HBMW_S_MAX + 1] = {
	[HBMW_S_OK] = 0,
	[HBMW_S_INVAL] = -EINVAL,
	[HBMW_S_RANGE] = -ERANGE,
	[HBMW_S_NOTYOURS] = -EACCES,
	[HBMW_S_DIGEST] = -EBADMSG,
	[HBMW_S_NOSPC] = -ENOSPC,
	[HBMW_S_NOAUTH] = -EPERM,
	[HBMW_S_FENCED] = -ENODEV,
	[HBMW_S_IO] = -EIO,
};

/* The errno a response's status means to the client; -EPROTO if unknown. */
int hbmw_status_errno(u32 status)
{
	return status <= HBMW_S_MAX ? hbmw_errnos[status] : -EPROTO;
}

/* The status a home answers for its error @err (negative errno); EIO if none fits. */
u32 hbmw_errno_status(int err)
{
	u32 s;

	for (s = 0; s <= HBMW_S_MAX; s++)
		if (hbmw_errnos[s] == err)
			return s;
	return HBMW_S_IO;
}

const char *hbmw_err_name(enum hbmw_err err)
{
	static const char * const names[HBMW_NR_ERRS] = {
		[HBMW_OK] = "ok",
		[HBMW_ERR_MAGIC] = "bad magic",
		[HBMW_ERR_VERSION] = "unknown version",
		[HBMW_ERR_HCRC] = "bad header digest",
		[HBMW_ERR_OPCODE] = "unknown opcode",
		[HBMW_ERR_FLAGS] = "bad flags",
		[HBMW_ERR_DIRECTION] = "wrong direction",
		[HBMW_ERR_TAG] = "bad tag",
		[HBMW_ERR_STATUS] = "bad status",
		[HBMW_ERR_LENGTH] = "bad length",
		[HBMW_ERR_RANGE] = "out of range",
		[HBMW_ERR_DIGEST] = "bad data digest",
		[HBMW_ERR_NOTYOURS] = "not the client's chunk",
	};

	return err < HBMW_NR_ERRS ? names[err] : "?";
}

/* A HELLO names a domain (NUL-terminated, not empty) and two distinct nodes. */
bool hbmw_hello_valid(const struct hbmw_hello *h)
{
	return h->domain[0] && memchr(h->domain, 0, sizeof(h->domain)) &&
	       le32_to_cpu(h->client_id) != le32_to_cpu(h->home_id);
}

/**
 * hbmw_transcript - what a side MACs with the domain key
 * @buf: out, at least @len bytes
 * @len: sizeof(buf); 0 asks for the size
 * @from_home: the WELCOME's MAC (else the AUTH's)
 * @hello: the HELLO as sent
 * @challenge: the CHALLENGE as sent
 *
 * A label that tells the two MACs apart (so that one cannot be replayed
 * as the other), then HELLO and CHALLENGE: both nonces are in it, so each
 * side proves the key afresh.  Return: the transcript's length.
 */
size_t hbmw_transcript(u8 *buf, size_t len, bool from_home,
		       const struct hbmw_hello *hello,
		       const struct hbmw_challenge *challenge)
{
	static const char client_label[16] = "hbmw-v1-client";
	static const char home_label[16] = "hbmw-v1-home";
	size_t need = sizeof(client_label) + sizeof(*hello) + sizeof(*challenge);

	if (len < need)
		return need;
	memcpy(buf, from_home ? home_label : client_label, sizeof(client_label));
	memcpy(buf + sizeof(client_label), hello, sizeof(*hello));
	memcpy(buf + sizeof(client_label) + sizeof(*hello), challenge, sizeof(*challenge));
	return need;
}
