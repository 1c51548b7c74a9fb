// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of the wire protocol's pure logic (kmod/wire.c), built for user
 * space: CRC32C against its standard check value; headers built and
 * checked; every field of a valid header broken in turn and refused for
 * the right reason; the direction rules of each side; the payload each
 * frame carries; range checks at the edges and against overflow; data
 * digests; the status codes both ways; HELLO validation; the transcript;
 * and a bounded fuzz of random headers, none of which may pass without a
 * correct header digest.  TAP output.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "wire.h"
#include "tap.h"


/* Re-seal a header after a field was changed on purpose (tests past the CRC). */
static void reseal(struct hbmw_hdr *h)
{
	h->hcrc = cpu_to_le32(~hbmw_crc32c(~0U, h, offsetof(struct hbmw_hdr, hcrc)));
}

static void test_crc(void)
{
	ok(~hbmw_crc32c(~0U, "123456789", 9) == 0xe3069283U,
	   "crc32c(\"123456789\") is the standard check value 0xe3069283");
	ok(sizeof(struct hbmw_hdr) == HBMW_HDR_SIZE, "the header is %d bytes", HBMW_HDR_SIZE);
	ok(sizeof(struct hbmw_hello) == 80 && sizeof(struct hbmw_challenge) == 48 &&
	   sizeof(struct hbmw_auth) == 32, "handshake payloads have fixed sizes, no padding");
}

static void test_valid(void)
{
	struct hbmw_hdr h;

	hbmw_hdr_build(&h, HBMW_OP_READ, 0, 7, 0, 8192, 4096);
	ok(hbmw_hdr_check(&h, HBMW_ROLE_HOME) == HBMW_OK, "a READ request passes at the home");
	ok(hbmw_hdr_check(&h, HBMW_ROLE_CLIENT) == HBMW_ERR_DIRECTION,
	   "...and is refused by a client (a request where a response belongs)");
	ok(hbmw_payload_len(&h) == 0, "a READ request carries no payload");
	hbmw_hdr_build(&h, HBMW_OP_READ, HBMW_F_RESP | HBMW_F_DDGST, 7, 0, 8192, 4096);
	ok(hbmw_hdr_check(&h, HBMW_ROLE_CLIENT) == HBMW_OK, "its response passes at the client");
	ok(hbmw_payload_len(&h) == 4096, "...and carries the pages");
	hbmw_hdr_build(&h, HBMW_OP_READ, HBMW_F_RESP, 7, HBMW_S_RANGE, 8192, 4096);
	ok(hbmw_hdr_check(&h, HBMW_ROLE_CLIENT) == HBMW_OK && hbmw_payload_len(&h) == 0,
	   "a failed READ response passes and carries nothing");
	hbmw_hdr_build(&h, HBMW_OP_WRITE, HBMW_F_DDGST, 1, 0, 0, 2 * 4096);
	ok(hbmw_hdr_check(&h, HBMW_ROLE_HOME) == HBMW_OK && hbmw_payload_len(&h) == 8192,
	   "a WRITE request carries its data");
	hbmw_hdr_build(&h, HBMW_OP_HELLO, 0, 0, 0, 0, 0);
	ok(hbmw_hdr_check(&h, HBMW_ROLE_HOME) == HBMW_OK &&
	   hbmw_payload_len(&h) == sizeof(struct hbmw_hello), "HELLO goes to the home, with its payload");
	ok(hbmw_hdr_check(&h, HBMW_ROLE_CLIENT) == HBMW_ERR_DIRECTION, "...never to a client");
	hbmw_hdr_build(&h, HBMW_OP_CHALLENGE, 0, 0, 0, 0, 0);
	ok(hbmw_hdr_check(&h, HBMW_ROLE_CLIENT) == HBMW_OK &&
	   hbmw_hdr_check(&h, HBMW_ROLE_HOME) == HBMW_ERR_DIRECTION, "CHALLENGE goes to the client only");
	hbmw_hdr_build(&h, HBMW_OP_WELCOME, HBMW_F_RESP, 0, 0, 0, 0);
	ok(hbmw_hdr_check(&h, HBMW_ROLE_CLIENT) == HBMW_ERR_DIRECTION,
	   "a handshake frame marked as a response is refused");
	hbmw_hdr_build(&h, HBMW_OP_ALLOC, HBMW_F_RESP, 3, 0, 1 << 20, 2 << 20);
	ok(hbmw_hdr_check(&h, HBMW_ROLE_CLIENT) == HBMW_OK && hbmw_payload_len(&h) == 0,
	   "an ALLOC response gives an offset, no payload");
}

/* Each field of a valid WRITE request broken in turn, refused for its reason. */
static void test_broken(void)
{
	static const struct {
		const char *what;
		enum hbmw_err want;
		bool reseal;
	} cases[] = {
		{ "magic", HBMW_ERR_MAGIC, true },
		{ "version", HBMW_ERR_VERSION, true },
		{ "a byte, without resealing", HBMW_ERR_HCRC, false },
		{ "opcode 0", HBMW_ERR_OPCODE, true },
		{ "opcode past the last", HBMW_ERR_OPCODE, true },
		{ "an unknown flag", HBMW_ERR_FLAGS, true },
		{ "tag past the window", HBMW_ERR_TAG, true },
		{ "a status in a request", HBMW_ERR_STATUS, true },
		{ "length 0", HBMW_ERR_LENGTH, true },
		{ "length not in pages", HBMW_ERR_LENGTH, true },
		{ "length over the largest transfer", HBMW_ERR_LENGTH, true },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct hbmw_hdr h;

		hbmw_hdr_build(&h, HBMW_OP_WRITE, HBMW_F_DDGST, 5, 0, 4096, 4096);
		switch (i) {
		case 0: h.magic = cpu_to_le32(0x12345678); break;
		case 1: h.version = 2; break;
		case 2: h.offset = cpu_to_le64(8192); break;
		case 3: h.opcode = 0; break;
		case 4: h.opcode = HBMW_OP_MAX + 1; break;
		case 5: h.flags = cpu_to_le16(0x8000); break;
		case 6: h.tag = cpu_to_le32(HBMW_MAX_TAGS); break;
		case 7: h.status = cpu_to_le32(HBMW_S_IO); break;
		case 8: h.length = 0; break;
		case 9: h.length = cpu_to_le32(4097); break;
		case 10: h.length = cpu_to_le32(HBMW_MAX_DATA + 4096); break;
		}
		if (cases[i].reseal)
			reseal(&h);
		ok(hbmw_hdr_check(&h, HBMW_ROLE_HOME) == cases[i].want,
		   "WRITE with %s: %s", cases[i].what, hbmw_err_name(cases[i].want));
	}
	{
		struct hbmw_hdr h;

		hbmw_hdr_build(&h, HBMW_OP_PING, HBMW_F_DDGST, 0, 0, 0, 0);
		ok(hbmw_hdr_check(&h, HBMW_ROLE_HOME) == HBMW_ERR_FLAGS,
		   "a digest on a frame without payload is refused");
		hbmw_hdr_build(&h, HBMW_OP_PING, 0, 0, 0, 0, 4096);
		ok(hbmw_hdr_check(&h, HBMW_ROLE_HOME) == HBMW_ERR_LENGTH,
		   "a length on a PING is refused");
		hbmw_hdr_build(&h, HBMW_OP_READ, HBMW_F_RESP, 0, HBMW_S_MAX + 1, 0, 4096);
		ok(hbmw_hdr_check(&h, HBMW_ROLE_CLIENT) == HBMW_ERR_STATUS,
		   "an unknown status is refused");
	}
}

static void test_range(void)
{
	const u64 seg = 1 << 20;

	ok(hbmw_range_check(0, seg, seg) == HBMW_OK, "the whole segment is in range");
	ok(hbmw_range_check(seg - 4096, 4096, seg) == HBMW_OK, "its last page is in range");
	ok(hbmw_range_check(seg, 4096, seg) == HBMW_ERR_RANGE, "the page after it is not");
	ok(hbmw_range_check(seg - 4096, 8192, seg) == HBMW_ERR_RANGE, "a run across its end is not");
	ok(hbmw_range_check(4096, UINT64_MAX - 4095, seg) == HBMW_ERR_RANGE,
	   "a length that wraps around is not");
	ok(hbmw_range_check(100, 4096, seg) == HBMW_ERR_RANGE, "an unaligned offset is not");
	ok(hbmw_range_check(0, 0, seg) == HBMW_ERR_RANGE, "nothing is not a range");
	ok(hbmw_range_check(0, 4096, 0) == HBMW_ERR_RANGE, "nothing is in an empty segment");
}

static void test_digest(void)
{
	static u8 page[4096];
	__le32 d;

	for (size_t i = 0; i < sizeof(page); i++)
		page[i] = (u8)(i * 7);
	d = cpu_to_le32(~hbmw_crc32c(~0U, page, sizeof(page)));
	ok(hbmw_digest_check(page, sizeof(page), d) == HBMW_OK, "a page with its digest passes");
	page[1234] ^= 0x10;
	ok(hbmw_digest_check(page, sizeof(page), d) == HBMW_ERR_DIGEST, "one bit flipped is caught");
}

static void test_status(void)
{
	int bad = 0;

	for (u32 s = 0; s <= HBMW_S_MAX; s++)
		bad += hbmw_errno_status(hbmw_status_errno(s)) != s;
	ok(!bad, "every status maps to an errno and back");
	ok(hbmw_status_errno(HBMW_S_MAX + 1) == -EPROTO, "an unknown status is EPROTO");
	ok(hbmw_errno_status(-ENOMEM) == HBMW_S_IO, "an errno without a status is IO");
	ok(hbmw_status_errno(HBMW_S_OK) == 0, "OK is 0");
}

static void test_handshake(void)
{
	struct hbmw_hello h = { .domain = "rack7" };
	struct hbmw_challenge c = { .incarnation = cpu_to_le64(42) };
	u8 a[256], b[256];
	size_t n;

	h.client_id = cpu_to_le32(1);
	h.home_id = cpu_to_le32(2);
	ok(hbmw_hello_valid(&h), "a HELLO naming a domain and two nodes is valid");
	h.home_id = cpu_to_le32(1);
	ok(!hbmw_hello_valid(&h), "...not one that names the same node twice");
	h.home_id = cpu_to_le32(2);
	memset(h.domain, 'x', sizeof(h.domain));
	ok(!hbmw_hello_valid(&h), "...nor one whose domain is not NUL-terminated");
	memset(h.domain, 0, sizeof(h.domain));
	ok(!hbmw_hello_valid(&h), "...nor one without a domain");
	strcpy(h.domain, "rack7");
	n = hbmw_transcript(NULL, 0, false, &h, &c);
	ok(n == 16 + sizeof(h) + sizeof(c), "the transcript is label, HELLO, CHALLENGE (%zu bytes)", n);
	hbmw_transcript(a, sizeof(a), false, &h, &c);
	hbmw_transcript(b, sizeof(b), true, &h, &c);
	ok(memcmp(a, b, n) && !memcmp(a + 16, b + 16, n - 16),
	   "the client's and the home's transcripts differ only in the label");
	c.nonce[0] = 1;
	hbmw_transcript(b, sizeof(b), false, &h, &c);
	ok(memcmp(a, b, n), "a new nonce makes a new transcript");
}

/* Random headers: without a correct CRC nothing passes; with one, checks hold. */
static void test_fuzz(void)
{
	unsigned int seed = 12345, passed_bad_crc = 0, inconsistent = 0;

	for (int i = 0; i < 200000; i++) {
		struct hbmw_hdr h;
		u8 *p = (u8 *)&h;
		bool sealed = i & 1;

		for (size_t k = 0; k < sizeof(h); k++)
			p[k] = (u8)rand_r(&seed);
		if (i % 3 == 0) {
			h.magic = cpu_to_le32(HBMW_MAGIC);
			h.version = HBMW_VERSION;
			h.opcode = 1 + rand_r(&seed) % (HBMW_OP_MAX + 1);
			h.flags = cpu_to_le16(rand_r(&seed) % 4);
			h.tag = cpu_to_le32(rand_r(&seed) % (2 * HBMW_MAX_TAGS));
			h.status = cpu_to_le32(rand_r(&seed) % 3 ? 0 : rand_r(&seed) % 12);
			h.length = cpu_to_le32((rand_r(&seed) % 4) * 4096 + (rand_r(&seed) % 2));
		}
		if (sealed)
			reseal(&h);
		for (int role = 0; role < 2; role++) {
			enum hbmw_err e = hbmw_hdr_check(&h, role);

			if (e == HBMW_OK && !sealed)
				passed_bad_crc++;
			if (e == HBMW_OK &&
			    (hbmw_payload_len(&h) < 0 ||
			     le32_to_cpu(h.tag) >= HBMW_MAX_TAGS ||
			     hbmw_payload_len(&h) > (long)HBMW_MAX_DATA))
				inconsistent++;
		}
	}
	ok(!passed_bad_crc, "fuzz: no header passes without its digest (%u did)", passed_bad_crc);
	ok(!inconsistent, "fuzz: every header that passes has a sane payload and tag (%u not)",
	   inconsistent);
}

int main(void)
{
	test_crc();
	test_valid();
	test_broken();
	test_range();
	test_digest();
	test_status();
	test_handshake();
	test_fuzz();
	return tap_finish();
}
