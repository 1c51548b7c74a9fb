// SPDX-License-Identifier: GPL-2.0
/*
 * Host-side unit test of tools/lib/hbmlib.c: the size/node-list parsers, the
 * node sets, the test pattern, the permutation, the percentile helpers and
 * the placement model the selftests check REGION_INFO against.  Needs no kernel module.
 * Prints TAP and "N passed, N failed"; exits 1 on any failure.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/hbmpool.h>

#include "hbmlib.h"
#include "tap.h"


static void test_parse_size(void)
{
	static const struct { const char *s; int ret; uint64_t v; } t[] = {
		{ "0", 0, 0 },
		{ "4096", 0, 4096 },
		{ "4k", 0, 4096 },
		{ "4K", 0, 4096 },
		{ "4KiB", 0, 4096 },
		{ "2M", 0, 2ULL << 20 },
		{ "2MiB", 0, 2ULL << 20 },
		{ "1G", 0, 1ULL << 30 },
		{ "3T", 0, 3ULL << 40 },
		{ "0x1000", 0, 4096 },
		{ "0x10k", 0, 16384 },
		{ "512B", 0, 512 },
		{ "18446744073709551615", 0, UINT64_MAX },
		{ "18446744073709551616", -ERANGE, 0 },
		{ "16777216T", -ERANGE, 0 },
		{ "", -EINVAL, 0 },
		{ "k", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 },
		{ "4 k", -EINVAL, 0 },
		{ "4kb", -EINVAL, 0 },
		{ "4Ki", -EINVAL, 0 },
		{ "4x", -EINVAL, 0 },
		{ "0x", -EINVAL, 0 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint64_t v = 12345;
		int ret = hbm_parse_size(t[i].s, &v);

		ok(ret == t[i].ret && (ret || v == t[i].v),
		   "parse_size(\"%s\") = %d, %llu (want %d, %llu)", t[i].s, ret,
		   (unsigned long long)v, t[i].ret, (unsigned long long)t[i].v);
	}
	ok(hbm_parse_size(NULL, NULL) == -EINVAL, "parse_size(NULL) = -EINVAL");
}

static void test_parse_u64(void)
{
	uint64_t v = 0;

	ok(hbm_parse_u64("123", &v) == 0 && v == 123, "parse_u64 decimal");
	ok(hbm_parse_u64("0xff", &v) == 0 && v == 255, "parse_u64 hex");
	ok(hbm_parse_u64("12k", &v) == -EINVAL, "parse_u64 rejects suffix");
	ok(hbm_parse_u64("", &v) == -EINVAL, "parse_u64 rejects empty");
	ok(hbm_parse_u64("99999999999999999999", &v) == -ERANGE, "parse_u64 overflow");
}

/* s holds exactly ids[0..n-1]. */
static int set_is(const struct hbm_nodeset *s, const unsigned int *ids, size_t n)
{
	struct hbm_nodeset want;

	return hbm_nodeset_equal(s, hbm_nodeset_of(&want, ids, n));
}

static void test_nodeset(void)
{
	struct hbm_nodeset s, t;
	char buf[64], tiny[6];
	int id, k, okw;

	ok(sizeof(s) == HBMPOOL_MAX_NODES / 8 && HBM_NODESET_BITS == 1024,
	   "a set holds ids 0..1023 in 16 words");
	hbm_nodeset_zero(&s);
	ok(hbm_nodeset_empty(&s) && hbm_nodeset_count(&s) == 0 &&
	   hbm_nodeset_first(&s) == -1 && hbm_nodeset_bits(&s) == 0,
	   "empty set: count 0, first -1, bits 0");
	ok(!strcmp(hbm_nodeset_format(&s, buf, sizeof(buf)), ""), "empty set formats as \"\"");

	hbm_nodeset_set(&s, 0);
	hbm_nodeset_set(&s, 63);
	hbm_nodeset_set(&s, 64);
	hbm_nodeset_set(&s, 100);
	hbm_nodeset_set(&s, 1023);
	ok(s.w[0] == (1ULL | 1ULL << 63) && s.w[1] == (1ULL | 1ULL << 36) &&
	   s.w[15] == 1ULL << 63, "node n is bit n %% 64 of word n / 64 (uapi layout)");
	ok(hbm_nodeset_count(&s) == 5, "count 5 (got %u)", hbm_nodeset_count(&s));
	ok(hbm_nodeset_test(&s, 64) && hbm_nodeset_test(&s, 1023) && !hbm_nodeset_test(&s, 65) &&
	   !hbm_nodeset_test(&s, 1024) && !hbm_nodeset_test(&s, ~0U),
	   "test: members yes, others and ids >= 1024 no");
	ok(hbm_nodeset_bits(&s) == 1024, "bits = highest id + 1 = 1024 (got %u)",
	   hbm_nodeset_bits(&s));
	okw = 1;
	k = 0;
	for (id = hbm_nodeset_first(&s); id >= 0; id = hbm_nodeset_next(&s, id), k++)
		okw &= id == (int[]){ 0, 63, 64, 100, 1023 }[k < 5 ? k : 0] && k < 5;
	ok(okw && k == 5, "first/next walk 0, 63, 64, 100, 1023 in order");
	ok(hbm_nodeset_next(&s, 1023) == -1 && hbm_nodeset_next(&s, 5000) == -1,
	   "next after the last is -1");
	ok(!strcmp(hbm_nodeset_format(&s, buf, sizeof(buf)), "0,63-64,100,1023"),
	   "format \"%s\"", buf);
	ok(!strcmp(hbm_nodeset_format(&s, tiny, sizeof(tiny)), "0"),
	   "format truncates at an entry (\"%s\")", tiny);

	hbm_nodeset_set(&s, 1024);
	hbm_nodeset_set(&s, 5000);
	ok(hbm_nodeset_count(&s) == 5, "setting ids >= 1024 does nothing");
	hbm_nodeset_clear(&s, 63);
	hbm_nodeset_clear(&s, 1023);
	hbm_nodeset_clear(&s, 4096);
	ok(set_is(&s, (const unsigned int[]){ 0, 64, 100 }, 3) && hbm_nodeset_bits(&s) == 101,
	   "clear; bits 101 (got %u)", hbm_nodeset_bits(&s));
	ok(hbm_nodeset_bits(HBM_NODES(0)) == 1 && hbm_nodeset_bits(HBM_NODES(64)) == 65 &&
	   hbm_nodeset_bits(HBM_NODES(63)) == 64, "bits at word boundaries: 1, 65, 64");
	ok(hbm_nodeset_equal(HBM_NODES(100, 0, 64, 100), &s), "HBM_NODES builds the set");
	hbm_nodeset_of(&t, NULL, 0);
	ok(hbm_nodeset_empty(&t), "hbm_nodeset_of with no ids is empty");
	ok(hbm_nodeset_first(HBM_NODES(700)) == 700 && hbm_nodeset_count(HBM_NODES(700)) == 1,
	   "single high id");
}

static void test_parse_nodelist(void)
{
	struct hbm_nodeset m, keep;
	char buf[64];

	ok(hbm_parse_nodelist("1", 1, 63, &m) == 0 && set_is(&m, (const unsigned int[]){ 1 }, 1),
	   "nodelist single");
	ok(hbm_parse_nodelist("1,3,5-7", 1, 63, &m) == 0 && m.w[0] == 0xea &&
	   hbm_nodeset_count(&m) == 5, "nodelist list+range = 0x%llx", (unsigned long long)m.w[0]);
	ok(hbm_parse_nodelist("63", 1, 63, &m) == 0 && m.w[0] == 1ULL << 63, "nodelist 63");
	ok(hbm_parse_nodelist("0", 1, 63, &m) == -EINVAL, "nodelist rejects id below min_id");
	ok(hbm_parse_nodelist("64", 1, 63, &m) == -EINVAL, "nodelist rejects id above max_id");
	ok(hbm_parse_nodelist("5-3", 1, 63, &m) == -EINVAL, "nodelist rejects descending range");
	ok(hbm_parse_nodelist("1,", 1, 63, &m) == -EINVAL, "nodelist rejects trailing comma");
	ok(hbm_parse_nodelist("", 1, 63, &m) == -EINVAL, "nodelist rejects empty");
	ok(hbm_parse_nodelist("a", 1, 63, &m) == -EINVAL, "nodelist rejects junk");
	ok(hbm_parse_nodelist("1;2", 1, 63, &m) == -EINVAL, "nodelist rejects bad separator");

	/* Ids above 63, up to 1023. */
	ok(hbm_parse_nodelist("64", 0, 1023, &m) == 0 && m.w[0] == 0 && m.w[1] == 1,
	   "nodelist 64 is bit 0 of word 1");
	ok(hbm_parse_nodelist("100,513,1023", 0, 1023, &m) == 0 &&
	   set_is(&m, (const unsigned int[]){ 100, 513, 1023 }, 3) &&
	   m.w[1] == 1ULL << 36 && m.w[8] == 2 && m.w[15] == 1ULL << 63,
	   "nodelist 100,513,1023");
	ok(hbm_parse_nodelist("0", 0, 1023, &m) == 0 && m.w[0] == 1, "nodelist 0 when min_id is 0");
	ok(hbm_parse_nodelist("60-70,1020-1023", 0, 1023, &m) == 0 &&
	   hbm_nodeset_count(&m) == 15 &&
	   !strcmp(hbm_nodeset_format(&m, buf, sizeof(buf)), "60-70,1020-1023"),
	   "nodelist ranges across a word boundary and up to 1023 (%s)", buf);
	ok(hbm_parse_nodelist("0-1023", 0, 1023, &m) == 0 && hbm_nodeset_count(&m) == 1024 &&
	   hbm_nodeset_bits(&m) == 1024, "nodelist 0-1023: all 1024");
	ok(hbm_parse_nodelist("1024", 0, 1023, &m) == -EINVAL, "nodelist rejects 1024");
	ok(hbm_parse_nodelist("1000-1024", 0, 1023, &m) == -EINVAL,
	   "nodelist rejects a range ending at 1024");
	ok(hbm_parse_nodelist("99999999999999999999999", 0, 1023, &m) == -EINVAL,
	   "nodelist rejects an overflowing id");
	ok(hbm_parse_nodelist("5", 0, 1024, &m) == -EINVAL, "nodelist rejects max_id 1024");
	hbm_parse_nodelist("7", 0, 1023, &keep);
	m = keep;
	ok(hbm_parse_nodelist("7,2000", 0, 1023, &m) == -EINVAL && hbm_nodeset_equal(&m, &keep),
	   "nodelist leaves the set alone on error");
}

static void test_pattern(void)
{
	enum { LEN = 3 * 4096 };
	static uint8_t a[LEN], b[LEN];
	uint64_t bad = 0;
	size_t same = 0;

	hbm_pattern_fill(a, LEN, 0, 42);
	ok(hbm_pattern_check(a, LEN, 0, 42, &bad) == 0, "pattern fill/check round trip");
	ok(hbm_pattern_check(a, LEN, 0, 43, NULL) > LEN / 2, "pattern depends on the seed");
	ok(hbm_pattern_check(a, 4096, 4096, 42, NULL) > 4096 / 2,
	   "pattern depends on the offset (page at wrong address is detected)");
	for (int i = 0; i < LEN; i++)
		same += a[i] == 0;
	ok(same < LEN / 64, "pattern is not mostly zero (%zu zero bytes)", same);

	/* Unaligned start and length agree with the aligned fill. */
	hbm_pattern_fill(b, 1001, 13, 42);
	ok(memcmp(a + 13, b, 1001) == 0, "pattern fill at unaligned offset matches");
	ok(hbm_pattern_check(a + 5, 4000, 5, 42, NULL) == 0, "pattern check at unaligned offset");

	a[4097] ^= 0x10;
	a[8000] ^= 0xff;
	ok(hbm_pattern_check(a, LEN, 0, 42, &bad) == 2 && bad == 4097,
	   "pattern check counts 2 flipped bytes, first at 4097 (got %llu)",
	   (unsigned long long)bad);
	ok(hbm_pattern_check(a, LEN, 1ULL << 40, 42, NULL) > LEN / 2,
	   "pattern at a high offset differs");

	/* Word values are distinct for distinct offsets (bijection spot check). */
	{
		int dup = 0;

		for (uint64_t o = 0; o < 4096 && !dup; o += 8)
			for (uint64_t p = o + 8; p < 4096; p += 8)
				if (hbm_pattern_word(o, 7) == hbm_pattern_word(p, 7))
					dup = 1;
		ok(!dup, "pattern words unique within a page");
	}
	ok(hbm_pattern_byte(9, 1) == (uint8_t)(hbm_pattern_word(8, 1) >> 8),
	   "pattern byte is little-endian byte of the word");
}

static void test_permutation(void)
{
	enum { N = 1000 };
	static uint32_t v[N], w[N];
	static uint8_t seen[N];
	int okp = 1, fixed = 0;

	hbm_permutation(v, N, 1);
	for (int i = 0; i < N; i++) {
		if (v[i] >= N || seen[v[i]])
			okp = 0;
		else
			seen[v[i]] = 1;
		fixed += v[i] == (uint32_t)i;
	}
	ok(okp, "permutation is a permutation");
	ok(fixed < N / 10, "permutation shuffles (%d fixed points)", fixed);
	hbm_permutation(w, N, 1);
	ok(memcmp(v, w, sizeof(v)) == 0, "permutation is deterministic per seed");
	hbm_permutation(w, N, 2);
	ok(memcmp(v, w, sizeof(v)) != 0, "permutation differs across seeds");
	hbm_permutation(w, 1, 3);
	ok(w[0] == 0, "permutation of 1");
	hbm_permutation(w, 0, 3);
	ok(1, "permutation of 0 does not crash");
}

static void test_percentiles(void)
{
	uint64_t v[100], one[1] = { 7 };
	__u64 hist[HBMPOOL_LAT_BUCKETS] = { 0 };

	for (int i = 0; i < 100; i++)
		v[i] = 100 - i;		/* 100..1 */
	hbm_sort_u64(v, 100);
	ok(v[0] == 1 && v[99] == 100, "sort ascending");
	ok(hbm_percentile_sorted(v, 100, 50) == 50, "p50 of 1..100 = 50");
	ok(hbm_percentile_sorted(v, 100, 99) == 99, "p99 of 1..100 = 99");
	ok(hbm_percentile_sorted(v, 100, 99.9) == 100, "p99.9 of 1..100 = 100");
	ok(hbm_percentile_sorted(v, 100, 0) == 1, "p0 = min");
	ok(hbm_percentile_sorted(v, 100, 100) == 100, "p100 = max");
	ok(hbm_percentile_sorted(one, 1, 50) == 7, "p50 of one sample");
	ok(hbm_percentile_sorted(v, 0, 50) == 0, "percentile of nothing = 0");

	ok(hbm_hist_percentile(hist, HBMPOOL_LAT_BUCKETS, 50) == -1, "empty histogram");
	hist[10] = 90;	/* [1024, 2048) */
	hist[20] = 9;
	hist[30] = 1;
	ok(hbm_hist_total(hist, HBMPOOL_LAT_BUCKETS) == 100, "histogram total");
	ok(hbm_hist_percentile(hist, HBMPOOL_LAT_BUCKETS, 50) == 10, "hist p50 bucket 10");
	ok(hbm_hist_percentile(hist, HBMPOOL_LAT_BUCKETS, 90) == 10, "hist p90 bucket 10");
	ok(hbm_hist_percentile(hist, HBMPOOL_LAT_BUCKETS, 91) == 20, "hist p91 bucket 20");
	ok(hbm_hist_percentile(hist, HBMPOOL_LAT_BUCKETS, 99) == 20, "hist p99 bucket 20");
	ok(hbm_hist_percentile(hist, HBMPOOL_LAT_BUCKETS, 99.9) == 30, "hist p99.9 bucket 30");
}

#define MIB (1ULL << 20)

static int place(uint32_t policy, const struct hbm_node_model *n, size_t nn,
		 const struct hbm_nodeset *set, uint32_t pref, uint64_t len,
		 uint64_t chunk, uint32_t *out)
{
	return hbm_place(policy, n, nn, set, 0, pref, len, chunk, out, 64);
}

static int same(const uint32_t *got, const uint32_t *want, int n)
{
	return !memcmp(got, want, (size_t)n * sizeof(*got));
}

static void test_place(void)
{
	/* ids 3, 5, 7; distances 30, 20, 20; 4, 2, 2 MiB free; self is 0. */
	const struct hbm_node_model n[] = {
		{ 7, 20, 2 * MIB, 1 }, { 3, 30, 4 * MIB, 1 }, { 5, 20, 2 * MIB, 1 },
	};
	const struct hbm_nodeset *all = HBM_NODES(3, 5, 7);
	uint32_t out[64];
	int r;

	r = place(HBMPOOL_POLICY_INTERLEAVE, n, 3, all, 0, 6 * MIB, MIB, out);
	ok(r == 6 && same(out, (uint32_t[]){ 3, 5, 7, 3, 5, 7 }, 6),
	   "interleave: round robin over ascending ids");
	r = place(HBMPOOL_POLICY_INTERLEAVE, n, 3, all, 0, 7 * MIB, MIB, out);
	ok(r == 7 && out[6] == 3, "interleave: 7 chunks, the 7th on the first node");
	r = place(HBMPOOL_POLICY_INTERLEAVE, n, 3, all, 0, 8 * MIB, MIB, out);
	ok(r == 8 && same(out, (uint32_t[]){ 3, 5, 7, 3, 5, 7, 3, 3 }, 8),
	   "interleave: past full nodes, the round robin goes on over those with room");
	r = place(HBMPOOL_POLICY_INTERLEAVE, n, 3, all, 0, 9 * MIB, MIB, out);
	ok(r == -ENOSPC, "interleave: ENOSPC when the set lacks the room");
	{
		const struct hbm_node_model w[] = {
			{ 3, 20, 8 * MIB, 1 }, { 5, 20, 8 * MIB, 3 }, { 7, 20, 8 * MIB, 0 },
		};

		r = place(HBMPOOL_POLICY_WEIGHTED_INTERLEAVE, w, 3, HBM_NODES(3, 5), 0,
			  8 * MIB, MIB, out);
		ok(r == 8 && same(out, (uint32_t[]){ 5, 3, 5, 5, 5, 3, 5, 5 }, 8),
		   "weighted interleave 1:3: smooth, 2 and 6 chunks");
		r = place(HBMPOOL_POLICY_WEIGHTED_INTERLEAVE, w, 3, HBM_NODES(3, 7), 0,
			  4 * MIB, MIB, out);
		ok(r == 4 && same(out, (uint32_t[]){ 3, 7, 3, 7 }, 4),
		   "weighted interleave: weight 0 counts as 1");
		r = place(HBMPOOL_POLICY_WEIGHTED_INTERLEAVE, w, 3, HBM_NODES(3, 5), 0,
			  12 * MIB, MIB, out);
		ok(r == 12 && same(out + 8, (uint32_t[]){ 5, 3, 5, 3 }, 4),
		   "weighted interleave: a full node drops out, the other takes the rest");
	}

	r = place(HBMPOOL_POLICY_BIND, n, 3, all, 0, 8 * MIB, MIB, out);
	ok(r == 8 && same(out, (uint32_t[]){ 5, 5, 7, 7, 3, 3, 3, 3 }, 8),
	   "bind: nearest first (distance, then id), spilling in order");
	r = place(HBMPOOL_POLICY_BIND, n, 3, all, 0, 9 * MIB, MIB, out);
	ok(r == -ENOSPC, "bind: ENOSPC when the set is full");
	r = place(HBMPOOL_POLICY_BIND, n, 3, HBM_NODES(3), 0, 3 * MIB, MIB, out);
	ok(r == 3 && same(out, (uint32_t[]){ 3, 3, 3 }, 3), "bind: single node");

	r = place(HBMPOOL_POLICY_PREFERRED, n, 3, all, 3, 6 * MIB, MIB, out);
	ok(r == 6 && same(out, (uint32_t[]){ 3, 3, 3, 3, 5, 5 }, 6),
	   "preferred: preferred node while it has room, then by distance");
	r = place(HBMPOOL_POLICY_PREFERRED, n, 3, all, 7, 5 * MIB, MIB, out);
	ok(r == 5 && same(out, (uint32_t[]){ 7, 7, 5, 5, 3 }, 5),
	   "preferred: preferred 7, then 5 (dist 20), then 3 (dist 30)");

	r = place(HBMPOOL_POLICY_BIND, n, 3, all, 0, 3 * MIB + 4096, MIB, out);
	ok(r == 4, "partial last chunk counts as a chunk");

	ok(place(HBMPOOL_POLICY_MAX + 1, n, 3, all, 0, MIB, MIB, out) == -EINVAL,
	   "bad policy");
	ok(place(HBMPOOL_POLICY_BIND, n, 3, &(struct hbm_nodeset){ { 0 } }, 0, MIB, MIB, out) ==
	   -EINVAL, "empty set");
	ok(place(HBMPOOL_POLICY_BIND, n, 3, NULL, 0, MIB, MIB, out) == -EINVAL, "no set");
	ok(place(HBMPOOL_POLICY_BIND, n, 3, HBM_NODES(0, 3, 5, 7), 0, MIB, MIB, out) == -EINVAL,
	   "self (0) in the set");
	ok(place(HBMPOOL_POLICY_BIND, n, 3, HBM_NODES(3, 5, 7, 9), 0, MIB, MIB, out) == -ENODEV,
	   "unknown node in the set");
	ok(place(HBMPOOL_POLICY_PREFERRED, n, 3, HBM_NODES(3), 5, MIB, MIB, out) == -EINVAL,
	   "preferred not in the set");
	ok(place(HBMPOOL_POLICY_BIND, n, 3, all, 5, MIB, MIB, out) == -EINVAL,
	   "preferred_node set with bind");
	ok(place(HBMPOOL_POLICY_BIND, n, 3, all, 0, 0, MIB, out) == -EINVAL, "zero length");
	r = hbm_place(HBMPOOL_POLICY_INTERLEAVE, n, 3, all, 0, 0, 6 * MIB, MIB, out, 2);
	ok(r == 6, "max_out smaller than the chunk count still returns the count");

	/* Self is whatever the caller says: 5 here, so 0 is an ordinary node. */
	{
		const struct hbm_node_model m[] = {
			{ 5, 10, 0, 1 }, { 0, 20, 2 * MIB, 1 }, { 7, 20, 2 * MIB, 1 },
		};

		r = hbm_place(HBMPOOL_POLICY_INTERLEAVE, m, 3, HBM_NODES(0, 7), 5, 0,
			      4 * MIB, MIB, out, 64);
		ok(r == 4 && same(out, (uint32_t[]){ 0, 7, 0, 7 }, 4),
		   "self 5: node 0 is a remote node like any other");
		ok(hbm_place(HBMPOOL_POLICY_BIND, m, 3, HBM_NODES(0, 5), 5, 0, MIB, MIB, out, 64) ==
		   -EINVAL, "self 5 in the set");
		ok(hbm_place(HBMPOOL_POLICY_PREFERRED, m, 3, HBM_NODES(0, 7), 5, 5, MIB, MIB,
			     out, 64) == -EINVAL, "preferred = self, not in the set");
	}
}

/* Sets above id 63: the model knows nothing of 64-bit masks any more. */
static void test_place_high_ids(void)
{
	static struct hbm_node_model all[HBMPOOL_MAX_NODES];
	static uint32_t out[4096];
	const struct hbm_node_model n[] = {
		{ 1023, 40, 4 * MIB, 1 }, { 513, 20, 2 * MIB, 1 }, { 100, 30, 2 * MIB, 1 }, { 64, 20, MIB, 1 },
	};
	struct hbm_nodeset set;
	int r, okw;

	r = hbm_place(HBMPOOL_POLICY_INTERLEAVE, n, 4, HBM_NODES(100, 513, 1023), 0, 0,
		      6 * MIB, MIB, out, 64);
	ok(r == 6 && same(out, (uint32_t[]){ 100, 513, 1023, 100, 513, 1023 }, 6),
	   "interleave over 100, 513, 1023: ascending ids, round robin");
	r = hbm_place(HBMPOOL_POLICY_BIND, n, 4, HBM_NODES(64, 100, 513, 1023), 0, 0,
		      8 * MIB, MIB, out, 64);
	ok(r == 8 && same(out, (uint32_t[]){ 64, 513, 513, 100, 100, 1023, 1023, 1023 }, 8),
	   "bind over 64, 100, 513, 1023: distance 20 (64, 513), then 30, then 40");
	r = hbm_place(HBMPOOL_POLICY_PREFERRED, n, 4, HBM_NODES(100, 513, 1023), 0, 1023,
		      6 * MIB, MIB, out, 64);
	ok(r == 6 && same(out, (uint32_t[]){ 1023, 1023, 1023, 1023, 513, 513 }, 6),
	   "preferred 1023, then 513 (distance 20)");
	ok(hbm_place(HBMPOOL_POLICY_BIND, n, 4, HBM_NODES(100, 1000), 0, 0, MIB, MIB, out, 64) ==
	   -ENODEV, "unknown high node 1000");
	ok(hbm_place(HBMPOOL_POLICY_BIND, n, 4, HBM_NODES(100, 513), 513, 0, MIB, MIB, out, 64) ==
	   -EINVAL, "self 513 in the set");
	ok(hbm_place(HBMPOOL_POLICY_PREFERRED, n, 4, HBM_NODES(100), 0, 1024, MIB, MIB, out, 64) ==
	   -EINVAL, "preferred 1024 is out of range");

	/* All 1024 ids but self (0): 1023 nodes, interleave wraps after 1023 chunks. */
	for (unsigned int i = 0; i < HBMPOOL_MAX_NODES; i++) {
		all[i].id = HBMPOOL_MAX_NODES - 1 - i;	/* any order */
		all[i].distance = 20 + i % 7;
		all[i].free_bytes = 4 * 4096;
	}
	hbm_parse_nodelist("1-1023", 0, 1023, &set);
	r = hbm_place(HBMPOOL_POLICY_INTERLEAVE, all, HBMPOOL_MAX_NODES, &set, 0, 0,
		      2048 * 4096ULL, 4096, out, 4096);
	okw = r == 2048;
	for (int i = 0; okw && i < 2048; i++)
		okw = out[i] == (uint32_t)(i % 1023 + 1);
	ok(okw, "interleave over 1023 nodes (1..1023): chunk i on node i %% 1023 + 1");
	r = hbm_place(HBMPOOL_POLICY_INTERLEAVE, all, HBMPOOL_MAX_NODES, &set, 0, 0,
		      (4 * 1023 + 1) * 4096ULL, 4096, out, 4096);
	ok(r == -ENOSPC, "interleave over 1023 nodes: one chunk too many for the set");
	r = hbm_place(HBMPOOL_POLICY_BIND, all, HBMPOOL_MAX_NODES, &set, 0, 0,
		      4 * 1023 * 4096ULL, 4096, out, 4096);
	okw = r == 4 * 1023;
	/* distance 20: (1023 - id) % 7 == 0, lowest first: 1, 8, ...; the last
	 * chunk on the highest id of distance 26: 1017. */
	okw = okw && out[0] == 1 && out[3] == 1 && out[4] == 8 && out[4 * 1023 - 1] == 1017;
	ok(okw, "bind over 1023 nodes fills every node, nearest first (out[0] %u, out[4] %u, last %u)",
	   out[0], out[4], out[4 * 1023 - 1]);
	r = hbm_place(HBMPOOL_POLICY_BIND, all, HBMPOOL_MAX_NODES, &set, 0, 0,
		      (4 * 1023 + 1) * 4096ULL, 4096, out, 4096);
	ok(r == -ENOSPC, "bind over 1023 nodes: one chunk too many");
	hbm_nodeset_set(&set, 0);
	ok(hbm_place(HBMPOOL_POLICY_BIND, all, HBMPOOL_MAX_NODES, &set, 0, 0, 4096, 4096, out, 1) ==
	   -EINVAL, "all 1024 ids: self 0 is in the set");
	ok(hbm_place(HBMPOOL_POLICY_BIND, all, HBMPOOL_MAX_NODES, &set, 1023, 0, 4096, 4096, out,
		     1) == -EINVAL, "all 1024 ids: self 1023 is in the set");
	hbm_nodeset_clear(&set, 1023);
	r = hbm_place(HBMPOOL_POLICY_BIND, all, HBMPOOL_MAX_NODES, &set, 1023, 0, 4096, 4096, out, 1);
	ok(r == 1 && out[0] != 1023, "self 1023, set 0..1022: placed on node %u", out[0]);
}

static void test_human(void)
{
	char b[32];

	ok(!strcmp(hbm_human_size(512, b, sizeof(b)), "512 B"), "human 512 B");
	ok(!strcmp(hbm_human_size(3 << 20, b, sizeof(b)), "3.0 MiB"), "human 3 MiB");
	ok(!strcmp(hbm_human_size(1536, b, sizeof(b)), "1.5 KiB"), "human 1.5 KiB");
}

int main(void)
{
	printf("TAP version 13\n");
	test_parse_size();
	test_parse_u64();
	test_nodeset();
	test_parse_nodelist();
	test_pattern();
	test_permutation();
	test_percentiles();
	test_place();
	test_place_high_ids();
	test_human();
	return tap_finish();
}
