// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of hbmpoold's membership logic (daemon/membership.c), without
 * etcd: the key layout, member and leader values both ways, every way a
 * value from etcd can be wrong (each refused with the key and the reason),
 * the table from a range (sorted, bad entries left out and explained,
 * duplicates refused, the epoch), watch events applied to it, diffs into
 * join/leave/change events, and a seeded fuzz of member values that must
 * never crash nor let an invalid member in; the location in a member's
 * value and the topology (topology.h): relations, distances, link types.
 * TAP output.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "membership.h"
#include "tap.h"

#define PFX	"/hbmpool/pod7/members/"

static struct hbm_etcd_kv kv(const char *key, const char *value, int64_t rev)
{
	struct hbm_etcd_kv k = {
		.key = (char *)key, .key_len = strlen(key),
		.value = (char *)value, .value_len = value ? strlen(value) : 0,
		.create_revision = rev, .mod_revision = rev, .version = 1, .lease = 42,
	};

	return k;
}

static char *mval(unsigned int id, const char *addr, unsigned int port, uint64_t seg,
		  uint64_t cap, uint64_t inc)
{
	static char buf[8][256];
	static int slot;
	char *b = buf[slot++ % 8];

	snprintf(b, 256, "{\"id\":%u,\"addr\":\"%s\",\"port\":%u,\"segment_bytes\":%" PRIu64
		 ",\"capacity\":%" PRIu64 ",\"incarnation\":%" PRIu64 "}", id, addr, port, seg, cap,
		 inc);
	return b;
}

static void test_keys(void)
{
	char b[64];

	ok(!hbm_members_prefix(b, sizeof(b), "/hbmpool", "pod7") && !strcmp(b, PFX),
	   "members prefix %s", b);
	ok(!hbm_member_key(b, sizeof(b), "/hbmpool", "pod7", 1023) &&
	   !strcmp(b, PFX "1023"), "member key %s", b);
	ok(!hbm_leader_key(b, sizeof(b), "/hbmpool", "pod7") && !strcmp(b, "/hbmpool/pod7/leader"),
	   "leader key %s", b);
	ok(hbm_member_key(b, sizeof(b), "/hbmpool", "pod7", 1024) == -EINVAL, "id 1024 refused");
	ok(hbm_member_key(b, 10, "/hbmpool", "pod7", 1) == -ENAMETOOLONG,
	   "a key that does not fit: -ENAMETOOLONG");
}

static void test_roundtrip(void)
{
	struct hbm_member m = {
		.id = 7, .addr = "fd00::7", .port = 7070, .segment_bytes = 16ULL << 30,
		.capacity = 1ULL << 30, .incarnation = UINT64_MAX - 1,
	}, p;
	struct hbm_etcd_kv k;
	struct hbm_leader l;
	char *json, err[256];
	int ret;

	ret = hbm_member_encode(&m, &json);
	ok(!ret && json && strstr(json, "\"incarnation\":18446744073709551614"),
	   "member encoded: %s", json ? json : "");
	k = kv(PFX "7", json, 99);
	k.create_revision = 50;
	ret = hbm_member_parse(PFX, &k, &p, err, sizeof(err));
	ok(!ret && p.id == 7 && !strcmp(p.addr, "fd00::7") && p.port == 7070 &&
	   p.segment_bytes == 16ULL << 30 && p.capacity == 1ULL << 30 &&
	   p.incarnation == UINT64_MAX - 1 && p.mod_revision == 99 && p.create_revision == 50 &&
	   p.lease == 42, "and parsed back, with the kv's revisions and lease");
	free(json);

	ret = hbm_leader_encode(3, 77, &json);
	ok(!ret && !strcmp(json, "{\"id\":3,\"incarnation\":77}"), "leader encoded: %s", json);
	k = kv("/hbmpool/pod7/leader", json, 120);
	ret = hbm_leader_parse(&k, &l, err, sizeof(err));
	ok(!ret && l.id == 3 && l.incarnation == 77 && l.lease == 42 && l.term == 120,
	   "leader parsed: id, incarnation, lease, term = create_revision");
	k.lease = 0;
	ret = hbm_leader_parse(&k, &l, err, sizeof(err));
	ok(ret == -EPROTO && strstr(err, "/hbmpool/pod7/leader: the leader key has no lease"),
	   "a leader key without a lease is refused: %s", err);
	free(json);
	k = kv("/hbmpool/pod7/leader", "{\"id\":1024,\"incarnation\":1}", 5);
	ret = hbm_leader_parse(&k, &l, err, sizeof(err));
	ok(ret == -EPROTO && strstr(err, "\"id\" 1024 is out of range 0..1023"),
	   "a leader id out of range: %s", err);
	k = kv("/hbmpool/pod7/leader", "3", 5);
	ret = hbm_leader_parse(&k, &l, err, sizeof(err));
	ok(ret == -EPROTO && strstr(err, "not a JSON object"), "a leader value not an object: %s",
	   err);
	k = kv("/hbmpool/pod7/leader", NULL, 5);
	ret = hbm_leader_parse(&k, &l, err, sizeof(err));
	ok(ret == -EPROTO && strstr(err, "not JSON"), "an empty leader value: %s", err);
}

static void bad(const char *key, const char *value, const char *want, const char *what)
{
	struct hbm_etcd_kv k = kv(key, value, 5);
	struct hbm_member m;
	char err[320] = "";
	int ret;

	ret = hbm_member_parse(PFX, &k, &m, err, sizeof(err));
	ok(ret == -EPROTO && strstr(err, want) && m.id == 0 && m.port == 0,
	   "%s: \"%s\"", what, err);
}

static void test_bad_values(void)
{
	static char big[70000], deep[4000];
	struct hbm_etcd_kv k;
	struct hbm_member m;
	char err[320];
	size_t i;

	bad(PFX "3", "", PFX "3: not JSON: unexpected end", "empty value");
	bad(PFX "3", "{\"id\":3,", "not JSON: unexpected end", "truncated JSON");
	bad(PFX "3", "{\"id\":3 \"addr\"}", "not JSON", "broken JSON");
	bad(PFX "3", "[3]", "not a JSON object", "an array");
	bad(PFX "3", "null", "not a JSON object", "null");
	bad(PFX "3", "{} {}", "data after the JSON object", "two objects");
	bad(PFX "3", "{}", "no \"id\"", "an empty object");
	bad(PFX "3", mval(4, "10.0.0.3", 7070, 4096, 4096, 1), "\"id\" 4 is not the key's 3",
	    "an id that is not the key's");
	bad(PFX "3", "{\"id\":\"3\"}", "\"id\" is not an integer", "a string id");
	bad(PFX "3", "{\"id\":3.0}", "\"id\" is not an integer", "a float id");
	bad(PFX "3", "{\"id\":-3}", "\"id\" is negative", "a negative id");
	bad(PFX "3", "{\"id\":3,\"port\":1}", "no \"addr\" string", "no addr");
	bad(PFX "3", "{\"id\":3,\"addr\":3}", "no \"addr\" string", "a numeric addr");
	bad(PFX "3", mval(3, "node3", 7070, 4096, 4096, 1), "\"addr\" is not an IPv4 or IPv6",
	    "a host name as addr");
	bad(PFX "3", mval(3, "10.0.0.256", 7070, 4096, 4096, 1), "\"addr\" is not an IPv4",
	    "a bad IPv4 addr");
	bad(PFX "3", mval(3, "10.0.0.3", 0, 4096, 4096, 1), "\"port\" 0 is out of range 1..65535",
	    "port 0");
	bad(PFX "3", mval(3, "10.0.0.3", 65536, 4096, 4096, 1), "\"port\" 65536 is out of range",
	    "port 65536");
	bad(PFX "3", mval(3, "10.0.0.3", 7070, 4096, 8192, 1),
	    "\"capacity\" 8192 is out of range 0..4096", "capacity over the segment");
	bad(PFX "3", mval(3, "10.0.0.3", 7070, 4096, 4096, 0), "\"incarnation\" 0 is out of range",
	    "incarnation 0");
	bad(PFX "3", "{\"id\":3,\"addr\":\"10.0.0.3\",\"port\":7070,\"segment_bytes\":"
	    "18446744073709551616,\"capacity\":0,\"incarnation\":1}",
	    "\"segment_bytes\" is too large", "a segment of 2^64 bytes");
	bad(PFX "3", "{\"id\":3,\"addr\":\"10.0.0.3\",\"port\":7070,\"segment_bytes\":"
	    "99999999999999999999999999,\"capacity\":0,\"incarnation\":1}",
	    "\"segment_bytes\" is", "a 26-digit segment size");
	bad(PFX "3", "{\"id\":3,\"addr\":\"10.0.0.3\",\"port\":7070,\"segment_bytes\":4096,"
	    "\"capacity\":0}", "no \"incarnation\"", "no incarnation");
	bad(PFX "3", "{\"id\":3,\"addr\":\"10.0.0.3\",\"port\":true}", "\"port\" is not an integer",
	    "a boolean port");

	bad("/hbmpool/pod8/members/3", mval(3, "10.0.0.3", 7070, 4096, 4096, 1),
	    "/hbmpool/pod8/members/3: not under " PFX, "another domain's key");
	bad(PFX "03", mval(3, "10.0.0.3", 7070, 4096, 4096, 1),
	    PFX "03: the key does not end in an id 0..1023", "a leading zero in the key");
	bad(PFX "1024", mval(1024, "10.0.0.3", 7070, 4096, 4096, 1),
	    "the key does not end in an id", "key id 1024");
	bad(PFX, "{}", "the key does not end in an id", "the prefix itself");
	bad(PFX "x", "{}", "the key does not end in an id", "a key id x");
	bad(PFX "1/2", "{}", "the key does not end in an id", "a deeper key");
	bad(PFX "-1", "{}", "the key does not end in an id", "key id -1");
	bad(PFX "99999999999", "{}", "the key does not end in an id", "a huge key id");

	k = kv(PFX "3", mval(3, "10.0.0.3", 7070, 4096, 4096, 1), 5);
	k.value_len += 1;	/* the NUL counted: a NUL byte in the value */
	ok(hbm_member_parse(PFX, &k, &m, err, sizeof(err)) == -EPROTO &&
	   strstr(err, "a NUL byte in the value"), "a NUL byte in the value: \"%s\"", err);
	k = kv(PFX "3", mval(3, "10.0.0.3", 7070, 4096, 4096, 1), 5);
	k.key_len--;	/* the key's length disagrees with its string */
	ok(hbm_member_parse(PFX, &k, &m, err, sizeof(err)) == -EPROTO && strstr(err, "not under"),
	   "a key with a NUL byte in it: \"%s\"", err);

	memset(big, ' ', sizeof(big) - 1);
	big[0] = '{';
	big[sizeof(big) - 2] = '}';
	bad(PFX "3", big, "a value of 69999 bytes (at most 65536)", "a 70 kB value");
	for (i = 0; i < sizeof(deep) / 2; i++) {
		deep[i] = '[';
		deep[sizeof(deep) / 2 + i - 1] = ']';
	}
	deep[sizeof(deep) - 2] = '\0';
	bad(PFX "3", deep, "not JSON: nesting too deep", "2000 nested arrays");

	k = kv(PFX "3", "{\"id\":3,\"addr\":\"10.0.0.3\",\"port\":7070,\"segment_bytes\":4096,"
	       "\"capacity\":0,\"incarnation\":9,\"zone\":\"b\",\"v\":2}  \n", 5);
	ok(!hbm_member_parse(PFX, &k, &m, err, sizeof(err)) && m.incarnation == 9,
	   "unknown fields and trailing whitespace are accepted (later versions)");
}

static void test_build(void)
{
	struct hbm_etcd_kv kvs[6];
	struct hbm_members t, c;
	int ret;

	kvs[0] = kv(PFX "9", mval(9, "10.0.0.9", 7070, 8192, 4096, 19), 11);
	kvs[1] = kv(PFX "2", mval(2, "10.0.0.2", 7070, 8192, 8192, 12), 14);
	kvs[2] = kv(PFX "5", "{garbage", 30);
	kvs[3] = kv(PFX "0", mval(0, "::1", 7071, 4096, 0, 10), 7);
	kvs[4] = kv(PFX "1000", mval(1000, "10.0.3.232", 7070, 4096, 4096, 11), 9);
	ret = hbm_members_build(PFX, kvs, 5, &t);
	ok(!ret && t.n == 4 && t.m[0].id == 0 && t.m[1].id == 2 && t.m[2].id == 9 &&
	   t.m[3].id == 1000, "a range of five: four members, sorted by id");
	ok(t.bad == 1 && t.errors && strstr(t.errors, PFX "5: not JSON") &&
	   !strchr(strchr(t.errors, '\n') + 1, '\n'), "the bad one counted and explained: %.*s",
	   t.errors ? (int)strcspn(t.errors, "\n") : 0, t.errors ? t.errors : "");
	ok(t.epoch == 30, "epoch: the greatest mod_revision, the bad entry's too (%lld)",
	   (long long)t.epoch);
	ok(hbm_members_find(&t, 9) && hbm_members_find(&t, 9)->incarnation == 19 &&
	   hbm_members_find(&t, 1000) && !hbm_members_find(&t, 5) && !hbm_members_find(&t, 1),
	   "find by id");
	ret = hbm_members_copy(&t, &c);
	ok(!ret && c.n == 4 && c.epoch == 30 && c.bad == 1 && c.m != t.m &&
	   !memcmp(c.m, t.m, 4 * sizeof(*c.m)) && c.errors && !strcmp(c.errors, t.errors),
	   "copy");
	hbm_members_free(&c);
	hbm_members_free(&t);

	kvs[5] = kv(PFX "2", mval(2, "10.0.0.22", 7070, 8192, 8192, 13), 15);
	ret = hbm_members_build(PFX, kvs, 6, &t);
	ok(!ret && t.n == 3 && !hbm_members_find(&t, 2) && t.bad == 3 &&
	   strstr(t.errors, "member 2: 2 entries"), "one id twice: both refused");
	hbm_members_free(&t);

	ret = hbm_members_build(PFX, NULL, 0, &t);
	ok(!ret && t.n == 0 && t.epoch == 0 && !t.errors && !t.bad, "an empty range: no member");
	hbm_members_free(&t);
}

static struct hbm_etcd_event put(const char *key, const char *value, int64_t rev)
{
	struct hbm_etcd_event e = { .type = HBM_ETCD_EV_PUT, .kv = kv(key, value, rev) };

	return e;
}

static struct hbm_etcd_event del(const char *key, int64_t rev)
{
	struct hbm_etcd_event e = { .type = HBM_ETCD_EV_DELETE, .kv = kv(key, NULL, 0) };

	e.kv.mod_revision = rev;
	return e;
}

static void test_apply_diff(void)
{
	struct hbm_etcd_kv kvs[3];
	struct hbm_members a, b, empty = { 0 };
	struct hbm_member_event *ev;
	struct hbm_etcd_event e;
	char err[320];
	size_t n;
	int ret;

	kvs[0] = kv(PFX "1", mval(1, "10.0.0.1", 7070, 8192, 8192, 1), 10);
	kvs[1] = kv(PFX "2", mval(2, "10.0.0.2", 7070, 8192, 8192, 2), 11);
	kvs[2] = kv(PFX "3", mval(3, "10.0.0.3", 7070, 8192, 8192, 3), 12);
	hbm_members_build(PFX, kvs, 3, &a);
	hbm_members_copy(&a, &b);

	ret = hbm_members_diff(&a, &b, &ev, &n);
	ok(!ret && n == 0 && !ev, "a table against itself: no event");

	e = put(PFX "4", mval(4, "10.0.0.4", 7070, 8192, 8192, 4), 20);
	ret = hbm_members_apply(&b, PFX, &e, err, sizeof(err));
	ok(!ret && b.n == 4 && b.epoch == 20 && hbm_members_find(&b, 4), "put of a new member: in");
	e = del(PFX "2", 21);
	ret = hbm_members_apply(&b, PFX, &e, err, sizeof(err));
	ok(!ret && b.n == 3 && b.epoch == 21 && !hbm_members_find(&b, 2),
	   "delete: out, epoch = the deletion's revision");
	e = put(PFX "3", mval(3, "10.0.0.33", 7071, 8192, 4096, 3), 22);
	hbm_members_apply(&b, PFX, &e, err, sizeof(err));
	e = put(PFX "1", mval(1, "10.0.0.1", 7070, 8192, 8192, 1), 23);
	ret = hbm_members_apply(&b, PFX, &e, err, sizeof(err));
	ok(!ret && b.n == 3 && b.epoch == 23 && hbm_members_find(&b, 1)->mod_revision == 23,
	   "put of the same value again: replaced, revision 23");
	e = del(PFX "7", 24);
	ret = hbm_members_apply(&b, PFX, &e, err, sizeof(err));
	ok(!ret && b.n == 3 && b.epoch == 24, "delete of an absent member: nothing but the epoch");
	e = del(PFX "1", 5);
	e.kv.key = PFX "9";
	e.kv.key_len = strlen(e.kv.key);
	ret = hbm_members_apply(&b, PFX, &e, err, sizeof(err));
	ok(!ret && b.epoch == 24, "an older revision does not move the epoch back");

	ret = hbm_members_diff(&a, &b, &ev, &n);
	ok(!ret && n == 3, "diff: three events (%zu)", n);
	if (n == 3) {
		ok(ev[0].type == HBM_MEMBER_LEAVE && ev[0].id == 2 && ev[0].old.incarnation == 2,
		   "2 left");
		ok(ev[1].type == HBM_MEMBER_CHANGE && ev[1].id == 3 &&
		   ev[1].changed == (HBM_MCH_ADDR | HBM_MCH_CAPACITY) &&
		   !strcmp(ev[1].old.addr, "10.0.0.3") && !strcmp(ev[1].new.addr, "10.0.0.33") &&
		   ev[1].new.port == 7071, "3 changed address, port and capacity");
		ok(ev[2].type == HBM_MEMBER_JOIN && ev[2].id == 4 && ev[2].new.incarnation == 4,
		   "4 joined; 1, written again with the same value, is no event");
	}
	free(ev);

	e = put(PFX "4", mval(4, "10.0.0.4", 7070, 16384, 8192, 44), 30);
	hbm_members_apply(&b, PFX, &e, err, sizeof(err));
	hbm_members_free(&a);
	hbm_members_copy(&b, &a);
	e = put(PFX "4", mval(4, "10.0.0.4", 7070, 16384, 8192, 45), 31);
	hbm_members_apply(&b, PFX, &e, err, sizeof(err));
	ret = hbm_members_diff(&a, &b, &ev, &n);
	ok(!ret && n == 1 && ev[0].type == HBM_MEMBER_CHANGE &&
	   ev[0].changed == HBM_MCH_INCARNATION, "a new incarnation: a change of incarnation");
	free(ev);

	e = put(PFX "4", "{\"id\":4}", 32);
	ret = hbm_members_apply(&b, PFX, &e, err, sizeof(err));
	ok(ret == -EPROTO && strstr(err, PFX "4: no \"addr\"") && !hbm_members_find(&b, 4) &&
	   b.epoch == 32, "a bad put: -EPROTO, and the member it overwrote is out (%s)", err);
	e = put("/elsewhere/4", mval(4, "10.0.0.4", 7070, 8192, 8192, 4), 33);
	ret = hbm_members_apply(&b, PFX, &e, err, sizeof(err));
	ok(ret == -EPROTO && b.n == 2, "a put outside the prefix: -EPROTO, nothing changes");
	e = del(PFX "x", 34);
	ret = hbm_members_apply(&b, PFX, &e, err, sizeof(err));
	ok(ret == -EPROTO && strstr(err, "not a member key") && b.n == 2,
	   "a delete of a key that is no member key: -EPROTO");

	ret = hbm_members_diff(&b, &empty, &ev, &n);
	ok(!ret && n == 2 && ev[0].type == HBM_MEMBER_LEAVE && ev[1].type == HBM_MEMBER_LEAVE &&
	   ev[0].id < ev[1].id, "everyone leaves: one leave per member, by id");
	free(ev);
	ret = hbm_members_diff(&empty, &b, &ev, &n);
	ok(!ret && n == 2 && ev[0].type == HBM_MEMBER_JOIN, "from nothing: joins");
	free(ev);
	ret = hbm_members_diff(&empty, &empty, &ev, &n);
	ok(!ret && n == 0 && !ev, "nothing to nothing");
	hbm_members_free(&a);
	hbm_members_free(&b);
}

/* A table of all 1024 ids (given in reverse), then the odd ids leave: diff at scale. */
static void test_scale(void)
{
	static struct hbm_etcd_kv kvs[1024];
	static char keys[1024][40], vals[1024][200];
	struct hbm_members a, b;
	struct hbm_member_event *ev;
	struct hbm_etcd_event e;
	char err[320];
	size_t n, i, good = 1;
	int ret;

	for (i = 0; i < 1024; i++) {
		snprintf(keys[i], sizeof(keys[i]), PFX "%zu", 1023 - i);
		snprintf(vals[i], sizeof(vals[i]), "%s",
			 mval(1023 - i, "10.1.0.1", 7070, 1 << 20, 1 << 20, i + 1));
		kvs[i] = kv(keys[i], vals[i], 100 + i);
	}
	ret = hbm_members_build(PFX, kvs, 1024, &a);
	for (i = 0; !ret && i < a.n; i++)
		good &= a.m[i].id == i;
	ok(!ret && a.n == 1024 && good && a.epoch == 1123, "1024 members, sorted, epoch 1123");
	hbm_members_copy(&a, &b);
	for (i = 0; i < 1024; i += 2) {
		e = del(keys[i], 2000 + i);
		hbm_members_apply(&b, PFX, &e, err, sizeof(err));
	}
	ret = hbm_members_diff(&a, &b, &ev, &n);
	for (i = 0, good = 1; !ret && i < n; i++)
		good &= ev[i].type == HBM_MEMBER_LEAVE && ev[i].id == 2 * i + 1;
	ok(!ret && n == 512 && b.n == 512 && good && b.epoch == 3022,
	   "the odd ids leave: 512 leave events, by id, epoch 3022");
	free(ev);
	hbm_members_free(&a);
	hbm_members_free(&b);
}

/* Random damage to a good value: parse never crashes, and lets no invalid member in. */
static void test_fuzz(void)
{
	const char *good = mval(3, "10.0.0.3", 7070, 8192, 4096, 77);
	static const char alphabet[] = "{}[]\":,0123456789-.eE \\tnulrfa";
	unsigned int seed = 9, accepted = 0, refused = 0, invalid = 0, i, j, n;
	char buf[300], err[320];
	struct hbm_etcd_kv k;
	struct hbm_member m;

	for (i = 0; i < 20000; i++) {
		size_t len = strlen(good);

		memcpy(buf, good, len + 1);
		n = 1 + rand_r(&seed) % 4;
		for (j = 0; j < n; j++) {
			size_t at = rand_r(&seed) % len;

			switch (rand_r(&seed) % 3) {
			case 0:	/* replace */
				buf[at] = alphabet[rand_r(&seed) % (sizeof(alphabet) - 1)];
				break;
			case 1:	/* truncate */
				buf[at] = '\0';
				len = at ? at : 1;
				break;
			default:	/* delete */
				memmove(buf + at, buf + at + 1, len - at);
				len = len > 1 ? len - 1 : 1;
			}
			len = strlen(buf) ? strlen(buf) : 1;
		}
		k = kv(PFX "3", buf, 5);
		if (hbm_member_parse(PFX, &k, &m, err, sizeof(err))) {
			refused++;
			invalid += !strstr(err, PFX "3: ");
			continue;
		}
		accepted++;
		invalid += m.id != 3 || m.port < 1 || m.capacity > m.segment_bytes ||
			   !m.incarnation;
	}
	ok(!invalid && refused > 10000,
	   "20000 damaged values: %u refused with the key named, %u still valid, 0 invalid",
	   refused, accepted);
}

static struct hbm_location loc(const char *site, const char *rack, const char *tray)
{
	struct hbm_location l = { 0 };

	snprintf(l.site, sizeof(l.site), "%s", site);
	snprintf(l.rack, sizeof(l.rack), "%s", rack);
	snprintf(l.tray, sizeof(l.tray), "%s", tray);
	return l;
}

static void test_location_values(void)
{
	struct hbm_member m = {
		.id = 5, .addr = "10.0.0.5", .port = 7070, .segment_bytes = 8192,
		.capacity = 8192, .incarnation = 9,
	}, p;
	struct hbm_members a, b;
	struct hbm_member_event *ev;
	struct hbm_etcd_event e;
	struct hbm_etcd_kv k;
	char *json, err[320];
	size_t n;
	int ret;

	ret = hbm_member_encode(&m, &json);
	ok(!ret && json && !strstr(json, "location"), "no location named: no \"location\": %s",
	   json ? json : "");
	free(json);
	m.loc = loc("fra1", "", "t3");
	ret = hbm_member_encode(&m, &json);
	ok(!ret && json && strstr(json, "\"location\":{\"site\":\"fra1\",\"tray\":\"t3\"}"),
	   "the levels named, only: %s", json ? json : "");
	k = kv(PFX "5", json, 30);
	ret = hbm_member_parse(PFX, &k, &p, err, sizeof(err));
	ok(!ret && !strcmp(p.loc.site, "fra1") && !*p.loc.rack && !strcmp(p.loc.tray, "t3"),
	   "and parsed back");
	free(json);
	k = kv(PFX "5", mval(5, "10.0.0.5", 7070, 8192, 8192, 9), 30);
	ret = hbm_member_parse(PFX, &k, &p, err, sizeof(err));
	ok(!ret && !hbm_location_known(&p.loc),
	   "a value without \"location\" (a daemon before locations): a member, location not known");
	k = kv(PFX "5", "{\"id\":5,\"addr\":\"10.0.0.5\",\"port\":7070,\"segment_bytes\":8192,"
	       "\"capacity\":8192,\"incarnation\":9,\"location\":{\"rack\":\"r1\",\"row\":7}}", 30);
	ret = hbm_member_parse(PFX, &k, &p, err, sizeof(err));
	ok(!ret && !strcmp(p.loc.rack, "r1"), "an unknown field in \"location\" is ignored");

#define LOCVAL(l) "{\"id\":3,\"addr\":\"10.0.0.3\",\"port\":7070,\"segment_bytes\":8192," \
		  "\"capacity\":8192,\"incarnation\":1,\"location\":" l "}"
	bad(PFX "3", LOCVAL("\"r1\""), PFX "3: \"location\" is not an object",
	    "a location not an object");
	bad(PFX "3", LOCVAL("{\"tray\":7}"), "\"location\" \"tray\" is not a name",
	    "a tray not a string");
	bad(PFX "3", LOCVAL("{\"rack\":\"\"}"), "\"location\" \"rack\" is not a name",
	    "an empty rack");
	bad(PFX "3", LOCVAL("{\"site\":\"a/b\"}"), "\"location\" \"site\" is not a name",
	    "a site with a /");
	bad(PFX "3", LOCVAL("{\"site\":\"0123456789012345678901234567890123\"}"),
	    "\"location\" \"site\" is not a name", "a site of 34 characters");
	bad(PFX "3", LOCVAL("{\"tray\":\"t\\u0000x\"}"), "\"location\" \"tray\" is not a name",
	    "a tray with a NUL");
#undef LOCVAL
	bad(PFX "3", "{\"id\":3,\"addr\":\"10.0.0.3\\u0000x\",\"port\":7070,\"segment_bytes\":8192,"
	    "\"capacity\":8192,\"incarnation\":1}", "\"addr\" is not an IPv4 or IPv6 address",
	    "an address with a NUL after a valid one");

	/* a rejoin with a new location: a change, HBM_MCH_LOCATION alone */
	k = kv(PFX "5", mval(5, "10.0.0.5", 7070, 8192, 8192, 9), 30);
	hbm_members_build(PFX, &k, 1, &a);
	hbm_members_copy(&a, &b);
	m.loc = loc("", "r2", "");
	hbm_member_encode(&m, &json);
	e = (struct hbm_etcd_event){ .type = HBM_ETCD_EV_PUT, .kv = kv(PFX "5", json, 31) };
	ret = hbm_members_apply(&b, PFX, &e, err, sizeof(err));
	free(json);
	ev = NULL;
	ret = ret ? ret : hbm_members_diff(&a, &b, &ev, &n);
	ok(!ret && n == 1 && ev[0].type == HBM_MEMBER_CHANGE && ev[0].changed == HBM_MCH_LOCATION &&
	   !hbm_location_known(&ev[0].old.loc) && !strcmp(ev[0].new.loc.rack, "r2"),
	   "a member whose location changed: a change of its location only");
	free(ev);
	hbm_members_free(&a);
	hbm_members_free(&b);
}

/* A member's optional "failure_domain": 0 (none) when absent. */
static void test_failure_domain_values(void)
{
	struct hbm_member m = {
		.id = 5, .addr = "10.0.0.5", .port = 7070, .segment_bytes = 8192,
		.capacity = 8192, .incarnation = 9,
	}, p;
	struct hbm_members a, b;
	struct hbm_member_event *ev;
	struct hbm_etcd_event e;
	struct hbm_etcd_kv k;
	char *json, err[320];
	size_t n;
	int ret;

	ret = hbm_member_encode(&m, &json);
	ok(!ret && json && !strstr(json, "failure_domain"),
	   "no failure domain: no \"failure_domain\": %s", json ? json : "");
	free(json);
	m.failure_domain = UINT32_MAX;
	ret = hbm_member_encode(&m, &json);
	ok(!ret && json && strstr(json, "\"failure_domain\":4294967295"),
	   "a failure domain written: %s", json ? json : "");
	k = kv(PFX "5", json, 30);
	ret = hbm_member_parse(PFX, &k, &p, err, sizeof(err));
	ok(!ret && p.failure_domain == UINT32_MAX, "and parsed back");
	free(json);
	k = kv(PFX "5", mval(5, "10.0.0.5", 7070, 8192, 8192, 9), 30);
	ret = hbm_member_parse(PFX, &k, &p, err, sizeof(err));
	ok(!ret && !p.failure_domain,
	   "a value without \"failure_domain\" (a daemon before them): failure domain 0");
	k = kv(PFX "5", "{\"id\":5,\"addr\":\"10.0.0.5\",\"port\":7070,\"segment_bytes\":8192,"
	       "\"capacity\":8192,\"incarnation\":9,\"failure_domain\":0}", 30);
	ret = hbm_member_parse(PFX, &k, &p, err, sizeof(err));
	ok(!ret && !p.failure_domain, "\"failure_domain\": 0 is none");

#define FDVAL(f) "{\"id\":3,\"addr\":\"10.0.0.3\",\"port\":7070,\"segment_bytes\":8192," \
		 "\"capacity\":8192,\"incarnation\":1,\"failure_domain\":" f "}"
	bad(PFX "3", FDVAL("4294967296"), PFX "3: \"failure_domain\"",
	    "a failure domain over 2^32 - 1");
	bad(PFX "3", FDVAL("-1"), "\"failure_domain\" is negative", "a negative failure domain");
	bad(PFX "3", FDVAL("\"r1\""), "\"failure_domain\" is not an integer",
	    "a failure domain not a number");
	bad(PFX "3", FDVAL("1.5"), "\"failure_domain\" is not an integer",
	    "a failure domain not an integer");
#undef FDVAL

	/* a rejoin with a new failure domain: a change, HBM_MCH_FAILURE_DOMAIN alone */
	k = kv(PFX "5", mval(5, "10.0.0.5", 7070, 8192, 8192, 9), 30);
	hbm_members_build(PFX, &k, 1, &a);
	hbm_members_copy(&a, &b);
	m.failure_domain = 7;
	hbm_member_encode(&m, &json);
	e = (struct hbm_etcd_event){ .type = HBM_ETCD_EV_PUT, .kv = kv(PFX "5", json, 31) };
	ret = hbm_members_apply(&b, PFX, &e, err, sizeof(err));
	free(json);
	ev = NULL;
	ret = ret ? ret : hbm_members_diff(&a, &b, &ev, &n);
	ok(!ret && n == 1 && ev[0].type == HBM_MEMBER_CHANGE &&
	   ev[0].changed == HBM_MCH_FAILURE_DOMAIN && !ev[0].old.failure_domain &&
	   ev[0].new.failure_domain == 7,
	   "a member whose failure domain changed: a change of its failure domain only");
	free(ev);
	hbm_members_free(&a);
	hbm_members_free(&b);
}

static void test_topology(void)
{
	static const struct {
		struct hbm_location self, peer;
		enum hbm_relation rel;
		int link;
		const char *what;
	} t[] = {
		{ { "s", "r", "t" }, { "s", "r", "t" }, HBM_REL_TRAY, HBM_LINK_SCALEUP,
		  "same site, rack, tray" },
		{ { "", "", "t" }, { "", "", "t" }, HBM_REL_TRAY, HBM_LINK_SCALEUP,
		  "same tray, no rack nor site named by either" },
		{ { "s", "r", "t1" }, { "s", "r", "t2" }, HBM_REL_RACK, HBM_LINK_SCALEOUT,
		  "same rack, another tray" },
		{ { "s", "r1", "t" }, { "s", "r2", "t" }, HBM_REL_SITE, HBM_LINK_SCALEOUT,
		  "a tray name in another rack is another tray" },
		{ { "", "r1", "t" }, { "", "r2", "t" }, HBM_REL_OTHER, HBM_LINK_SCALEOUT,
		  "another rack, no site named: other, scale-out" },
		{ { "s1", "r", "t" }, { "s2", "r", "t" }, HBM_REL_OTHER, HBM_LINK_SCALEACROSS,
		  "another site: other, scale-across (rack and tray names are the site's)" },
		{ { "s", "r", "t" }, { "s", "", "t" }, HBM_REL_SITE, HBM_LINK_SCALEOUT,
		  "a peer that names no rack: same site only" },
		{ { "s", "r", "t" }, { "", "r", "t" }, HBM_REL_OTHER, HBM_LINK_SCALEOUT,
		  "a peer that names no site: not known to be close" },
		{ { "s", "r", "t" }, { "", "", "" }, HBM_REL_OTHER, HBM_LINK_SCALEOUT,
		  "a peer of no location (an old daemon): other, scale-out" },
		{ { "", "", "" }, { "", "", "" }, HBM_REL_OTHER, HBM_LINK_SCALEOUT,
		  "neither names a location: other, scale-out" },
		{ { "", "", "" }, { "s", "r", "t" }, HBM_REL_OTHER, HBM_LINK_SCALEOUT,
		  "this node of no location: other" },
		{ { "s", "", "" }, { "s", "", "" }, HBM_REL_SITE, HBM_LINK_SCALEOUT,
		  "same site, nothing else named" },
		{ { "", "r", "" }, { "", "r", "" }, HBM_REL_RACK, HBM_LINK_SCALEOUT,
		  "same rack, no site named" },
		{ { "S", "r", "t" }, { "s", "r", "t" }, HBM_REL_OTHER, HBM_LINK_SCALEACROSS,
		  "names are case-sensitive" },
	};
	const struct hbm_distances d = { { 20, 30, 40, 80 } };
	struct hbm_location x = loc("s", "r", "t");
	enum hbm_relation r;
	char buf[128];
	uint32_t dist;
	size_t i;
	int link;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		r = hbm_topology_place(&t[i].self, &t[i].peer, &d, &dist, &link);
		ok(r == t[i].rel && link == t[i].link && dist == d.d[t[i].rel] &&
		   hbm_topology_relation(&t[i].peer, &t[i].self) == r,
		   "%s: %s, distance %u, %s (and the same from the peer)", t[i].what,
		   hbm_relation_name(r), dist, hbm_link_type_name(link));
	}
	ok(!strcmp(hbm_relation_name(HBM_REL_TRAY), "tray") &&
	   !strcmp(hbm_relation_name(HBM_REL_OTHER), "other") &&
	   !strcmp(hbm_link_type_name(HBM_LINK_SCALEACROSS), "scaleacross") &&
	   !strcmp(hbm_link_type_name(0), "?"), "names of relations and link types");
	ok(!hbm_location_format(&x, buf, sizeof(buf)) && !strcmp(buf, "s/r/t"),
	   "a location formatted: %s", buf);
	x = loc("", "r", "");
	ok(!hbm_location_format(&x, buf, sizeof(buf)) && !strcmp(buf, "-/r/-"),
	   "levels not named: -: %s", buf);
	ok(hbm_location_format(&x, buf, 3) == -ENOSPC, "too small a buffer: -ENOSPC");
	ok(hbm_location_name_valid("") && hbm_location_name_valid("a-Z_0.9") &&
	   !hbm_location_name_valid("a b") && !hbm_location_name_valid("\xc3\xa9") &&
	   !hbm_location_name_valid("01234567890123456789012345678901"),
	   "names: \"\" (none) or 1..31 of A-Z a-z 0-9 . _ -");
}

int main(void)
{
	test_keys();
	test_roundtrip();
	test_bad_values();
	test_build();
	test_apply_diff();
	test_location_values();
	test_failure_domain_values();
	test_topology();
	test_scale();
	test_fuzz();
	return tap_finish();
}
