// SPDX-License-Identifier: GPL-2.0
/*
 * hbmpool cache: a region 8x the cache budget is written and read in several
 * orders with exact data, the budget holds, and the counters are consistent
 * with each other, with sysfs (region and per-node) and with what the test
 * did.  Also budget shrinking, PREFETCH, and write-back in runs (one request
 * per run of consecutive dirty pages, counted by the sim's debugfs).
 *
 * Nodes 31..32 belong to this binary.
 */
#include <stdio.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "hbmtest.h"

#define N_A	31	/* 4 MiB, distance 20 */
#define N_B	32	/* 4 MiB, distance 30 */
#define BOTH	HBM_NODES(N_A, N_B)
#define BUDGET	64ULL			/* pages */
#define NPAGES	(8 * BUDGET)		/* 8x the budget: 2 MiB */
#define LEN	(NPAGES * HBMT_PAGE)
#define CHUNK	(64 * 1024ULL)

enum order { SEQ, REV, RANDOM };

FIXTURE(cache)
{
	struct hbmt_env env;
	struct hbmt_region r;
	uint32_t perm[NPAGES];
};

FIXTURE_VARIANT(cache)
{
	enum order write_order;
	enum order read_order;
};

/* Written front to back, read front to back, then back to front. */
FIXTURE_VARIANT_ADD(cache, sequential)
{
	.write_order = SEQ, .read_order = SEQ,
};

/* Written back to front, read back to front, then front to back. */
FIXTURE_VARIANT_ADD(cache, reverse)
{
	.write_order = REV, .read_order = REV,
};

/* Written and read in (different) random permutations. */
FIXTURE_VARIANT_ADD(cache, random)
{
	.write_order = RANDOM, .read_order = RANDOM,
};

/* Both fixtures: the budget and nodes N_A and N_B. */
static void cache_env_setup(struct __test_metadata *_metadata, struct hbmt_env *env)
{
	hbmt_env_setup(_metadata, env, BUDGET, 5000);
	hbmt_env_node(_metadata, env, N_A, 4, 20, NULL);
	hbmt_env_node(_metadata, env, N_B, 4, 30, NULL);
}

FIXTURE_SETUP(cache)
{
	cache_env_setup(_metadata, &self->env);
}

FIXTURE_TEARDOWN(cache)
{
	hbmt_region_close(&self->r);
	hbmt_env_teardown(_metadata, &self->env);
}

static uint64_t page_at(FIXTURE_DATA(cache) *self, enum order o, uint64_t i)
{
	switch (o) {
	case SEQ: return i;
	case REV: return NPAGES - 1 - i;
	case RANDOM: return self->perm[i];
	}
	return i;
}

static void set_order(FIXTURE_DATA(cache) *self, enum order o, uint64_t seed)
{
	if (o == RANDOM)
		hbm_permutation(self->perm, NPAGES, seed);
}

static uint64_t global_cached(void)
{
	uint64_t v = UINT64_MAX;

	hbm_global_u64("cached_pages", &v);
	return v;
}

/* The counter identities every stats snapshot must satisfy (no failures injected). */
static void check_identities(struct __test_metadata *_metadata,
			     const struct hbmpool_stats *st, const char *what)
{
	EXPECT_EQ(st->fetches * HBMT_PAGE, st->bytes_fetched) TH_LOG("%s", what);
	EXPECT_EQ(st->writebacks * HBMT_PAGE, st->bytes_written_back) TH_LOG("%s", what);
	EXPECT_EQ(st->fetches, hbm_hist_total(st->lat_hist, HBMPOOL_LAT_BUCKETS))
		TH_LOG("%s: sum(lat_hist) != fetches", what);
	EXPECT_LE(st->evictions, st->fetches) TH_LOG("%s: evicted more than fetched", what);
	EXPECT_EQ(0, st->errors) TH_LOG("%s", what);
	EXPECT_EQ(0, st->timeouts) TH_LOG("%s", what);
	for (int i = 0; i < 4; i++) {
		EXPECT_EQ(0, st->reserved[i]);
	}
}

/* 8x-budget region, written then read twice in the variant's orders: exact data, the budget holds throughout, counters consistent and equal to sysfs, HBM exact after SYNC. */
TEST_F_TIMEOUT(cache, thrash_8x_budget, 120)
{
	const uint64_t seed = 0xcafe0000ULL ^ (uint64_t)variant->write_order;
	struct hbmpool_stats st, sysst, na, nb;
	struct hbmpool_region_info ri;
	struct hbmpool_range rg;
	uint64_t max_cached = 0, v, bad = 0;
	char dir[256];
	int ret;

	ret = hbmt_region_open(&self->r, self->env.devfd, LEN, CHUNK,
			       HBMPOOL_POLICY_INTERLEAVE, BOTH, 0, "thrash");
	ASSERT_EQ(0, ret) TH_LOG("create: %s", strerror(-ret));

	/* Write pass: every page filled completely. */
	set_order(self, variant->write_order, 1);
	for (uint64_t i = 0; i < NPAGES; i++) {
		uint64_t p = page_at(self, variant->write_order, i);

		hbm_pattern_fill(self->r.map + p * HBMT_PAGE, HBMT_PAGE, p * HBMT_PAGE, seed);
		if (!(i % 16)) {
			v = global_cached();
			if (v > max_cached)
				max_cached = v;
		}
	}
	/* Two read passes: the variant's order, then another one. */
	for (int pass = 0; pass < 2; pass++) {
		enum order o = pass ? (variant->read_order == SEQ ? REV : SEQ) : variant->read_order;

		set_order(self, o, 2 + (uint64_t)pass);
		for (uint64_t i = 0; i < NPAGES; i++) {
			uint64_t p = page_at(self, o, i);
			size_t nbad = hbm_pattern_check(self->r.map + p * HBMT_PAGE, HBMT_PAGE,
							p * HBMT_PAGE, seed, &bad);

			ASSERT_EQ(0, nbad) TH_LOG("pass %d page %llu: %zu bad bytes, first at %llu",
						  pass, (unsigned long long)p, nbad,
						  (unsigned long long)bad);
			if (!(i % 16)) {
				v = global_cached();
				if (v > max_cached)
					max_cached = v;
			}
		}
	}
	EXPECT_LE(max_cached, BUDGET) TH_LOG("cache exceeded its budget without write-back failures");

	/* Settled: the cache is within budget. */
	EXPECT_EQ(0, hbmt_wait_global("cached_pages", HBMT_LE, BUDGET, 5000, &v)) TH_LOG("cached %llu", (unsigned long long)v);
	ASSERT_EQ(0, hbmt_stats_settled(self->r.fd, &st));
	ASSERT_EQ(0, hbm_region_info(self->r.fd, &ri, NULL, 0, NULL));
	EXPECT_LE(ri.cached_pages, BUDGET);
	EXPECT_LE(ri.dirty_pages, ri.cached_pages);

	check_identities(_metadata, &st, "region");
	EXPECT_LT(0, st.evictions);
	EXPECT_LT(0, st.writebacks);
	/* Lower bounds from what the test did: every page was fetched once for
	 * the write pass; at most BUDGET of them survived into each read pass;
	 * at least NPAGES - BUDGET dirty pages had to be written back to make
	 * room; each fetch came from a fault or its read-ahead (no prefetch
	 * here).  Under this thrash the evictor may take pages read ahead
	 * before their touch, which then fetches them again: windows are at
	 * most 1/8 of the budget, and over the three passes such waste stays
	 * well under half a pass (7% of the touches in the runs seen).  Faults
	 * are fewer than touches: fault-around maps cached neighbours. */
	EXPECT_LE(3 * NPAGES - 2 * BUDGET, st.fetches);
	EXPECT_LE(NPAGES - BUDGET, st.writebacks);
	EXPECT_LE(3 * NPAGES - 3 * BUDGET, st.evictions);
	EXPECT_LE(st.fetches, 3 * NPAGES + NPAGES / 2);
	EXPECT_LT(0, st.faults);
	EXPECT_LE(st.fetches - st.evictions, BUDGET) TH_LOG("fetched - evicted = pages still cached");
	EXPECT_EQ(st.fetches - st.evictions, ri.cached_pages);

	/* The fd's fdinfo says the same. */
	ASSERT_EQ(0, hbm_fdinfo_stats(self->r.fd, &sysst));
	for (int i = 0; i < HBM_NR_COUNTERS; i++) {
		EXPECT_EQ(*hbm_counter(&st, i), *hbm_counter(&sysst, i)) TH_LOG("%s", hbm_counter_names[i]);
	}
	ASSERT_EQ(0, hbm_fdinfo_u64(self->r.fd, "cached_pages", &v));
	EXPECT_EQ(ri.cached_pages, v);

	/* The nodes are this test's alone: their counters add up to the region's. */
	snprintf(dir, sizeof(dir), HBM_SYSFS "/nodes/node%u/stats", N_A);
	ASSERT_EQ(0, hbm_read_stats_dir(dir, &na));
	snprintf(dir, sizeof(dir), HBM_SYSFS "/nodes/node%u/stats", N_B);
	ASSERT_EQ(0, hbm_read_stats_dir(dir, &nb));
	for (int i = 1; i < HBM_NR_COUNTERS; i++) {	/* faults may be counted per region only */
		EXPECT_EQ(*hbm_counter(&st, i), *hbm_counter(&na, i) + *hbm_counter(&nb, i))
			TH_LOG("node stats %s", hbm_counter_names[i]);
	}
	/* Interleave: both nodes did half of the work, roughly. */
	EXPECT_LT(0, na.fetches);
	EXPECT_LT(0, nb.fetches);

	/* SYNC the rest; HBM then holds the pattern everywhere. */
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, &rg));
	EXPECT_EQ(ri.dirty_pages, rg.pages_done);
	{
		struct hbmpool_chunk_info ch[LEN / CHUNK];
		static uint8_t buf[CHUNK];

		ASSERT_EQ(0, hbm_region_info(self->r.fd, &ri, ch, LEN / CHUNK, NULL));
		EXPECT_EQ(0, ri.dirty_pages);
		for (uint64_t c = 0; c < LEN / CHUNK; c++) {
			ASSERT_EQ((ssize_t)CHUNK, hbm_hbm_pread(ch[c].node, buf, CHUNK, ch[c].node_offset));
			EXPECT_EQ(0, hbm_pattern_check(buf, CHUNK, c * CHUNK, seed, NULL))
				TH_LOG("HBM chunk %llu", (unsigned long long)c);
		}
	}
	ASSERT_EQ(0, hbmt_stats_settled(self->r.fd, &st));
	check_identities(_metadata, &st, "after sync");
}

/* The same nodes and budget, for the tests that do not depend on an order. */
FIXTURE(cache_misc)
{
	struct hbmt_env env;
	struct hbmt_region r;
};

FIXTURE_SETUP(cache_misc)
{
	cache_env_setup(_metadata, &self->env);
}

FIXTURE_TEARDOWN(cache_misc)
{
	hbmt_region_close(&self->r);
	hbmt_env_teardown(_metadata, &self->env);
}

/* Lowering the budget below what is cached makes the cache shrink to the new budget, and the data stays intact. */
TEST_F_TIMEOUT(cache_misc, budget_shrink, 60)
{
	const uint64_t seed = 77;
	uint64_t v;
	int ret, me;

	ASSERT_EQ(0, hbm_set_global_u64("cache_budget_pages", 4 * BUDGET));
	ret = hbmt_region_open(&self->r, self->env.devfd, 3 * BUDGET * HBMT_PAGE, CHUNK,
			       HBMPOOL_POLICY_BIND, BOTH, 0, "shrink");
	ASSERT_EQ(0, ret);
	hbm_pattern_fill(self->r.map, self->r.len, 0, seed);
	ASSERT_EQ(0, hbm_global_u64("cached_pages", &v));
	EXPECT_EQ(3 * BUDGET, v);
	ASSERT_EQ(0, hbm_set_global_u64("cache_budget_pages", BUDGET));
	EXPECT_EQ(0, hbmt_wait_global("cached_pages", HBMT_LE, BUDGET, 10000, &v))
		TH_LOG("still %llu cached after the budget went down to %llu",
		       (unsigned long long)v, (unsigned long long)BUDGET);
	EXPECT_EQ(0, hbm_pattern_check(self->r.map, self->r.len, 0, seed, NULL));
	/* This node (node 0 of a fresh module) reports the budget as capacity. */
	me = hbm_self_node(self->env.devfd);
	ASSERT_LE(0, me) TH_LOG("self node: %s", strerror(-me));
	ASSERT_EQ(0, hbm_node_u64((unsigned int)me, "capacity_bytes", &v));
	EXPECT_EQ(BUDGET * HBMT_PAGE, v);
}

/* PREFETCH fills the cache without faults or mappings; touching prefetched pages fetches nothing more; PREFETCH stops at 15/16 of the budget and never evicts. */
TEST_F(cache_misc, prefetch)
{
	const uint64_t n = BUDGET / 2;
	struct hbmpool_stats st;
	struct hbmpool_range rg;
	uint64_t v;
	int ret;

	ret = hbmt_region_open(&self->r, self->env.devfd, NPAGES * HBMT_PAGE, CHUNK,
			       HBMPOOL_POLICY_BIND, BOTH, 0, "prefetch");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, hbm_region_prefetch(self->r.fd, 0, n * HBMT_PAGE, &rg));
	EXPECT_EQ(n, rg.pages_done);
	EXPECT_EQ(0, rg.pages_failed);
	ASSERT_EQ(0, hbm_region_stats(self->r.fd, &st));
	EXPECT_EQ(n, st.fetches);
	EXPECT_EQ(0, st.faults);
	for (uint64_t p = 0; p < n; p++) {
		EXPECT_EQ(0, self->r.map[p * HBMT_PAGE]);
	}
	ASSERT_EQ(0, hbm_region_stats(self->r.fd, &st));
	EXPECT_EQ(n, st.fetches) TH_LOG("prefetched pages were fetched again");
	EXPECT_LT(0, st.faults);
	EXPECT_GE(n, st.faults) TH_LOG("fault-around maps prefetched neighbours");
	/* Already cached: nothing to do. */
	ASSERT_EQ(0, hbm_region_prefetch(self->r.fd, 0, n * HBMT_PAGE, &rg));
	EXPECT_EQ(0, rg.pages_done);

	/* The whole region is 8x the budget: prefetch stops at the low watermark. */
	ASSERT_EQ(0, hbm_region_prefetch(self->r.fd, 0, 0, &rg));
	EXPECT_EQ(0, rg.pages_failed);
	EXPECT_EQ(BUDGET - BUDGET / 16 - n, rg.pages_done);
	ASSERT_EQ(0, hbm_global_u64("cached_pages", &v));
	EXPECT_EQ(BUDGET - BUDGET / 16, v);
	ASSERT_EQ(0, hbm_region_stats(self->r.fd, &st));
	EXPECT_EQ(0, st.evictions) TH_LOG("a prefetch hint pushed pages out");
}

/* The shrinker gives clean, unmapped cache pages back under memory pressure (drop_caches runs every shrinker) and leaves mapped and dirty ones alone; the data stays exact. */
TEST_F(cache_misc, shrinker)
{
	const uint64_t n = BUDGET / 2, seed = 5;
	uint64_t before, after, freed0, freed1;
	struct hbmpool_range rg;

	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, NPAGES * HBMT_PAGE, CHUNK,
				      HBMPOOL_POLICY_BIND, BOTH, 0, "shrink"));
	/*
	 * 8 dirty, mapped pages at the start; n clean, unmapped ones after
	 * them, which the prefetch brings: no read-ahead from the writes
	 */
	ASSERT_EQ(0, madvise(self->r.map, NPAGES * HBMT_PAGE, MADV_RANDOM));
	hbm_pattern_fill(self->r.map, 8 * HBMT_PAGE, 0, seed);
	ASSERT_EQ(0, hbm_region_prefetch(self->r.fd, 8 * HBMT_PAGE, n * HBMT_PAGE, &rg));
	ASSERT_EQ(n, rg.pages_done);
	ASSERT_EQ(0, hbm_global_u64("stats/shrinker_freed", &freed0));
	ASSERT_EQ(0, hbm_global_u64("cached_pages", &before));
	ASSERT_EQ(0, hbm_write_str("/proc/sys/vm/drop_caches", "2"));
	ASSERT_EQ(0, hbm_global_u64("stats/shrinker_freed", &freed1));
	ASSERT_EQ(0, hbm_global_u64("cached_pages", &after));
	EXPECT_LT(freed0, freed1);
	EXPECT_LT(after, before);
	EXPECT_LE(before - after, n) TH_LOG("the shrinker took a mapped or dirty page");
	EXPECT_EQ(0, hbm_pattern_check(self->r.map, 8 * HBMT_PAGE, 0, seed, NULL));
}

#define RECYCLE_PARAM	"/sys/module/hbmpool/parameters/recycle_pages"

/*
 * Pages that leave the cache are recycled (pagepool.c): a region's release
 * fills the pool, up to what the budget leaves unused; a new region's first
 * touches take them and read exactly the new home's data (zeros), never the
 * old region's; a lower budget, recycle_pages=0 and drop_caches (the pool's
 * shrinker) give pages back; with recycle_pages=0 no page goes in.
 */
TEST_F_TIMEOUT(cache_misc, recycled_pages, 60)
{
	const uint64_t n = BUDGET / 2;
	uint64_t pool, rec0, rec1, cached, bad = 0;
	struct hbmt_region b = { .fd = -1 };
	char old[8] = "Y";

	if (hbm_read_str(RECYCLE_PARAM, old, sizeof(old)) < 0)
		SKIP(return, "no %s (a module without the page pool)", RECYCLE_PARAM);
	ASSERT_EQ(0, hbm_write_str(RECYCLE_PARAM, "1"));
	ASSERT_EQ(0, hbm_write_str("/proc/sys/vm/drop_caches", "2"));	/* an empty pool */
	ASSERT_EQ(0, hbm_global_u64("pool_pages", &pool));
	EXPECT_EQ(0, pool);

	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, n * HBMT_PAGE, CHUNK,
				      HBMPOOL_POLICY_BIND, BOTH, 0, "recycle-a"));
	memset(self->r.map, 0xa5, n * HBMT_PAGE);
	hbmt_region_close(&self->r);
	ASSERT_EQ(0, hbm_global_u64("pool_pages", &pool));
	ASSERT_EQ(0, hbm_global_u64("cached_pages", &cached));
	EXPECT_EQ(n, pool) TH_LOG("the released region's %llu pages did not all go to the pool",
				  (unsigned long long)n);
	EXPECT_GE(BUDGET, pool + cached) TH_LOG("the pool went over the budget");

	ASSERT_EQ(0, hbm_global_u64("pool_recycled", &rec0));
	ASSERT_EQ(0, hbmt_region_open(&b, self->env.devfd, n * HBMT_PAGE, CHUNK,
				      HBMPOOL_POLICY_BIND, BOTH, 0, "recycle-b"));
	for (uint64_t i = 0; i < n * HBMT_PAGE; i++)
		bad += b.map[i] != 0;
	EXPECT_EQ(0, bad) TH_LOG("a new region read %llu bytes of an old one",
				 (unsigned long long)bad);
	ASSERT_EQ(0, hbm_global_u64("pool_recycled", &rec1));
	EXPECT_LE(rec0 + n / 2, rec1) TH_LOG("first touches took %llu pages from the pool",
					     (unsigned long long)(rec1 - rec0));
	hbmt_region_close(&b);

	/* the budget shrinks: the pool keeps to what it leaves */
	ASSERT_EQ(0, hbm_global_u64("pool_pages", &pool));
	EXPECT_LT(BUDGET / 4, pool);
	ASSERT_EQ(0, hbm_set_global_u64("cache_budget_pages", BUDGET / 4));
	ASSERT_EQ(0, hbm_global_u64("pool_pages", &pool));
	EXPECT_GE(BUDGET / 4, pool);
	ASSERT_EQ(0, hbm_set_global_u64("cache_budget_pages", BUDGET));
	EXPECT_LT(0, pool);

	/* turned off, it empties at once, and nothing goes in */
	ASSERT_EQ(0, hbm_write_str(RECYCLE_PARAM, "0"));
	ASSERT_EQ(0, hbm_global_u64("pool_pages", &pool));
	EXPECT_EQ(0, pool);
	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, n * HBMT_PAGE, CHUNK,
				      HBMPOOL_POLICY_BIND, BOTH, 0, "recycle-c"));
	memset(self->r.map, 0x5a, n * HBMT_PAGE);
	hbmt_region_close(&self->r);
	ASSERT_EQ(0, hbm_global_u64("pool_pages", &pool));
	EXPECT_EQ(0, pool);

	/* on again: the shrinker empties it */
	ASSERT_EQ(0, hbm_write_str(RECYCLE_PARAM, "1"));
	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, n * HBMT_PAGE, CHUNK,
				      HBMPOOL_POLICY_BIND, BOTH, 0, "recycle-d"));
	memset(self->r.map, 0x3c, n * HBMT_PAGE);
	hbmt_region_close(&self->r);
	ASSERT_EQ(0, hbm_global_u64("pool_pages", &pool));
	EXPECT_EQ(n, pool);
	ASSERT_EQ(0, hbm_write_str("/proc/sys/vm/drop_caches", "2"));
	ASSERT_EQ(0, hbm_global_u64("pool_pages", &pool));
	EXPECT_EQ(0, pool);
	old[1] = 0;
	EXPECT_EQ(0, hbm_write_str(RECYCLE_PARAM, old));
}

/*
 * One drop_caches empties the pool, however small, every time: the pool's
 * shrinker is asked for all of it at priority 0.  (With seeks 0 the core
 * asked for half of the pool plus what earlier calls deferred, and scanned
 * nothing below a batch of 128: a small pool went only when other caches
 * freed enough for drop_caches to make a second pass.)  Three rounds of 8
 * pages each.
 */
TEST_F_TIMEOUT(cache_misc, drop_caches_empties_pool, 60)
{
	char old[8] = "Y";
	uint64_t pool;

	if (hbm_read_str(RECYCLE_PARAM, old, sizeof(old)) < 0)
		SKIP(return, "no %s (a module without the page pool)", RECYCLE_PARAM);
	ASSERT_EQ(0, hbm_write_str(RECYCLE_PARAM, "1"));
	for (int round = 0; round < 3; round++) {
		ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, 8 * HBMT_PAGE, CHUNK,
					      HBMPOOL_POLICY_BIND, BOTH, 0, "dropcaches"));
		memset(self->r.map, 0x6b, 8 * HBMT_PAGE);
		hbmt_region_close(&self->r);
		ASSERT_EQ(0, hbm_global_u64("pool_pages", &pool));
		EXPECT_LE(8, pool) TH_LOG("round %d: the released region's pages are not in the pool",
					  round);
		ASSERT_EQ(0, hbm_write_str("/proc/sys/vm/drop_caches", "2"));
		ASSERT_EQ(0, hbm_global_u64("pool_pages", &pool));
		EXPECT_EQ(0, pool) TH_LOG("round %d: drop_caches left %llu pages in the pool", round,
					  (unsigned long long)pool);
	}
	old[1] = 0;
	EXPECT_EQ(0, hbm_write_str(RECYCLE_PARAM, old));
}

static uint64_t write_requests(unsigned int node)
{
	char path[128];
	uint64_t v = 0;

	snprintf(path, sizeof(path), HBM_DEBUGFS "/node%u/write_requests", node);
	hbm_read_u64(path, &v);
	return v;
}

/*
 * SYNC of 64 consecutive dirty pages of one chunk: two requests of 32 pages
 * (HBMPOOL_WB_BATCH), 64 pages written back, exact at the home.  A hole
 * splits a run: pages 0..9 and 11..20 dirty are two requests.  Under
 * eviction, a dirty page goes with the dirty pages after it.
 */
TEST_F_TIMEOUT(cache_misc, writeback_runs, 60)
{
	struct hbmpool_stats st0, st;
	struct hbmpool_range rg;
	uint64_t w0, v;

	if (hbmt_debugfs_missing())
		SKIP(return, "%s", hbmt_debugfs_missing());
	/* room for the whole region: no eviction writes any of it back first */
	ASSERT_EQ(0, hbm_set_global_u64("cache_budget_pages", 4 * BUDGET));
	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, 64 * HBMT_PAGE, 64 * HBMT_PAGE,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "wbruns"));
	hbm_pattern_fill(self->r.map, 64 * HBMT_PAGE, 0, 91);
	ASSERT_EQ(0, hbmt_stats_settled(self->r.fd, &st0));
	w0 = write_requests(N_A);
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, &rg));
	EXPECT_EQ(64, rg.pages_done);
	ASSERT_EQ(0, hbmt_stats_settled(self->r.fd, &st));
	EXPECT_EQ(64, st.writebacks - st0.writebacks);
	EXPECT_EQ(2, write_requests(N_A) - w0) TH_LOG("64 pages in runs of 32");
	{
		struct hbmpool_chunk_info ch[1];
		struct hbmpool_region_info ri;
		static uint8_t buf[64 * HBMT_PAGE];

		ASSERT_EQ(0, hbm_region_info(self->r.fd, &ri, ch, 1, NULL));
		ASSERT_EQ((ssize_t)sizeof(buf), hbm_hbm_pread(ch[0].node, buf, sizeof(buf),
							      ch[0].node_offset));
		EXPECT_EQ(0, hbm_pattern_check(buf, sizeof(buf), 0, 91, NULL)) TH_LOG("at the home");
	}

	for (uint64_t p = 0; p < 21; p++)
		if (p != 10)
			self->r.map[p * HBMT_PAGE] ^= 1;
	w0 = write_requests(N_A);
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, &rg));
	EXPECT_EQ(20, rg.pages_done);
	EXPECT_EQ(2, write_requests(N_A) - w0) TH_LOG("0..9 and 11..20");

	/*
	 * Eviction: 4x the budget written in order, then settled under it.
	 * The eviction of a dirty page writes back the dirty pages after it
	 * in the same request (clustering).
	 */
	hbmt_region_close(&self->r);
	ASSERT_EQ(0, hbm_set_global_u64("cache_budget_pages", BUDGET));
	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, 4 * BUDGET * HBMT_PAGE,
				      4 * BUDGET * HBMT_PAGE, HBMPOOL_POLICY_BIND, HBM_NODES(N_A),
				      0, "wbevict"));
	ASSERT_EQ(0, hbmt_stats_settled(self->r.fd, &st0));
	w0 = write_requests(N_A);
	hbm_pattern_fill(self->r.map, 4 * BUDGET * HBMT_PAGE, 0, 92);
	ASSERT_EQ(0, hbmt_wait_global("cached_pages", HBMT_LE, BUDGET, 5000, &v));
	ASSERT_EQ(0, hbmt_stats_settled(self->r.fd, &st));
	EXPECT_LE(2 * BUDGET, st.writebacks - st0.writebacks);
	EXPECT_GE((st.writebacks - st0.writebacks) / 2, write_requests(N_A) - w0)
		TH_LOG("%llu pages written back in %llu requests",
		       (unsigned long long)(st.writebacks - st0.writebacks),
		       (unsigned long long)(write_requests(N_A) - w0));
	EXPECT_EQ(0, hbm_pattern_check(self->r.map, 4 * BUDGET * HBMT_PAGE, 0, 92, NULL));
}

TEST_HARNESS_MAIN
