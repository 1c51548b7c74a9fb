/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hbmpool wire protocol: the frames a client node and a home node
 * exchange over a byte stream (the TCP transport; the shared-memory
 * transport reuses its control frames).  Documentation/wire-protocol.rst
 * describes every frame, field, error and state.
 *
 * This file and wire.c are pure logic, built into the module and into a
 * user-space unit test (selftests/unit/wire_unit.c): they check and build
 * frames, never touch a socket, and allocate nothing.
 *
 * Every frame is a 32-byte header, then the payload its opcode and
 * direction call for, then, if HBMW_F_DDGST is set, the CRC32C of the
 * payload (4 bytes, little endian).  All fields are little endian.
 */
#ifndef _HBMPOOL_WIRE_H
#define _HBMPOOL_WIRE_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include "wire_user.h"	/* selftests/unit/: the unit test's stand-ins */
#endif

#define HBMW_MAGIC		0x574d4248U	/* "HBMW" */
#define HBMW_VERSION		1
#define HBMW_HDR_SIZE		32
#define HBMW_PAGE_SIZE		4096U
#define HBMW_MAX_DATA		(512U * HBMW_PAGE_SIZE)	/* one READ or WRITE */
#define HBMW_MAX_TAGS		256	/* requests in flight per connection */
#define HBMW_NAME_LEN		32
#define HBMW_NONCE_LEN		32
#define HBMW_MAC_LEN		32	/* HMAC-SHA256 */

enum hbmw_op {
	HBMW_OP_HELLO = 1,	/* client: who it is, its nonce */
	HBMW_OP_CHALLENGE,	/* home: its nonce, incarnation, segment size */
	HBMW_OP_AUTH,		/* client: its MAC over the transcript */
	HBMW_OP_WELCOME,	/* home: its MAC: both are authenticated */
	HBMW_OP_READ,		/* pages of the home's segment to the client */
	HBMW_OP_WRITE,		/* pages from the client to the home's segment */
	HBMW_OP_ALLOC,		/* the home allocates bytes for the client */
	HBMW_OP_FREE,		/* the client gives back what ALLOC gave */
	HBMW_OP_PING,		/* liveness and round-trip time */
	HBMW_OP_BYE,		/* the sender closes the connection */
	HBMW_OP_MAX = HBMW_OP_BYE,
};

/* hdr.flags */
#define HBMW_F_RESP	0x0001U	/* a response: same opcode and tag as its request */
#define HBMW_F_DDGST	0x0002U	/* the payload is followed by its CRC32C */
#define HBMW_F_ALL	(HBMW_F_RESP | HBMW_F_DDGST)

/* hdr.status of a response; 0 in requests. */
enum hbmw_status {
	HBMW_S_OK = 0,
	HBMW_S_INVAL,		/* malformed request */
	HBMW_S_RANGE,		/* outside the segment */
	HBMW_S_NOTYOURS,	/* not in the chunks this client holds */
	HBMW_S_DIGEST,		/* the data digest did not match */
	HBMW_S_NOSPC,		/* ALLOC: the segment is full */
	HBMW_S_NOAUTH,		/* handshake refused: key, domain or ids */
	HBMW_S_FENCED,		/* the home serves nothing (fenced, leaving) */
	HBMW_S_IO,		/* the home's memory failed */
	HBMW_S_MAX = HBMW_S_IO,
};

struct hbmw_hdr {
	__le32 magic;
	__u8 version;
	__u8 opcode;		/* enum hbmw_op */
	__le16 flags;		/* HBMW_F_* */
	__le32 tag;		/* request's number, < HBMW_MAX_TAGS; echoed */
	__le32 status;		/* enum hbmw_status; responses only */
	__le64 offset;		/* READ, WRITE, FREE: in the segment; ALLOC resp */
	__le32 length;		/* READ, WRITE, ALLOC, FREE: bytes */
	__le32 hcrc;		/* CRC32C of the 28 bytes before it */
};

/* HELLO payload. */
struct hbmw_hello {
	char domain[HBMW_NAME_LEN];	/* NUL-padded */
	__le32 client_id;		/* the sender's node id */
	__le32 home_id;			/* the node id it means to reach */
	__le64 client_incarnation;
	__u8 nonce[HBMW_NONCE_LEN];
};

/* CHALLENGE payload. */
struct hbmw_challenge {
	__le64 incarnation;		/* changes whenever the segment's memory is new */
	__le64 segment_size;
	__u8 nonce[HBMW_NONCE_LEN];
};

/* AUTH and WELCOME payload. */
struct hbmw_auth {
	__u8 mac[HBMW_MAC_LEN];
};

/* Why a frame was refused; counted per reason. */
enum hbmw_err {
	HBMW_OK = 0,
	HBMW_ERR_MAGIC,
	HBMW_ERR_VERSION,
	HBMW_ERR_HCRC,
	HBMW_ERR_OPCODE,
	HBMW_ERR_FLAGS,
	HBMW_ERR_DIRECTION,	/* a response where a request belongs, or back */
	HBMW_ERR_TAG,
	HBMW_ERR_STATUS,
	HBMW_ERR_LENGTH,
	HBMW_ERR_RANGE,
	HBMW_ERR_DIGEST,
	HBMW_ERR_NOTYOURS,	/* not in the chunks the client holds (home's check) */
	HBMW_NR_ERRS,
};

/* Who checks a frame: what it may receive. */
enum hbmw_role {
	HBMW_ROLE_HOME,		/* receives requests */
	HBMW_ROLE_CLIENT,	/* receives responses */
};

u32 hbmw_crc32c(u32 crc, const void *buf, size_t len);
void hbmw_hdr_build(struct hbmw_hdr *h, enum hbmw_op op, u16 flags, u32 tag,
		    u32 status, u64 offset, u32 length);
enum hbmw_err hbmw_hdr_check(const struct hbmw_hdr *h, enum hbmw_role role);
long hbmw_payload_len(const struct hbmw_hdr *h);
enum hbmw_err hbmw_range_check(u64 offset, u64 length, u64 segment_size);
enum hbmw_err hbmw_digest_check(const void *payload, size_t len, __le32 digest);
int hbmw_status_errno(u32 status);
u32 hbmw_errno_status(int err);
const char *hbmw_err_name(enum hbmw_err err);
bool hbmw_hello_valid(const struct hbmw_hello *h);
size_t hbmw_transcript(u8 *buf, size_t len, bool from_home,
		       const struct hbmw_hello *hello,
		       const struct hbmw_challenge *challenge);

#endif /* _HBMPOOL_WIRE_H */
