// SPDX-License-Identifier: GPL-2.0
/*
 * hbmpool failure paths through the simulated fabric's debugfs switches:
 * failed, hung and cancelled fetches give SIGBUS (and only to the page's
 * toucher), are counted, and the page works once the fault is cleared;
 * link down; node removal while mapped; failed write-back never loses data.
 *
 * Nodes 51..52 belong to this binary.
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "hbmtest.h"

#define N_A	51	/* 4 MiB, distance 20 */
#define N_B	52	/* 4 MiB, distance 30 */
#define BOTH	HBM_NODES(N_A, N_B)
#define BUDGET	256ULL
#define CHUNK	(16 * 1024ULL)	/* 4 pages: interleaved regions alternate often */

FIXTURE(fail)
{
	struct hbmt_env env;
	struct hbmt_region r;
};

FIXTURE_SETUP(fail)
{
	hbmt_env_setup(_metadata, &self->env, BUDGET, 5000);
	if (hbmt_debugfs_missing())
		SKIP(return, "%s", hbmt_debugfs_missing());
	hbmt_env_node(_metadata, &self->env, N_A, 4, 20, NULL);
	hbmt_env_node(_metadata, &self->env, N_B, 4, 30, NULL);
}

FIXTURE_TEARDOWN(fail)
{
	hbmt_region_close(&self->r);
	hbmt_env_teardown(_metadata, &self->env);
}

static uint8_t *pg(FIXTURE_DATA(fail) *self, uint64_t p)
{
	return self->r.map + p * HBMT_PAGE;
}

static void node_stats(unsigned int id, struct hbmpool_stats *st)
{
	char dir[128];

	snprintf(dir, sizeof(dir), HBM_SYSFS "/nodes/node%u/stats", id);
	memset(st, 0, sizeof(*st));
	hbm_read_stats_dir(dir, st);
}

/* fail_fetch=1: touching an uncached page (read or write) raises SIGBUS at that address and counts an error each time; cached pages keep working; after fail_fetch=0 the page works. */
TEST_F(fail, fail_fetch_sigbus)
{
	struct hbmpool_stats st, ns;
	void *addr = NULL;
	uint64_t v = 0;

	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, 16 * HBMT_PAGE, CHUNK,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "failfetch"));
	ASSERT_EQ(0, hbmt_probe_write(pg(self, 0), 0xabcdef, NULL));
	ASSERT_EQ(0, hbm_node_knob(N_A, "fail_fetch", 1));

	EXPECT_EQ(0, hbmt_probe_read(pg(self, 0), &v, NULL)) TH_LOG("cached page needs no fetch");
	EXPECT_EQ(0xabcdef, v);
	EXPECT_EQ(SIGBUS, hbmt_probe_read(pg(self, 1), &v, &addr));
	EXPECT_EQ(pg(self, 1), (uint8_t *)addr);
	ASSERT_EQ(0, hbm_region_stats(self->r.fd, &st));
	EXPECT_EQ(1, st.errors);
	EXPECT_EQ(0, st.timeouts);
	/* The next touch tries again (and fails again). */
	EXPECT_EQ(SIGBUS, hbmt_probe_read(pg(self, 1), &v, NULL));
	EXPECT_EQ(SIGBUS, hbmt_probe_write(pg(self, 2) + 8, 5, &addr));
	EXPECT_EQ(pg(self, 2) + 8, (uint8_t *)addr);
	ASSERT_EQ(0, hbm_region_stats(self->r.fd, &st));
	EXPECT_EQ(3, st.errors);
	EXPECT_EQ(1, st.fetches);
	EXPECT_EQ(1, hbm_hist_total(st.lat_hist, HBMPOOL_LAT_BUCKETS)) TH_LOG("failed fetches are not in the latency histogram");
	node_stats(N_A, &ns);
	EXPECT_EQ(3, ns.errors);

	ASSERT_EQ(0, hbm_node_knob(N_A, "fail_fetch", 0));
	EXPECT_EQ(0, hbmt_probe_read(pg(self, 1), &v, NULL));
	EXPECT_EQ(0, v);
	EXPECT_EQ(0, hbmt_probe_write(pg(self, 2) + 8, 5, NULL));
	EXPECT_EQ(0, hbmt_probe_read(pg(self, 2) + 8, &v, NULL));
	EXPECT_EQ(5, v);
	ASSERT_EQ(0, hbm_region_stats(self->r.fd, &st));
	EXPECT_EQ(3, st.errors);
	EXPECT_EQ(3, st.fetches);
}

/* fail_fetch on a page that was written, synced and evicted: SIGBUS, then after clearing the data comes back intact from HBM. */
TEST_F(fail, fail_fetch_keeps_hbm_data)
{
	const uint64_t n = 4 * 16;	/* 4x the minimum budget */
	uint64_t v = 0;

	ASSERT_EQ(0, hbm_set_global_u64("cache_budget_pages", 16));
	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, n * HBMT_PAGE, CHUNK,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "evicted"));
	hbm_pattern_fill(self->r.map, n * HBMT_PAGE, 0, 3);
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL));
	/* Touch the tail so the head is evicted. */
	for (int k = 0; k < 2; k++) {
		for (uint64_t p = n / 2; p < n; p++)
			(void)*(volatile uint8_t *)pg(self, p);
	}
	ASSERT_EQ(0, hbm_node_knob(N_A, "fail_fetch", 1));
	EXPECT_EQ(SIGBUS, hbmt_probe_read(pg(self, 0), &v, NULL));
	ASSERT_EQ(0, hbm_node_knob(N_A, "fail_fetch", 0));
	EXPECT_EQ(0, hbm_pattern_check(self->r.map, n * HBMT_PAGE, 0, 3, NULL));
}

/* hang_fetch=1 with fetch_timeout_ms=200: the toucher gets SIGBUS after the timeout (the test finishes), errors and timeouts count it; after hang_fetch=0 the page works. */
TEST_F(fail, hang_fetch_timeout)
{
	struct hbmpool_stats st;
	uint64_t v = 0, t0, t1;

	ASSERT_EQ(0, hbm_set_global_u64("fetch_timeout_ms", 200));
	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, 16 * HBMT_PAGE, CHUNK,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "hang"));
	ASSERT_EQ(0, hbm_node_knob(N_A, "hang_fetch", 1));
	t0 = hbm_now_ns();
	EXPECT_EQ(SIGBUS, hbmt_probe_read(pg(self, 3), &v, NULL));
	t1 = hbm_now_ns();
	TH_LOG("SIGBUS after %llu ms (timeout 200 ms)", (unsigned long long)((t1 - t0) / 1000000));
	ASSERT_EQ(0, hbm_region_stats(self->r.fd, &st));
	EXPECT_EQ(1, st.timeouts);
	EXPECT_EQ(1, st.errors);
	ASSERT_EQ(0, hbm_node_knob(N_A, "hang_fetch", 0));
	EXPECT_EQ(0, hbmt_probe_read(pg(self, 3), &v, NULL));
	EXPECT_EQ(0, v);
	EXPECT_EQ(0, hbmt_probe_write(pg(self, 3), 42, NULL));
}

/* A thread that reads one page: result is 0 or SIGBUS once done is set. */
struct toucher {
	uint8_t *addr;
	int result;
	volatile int started;
	volatile int done;
};

static void *toucher_thread(void *p)
{
	struct toucher *a = p;
	uint64_t v;

	a->started = 1;
	a->result = hbmt_probe_read(a->addr, &v, NULL);
	__atomic_store_n(&a->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * With a 20 s fetch timeout and hang_fetch=1 on N_A, open a 16-page region
 * there and start a toucher of page p: it parks on the hung fetch.  Returns
 * 300 ms after the thread started.
 */
static void park_toucher(struct __test_metadata *_metadata, FIXTURE_DATA(fail) *self,
			 struct toucher *a, pthread_t *t, uint64_t p, const char *name)
{
	ASSERT_EQ(0, hbm_set_global_u64("fetch_timeout_ms", 20000));
	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, 16 * HBMT_PAGE, CHUNK,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, name));
	ASSERT_EQ(0, hbm_node_knob(N_A, "hang_fetch", 1));
	a->addr = pg(self, p);
	ASSERT_EQ(0, pthread_create(t, NULL, toucher_thread, a));
	while (!a->started)
		hbmt_sleep_ms(10);
	hbmt_sleep_ms(300);
}

/* A fetch parked by hang_fetch is completed with ECANCELED when hang_fetch goes back to 0: the waiting thread gets SIGBUS without a timeout, and the next touch works. */
TEST_F(fail, hang_fetch_cancelled)
{
	struct toucher a = { 0 };
	struct hbmpool_stats st;
	pthread_t t;
	uint64_t v = 1;

	park_toucher(_metadata, self, &a, &t, 5, "cancel");
	/* Other pages of the region are not blocked by the parked fault's
	 * mmap_lock: a cached page of the same mapping can be read. */
	ASSERT_EQ(0, hbm_node_knob(N_A, "hang_fetch", 0));
	pthread_join(t, NULL);
	EXPECT_EQ(SIGBUS, a.result);
	ASSERT_EQ(0, hbm_region_stats(self->r.fd, &st));
	EXPECT_EQ(1, st.errors);
	EXPECT_EQ(0, st.timeouts) TH_LOG("cancelled long before the 20 s timeout");
	EXPECT_EQ(0, hbmt_probe_read(pg(self, 5), &v, NULL));
	EXPECT_EQ(0, v);
}

/* A node declared dead (node-set state fenced) fails the fetch parked on it at once, though its timeout is 10 minutes: SIGBUS; then every touch of its pages gets SIGBUS, its cached pages are gone, it shows fenced, fencing again is a no-op, and it can be deleted. */
TEST_F_TIMEOUT(fail, fence_fails_pending_at_once, 60)
{
	struct hbmpool_region_info ri;
	struct toucher a = { 0 };
	char state[32] = "";
	uint64_t v = 0;
	pthread_t t;

	park_toucher(_metadata, self, &a, &t, 5, "fence");
	ASSERT_EQ(0, hbm_set_global_u64("fetch_timeout_ms", 600000));
	/* page 0 cached before the fence: it goes with the node */
	ASSERT_EQ(0, hbm_node_knob(N_A, "hang_fetch", 0));
	/* the parked toucher was just cancelled: park another */
	pthread_join(t, NULL);
	ASSERT_EQ(0, hbmt_probe_write(pg(self, 0), 7, NULL));
	ASSERT_EQ(0, hbm_node_knob(N_A, "hang_fetch", 1));
	memset(&a, 0, sizeof(a));
	a.addr = pg(self, 9);
	ASSERT_EQ(0, pthread_create(&t, NULL, toucher_thread, &a));
	while (!a.started)
		hbmt_sleep_ms(10);
	hbmt_sleep_ms(300);
	EXPECT_EQ(0, __atomic_load_n(&a.done, __ATOMIC_SEQ_CST)) TH_LOG("parked");

	ASSERT_EQ(0, hbm_node_fence(N_A));
	pthread_join(t, NULL);	/* only the fence ends it: the timeout is 10 min */
	EXPECT_EQ(SIGBUS, a.result);
	ASSERT_EQ(0, hbm_node_str(N_A, "state", state, sizeof(state)));
	EXPECT_STREQ("fenced", state);
	EXPECT_EQ(SIGBUS, hbmt_probe_read(pg(self, 0), &v, NULL)) TH_LOG("its cached page is gone");
	EXPECT_EQ(SIGBUS, hbmt_probe_read(pg(self, 3), &v, NULL));
	ASSERT_EQ(0, hbm_region_info(self->r.fd, &ri, NULL, 0, NULL));
	EXPECT_EQ(0, ri.cached_pages);
	EXPECT_EQ(0, hbm_node_fence(N_A)) TH_LOG("again: nothing happens");
	EXPECT_EQ(-ENODEV, hbm_node_fence(13)) TH_LOG("no such node");
	hbmt_region_close(&self->r);
	EXPECT_EQ(0, hbm_node_del(N_A));
}

/* A fault waiting on the link does not hold mmap_lock: while one thread is parked on a hung fetch (20 s timeout), another maps, protects and unmaps memory (mmap_lock for writing) and finishes first; the parked thread ends only when the hang is cleared. */
TEST_F(fail, fault_wait_drops_mmap_lock)
{
	struct toucher a = { 0 };
	pthread_t t;
	int i;

	park_toucher(_metadata, self, &a, &t, 7, "mmaplock");
	for (i = 0; i < 16; i++) {
		void *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		ASSERT_NE(MAP_FAILED, m);
		ASSERT_EQ(0, mprotect(m, 4096, PROT_READ));
		ASSERT_EQ(0, munmap(m, 1 << 20));
	}
	EXPECT_EQ(0, __atomic_load_n(&a.done, __ATOMIC_SEQ_CST))
		TH_LOG("the parked fault ended before mmap() got mmap_lock: it held the lock while waiting");
	ASSERT_EQ(0, hbm_node_knob(N_A, "hang_fetch", 0));
	pthread_join(t, NULL);
	EXPECT_EQ(SIGBUS, a.result);
}

/* A write-back whose waiter timed out still lands where it was going and nowhere else: the region (and its HBM chunk) outlives its last fd until the transfer completes, so a region created meanwhile on the same node never sees the old data. */
TEST_F_TIMEOUT(fail, writeback_timeout_lands_in_its_own_chunk, 60)
{
	struct hbmt_region b = { .fd = -1 };
	struct hbmpool_range rg;
	uint64_t v = 1, nr;
	int ret;

	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, 4 * HBMT_PAGE, 4 * HBMT_PAGE,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "late"));
	memset(self->r.map, 0xa5, 4 * HBMT_PAGE);
	ASSERT_EQ(0, hbm_set_global_u64("fetch_timeout_ms", 10));
	ASSERT_EQ(0, hbm_node_knob(N_A, "latency_us", 1000000));
	ret = hbm_region_sync(self->r.fd, 0, HBMT_PAGE, &rg);
	EXPECT_EQ(-EIO, ret) TH_LOG("the 1 s write-back outlived a 10 ms timeout");
	hbmt_region_close(&self->r);
	ASSERT_EQ(0, hbm_node_knob(N_A, "latency_us", 0));
	ASSERT_EQ(0, hbm_set_global_u64("fetch_timeout_ms", 5000));

	/* The late write-back keeps the old region alive... */
	ASSERT_EQ(0, hbm_global_u64("nr_regions", &nr));
	EXPECT_EQ(1, nr);
	ASSERT_EQ(0, hbmt_region_open(&b, self->env.devfd, 4 * HBMT_PAGE, 4 * HBMT_PAGE,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "new"));
	/* ...until it lands (1 s), and it lands in the old chunk. */
	EXPECT_EQ(0, hbmt_wait_global("nr_regions", HBMT_LE, 1, 10000, &nr));
	EXPECT_EQ(0, hbmt_probe_read(b.map, &v, NULL));
	EXPECT_EQ(0, v) TH_LOG("a new region reads the old region's late write-back");
	hbmt_region_close(&b);
}

/* A memory error in a cached copy (MADV_HWPOISON) is not served again: the next fault on the page drops it with SIGBUS and counts an error, and the touch after that fetches the home's copy, which the sync made current. */
TEST_F(fail, poisoned_cache_page)
{
	struct hbmpool_stats st0, st1;
	uint64_t v = 0;
	void *addr = NULL;

	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, 4 * HBMT_PAGE, CHUNK,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "poison"));
	ASSERT_EQ(0, hbmt_probe_write(pg(self, 1), 0x5eed, NULL));
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL));
	/*
	 * The core cannot recover a page it does not know (EBUSY, "unknown
	 * page state"): it stays poisoned and cached, the case under test.
	 */
	if (madvise(pg(self, 1), HBMT_PAGE, MADV_HWPOISON) && errno != EBUSY)
		SKIP(return, "MADV_HWPOISON: %s (needs CONFIG_MEMORY_FAILURE and CAP_SYS_ADMIN)",
		     strerror(errno));
	/* a new mapping: the old PTE would still reach the page without a fault */
	ASSERT_EQ(0, munmap(self->r.map, self->r.len));
	self->r.map = mmap(NULL, self->r.len, PROT_READ | PROT_WRITE, MAP_SHARED,
			   self->r.fd, 0);
	ASSERT_NE(MAP_FAILED, self->r.map);
	ASSERT_EQ(0, hbm_region_stats(self->r.fd, &st0));
	EXPECT_EQ(SIGBUS, hbmt_probe_read(pg(self, 1), &v, &addr));
	EXPECT_EQ(pg(self, 1), (uint8_t *)addr);
	ASSERT_EQ(0, hbm_region_stats(self->r.fd, &st1));
	EXPECT_EQ(st0.errors + 1, st1.errors);
	EXPECT_EQ(0, hbmt_probe_read(pg(self, 1), &v, NULL));
	EXPECT_EQ(0x5eed, v) TH_LOG("the page came back from its home");
}

/* A dirty cached page with a memory error is never written back over the home's good copy: the sync drops it, counts an error and fails with EIO; the page reads back what the home had. */
TEST_F(fail, poisoned_dirty_page_not_written_back)
{
	struct hbmpool_stats st0, st1;
	uint64_t v = 0;

	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, 4 * HBMT_PAGE, CHUNK,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "poisondirty"));
	ASSERT_EQ(0, hbmt_probe_write(pg(self, 1), 0x5eed, NULL));
	ASSERT_EQ(0, hbmt_probe_write(pg(self, 2), 0x5eed, NULL));
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL));
	ASSERT_EQ(0, hbmt_probe_write(pg(self, 1), 0xbad, NULL));
	ASSERT_EQ(0, hbmt_probe_write(pg(self, 2), 0x900d, NULL));
	if (madvise(pg(self, 1), HBMT_PAGE, MADV_HWPOISON) && errno != EBUSY)
		SKIP(return, "MADV_HWPOISON: %s (needs CONFIG_MEMORY_FAILURE and CAP_SYS_ADMIN)",
		     strerror(errno));
	ASSERT_EQ(0, hbm_region_stats(self->r.fd, &st0));
	EXPECT_EQ(-EIO, hbm_region_sync(self->r.fd, 0, 0, NULL))
		TH_LOG("a sync that lost a page to a memory error reports it");
	ASSERT_EQ(0, hbm_region_stats(self->r.fd, &st1));
	EXPECT_EQ(st0.errors + 1, st1.errors);
	EXPECT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL)) TH_LOG("reported once");
	/* a new mapping: the old PTE would still reach the poisoned page */
	ASSERT_EQ(0, munmap(self->r.map, self->r.len));
	self->r.map = mmap(NULL, self->r.len, PROT_READ | PROT_WRITE, MAP_SHARED,
			   self->r.fd, 0);
	ASSERT_NE(MAP_FAILED, self->r.map);
	EXPECT_EQ(0, hbmt_probe_read(pg(self, 1), &v, NULL));
	EXPECT_EQ(0x5eed, v) TH_LOG("the poisoned page's data reached the home");
	EXPECT_EQ(0, hbmt_probe_read(pg(self, 2), &v, NULL));
	EXPECT_EQ(0x900d, v) TH_LOG("its neighbour was written back");
}

/* link_down=1: node state "down", its uncached pages SIGBUS at once (not a timeout) while the other node's pages work; link_down=0 restores it. */
TEST_F(fail, link_down)
{
	struct hbmpool_chunk_info ch[8];
	struct hbmpool_region_info ri;
	struct hbmpool_stats st;
	char state[16];
	uint64_t v = 0;

	ASSERT_EQ(0, hbm_set_global_u64("fetch_timeout_ms", 20000));
	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, 8 * CHUNK, CHUNK,
				      HBMPOOL_POLICY_INTERLEAVE, BOTH, 0, "link"));
	ASSERT_EQ(0, hbm_region_info(self->r.fd, &ri, ch, 8, NULL));
	ASSERT_EQ(N_A, ch[0].node);
	ASSERT_EQ(N_B, ch[1].node);
	ASSERT_EQ(0, hbm_node_knob(N_B, "link_down", 1));
	ASSERT_EQ(0, hbm_node_str(N_B, "state", state, sizeof(state)));
	EXPECT_STREQ("down", state);
	EXPECT_EQ(SIGBUS, hbmt_probe_read(self->r.map + CHUNK, &v, NULL));
	EXPECT_EQ(0, hbmt_probe_read(self->r.map, &v, NULL));
	EXPECT_EQ(0, hbmt_probe_write(self->r.map + 2 * CHUNK, 7, NULL));
	ASSERT_EQ(0, hbm_region_stats(self->r.fd, &st));
	EXPECT_EQ(1, st.errors);
	EXPECT_EQ(0, st.timeouts) TH_LOG("link down must fail at once, not time out");
	ASSERT_EQ(0, hbm_node_knob(N_B, "link_down", 0));
	ASSERT_EQ(0, hbm_node_str(N_B, "state", state, sizeof(state)));
	EXPECT_STREQ("up", state);
	EXPECT_EQ(0, hbmt_probe_read(self->r.map + CHUNK, &v, NULL));
	EXPECT_EQ(0, v);
}

static void del_node_while_mapped(struct __test_metadata *_metadata,
				  FIXTURE_DATA(fail) *self, int synced)
{
	const uint64_t len = 16 * CHUNK, npages = len / HBMT_PAGE;
	struct hbmpool_chunk_info ch[16];
	struct hbmpool_region_info ri;
	struct hbmpool_stats st;
	uint64_t n_b = 0, v, cap;
	struct stat sb;

	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, len, CHUNK,
				      HBMPOOL_POLICY_INTERLEAVE, BOTH, 0, "delnode"));
	ASSERT_EQ(0, hbm_region_info(self->r.fd, &ri, ch, 16, NULL));
	hbm_pattern_fill(self->r.map, len, 0, 0xde1);
	if (synced) {
		ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL));
	}
	ASSERT_EQ(0, hbm_node_del(N_B));
	if (stat(HBM_SYSFS "/nodes/node52", &sb) == 0) {
		char state[16];

		ASSERT_EQ(0, hbm_node_str(N_B, "state", state, sizeof(state)));
		EXPECT_STREQ("removed", state);
	}
	ASSERT_EQ(0, hbm_region_stats(self->r.fd, &st));
	for (uint64_t c = 0; c < 16; c++)
		n_b += ch[c].node == N_B;
	/* Dirty pages lost with the node are counted as errors. */
	EXPECT_EQ(synced ? 0 : n_b * (CHUNK / HBMT_PAGE), st.errors);

	for (uint64_t p = 0; p < npages; p++) {
		uint64_t c = p * HBMT_PAGE / CHUNK, val = 0;
		int ret = hbmt_probe_read(pg(self, p) + 16, &val, NULL);

		if (ch[c].node == N_B) {
			EXPECT_EQ(SIGBUS, ret) TH_LOG("page %llu of the removed node", (unsigned long long)p);
		} else {
			EXPECT_EQ(0, ret) TH_LOG("page %llu of the surviving node", (unsigned long long)p);
			EXPECT_EQ(0, hbm_pattern_check(pg(self, p), HBMT_PAGE, p * HBMT_PAGE, 0xde1, NULL))
				TH_LOG("page %llu", (unsigned long long)p);
		}
	}
	/* Once the region is gone, the node disappears and A's capacity is back. */
	hbmt_region_close(&self->r);
	EXPECT_EQ(0, hbmt_wait_gone(HBM_SYSFS "/nodes/node52", 5000));
	ASSERT_EQ(0, hbm_node_u64(N_A, "capacity_bytes", &cap));
	EXPECT_EQ(0, hbmt_wait_node(N_A, "free_bytes", HBMT_EQ, cap, 5000, &v));
	/* And the id can be used again. */
	EXPECT_EQ(0, hbm_node_add(N_B, 4, 30, NULL));
}

/* del_node while mapped (data synced): the node's pages SIGBUS, the other node's pages keep their exact data; the node goes away with the region. */
TEST_F(fail, del_node_while_mapped_synced)
{
	del_node_while_mapped(_metadata, self, 1);
}

/* del_node while mapped with dirty pages: those are lost and counted as errors, the rest as above. */
TEST_F(fail, del_node_while_mapped_dirty)
{
	del_node_while_mapped(_metadata, self, 0);
}

/* fail_writeback=1: SYNC fails with EIO, nothing is dropped (pages stay cached and dirty, data readable); after fail_writeback=0 SYNC succeeds and HBM holds the data. */
TEST_F(fail, fail_writeback_sync)
{
	const uint64_t n = 32;
	struct hbmpool_chunk_info ch[n * HBMT_PAGE / CHUNK];
	struct hbmpool_region_info ri;
	struct hbmpool_range rg;
	struct hbmpool_stats st;
	static uint8_t buf[32 * 4096];
	int ret;

	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, n * HBMT_PAGE, CHUNK,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "failwb"));
	hbm_pattern_fill(self->r.map, n * HBMT_PAGE, 0, 0xfa11);
	ASSERT_EQ(0, hbm_node_knob(N_A, "fail_writeback", 1));
	ret = hbm_region_sync(self->r.fd, 0, 0, &rg);
	EXPECT_EQ(-EIO, ret);
	EXPECT_EQ(n, rg.pages_failed);
	EXPECT_EQ(0, rg.pages_done);
	ASSERT_EQ(0, hbm_region_info(self->r.fd, &ri, NULL, 0, NULL));
	EXPECT_EQ(n, ri.dirty_pages);
	EXPECT_EQ(n, ri.cached_pages);
	ASSERT_EQ(0, hbm_region_stats(self->r.fd, &st));
	EXPECT_LE(1, st.errors);
	EXPECT_EQ(0, st.writebacks);
	EXPECT_EQ(0, hbm_pattern_check(self->r.map, n * HBMT_PAGE, 0, 0xfa11, NULL));

	ASSERT_EQ(0, hbm_node_knob(N_A, "fail_writeback", 0));
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, &rg));
	EXPECT_EQ(n, rg.pages_done);
	ASSERT_EQ(0, hbm_region_info(self->r.fd, &ri, ch, n * HBMT_PAGE / CHUNK, NULL));
	EXPECT_EQ(0, ri.dirty_pages);
	for (uint64_t c = 0; c < n * HBMT_PAGE / CHUNK; c++) {
		ASSERT_EQ((ssize_t)CHUNK, hbm_hbm_pread(ch[c].node, buf + c * CHUNK, CHUNK,
							ch[c].node_offset));
	}
	EXPECT_EQ(0, hbm_pattern_check(buf, n * HBMT_PAGE, 0, 0xfa11, NULL));
}

/* fail_writeback=1 under cache pressure (region 4x the budget, all dirty): no SIGBUS, the cache goes over budget (over_budget counts it) instead of dropping data; every byte reads back; after clearing, SYNC succeeds and the cache returns within budget. */
TEST_F_TIMEOUT(fail, fail_writeback_under_pressure, 120)
{
	const uint64_t budget = 32, n = 4 * budget;
	uint64_t ob0 = 0, ob1 = 0, v;
	int bus = 0;

	ASSERT_EQ(0, hbm_set_global_u64("cache_budget_pages", budget));
	ASSERT_EQ(0, hbm_global_u64("stats/over_budget", &ob0));
	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, n * HBMT_PAGE, CHUNK,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "pressure"));
	ASSERT_EQ(0, hbm_node_knob(N_A, "fail_writeback", 1));
	for (uint64_t p = 0; p < n; p++) {
		if (hbmt_probe_write(pg(self, p), 1, NULL))
			bus++;
		else
			hbm_pattern_fill(pg(self, p), HBMT_PAGE, p * HBMT_PAGE, 0x9e55);
	}
	EXPECT_EQ(0, bus) TH_LOG("SIGBUS while the cache could not write back");
	EXPECT_EQ(0, hbm_pattern_check(self->r.map, n * HBMT_PAGE, 0, 0x9e55, NULL));
	ASSERT_EQ(0, hbm_global_u64("stats/over_budget", &ob1));
	EXPECT_LT(ob0, ob1);
	ASSERT_EQ(0, hbm_global_u64("cached_pages", &v));
	EXPECT_LT(budget, v);

	ASSERT_EQ(0, hbm_node_knob(N_A, "fail_writeback", 0));
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL));
	EXPECT_EQ(0, hbmt_wait_global("cached_pages", HBMT_LE, budget, 10000, &v))
		TH_LOG("%llu cached", (unsigned long long)v);
	EXPECT_EQ(0, hbm_pattern_check(self->r.map, n * HBMT_PAGE, 0, 0x9e55, NULL));
}

TEST_HARNESS_MAIN
