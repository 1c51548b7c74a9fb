// SPDX-License-Identifier: GPL-2.0
/*
 * hbmpool region lifecycle: 10,000 regions created, touched and destroyed
 * leave every counter at its starting value and no memory behind; a region
 * lives exactly as long as its last fd or mapping; fd exhaustion (EMFILE)
 * after the reservation leaks nothing.
 *
 * Node 56 belongs to this binary.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "hbmtest.h"

#define N_A	56
#define CAP_MIB	16

FIXTURE(life)
{
	struct hbmt_env env;
	struct hbmt_region r;
	uint64_t cap;
	uint64_t nr0;
};

FIXTURE_SETUP(life)
{
	hbmt_env_setup(_metadata, &self->env, 256, 5000);
	hbmt_env_node(_metadata, &self->env, N_A, CAP_MIB, 20, NULL);
	ASSERT_EQ(0, hbm_node_u64(N_A, "capacity_bytes", &self->cap));
	ASSERT_EQ(0, hbm_global_u64("nr_regions", &self->nr0));
}

FIXTURE_TEARDOWN(life)
{
	hbmt_region_close(&self->r);
	hbmt_env_teardown(_metadata, &self->env);
}

/* One region: create, map, write and read back one page, unmap, close. */
static int one_region(int devfd, uint64_t i)
{
	struct hbmt_region r;
	volatile uint64_t *p;
	int ret;

	ret = hbmt_region_open(&r, devfd, 2 * HBMT_PAGE, HBMT_PAGE, HBMPOOL_POLICY_BIND,
			       HBM_NODES(N_A), 0, "life");
	if (ret)
		return ret;
	p = (volatile uint64_t *)(r.map + (i & 1) * HBMT_PAGE);
	*p = i;
	ret = *p == i ? 0 : -EIO;
	hbmt_region_close(&r);
	return ret;
}

static void expect_idle(struct __test_metadata *_metadata, FIXTURE_DATA(life) *self)
{
	uint64_t v;

	EXPECT_EQ(0, hbmt_wait_global("nr_regions", HBMT_EQ, self->nr0, 5000, &v))
		TH_LOG("nr_regions %llu, want %llu", (unsigned long long)v,
		       (unsigned long long)self->nr0);
	EXPECT_EQ(0, hbmt_wait_global("cached_pages", HBMT_EQ, 0, 5000, &v))
		TH_LOG("cached_pages %llu", (unsigned long long)v);
	EXPECT_EQ(0, hbmt_wait_global("dirty_pages", HBMT_EQ, 0, 5000, &v))
		TH_LOG("dirty_pages %llu", (unsigned long long)v);
	EXPECT_EQ(0, hbmt_wait_node(N_A, "free_bytes", HBMT_EQ, self->cap, 5000, &v))
		TH_LOG("free_bytes %llu of %llu", (unsigned long long)v,
		       (unsigned long long)self->cap);
}

/*
 * 10,000 regions, each touched once: afterwards nr_regions, cached_pages, dirty_pages and free_bytes are back, and unreclaimable slab / available memory did not grow by a per-region leak.
 * On a KASAN kernel (make check-debug) 2,000, and the memory is only
 * logged: KASAN's quarantine keeps freed objects (tens of MB of slab), and
 * kmemleak, which the debug rig runs after the tests, finds the leaks.
 */
TEST_F_TIMEOUT(life, ten_thousand_regions, 300)
{
	const bool kasan = hbmt_kernel_config("CONFIG_KASAN") == 1;
	const uint64_t n = kasan ? 2000 : 10000;
	int64_t sunr0, sunr1, avail0, avail1;
	uint64_t t0;
	int ret;

	/* Warm the slab caches so they do not count as growth. */
	for (uint64_t i = 0; i < 200; i++) {
		ASSERT_EQ(0, one_region(self->env.devfd, i));
	}
	expect_idle(_metadata, self);
	sunr0 = hbmt_meminfo_kb("SUnreclaim");
	avail0 = hbmt_meminfo_kb("MemAvailable");
	ASSERT_LT(0, sunr0);

	t0 = hbm_now_ns();
	for (uint64_t i = 0; i < n; i++) {
		ret = one_region(self->env.devfd, i);
		ASSERT_EQ(0, ret) TH_LOG("region %llu: %s", (unsigned long long)i, strerror(-ret));
	}
	TH_LOG("%llu regions in %llu ms", (unsigned long long)n,
	       (unsigned long long)((hbm_now_ns() - t0) / 1000000));
	expect_idle(_metadata, self);

	sunr1 = hbmt_meminfo_kb("SUnreclaim");
	avail1 = hbmt_meminfo_kb("MemAvailable");
	TH_LOG("SUnreclaim %+lld kB, MemAvailable %+lld kB", (long long)(sunr1 - sunr0),
	       (long long)(avail1 - avail0));
	if (kasan) {
		TH_LOG("KASAN: slab and memory growth not judged (quarantine); kmemleak judges");
		return;
	}
	/* A leak of 200 bytes per region is 2 MB; one page per region 40 MB. */
	EXPECT_LT(sunr1 - sunr0, 2048) TH_LOG("unreclaimable slab grew");
	EXPECT_LT(avail0 - avail1, 24 * 1024) TH_LOG("available memory shrank");
}

/* Closing the fd keeps the region while it is mapped (data intact, still counted); the munmap frees it and its capacity. */
TEST_F(life, mapping_outlives_fd)
{
	uint64_t v;
	char path[128];
	int fd;

	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, 64 * HBMT_PAGE, 0,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "map"));
	hbm_pattern_fill(self->r.map, self->r.len, 0, 8);
	close(self->r.fd);
	self->r.fd = -1;
	hbmt_sleep_ms(100);
	ASSERT_EQ(0, hbm_global_u64("nr_regions", &v));
	EXPECT_EQ(self->nr0 + 1, v);
	/* the mapping's file is the region: open it again, it is the same one */
	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx",
		 (unsigned long)self->r.map, (unsigned long)self->r.map + self->r.len);
	fd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("%s: %s", path, strerror(errno));
	ASSERT_EQ(0, hbm_fdinfo_u64(fd, "hbmpool-region", &v));
	EXPECT_EQ(self->r.id, v);
	close(fd);
	EXPECT_EQ(0, hbm_pattern_check(self->r.map, self->r.len, 0, 8, NULL));
	hbm_pattern_fill(self->r.map, self->r.len, 0, 9);
	EXPECT_EQ(0, hbm_pattern_check(self->r.map, self->r.len, 0, 9, NULL));
	munmap(self->r.map, self->r.len);
	self->r.map = NULL;
	expect_idle(_metadata, self);
}

/* Unmapping keeps the region while the fd is open: a new mapping sees the old data; close frees it. */
TEST_F(life, fd_outlives_mapping)
{
	uint64_t v;

	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, 64 * HBMT_PAGE, 0,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "fd"));
	hbm_pattern_fill(self->r.map, self->r.len, 0, 10);
	munmap(self->r.map, self->r.len);
	self->r.map = mmap(NULL, self->r.len, PROT_READ | PROT_WRITE, MAP_SHARED, self->r.fd, 0);
	ASSERT_NE(MAP_FAILED, self->r.map);
	EXPECT_EQ(0, hbm_pattern_check(self->r.map, self->r.len, 0, 10, NULL));
	munmap(self->r.map, self->r.len);
	self->r.map = NULL;
	ASSERT_EQ(0, hbm_global_u64("nr_regions", &v));
	EXPECT_EQ(self->nr0 + 1, v);
	close(self->r.fd);
	self->r.fd = -1;
	expect_idle(_metadata, self);
}

/* A child holding the only remaining fd keeps the region alive after the parent closes it; the child's exit frees it. */
TEST_F(life, child_holds_last_fd)
{
	int p[2];
	char c;
	pid_t pid;
	uint64_t v;

	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, 16 * HBMT_PAGE, 0,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "child"));
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(p[1]);
		(void)!read(p[0], &c, 1);	/* until the parent says so */
		_exit(0);
	}
	close(p[0]);
	hbmt_region_close(&self->r);
	hbmt_sleep_ms(100);
	ASSERT_EQ(0, hbm_global_u64("nr_regions", &v));
	EXPECT_EQ(self->nr0 + 1, v);
	close(p[1]);
	waitpid(pid, NULL, 0);
	expect_idle(_metadata, self);
}

/* 256 live regions at once: counted, one cached page each; all freed after closing. */
TEST_F(life, many_live_regions)
{
	static struct hbmt_region rs[256];
	uint64_t v;

	/* Well above 256 pages: the evictor starts at 15/16 of the budget. */
	ASSERT_EQ(0, hbm_set_global_u64("cache_budget_pages", 1024));
	for (int i = 0; i < 256; i++) {
		ASSERT_EQ(0, hbmt_region_open(&rs[i], self->env.devfd, HBMT_PAGE, HBMT_PAGE,
					      HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "many"));
		rs[i].map[0] = (uint8_t)i;
	}
	ASSERT_EQ(0, hbm_global_u64("nr_regions", &v));
	EXPECT_EQ(self->nr0 + 256, v);
	ASSERT_EQ(0, hbm_global_u64("cached_pages", &v));
	EXPECT_EQ(256, v);
	ASSERT_EQ(0, hbm_node_u64(N_A, "free_bytes", &v));
	EXPECT_EQ(self->cap - 256 * HBMT_PAGE, v);
	for (int i = 0; i < 256; i++) {
		EXPECT_EQ((uint8_t)i, rs[i].map[0]);
		hbmt_region_close(&rs[i]);
	}
	expect_idle(_metadata, self);
}

/* With RLIMIT_NOFILE reached, CREATE fails with EMFILE and neither the reservation nor a region leaks. */
TEST_F(life, emfile_leaks_nothing)
{
	struct rlimit rl = { 32, 32 };
	struct hbmpool_region_create rc;
	int fds[64], n = 0, fd;

	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	for (;;) {
		hbm_create_init(&rc, HBMT_PAGE, HBMT_PAGE, HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0, "emfile");
		fd = hbm_region_create(self->env.devfd, &rc);
		if (fd < 0)
			break;
		ASSERT_LT(n, 64);
		fds[n++] = fd;
	}
	EXPECT_EQ(-EMFILE, fd);
	EXPECT_LT(0, n);
	for (int i = 0; i < n; i++)
		close(fds[i]);
	expect_idle(_metadata, self);
}

TEST_HARNESS_MAIN
