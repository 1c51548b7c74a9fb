// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of hbmpoold's etcd client (daemon/etcd.c, daemon/base64.c).
 *
 * First without etcd: base64, and the watch stream parser fed a real
 * stream whole, byte by byte and cut at every offset, then broken and
 * hostile input (bad JSON, wrong types, bad base64, deep nesting, etcd's
 * error and cancel messages); the put, delete and probe bodies and
 * replies, and the gateway's error answers.
 *
 * Then against a real etcd (/usr/bin/etcd, Debian's etcd-server) that the
 * test starts on 127.0.0.1 with free ports and a temporary data directory,
 * and kills at the end: every call (lease grant, keepalive, revoke; put,
 * get of a key and of a prefix, delete, create-if-absent), revisions in
 * every reply, a lease's keys going when it is revoked and when it
 * expires, failover from a dead endpoint, clear errors from dead endpoints,
 * a request timeout against a stopped etcd, and watches (history, a live
 * event, the idle timeout) and the same in a poll() loop; the requests of
 * etcd_async.c in a poll() loop: 200 at once (at most 8 running), every
 * kind, fail-over to a second endpoint, a stopped etcd timing out in
 * bounded time while every call returns at once, a deadline, cancellation
 * (nothing called back, nothing leaked: ASan).  Without /usr/bin/etcd (or $HBM_ETCD) the live
 * part is skipped: exit 4 (kselftest's skip) after the offline part passed.
 * TAP output.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base64.h"
#include "etcd.h"
#include "etcd_async.h"
#include "tap.h"

#include "etcd_rig.h"


/* ---- bodies and replies of put, delete, probe (pure) ---- */

static void test_bodies(void)
{
	char *b = NULL, err[256] = "";
	int64_t rev = 0, n = 0, count = 0, max_mod = 0;
	int ret;

	ret = hbm_etcd_body_put("/u/k", "v1", 2, 0x1234, &b);
	ok(!ret && b && strstr(b, "\"key\":\"L3Uvaw==\"") && strstr(b, "\"value\":\"djE=\"") &&
	   strstr(b, "\"lease\":\"4660\""), "put body: key, value, lease (%s)", b ? b : "");
	free(b);
	ret = hbm_etcd_body_put("/u/k", "", 0, 0, &b);
	ok(!ret && b && !strstr(b, "lease"), "put body without a lease has none (%s)", b ? b : "");
	free(b);
	ret = hbm_etcd_body_delete("/u/", true, &b);
	ok(!ret && b && strstr(b, "\"key\":\"L3Uv\"") && strstr(b, "\"range_end\":\"L3Uw\""),
	   "delete body of a prefix: range_end is the prefix + 1 (%s)", b ? b : "");
	free(b);
	ret = hbm_etcd_body_delete("/u/k", false, &b);
	ok(!ret && b && !strstr(b, "range_end"), "delete body of one key (%s)", b ? b : "");
	free(b);
	ret = hbm_etcd_body_probe("/u/", true, &b);
	ok(!ret && b && strstr(b, "\"limit\":\"1\"") && strstr(b, "DESCEND") &&
	   strstr(b, "\"sort_target\":\"MOD\"") && strstr(b, "\"keys_only\":true"),
	   "probe body: limit 1, newest first, keys only (%s)", b ? b : "");
	free(b);

	ret = hbm_etcd_reply_put("{\"header\":{\"revision\":\"42\"}}", &rev, err, sizeof(err));
	ok(!ret && rev == 42, "put reply: revision 42");
	ret = hbm_etcd_reply_put("[1]", &rev, err, sizeof(err));
	ok(ret == -EPROTO && strstr(err, "not a JSON object"), "put reply not an object: %s", err);
	ret = hbm_etcd_reply_put("{}", &rev, err, sizeof(err));
	ok(ret == -EPROTO && strstr(err, "header"), "put reply without a header: %s", err);
	ret = hbm_etcd_reply_delete("{\"header\":{\"revision\":\"7\"},\"deleted\":\"3\"}", &n, &rev,
				    err, sizeof(err));
	ok(!ret && n == 3 && rev == 7, "delete reply: 3 deleted at 7");
	ret = hbm_etcd_reply_delete("{\"header\":{\"revision\":\"7\"}}", &n, &rev, err, sizeof(err));
	ok(!ret && n == 0, "delete reply without \"deleted\": 0 (proto3 leaves zeros out)");
	ret = hbm_etcd_reply_delete("{\"header\":{\"revision\":\"7\"},\"deleted\":true}", &n, &rev,
				    err, sizeof(err));
	ok(ret == -EPROTO && strstr(err, "deleted"), "delete reply, a bad count: %s", err);
	ret = hbm_etcd_reply_probe("{\"header\":{\"revision\":\"9\"},\"count\":\"5\",\"kvs\":[{\"key\":\"L3Uvaw==\",\"create_revision\":\"3\",\"mod_revision\":\"8\"}],\"more\":true}",
				   &count, &max_mod, &rev, err, sizeof(err));
	ok(!ret && count == 5 && max_mod == 8 && rev == 9, "probe reply: 5 keys, newest 8, at 9");
	ret = hbm_etcd_reply_probe("{\"header\":{\"revision\":\"9\"}}", &count, &max_mod, &rev, err,
				   sizeof(err));
	ok(!ret && count == 0 && max_mod == 0, "probe reply of nothing: 0 keys, revision 0");
	ret = hbm_etcd_reply_probe("{\"header\":{\"revision\":\"9\"},\"count\":\"1\",\"kvs\":[{\"key\":\"!!\",\"create_revision\":\"3\"}]}",
				   &count, &max_mod, &rev, err, sizeof(err));
	ok(ret == -EPROTO && strstr(err, "base64"), "probe reply with a bad key: %s", err);
	ret = hbm_etcd_reply_http_error(503, "{\"error\":\"etcdserver: request timed out\",\"code\":14,\"message\":\"etcdserver: request timed out\"}",
					err, sizeof(err));
	ok(ret == -EAGAIN && !strcmp(err, "HTTP 503: etcdserver: request timed out (gRPC code 14)"),
	   "an unavailable answer: -EAGAIN, \"%s\"", err);
	ret = hbm_etcd_reply_http_error(400, "{\"code\":3,\"message\":\"etcdserver: key is not provided\"}",
					err, sizeof(err));
	ok(ret == -EINVAL && strstr(err, "key is not provided"), "invalid argument: -EINVAL (%s)", err);
	ret = hbm_etcd_reply_http_error(502, "<html>bad gateway</html>", err, sizeof(err));
	ok(ret == -EIO && !strcmp(err, "HTTP 502: no message (gRPC code 0)"),
	   "an answer that is no JSON: -EIO, \"%s\"", err);
	ret = hbm_etcd_reply_http_error(500, NULL, err, sizeof(err));
	ok(ret == -EIO, "no body at all: -EIO");
}

/* ---- base64 ---- */

static void test_base64(void)
{
	static const struct {
		const char *plain, *enc;
	} v[] = {	/* RFC 4648 section 10 */
		{ "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" },
		{ "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" },
	};
	static const char *bad[] = { "Zg=", "Zg", "Z===", "=Zg=", "Zm9v!A==", "Zg==Zg==", "Zm=v" };
	unsigned char bin[256];
	char *s, *d;
	size_t i, n;
	int good = 1;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		s = hbm_b64_encode(v[i].plain, strlen(v[i].plain));
		ok(s && !strcmp(s, v[i].enc), "base64 \"%s\" -> \"%s\"", v[i].plain, v[i].enc);
		free(s);
		d = NULL;
		ok(!hbm_b64_decode(v[i].enc, &d, &n) && n == strlen(v[i].plain) &&
		   !memcmp(d, v[i].plain, n) && d[n] == '\0', "base64 \"%s\" decodes", v[i].enc);
		free(d);
	}
	for (i = 0; i < sizeof(bin); i++)
		bin[i] = i;
	for (i = 0; i <= sizeof(bin) && good; i++) {
		s = hbm_b64_encode(bin, i);
		good = s && !hbm_b64_decode(s, &d, &n) && n == i && !memcmp(d, bin, i);
		if (good)
			free(d);
		free(s);
	}
	ok(good, "every length 0..256 of every byte value round-trips");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		d = NULL;
		ok(hbm_b64_decode(bad[i], &d, &n) == -EINVAL && !d, "\"%s\" is not base64", bad[i]);
	}
}

/* ---- the watch parser ---- */

struct rec {
	char log[2048];		/* one line per message: what the callback saw */
	int stop_at;		/* return 7 from the stop_at-th message, 0 never */
	int calls;
};

static int rec_fn(const struct hbm_etcd_watch_msg *m, void *arg)
{
	struct rec *r = arg;
	size_t l = strlen(r->log), i;

	l += snprintf(r->log + l, sizeof(r->log) - l, "rev=%lld id=%lld%s%s", (long long)m->revision,
		      (long long)m->watch_id, m->created ? " created" : "",
		      m->canceled ? " canceled" : "");
	for (i = 0; i < m->n && l < sizeof(r->log); i++) {
		const struct hbm_etcd_event *e = &m->events[i];

		l += snprintf(r->log + l, sizeof(r->log) - l, " %s:%s=%s@%lld",
			      e->type == HBM_ETCD_EV_PUT ? "put" : "del", e->kv.key, e->kv.value,
			      (long long)e->kv.mod_revision);
	}
	if (l < sizeof(r->log) - 1)
		strcat(r->log, "\n");
	return ++r->calls == r->stop_at ? 7 : 0;
}

/* A stream as etcd 3.4's gateway sends it (keys /m/1, /m/2; values a, b). */
static const char stream[] =
	"{\"result\":{\"header\":{\"cluster_id\":\"1\",\"member_id\":\"2\",\"revision\":\"4\","
	"\"raft_term\":\"2\"},\"created\":true}}\n"
	"{\"result\":{\"header\":{\"revision\":\"6\"},\"events\":["
	"{\"kv\":{\"key\":\"L20vMQ==\",\"create_revision\":\"5\",\"mod_revision\":\"5\","
	"\"version\":\"1\",\"value\":\"YQ==\",\"lease\":\"77\"}},"
	"{\"kv\":{\"key\":\"L20vMg==\",\"create_revision\":\"6\",\"mod_revision\":\"6\","
	"\"version\":\"1\",\"value\":\"Yg==\"}}]}}\n"
	"{\"result\":{\"header\":{\"revision\":\"7\"},\"events\":[{\"type\":\"DELETE\","
	"\"kv\":{\"key\":\"L20vMQ==\",\"mod_revision\":\"7\"}}]}}\n";

static const char stream_log[] =
	"rev=4 id=0 created\n"
	"rev=6 id=0 put:/m/1=a@5 put:/m/2=b@6\n"
	"rev=7 id=0 del:/m/1=@7\n";

static int feed(const char *text, struct rec *r, char *err, size_t errlen)
{
	struct hbm_etcd_watch_parser p;
	int ret;

	if (hbm_etcd_watch_parser_init(&p))
		return -ENOMEM;
	ret = hbm_etcd_watch_feed(&p, text, strlen(text), rec_fn, r);
	snprintf(err, errlen, "%s", p.err);
	hbm_etcd_watch_parser_fini(&p);
	return ret;
}

/* text must be refused with ret and a message holding want. */
static void bad_stream(const char *text, int want_ret, const char *want, const char *what)
{
	struct rec r = { .log = "" };
	char err[256];
	int ret = feed(text, &r, err, sizeof(err));

	ok(ret == want_ret && strstr(err, want), "%s: %d \"%s\"", what, ret, err);
}

static void test_watch_parser(void)
{
	struct hbm_etcd_watch_parser p;
	struct rec r = { .log = "" };
	size_t n = strlen(stream), i, cut;
	char err[256], deep[20000];
	int ret, good;

	ret = feed(stream, &r, err, sizeof(err));
	ok(ret == 0 && !strcmp(r.log, stream_log), "a stream in one chunk: three messages, in order");

	memset(&r, 0, sizeof(r));
	hbm_etcd_watch_parser_init(&p);
	for (i = 0, ret = 0; i < n && !ret; i++)
		ret = hbm_etcd_watch_feed(&p, stream + i, 1, rec_fn, &r);
	hbm_etcd_watch_parser_fini(&p);
	ok(ret == 0 && !strcmp(r.log, stream_log), "the stream byte by byte: the same messages");

	for (cut = 1, good = 1; cut < n && good; cut++) {
		memset(&r, 0, sizeof(r));
		hbm_etcd_watch_parser_init(&p);
		ret = hbm_etcd_watch_feed(&p, stream, cut, rec_fn, &r);
		if (!ret)
			ret = hbm_etcd_watch_feed(&p, stream + cut, n - cut, rec_fn, &r);
		hbm_etcd_watch_parser_fini(&p);
		good = !ret && !strcmp(r.log, stream_log);
	}
	ok(good, "the stream cut in two at every offset: the same messages%s",
	   good ? "" : " (failed)");

	memset(&r, 0, sizeof(r));
	ret = feed("{\"result\":{\"header\":{\"revision\":\"3\"}}}{\"result\":{\"header\":"
		   "{\"revision\":\"4\"},\"watch_id\":\"2\"}}", &r, err, sizeof(err));
	ok(ret == 0 && !strcmp(r.log, "rev=3 id=0\nrev=4 id=2\n"),
	   "two messages without a newline between them");

	memset(&r, 0, sizeof(r));
	r.stop_at = 2;
	ret = feed(stream, &r, err, sizeof(err));
	ok(ret == 7 && r.calls == 2, "a callback's non-zero return stops the feed and is returned");

	memset(&r, 0, sizeof(r));
	ret = feed("{\"result\":{\"header\":{\"revision\":\"9\"},\"canceled\":true,"
		   "\"compact_revision\":\"5\",\"cancel_reason\":\"mvcc: required revision has been "
		   "compacted\"}}", &r, err, sizeof(err));
	ok(ret == -ECANCELED && !strcmp(r.log, "rev=9 id=0 canceled\n") &&
	   strstr(err, "compacted") && strstr(err, "compact revision 5"),
	   "a canceled watch: the callback sees it, then -ECANCELED (%s)", err);

	bad_stream("{\"error\":{\"grpc_code\":14,\"http_code\":503,\"message\":\"etcdserver: no "
		   "leader\",\"http_status\":\"Service Unavailable\"}}", -EAGAIN,
		   "etcd ended the watch: etcdserver: no leader (gRPC code 14)", "an error message");
	bad_stream("{\"result\": }", -EPROTO, "bad JSON in the watch stream", "bad JSON");
	bad_stream("[1, 2]", -EPROTO, "not a JSON object", "an array");
	bad_stream("\"x\"", -EPROTO, "not a JSON object", "a string");
	bad_stream("{}", -EPROTO, "no \"result\"", "an empty object");
	bad_stream("{\"result\":{}}", -EPROTO, "no \"header\"", "no header");
	bad_stream("{\"result\":{\"header\":{\"revision\":\"x\"}}}", -EPROTO,
		   "\"revision\" is not a 64-bit integer", "a revision that is not a number");
	bad_stream("{\"result\":{\"header\":{\"revision\":\"99999999999999999999\"}}}", -EPROTO,
		   "\"revision\" is not a 64-bit integer", "a revision over 2^63");
	bad_stream("{\"result\":{\"header\":{\"revision\":true}}}", -EPROTO,
		   "\"revision\" is not a 64-bit integer", "a boolean revision");
	bad_stream("{\"result\":{\"header\":{\"revision\":\"1\"},\"created\":\"yes\"}}", -EPROTO,
		   "\"created\" is not a boolean", "a string boolean");
	bad_stream("{\"result\":{\"header\":{\"revision\":\"1\"},\"events\":{}}}", -EPROTO,
		   "\"events\" is not an array", "events not an array");
	bad_stream("{\"result\":{\"header\":{\"revision\":\"1\"},\"events\":[3]}}", -EPROTO,
		   "an event is not an object", "an event that is a number");
	bad_stream("{\"result\":{\"header\":{\"revision\":\"1\"},\"events\":[{}]}}", -EPROTO,
		   "no \"kv\"", "an event without kv");
	bad_stream("{\"result\":{\"header\":{\"revision\":\"1\"},\"events\":[{\"type\":\"MOVE\","
		   "\"kv\":{\"key\":\"YQ==\"}}]}}", -EPROTO, "an event of unknown type",
		   "an unknown event type");
	bad_stream("{\"result\":{\"header\":{\"revision\":\"1\"},\"events\":[{\"kv\":"
		   "{\"key\":\"not base64!\"}}]}}", -EPROTO, "\"key\" is not base64", "a bad key");
	bad_stream("{\"result\":{\"header\":{\"revision\":\"1\"},\"events\":[{\"kv\":"
		   "{\"value\":\"YQ==\"}}]}}", -EPROTO, "no \"key\"", "a kv without a key");
	bad_stream("{\"result\":{\"header\":{\"revision\":\"1\"},\"events\":[{\"kv\":"
		   "{\"key\":\"YQ==\",\"value\":7}}]}}", -EPROTO, "\"value\" is not a string",
		   "a number value");
	bad_stream("{\"result\":{\"header\":{\"revision\":\"1\"},\"events\":[{\"kv\":"
		   "{\"key\":\"YQ==\",\"mod_revision\":\"2\"}}]}}", -EPROTO,
		   "a kv without a create_revision", "a put event without create_revision");

	for (i = 0; i < sizeof(deep) / 2; i++) {
		deep[i] = '[';
		deep[sizeof(deep) / 2 + i - 1] = ']';
	}
	deep[sizeof(deep) - 2] = '\0';
	deep[sizeof(deep) - 1] = '\0';
	bad_stream(deep, -EPROTO, "bad JSON in the watch stream", "10000 nested arrays");

	memset(&r, 0, sizeof(r));
	hbm_etcd_watch_parser_init(&p);
	ret = hbm_etcd_watch_feed(&p, "{]", 2, rec_fn, &r);
	ret = ret == -EPROTO ? hbm_etcd_watch_feed(&p, stream, n, rec_fn, &r) : 0;
	hbm_etcd_watch_parser_fini(&p);
	ok(ret == -EPROTO && r.calls == 0, "after bad data the parser refuses everything");
}

/* ---- a real etcd ---- */

static void test_kv(struct hbm_etcd *e)
{
	static const char bin[] = "a\0b\xff\n";
	struct hbm_etcd_kvs kvs, ex;
	int64_t lease, ttl, rev, r1, r2, n;
	bool created;
	int ret;

	ret = hbm_etcd_lease_grant(e, 30, &lease, &ttl, &rev);
	ok(!ret && lease > 0 && ttl == 30 && rev > 0, "lease grant: id %lld, ttl %lld, rev %lld",
	   (long long)lease, (long long)ttl, (long long)rev);

	ret = hbm_etcd_put(e, "/u/members/1", "{\"id\":1}", 8, lease, &r1);
	ok(!ret && r1 > rev, "put with the lease: rev %lld", (long long)r1);
	ret = hbm_etcd_get(e, "/u/members/1", false, &kvs, &rev);
	ok(!ret && kvs.n == 1 && !strcmp(kvs.kv[0].key, "/u/members/1") &&
	   kvs.kv[0].value_len == 8 && !strcmp(kvs.kv[0].value, "{\"id\":1}") &&
	   kvs.kv[0].mod_revision == r1 && kvs.kv[0].create_revision == r1 &&
	   kvs.kv[0].version == 1 && kvs.kv[0].lease == lease && rev == r1,
	   "get: the value, its revisions, version and lease; header rev %lld", (long long)rev);
	hbm_etcd_kvs_free(&kvs);

	ret = hbm_etcd_put(e, "/u/bin", bin, sizeof(bin), 0, &r2);
	ret = ret ? ret : hbm_etcd_get(e, "/u/bin", false, &kvs, NULL);
	ok(!ret && kvs.n == 1 && kvs.kv[0].value_len == sizeof(bin) &&
	   !memcmp(kvs.kv[0].value, bin, sizeof(bin)) && kvs.kv[0].lease == 0,
	   "a binary value (NUL, 0xff) round-trips, no lease");
	hbm_etcd_kvs_free(&kvs);

	ret = hbm_etcd_put(e, "/u/members/1", "{\"id\":1,\"v\":2}", 14, lease, &r2);
	ret = ret ? ret : hbm_etcd_get(e, "/u/members/1", false, &kvs, NULL);
	ok(!ret && kvs.n == 1 && kvs.kv[0].create_revision == r1 && kvs.kv[0].mod_revision == r2 &&
	   kvs.kv[0].version == 2, "a second put: mod_revision %lld, create_revision kept",
	   (long long)r2);
	hbm_etcd_kvs_free(&kvs);

	ret = hbm_etcd_get(e, "/u/absent", false, &kvs, &rev);
	ok(!ret && kvs.n == 0 && !kvs.kv && rev == r2, "get of an absent key: nothing, rev %lld",
	   (long long)rev);

	hbm_etcd_put(e, "/u/members/2", "2", 1, lease, NULL);
	hbm_etcd_put(e, "/u/members/10", "10", 2, 0, NULL);
	hbm_etcd_put(e, "/u/membersX", "x", 1, 0, NULL);
	ret = hbm_etcd_get(e, "/u/members/", true, &kvs, &rev);
	ok(!ret && kvs.n == 3 && !strcmp(kvs.kv[0].key, "/u/members/1") &&
	   !strcmp(kvs.kv[1].key, "/u/members/10") && !strcmp(kvs.kv[2].key, "/u/members/2") &&
	   !kvs.more, "prefix get: the three keys under /u/members/, sorted, not /u/membersX");
	hbm_etcd_kvs_free(&kvs);

	ret = hbm_etcd_create(e, "/u/leader", "1", 1, lease, &created, &ex, &r1);
	ok(!ret && created && ex.n == 0 && r1 > r2, "create of an absent key: created, rev %lld",
	   (long long)r1);
	ret = hbm_etcd_create(e, "/u/leader", "2", 1, 0, &created, &ex, &rev);
	ok(!ret && !created && ex.n == 1 && !strcmp(ex.kv[0].value, "1") &&
	   ex.kv[0].lease == lease && ex.kv[0].create_revision == r1 && rev == r1,
	   "create of a present key: not created, the holder's value and lease returned");
	hbm_etcd_kvs_free(&ex);
	ret = hbm_etcd_create(e, "/u/leader", "3", 1, 0, &created, NULL, NULL);
	ok(!ret && !created, "create without a place for the existing key");

	ret = hbm_etcd_lease_keepalive(e, lease, &ttl, &rev);
	ok(!ret && ttl == 30 && rev >= r1, "keepalive: ttl back to %lld", (long long)ttl);

	ret = hbm_etcd_delete(e, "/u/members/10", false, &n, &rev);
	ok(!ret && n == 1 && rev > r1, "delete one key: 1 deleted, rev %lld", (long long)rev);
	{
		int64_t count, max_mod, r4;

		ret = hbm_etcd_probe(e, "/u/members/", true, &count, &max_mod, &r4);
		ok(!ret && count == 2 && max_mod > 0 && max_mod < rev && r4 == rev,
		   "probe after a deletion: 2 keys, newest revision %lld < the deletion's %lld",
		   (long long)max_mod, (long long)rev);
		hbm_etcd_put(e, "/u/members/2", "two", 3, lease, &r4);
		ret = hbm_etcd_probe(e, "/u/members/", true, &count, &max_mod, NULL);
		ok(!ret && count == 2 && max_mod == r4,
		   "probe after a put: still 2 keys, newest revision that put's (%lld)",
		   (long long)max_mod);
		ret = hbm_etcd_probe(e, "/u/nothing/", true, &count, &max_mod, NULL);
		ok(!ret && count == 0 && max_mod == 0, "probe of an empty prefix: 0 keys, revision 0");
	}
	ret = hbm_etcd_delete(e, "/u/absent", false, &n, NULL);
	ok(!ret && n == 0, "delete of an absent key: 0 deleted");

	ret = hbm_etcd_lease_revoke(e, lease, &rev);
	ok(!ret && rev > 0, "revoke");
	ret = hbm_etcd_get(e, "/u/", true, &kvs, NULL);
	ok(!ret && kvs.n == 2 && !strcmp(kvs.kv[0].key, "/u/bin") &&
	   !strcmp(kvs.kv[1].key, "/u/membersX"),
	   "the revoked lease's keys are gone (members 1, 2, leader), the others stay");
	hbm_etcd_kvs_free(&kvs);
	ret = hbm_etcd_lease_keepalive(e, lease, &ttl, NULL);
	ok(ret == -ENOENT && strstr(hbm_etcd_error(e), "not found"),
	   "keepalive of a revoked lease: -ENOENT (%s)", hbm_etcd_error(e));
	ret = hbm_etcd_lease_revoke(e, lease, NULL);
	ok(ret == -ENOENT && strstr(hbm_etcd_error(e), "requested lease not found") &&
	   strstr(hbm_etcd_error(e), url), "revoke again: -ENOENT (%s)", hbm_etcd_error(e));

	ret = hbm_etcd_delete(e, "/u/", true, &n, NULL);
	ok(!ret && n == 2, "delete of a prefix: 2 deleted");

	ret = hbm_etcd_put(e, "", "x", 1, 0, NULL);
	ok(ret == -EINVAL && strstr(hbm_etcd_error(e), "key is not provided"),
	   "a put of an empty key: -EINVAL (%s)", hbm_etcd_error(e));
	ret = hbm_etcd_put(e, "/u/x", "x", 1, 12345, NULL);
	ok(ret == -ENOENT && strstr(hbm_etcd_error(e), "lease not found"),
	   "a put under an unknown lease: -ENOENT (%s)", hbm_etcd_error(e));
}

static void test_expiry(struct hbm_etcd *e)
{
	struct hbm_etcd_kvs kvs;
	int64_t lease, ttl;
	double t0;
	int ret;

	ret = hbm_etcd_lease_grant(e, 2, &lease, &ttl, NULL);
	ret = ret ? ret : hbm_etcd_put(e, "/x/members/5", "5", 1, lease, NULL);
	ok(!ret && ttl == 2, "a 2 s lease and a key under it");
	t0 = now();
	do {
		usleep(200000);
		ret = hbm_etcd_get(e, "/x/members/5", false, &kvs, NULL);
		if (ret || kvs.n == 0)
			break;
		hbm_etcd_kvs_free(&kvs);
	} while (now() - t0 < 6);
	ok(!ret && kvs.n == 0 && now() - t0 >= 1.5,
	   "the key is gone when the lease expires, after %.1f s", now() - t0);
	ret = hbm_etcd_lease_keepalive(e, lease, &ttl, NULL);
	ok(ret == -ENOENT, "keepalive of an expired lease: -ENOENT");
}

static void test_endpoints(void)
{
	const char *two[2] = { dead_url, url };
	const char *dead[2] = { dead_url, "http://127.0.0.1:1" };
	struct hbm_etcd_kvs kvs;
	struct hbm_etcd *e;
	int ret;

	e = client(two, 2, 1000);
	ret = e ? hbm_etcd_get(e, "/none", false, &kvs, NULL) : -ENOMEM;
	ok(!ret && !strcmp(hbm_etcd_endpoint(e), url),
	   "a dead first endpoint: the call fails over to the live one, which is kept");
	hbm_etcd_close(e);

	e = client(dead, 1, 1000);
	ret = e ? hbm_etcd_get(e, "/none", false, &kvs, NULL) : -ENOMEM;
	ok(ret == -ECONNREFUSED && strstr(hbm_etcd_error(e), dead_url),
	   "one dead endpoint: -ECONNREFUSED, named (%s)", e ? hbm_etcd_error(e) : "");
	hbm_etcd_close(e);

	e = client(dead, 2, 1000);
	ret = e ? hbm_etcd_put(e, "/none", "x", 1, 0, NULL) : -ENOMEM;
	ok(ret == -ECONNREFUSED && strstr(hbm_etcd_error(e), "all 2 etcd endpoints failed"),
	   "two dead endpoints: -ECONNREFUSED (%s)", e ? hbm_etcd_error(e) : "");
	hbm_etcd_close(e);
}

static void test_timeout(void)
{
	const char *eps[1] = { url };
	struct hbm_etcd_kvs kvs;
	struct hbm_etcd *e = client(eps, 1, 300);
	double t0;
	int ret;

	if (!e || etcd_sigstop()) {
		ok(0, "stop etcd");
		hbm_etcd_close(e);
		return;
	}
	t0 = now();
	ret = hbm_etcd_get(e, "/none", false, &kvs, NULL);
	t0 = now() - t0;
	kill(etcd_pid, SIGCONT);
	ok(ret == -ETIMEDOUT && t0 >= 0.25 && t0 < 1.5,
	   "a stopped etcd: -ETIMEDOUT after the 300 ms request timeout (%.2f s: %s)", t0,
	   hbm_etcd_error(e));
	/* etcd first works off what queued while it was stopped: a few tries */
	t0 = now();
	do {
		ret = hbm_etcd_get(e, "/none", false, &kvs, NULL);
	} while (ret == -ETIMEDOUT && now() - t0 < 5);
	ok(!ret, "etcd continued: the same client works again (%.2f s)", now() - t0);
	hbm_etcd_close(e);
}

struct wctx {
	struct hbm_etcd *other;		/* puts from inside the callback */
	int events, msgs, created;
	char log[512];
	int want;
};

static int wfn(const struct hbm_etcd_watch_msg *m, void *arg)
{
	struct wctx *w = arg;
	size_t i, l;

	w->msgs++;
	w->created += m->created;
	if (m->created && w->other)
		hbm_etcd_put(w->other, "/w/live", "L", 1, 0, NULL);
	for (i = 0; i < m->n; i++) {
		l = strlen(w->log);
		snprintf(w->log + l, sizeof(w->log) - l, "%s %s %lld;",
			 m->events[i].type == HBM_ETCD_EV_PUT ? "put" : "del", m->events[i].kv.key,
			 (long long)m->events[i].kv.mod_revision);
		w->events++;
	}
	return w->events >= w->want ? 1 : 0;
}

static void test_watch(struct hbm_etcd *e)
{
	struct wctx w = { .want = 3 };
	int64_t r1, r2, r3;
	char want[256];
	double t0;
	int ret;

	hbm_etcd_put(e, "/w/a", "1", 1, 0, &r1);
	hbm_etcd_put(e, "/w/b", "2", 1, 0, &r2);
	hbm_etcd_put(e, "/wx", "3", 1, 0, NULL);
	hbm_etcd_delete(e, "/w/a", false, NULL, &r3);
	ret = hbm_etcd_watch(e, "/w/", true, r1, 5, wfn, &w);
	snprintf(want, sizeof(want), "put /w/a %lld;put /w/b %lld;del /w/a %lld;", (long long)r1,
		 (long long)r2, (long long)r3);
	ok(ret == 1 && w.created == 1 && !strcmp(w.log, want),
	   "watch of a prefix from a past revision: created, then %s", want);

	memset(&w, 0, sizeof(w));
	w.want = 1;
	{
		const char *eps[1] = { url };

		w.other = client(eps, 1, 2000);
	}
	ret = hbm_etcd_watch(e, "/w/live", false, 0, 5, wfn, &w);
	ok(ret == 1 && w.events == 1 && strstr(w.log, "put /w/live"),
	   "watch from now: a put made after the watch was created arrives");
	hbm_etcd_close(w.other);

	memset(&w, 0, sizeof(w));
	w.want = 1;
	t0 = now();
	ret = hbm_etcd_watch(e, "/w/quiet", false, 0, 1, wfn, &w);
	t0 = now() - t0;
	ok(ret == -ETIMEDOUT && w.created == 1 && w.events == 0 && t0 >= 0.9 && t0 < 4,
	   "a quiet watch with a 1 s idle timeout: -ETIMEDOUT after %.1f s", t0);
}

struct actx {
	struct hbm_etcd *e;		/* puts once the watch is created (NULL: none) */
	int created, events;
	int stop_on;			/* 1: stop when created, 2: when an event came */
	char key[64];
};

static int afn(const struct hbm_etcd_watch_msg *m, void *arg)
{
	struct actx *a = arg;

	if (m->created) {
		a->created++;
		if (a->stop_on == 1)
			return 1;
		if (a->e)
			hbm_etcd_put(a->e, "/aw/x", "y", 1, 0, NULL);
	}
	if (m->n) {
		a->events += m->n;
		snprintf(a->key, sizeof(a->key), "%s", m->events[0].kv.key);
	}
	return a->stop_on == 2 && a->events ? 1 : 0;
}

/* A poll() loop, as the daemon's will be: until the watch ends or secs pass. */
static int aloop(struct hbm_etcd_awatch *w, double secs, int *iters)
{
	struct pollfd fds[8];
	double t0 = now();
	unsigned int n, i;
	long tmo;
	int ret = 0, r;

	*iters = 0;
	while (!ret && now() - t0 < secs) {
		n = hbm_etcd_awatch_fds(w, fds, 8);
		tmo = hbm_etcd_awatch_timeout(w);
		if (tmo < 0 || tmo > 100)
			tmo = 100;
		r = poll(fds, n, tmo);
		(*iters)++;
		if (r <= 0) {
			ret = hbm_etcd_awatch_event(w, -1, 0);
			continue;
		}
		for (i = 0; i < n && !ret; i++)
			if (fds[i].revents)
				ret = hbm_etcd_awatch_event(w, fds[i].fd, fds[i].revents);
	}
	return ret;
}

static void test_awatch(struct hbm_etcd *e)
{
	const char *two[2] = { dead_url, url }, *dead[1] = { dead_url };
	struct actx a = { .e = e, .stop_on = 2 };
	struct hbm_etcd_awatch *w;
	struct hbm_etcd *e2;
	int ret, iters;

	ret = hbm_etcd_awatch_start(e, "/aw/", true, 0, afn, &a, &w);
	ret = ret ? ret : aloop(w, 5, &iters);
	ok(ret == 1 && a.created == 1 && a.events == 1 && !strcmp(a.key, "/aw/x"),
	   "event-loop watch: created, then the put made from the callback (%d poll rounds)",
	   iters);
	hbm_etcd_awatch_stop(w);

	memset(&a, 0, sizeof(a));
	ret = hbm_etcd_awatch_start(e, "/aw/", true, 0, afn, &a, &w);
	ret = ret ? ret : aloop(w, 1, &iters);
	{
		struct pollfd f[8];

		ok(ret == 0 && a.created == 1 && a.events == 0 && hbm_etcd_awatch_fds(w, f, 8) == 1 &&
		   f[0].events == POLLIN,
		   "a quiet event-loop watch runs on (0 after 1 s, one connection to read), "
		   "and stops cleanly");
	}
	hbm_etcd_awatch_stop(w);

	e2 = client(two, 2, 1000);
	memset(&a, 0, sizeof(a));
	a.stop_on = 1;
	ret = e2 ? hbm_etcd_awatch_start(e2, "/aw/", true, 0, afn, &a, &w) : -ENOMEM;
	ret = ret ? ret : aloop(w, 5, &iters);
	ok(ret == 1 && a.created == 1 && !strcmp(hbm_etcd_endpoint(e2), url),
	   "event-loop watch: a dead first endpoint, the next one serves it");
	if (e2)
		hbm_etcd_awatch_stop(w);
	hbm_etcd_close(e2);

	e2 = client(dead, 1, 1000);
	memset(&a, 0, sizeof(a));
	ret = e2 ? hbm_etcd_awatch_start(e2, "/aw/", true, 0, afn, &a, &w) : -ENOMEM;
	ret = ret ? ret : aloop(w, 5, &iters);
	ok(ret == -ECONNREFUSED && a.created == 0 && strstr(hbm_etcd_awatch_error(w), dead_url),
	   "event-loop watch on a dead endpoint: -ECONNREFUSED (%s)",
	   e2 ? hbm_etcd_awatch_error(w) : "");
	if (e2)
		hbm_etcd_awatch_stop(w);
	hbm_etcd_close(e2);
}


/* ---- requests in a poll() loop (etcd_async.c) ---- */

struct rctx {
	int calls, fails, last_ret;
	int64_t max_rev;
	char err[700];
	struct hbm_etcd_kvs kvs;	/* a range's, kept */
	int64_t deleted, count, max_mod, ttl;
	bool created;
	int existing;
	double at;			/* now() of the last callback */
	/* from inside a callback */
	struct hbm_etcd_async *as;
	struct hbm_etcd_req *victim;
	int chained;
};

static void adone(void *arg, struct hbm_etcd_result *r)
{
	struct rctx *c = arg;

	c->calls++;
	c->at = now();
	c->last_ret = r->ret;
	if (r->ret) {
		c->fails++;
		snprintf(c->err, sizeof(c->err), "%s", r->err);
		return;
	}
	if (r->rev > c->max_rev)
		c->max_rev = r->rev;
	switch (r->op) {
	case HBM_ETCD_RANGE:
		hbm_etcd_kvs_free(&c->kvs);
		c->kvs = r->kvs;	/* taken */
		memset(&r->kvs, 0, sizeof(r->kvs));
		break;
	case HBM_ETCD_DELETE:
		c->deleted = r->deleted;
		break;
	case HBM_ETCD_PROBE:
		c->count = r->count;
		c->max_mod = r->max_mod;
		break;
	case HBM_ETCD_CREATE:
		c->created = r->created;
		c->existing = (int)r->kvs.n;	/* freed after the callback */
		break;
	case HBM_ETCD_KEEPALIVE:
		c->ttl = r->ttl;
		break;
	default:
		break;
	}
}

/*
 * Run the loop until nothing is pending or secs pass.  The longest call
 * of hbm_etcd_async_event() in *slowest, the most descriptors in *maxfds.
 */
static void arun(struct hbm_etcd_async *as, double secs, double *slowest, unsigned int *maxfds)
{
	double t0 = now(), t;
	struct pollfd fds[HBM_ETCD_ASYNC_MAX_FDS + 4];
	unsigned int n, i;
	uint64_t d;
	int tmo, r;
	struct timespec ts;

	while (hbm_etcd_async_pending(as) && now() - t0 < secs) {
		n = hbm_etcd_async_fds(as, fds, HBM_ETCD_ASYNC_MAX_FDS + 4);
		if (maxfds && n > *maxfds)
			*maxfds = n;
		d = hbm_etcd_async_deadline(as);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (d == UINT64_MAX)
			tmo = 100;
		else if (d <= (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000)
			tmo = 0;
		else
			tmo = (int)(d - ((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000));
		if (tmo > 100)
			tmo = 100;
		r = poll(fds, n, tmo);
		t = now();
		if (r > 0) {
			for (i = 0; i < n; i++)
				if (fds[i].revents && hbm_etcd_async_owns(as, fds[i].fd))
					hbm_etcd_async_event(as, fds[i].fd, fds[i].revents);
		}
		hbm_etcd_async_event(as, -1, 0);
		if (slowest && now() - t > *slowest)
			*slowest = now() - t;
	}
}

static void test_async(struct hbm_etcd *e)
{
	struct hbm_etcd_async *as = NULL;
	struct rctx c = { 0 };
	unsigned int maxfds = 0;
	int64_t lease = 0, ttl, newest = 0;
	double slowest = 0, t0;
	char key[32], val[32];
	int i, ret = 0, bad = 0;

	if (hbm_etcd_async_open(e, &as)) {
		ok(0, "an async client");
		return;
	}
	t0 = now();
	for (i = 0; i < 200 && !ret; i++) {
		snprintf(key, sizeof(key), "/as/k%03d", i);
		snprintf(val, sizeof(val), "v%d", i);
		ret = hbm_etcd_async_put(as, key, val, strlen(val), 0, adone, &c, NULL);
	}
	ok(!ret && hbm_etcd_async_pending(as) == 200 && c.calls == 0,
	   "200 puts started at once, none called back from the start");
	arun(as, 20, &slowest, &maxfds);
	ok(c.calls == 200 && c.fails == 0 && c.max_rev > 0,
	   "200 concurrent puts completed in %.2f s (%d calls, %d failed%s%s)", now() - t0,
	   c.calls, c.fails, c.fails ? ": " : "", c.fails ? c.err : "");
	ok(maxfds > 0 && maxfds <= HBM_ETCD_ASYNC_MAX_XFERS,
	   "at most %d connections at once (%u descriptors at most)", HBM_ETCD_ASYNC_MAX_XFERS,
	   maxfds);

	memset(&c, 0, sizeof(c));
	ret = hbm_etcd_async_range(as, "/as/", true, adone, &c, NULL);
	ret = ret ? ret : hbm_etcd_async_probe(as, "/as/", true, adone, &c, NULL);
	arun(as, 5, NULL, NULL);
	for (i = 0; i < (int)c.kvs.n; i++) {
		snprintf(key, sizeof(key), "/as/k%03d", i);
		snprintf(val, sizeof(val), "v%d", i);
		bad += strcmp(c.kvs.kv[i].key, key) || strcmp(c.kvs.kv[i].value, val);
	}
	for (i = 0; i < (int)c.kvs.n; i++)
		if (c.kvs.kv[i].mod_revision > newest)
			newest = c.kvs.kv[i].mod_revision;
	ok(!ret && c.calls == 2 && !c.fails && c.kvs.n == 200 && !bad && c.count == 200 &&
	   c.max_mod == newest,
	   "range: every key and value; probe: 200 keys, the newest at %lld",
	   (long long)c.max_mod);
	hbm_etcd_kvs_free(&c.kvs);

	memset(&c, 0, sizeof(c));
	ret = hbm_etcd_async_create(as, "/as/leader", "1", 1, 0, adone, &c, NULL);
	arun(as, 5, NULL, NULL);
	ok(!ret && c.calls == 1 && c.created, "create of an absent key: created");
	memset(&c, 0, sizeof(c));
	ret = hbm_etcd_async_create(as, "/as/leader", "2", 1, 0, adone, &c, NULL);
	arun(as, 5, NULL, NULL);
	ok(!ret && c.calls == 1 && !c.created && c.existing == 1,
	   "create of an existing key: not created, the key returned");
	memset(&c, 0, sizeof(c));
	ret = hbm_etcd_async_delete(as, "/as/", true, adone, &c, NULL);
	arun(as, 5, NULL, NULL);
	ok(!ret && c.calls == 1 && c.deleted == 201, "delete of the prefix: 201 deleted");

	ret = hbm_etcd_lease_grant(e, 30, &lease, &ttl, NULL);
	memset(&c, 0, sizeof(c));
	ret = ret ? ret : hbm_etcd_async_keepalive(as, lease, HBM_ETCD_URGENT, 0, adone, &c, NULL);
	arun(as, 5, NULL, NULL);
	ok(!ret && c.calls == 1 && !c.fails && c.ttl == 30, "keepalive: ttl %lld",
	   (long long)c.ttl);
	hbm_etcd_lease_revoke(e, lease, NULL);
	memset(&c, 0, sizeof(c));
	ret = hbm_etcd_async_keepalive(as, lease, 0, 0, adone, &c, NULL);
	arun(as, 5, NULL, NULL);
	ok(!ret && c.calls == 1 && c.last_ret == -ENOENT && strstr(c.err, "not found"),
	   "keepalive of a revoked lease: -ENOENT (%s)", c.err);
	memset(&c, 0, sizeof(c));
	ret = hbm_etcd_async_put(as, "", "x", 1, 0, adone, &c, NULL);
	arun(as, 5, NULL, NULL);
	ok(!ret && c.calls == 1 && c.last_ret == -EINVAL && strstr(c.err, "key is not provided") &&
	   strstr(c.err, "/v3/kv/put"), "etcd's refusal: -EINVAL (%s)", c.err);
	ok(slowest < 0.1, "no call of the loop took long (slowest %.1f ms)", slowest * 1000);
	hbm_etcd_async_close(as);
}

static void test_async_endpoints(void)
{
	const char *two[2] = { dead_url, url };
	const char *dead[2] = { dead_url, "http://127.0.0.1:1" };
	struct hbm_etcd *e = client(two, 2, 1000);
	struct hbm_etcd_async *as = NULL;
	struct rctx c = { 0 };
	double t0 = now();
	int ret;

	ret = e ? hbm_etcd_async_open(e, &as) : -ENOMEM;
	ret = ret ? ret : hbm_etcd_async_put(as, "/as/fo", "1", 1, 0, adone, &c, NULL);
	if (!ret)
		arun(as, 5, NULL, NULL);
	ok(!ret && c.calls == 1 && !c.fails && !strcmp(hbm_etcd_endpoint(e), url) &&
	   now() - t0 < 1, "fail-over: the first endpoint refuses, the second answers (%.2f s)",
	   now() - t0);
	memset(&c, 0, sizeof(c));
	ret = ret ? ret : hbm_etcd_async_delete(as, "/as/fo", false, adone, &c, NULL);
	if (!ret)
		arun(as, 5, NULL, NULL);
	ok(!ret && c.calls == 1 && c.deleted == 1, "the next request starts on the one that answered");
	hbm_etcd_async_close(as);
	hbm_etcd_close(e);

	e = client(dead, 2, 1000);
	as = NULL;
	memset(&c, 0, sizeof(c));
	ret = e ? hbm_etcd_async_open(e, &as) : -ENOMEM;
	ret = ret ? ret : hbm_etcd_async_range(as, "/as/", true, adone, &c, NULL);
	if (!ret)
		arun(as, 5, NULL, NULL);
	ok(!ret && c.calls == 1 && c.last_ret == -ECONNREFUSED &&
	   strstr(c.err, "all 2 etcd endpoints failed"), "two dead endpoints: -ECONNREFUSED (%s)",
	   c.err);
	hbm_etcd_async_close(as);
	hbm_etcd_close(e);
}

static void test_async_stopped(void)
{
	const char *one[1] = { url }, *twice[2] = { url, url };
	struct hbm_etcd *e = client(one, 1, 300), *e2 = client(twice, 2, 300);
	struct hbm_etcd_async *as = NULL, *as2 = NULL;
	struct rctx c = { 0 }, c2 = { 0 }, cd = { 0 }, cl = { 0 };
	double t0, slowest = 0;
	struct timespec ts;
	uint64_t nowms;
	int ret;

	ret = e && e2 ? hbm_etcd_async_open(e, &as) : -ENOMEM;
	ret = ret ? ret : hbm_etcd_async_open(e2, &as2);
	/* a connection to etcd first, so that the stop hits a request, not a connect */
	ret = ret ? ret : hbm_etcd_async_range(as, "/none", false, adone, &c, NULL);
	if (!ret)
		arun(as, 5, NULL, NULL);
	if (ret || c.calls != 1 || etcd_sigstop()) {
		ok(0, "stop etcd");
		goto out;
	}
	hbm_etcd_kvs_free(&c.kvs);
	memset(&c, 0, sizeof(c));
	t0 = now();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	nowms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	ret = hbm_etcd_async_range(as, "/none", false, adone, &c, NULL);
	ret = ret ? ret : hbm_etcd_async_put(as2, "/none", "x", 1, 0, adone, &c2, NULL);
	ret = ret ? ret : hbm_etcd_async_keepalive(as, 1, HBM_ETCD_URGENT, nowms + 150, adone, &cd,
						   NULL);
	/* a client of its own: the 300 ms timeout, not the deadline */
	while (!ret && (hbm_etcd_async_pending(as) || hbm_etcd_async_pending(as2)) &&
	       now() - t0 < 5) {
		arun(as, 0.05, &slowest, NULL);
		arun(as2, 0.05, &slowest, NULL);
	}
	kill(etcd_pid, SIGCONT);
	ok(!ret && c.calls == 1 && c.last_ret == -ETIMEDOUT && c.at - t0 >= 0.25 &&
	   c.at - t0 < 1.0, "a stopped etcd: -ETIMEDOUT after the 300 ms request timeout (%.2f s: %s)",
	   c.at - t0, c.err);
	ok(cd.calls == 1 && cd.last_ret == -ETIMEDOUT && cd.at - t0 >= 0.1 && cd.at - t0 < 0.3,
	   "a keepalive with a deadline 150 ms ahead: -ETIMEDOUT at it (%.2f s: %s)", cd.at - t0,
	   cd.err);
	ok(c2.calls == 1 && c2.last_ret == -ETIMEDOUT && c2.at - t0 >= 0.5 && c2.at - t0 < 1.5 &&
	   strstr(c2.err, "all 2 etcd endpoints failed"),
	   "two endpoints, both stopped: each tried once, -ETIMEDOUT (%.2f s: %s)", c2.at - t0,
	   c2.err);
	ok(slowest < 0.1, "meanwhile no call of the loop took long (slowest %.1f ms)",
	   slowest * 1000);
	/* etcd first works off what queued while it was stopped: a few tries */
	t0 = now();
	do {
		hbm_etcd_kvs_free(&cl.kvs);
		memset(&cl, 0, sizeof(cl));
		ret = hbm_etcd_async_range(as, "/none", false, adone, &cl, NULL);
		if (!ret)
			arun(as, 5, NULL, NULL);
	} while (!ret && cl.last_ret == -ETIMEDOUT && now() - t0 < 5);
	ok(!ret && cl.calls == 1 && !cl.fails, "etcd continued: the same client works again (%.2f s)",
	   now() - t0);
	hbm_etcd_kvs_free(&cl.kvs);
	/* the put that timed out may have been applied once etcd went on */
	hbm_etcd_delete(e, "/none", false, NULL, NULL);
out:
	hbm_etcd_kvs_free(&c.kvs);
	hbm_etcd_async_close(as);
	hbm_etcd_async_close(as2);
	hbm_etcd_close(e);
	hbm_etcd_close(e2);
}

/* A callback that cancels another request and starts one. */
static void achain(void *arg, struct hbm_etcd_result *r)
{
	struct rctx *c = arg;

	adone(arg, r);
	hbm_etcd_async_cancel(c->as, c->victim);
	c->victim = NULL;
	if (!c->chained++)
		hbm_etcd_async_put(c->as, "/as/chained", "1", 1, 0, adone, c, NULL);
}

static void test_async_cancel(struct hbm_etcd *e)
{
	struct hbm_etcd_req *reqs[20];
	struct hbm_etcd_async *as = NULL;
	struct rctx c = { 0 }, v = { 0 };
	char key[32];
	int i, ret = 0;

	if (hbm_etcd_async_open(e, &as)) {
		ok(0, "an async client");
		return;
	}
	for (i = 0; i < 20 && !ret; i++) {
		snprintf(key, sizeof(key), "/as/c%d", i);
		ret = hbm_etcd_async_put(as, key, "x", 1, 0, adone, &c, &reqs[i]);
	}
	/* let some run: their connections open, their requests go out */
	hbm_etcd_async_event(as, -1, 0);
	for (i = 0; i < 20 && !ret; i += 2)
		hbm_etcd_async_cancel(as, reqs[i]);
	ok(!ret && hbm_etcd_async_pending(as) == 10, "10 of 20 requests cancelled one by one");
	hbm_etcd_async_cancel_all(as);
	ok(hbm_etcd_async_pending(as) == 0, "the others cancelled at once");
	usleep(300000);
	hbm_etcd_async_event(as, -1, 0);
	arun(as, 0.3, NULL, NULL);
	ok(c.calls == 0, "no callback after a cancel (%d)", c.calls);

	memset(&c, 0, sizeof(c));
	c.as = as;
	/* a deadline already past: it ends before the victim can have an answer */
	ret = hbm_etcd_async_keepalive(as, 1, 0, 1, achain, &c, NULL);
	ret = ret ? ret : hbm_etcd_async_put(as, "/as/victim", "1", 1, 0, adone, &v, &c.victim);
	if (!ret)
		arun(as, 5, NULL, NULL);
	ok(!ret && v.calls == 0 && c.calls == 2 && c.fails == 1 && hbm_etcd_async_pending(as) == 0,
	   "a callback cancels another request (never called back) and starts one (completed)");

	/* requests in flight against a stopped etcd, then the client closed */
	if (etcd_sigstop()) {
		ok(0, "stop etcd");
	} else {
		memset(&c, 0, sizeof(c));
		for (i = 0; i < 12; i++)
			hbm_etcd_async_range(as, "/as/", true, adone, &c, NULL);
		arun(as, 0.2, NULL, NULL);
		ok(c.calls == 0 && hbm_etcd_async_pending(as) == 12,
		   "12 requests hang on a stopped etcd (8 sent, 4 waiting)");
		kill(etcd_pid, SIGCONT);
	}
	hbm_etcd_async_close(as);	/* ASan: everything freed */
	ok(c.calls == 0, "closed with requests in flight: freed, none called back");
	hbm_etcd_delete(e, "/as/", true, NULL, NULL);
}

int main(void)
{
	int status;
	const char *eps[1] = { url };
	struct hbm_etcd *e;

	test_base64();
	test_watch_parser();
	test_bodies();

	if (etcd_rig_begin("the live tests", &status))
		return status;
	e = client(eps, 1, 2000);
	if (!e) {
		ok(0, "a client");
	} else {
		test_kv(e);
		test_watch(e);
		test_awatch(e);
		test_endpoints();
		test_timeout();
		test_async(e);
		test_async_endpoints();
		test_async_stopped();
		test_async_cancel(e);
		test_expiry(e);
		hbm_etcd_close(e);
	}
	etcd_stop();
	return tap_finish();
}
