// SPDX-License-Identifier: GPL-2.0
/*
 * Host-side unit test of tools/lib/hbmlib.c: the size/node-list parsers, the
 * test pattern, the permutation, the percentile helpers and the placement
 * model the selftests check REGION_INFO against.  Needs no kernel module.
 * Prints TAP and "N passed, N failed"; exits 1 on any failure.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/hbmpool.h>

#include "hbmlib.h"

static int npass, nfail, ntest;

static void ok(int cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void ok(int cond, const char *fmt, ...)
{
	va_list ap;

	ntest++;
	printf("%sok %d - ", cond ? "" : "not ", ntest);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (cond)
		npass++;
	else
		nfail++;
}

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

static void test_parse_nodelist(void)
{
	uint64_t m = 0;

	ok(hbm_parse_nodelist("1", 1, 63, &m) == 0 && m == 0x2, "nodelist single");
	ok(hbm_parse_nodelist("1,3,5-7", 1, 63, &m) == 0 && m == 0xea,
	   "nodelist list+range = 0x%llx", (unsigned long long)m);
	ok(hbm_parse_nodelist("63", 1, 63, &m) == 0 && m == 1ULL << 63, "nodelist 63");
	ok(hbm_parse_nodelist("0", 1, 63, &m) == -EINVAL, "nodelist rejects local node 0");
	ok(hbm_parse_nodelist("64", 1, 63, &m) == -EINVAL, "nodelist rejects 64");
	ok(hbm_parse_nodelist("5-3", 1, 63, &m) == -EINVAL, "nodelist rejects descending range");
	ok(hbm_parse_nodelist("1,", 1, 63, &m) == -EINVAL, "nodelist rejects trailing comma");
	ok(hbm_parse_nodelist("", 1, 63, &m) == -EINVAL, "nodelist rejects empty");
	ok(hbm_parse_nodelist("a", 1, 63, &m) == -EINVAL, "nodelist rejects junk");
	ok(hbm_parse_nodelist("1;2", 1, 63, &m) == -EINVAL, "nodelist rejects bad separator");
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
		 uint64_t mask, uint32_t pref, uint64_t len, uint64_t chunk,
		 uint32_t *out)
{
	return hbm_place(policy, n, nn, mask, pref, len, chunk, out, 64);
}

static int same(const uint32_t *got, const uint32_t *want, int n)
{
	return !memcmp(got, want, (size_t)n * sizeof(*got));
}

static void test_place(void)
{
	/* ids 3, 5, 7; distances 30, 20, 20; 4, 2, 2 MiB free. */
	const struct hbm_node_model n[] = {
		{ 7, 20, 2 * MIB }, { 3, 30, 4 * MIB }, { 5, 20, 2 * MIB },
	};
	const uint64_t all = (1 << 3) | (1 << 5) | (1 << 7);
	uint32_t out[64];
	int r;

	r = place(HBMPOOL_POLICY_INTERLEAVE, n, 3, all, 0, 6 * MIB, MIB, out);
	ok(r == 6 && same(out, (uint32_t[]){ 3, 5, 7, 3, 5, 7 }, 6),
	   "interleave: round robin over ascending ids");
	r = place(HBMPOOL_POLICY_INTERLEAVE, n, 3, all, 0, 7 * MIB, MIB, out);
	ok(r == 7 && out[6] == 3, "interleave: 7 chunks, the 7th on the first node");
	r = place(HBMPOOL_POLICY_INTERLEAVE, n, 3, all, 0, 9 * MIB, MIB, out);
	ok(r == -ENOSPC, "interleave: ENOSPC when one node lacks room for its share");

	r = place(HBMPOOL_POLICY_BIND, n, 3, all, 0, 8 * MIB, MIB, out);
	ok(r == 8 && same(out, (uint32_t[]){ 5, 5, 7, 7, 3, 3, 3, 3 }, 8),
	   "bind: nearest first (distance, then id), spilling in order");
	r = place(HBMPOOL_POLICY_BIND, n, 3, all, 0, 9 * MIB, MIB, out);
	ok(r == -ENOSPC, "bind: ENOSPC when the set is full");
	r = place(HBMPOOL_POLICY_BIND, n, 3, 1 << 3, 0, 3 * MIB, MIB, out);
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
	ok(place(HBMPOOL_POLICY_BIND, n, 3, 0, 0, MIB, MIB, out) == -EINVAL, "empty mask");
	ok(place(HBMPOOL_POLICY_BIND, n, 3, all | 1, 0, MIB, MIB, out) == -EINVAL,
	   "local node 0 in mask");
	ok(place(HBMPOOL_POLICY_BIND, n, 3, all | (1 << 9), 0, MIB, MIB, out) == -ENODEV,
	   "unknown node in mask");
	ok(place(HBMPOOL_POLICY_PREFERRED, n, 3, 1 << 3, 5, MIB, MIB, out) == -EINVAL,
	   "preferred not in mask");
	ok(place(HBMPOOL_POLICY_BIND, n, 3, all, 5, MIB, MIB, out) == -EINVAL,
	   "preferred_node set with bind");
	ok(place(HBMPOOL_POLICY_BIND, n, 3, all, 0, 0, MIB, out) == -EINVAL, "zero length");
	r = hbm_place(HBMPOOL_POLICY_INTERLEAVE, n, 3, all, 0, 6 * MIB, MIB, out, 2);
	ok(r == 6, "max_out smaller than the chunk count still returns the count");
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
	test_parse_nodelist();
	test_pattern();
	test_permutation();
	test_percentiles();
	test_place();
	test_human();
	printf("1..%d\n", ntest);
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail ? 1 : 0;
}
