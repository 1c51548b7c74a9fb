// SPDX-License-Identifier: GPL-2.0
/*
 * Replicated regions (struct hbmpool_region_create.replicas; design.rst,
 * "Replicated regions") on simulated nodes:
 *
 *  - create: replicas 0 (= 1), 2, 4 accepted, 5 and more copies than nodes
 *    in the set refused (EINVAL), pad/reserved non-zero refused (EINVAL);
 *    REGION_INFO reports replicas, every chunk's good_copies, and region-get
 *    (netlink, with chunks) shows the copies on distinct nodes of the set;
 *  - failure domains: with domains 1,1,2,2 a 2-copy region has a copy in
 *    each domain, a 3-copy region does not fit (ENOSPC);
 *  - a write-back one copy misses (fail_writeback) succeeds and outdates
 *    that copy (degraded, outdated-node-id); re-replication (resync jobs of
 *    kind replicate) brings the region back to full strength and the new
 *    copy holds the data;
 *  - a write-back every copy misses fails (EIO), the pages stay dirty, and
 *    nothing is lost once it is retried;
 *  - a fetch whose copy fails is served by the other copy (no SIGBUS); with
 *    every copy failing the toucher gets SIGBUS;
 *  - the same failover for waiters outside a retryable fault (reads
 *    through /proc/self/mem, REGION_PREFETCH): every page comes, none
 *    counted failed; with every copy failing, prefetch counts them all
 *    failed and reads through /proc/self/mem (two readers at once, page
 *    by page) fail with EIO at once; with three copies, the first failing and the second timing
 *    out, such a read gets the third's data; with two copies both timing
 *    out while write-backs clear their suspect marks, it gets EIO after one
 *    timeout per copy;
 *  - a fenced node's copies stop being good: the data stays readable from
 *    the other copies and re-replication replaces them, also in a chunk
 *    where failed fetches left pages cached;
 *  - replicas 1 keeps the old behaviour: a failed home gives SIGBUS.
 *
 * Nodes 80..84 belong to this binary.  The whole binary is skipped (exit 4)
 * on a kernel without HBMPOOL_FEAT_REPLICAS.
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "hbmtest.h"
#include "hbmnl.h"

#define N_A	80	/* 8 MiB, distance 20 */
#define N_B	81	/* 8 MiB, distance 30 */
#define N_C	82	/* 8 MiB, distance 40 */
#define N_D	83	/* 8 MiB, distance 50 */
#define N_E	84	/* 8 MiB, distance 60: only the filler region, to evict */
#define CAP_MIB	8
#define CHUNK	(64 * 1024ULL)		/* 16 pages */
#define NCHUNK	8
#define LEN	(NCHUNK * CHUNK)
#define NPAGES	(LEN / HBMT_PAGE)
#define BUDGET	1024ULL			/* nothing is evicted unless a test asks */
#define FILL_PAGES	256ULL		/* the filler region, 16x the smallest budget */
#define MAXC	4
#define WAIT_MS	20000

/* ---- netlink: region-get with chunks, node-set, resync dump ---------- */

struct nl_chunk {
	uint32_t index, node, good, syncing;
	int lost;
	uint32_t ncopy, nout;
	uint32_t copy[MAXC + 1], out[MAXC + 1];
};

struct nl_region {
	int64_t replicas, degraded, lost;
	uint32_t nchunks;
	struct nl_chunk ch[NCHUNK];
};

static void parse_chunk(struct nlattr *nest, struct nl_chunk *c)
{
	struct nlattr *a;
	int rem;

	memset(c, 0, sizeof(*c));
	c->syncing = UINT32_MAX;
	nla_for_each_nested(a, nest, rem) {
		switch (nla_type(a)) {
		case HBMPOOL_A_CHUNK_INDEX: c->index = nla_get_u32(a); break;
		case HBMPOOL_A_CHUNK_NODE_ID: c->node = nla_get_u32(a); break;
		case HBMPOOL_A_CHUNK_GOOD_COPIES: c->good = nla_get_u32(a); break;
		case HBMPOOL_A_CHUNK_SYNCING_NODE_ID: c->syncing = nla_get_u32(a); break;
		case HBMPOOL_A_CHUNK_LOST: c->lost = 1; break;
		case HBMPOOL_A_CHUNK_COPY_NODE_ID:
			if (c->ncopy <= MAXC)
				c->copy[c->ncopy++] = nla_get_u32(a);
			break;
		case HBMPOOL_A_CHUNK_OUTDATED_NODE_ID:
			if (c->nout <= MAXC)
				c->out[c->nout++] = nla_get_u32(a);
			break;
		}
	}
}

static int on_region(uint8_t cmd, struct nlattr *attrs, int len, void *arg)
{
	struct nl_region *g = arg;
	struct nlattr *a;
	int rem;

	(void)cmd;
	nla_for_each_attr(a, attrs, len, rem) {
		switch (nla_type(a)) {
		case HBMPOOL_A_REGION_REPLICAS: g->replicas = nla_get_u32(a); break;
		case HBMPOOL_A_REGION_DEGRADED_CHUNKS: g->degraded = nla_get_u32(a); break;
		case HBMPOOL_A_REGION_LOST_CHUNKS: g->lost = nla_get_u32(a); break;
		case HBMPOOL_A_REGION_CHUNK:
			if (g->nchunks < NCHUNK)
				parse_chunk(a, &g->ch[g->nchunks++]);
			break;
		}
	}
	return 0;
}

/* region-get of region id with its chunks (at most NCHUNK).  0 or -errno. */
static int nl_region_get(struct hbm_nl *nl, uint32_t id, struct nl_region *g)
{
	struct nl_msg *m = hbm_nl_msg(nl, HBMPOOL_CMD_REGION_GET, 0);

	memset(g, 0, sizeof(*g));
	g->replicas = g->degraded = g->lost = -1;
	if (!m)
		return -ENOMEM;
	if (nla_put_u32(m, HBMPOOL_A_REGION_ID, id) ||
	    nla_put_flag(m, HBMPOOL_A_REGION_CHUNKS)) {
		nlmsg_free(m);
		return -EMSGSIZE;
	}
	return hbm_nl_request(nl, m, on_region, g);
}

/* node-set failure-domain. */
static int nl_node_domain(struct hbm_nl *nl, uint32_t id, uint32_t domain)
{
	struct nl_msg *m = hbm_nl_msg(nl, HBMPOOL_CMD_NODE_SET, 0);

	if (!m)
		return -ENOMEM;
	if (nla_put_u32(m, HBMPOOL_A_NODE_ID, id) ||
	    nla_put_u32(m, HBMPOOL_A_NODE_FAILURE_DOMAIN, domain)) {
		nlmsg_free(m);
		return -EMSGSIZE;
	}
	return hbm_nl_request(nl, m, NULL, NULL);
}

/* Replicate jobs (kind replicate) of region seen in a resync-get dump. */
struct rs_count {
	uint32_t region;
	int replicate, to_count;
	uint32_t to[16];
};

static int on_resync(uint8_t cmd, struct nlattr *attrs, int len, void *arg)
{
	struct rs_count *rc = arg;
	uint32_t region = UINT32_MAX, kind = UINT32_MAX, to = UINT32_MAX;
	struct nlattr *a;
	int rem;

	(void)cmd;
	nla_for_each_attr(a, attrs, len, rem) {
		if (nla_len(a) < 4)
			continue;
		switch (nla_type(a)) {
		case HBMPOOL_A_RESYNC_REGION_ID: region = nla_get_u32(a); break;
		case HBMPOOL_A_RESYNC_KIND: kind = nla_get_u32(a); break;
		case HBMPOOL_A_RESYNC_TO_NODE_ID: to = nla_get_u32(a); break;
		}
	}
	if (region == rc->region && kind == HBMPOOL_RESYNC_KIND_REPLICATE) {
		rc->replicate++;
		if (rc->to_count < 16)
			rc->to[rc->to_count++] = to;
	}
	return 0;
}

static int nl_replicate_jobs(struct hbm_nl *nl, uint32_t region, struct rs_count *rc)
{
	struct nl_msg *m = hbm_nl_msg(nl, HBMPOOL_CMD_RESYNC_GET, 1);
	int ret;

	memset(rc, 0, sizeof(*rc));
	rc->region = region;
	if (!m)
		return -ENOMEM;
	ret = hbm_nl_request(nl, m, on_resync, rc);
	return ret;
}

static int has(const uint32_t *v, uint32_t n, uint32_t id)
{
	for (uint32_t i = 0; i < n; i++)
		if (v[i] == id)
			return 1;
	return 0;
}

/* ---- the fixture ---------------------------------------------------- */

FIXTURE(rep)
{
	struct hbmt_env env;
	struct hbm_nl *nl;
	struct hbmt_region r;
	struct hbmt_region fill;	/* on E alone: touched to evict r */
	unsigned int knobs[8];		/* fail_* knobs set, cleared by teardown */
	int nknobs;
};

FIXTURE_SETUP(rep)
{
	int ret;

	self->r.fd = self->fill.fd = -1;
	self->nl = NULL;
	self->nknobs = 0;
	hbmt_env_setup(_metadata, &self->env, BUDGET, 2000);
	if (hbmt_debugfs_missing())
		SKIP(return, "%s", hbmt_debugfs_missing());
	hbmt_env_node(_metadata, &self->env, N_A, CAP_MIB, 20, NULL);
	hbmt_env_node(_metadata, &self->env, N_B, CAP_MIB, 30, NULL);
	hbmt_env_node(_metadata, &self->env, N_C, CAP_MIB, 40, NULL);
	hbmt_env_node(_metadata, &self->env, N_D, CAP_MIB, 50, NULL);
	hbmt_env_node(_metadata, &self->env, N_E, CAP_MIB, 60, NULL);
	ret = hbm_nl_open(&self->nl);
	ASSERT_EQ(0, ret) TH_LOG("netlink: %s", strerror(-ret));
	ret = hbmt_region_open(&self->fill, self->env.devfd, FILL_PAGES * HBMT_PAGE, CHUNK,
			       HBMPOOL_POLICY_BIND, HBM_NODES(N_E), 0, "repfill");
	ASSERT_EQ(0, ret) TH_LOG("filler region: %s", strerror(-ret));
}

FIXTURE_TEARDOWN(rep)
{
	/* knobs first: a node with fail_writeback set cannot take the last write-backs */
	for (int i = 0; i < self->nknobs; i++) {
		hbm_node_knob(self->knobs[i] >> 8, "fail_fetch", 0);
		hbm_node_knob(self->knobs[i] >> 8, "fail_writeback", 0);
		hbm_node_knob(self->knobs[i] >> 8, "hang_fetch", 0);
	}
	hbmt_region_close(&self->r);
	hbmt_region_close(&self->fill);
	if (self->nl)
		hbm_nl_close(self->nl);
	hbmt_env_teardown(_metadata, &self->env);
}

/* Set a debugfs fault knob (remembered for teardown). */
#define KNOB(node, name, v) do {						\
	int __r = hbm_node_knob((node), (name), (v));				\
	ASSERT_EQ(0, __r) TH_LOG("node %u %s=%d: %s", (node), (name), (v),	\
				 strerror(-__r));				\
	if (self->nknobs < 8)							\
		self->knobs[self->nknobs++] = (unsigned int)(node) << 8;	\
} while (0)

/* CREATE with replicas (and pad/reserved as given); fd or -errno. */
static int create_rep(int devfd, uint32_t replicas, const struct hbm_nodeset *set,
		      uint32_t pad, uint64_t reserved0)
{
	struct hbmpool_region_create rc;
	int fd;

	hbm_create_init(&rc, LEN, CHUNK, HBMPOOL_POLICY_BIND, set, 0, "rep");
	rc.replicas = replicas;
	rc.pad = pad;
	rc.reserved[0] = reserved0;
	fd = hbm_region_create(devfd, &rc);
	return fd;
}

/* Opens self->r: LEN bytes, chunks of CHUNK, bind over set, replicas copies. */
static int open_rep(FIXTURE_DATA(rep) *self, uint32_t replicas, const struct hbm_nodeset *set)
{
	struct hbmpool_region_create rc;

	hbm_create_init(&rc, LEN, CHUNK, HBMPOOL_POLICY_BIND, set, 0, "rep");
	rc.replicas = replicas;
	return hbmt_region_open_rc(&self->r, self->env.devfd, &rc);
}

#define OPEN(k, set) do {							\
	int __r = open_rep(self, (k), (set));					\
	ASSERT_EQ(0, __r) TH_LOG("region, replicas %u: %s", (k), strerror(-__r)); \
} while (0)

static int region_info(int fd, struct hbmpool_region_info *ri, struct hbmpool_chunk_info *ch)
{
	return hbm_region_info(fd, ri, ch, ch ? NCHUNK : 0, NULL);
}

/*
 * Evicts every cached page of self->r: smallest budget, then touches the
 * filler region until REGION_INFO shows none of r cached.  The budget
 * goes back to BUDGET.  0, or -ETIMEDOUT (pages left; logged).
 */
static int evict_all(struct __test_metadata *_metadata, FIXTURE_DATA(rep) *self)
{
	struct hbmpool_region_info ri;
	int ret = -ETIMEDOUT;

	ASSERT_EQ(0, hbm_set_global_u64("cache_budget_pages", 16));
	for (int round = 0; round < 50; round++) {
		for (uint64_t p = 0; p < FILL_PAGES; p++)
			(void)*(volatile uint64_t *)(self->fill.map + p * HBMT_PAGE);
		if (region_info(self->r.fd, &ri, NULL)) {
			ret = -EIO;
			break;
		}
		if (!ri.cached_pages) {
			ret = 0;
			break;
		}
		hbmt_sleep_ms(20);
	}
	if (ret)
		TH_LOG("evict: %llu pages of the region still cached (%llu dirty)",
		       (unsigned long long)ri.cached_pages, (unsigned long long)ri.dirty_pages);
	EXPECT_EQ(0, hbm_set_global_u64("cache_budget_pages", BUDGET));
	return ret;
}

/*
 * Reads every page of self->r through the mapping, one probe per page, then
 * compares with the pattern of seed.  Returns pages that raised SIGBUS;
 * *bad gets the bytes that differ (pages that raised SIGBUS not counted).
 */
static int read_all(FIXTURE_DATA(rep) *self, uint64_t seed, size_t *bad, uint64_t *first_bad)
{
	int bus = 0;

	*bad = 0;
	for (uint64_t p = 0; p < NPAGES; p++) {
		uint8_t *pg = self->r.map + p * HBMT_PAGE;
		uint64_t v;

		if (hbmt_probe_read(pg, &v, NULL)) {
			bus++;
			continue;
		}
		*bad += hbm_pattern_check(pg, HBMT_PAGE, p * HBMT_PAGE, seed,
					  *bad ? NULL : first_bad);
	}
	return bus;
}

#define READ_ALL_EXACT(seed, what) do {						\
	size_t __bad = 0;							\
	uint64_t __fb = 0;							\
	int __bus = read_all(self, (seed), &__bad, &__fb);			\
	EXPECT_EQ(0, __bus) TH_LOG("%s: %d pages raised SIGBUS", (what), __bus); \
	EXPECT_EQ(0, __bad) TH_LOG("%s: %zu bytes differ, first at %#llx", (what), \
				   __bad, (unsigned long long)__fb);		\
} while (0)

/* Waits until REGION_INFO shows degraded_chunks == 0; 0 or -ETIMEDOUT. */
static int wait_healthy(int fd, unsigned int ms, struct hbmpool_region_info *ri)
{
	for (unsigned int t = 0;; t += 50) {
		int ret = region_info(fd, ri, NULL);

		if (ret)
			return ret;
		if (!ri->degraded_chunks)
			return 0;
		if (t >= ms)
			return -ETIMEDOUT;
		hbmt_sleep_ms(50);
	}
}

/*
 * Waits until region-get shows no outdated copy (each is dropped once
 * replaced); 0, -ETIMEDOUT, or region-get's error.
 */
static int wait_outdated_dropped(struct hbm_nl *nl, uint32_t id, unsigned int ms)
{
	struct nl_region g;

	for (unsigned int t = 0;; t += 50) {
		int outdated = 0, ret = nl_region_get(nl, id, &g);

		if (ret)
			return ret;
		for (int c = 0; c < NCHUNK; c++)
			outdated += g.ch[c].nout;
		if (!outdated)
			return 0;
		if (t >= ms)
			return -ETIMEDOUT;
		hbmt_sleep_ms(50);
	}
}

/*
 * The region's chunks through REGION_INFO and region-get agree on
 * replicas, good copies; every chunk has want good copies on distinct
 * nodes of set (and none on avoid, if not ~0u).
 */
static void check_copies(struct __test_metadata *_metadata, FIXTURE_DATA(rep) *self,
			 uint32_t want, const struct hbm_nodeset *set, uint32_t avoid)
{
	struct hbmpool_chunk_info ch[NCHUNK];
	struct hbmpool_region_info ri;
	struct nl_region g;
	int ret;

	ASSERT_EQ(0, region_info(self->r.fd, &ri, ch));
	ASSERT_EQ(NCHUNK, ri.nr_chunks);
	EXPECT_EQ(want, ri.replicas);
	EXPECT_EQ(0, ri.degraded_chunks);
	EXPECT_EQ(0, ri.lost_chunks);
	for (int c = 0; c < NCHUNK; c++) {
		EXPECT_EQ(want, ch[c].good_copies) TH_LOG("chunk %d (REGION_INFO)", c);
		EXPECT_EQ(want, ch[c].nr_copies) TH_LOG("chunk %d (REGION_INFO)", c);
		EXPECT_TRUE(hbm_nodeset_test(set, ch[c].node)) TH_LOG("chunk %d on node %u", c,
								     ch[c].node);
	}
	ret = nl_region_get(self->nl, self->r.id, &g);
	ASSERT_EQ(0, ret) TH_LOG("region-get: %s (%s)", strerror(-ret), hbm_nl_extack(self->nl));
	EXPECT_EQ(want, g.replicas);
	EXPECT_EQ(0, g.degraded);
	EXPECT_EQ(0, g.lost);
	ASSERT_EQ(NCHUNK, g.nchunks);
	for (int c = 0; c < NCHUNK; c++) {
		struct nl_chunk *k = &g.ch[c];

		EXPECT_EQ(want, k->good) TH_LOG("chunk %d (region-get)", c);
		EXPECT_EQ(want, k->ncopy) TH_LOG("chunk %d: copy-node-id count", c);
		EXPECT_EQ(0, k->nout) TH_LOG("chunk %d: outdated-node-id count", c);
		EXPECT_FALSE(k->lost);
		for (uint32_t i = 0; i < k->ncopy; i++) {
			EXPECT_TRUE(hbm_nodeset_test(set, k->copy[i]))
				TH_LOG("chunk %d: copy on node %u, outside the set", c, k->copy[i]);
			EXPECT_NE(avoid, k->copy[i]) TH_LOG("chunk %d: good copy on node %u", c,
							    avoid);
			for (uint32_t j = 0; j < i; j++) {
				EXPECT_NE(k->copy[j], k->copy[i])
					TH_LOG("chunk %d: two copies on node %u", c, k->copy[i]);
			}
		}
	}
}

/* ---- 1. create ------------------------------------------------------- */

TEST_F(rep, create_replicas)
{
	const struct hbm_nodeset *set4 = HBM_NODES(N_A, N_B, N_C, N_D);
	static const uint32_t ks[] = { 0, 2, 4 };
	int fd;

	for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
		OPEN(ks[i], set4);
		check_copies(_metadata, self, ks[i] ? ks[i] : 1, set4, ~0u);
		/* every byte reads back (each copy started zeroed) */
		hbm_pattern_fill(self->r.map, LEN, 0, 0xc0 + i);
		EXPECT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL));
		EXPECT_EQ(0, hbm_pattern_check(self->r.map, LEN, 0, 0xc0 + i, NULL));
		hbmt_region_close(&self->r);
	}
	fd = create_rep(self->env.devfd, HBMPOOL_REPLICAS_MAX + 1, set4, 0, 0);
	EXPECT_EQ(-EINVAL, fd) TH_LOG("replicas 5: %s", strerror(-fd));
	if (fd >= 0)
		close(fd);
	fd = create_rep(self->env.devfd, 3, HBM_NODES(N_A, N_B), 0, 0);
	EXPECT_EQ(-EINVAL, fd) TH_LOG("replicas 3 over 2 nodes: %s", strerror(-fd));
	if (fd >= 0)
		close(fd);
	fd = create_rep(self->env.devfd, 2, set4, 1, 0);
	EXPECT_EQ(-EINVAL, fd) TH_LOG("pad 1: %s", strerror(-fd));
	if (fd >= 0)
		close(fd);
	fd = create_rep(self->env.devfd, 2, set4, 0, 1);
	EXPECT_EQ(-EINVAL, fd) TH_LOG("reserved[0] 1: %s", strerror(-fd));
	if (fd >= 0)
		close(fd);
	fd = create_rep(self->env.devfd, ~0u, set4, 0, 0);
	EXPECT_EQ(-EINVAL, fd) TH_LOG("replicas ~0: %s", strerror(-fd));
	if (fd >= 0)
		close(fd);
	/* nothing was left reserved by the refusals */
	for (unsigned int n = N_A; n <= N_D; n++) {
		EXPECT_EQ(0, hbmt_wait_node(n, "free_bytes", HBMT_EQ, CAP_MIB * HBMT_MIB, 5000,
					    NULL)) TH_LOG("node %u", n);
	}
}

/* ---- 2. failure domains ---------------------------------------------- */

TEST_F(rep, failure_domains)
{
	const struct hbm_nodeset *set4 = HBM_NODES(N_A, N_B, N_C, N_D);
	static const uint32_t dom[4] = { 1, 1, 2, 2 };	/* of A, B, C, D */
	struct nl_region g;
	int fd, ret;

	for (unsigned int i = 0; i < 4; i++) {
		ret = nl_node_domain(self->nl, N_A + i, dom[i]);
		ASSERT_EQ(0, ret) TH_LOG("node-set %u failure-domain %u: %s (%s)", N_A + i,
					 dom[i], strerror(-ret), hbm_nl_extack(self->nl));
	}
	OPEN(2, set4);
	check_copies(_metadata, self, 2, set4, ~0u);
	ASSERT_EQ(0, nl_region_get(self->nl, self->r.id, &g));
	for (uint32_t c = 0; c < g.nchunks; c++) {
		uint32_t seen[3] = { 0 };

		for (uint32_t i = 0; i < g.ch[c].ncopy; i++) {
			uint32_t n = g.ch[c].copy[i];

			if (n >= N_A && n <= N_D)
				seen[dom[n - N_A]]++;
		}
		EXPECT_EQ(1, seen[1]) TH_LOG("chunk %u: %u copies in domain 1", c, seen[1]);
		EXPECT_EQ(1, seen[2]) TH_LOG("chunk %u: %u copies in domain 2", c, seen[2]);
	}
	hbmt_region_close(&self->r);
	fd = create_rep(self->env.devfd, 3, set4, 0, 0);
	EXPECT_EQ(-ENOSPC, fd) TH_LOG("replicas 3 over 2 failure domains: %s", strerror(-fd));
	if (fd >= 0)
		close(fd);
}

/* ---- 3. a write-back one copy misses --------------------------------- */

TEST_F_TIMEOUT(rep, writeback_outdates, 120)
{
	const struct hbm_nodeset *set3 = HBM_NODES(N_A, N_B, N_C);
	struct hbmpool_chunk_info ch[NCHUNK];
	struct hbmpool_region_info ri;
	struct hbmpool_range rg;
	struct rs_count jobs;
	struct nl_region g;
	int ret;

	OPEN(2, set3);
	ASSERT_EQ(0, nl_region_get(self->nl, self->r.id, &g));
	ASSERT_EQ(NCHUNK, g.nchunks);
	for (int c = 0; c < NCHUNK; c++) {
		/* bind, nearest first: A and B */
		ASSERT_EQ(2, g.ch[c].ncopy);
		ASSERT_TRUE(has(g.ch[c].copy, 2, N_A) && has(g.ch[c].copy, 2, N_B))
			TH_LOG("chunk %d on %u,%u, not on A and B", c, g.ch[c].copy[0],
			       g.ch[c].copy[1]);
	}
	/* C cannot take a new copy until the checks below are done */
	ASSERT_EQ(0, hbm_nl_node_draining(self->nl, N_C, 1, NULL, 0));
	hbm_pattern_fill(self->r.map, LEN, 0, 0x3b);
	KNOB(N_B, "fail_writeback", 1);
	ret = hbm_region_sync(self->r.fd, 0, 0, &rg);
	EXPECT_EQ(0, ret) TH_LOG("SYNC with one copy failing: %s", strerror(-ret));
	EXPECT_EQ(NPAGES, rg.pages_done);
	EXPECT_EQ(0, rg.pages_failed);
	ASSERT_EQ(0, region_info(self->r.fd, &ri, ch));
	EXPECT_EQ(0, ri.dirty_pages);
	EXPECT_LT(0, ri.degraded_chunks) TH_LOG("SYNC returned with no copy outdated");
	EXPECT_EQ(0, ri.lost_chunks);
	/* the outdating may trail SYNC (see sync_settles_outdate): bounded wait */
	for (int t = 0; ri.degraded_chunks < NCHUNK && t < 5000; t += 50) {
		hbmt_sleep_ms(50);
		ASSERT_EQ(0, region_info(self->r.fd, &ri, ch));
	}
	EXPECT_EQ(NCHUNK, ri.degraded_chunks);
	for (int c = 0; c < NCHUNK; c++) {
		EXPECT_EQ(1, ch[c].good_copies) TH_LOG("chunk %d", c);
	}
	ret = nl_region_get(self->nl, self->r.id, &g);
	ASSERT_EQ(0, ret);
	EXPECT_EQ(NCHUNK, g.degraded);
	for (int c = 0; c < NCHUNK; c++) {
		EXPECT_EQ(1, g.ch[c].good);
		EXPECT_TRUE(g.ch[c].ncopy == 1 && g.ch[c].copy[0] == N_A)
			TH_LOG("chunk %d: %u good copies, first on %u", c, g.ch[c].ncopy,
			       g.ch[c].copy[0]);
		EXPECT_TRUE(has(g.ch[c].out, g.ch[c].nout, N_B))
			TH_LOG("chunk %d: B not among the outdated copies", c);
	}

	/* the knob goes, C comes back: re-replication restores 2 good copies */
	KNOB(N_B, "fail_writeback", 0);
	ASSERT_EQ(0, hbm_nl_node_draining(self->nl, N_C, 0, NULL, 0));
	ret = wait_healthy(self->r.fd, WAIT_MS, &ri);
	EXPECT_EQ(0, ret) TH_LOG("%u chunks still degraded after %d ms", ri.degraded_chunks,
				 WAIT_MS);
	ret = nl_replicate_jobs(self->nl, self->r.id, &jobs);
	EXPECT_EQ(0, ret) TH_LOG("resync dump: %s", strerror(-ret));
	EXPECT_LE(NCHUNK, jobs.replicate) TH_LOG("replicate jobs of the region: %d", jobs.replicate);
	for (int i = 0; i < jobs.to_count; i++) {
		EXPECT_TRUE(jobs.to[i] == N_B || jobs.to[i] == N_C)
			TH_LOG("replicate job to node %u", jobs.to[i]);
	}
	/* the outdated copies are dropped once replaced */
	ret = wait_outdated_dropped(self->nl, self->r.id, 5000);
	EXPECT_EQ(0, ret) TH_LOG("outdated copies: %s (%s)", strerror(-ret), hbm_nl_extack(self->nl));
	check_copies(_metadata, self, 2, set3, ~0u);

	/* every byte, from the cache, then from the copies that are not A */
	ASSERT_EQ(0, evict_all(_metadata, self));
	READ_ALL_EXACT(0x3b, "after re-replication");
	ASSERT_EQ(0, evict_all(_metadata, self));
	KNOB(N_A, "fail_fetch", 1);
	READ_ALL_EXACT(0x3b, "from the new copies (A failing)");
	KNOB(N_A, "fail_fetch", 0);
}

/*
 * SYNC returns once the write-back is settled: the copies that missed it
 * are already outdated (REGION_INFO counts every chunk degraded at once),
 * as SYNC's caller may read the region's health, or lose the copy that
 * took it, right after.
 */
TEST_F_TIMEOUT(rep, sync_settles_outdate, 60)
{
	struct hbmpool_region_info ri;
	int ret;

	OPEN(2, HBM_NODES(N_A, N_B, N_C));
	ASSERT_EQ(0, hbm_nl_node_draining(self->nl, N_C, 1, NULL, 0));
	hbm_pattern_fill(self->r.map, LEN, 0, 0x3c);
	KNOB(N_B, "fail_writeback", 1);
	ret = hbm_region_sync(self->r.fd, 0, 0, NULL);
	ASSERT_EQ(0, ret) TH_LOG("SYNC: %s", strerror(-ret));
	ASSERT_EQ(0, region_info(self->r.fd, &ri, NULL));
	EXPECT_EQ(NCHUNK, ri.degraded_chunks) TH_LOG("at SYNC's return only %u of %u chunks degraded",
						     ri.degraded_chunks, (unsigned int)NCHUNK);
	KNOB(N_B, "fail_writeback", 0);
	EXPECT_EQ(0, hbm_nl_node_draining(self->nl, N_C, 0, NULL, 0));
}

/* ---- 4. a write-back every copy misses ------------------------------- */

TEST_F_TIMEOUT(rep, all_copies_fail_write, 120)
{
	struct hbmpool_chunk_info ch[NCHUNK];
	struct hbmpool_region_info ri;
	struct hbmpool_range rg;
	int ret;

	OPEN(2, HBM_NODES(N_A, N_B));
	hbm_pattern_fill(self->r.map, LEN, 0, 0x4c);
	KNOB(N_A, "fail_writeback", 1);
	KNOB(N_B, "fail_writeback", 1);
	ret = hbm_region_sync(self->r.fd, 0, 0, &rg);
	EXPECT_EQ(-EIO, ret) TH_LOG("SYNC with every copy failing: %s", strerror(-ret));
	EXPECT_EQ(NPAGES, rg.pages_failed);
	EXPECT_EQ(0, rg.pages_done);
	ASSERT_EQ(0, region_info(self->r.fd, &ri, ch));
	EXPECT_EQ(NPAGES, ri.dirty_pages);
	EXPECT_EQ(NPAGES, ri.cached_pages);
	EXPECT_EQ(0, ri.degraded_chunks) TH_LOG("no copy took it: none may be outdated");
	EXPECT_EQ(0, ri.lost_chunks);
	for (int c = 0; c < NCHUNK; c++) {
		EXPECT_EQ(2, ch[c].good_copies) TH_LOG("chunk %d", c);
	}
	EXPECT_EQ(0, hbm_pattern_check(self->r.map, LEN, 0, 0x4c, NULL));

	KNOB(N_A, "fail_writeback", 0);
	KNOB(N_B, "fail_writeback", 0);
	ret = hbm_region_sync(self->r.fd, 0, 0, &rg);
	EXPECT_EQ(0, ret) TH_LOG("SYNC again: %s", strerror(-ret));
	EXPECT_EQ(NPAGES, rg.pages_done);
	ASSERT_EQ(0, region_info(self->r.fd, &ri, NULL));
	EXPECT_EQ(0, ri.dirty_pages);
	EXPECT_EQ(0, ri.degraded_chunks);
	/* both copies hold the data: read from each alone */
	ASSERT_EQ(0, evict_all(_metadata, self));
	KNOB(N_A, "fail_fetch", 1);
	READ_ALL_EXACT(0x4c, "from B (A failing)");
	KNOB(N_A, "fail_fetch", 0);
	ASSERT_EQ(0, evict_all(_metadata, self));
	KNOB(N_B, "fail_fetch", 1);
	READ_ALL_EXACT(0x4c, "from A (B failing)");
	KNOB(N_B, "fail_fetch", 0);
}

/* ---- 5. fetch failover ----------------------------------------------- */

TEST_F_TIMEOUT(rep, fetch_failover, 120)
{
	struct hbmpool_chunk_info ch[NCHUNK];
	struct hbmpool_region_info ri;
	struct hbmpool_stats st;
	uint64_t b0 = 0, b1 = 0, v;
	unsigned int first, other;
	int bus;

	OPEN(2, HBM_NODES(N_A, N_B));
	hbm_pattern_fill(self->r.map, LEN, 0, 0x5d);
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL));
	ASSERT_EQ(0, evict_all(_metadata, self));
	ASSERT_EQ(0, region_info(self->r.fd, &ri, ch));
	first = ch[0].node;
	ASSERT_TRUE(first == N_A || first == N_B) TH_LOG("first copy on %u", first);
	other = first == N_A ? N_B : N_A;
	for (int c = 1; c < NCHUNK; c++) {
		EXPECT_EQ(first, ch[c].node) TH_LOG("chunk %d's first copy", c);
	}
	ASSERT_EQ(0, hbm_node_u64(other, "stats/fetches", &b0));

	KNOB(first, "fail_fetch", 1);
	READ_ALL_EXACT(0x5d, "first copy failing");
	ASSERT_EQ(0, hbm_region_stats(self->r.fd, &st));
	EXPECT_LE(1, st.errors) TH_LOG("no fetch from the failing copy was tried");
	ASSERT_EQ(0, hbm_node_u64(other, "stats/fetches", &b1));
	EXPECT_LE(b0 + NPAGES, b1) TH_LOG("node %u served %llu fetches", other,
					  (unsigned long long)(b1 - b0));
	ASSERT_EQ(0, region_info(self->r.fd, &ri, NULL));
	EXPECT_EQ(0, ri.lost_chunks);

	/* both failing: an evicted page cannot be served */
	ASSERT_EQ(0, evict_all(_metadata, self));
	KNOB(other, "fail_fetch", 1);
	EXPECT_EQ(SIGBUS, hbmt_probe_read(self->r.map + 3 * HBMT_PAGE, &v, NULL));
	EXPECT_EQ(SIGBUS, hbmt_probe_read(self->r.map + LEN - HBMT_PAGE, &v, NULL));
	/* and once they work again, everything is there */
	KNOB(first, "fail_fetch", 0);
	KNOB(other, "fail_fetch", 0);
	bus = 0;
	for (int t = 0; t < 3 && (bus = hbmt_probe_read(self->r.map + 3 * HBMT_PAGE, &v, NULL));
	     t++)
		hbmt_sleep_ms(100);
	EXPECT_EQ(0, bus) TH_LOG("SIGBUS after both copies recovered");
	READ_ALL_EXACT(0x5d, "after recovery");
}

/*
 * The fetch goes on to the other copy while its waiter waits outside a
 * retryable fault, for the request that failed (design.rst, "The fault
 * path": hbmpool_fetch_wait()): a read of the second half through
 * /proc/self/mem (the kernel's access to the mapping faults without
 * retry), then REGION_PREFETCH of the first half.  A failed fetch makes its
 * node suspect (tried last); a write-back that it takes clears that, so
 * that the prefetch tries the failing copy first too.
 */
TEST_F_TIMEOUT(rep, failover_for_waiters, 120)
{
	struct hbmpool_chunk_info ch[NCHUNK];
	struct hbmpool_region_info ri;
	struct hbmpool_stats st;
	struct hbmpool_range rg;
	const size_t half = LEN / 2;
	uint64_t err0, err1;
	unsigned int first, other;
	int fd, go[2], status = 0;
	uint8_t *buf;
	pid_t pids[2];
	ssize_t n;

	OPEN(2, HBM_NODES(N_A, N_B));
	hbm_pattern_fill(self->r.map, LEN, 0, 0x5e);
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL));
	ASSERT_EQ(0, evict_all(_metadata, self));
	ASSERT_EQ(0, region_info(self->r.fd, &ri, ch));
	first = ch[NCHUNK / 2].node;	/* the second half's, read first */
	other = first == N_A ? N_B : N_A;
	EXPECT_EQ(first, ch[0].node) TH_LOG("the halves' first copies differ");
	KNOB(first, "fail_fetch", 1);

	buf = malloc(half);
	ASSERT_NE(NULL, buf);
	fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("/proc/self/mem: %s", strerror(errno));
	n = pread(fd, buf, half, (off_t)(uintptr_t)(self->r.map + half));
	EXPECT_EQ((ssize_t)half, n) TH_LOG("/proc/self/mem read: %zd (%s)", n, strerror(errno));
	if (n == (ssize_t)half) {
		EXPECT_EQ(0, hbm_pattern_check(buf, half, half, 0x5e, NULL))
			TH_LOG("the second half, read through /proc/self/mem");
	}
	close(fd);
	free(buf);
	ASSERT_EQ(0, hbm_region_stats(self->r.fd, &st));
	err0 = st.errors;
	EXPECT_LE(1, err0) TH_LOG("no fetch from the failing copy was tried");

	/* a write-back to both copies: the failing one is not suspect now */
	*(volatile uint8_t *)(self->r.map + half) = self->r.map[half];
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL));
	ASSERT_EQ(0, hbm_region_prefetch(self->r.fd, 0, half, &rg));
	EXPECT_EQ(NPAGES / 2, rg.pages_done) TH_LOG("prefetch: %llu pages done, %llu failed",
						   (unsigned long long)rg.pages_done,
						   (unsigned long long)rg.pages_failed);
	EXPECT_EQ(0, rg.pages_failed);
	ASSERT_EQ(0, hbm_region_stats(self->r.fd, &st));
	err1 = st.errors;
	EXPECT_LT(err0, err1) TH_LOG("the prefetch did not try the failing copy");
	ASSERT_EQ(0, region_info(self->r.fd, &ri, NULL));
	EXPECT_EQ(NPAGES, ri.cached_pages) TH_LOG("cached after the prefetch");
	READ_ALL_EXACT(0x5e, "after the failovers");

	/* both failing: the prefetch counts every page failed */
	ASSERT_EQ(0, evict_all(_metadata, self));
	KNOB(other, "fail_fetch", 1);
	ASSERT_EQ(0, hbm_region_prefetch(self->r.fd, 0, half, &rg));
	EXPECT_EQ(0, rg.pages_done);
	EXPECT_EQ(NPAGES / 2, rg.pages_failed) TH_LOG("prefetch with no copy: %llu failed",
						     (unsigned long long)rg.pages_failed);
	/*
	 * and reads without retry get the error, once: no fetching over and
	 * over.  Two readers go through the second half's pages at once, page
	 * by page, so that one often waits for the other's fetch of a page.
	 */
	ASSERT_EQ(0, pipe(go));
	for (int k = 0; k < 2; k++) {
		pids[k] = fork();
		ASSERT_LE(0, pids[k]);
		if (!pids[k]) {
			static uint8_t b[HBMT_PAGE];
			char c;

			close(go[1]);
			fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
			alarm(30);
			if (fd < 0 || read(go[0], &c, 1) != 1)
				_exit(2);
			for (uint64_t p = 0; p < NPAGES / 2; p++) {
				off_t at = (off_t)(uintptr_t)(self->r.map + half + p * HBMT_PAGE);

				if (pread(fd, b, sizeof(b), at) >= 0 || errno != EIO)
					_exit(1);
			}
			_exit(0);
		}
	}
	close(go[0]);
	ASSERT_EQ(2, write(go[1], "gg", 2));
	close(go[1]);
	for (int k = 0; k < 2; k++) {
		ASSERT_EQ(pids[k], waitpid(pids[k], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("reader %d of %llu pages with no copy: status %#x (want EIO for each, within 30 s)",
			       k, (unsigned long long)NPAGES / 2, status);
	}
	KNOB(first, "fail_fetch", 0);
	KNOB(other, "fail_fetch", 0);
	READ_ALL_EXACT(0x5e, "after both copies recovered");
}

/*
 * Three copies: the first fails a fetch, the second, tried next, hangs
 * until the fetch times out (500 ms), the third serves.  A read without
 * retry through /proc/self/mem gets the data: the timed-out request, which
 * carried the fetch on, says that another copy can serve, and the fault
 * fetches again from it.
 */
TEST_F_TIMEOUT(rep, failover_after_timeout, 120)
{
	struct hbmpool_chunk_info ch[NCHUNK];
	struct hbmpool_region_info ri;
	struct hbmpool_stats st;
	uint8_t buf[HBMT_PAGE];
	unsigned int a, b;
	ssize_t n;
	int fd;

	OPEN(3, HBM_NODES(N_A, N_B, N_C));
	hbm_pattern_fill(self->r.map, LEN, 0, 0x5f);
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL));
	ASSERT_EQ(0, evict_all(_metadata, self));
	ASSERT_EQ(0, region_info(self->r.fd, &ri, ch));
	a = ch[0].node;
	ASSERT_TRUE(a == N_A) TH_LOG("chunk 0's first copy on %u, want the nearest, %u", a, N_A);
	b = N_B;
	ASSERT_EQ(0, hbm_set_global_u64("fetch_timeout_ms", 500));
	KNOB(a, "fail_fetch", 1);
	KNOB(b, "hang_fetch", 1);

	fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("/proc/self/mem: %s", strerror(errno));
	n = pread(fd, buf, sizeof(buf), (off_t)(uintptr_t)(self->r.map + 2 * HBMT_PAGE));
	close(fd);
	EXPECT_EQ((ssize_t)sizeof(buf), n) TH_LOG("/proc/self/mem read: %zd (%s)", n, strerror(errno));
	if (n == (ssize_t)sizeof(buf)) {
		EXPECT_EQ(0, hbm_pattern_check(buf, sizeof(buf), 2 * HBMT_PAGE, 0x5f, NULL))
			TH_LOG("the page served by the third copy");
	}
	ASSERT_EQ(0, hbm_region_stats(self->r.fd, &st));
	EXPECT_LE(1, st.timeouts) TH_LOG("the second copy's fetch did not time out");
	KNOB(b, "hang_fetch", 0);
	KNOB(a, "fail_fetch", 0);
	READ_ALL_EXACT(0x5f, "after the failover");
}

/*
 * Two copies that both time out, while write-backs that work clear their
 * suspect marks between the timeouts: a read without retry, which waits
 * with mmap_lock held, would fail over from one to the other for ever.  It
 * gets EIO after as many timeouts as the chunk has copies, and the page
 * works once the copies answer again.
 */
TEST_F_TIMEOUT(rep, failover_timeouts_bounded, 120)
{
	const off_t page = 5 * HBMT_PAGE;	/* not page 0, which the writer uses */
	struct hbmpool_stats st;
	uint8_t buf[HBMT_PAGE];
	int status = 0, polls = 0;
	pid_t pid;

	OPEN(2, HBM_NODES(N_A, N_B));
	hbm_pattern_fill(self->r.map, LEN, 0, 0x60);
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL));
	ASSERT_EQ(0, evict_all(_metadata, self));
	(void)*(volatile uint8_t *)self->r.map;		/* cached before the hang */
	ASSERT_EQ(0, hbm_set_global_u64("fetch_timeout_ms", 300));
	KNOB(N_A, "hang_fetch", 1);
	KNOB(N_B, "hang_fetch", 1);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);

		alarm(20);
		if (fd < 0)
			_exit(2);
		if (pread(fd, buf, sizeof(buf), (off_t)(uintptr_t)self->r.map + page) >= 0)
			_exit(3);
		_exit(errno == EIO ? 0 : 4);
	}
	/* write-backs to both copies, which clear their suspect marks */
	while (!waitpid(pid, &status, WNOHANG) && polls++ < 2000) {
		self->r.map[0]++;
		EXPECT_EQ(0, hbm_region_sync(self->r.fd, 0, HBMT_PAGE, NULL));
		hbmt_sleep_ms(10);
	}
	if (polls > 2000) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("read without retry, both copies timing out: status %#x (want EIO within 20 s)",
		       status);
	ASSERT_EQ(0, hbm_region_stats(self->r.fd, &st));
	EXPECT_LE(2, st.timeouts) TH_LOG("%llu fetches timed out, want one per copy",
					 (unsigned long long)st.timeouts);

	KNOB(N_A, "hang_fetch", 0);
	KNOB(N_B, "hang_fetch", 0);
	hbm_pattern_fill(self->r.map, HBMT_PAGE, 0, 0x60);	/* the writer's page */
	READ_ALL_EXACT(0x60, "after both copies answer again");
}

/* ---- 6. fence --------------------------------------------------------- */

TEST_F_TIMEOUT(rep, fence_rereplicates, 120)
{
	const struct hbm_nodeset *set3 = HBM_NODES(N_A, N_B, N_C);
	struct hbmpool_region_info ri;
	struct nl_region g;
	int ret, on_a = 0;

	OPEN(2, set3);
	ASSERT_EQ(0, nl_region_get(self->nl, self->r.id, &g));
	for (int c = 0; c < NCHUNK; c++)
		on_a += has(g.ch[c].copy, g.ch[c].ncopy, N_A);
	ASSERT_LT(0, on_a) TH_LOG("no chunk has a copy on A: fencing it tests nothing");
	hbm_pattern_fill(self->r.map, LEN, 0, 0x6e);
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL));

	ret = hbm_node_fence(N_A);
	ASSERT_EQ(0, ret) TH_LOG("fence A: %s", strerror(-ret));
	ASSERT_EQ(0, evict_all(_metadata, self));
	READ_ALL_EXACT(0x6e, "A fenced");
	ASSERT_EQ(0, region_info(self->r.fd, &ri, NULL));
	EXPECT_EQ(0, ri.lost_chunks);

	ret = wait_healthy(self->r.fd, WAIT_MS, &ri);
	EXPECT_EQ(0, ret) TH_LOG("%u chunks still degraded after %d ms", ri.degraded_chunks,
				 WAIT_MS);
	ret = wait_outdated_dropped(self->nl, self->r.id, 5000);
	EXPECT_EQ(0, ret) TH_LOG("outdated copies: %s (%s)", strerror(-ret), hbm_nl_extack(self->nl));
	check_copies(_metadata, self, 2, set3, N_A);
	/* the new copies hold the data */
	ASSERT_EQ(0, evict_all(_metadata, self));
	READ_ALL_EXACT(0x6e, "after re-replication");
}

/*
 * Pages whose fetch failed stay cached until their next user (read ahead
 * past the toucher, they are never touched).  A re-replication copying
 * their chunk is such a user: it takes them out and copies the chunk from
 * the good copy, instead of waiting for them forever.
 */
TEST_F_TIMEOUT(rep, rereplicate_past_failed_fetches, 120)
{
	const struct hbm_nodeset *set3 = HBM_NODES(N_A, N_B, N_C);
	struct hbmpool_region_info ri;
	uint64_t v;
	int ret, bus = 0;

	OPEN(2, set3);
	hbm_pattern_fill(self->r.map, LEN, 0, 0x8f);
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL));
	ASSERT_EQ(0, evict_all(_metadata, self));

	/* every copy failing: sequential touches read ahead, and fail */
	KNOB(N_A, "fail_fetch", 1);
	KNOB(N_B, "fail_fetch", 1);
	KNOB(N_C, "fail_fetch", 1);
	for (uint64_t p = 0; p < 4; p++)
		bus += hbmt_probe_read(self->r.map + p * HBMT_PAGE, &v, NULL) == SIGBUS;
	EXPECT_EQ(4, bus) TH_LOG("touches with every copy failing: %d SIGBUS of 4", bus);
	ASSERT_EQ(0, region_info(self->r.fd, &ri, NULL));
	ASSERT_LT(0, ri.cached_pages) TH_LOG("no failed page left cached: nothing to test");
	TH_LOG("%llu failed pages left cached", (unsigned long long)ri.cached_pages);
	KNOB(N_A, "fail_fetch", 0);
	KNOB(N_B, "fail_fetch", 0);
	KNOB(N_C, "fail_fetch", 0);

	/* the copies on the fenced node go: every chunk is copied again */
	ret = hbm_node_fence(N_B);
	ASSERT_EQ(0, ret) TH_LOG("fence B: %s", strerror(-ret));
	ret = wait_healthy(self->r.fd, WAIT_MS, &ri);
	EXPECT_EQ(0, ret) TH_LOG("%u chunks still degraded after %d ms (%llu pages cached)",
				 ri.degraded_chunks, WAIT_MS,
				 (unsigned long long)ri.cached_pages);
	READ_ALL_EXACT(0x8f, "after re-replication");
}

/* ---- 7. replicas 1 ----------------------------------------------------- */

TEST_F(rep, k1_unchanged)
{
	struct hbmpool_region_info ri;
	uint64_t v;

	OPEN(1, HBM_NODES(N_A, N_B));
	check_copies(_metadata, self, 1, HBM_NODES(N_A, N_B), ~0u);
	hbm_pattern_fill(self->r.map, LEN, 0, 0x71);
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL));
	ASSERT_EQ(0, evict_all(_metadata, self));
	KNOB(N_A, "fail_fetch", 1);
	EXPECT_EQ(SIGBUS, hbmt_probe_read(self->r.map + 5 * HBMT_PAGE, &v, NULL));
	ASSERT_EQ(0, region_info(self->r.fd, &ri, NULL));
	EXPECT_EQ(1, ri.replicas);
	EXPECT_EQ(0, ri.degraded_chunks);
	KNOB(N_A, "fail_fetch", 0);
	READ_ALL_EXACT(0x71, "A back");
}

/* The whole binary needs a kernel with replicated regions. */
static void __attribute__((constructor)) rep_require_replicas(void)
{
	hbmt_require_feature(HBMPOOL_FEAT_REPLICAS,
			     "this kernel has no replicated regions (no HBMPOOL_FEAT_REPLICAS)");
}

TEST_HARNESS_MAIN
