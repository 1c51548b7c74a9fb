// SPDX-License-Identifier: GPL-2.0
/*
 * hbmpool concurrent faults: threads on the same pages (one fetch per page),
 * threads on different pages, threads racing the evictor, fork with the
 * mapping shared, and two processes mapping one region through an inherited
 * fd and through SCM_RIGHTS.
 *
 * Nodes 41..42 belong to this binary.
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "hbmtest.h"

#define N_A	41
#define N_B	42
#define BOTH	HBM_NODES(N_A, N_B)
#define NPAGES	256ULL
#define LEN	(NPAGES * HBMT_PAGE)
#define CHUNK	(64 * 1024ULL)
#define NTHREADS 8

FIXTURE(conc)
{
	struct hbmt_env env;
	struct hbmt_region r;
};

FIXTURE_SETUP(conc)
{
	hbmt_env_setup(_metadata, &self->env, 4 * NPAGES, 5000);
	hbmt_env_node(_metadata, &self->env, N_A, 8, 20, NULL);
	hbmt_env_node(_metadata, &self->env, N_B, 8, 20, NULL);
	/* Slow the link a little so faults on a page really overlap. */
	if (!hbmt_debugfs_missing()) {
		hbm_node_knob(N_A, "latency_us", 200);
		hbm_node_knob(N_B, "latency_us", 200);
	}
	ASSERT_EQ(0, hbmt_region_open(&self->r, self->env.devfd, LEN, CHUNK,
				      HBMPOOL_POLICY_INTERLEAVE, BOTH, 0, "conc"));
}

FIXTURE_TEARDOWN(conc)
{
	hbmt_region_close(&self->r);
	hbmt_env_teardown(_metadata, &self->env);
}

struct worker {
	pthread_t tid;
	int idx;
	int stagger;		/* start at a different page per thread */
	int own_slice;		/* only touch pages of one's own slice */
	int passes;
	uint8_t *map;
	uint64_t npages;
	uint64_t seed;
	pthread_barrier_t *bar;
};

static uint64_t slot_val(uint64_t page, int t, uint64_t seed)
{
	return hbm_pattern_word(page * HBMT_PAGE + 8 * (uint64_t)t, seed) | 1;
}

static void *shared_pages_worker(void *arg)
{
	struct worker *w = arg;

	pthread_barrier_wait(w->bar);
	for (uint64_t i = 0; i < w->npages; i++) {
		uint64_t p = (i + (w->stagger ? (uint64_t)w->idx * w->npages / NTHREADS : 0)) % w->npages;
		volatile uint64_t *slot = (volatile uint64_t *)(w->map + p * HBMT_PAGE) + w->idx;

		*slot = slot_val(p, w->idx, w->seed);
	}
	return NULL;
}

static void run_shared(struct __test_metadata *_metadata, FIXTURE_DATA(conc) *self,
		       int stagger)
{
	struct worker w[NTHREADS];
	pthread_barrier_t bar;
	struct hbmpool_stats st;

	pthread_barrier_init(&bar, NULL, NTHREADS);
	for (int t = 0; t < NTHREADS; t++) {
		w[t] = (struct worker){ .idx = t, .stagger = stagger, .map = self->r.map,
					.npages = NPAGES, .seed = 9, .bar = &bar };
		ASSERT_EQ(0, pthread_create(&w[t].tid, NULL, shared_pages_worker, &w[t]));
	}
	for (int t = 0; t < NTHREADS; t++)
		pthread_join(w[t].tid, NULL);
	pthread_barrier_destroy(&bar);

	for (uint64_t p = 0; p < NPAGES; p++) {
		const uint64_t *pg = (const uint64_t *)(self->r.map + p * HBMT_PAGE);

		for (int t = 0; t < NTHREADS; t++) {
			ASSERT_EQ(slot_val(p, t, 9), pg[t]) TH_LOG("page %llu slot %d lost",
								  (unsigned long long)p, t);
		}
		for (uint64_t k = NTHREADS; k < HBMT_PAGE / 8; k++) {
			ASSERT_EQ(0, pg[k]);
		}
	}
	ASSERT_EQ(0, hbm_region_stats(self->r.fd, &st));
	EXPECT_EQ(NPAGES, st.fetches) TH_LOG("concurrent faults on one page must fetch it once");
	EXPECT_LE(NPAGES, st.faults);
	EXPECT_EQ(0, st.errors);
	EXPECT_EQ(0, st.evictions);
}

/* 8 threads write their own slot of every page in the same order: no write lost, exactly one fetch per page. */
TEST_F(conc, same_pages_same_order)
{
	run_shared(_metadata, self, 0);
}

/* Same, each thread starting at a different page, so faults collide at random points. */
TEST_F(conc, same_pages_staggered)
{
	run_shared(_metadata, self, 1);
}

static void *slice_worker(void *arg)
{
	struct worker *w = arg;
	uint64_t per = w->npages / NTHREADS;
	uint8_t *base = w->map + (uint64_t)w->idx * per * HBMT_PAGE;

	pthread_barrier_wait(w->bar);
	for (uint64_t p = 0; p < per; p++)
		hbm_pattern_fill(base + p * HBMT_PAGE, HBMT_PAGE,
				 ((uint64_t)w->idx * per + p) * HBMT_PAGE, w->seed);
	return NULL;
}

/* 8 threads fill disjoint slices in parallel: every byte exact, one fetch per page. */
TEST_F(conc, different_pages)
{
	struct worker w[NTHREADS];
	pthread_barrier_t bar;
	struct hbmpool_stats st;
	uint64_t bad = 0;
	size_t nbad;

	pthread_barrier_init(&bar, NULL, NTHREADS);
	for (int t = 0; t < NTHREADS; t++) {
		w[t] = (struct worker){ .idx = t, .map = self->r.map, .npages = NPAGES,
					.seed = 1234, .bar = &bar };
		ASSERT_EQ(0, pthread_create(&w[t].tid, NULL, slice_worker, &w[t]));
	}
	for (int t = 0; t < NTHREADS; t++)
		pthread_join(w[t].tid, NULL);
	pthread_barrier_destroy(&bar);
	nbad = hbm_pattern_check(self->r.map, LEN, 0, 1234, &bad);
	EXPECT_EQ(0, nbad) TH_LOG("first bad byte at %llu", (unsigned long long)bad);
	ASSERT_EQ(0, hbm_region_stats(self->r.fd, &st));
	EXPECT_EQ(NPAGES, st.fetches);
	EXPECT_EQ(0, st.errors);
}

static void *evict_worker(void *arg)
{
	struct worker *w = arg;
	uint32_t *perm = calloc(w->npages, sizeof(*perm));

	if (!perm)
		return (void *)1;
	pthread_barrier_wait(w->bar);
	for (int pass = 0; pass < w->passes; pass++) {
		hbm_permutation(perm, w->npages, (uint64_t)w->idx * 1000 + (uint64_t)pass + 1);
		for (uint64_t i = 0; i < w->npages; i++) {
			volatile uint64_t *slot =
				(volatile uint64_t *)(w->map + perm[i] * HBMT_PAGE) + w->idx;

			*slot = *slot + 1;
		}
	}
	free(perm);
	return NULL;
}

/* 4 threads increment their own counter in every page, random order, with a 16-page budget: eviction and write-back racing faults lose no increment. */
TEST_F_TIMEOUT(conc, racing_the_evictor, 120)
{
	const int nthr = 4, passes = 3;
	struct worker w[4];
	pthread_barrier_t bar;
	struct hbmpool_stats st;
	uint64_t v;

	ASSERT_EQ(0, hbm_set_global_u64("cache_budget_pages", 16));
	if (!hbmt_debugfs_missing()) {
		hbm_node_knob(N_A, "latency_us", 0);
		hbm_node_knob(N_B, "latency_us", 0);
	}
	pthread_barrier_init(&bar, NULL, (unsigned int)nthr);
	for (int t = 0; t < nthr; t++) {
		w[t] = (struct worker){ .idx = t, .map = self->r.map, .npages = NPAGES / 2,
					.passes = passes, .bar = &bar };
		ASSERT_EQ(0, pthread_create(&w[t].tid, NULL, evict_worker, &w[t]));
	}
	for (int t = 0; t < nthr; t++) {
		void *ret;

		pthread_join(w[t].tid, &ret);
		EXPECT_EQ(NULL, ret);
	}
	pthread_barrier_destroy(&bar);
	for (uint64_t p = 0; p < NPAGES / 2; p++) {
		const uint64_t *pg = (const uint64_t *)(self->r.map + p * HBMT_PAGE);

		for (int t = 0; t < nthr; t++) {
			ASSERT_EQ((uint64_t)passes, pg[t]) TH_LOG("page %llu thread %d",
								  (unsigned long long)p, t);
		}
	}
	ASSERT_EQ(0, hbmt_stats_settled(self->r.fd, &st));
	EXPECT_LT(0, st.evictions);
	EXPECT_EQ(0, st.errors);
	EXPECT_EQ(st.fetches, hbm_hist_total(st.lat_hist, HBMPOOL_LAT_BUCKETS));
	EXPECT_EQ(0, hbmt_wait_global("cached_pages", HBMT_LE, 16, 5000, &v));
}

static int wait_child(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/*
 * The child's side of a two-process test on a LEN mapping m: write the
 * first half with seed mine, tell the parent (wfd), wait for its answer
 * (rfd), then check the second half, which the parent wrote with seed
 * theirs.  Exits 0 if it matches, 1 if not, 2 if the pipe failed.
 */
static void __attribute__((noreturn)) child_swap_halves(uint8_t *m, int wfd, int rfd,
							uint64_t mine, uint64_t theirs)
{
	const uint64_t half = LEN / 2;
	char c = 0;

	hbm_pattern_fill(m, half, 0, mine);
	if (write(wfd, "x", 1) != 1 || read(rfd, &c, 1) != 1)
		_exit(2);
	_exit(hbm_pattern_check(m + half, half, half, theirs, NULL) == 0 ? 0 : 1);
}

/* fork with the mapping shared: the child's writes are seen by the parent and the parent's by the child, one fetch per page overall. */
TEST_F(conc, fork_shared_mapping)
{
	int to_child[2], to_parent[2];
	struct hbmpool_stats st;
	const uint64_t half = LEN / 2;
	char c = 0;
	pid_t pid;

	/* Some pages cached and mapped before the fork, most not. */
	for (uint64_t p = 0; p < NPAGES; p += 4)
		(void)*(volatile uint8_t *)(self->r.map + p * HBMT_PAGE);
	ASSERT_EQ(0, pipe(to_child));
	ASSERT_EQ(0, pipe(to_parent));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		child_swap_halves(self->r.map, to_parent[1], to_child[0], 0xc41d, 0xa7e7);
	ASSERT_EQ(1, read(to_parent[0], &c, 1));
	EXPECT_EQ(0, hbm_pattern_check(self->r.map, half, 0, 0xc41d, NULL))
		TH_LOG("parent does not see the child's writes");
	hbm_pattern_fill(self->r.map + half, half, half, 0xa7e7);
	ASSERT_EQ(1, write(to_child[1], "y", 1));
	EXPECT_EQ(0, wait_child(pid)) TH_LOG("child did not see the parent's writes");
	ASSERT_EQ(0, hbm_region_stats(self->r.fd, &st));
	EXPECT_EQ(NPAGES, st.fetches);
	close(to_child[0]); close(to_child[1]);
	close(to_parent[0]); close(to_parent[1]);
}

/* A child that inherits only the fd maps the region itself; both processes see each other's writes. */
TEST_F(conc, fork_inherited_fd_own_mapping)
{
	int to_child[2], to_parent[2];
	const uint64_t half = LEN / 2;
	char c = 0;
	pid_t pid;

	ASSERT_EQ(0, pipe(to_child));
	ASSERT_EQ(0, pipe(to_parent));
	munmap(self->r.map, LEN);
	self->r.map = NULL;
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		uint8_t *m = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, self->r.fd, 0);

		if (m == MAP_FAILED)
			_exit(3);
		child_swap_halves(m, to_parent[1], to_child[0], 0x11, 0x22);
	}
	ASSERT_EQ(1, read(to_parent[0], &c, 1));
	self->r.map = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, self->r.fd, 0);
	ASSERT_NE(MAP_FAILED, self->r.map);
	EXPECT_EQ(0, hbm_pattern_check(self->r.map, half, 0, 0x11, NULL));
	hbm_pattern_fill(self->r.map + half, half, half, 0x22);
	ASSERT_EQ(1, write(to_child[1], "y", 1));
	EXPECT_EQ(0, wait_child(pid));
	close(to_child[0]); close(to_child[1]);
	close(to_parent[0]); close(to_parent[1]);
}

static int send_fd(int sock, int fd, uint32_t id)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &id, sizeof(id) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;

	memset(cbuf, 0, sizeof(cbuf));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == sizeof(id) ? 0 : -1;
}

static int recv_fd(int sock, uint32_t *id)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { id, sizeof(*id) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &msg, 0) != sizeof(*id))
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* An unrelated process (forked before the region existed) gets the fd by SCM_RIGHTS, sees the same region id and shares the data both ways. */
TEST_F(conc, scm_rights)
{
	const uint64_t half = LEN / 2;
	struct hbmt_region r2;
	int sv[2];
	char c = 0;
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct hbmpool_region_info ri;
		uint32_t id = 0;
		uint8_t *m;
		int fd = recv_fd(sv[1], &id);

		if (fd < 0)
			_exit(3);
		if (hbm_region_info(fd, &ri, NULL, 0, NULL) || ri.region_id != id || ri.length != LEN)
			_exit(4);
		m = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			_exit(5);
		child_swap_halves(m, sv[1], sv[1], 0x5c, 0x5d);
	}
	/* A fresh region, created after the fork. */
	ASSERT_EQ(0, hbmt_region_open(&r2, self->env.devfd, LEN, CHUNK,
				      HBMPOOL_POLICY_BIND, BOTH, 0, "scm"));
	ASSERT_EQ(0, send_fd(sv[0], r2.fd, r2.id));
	ASSERT_EQ(1, read(sv[0], &c, 1));
	EXPECT_EQ(0, hbm_pattern_check(r2.map, half, 0, 0x5c, NULL));
	hbm_pattern_fill(r2.map + half, half, half, 0x5d);
	ASSERT_EQ(1, write(sv[0], "y", 1));
	EXPECT_EQ(0, wait_child(pid));
	hbmt_region_close(&r2);
	close(sv[0]);
	close(sv[1]);
}

TEST_HARNESS_MAIN
