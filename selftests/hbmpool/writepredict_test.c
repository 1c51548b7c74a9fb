// SPDX-License-Identifier: GPL-2.0
/*
 * hbmpool write prediction (kmod/writepredict.c): a read fault maps its page
 * writable, in a shared writable mapping, when the page is dirty already
 * or when most recent read faults of the region were followed by a write to
 * their page; then a read followed by a write takes one fault, not two.
 * Read-only access keeps pages clean, a read-only mapping never gets a
 * writable page, the prediction follows the workload when it changes, the
 * write_predict parameter turns it off, and the data is exact either way.
 *
 * Faults are counted with getrusage() (minor and major faults: the read
 * faults and the write-protect faults alike).  Pages are touched in a scattered order
 * under MADV_RANDOM, so that each read fault fetches its own page and
 * nothing is read ahead or mapped around it.
 *
 * Node 74 belongs to this binary.
 */
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "kselftest_harness.h"
#include "hbmtest.h"

#define N_A	74		/* 8 MiB, distance 20 */
#define BUDGET	4096ULL
#define PAGES	1024ULL		/* the region: two 2 MiB chunks */
#define CHUNK	(2 * HBMT_MIB)
#define WP_PARAM	"/sys/module/hbmpool/parameters/write_predict"

FIXTURE(wp)
{
	struct hbmt_env env;
	struct hbmt_region r;
	char old_param[8];
};

FIXTURE_SETUP(wp)
{
	hbmt_env_setup(_metadata, &self->env, BUDGET, 5000);
	ASSERT_EQ(0, hbm_read_str(WP_PARAM, self->old_param, sizeof(self->old_param)))
		TH_LOG("%s: the module has no write prediction", WP_PARAM);
	ASSERT_EQ(0, hbm_write_str(WP_PARAM, "1"));
	hbmt_env_node(_metadata, &self->env, N_A, 8, 20, NULL);
	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, PAGES * HBMT_PAGE, CHUNK,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "wp"));
	ASSERT_EQ(0, madvise(self->r.map, PAGES * HBMT_PAGE, MADV_RANDOM));
}

FIXTURE_TEARDOWN(wp)
{
	hbmt_region_close(&self->r);
	if (self->old_param[0])
		EXPECT_EQ(0, hbm_write_str(WP_PARAM, self->old_param));
	hbmt_env_teardown(_metadata, &self->env);
}

/* The i-th page of a scattered order of the region's pages (7 is odd). */
static uint64_t scattered(uint64_t i)
{
	return (i * 7) % PAGES;
}

/* Faults of this thread: a fault that waited for the link is counted as major. */
static uint64_t minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_minflt + ru.ru_majflt;
}

static uint64_t dirty(FIXTURE_DATA(wp) *self)
{
	uint64_t v = UINT64_MAX;

	hbm_fdinfo_u64(self->r.fd, "dirty_pages", &v);
	return v;
}

/*
 * Reads the first word of pages scattered(from..to) and, if @write, adds
 * @add to it.  Returns the faults taken.
 */
static uint64_t pass(FIXTURE_DATA(wp) *self, uint64_t from, uint64_t to,
		     int write, uint64_t add)
{
	uint64_t f0 = minflt();

	for (uint64_t i = from; i < to; i++) {
		volatile uint64_t *w = (volatile uint64_t *)(self->r.map +
							      scattered(i) * HBMT_PAGE);
		uint64_t v = *w;

		if (write)
			*w = v + add;
	}
	return minflt() - f0;
}

/* Every page written back, unmapped and dropped from the cache. */
static void drop_all(struct __test_metadata *_metadata, FIXTURE_DATA(wp) *self)
{
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL));
	EXPECT_EQ(0, dirty(self));
	ASSERT_EQ(0, madvise(self->r.map, PAGES * HBMT_PAGE, MADV_DONTNEED));
	ASSERT_EQ(0, hbm_set_global_u64("cache_budget_pages", 16));
	ASSERT_EQ(0, hbmt_wait_global("cached_pages", HBMT_LE, 16, 5000, NULL));
	ASSERT_EQ(0, hbm_set_global_u64("cache_budget_pages", BUDGET));
}

/* After drop_all(), pages scattered(0..@npages) hold p + @base. */
static void check_home(struct __test_metadata *_metadata, FIXTURE_DATA(wp) *self,
		       uint64_t base, uint64_t npages)
{
	uint64_t bad = 0;

	drop_all(_metadata, self);
	for (uint64_t i = 0; i < npages; i++) {
		uint64_t p = scattered(i);

		if (*(volatile uint64_t *)(self->r.map + p * HBMT_PAGE) != p + base)
			bad++;
	}
	EXPECT_EQ(0, bad) TH_LOG("%llu pages do not hold what was written", (unsigned long long)bad);
}

/* Page p holds p at home, and nothing is cached: the first read of each page is a miss. */
static void home_filled(struct __test_metadata *_metadata, FIXTURE_DATA(wp) *self)
{
	for (uint64_t p = 0; p < PAGES; p++)
		*(uint64_t *)(self->r.map + p * HBMT_PAGE) = p;
	check_home(_metadata, self, 0, PAGES);
	drop_all(_metadata, self);
}

/*
 * Read then write, page by page: after the first 62 pages the score is
 * high and each page takes one fault, but one in 8 (a probe, read-only,
 * so that the prediction keeps being checked).  Without the prediction
 * (write_predict=0) each page takes two.
 */
TEST_F(wp, read_then_write_one_fault)
{
	uint64_t f;

	home_filled(_metadata, self);
	f = pass(self, 0, 100, 1, 1000);
	EXPECT_LE(100, f);
	f = pass(self, 100, 500, 1, 1000);
	EXPECT_LE(400, f) TH_LOG("a fault per page at least: %llu", (unsigned long long)f);
	EXPECT_GE(400 + 400 / 8 + 8, f) TH_LOG("predicted: one fault per page and the probes: %llu",
					      (unsigned long long)f);
	EXPECT_EQ(500, dirty(self));

	ASSERT_EQ(0, hbm_write_str(WP_PARAM, "0"));
	f = pass(self, 500, 700, 1, 1000);
	EXPECT_LE(2 * 200, f) TH_LOG("write_predict=0: two faults per page: %llu",
				     (unsigned long long)f);
	EXPECT_EQ(700, dirty(self));
	check_home(_metadata, self, 1000, 700);
}

/*
 * Reading only keeps a writable mapping's pages clean; a workload that
 * turns from read-then-write to reading turns the prediction off within a
 * few probes: from the top of the score (128) 22 probes, 8 faults apart,
 * take it to 64, so at most 176 reads dirty their page, and after that
 * none.  The pages dirtied by reads are written back unchanged.
 */
TEST_F(wp, reading_stays_clean)
{
	uint64_t d;

	home_filled(_metadata, self);
	pass(self, 0, 300, 0, 0);
	EXPECT_EQ(0, dirty(self)) TH_LOG("read faults never predicted a write");

	pass(self, 300, 600, 1, 1000);	/* the score to about 95 */
	EXPECT_EQ(300, dirty(self));
	pass(self, 600, 900, 0, 0);
	d = dirty(self) - 300;
	EXPECT_LT(0, d) TH_LOG("the first reads after the turn were predicted");
	EXPECT_GE(8 * 22, d) TH_LOG("%llu pages dirtied by reads after the turn",
				   (unsigned long long)d);
	pass(self, 900, PAGES, 0, 0);
	EXPECT_EQ(300 + d, dirty(self)) TH_LOG("reads went on dirtying pages");

	/* what was read, and written back if dirtied, is what the home had */
	check_home(_metadata, self, 0, 300);
	for (uint64_t i = 300; i < PAGES; i++) {
		uint64_t p = scattered(i);

		EXPECT_EQ(i < 600 ? p + 1000 : p, *(volatile uint64_t *)(self->r.map + p * HBMT_PAGE));
	}
}

/*
 * A page mapped writable by a predicted read fault, then written back
 * before anything writes it: the write-back write-protects it, so the
 * write that follows takes a fault, dirties the page again and reaches the
 * home with the next write-back.
 */
TEST_F(wp, writeback_between_read_and_write)
{
	uint64_t f, d;

	home_filled(_metadata, self);
	pass(self, 0, 200, 1, 1000);	/* the score high */
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL));
	ASSERT_EQ(0, dirty(self));
	pass(self, 200, 216, 0, 0);
	d = dirty(self);
	EXPECT_LE(16 - 3, d) TH_LOG("reads predicted: %llu of 16", (unsigned long long)d);
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL));
	EXPECT_EQ(0, dirty(self));
	f = minflt();
	for (uint64_t i = 200; i < 216; i++)
		*(volatile uint64_t *)(self->r.map + scattered(i) * HBMT_PAGE) += 7;
	f = minflt() - f;
	EXPECT_EQ(16, f) TH_LOG("each write after the write-back faults: %llu", (unsigned long long)f);
	EXPECT_EQ(16, dirty(self));
	check_home(_metadata, self, 1000, 200);
	for (uint64_t i = 200; i < 216; i++) {
		uint64_t p = scattered(i);

		EXPECT_EQ(p + 7, *(volatile uint64_t *)(self->r.map + p * HBMT_PAGE));
	}
}

/*
 * With the score high, a second, read-only mapping of the region gets its
 * pages read-only and clean: a write prediction is for a writable shared
 * mapping only.
 */
TEST_F(wp, read_only_mapping)
{
	uint8_t *ro;
	uint64_t f;

	home_filled(_metadata, self);
	pass(self, 0, 300, 1, 1000);
	ro = mmap(NULL, PAGES * HBMT_PAGE, PROT_READ, MAP_SHARED, self->r.fd, 0);
	ASSERT_NE(MAP_FAILED, ro);
	ASSERT_EQ(0, madvise(ro, PAGES * HBMT_PAGE, MADV_RANDOM));
	f = minflt();
	for (uint64_t i = 300; i < 600; i++) {
		uint64_t p = scattered(i);

		EXPECT_EQ(p, *(volatile uint64_t *)(ro + p * HBMT_PAGE));
	}
	f = minflt() - f;
	EXPECT_LE(300, f);
	EXPECT_EQ(300, dirty(self)) TH_LOG("reads through a read-only mapping dirtied pages");
	munmap(ro, PAGES * HBMT_PAGE);
	check_home(_metadata, self, 0, 0);
}

/*
 * A dirty page, unmapped, is mapped writable by its next read fault, with
 * or without the prediction: read then write takes one fault.  Every 16th
 * page, so that fault-around (which maps cached neighbours read-only) has
 * no neighbour to map.
 */
TEST_F(wp, dirty_page_mapped_writable)
{
	uint64_t f;

	ASSERT_EQ(0, hbm_write_str(WP_PARAM, "0"));
	for (uint64_t p = 0; p < PAGES; p += 16)
		*(uint64_t *)(self->r.map + p * HBMT_PAGE) = p;
	EXPECT_EQ(PAGES / 16, dirty(self));
	ASSERT_EQ(0, madvise(self->r.map, PAGES * HBMT_PAGE, MADV_DONTNEED));
	f = minflt();
	for (uint64_t p = 0; p < PAGES; p += 16) {
		volatile uint64_t *w = (volatile uint64_t *)(self->r.map + p * HBMT_PAGE);

		*w = *w + 5;
	}
	f = minflt() - f;
	EXPECT_EQ(PAGES / 16, f) TH_LOG("one fault per dirty page: %llu", (unsigned long long)f);
	EXPECT_EQ(PAGES / 16, dirty(self));
	drop_all(_metadata, self);
	for (uint64_t p = 0; p < PAGES; p += 16)
		EXPECT_EQ(p + 5, *(volatile uint64_t *)(self->r.map + p * HBMT_PAGE));
}

TEST_HARNESS_MAIN
