// SPDX-License-Identifier: GPL-2.0
/*
 * hbmpool read-ahead: a sequential fault pattern fetches growing windows of
 * the pages that follow, in one request each; random access, MADV_RANDOM
 * and readahead-max-pages 1 fetch single pages; a window never crosses its
 * chunk; a failed read-ahead is fetched again, never a SIGBUS; data read
 * ahead is the home's data.
 *
 * The nodes get latency_us, so every miss takes the transport path; the
 * fast_* tests set it to 0, so that misses take the no-wait CPU copy, which
 * fetches the same windows in one copy and maps them at once.  A window's
 * pages are in the cache from the moment it is sent, so cached_pages right
 * after a touch tells the window exactly, whatever the link's speed.
 * Fault-around maps cached pages next to a fault: touching a window's pages
 * takes far fewer faults than pages, unless most read faults of late missed
 * the cache (then it is off until hits bring it back).
 *
 * Nodes 61..62 belong to this binary.
 */
#include <stdio.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "hbmtest.h"

#define N_A	61	/* 4 MiB, distance 20 */
#define N_B	62	/* 4 MiB, distance 30 */
#define BUDGET	1024ULL
#define PAGES	512ULL			/* one 2 MiB chunk */
#define CHUNK	(PAGES * HBMT_PAGE)

FIXTURE(ra)
{
	struct hbmt_env env;
	struct hbmt_region r;
	uint64_t old_ra;
	int ra_saved;
};

FIXTURE_SETUP(ra)
{
	hbmt_env_setup(_metadata, &self->env, BUDGET, 5000);
	if (hbmt_debugfs_missing())
		SKIP(return, "%s", hbmt_debugfs_missing());
	ASSERT_EQ(0, hbm_global_u64("readahead_max_pages", &self->old_ra));
	self->ra_saved = 1;
	ASSERT_EQ(0, hbm_set_global_u64("readahead_max_pages", 128));
	hbmt_env_node(_metadata, &self->env, N_A, 4, 20, NULL);
	hbmt_env_node(_metadata, &self->env, N_B, 4, 30, NULL);
	ASSERT_EQ(0, hbm_node_knob(N_A, "latency_us", 100));
	ASSERT_EQ(0, hbm_node_knob(N_B, "latency_us", 100));
}

FIXTURE_TEARDOWN(ra)
{
	hbmt_region_close(&self->r);
	if (self->ra_saved)
		EXPECT_EQ(0, hbm_set_global_u64("readahead_max_pages", self->old_ra));
	hbmt_env_teardown(_metadata, &self->env);
}

static uint64_t cached(FIXTURE_DATA(ra) *self)
{
	uint64_t v = UINT64_MAX;

	hbm_fdinfo_u64(self->r.fd, "cached_pages", &v);
	return v;
}

static int touch(FIXTURE_DATA(ra) *self, uint64_t p)
{
	uint64_t v;

	return hbmt_probe_read(self->r.map + p * HBMT_PAGE, &v, NULL);
}

static uint64_t node_fetches(unsigned int id)
{
	char path[128];
	uint64_t v = UINT64_MAX;

	snprintf(path, sizeof(path), HBM_SYSFS "/nodes/node%u/stats/fetches", id);
	hbm_read_u64(path, &v);
	return v;
}

/* 0, then 1: one page, then a window of 4 (1..4) marked at its second page; touching the mark sends the next window (5..12) at once; windows double to readahead-max-pages. */
TEST_F(ra, sequential_windows_grow)
{
	struct hbmpool_stats st;

	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, PAGES * HBMT_PAGE, CHUNK,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "seq"));
	ASSERT_EQ(0, touch(self, 0));
	EXPECT_EQ(1, cached(self)) TH_LOG("a first touch is not a pattern");
	ASSERT_EQ(0, touch(self, 1));
	EXPECT_EQ(5, cached(self)) TH_LOG("the second in order reads 4 pages");
	ASSERT_EQ(0, touch(self, 2));
	EXPECT_EQ(13, cached(self)) TH_LOG("the mark sends 8 more");
	ASSERT_EQ(0, touch(self, 3));
	ASSERT_EQ(0, touch(self, 4));
	EXPECT_EQ(13, cached(self)) TH_LOG("hits inside a window fetch nothing");
	ASSERT_EQ(0, touch(self, 5));
	EXPECT_EQ(29, cached(self)) TH_LOG("then 16");
	for (uint64_t p = 6; p < 256; p++)
		ASSERT_EQ(0, touch(self, p));
	ASSERT_EQ(0, hbmt_stats_settled(self->r.fd, &st));
	EXPECT_LT(0, st.faults);
	EXPECT_GE(256 / 4, st.faults) TH_LOG("fault-around maps the pages read ahead: %llu faults",
					      (unsigned long long)st.faults);
	EXPECT_GT(st.fetches, 256) TH_LOG("read ahead past the last touch");
	EXPECT_LE(st.fetches, 256 + 2 * 128) TH_LOG("at most two windows ahead");
	EXPECT_EQ(st.fetches, cached(self));
	EXPECT_EQ(st.fetches, hbm_hist_total(st.lat_hist, HBMPOOL_LAT_BUCKETS))
		TH_LOG("each page read ahead counts its request's latency");
	EXPECT_EQ(st.fetches * HBMT_PAGE, st.bytes_fetched);
	EXPECT_EQ(0, st.errors);
}

/* readahead-max-pages bounds the window: with 16, a sequential pass stays within two windows of the last touch. */
TEST_F(ra, max_window)
{
	ASSERT_EQ(0, hbm_set_global_u64("readahead_max_pages", 16));
	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, PAGES * HBMT_PAGE, CHUNK,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "max16"));
	for (uint64_t p = 0; p < 256; p++) {
		ASSERT_EQ(0, touch(self, p));
		ASSERT_LE(cached(self), p + 1 + 2 * 16) TH_LOG("page %llu", (unsigned long long)p);
	}
	EXPECT_GT(cached(self), 256);
}

/* readahead-max-pages 1, MADV_RANDOM, and an access order with no neighbours: every fault fetches its page alone. */
TEST_F(ra, single_pages)
{
	static const uint64_t order[] = { 0, 100, 7, 300, 50, 200, 9, 400, 11, 13 };

	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, PAGES * HBMT_PAGE, CHUNK,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "single"));
	for (unsigned int i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		ASSERT_EQ(0, touch(self, order[i]));
	EXPECT_EQ(10, cached(self)) TH_LOG("random order");

	ASSERT_EQ(0, madvise(self->r.map, PAGES * HBMT_PAGE, MADV_RANDOM));
	for (uint64_t p = 20; p < 48; p++)
		ASSERT_EQ(0, touch(self, p));
	EXPECT_EQ(10 + 28, cached(self)) TH_LOG("MADV_RANDOM");

	ASSERT_EQ(0, madvise(self->r.map, PAGES * HBMT_PAGE, MADV_NORMAL));
	ASSERT_EQ(0, hbm_set_global_u64("readahead_max_pages", 1));
	for (uint64_t p = 60; p < 92; p++)
		ASSERT_EQ(0, touch(self, p));
	EXPECT_EQ(10 + 28 + 32, cached(self)) TH_LOG("readahead-max-pages 1");
}

/* MADV_SEQUENTIAL: the first miss reads the largest window. */
TEST_F(ra, madv_sequential)
{
	ASSERT_EQ(0, hbm_set_global_u64("readahead_max_pages", 64));
	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, PAGES * HBMT_PAGE, CHUNK,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "madvseq"));
	ASSERT_EQ(0, madvise(self->r.map, PAGES * HBMT_PAGE, MADV_SEQUENTIAL));
	ASSERT_EQ(0, touch(self, 10));
	EXPECT_EQ(64, cached(self));
	ASSERT_EQ(0, touch(self, 500));
	EXPECT_EQ(64 + 12, cached(self)) TH_LOG("never past the chunk (the region's end here)");
}

/* 4-page chunks interleaved over two nodes: a window ends at its chunk's end, and the next starts on the other node. */
TEST_F(ra, window_stops_at_chunk)
{
	uint64_t a0 = node_fetches(N_A), b0 = node_fetches(N_B);
	struct hbmpool_stats st;

	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, 64 * HBMT_PAGE, 4 * HBMT_PAGE,
				      HBMPOOL_POLICY_INTERLEAVE, HBM_NODES(N_A, N_B), 0,
				      "chunks"));
	ASSERT_EQ(0, touch(self, 0));
	ASSERT_EQ(0, touch(self, 1));
	EXPECT_EQ(4, cached(self)) TH_LOG("1..3: the window stops at the chunk");
	ASSERT_EQ(0, touch(self, 2));
	EXPECT_EQ(8, cached(self)) TH_LOG("the mark sends the next chunk, 4..7");
	ASSERT_EQ(0, touch(self, 3));
	ASSERT_EQ(0, touch(self, 4));
	EXPECT_EQ(12, cached(self)) TH_LOG("and its mark the next, 8..11");
	ASSERT_EQ(0, hbmt_stats_settled(self->r.fd, &st));
	EXPECT_EQ(8, node_fetches(N_A) - a0) TH_LOG("chunks 0 and 2 are on node %u", N_A);
	EXPECT_EQ(4, node_fetches(N_B) - b0) TH_LOG("chunk 1 is on node %u", N_B);
}

/* A read-ahead that fails leaves its pages to be fetched again: no SIGBUS for a page nobody faulted on, and the page works. */
TEST_F(ra, failed_readahead_is_refetched)
{
	struct hbmpool_stats st;
	uint64_t v = 1;

	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, PAGES * HBMT_PAGE, CHUNK,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "rafail"));
	ASSERT_EQ(0, touch(self, 0));
	ASSERT_EQ(0, touch(self, 1));		/* 1..4, the mark on 2 */
	ASSERT_EQ(0, hbmt_stats_settled(self->r.fd, &st));
	ASSERT_EQ(0, hbm_node_knob(N_A, "fail_fetch", 1));
	ASSERT_EQ(0, touch(self, 2));		/* sends 5..12, which fail */
	ASSERT_EQ(0, hbmt_stats_settled(self->r.fd, &st));
	EXPECT_EQ(1, st.errors) TH_LOG("one request failed");
	ASSERT_EQ(0, hbm_node_knob(N_A, "fail_fetch", 0));
	EXPECT_EQ(0, hbmt_probe_read(self->r.map + 5 * HBMT_PAGE, &v, NULL))
		TH_LOG("a page read ahead whose fetch failed is fetched again");
	EXPECT_EQ(0, v);
	for (uint64_t p = 6; p < 13; p++)
		EXPECT_EQ(0, touch(self, p));
	ASSERT_EQ(0, hbmt_stats_settled(self->r.fd, &st));
	EXPECT_EQ(1, st.errors);
}

/* Data read ahead is the home's: a pattern written, synced and dropped from the cache reads back exact through read-ahead, forwards. */
TEST_F(ra, data_exact)
{
	struct hbmpool_stats st;
	uint64_t last = 0;

	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, PAGES * HBMT_PAGE, CHUNK,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "radata"));
	hbm_pattern_fill(self->r.map, PAGES * HBMT_PAGE, 0, 61);
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL));
	ASSERT_EQ(0, hbm_set_global_u64("cache_budget_pages", 16));
	ASSERT_EQ(0, hbmt_wait_global("cached_pages", HBMT_LE, 16, 5000, &last))
		TH_LOG("cached_pages %llu", (unsigned long long)last);
	ASSERT_EQ(0, hbm_set_global_u64("cache_budget_pages", BUDGET));
	ASSERT_EQ(0, hbmt_stats_settled(self->r.fd, &st));
	uint64_t f0 = st.fetches;

	EXPECT_EQ(0, hbm_pattern_check(self->r.map, PAGES * HBMT_PAGE, 0, 61, NULL));
	ASSERT_EQ(0, hbmt_stats_settled(self->r.fd, &st));
	EXPECT_GE(st.fetches - f0, PAGES - 16);
	EXPECT_EQ(0, st.errors);
}

/* PREFETCH fetches runs: the whole range in, exact counts. */
TEST_F(ra, prefetch_runs)
{
	struct hbmpool_range rg;
	struct hbmpool_stats st;

	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, PAGES * HBMT_PAGE, CHUNK,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "prefetch"));
	ASSERT_EQ(0, hbm_region_prefetch(self->r.fd, 0, 0, &rg));
	EXPECT_EQ(PAGES, rg.pages_done);
	EXPECT_EQ(0, rg.pages_failed);
	ASSERT_EQ(0, hbmt_stats_settled(self->r.fd, &st));
	EXPECT_EQ(PAGES, st.fetches);
	EXPECT_EQ(0, st.faults);
	EXPECT_EQ(PAGES, cached(self));
}

/*
 * The fast_* tests are about the no-wait copy: node N_A with no latency and
 * nowait_copy on, whichever path this build exercises (HBMT_SLOW_PATH).
 */
static void fast_node(struct __test_metadata *_metadata)
{
	ASSERT_EQ(0, hbm_node_knob(N_A, "latency_us", 0));
	ASSERT_EQ(0, hbm_node_knob(N_A, "nowait_copy", 1));
}

/*
 * Two streams in one region whose faults alternate, as two threads reading
 * their own parts in order: each is read ahead (a miss after a run of
 * cached pages continues a stream), not fetched page by page.  250 pages
 * each: the windows double from 4 pages (4, 8, ... 128 from page 128), so
 * that the last one runs past the last touch.
 */
static void two_streams(struct __test_metadata *_metadata, FIXTURE_DATA(ra) *self)
{
	struct hbmpool_stats st;

	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, 2 * PAGES * HBMT_PAGE, CHUNK,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "two"));
	for (uint64_t p = 0; p < 250; p++) {
		ASSERT_EQ(0, touch(self, p));
		ASSERT_EQ(0, touch(self, PAGES + p));
	}
	ASSERT_EQ(0, hbmt_stats_settled(self->r.fd, &st));
	EXPECT_LT(0, st.faults);
	EXPECT_GE(500 / 4, st.faults) TH_LOG("each stream read ahead: %llu faults for 500 pages",
					      (unsigned long long)st.faults);
	EXPECT_GT(st.fetches, 500) TH_LOG("read ahead past the last touches");
	EXPECT_LE(st.fetches, 500 + 2 * 2 * 128) TH_LOG("at most two windows ahead per stream");
	EXPECT_EQ(0, st.errors);
}

TEST_F(ra, interleaved_streams)
{
	two_streams(_metadata, self);
}

TEST_F(ra, fast_interleaved_streams)
{
	fast_node(_metadata);
	two_streams(_metadata, self);
}

/* The no-wait copy fetches the same windows as the transport path, each in one copy, and maps them in the fault: a sequential pass takes a few faults. */
TEST_F(ra, fast_windows)
{
	struct hbmpool_stats st;

	fast_node(_metadata);
	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, PAGES * HBMT_PAGE, CHUNK,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "fast"));
	ASSERT_EQ(0, touch(self, 0));
	EXPECT_EQ(1, cached(self)) TH_LOG("a first touch is not a pattern");
	ASSERT_EQ(0, touch(self, 1));
	EXPECT_EQ(5, cached(self)) TH_LOG("the second in order copies 4 pages");
	for (uint64_t p = 2; p < 5; p++)
		ASSERT_EQ(0, touch(self, p));
	EXPECT_EQ(5, cached(self)) TH_LOG("inside a window: nothing fetched");
	ASSERT_EQ(0, touch(self, 5));
	EXPECT_EQ(13, cached(self)) TH_LOG("then 8, at the window's end");
	for (uint64_t p = 6; p < 256; p++)
		ASSERT_EQ(0, touch(self, p));
	ASSERT_EQ(0, hbmt_stats_settled(self->r.fd, &st));
	EXPECT_LT(0, st.faults);
	EXPECT_GE(16, st.faults) TH_LOG("windows of up to 128 pages mapped at once: %llu faults",
					 (unsigned long long)st.faults);
	EXPECT_EQ(st.fetches, cached(self));
	EXPECT_GE(256 + 128, st.fetches) TH_LOG("at most one window ahead");
	EXPECT_EQ(st.fetches, hbm_hist_total(st.lat_hist, HBMPOOL_LAT_BUCKETS))
		TH_LOG("each page of a copy counts its latency");
	EXPECT_EQ(0, st.errors);
}

/* Data copied in fast windows is the home's: a pattern written, synced and dropped from the cache reads back exact, in a few faults. */
TEST_F(ra, fast_data_exact)
{
	struct hbmpool_stats st;
	uint64_t f0;

	fast_node(_metadata);
	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, PAGES * HBMT_PAGE, CHUNK,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "fastdata"));
	hbm_pattern_fill(self->r.map, PAGES * HBMT_PAGE, 0, 62);
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL));
	ASSERT_EQ(0, hbm_set_global_u64("cache_budget_pages", 16));
	ASSERT_EQ(0, hbmt_wait_global("cached_pages", HBMT_LE, 16, 5000, NULL));
	ASSERT_EQ(0, hbm_set_global_u64("cache_budget_pages", BUDGET));
	ASSERT_EQ(0, hbmt_stats_settled(self->r.fd, &st));
	f0 = st.faults;
	EXPECT_EQ(0, hbm_pattern_check(self->r.map, PAGES * HBMT_PAGE, 0, 62, NULL));
	ASSERT_EQ(0, hbmt_stats_settled(self->r.fd, &st));
	EXPECT_GE(PAGES / 8, st.faults - f0) TH_LOG("%llu faults for %llu pages",
						   (unsigned long long)(st.faults - f0), PAGES);
	EXPECT_EQ(0, st.errors);
}

/* Fast windows: random access copies single pages; readahead-max-pages 1 too. */
TEST_F(ra, fast_single_pages)
{
	static const uint64_t order[] = { 0, 100, 7, 300, 50, 200, 9, 400, 11, 13 };

	fast_node(_metadata);
	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, PAGES * HBMT_PAGE, CHUNK,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "fastsingle"));
	for (unsigned int i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		ASSERT_EQ(0, touch(self, order[i]));
	EXPECT_EQ(10, cached(self)) TH_LOG("random order");
	ASSERT_EQ(0, hbm_set_global_u64("readahead_max_pages", 1));
	for (uint64_t p = 60; p < 92; p++)
		ASSERT_EQ(0, touch(self, p));
	EXPECT_EQ(10 + 32, cached(self)) TH_LOG("readahead-max-pages 1");
}

/* A window copied past the end of the faulting mapping is cached, not mapped there: a mapping of pages 8..23 touched in order reads exact data, and a second mapping of the whole region sees the same bytes. */
TEST_F(ra, fast_window_partial_mapping)
{
	const uint64_t off = 8, len = 16;
	volatile uint8_t *part;
	uint8_t *whole;

	fast_node(_metadata);
	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, PAGES * HBMT_PAGE, CHUNK,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "partial"));
	hbm_pattern_fill(self->r.map, PAGES * HBMT_PAGE, 0, 63);
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL));
	ASSERT_EQ(0, hbm_set_global_u64("cache_budget_pages", 16));
	ASSERT_EQ(0, hbmt_wait_global("cached_pages", HBMT_LE, 16, 5000, NULL));
	ASSERT_EQ(0, hbm_set_global_u64("cache_budget_pages", BUDGET));
	/* off the first mapping, so that nothing maps the pages but ours */
	ASSERT_EQ(0, munmap(self->r.map, PAGES * HBMT_PAGE));
	self->r.map = NULL;
	part = mmap(NULL, len * HBMT_PAGE, PROT_READ, MAP_SHARED, self->r.fd, off * HBMT_PAGE);
	ASSERT_NE(MAP_FAILED, part);
	for (uint64_t p = 0; p < len; p++) {
		ASSERT_EQ(0, hbm_pattern_check((const void *)(part + p * HBMT_PAGE), HBMT_PAGE,
					       (off + p) * HBMT_PAGE, 63, NULL))
			TH_LOG("page %llu", (unsigned long long)(off + p));
	}
	whole = mmap(NULL, PAGES * HBMT_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, self->r.fd, 0);
	ASSERT_NE(MAP_FAILED, whole);
	EXPECT_EQ(0, hbm_pattern_check(whole, PAGES * HBMT_PAGE, 0, 63, NULL));
	EXPECT_EQ(0, munmap(whole, PAGES * HBMT_PAGE));
	EXPECT_EQ(0, munmap((void *)part, len * HBMT_PAGE));
}

/* Read faults in touching the pages [@from, @to), every @stride-th, from the region's fault count. */
static uint64_t faults_reading(struct __test_metadata *_metadata, FIXTURE_DATA(ra) *self,
			       uint64_t from, uint64_t to, uint64_t stride)
{
	struct hbmpool_stats st;
	uint64_t f0;

	if (hbmt_stats_settled(self->r.fd, &st))
		return UINT64_MAX;
	f0 = st.faults;
	for (uint64_t p = from; p < to; p += stride)
		EXPECT_EQ(0, touch(self, p));
	if (hbmt_stats_settled(self->r.fd, &st))
		return UINT64_MAX;
	return st.faults - f0;
}

/*
 * Fault-around adapts: on cached pages a read fault maps 16 of them; after
 * 200 read faults that missed the cache it maps only its own page, and 25
 * faults on cached pages (4 each) bring it back (the count of misses that
 * the page cache keeps in file_ra_state.mmap_miss).  Meanwhile a random
 * fault fetches first and looks up after: a cached page is found all the
 * same, and nothing is fetched or evicted for it.
 */
TEST_F(ra, fast_faultaround_adapts)
{
	uint64_t f, fetches, evictions;
	struct hbmpool_stats st;

	fast_node(_metadata);
	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, 2 * PAGES * HBMT_PAGE, CHUNK,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "adapt"));
	/* the first chunk cached and dirty, not mapped */
	hbm_pattern_fill(self->r.map, PAGES * HBMT_PAGE, 0, 64);
	ASSERT_EQ(0, madvise(self->r.map, 2 * PAGES * HBMT_PAGE, MADV_DONTNEED));
	ASSERT_EQ(PAGES, cached(self));

	f = faults_reading(_metadata, self, 0, 128, 1);
	EXPECT_GE(128 / 16 + 2, f) TH_LOG("cached pages, 16 a fault: %llu faults", (unsigned long long)f);

	/*
	 * 200 misses, one page each: a stride of 2 is no sequence, and 513 is
	 * not where the last window (of the write pass) ended.
	 */
	for (uint64_t i = 0; i < 200; i++)
		ASSERT_EQ(0, touch(self, PAGES + 1 + 2 * i));
	EXPECT_EQ(PAGES + 200, cached(self)) TH_LOG("single pages");

	/*
	 * Every other cached page (no sequence, so each fault guesses: it
	 * fetches first, finds the page cached, looks it up): 128 touches,
	 * 16 faults with fault-around (8 touches in its 16 pages); now 25
	 * faults map their page alone, then 103 touches take about 13.
	 */
	ASSERT_EQ(0, hbmt_stats_settled(self->r.fd, &st));
	fetches = st.fetches;
	evictions = st.evictions;
	f = faults_reading(_metadata, self, 128, 384, 2);
	EXPECT_LE(22, f) TH_LOG("after the misses a fault maps its page alone, 25 times: %llu faults",
				(unsigned long long)f);
	EXPECT_GE(25 + 103 / 8 + 6, f) TH_LOG("then fault-around is back: %llu faults",
					       (unsigned long long)f);
	f = faults_reading(_metadata, self, 384, 512, 1);
	EXPECT_GE(128 / 16 + 2, f) TH_LOG("back: 16 a fault: %llu faults", (unsigned long long)f);
	ASSERT_EQ(0, hbmt_stats_settled(self->r.fd, &st));
	EXPECT_EQ(fetches, st.fetches) TH_LOG("cached pages were fetched again");
	EXPECT_EQ(evictions, st.evictions);
	EXPECT_EQ(PAGES + 200, cached(self));
	EXPECT_EQ(0, st.errors);
	EXPECT_EQ(0, hbm_pattern_check(self->r.map, PAGES * HBMT_PAGE, 0, 64, NULL));
}

TEST_HARNESS_MAIN
