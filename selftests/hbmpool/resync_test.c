// SPDX-License-Identifier: GPL-2.0
/*
 * Chunk moves (resync-new, resync-get, resync-del; design.rst, "Moving and
 * copying a chunk in use") on simulated nodes, in one VM:
 *
 *  - a chunk moved while writer threads keep a version in every page of
 *    it, fsync, and a cache budget of 32 pages forces write-backs and
 *    evictions during the copy, throttled (resync-mbps 1) so that the copy
 *    overlaps the writes: the move is done, the chunk is on the target, the
 *    source got its bytes back, and every page, read from the target's
 *    memory (debugfs) and through the mapping, is its last version;
 *  - a move to a given node, and one where placement chooses (in the node
 *    set, not the source, not a draining node);
 *  - the refusals: EBUSY (the chunk is being moved), EEXIST or EINVAL (the
 *    target is the home), EINVAL (outside the node set), ENOENT (no region,
 *    chunk out of range), ENOSPC (target full), EPERM (unprivileged);
 *  - a move cancelled mid-copy (state cancelled, chunk on the source, data
 *    intact, the target's bytes back); a move whose target is deleted
 *    mid-copy (failed with ENODEV, chunk on the source, the pages dirtied
 *    during the copy written to the source); a region closed mid-copy (the
 *    move ends cancelled, every node gets all its bytes back);
 *  - hbmctl node drain of a node holding chunks of 2 regions: the node's
 *    chunks fall to 0, every page verified;
 *  - the feature bit HBMPOOL_FEAT_RESYNC.
 *
 * The whole binary is skipped (exit 4) only on a kernel without
 * HBMPOOL_FEAT_RESYNC.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "hbmtest.h"
#include "hbmnl.h"

#define N_A	70	/* 16 MiB, distance 20: the regions' home (nearest) */
#define N_B	71	/* 16 MiB, distance 30 */
#define N_C	72	/* 16 MiB, distance 40 */
#define N_D	73	/* 1 MiB, distance 50: filled for ENOSPC */
#define CAP_MIB	16
#define CHUNK	HBMT_MIB
#define BIG	(4 * HBMT_MIB)	/* the chunk of the mid-copy tests: 4 s at 1 MiB/s */
#define PAGES_PER(c)	((c) / HBMT_PAGE)
#define BUDGET	32		/* cache pages: write-backs and evictions all along */
#define NOBODY	65534
#define HBMCTL	"../../tools/hbmctl/hbmctl"

enum { ST_COPYING, ST_DONE, ST_FAILED, ST_CANCELLED };

/* ---- netlink -------------------------------------------------------- */

struct rs_job {
	uint32_t id, region, chunk, from, to, state, pages, done, error;
	int has_state;
};

static int on_job(uint8_t cmd, struct nlattr *attrs, int len, void *arg)
{
	struct rs_job *j = arg;
	struct nlattr *a;
	int rem;

	(void)cmd;
	nla_for_each_attr(a, attrs, len, rem) {
		uint32_t v;

		if (nla_len(a) < 4)
			continue;
		v = nla_get_u32(a);
		switch (nla_type(a)) {
		case HBMPOOL_A_RESYNC_ID: j->id = v; break;
		case HBMPOOL_A_RESYNC_REGION_ID: j->region = v; break;
		case HBMPOOL_A_RESYNC_CHUNK: j->chunk = v; break;
		case HBMPOOL_A_RESYNC_FROM_NODE_ID: j->from = v; break;
		case HBMPOOL_A_RESYNC_TO_NODE_ID: j->to = v; break;
		case HBMPOOL_A_RESYNC_STATE: j->state = v; j->has_state = 1; break;
		case HBMPOOL_A_RESYNC_PAGES: j->pages = v; break;
		case HBMPOOL_A_RESYNC_PAGES_DONE: j->done = v; break;
		case HBMPOOL_A_RESYNC_ERROR: j->error = v; break;
		}
	}
	return 0;
}

#define NONE UINT32_MAX

/* resync-new; the move into *j.  0 or -errno. */
static int rs_new(struct hbm_nl *nl, uint32_t region, uint32_t chunk, uint32_t from,
		  uint32_t to, struct rs_job *j)
{
	struct nl_msg *m = hbm_nl_msg(nl, HBMPOOL_CMD_RESYNC_NEW, 0);

	memset(j, 0, sizeof(*j));
	if (!m)
		return -ENOMEM;
	if (nla_put_u32(m, HBMPOOL_A_RESYNC_REGION_ID, region) ||
	    nla_put_u32(m, HBMPOOL_A_RESYNC_CHUNK, chunk) ||
	    (from != NONE && nla_put_u32(m, HBMPOOL_A_RESYNC_FROM_NODE_ID, from)) ||
	    (to != NONE && nla_put_u32(m, HBMPOOL_A_RESYNC_TO_NODE_ID, to))) {
		nlmsg_free(m);
		return -EMSGSIZE;
	}
	return hbm_nl_request(nl, m, on_job, j);
}

static int rs_id_cmd(struct hbm_nl *nl, uint8_t cmd, uint32_t id, struct rs_job *j)
{
	struct nl_msg *m = hbm_nl_msg(nl, cmd, 0);

	if (j)
		memset(j, 0, sizeof(*j));
	if (!m)
		return -ENOMEM;
	if (nla_put_u32(m, HBMPOOL_A_RESYNC_ID, id)) {
		nlmsg_free(m);
		return -EMSGSIZE;
	}
	return hbm_nl_request(nl, m, j ? on_job : NULL, j);
}

static int rs_get(struct hbm_nl *nl, uint32_t id, struct rs_job *j)
{
	return rs_id_cmd(nl, HBMPOOL_CMD_RESYNC_GET, id, j);
}

static int rs_del(struct hbm_nl *nl, uint32_t id)
{
	return rs_id_cmd(nl, HBMPOOL_CMD_RESYNC_DEL, id, NULL);
}

/* Poll move id until it is not copying (timeout_ms); 0 or -errno. */
static int rs_wait(struct hbm_nl *nl, uint32_t id, unsigned int timeout_ms, struct rs_job *j)
{
	unsigned int t;
	int ret;

	for (t = 0;; t += 50) {
		ret = rs_get(nl, id, j);
		if (ret)
			return ret;
		if (j->state != ST_COPYING)
			return 0;
		if (t >= timeout_ms)
			return -ETIMEDOUT;
		hbmt_sleep_ms(50);
	}
}

struct params {
	int64_t mbps, jobs;
};

static int on_params(uint8_t cmd, struct nlattr *attrs, int len, void *arg)
{
	struct params *p = arg;
	struct nlattr *a;
	int rem;

	(void)cmd;
	nla_for_each_attr(a, attrs, len, rem) {
		if (nla_type(a) == HBMPOOL_A_PARAMS_RESYNC_MBPS)
			p->mbps = nla_get_u32(a);
		else if (nla_type(a) == HBMPOOL_A_PARAMS_RESYNC_JOBS)
			p->jobs = nla_get_u32(a);
	}
	return 0;
}

static int params_get(struct hbm_nl *nl, struct params *p)
{
	struct nl_msg *m = hbm_nl_msg(nl, HBMPOOL_CMD_PARAMS_GET, 0);

	p->mbps = p->jobs = -1;
	if (!m)
		return -ENOMEM;
	return hbm_nl_request(nl, m, on_params, p);
}

/* params-set of one u32 attribute. */
static int params_set_u32(struct hbm_nl *nl, int attr, uint32_t v)
{
	struct nl_msg *m = hbm_nl_msg(nl, HBMPOOL_CMD_PARAMS_SET, 0);

	if (!m)
		return -ENOMEM;
	if (nla_put_u32(m, attr, v)) {
		nlmsg_free(m);
		return -EMSGSIZE;
	}
	return hbm_nl_request(nl, m, NULL, NULL);
}

static int on_chunks(uint8_t cmd, struct nlattr *attrs, int len, void *arg)
{
	int64_t *v = arg;
	struct nlattr *a;
	int rem;

	(void)cmd;
	nla_for_each_attr(a, attrs, len, rem)
		if (nla_type(a) == HBMPOOL_A_NODE_CHUNKS)
			*v = nla_get_u32(a);
	return 0;
}

/* node-get's chunks of node id; -1 if absent, or -errno. */
static int64_t node_chunks(struct hbm_nl *nl, uint32_t id)
{
	struct nl_msg *m = hbm_nl_msg(nl, HBMPOOL_CMD_NODE_GET, 0);
	int64_t v = -1;
	int ret;

	if (!m)
		return -ENOMEM;
	if (nla_put_u32(m, HBMPOOL_A_NODE_ID, id)) {
		nlmsg_free(m);
		return -EMSGSIZE;
	}
	ret = hbm_nl_request(nl, m, on_chunks, &v);
	return ret ? ret : v;
}

/* ---- pages ---------------------------------------------------------- */

static uint64_t word(uint64_t page, uint64_t ver, unsigned int i)
{
	return (page << 40) | (ver << 12) | i;
}

static void fill_page(void *p, uint64_t page, uint64_t ver)
{
	volatile uint64_t *w = p;
	unsigned int i;

	for (i = 0; i < HBMT_PAGE / 8; i++)
		w[i] = word(page, ver, i);
}

/* -1 if p holds page's version ver, else the first word that differs. */
static int check_page(const void *p, uint64_t page, uint64_t ver)
{
	const volatile uint64_t *w = p;
	unsigned int i;

	for (i = 0; i < HBMT_PAGE / 8; i++)
		if (w[i] != word(page, ver, i))
			return (int)i;
	return -1;
}

/* ---- the fixture ---------------------------------------------------- */

FIXTURE(rs)
{
	struct hbmt_env env;
	struct hbm_nl *nl;
	struct params saved;
	struct hbmt_region r[3];
	uint64_t *ver;		/* the last version written, per page of r[0] */
};

FIXTURE_SETUP(rs)
{
	int ret;

	for (int i = 0; i < 3; i++)
		self->r[i].fd = -1;
	self->nl = NULL;
	self->ver = NULL;
	self->saved.mbps = -1;
	hbmt_env_setup(_metadata, &self->env, BUDGET, 2000);
	hbmt_env_node(_metadata, &self->env, N_A, CAP_MIB, 20, NULL);
	hbmt_env_node(_metadata, &self->env, N_B, CAP_MIB, 30, NULL);
	hbmt_env_node(_metadata, &self->env, N_C, CAP_MIB, 40, NULL);
	hbmt_env_node(_metadata, &self->env, N_D, 1, 50, NULL);
	ret = hbm_nl_open(&self->nl);
	ASSERT_EQ(0, ret) TH_LOG("netlink: %s", strerror(-ret));
	ASSERT_EQ(0, params_get(self->nl, &self->saved));
	ASSERT_LE(0, self->saved.mbps) TH_LOG("params-get has no resync-mbps");
	ASSERT_LE(1, self->saved.jobs) TH_LOG("params-get has no resync-jobs");
	ASSERT_EQ(0, hbmt_debugfs_missing() ? -1 : 0) TH_LOG("%s", hbmt_debugfs_missing());
}

FIXTURE_TEARDOWN(rs)
{
	for (int i = 0; i < 3; i++)
		hbmt_region_close(&self->r[i]);
	if (self->nl && self->saved.mbps >= 0) {
		EXPECT_EQ(0, params_set_u32(self->nl, HBMPOOL_A_PARAMS_RESYNC_MBPS,
					    (uint32_t)self->saved.mbps));
		EXPECT_EQ(0, params_set_u32(self->nl, HBMPOOL_A_PARAMS_RESYNC_JOBS,
					    (uint32_t)self->saved.jobs));
	}
	if (self->nl)
		hbm_nl_close(self->nl);
	free(self->ver);
	hbmt_env_teardown(_metadata, &self->env);
}

/* Opens region slot: len bytes in chunks of chunk, bind over set (so on A). */
#define OPEN(slot, len, chunk, set) do {					\
	int __r = hbmt_region_open(&self->r[slot], self->env.devfd, (len), (chunk), \
				   HBMPOOL_POLICY_BIND, (set), 0, "rs");	\
	ASSERT_EQ(0, __r) TH_LOG("region: %s", strerror(-__r));			\
} while (0)

#define MBPS(v) ASSERT_EQ(0, params_set_u32(self->nl, HBMPOOL_A_PARAMS_RESYNC_MBPS, (v)))

/* The chunk's entry (home node, offset there). */
static int chunk_info(struct hbmt_region *r, uint32_t chunk, struct hbmpool_chunk_info *out)
{
	struct hbmpool_chunk_info ci[16];
	struct hbmpool_region_info ri;
	int ret = hbm_region_info(r->fd, &ri, ci, 16, NULL);

	if (ret)
		return ret;
	if (chunk >= ri.nr_chunks || chunk >= 16)
		return -ERANGE;
	*out = ci[chunk];
	return 0;
}

static uint32_t home(struct hbmt_region *r, uint32_t chunk)
{
	struct hbmpool_chunk_info ci;

	return chunk_info(r, chunk, &ci) ? NONE : ci.node;
}

static uint64_t free_bytes(unsigned int node)
{
	uint64_t v = 0;

	return hbm_node_u64(node, "free_bytes", &v) ? ~0ULL : v;
}

/* Writes version ver into every page of chunk of r (chunk size cs). */
static void write_chunk(struct hbmt_region *r, uint64_t cs, uint32_t chunk, uint64_t ver)
{
	uint64_t p, first = chunk * PAGES_PER(cs);

	for (p = first; p < first + PAGES_PER(cs); p++)
		fill_page(r->map + p * HBMT_PAGE, p, ver);
}

/*
 * Every page of chunk of r holds its version (ver[page - first], or ver0 if
 * ver is NULL): in the memory of the chunk's home (after an fsync) and
 * through the mapping.  Returns the pages that differ, logging the first.
 */
static int verify_chunk(struct __test_metadata *_metadata, struct hbmt_region *r,
			uint64_t cs, uint32_t chunk, const uint64_t *ver, uint64_t ver0)
{
	uint64_t p, first = chunk * PAGES_PER(cs);
	struct hbmpool_chunk_info ci;
	uint8_t buf[HBMT_PAGE];
	int bad = 0, w;

	EXPECT_EQ(0, fsync(r->fd));
	if (chunk_info(r, chunk, &ci))
		return -1;
	for (p = first; p < first + PAGES_PER(cs); p++) {
		uint64_t v = ver ? ver[p - first] : ver0;
		ssize_t n = hbm_hbm_pread(ci.node, buf, sizeof(buf),
					  ci.node_offset + (p - first) * HBMT_PAGE);

		if (n != (ssize_t)sizeof(buf)) {
			if (!bad++)
				TH_LOG("page %llu: read of node %u: %zd", (unsigned long long)p,
				       ci.node, n);
			continue;
		}
		w = check_page(buf, p, v);
		if (w >= 0 && !bad++)
			TH_LOG("page %llu on node %u word %d: %#llx, not version %llu (%#llx)",
			       (unsigned long long)p, ci.node, w,
			       (unsigned long long)((uint64_t *)buf)[w], (unsigned long long)v,
			       (unsigned long long)word(p, v, w));
		w = check_page(r->map + p * HBMT_PAGE, p, v);
		if (w >= 0 && !bad++)
			TH_LOG("page %llu through the mapping, word %d: not version %llu",
			       (unsigned long long)p, w, (unsigned long long)v);
	}
	return bad;
}

TEST_F(rs, feature_bit)
{
	struct hbmpool_features f;

	ASSERT_EQ(0, hbm_features(self->env.devfd, &f));
	EXPECT_TRUE(f.features & HBMPOOL_FEAT_RESYNC);
	/* node-get reports chunks: A holds none yet */
	EXPECT_EQ(0, node_chunks(self->nl, N_A));
}

/* ---- a move under load -------------------------------------------------- */

struct writer {
	struct hbmt_region *r;
	uint64_t *ver;		/* of the chunk's pages */
	uint32_t first, npages, stride;
	atomic_int *stop;
	uint64_t writes;
	int err;
};

/* Rewrites its pages of chunk 0 with the next version; fsync now and then. */
static void *writer_fn(void *arg)
{
	struct writer *w = arg;
	uint32_t p;

	while (!atomic_load(w->stop)) {
		for (p = w->first; p < w->npages && !atomic_load(w->stop); p += w->stride) {
			fill_page(w->r->map + (uint64_t)p * HBMT_PAGE, p, w->ver[p] + 1);
			w->ver[p]++;
			if (++w->writes % 32 == 0 && fsync(w->r->fd))
				w->err = errno;
		}
	}
	return NULL;
}

TEST_F_TIMEOUT(rs, move_under_load, 180)
{
	const uint32_t np = PAGES_PER(CHUNK), nw = 2;
	struct writer w[2];
	pthread_t th[2];
	atomic_int stop = 0;
	struct rs_job j;
	uint64_t free_a, free_b, writes_at_start = 0, writes = 0, wb0, wb1, ev0, ev1;
	int ret, bad, copying_seen = 0;
	uint32_t i;

	OPEN(0, 4 * CHUNK, CHUNK, HBM_NODES(N_A, N_B, N_C));
	ASSERT_EQ(N_A, home(&self->r[0], 0));
	self->ver = calloc(np, sizeof(*self->ver));
	ASSERT_NE(NULL, self->ver);
	for (i = 0; i < np; i++)
		self->ver[i] = 1;
	write_chunk(&self->r[0], CHUNK, 0, 1);
	ASSERT_EQ(0, fsync(self->r[0].fd));
	free_a = free_bytes(N_A);
	free_b = free_bytes(N_B);

	for (i = 0; i < nw; i++) {
		w[i] = (struct writer){ .r = &self->r[0], .ver = self->ver, .first = i,
					.npages = np, .stride = nw, .stop = &stop };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, writer_fn, &w[i]));
	}
	hbmt_sleep_ms(200);
	MBPS(1);
	ASSERT_EQ(0, hbm_global_u64("stats/writebacks", &wb0));
	ASSERT_EQ(0, hbm_global_u64("stats/evictions", &ev0));
	for (i = 0; i < nw; i++)
		writes_at_start += w[i].writes;
	ret = rs_new(self->nl, self->r[0].id, 0, NONE, N_B, &j);
	if (ret) {
		atomic_store(&stop, 1);
		for (i = 0; i < nw; i++)
			pthread_join(th[i], NULL);
	}
	ASSERT_EQ(0, ret) TH_LOG("resync-new: %s (%s)", strerror(-ret), hbm_nl_extack(self->nl));
	EXPECT_EQ(N_A, j.from);
	EXPECT_EQ(N_B, j.to);
	EXPECT_EQ(np, j.pages);
	/* the writers go on until the move ends */
	for (int t = 0; t < 120000; t += 50) {
		struct rs_job g;

		ret = rs_get(self->nl, j.id, &g);
		if (ret || g.state != ST_COPYING) {
			j = g;
			break;
		}
		if (g.done < g.pages)
			copying_seen = 1;
		hbmt_sleep_ms(50);
	}
	atomic_store(&stop, 1);
	EXPECT_EQ(0, hbm_global_u64("stats/writebacks", &wb1));
	EXPECT_EQ(0, hbm_global_u64("stats/evictions", &ev1));
	for (i = 0; i < nw; i++) {
		pthread_join(th[i], NULL);
		EXPECT_EQ(0, w[i].err) TH_LOG("writer %u: fsync: %s", i, strerror(w[i].err));
		writes += w[i].writes;
	}
	ASSERT_EQ(0, ret) TH_LOG("resync-get: %s", strerror(-ret));
	ASSERT_EQ(ST_DONE, j.state) TH_LOG("move ended in state %u, error %u (%s)", j.state,
					   j.error, strerror((int)j.error));
	EXPECT_EQ(0, j.error);
	EXPECT_TRUE(copying_seen) TH_LOG("never saw the move copying: no overlap with the writers");
	EXPECT_LT(writes_at_start + 16, writes) TH_LOG("the writers wrote %llu pages in the copy",
						      (unsigned long long)(writes - writes_at_start));
	/* the copy overlapped write-backs and evictions */
	EXPECT_LT(wb0, wb1);
	EXPECT_LT(ev0, ev1);
	TH_LOG("during the move: %llu page writes, %llu write-backs, %llu evictions",
	       (unsigned long long)(writes - writes_at_start), (unsigned long long)(wb1 - wb0),
	       (unsigned long long)(ev1 - ev0));
	MBPS(0);

	EXPECT_EQ(N_B, home(&self->r[0], 0));
	EXPECT_EQ(N_A, home(&self->r[0], 1));
	/* the source's chunk is given back once the late requests are gone */
	EXPECT_EQ(0, hbmt_wait_node(N_A, "free_bytes", HBMT_EQ, free_a + CHUNK, 10000, NULL));
	EXPECT_EQ(free_b - CHUNK, free_bytes(N_B));
	bad = verify_chunk(_metadata, &self->r[0], CHUNK, 0, self->ver, 0);
	EXPECT_EQ(0, bad);
	/* evict chunk 0 (touch 3 other chunks' worth of pages), read it back */
	for (uint64_t p = PAGES_PER(CHUNK); p < 4 * PAGES_PER(CHUNK); p += 1)
		(void)*(volatile uint64_t *)(self->r[0].map + p * HBMT_PAGE);
	bad = verify_chunk(_metadata, &self->r[0], CHUNK, 0, self->ver, 0);
	EXPECT_EQ(0, bad);
}

/* ---- where a move goes ---------------------------------------------------- */

TEST_F_TIMEOUT(rs, move_to_and_placement, 180)
{
	struct rs_job j;
	int ret;

	MBPS(0);
	OPEN(0, 3 * CHUNK, CHUNK, HBM_NODES(N_A, N_B, N_C));
	for (uint32_t c = 0; c < 3; c++) {
		ASSERT_EQ(N_A, home(&self->r[0], c));
		write_chunk(&self->r[0], CHUNK, c, 10 + c);
	}
	/* to C, given */
	ret = rs_new(self->nl, self->r[0].id, 0, N_A, N_C, &j);
	ASSERT_EQ(0, ret) TH_LOG("resync-new: %s (%s)", strerror(-ret), hbm_nl_extack(self->nl));
	ASSERT_EQ(0, rs_wait(self->nl, j.id, 60000, &j));
	EXPECT_EQ(ST_DONE, j.state);
	EXPECT_EQ(N_C, home(&self->r[0], 0));
	EXPECT_EQ(0, verify_chunk(_metadata, &self->r[0], CHUNK, 0, NULL, 10));

	/* no to: placement, in the set, not the source: B or C (bind: B, nearest) */
	ret = rs_new(self->nl, self->r[0].id, 1, NONE, NONE, &j);
	ASSERT_EQ(0, ret) TH_LOG("resync-new: %s (%s)", strerror(-ret), hbm_nl_extack(self->nl));
	EXPECT_TRUE(j.to == N_B || j.to == N_C) TH_LOG("placement chose node %u", j.to);
	ASSERT_EQ(0, rs_wait(self->nl, j.id, 60000, &j));
	EXPECT_EQ(ST_DONE, j.state);
	EXPECT_EQ(j.to, home(&self->r[0], 1));
	EXPECT_EQ(0, verify_chunk(_metadata, &self->r[0], CHUNK, 1, NULL, 11));

	/* B draining: placement passes over it */
	ASSERT_EQ(0, hbm_nl_node_draining(self->nl, N_B, 1, NULL, 0));
	ret = rs_new(self->nl, self->r[0].id, 2, NONE, NONE, &j);
	ASSERT_EQ(0, ret) TH_LOG("resync-new: %s (%s)", strerror(-ret), hbm_nl_extack(self->nl));
	EXPECT_EQ(N_C, j.to);
	ASSERT_EQ(0, rs_wait(self->nl, j.id, 60000, &j));
	EXPECT_EQ(ST_DONE, j.state);
	EXPECT_EQ(N_C, home(&self->r[0], 2));
	EXPECT_EQ(0, verify_chunk(_metadata, &self->r[0], CHUNK, 2, NULL, 12));
	EXPECT_EQ(0, hbm_nl_node_draining(self->nl, N_B, 0, NULL, 0));
	/* every chunk left A */
	EXPECT_EQ(0, node_chunks(self->nl, N_A));
	EXPECT_EQ(0, hbmt_wait_node(N_A, "free_bytes", HBMT_EQ, CAP_MIB * HBMT_MIB, 10000, NULL));
}

/*
 * A dirty cached page with a memory error (MADV_HWPOISON) in a chunk that
 * moves: its data is lost, so the move never copies it; the target gets the
 * source's last good data for it, an error is counted, and the move is done.
 */
TEST_F_TIMEOUT(rs, move_drops_poisoned_page, 120)
{
	struct hbmpool_stats st0, st1;
	struct rs_job j;
	int ret;

	MBPS(0);
	/* nothing written back or evicted behind the test's back */
	ASSERT_EQ(0, hbm_set_global_u64("cache_budget_pages", 4 * PAGES_PER(CHUNK)));
	OPEN(0, CHUNK, CHUNK, HBM_NODES(N_A, N_B));
	ASSERT_EQ(N_A, home(&self->r[0], 0));
	write_chunk(&self->r[0], CHUNK, 0, 10);
	ASSERT_EQ(0, fsync(self->r[0].fd));
	fill_page(self->r[0].map + 5 * HBMT_PAGE, 5, 11);
	if (madvise(self->r[0].map + 5 * HBMT_PAGE, HBMT_PAGE, MADV_HWPOISON) && errno != EBUSY)
		SKIP(return, "MADV_HWPOISON: %s (needs CONFIG_MEMORY_FAILURE and CAP_SYS_ADMIN)",
		     strerror(errno));
	ASSERT_EQ(0, hbm_region_stats(self->r[0].fd, &st0));
	ret = rs_new(self->nl, self->r[0].id, 0, N_A, N_B, &j);
	ASSERT_EQ(0, ret) TH_LOG("resync-new: %s (%s)", strerror(-ret), hbm_nl_extack(self->nl));
	ASSERT_EQ(0, rs_wait(self->nl, j.id, 60000, &j));
	EXPECT_EQ(ST_DONE, j.state);
	EXPECT_EQ(N_B, home(&self->r[0], 0));
	ASSERT_EQ(0, hbm_region_stats(self->r[0].fd, &st1));
	EXPECT_EQ(st0.errors + 1, st1.errors) TH_LOG("the lost page is counted once");
	/* a new mapping: the old PTE would still reach the poisoned page */
	ASSERT_EQ(0, munmap(self->r[0].map, self->r[0].len));
	self->r[0].map = mmap(NULL, self->r[0].len, PROT_READ | PROT_WRITE, MAP_SHARED,
			      self->r[0].fd, 0);
	ASSERT_NE(MAP_FAILED, self->r[0].map);
	EXPECT_EQ(0, verify_chunk(_metadata, &self->r[0], CHUNK, 0, NULL, 10))
		TH_LOG("the poisoned page's data reached the target");
}

/* ---- refusals ------------------------------------------------------------ */

/* resync-new as nobody, without capabilities: its -errno as exit status. */
static int new_as_nobody(uint32_t region)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid) {
		struct hbm_nl *nl;
		struct rs_job j;

		if (setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY))
			_exit(100);
		if (hbm_nl_open(&nl))
			_exit(101);
		_exit(-rs_new(nl, region, 0, NONE, N_B, &j));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -ECHILD;
	return WEXITSTATUS(status);
}

#define REFUSED(want, region, chunk, from, to) do {				\
	struct rs_job __j;							\
	int __r = rs_new(self->nl, (region), (chunk), (from), (to), &__j);	\
	EXPECT_EQ(-(want), __r) TH_LOG("resync-new %u/%u to %u: %s, not %s (%s)",	\
				       (region), (chunk), (to), strerror(-__r),	\
				       strerror(want), hbm_nl_extack(self->nl)); \
} while (0)

TEST_F(rs, refusals)
{
	struct rs_job j, k;
	int ret;

	OPEN(0, 2 * BIG, BIG, HBM_NODES(N_A, N_B, N_C, N_D));
	OPEN(1, 2 * CHUNK, CHUNK, HBM_NODES(N_A, N_B));
	OPEN(2, CHUNK, CHUNK, HBM_NODES(N_D));	/* fills D */
	ASSERT_EQ(N_A, home(&self->r[0], 0));
	ASSERT_EQ(N_D, home(&self->r[2], 0));
	ASSERT_EQ(0, free_bytes(N_D));

	/* the home itself */
	ret = rs_new(self->nl, self->r[1].id, 0, NONE, N_A, &k);
	EXPECT_TRUE(ret == -EEXIST || ret == -EINVAL) TH_LOG("to the home: %s", strerror(-ret));
	/* outside the node set */
	REFUSED(EINVAL, self->r[1].id, 0, NONE, N_C);
	/* no such region, chunk out of range */
	REFUSED(ENOENT, 0xfffffff0u, 0, NONE, N_B);
	REFUSED(ENOENT, self->r[1].id, 2, NONE, N_B);
	REFUSED(ENOENT, self->r[1].id, 1000000, NONE, N_B);
	/* target full */
	REFUSED(ENOSPC, self->r[0].id, 1, NONE, N_D);
	/* unprivileged */
	EXPECT_EQ(EPERM, new_as_nobody(self->r[1].id));

	/* a second move of a chunk being copied */
	MBPS(1);
	ret = rs_new(self->nl, self->r[0].id, 0, NONE, N_B, &j);
	ASSERT_EQ(0, ret) TH_LOG("resync-new: %s (%s)", strerror(-ret), hbm_nl_extack(self->nl));
	REFUSED(EBUSY, self->r[0].id, 0, NONE, N_C);
	REFUSED(EBUSY, self->r[0].id, 0, NONE, NONE);
	ASSERT_EQ(0, rs_get(self->nl, j.id, &k));
	EXPECT_EQ(ST_COPYING, k.state) TH_LOG("the first move ended already: no EBUSY checked");
	EXPECT_EQ(0, rs_del(self->nl, j.id));
	ASSERT_EQ(0, rs_wait(self->nl, j.id, 30000, &k));
	EXPECT_EQ(ST_CANCELLED, k.state);
	/* resync-get of an unknown id */
	EXPECT_EQ(-ENOENT, rs_get(self->nl, 0xfffffff0u, &k));
	EXPECT_EQ(-ENOENT, rs_del(self->nl, 0xfffffff0u));
}

/* ---- moves that do not finish -------------------------------------------- */

/*
 * Starts a throttled move of r[0]'s chunk 0 (BIG, version 1 everywhere) to
 * B, waits until it is copying, then dirties its first 64 pages (version
 * 2, not synced: they are in the cache, dirty, under the move).
 */
static void start_slow_move(struct __test_metadata *_metadata, FIXTURE_DATA(rs) *self,
			    struct rs_job *j)
{
	struct rs_job g;
	int ret;

	OPEN(0, 2 * BIG, BIG, HBM_NODES(N_A, N_B, N_C));
	ASSERT_EQ(N_A, home(&self->r[0], 0));
	self->ver = calloc(PAGES_PER(BIG), sizeof(*self->ver));
	ASSERT_NE(NULL, self->ver);
	for (uint32_t i = 0; i < PAGES_PER(BIG); i++)
		self->ver[i] = i < 64 ? 2 : 1;
	write_chunk(&self->r[0], BIG, 0, 1);
	ASSERT_EQ(0, fsync(self->r[0].fd));
	MBPS(1);
	ret = rs_new(self->nl, self->r[0].id, 0, NONE, N_B, j);
	ASSERT_EQ(0, ret) TH_LOG("resync-new: %s (%s)", strerror(-ret), hbm_nl_extack(self->nl));
	for (uint64_t p = 0; p < 64; p++)
		fill_page(self->r[0].map + p * HBMT_PAGE, p, 2);
	hbmt_sleep_ms(300);
	ASSERT_EQ(0, rs_get(self->nl, j->id, &g));
	ASSERT_EQ(ST_COPYING, g.state) TH_LOG("the move ended already (state %u)", g.state);
	ASSERT_LT(g.done, g.pages);
}

TEST_F_TIMEOUT(rs, cancel_mid_copy, 120)
{
	struct rs_job j;

	start_slow_move(_metadata, self, &j);
	ASSERT_EQ(0, rs_del(self->nl, j.id));
	ASSERT_EQ(0, rs_wait(self->nl, j.id, 30000, &j));
	EXPECT_EQ(ST_CANCELLED, j.state);
	EXPECT_EQ(N_A, home(&self->r[0], 0));
	EXPECT_EQ(0, hbmt_wait_node(N_B, "free_bytes", HBMT_EQ, CAP_MIB * HBMT_MIB, 10000, NULL));
	EXPECT_EQ(0, verify_chunk(_metadata, &self->r[0], BIG, 0, self->ver, 0));
	/* a move that ended is forgotten by resync-del */
	EXPECT_EQ(0, rs_del(self->nl, j.id));
	EXPECT_EQ(-ENOENT, rs_get(self->nl, j.id, &j));
}

TEST_F_TIMEOUT(rs, target_deleted_mid_copy, 120)
{
	struct rs_job j;
	int ret;

	start_slow_move(_metadata, self, &j);
	ret = hbm_node_del(N_B);
	ASSERT_EQ(0, ret) TH_LOG("node-del of the target: %s", strerror(-ret));
	ASSERT_EQ(0, rs_wait(self->nl, j.id, 30000, &j));
	EXPECT_EQ(ST_FAILED, j.state);
	EXPECT_EQ(ENODEV, j.error) TH_LOG("error %u: %s", j.error, strerror((int)j.error));
	EXPECT_EQ(N_A, home(&self->r[0], 0));
	/* the dirty pages go to the source alone */
	EXPECT_EQ(0, verify_chunk(_metadata, &self->r[0], BIG, 0, self->ver, 0));
}

TEST_F_TIMEOUT(rs, region_closed_mid_copy, 120)
{
	struct rs_job j;

	start_slow_move(_metadata, self, &j);
	hbmt_region_close(&self->r[0]);
	ASSERT_EQ(0, rs_wait(self->nl, j.id, 30000, &j));
	EXPECT_EQ(ST_CANCELLED, j.state);
	/* every node gets all its bytes back */
	EXPECT_EQ(0, hbmt_wait_node(N_A, "free_bytes", HBMT_EQ, CAP_MIB * HBMT_MIB, 10000, NULL));
	EXPECT_EQ(0, hbmt_wait_node(N_B, "free_bytes", HBMT_EQ, CAP_MIB * HBMT_MIB, 10000, NULL));
	EXPECT_EQ(0, hbmt_wait_node(N_C, "free_bytes", HBMT_EQ, CAP_MIB * HBMT_MIB, 10000, NULL));
}

/* ---- hbmctl node drain ------------------------------------------------------ */

TEST_F_TIMEOUT(rs, drain_with_hbmctl, 180)
{
	uint64_t d = 0;
	int status;

	ASSERT_EQ(0, access(HBMCTL, X_OK)) TH_LOG(HBMCTL " not built (make tools)");
	MBPS(0);
	OPEN(0, 3 * CHUNK, CHUNK, HBM_NODES(N_A, N_B, N_C));
	OPEN(1, 2 * CHUNK, CHUNK, HBM_NODES(N_A, N_C));
	for (uint32_t c = 0; c < 3; c++)
		write_chunk(&self->r[0], CHUNK, c, 20 + c);
	for (uint32_t c = 0; c < 2; c++)
		write_chunk(&self->r[1], CHUNK, c, 30 + c);
	EXPECT_EQ(5, node_chunks(self->nl, N_A));

	status = system(HBMCTL " node drain 70 --wait --jobs 2");
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, node_chunks(self->nl, N_A));
	ASSERT_EQ(0, hbm_node_u64(N_A, "draining", &d));
	EXPECT_EQ(1, d);
	for (uint32_t c = 0; c < 3; c++) {
		EXPECT_NE(N_A, home(&self->r[0], c));
		EXPECT_EQ(0, verify_chunk(_metadata, &self->r[0], CHUNK, c, NULL, 20 + c));
	}
	for (uint32_t c = 0; c < 2; c++) {
		EXPECT_EQ(N_C, home(&self->r[1], c));
		EXPECT_EQ(0, verify_chunk(_metadata, &self->r[1], CHUNK, c, NULL, 30 + c));
	}
	EXPECT_EQ(0, hbmt_wait_node(N_A, "free_bytes", HBMT_EQ, CAP_MIB * HBMT_MIB, 10000, NULL));
	status = system(HBMCTL " node undrain 70");
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_EQ(0, hbm_node_u64(N_A, "draining", &d));
	EXPECT_EQ(0, d);
}

/* The whole binary needs a kernel that moves chunks. */
static void __attribute__((constructor)) rs_require_resync(void)
{
	hbmt_require_feature(HBMPOOL_FEAT_RESYNC,
			     "this kernel has no chunk moves (no HBMPOOL_FEAT_RESYNC)");
}

TEST_HARNESS_MAIN
