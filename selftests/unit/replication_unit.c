// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of the replication reports (issue 10: "the leader is told"):
 * daemon/replication.c (pure) and daemon/replication_agent.c on the fake
 * kernel (fake_kernel.c), no etcd:
 *
 *  1. a summary from the kernel's sums (lost chunks are degraded too);
 *     its JSON, and the parse of it;
 *  2. bad values from a peer's key (not JSON, not an object, a field
 *     missing, of the wrong type, negative, too large, inconsistent
 *     counts, data after the object, bytes after a NUL): -EPROTO with the
 *     reason, never a crash; unknown fields ignored;
 *  3. the keys: PREFIX/DOMAIN/replication/ID, the id parsed strictly;
 *  4. the leader's lines: worse is a warning, better an info, "replication
 *     restored", a member gone with degraded chunks, nothing when nothing
 *     changed;
 *  5. the domain's view: reports sorted by member, replaced, deleted, a
 *     bad value drops the member's report, totals and the members with
 *     degraded chunks;
 *  6. the replicator on the fake kernel: a read at start; nothing to say,
 *     no put; a region-change event: a read (not sooner than a second after
 *     the last one), a put; no put while one is in flight, none when
 *     unchanged; at most one put a second; a failed put again a second
 *     later; zeros put once something was said (the key is kept); this
 *     node's key from a range (a restart) is corrected; a read that fails
 *     is said once; no stats_read, nothing due.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "tap.h"

#include "fake_kernel.h"
#include "replication.h"
#include "replication_agent.h"

static unsigned int log_lines, log_warnings;
static char last_log[512];

static void log_cb(void *arg, int level, const char *msg)
{
	(void)arg;
	log_lines++;
	log_warnings += level <= LOG_WARNING;
	snprintf(last_log, sizeof(last_log), "%s", msg);
	if (getenv("HBM_VERBOSE"))
		fprintf(stderr, "log %d: %s\n", level, msg);
}

static int parse_s(const char *v, struct hbm_repl *r, char *err, size_t errlen)
{
	uint64_t up;

	return hbm_repl_parse(v, strlen(v), r, &up, err, errlen);
}

static void test_summary(void)
{
	struct hbmd_kernel_stats s = { .regions = 4, .lost_chunks = 1, .degraded_chunks = 3,
				       .replicated_regions = 2, .degraded_regions = 1 };
	struct hbm_repl r, p;
	char buf[256], err[256];
	uint64_t up = 0;
	int ret;

	hbm_repl_from_stats(&s, &r);
	ok(r.regions == 2 && r.degraded_regions == 1 && r.degraded == 3 && r.lost == 1,
	   "summary: 2 replicated regions, 3 chunks of 1 region degraded, 1 lost");
	s = (struct hbmd_kernel_stats){ .regions = 1, .lost_chunks = 2 };
	hbm_repl_from_stats(&s, &p);
	ok(p.regions == 0 && p.degraded == 2 && p.lost == 2 && p.degraded_regions == 1,
	   "a kernel that says only lost chunks: they are degraded too, in a region");
	ok(hbm_repl_degraded(&p) && !hbm_repl_zero(&p), "lost chunks: degraded, not zero");
	s = (struct hbmd_kernel_stats){ .regions = 3 };
	hbm_repl_from_stats(&s, &p);
	ok(hbm_repl_zero(&p) && !hbm_repl_degraded(&p), "unreplicated regions, all good: zero");

	ok(!hbm_repl_encode(&r, 1764100000123ULL, buf, sizeof(buf)) &&
	   !strcmp(buf, "{\"regions\":2,\"degraded_regions\":1,\"degraded_chunks\":3,"
			"\"lost_chunks\":1,\"updated\":1764100000123}"),
	   "JSON: %s", buf);
	ok(hbm_repl_encode(&r, 1, buf, 20) == -ENOSPC, "JSON into a small buffer: -ENOSPC");
	hbm_repl_encode(&r, 1764100000123ULL, buf, sizeof(buf));
	memset(&p, 0xff, sizeof(p));
	ret = hbm_repl_parse(buf, strlen(buf), &p, &up, err, sizeof(err));
	ok(!ret && hbm_repl_equal(&p, &r) && up == 1764100000123ULL,
	   "parsed back: the same summary, updated %llu", (unsigned long long)up);
	ok(!parse_s("{\"regions\":0,\"degraded_regions\":0,\"degraded_chunks\":0,\"lost_chunks\":0,"
		    "\"updated\":5,\"later\":{\"x\":[1]}}", &p, err, sizeof(err)) && hbm_repl_zero(&p),
	   "an unknown field is ignored (a later version's)");
	ok(!parse_s("  {\"regions\":1,\"degraded_regions\":1,\"degraded_chunks\":1,"
		    "\"lost_chunks\":1,\"updated\":0}\n", &p, err, sizeof(err)) && p.lost == 1,
	   "white space around the object");
}

static void test_bad(void)
{
	static const struct {
		const char *v;
		const char *why;
	} bad[] = {
		{ "", "an empty value" },
		{ "null", "not a JSON object" },
		{ "[1,2]", "not a JSON object" },
		{ "42", "not a JSON object" },
		{ "{", "not JSON" },
		{ "{}", "no \"regions\"" },
		{ "{\"regions\":\"1\",\"degraded_regions\":0,\"degraded_chunks\":0,\"lost_chunks\":0,\"updated\":1}",
		  "\"regions\" is not an integer" },
		{ "{\"regions\":1.5,\"degraded_regions\":0,\"degraded_chunks\":0,\"lost_chunks\":0,\"updated\":1}",
		  "\"regions\" is not an integer" },
		{ "{\"regions\":1,\"degraded_regions\":0,\"degraded_chunks\":-3,\"lost_chunks\":0,\"updated\":1}",
		  "\"degraded_chunks\" is negative" },
		{ "{\"regions\":1,\"degraded_regions\":0,\"degraded_chunks\":0,\"lost_chunks\":18446744073709551616,\"updated\":1}",
		  "\"lost_chunks\" is too large" },
		{ "{\"regions\":1,\"degraded_regions\":0,\"degraded_chunks\":0,\"lost_chunks\":0}",
		  "no \"updated\"" },
		{ "{\"regions\":1,\"degraded_regions\":1,\"degraded_chunks\":1,\"lost_chunks\":2,\"updated\":1}",
		  "\"lost_chunks\" 2 > \"degraded_chunks\" 1" },
		{ "{\"regions\":1,\"degraded_regions\":2,\"degraded_chunks\":1,\"lost_chunks\":0,\"updated\":1}",
		  "\"degraded_regions\" 2 does not fit 1" },
		{ "{\"regions\":1,\"degraded_regions\":0,\"degraded_chunks\":4,\"lost_chunks\":0,\"updated\":1}",
		  "\"degraded_regions\" 0 does not fit 4" },
		{ "{\"regions\":1,\"degraded_regions\":0,\"degraded_chunks\":0,\"lost_chunks\":0,\"updated\":1} x",
		  "data after the JSON object" },
		{ "{\"regions\":true,\"degraded_regions\":0,\"degraded_chunks\":0,\"lost_chunks\":0,\"updated\":1}",
		  "\"regions\" is not an integer" },
	};
	static const char nul[] = "{\"regions\":0,\"degraded_regions\":0,\"degraded_chunks\":0,"
				  "\"lost_chunks\":0,\"updated\":1}\0{\"x\":1}";
	struct hbm_repl r = { .regions = 77 };
	char err[256];
	uint64_t up;
	size_t i;
	bool all = true;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int ret;

		err[0] = '\0';
		ret = parse_s(bad[i].v, &r, err, sizeof(err));
		if (ret != -EPROTO || !strstr(err, bad[i].why) || r.regions != 77) {
			all = false;
			ok(0, "bad value %s: %d, \"%s\" (wanted \"%s\")", bad[i].v, ret, err,
			   bad[i].why);
		}
	}
	ok(all, "%zu bad values from a peer: -EPROTO with the reason, the summary untouched",
	   sizeof(bad) / sizeof(bad[0]));
	ok(hbm_repl_parse(nul, sizeof(nul) - 1, &r, &up, err, sizeof(err)) == -EPROTO,
	   "bytes after a NUL: -EPROTO (%s)", err);
	ok(hbm_repl_parse(NULL, 0, &r, &up, err, sizeof(err)) == -EPROTO, "no bytes: -EPROTO (%s)",
	   err);
}

static void test_keys(void)
{
	char buf[128], small[20];
	uint32_t id = 99;

	ok(!hbm_repl_prefix(buf, sizeof(buf), "/hbmpool", "d1") &&
	   !strcmp(buf, "/hbmpool/d1/replication/"), "prefix %s", buf);
	ok(!hbm_repl_key(buf, sizeof(buf), "/hbmpool", "d1", 12) &&
	   !strcmp(buf, "/hbmpool/d1/replication/12"), "key %s", buf);
	ok(hbm_repl_key(buf, sizeof(buf), "/hbmpool", "d1", 1024) == -EINVAL,
	   "key of node 1024: -EINVAL");
	ok(hbm_repl_prefix(small, sizeof(small), "/hbmpool", "d1") == -ENAMETOOLONG,
	   "prefix too long for the buffer: -ENAMETOOLONG");
	ok(!hbm_repl_key_id("/p/d/replication/", "/p/d/replication/1023", &id) && id == 1023,
	   "key id 1023");
	ok(hbm_repl_key_id("/p/d/replication/", "/p/d/replication/1024", &id) == -EPROTO &&
	   hbm_repl_key_id("/p/d/replication/", "/p/d/replication/07", &id) == -EPROTO &&
	   hbm_repl_key_id("/p/d/replication/", "/p/d/replication/", &id) == -EPROTO &&
	   hbm_repl_key_id("/p/d/replication/", "/p/d/replication/3/x", &id) == -EPROTO &&
	   hbm_repl_key_id("/p/d/replication/", "/p/d/drains/3", &id) == -EPROTO,
	   "key ids refused: 1024, 07, none, 3/x, another prefix");
}

static void test_change(void)
{
	struct hbm_repl none = { .regions = 1 }, d3 = { .regions = 1, .degraded_regions = 1,
							 .degraded = 3 },
			d2 = { .regions = 1, .degraded_regions = 1, .degraded = 2 },
			l1 = { .regions = 1, .degraded_regions = 1, .degraded = 2, .lost = 1 },
			more = { .regions = 2 };
	char msg[256], text[128];

	hbm_repl_text(&d3, text, sizeof(text));
	ok(!strcmp(text, "3 chunks of 1 region degraded, 0 lost"), "text: %s", text);
	hbm_repl_text(&(struct hbm_repl){ .degraded = 1, .degraded_regions = 1, .lost = 1 }, text,
		      sizeof(text));
	ok(!strcmp(text, "1 chunk of 1 region degraded, 1 lost"), "text: %s", text);
	hbm_repl_text(&none, text, sizeof(text));
	ok(!strcmp(text, "all copies good"), "text: %s", text);

	ok(hbm_repl_change(1, NULL, &d3, msg, sizeof(msg)) == LOG_WARNING &&
	   !strcmp(msg, "member 1: 3 chunks of 1 region degraded, 0 lost"),
	   "no report, then degraded: a warning \"%s\"", msg);
	ok(hbm_repl_change(1, &none, &d3, msg, sizeof(msg)) == LOG_WARNING,
	   "all good, then degraded: a warning");
	ok(hbm_repl_change(1, &d3, &d2, msg, sizeof(msg)) == LOG_INFO &&
	   !strcmp(msg, "member 1: 2 chunks of 1 region degraded, 0 lost"),
	   "fewer degraded (re-replication): an info \"%s\"", msg);
	ok(hbm_repl_change(1, &d2, &l1, msg, sizeof(msg)) == LOG_WARNING &&
	   !strcmp(msg, "member 1: 2 chunks of 1 region degraded, 1 lost"),
	   "a chunk lost: a warning \"%s\"", msg);
	ok(hbm_repl_change(7, &d2, &none, msg, sizeof(msg)) == LOG_INFO &&
	   !strcmp(msg, "member 7: replication restored"), "back to zero: \"%s\"", msg);
	ok(hbm_repl_change(7, &d2, NULL, msg, sizeof(msg)) == LOG_INFO &&
	   strstr(msg, "member 7: gone") && strstr(msg, "2 chunks of 1 region degraded"),
	   "a member gone with degraded chunks: \"%s\"", msg);
	ok(hbm_repl_change(7, &d2, &d2, msg, sizeof(msg)) < 0 &&
	   hbm_repl_change(7, &none, &more, msg, sizeof(msg)) < 0 &&
	   hbm_repl_change(7, NULL, &none, msg, sizeof(msg)) < 0 &&
	   hbm_repl_change(7, &none, NULL, msg, sizeof(msg)) < 0 &&
	   hbm_repl_change(7, NULL, NULL, msg, sizeof(msg)) < 0,
	   "nothing to say: the same, more regions all good, a first or last report of good copies");
}

static void set(struct hbm_repl_view *v, uint32_t m, const struct hbm_repl *r, int *bad)
{
	char buf[256], err[256];

	hbm_repl_encode(r, 1000 + m, buf, sizeof(buf));
	if (hbm_repl_view_set(v, m, buf, strlen(buf), err, sizeof(err))) {
		ok(0, "view: member %u: %s", m, err);
		(*bad)++;
	}
}

static void test_view(void)
{
	struct hbm_repl_view v;
	struct hbm_repl t, d3 = { .regions = 1, .degraded_regions = 1, .degraded = 3 },
			l1 = { .regions = 2, .degraded_regions = 1, .degraded = 1, .lost = 1 },
			good = { .regions = 1 };
	const struct hbm_repl_report *r;
	char err[256];
	int bad = 0;
	unsigned int n;

	hbm_repl_view_init(&v);
	ok(hbm_repl_view_total(&v, &t) == 0 && hbm_repl_zero(&t) && !hbm_repl_view_find(&v, 1),
	   "an empty view: zero, nobody");
	set(&v, 9, &good, &bad);
	set(&v, 1, &d3, &bad);
	set(&v, 4, &l1, &bad);
	ok(!bad && v.n == 3 && v.rep[0].member == 1 && v.rep[1].member == 4 &&
	   v.rep[2].member == 9, "3 reports, sorted by member");
	r = hbm_repl_view_find(&v, 4);
	ok(r && r->r.lost == 1 && r->updated == 1004, "member 4's report: 1 lost, its time");
	n = hbm_repl_view_total(&v, &t);
	ok(n == 2 && t.regions == 4 && t.degraded == 4 && t.lost == 1 && t.degraded_regions == 2,
	   "totals: 4 regions, 4 chunks of 2 regions degraded, 1 lost; 2 members degraded (%u)", n);
	set(&v, 1, &good, &bad);
	n = hbm_repl_view_total(&v, &t);
	ok(!bad && v.n == 3 && n == 1 && t.degraded == 1, "member 1 restored: replaced, 1 degraded");
	ok(hbm_repl_view_set(&v, 4, "{\"regions\":-1}", 14, err, sizeof(err)) == -EPROTO &&
	   !hbm_repl_view_find(&v, 4) && v.n == 2,
	   "a bad value from member 4: -EPROTO (%s), its report dropped", err);
	ok(hbm_repl_view_set(&v, 5, "garbage", 7, err, sizeof(err)) == -EPROTO && v.n == 2,
	   "a bad value from a member without a report: nothing added");
	ok(!hbm_repl_view_set(&v, 9, NULL, 0, err, sizeof(err)) && v.n == 1 &&
	   !hbm_repl_view_set(&v, 9, NULL, 0, err, sizeof(err)) && v.n == 1,
	   "member 9's key deleted (twice): its report gone");
	for (n = 0; n < 40; n++)
		set(&v, 1000 - n * 7, &d3, &bad);
	ok(!bad && v.n == 41 && v.rep[0].member == 1 && v.rep[40].member == 1000,
	   "41 reports (the array grows), sorted");
	hbm_repl_view_clear(&v);
	ok(v.n == 0 && !hbm_repl_view_find(&v, 1), "cleared");
	hbm_repl_view_free(&v);
}

static int failing_stats(void *ctx, struct hbmd_kernel_stats *s, char *err, size_t errlen)
{
	(void)ctx;
	(void)s;
	snprintf(err, errlen, "stats-get: Input/output error");
	return -EIO;
}

static void test_replicator(void)
{
	struct hbmd_kernel_stats deg = { .regions = 2, .replicated_regions = 1,
					 .degraded_regions = 1, .degraded_chunks = 3 },
				 deg2 = deg, good = { .regions = 2, .replicated_regions = 1 },
				 nothing = { 0 };
	static const struct hbmd_kernel_ops fail_ops = { .stats_read = failing_stats };
	static const struct hbmd_kernel_ops no_ops = { 0 };
	struct hbmd_replicator *r;
	struct fake_kernel fk;
	struct hbm_repl s;
	char val[256];
	uint64_t t;

	fk_init(&fk, 1, 1001, false);
	ok(!hbmd_replicator_new(fk_kernel(&fk), log_cb, NULL, &r), "a replicator");
	ok(hbmd_replicator_deadline(r) == 0 && !hbmd_replicator_summary(r, &s),
	   "a read due at start, nothing known yet");
	hbmd_replicator_run(r, 1000);
	ok(fk.stats_reads == 1 && hbmd_replicator_summary(r, &s) && hbm_repl_zero(&s) &&
	   !hbmd_replicator_publish_due(r, 1000, 5, val, sizeof(val)) &&
	   hbmd_replicator_deadline(r) == 1000 + HBMD_REPL_IDLE_MS && !log_lines,
	   "read at start: no replicated region, nothing lost: no put, nothing said, the next read in %d s",
	   HBMD_REPL_IDLE_MS / 1000);

	/* a region-change event: a read, not sooner than a second after the last */
	fk_region_change(&fk, 7, 3, 0, &deg);
	hbmd_replicator_poke(r, 1100);
	ok(hbmd_replicator_deadline(r) == 2000, "an event 100 ms after the read: the read at 2000 (%llu)",
	   (unsigned long long)hbmd_replicator_deadline(r));
	hbmd_replicator_run(r, 1500);
	ok(fk.stats_reads == 1, "not before");
	hbmd_replicator_run(r, 2000);
	ok(fk.stats_reads == 2 && hbmd_replicator_summary(r, &s) && s.degraded == 3 &&
	   log_warnings == 1 && strstr(last_log, "3 chunks of 1 region degraded, 0 lost"),
	   "read: 3 degraded chunks, a warning here (%s)", last_log);
	ok(hbmd_replicator_deadline(r) <= 2000, "a put due now");
	ok(hbmd_replicator_publish_due(r, 2000, 1764100000000ULL, val, sizeof(val)) &&
	   !strcmp(val, "{\"regions\":1,\"degraded_regions\":1,\"degraded_chunks\":3,"
			"\"lost_chunks\":0,\"updated\":1764100000000}"), "a put: %s", val);
	ok(!hbmd_replicator_publish_due(r, 2001, 1, val, sizeof(val)) &&
	   hbmd_replicator_deadline(r) == 2000 + HBMD_REPL_IDLE_MS,
	   "no second put while one is in flight; nothing due but the idle read");
	hbmd_replicator_publish_done(r, 0, 2010);

	/* unchanged: a read, no put */
	hbmd_replicator_poke(r, 3100);
	hbmd_replicator_run(r, 3100);
	ok(fk.stats_reads == 3 && !hbmd_replicator_publish_due(r, 3100, 1, val, sizeof(val)),
	   "an event, the same summary: read, no put");

	/* at most one put a second; a failure: again a second later */
	deg2.degraded_chunks = 2;
	fk_region_change(&fk, 7, 2, 0, &deg2);
	hbmd_replicator_poke(r, 4100);
	hbmd_replicator_run(r, 4100);
	ok(hbmd_replicator_publish_due(r, 4100, 1, val, sizeof(val)) &&
	   strstr(val, "\"degraded_chunks\":2"), "2 degraded: a put (%s)", val);
	hbmd_replicator_publish_done(r, -EIO, 4150);
	ok(!hbmd_replicator_publish_due(r, 4500, 1, val, sizeof(val)) &&
	   hbmd_replicator_deadline(r) == 5150, "the put failed: again at 5150 (%llu)",
	   (unsigned long long)hbmd_replicator_deadline(r));
	ok(hbmd_replicator_publish_due(r, 5150, 1, val, sizeof(val)), "again at 5150");
	hbmd_replicator_publish_done(r, 0, 5160);
	deg2.degraded_chunks = 1;
	fk_region_change(&fk, 7, 1, 0, &deg2);
	hbmd_replicator_poke(r, 5200);
	hbmd_replicator_run(r, 5200);
	t = hbmd_replicator_deadline(r);
	ok(fk.stats_reads == 5 && !hbmd_replicator_publish_due(r, 5200, 1, val, sizeof(val)) &&
	   t == 6160, "changed 40 ms after a put: read, the put waits until 6160 (%llu)",
	   (unsigned long long)t);
	ok(hbmd_replicator_publish_due(r, 6160, 1, val, sizeof(val)) &&
	   strstr(val, "\"degraded_chunks\":1"), "then put (%s)", val);
	hbmd_replicator_publish_done(r, 0, 6160);

	/* restored: zeros put (the key stays); all gone: zeros again */
	fk_region_change(&fk, 7, 0, 0, &good);
	hbmd_replicator_poke(r, 7200);
	hbmd_replicator_run(r, 7200);
	ok(hbmd_replicator_publish_due(r, 7200, 1, val, sizeof(val)) &&
	   strstr(val, "\"regions\":1,\"degraded_regions\":0,\"degraded_chunks\":0"),
	   "restored: a put of zero degraded chunks (%s); said: %s", val, last_log);
	hbmd_replicator_publish_done(r, 0, 7200);
	fk.stats = nothing;
	hbmd_replicator_poke(r, 8200);
	hbmd_replicator_run(r, 8200);
	ok(hbmd_replicator_publish_due(r, 8200, 1, val, sizeof(val)) &&
	   strstr(val, "\"regions\":0,\"degraded_regions\":0,\"degraded_chunks\":0,\"lost_chunks\":0"),
	   "the region deleted: zeros put, the key kept (%s)", val);
	hbmd_replicator_publish_done(r, 0, 8200);
	hbmd_replicator_free(r);

	/* a restart on the same lease: this node's old key corrected */
	ok(!hbmd_replicator_new(fk_kernel(&fk), log_cb, NULL, &r), "a new replicator");
	hbmd_replicator_seen(r, &(struct hbm_repl){ .regions = 1, .degraded_regions = 1,
						    .degraded = 5 });
	hbmd_replicator_run(r, 100);
	ok(hbmd_replicator_publish_due(r, 100, 1, val, sizeof(val)) &&
	   strstr(val, "\"degraded_chunks\":0"),
	   "its key from before a restart says 5 degraded, the kernel none: zeros put (%s)", val);
	hbmd_replicator_publish_done(r, 0, 100);
	hbmd_replicator_seen(r, NULL);
	ok(!hbmd_replicator_publish_due(r, 1100, 1, val, sizeof(val)),
	   "its key deleted by someone, nothing to say (no region): no put");
	fk.stats = deg;
	hbmd_replicator_poke(r, 1100);
	hbmd_replicator_run(r, 1100);
	hbmd_replicator_publish_due(r, 1100, 1, val, sizeof(val));
	hbmd_replicator_publish_done(r, 0, 1100);
	hbmd_replicator_seen(r, NULL);
	ok(hbmd_replicator_publish_due(r, 2100, 1, val, sizeof(val)) &&
	   strstr(val, "\"degraded_chunks\":3"),
	   "its key deleted by someone while degraded: put again (%s)", val);
	hbmd_replicator_free(r);

	/* a kernel whose reads fail: said once */
	log_lines = 0;
	ok(!hbmd_replicator_new((struct hbmd_kernel){ .ops = &fail_ops }, log_cb, NULL, &r),
	   "a replicator on a failing kernel");
	hbmd_replicator_run(r, 0);
	t = hbmd_replicator_deadline(r);
	hbmd_replicator_run(r, t);
	ok(log_lines == 1 && strstr(last_log, "Input/output error") &&
	   t == HBMD_REPL_READ_GAP_MS && !hbmd_replicator_summary(r, &s) &&
	   !hbmd_replicator_publish_due(r, t, 1, val, sizeof(val)),
	   "a failed read: said once (%s), again a second later, nothing put", last_log);
	hbmd_replicator_free(r);

	ok(!hbmd_replicator_new((struct hbmd_kernel){ .ops = &no_ops }, log_cb, NULL, &r) &&
	   hbmd_replicator_deadline(r) == UINT64_MAX, "no stats_read: nothing ever due");
	hbmd_replicator_poke(r, 5);
	hbmd_replicator_run(r, 10);
	ok(hbmd_replicator_deadline(r) == UINT64_MAX, "an event changes nothing");
	hbmd_replicator_free(r);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_summary();
	test_bad();
	test_keys();
	test_change();
	test_view();
	test_replicator();
	return tap_finish();
}
