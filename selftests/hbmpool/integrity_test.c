// SPDX-License-Identifier: GPL-2.0
/*
 * hbmpool data integrity, per placement policy: the chunk table follows the
 * policy, an address-dependent pattern written over every page reads back
 * exactly, and after REGION_SYNC each home node's HBM (debugfs nodeN/hbm)
 * holds exactly the written bytes.  The cache is large enough that nothing
 * is evicted here (eviction is cache_test's job).
 *
 * The same over node ids above 63 (100, 513, 1023): the ABI's node sets are
 * bitmaps of up to 1024 ids, placement and REGION_INFO must agree there too.
 *
 * Nodes 21..23, 100, 513 and 1023 belong to this binary.
 */
#include <stdio.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "hbmtest.h"

#define N_A	21	/* 2 MiB, distance 30 */
#define N_B	22	/* 2 MiB, distance 20 */
#define N_C	23	/* 2 MiB, distance 40 */
#define ALL	HBM_NODES(N_A, N_B, N_C)
#define CHUNK	(256 * 1024ULL)
#define LEN	(4 * HBMT_MIB)		/* 16 chunks, 1024 pages */
#define NCHUNK	(LEN / CHUNK)
#define BUDGET	2048			/* pages: the whole region fits */

FIXTURE(integrity)
{
	struct hbmt_env env;
	struct hbmt_region r, r2;
	struct hbmpool_chunk_info ch[NCHUNK];
	uint64_t seed;
};

FIXTURE_VARIANT(integrity)
{
	uint32_t policy;
	uint32_t preferred;
};

/* Chunks on A, B, C by ascending id, round robin. */
FIXTURE_VARIANT_ADD(integrity, interleave)
{
	.policy = HBMPOOL_POLICY_INTERLEAVE,
};

/* B (nearest) fills first, then A, never C. */
FIXTURE_VARIANT_ADD(integrity, bind)
{
	.policy = HBMPOOL_POLICY_BIND,
};

/* C (farthest, but preferred) fills first, then B. */
FIXTURE_VARIANT_ADD(integrity, preferred)
{
	.policy = HBMPOOL_POLICY_PREFERRED,
	.preferred = N_C,
};

FIXTURE_SETUP(integrity)
{
	hbmt_env_setup(_metadata, &self->env, BUDGET, 5000);
	hbmt_env_node(_metadata, &self->env, N_A, 2, 30, NULL);
	hbmt_env_node(_metadata, &self->env, N_B, 2, 20, "scaleout");
	hbmt_env_node(_metadata, &self->env, N_C, 2, 40, "scaleacross");
	self->seed = 0x1234567800000000ULL ^ ((uint64_t)variant->policy << 32) ^ (uint64_t)getpid();
}

FIXTURE_TEARDOWN(integrity)
{
	hbmt_region_close(&self->r);
	hbmt_region_close(&self->r2);
	hbmt_env_teardown(_metadata, &self->env);
}

/* Predict the chunk table from the current sysfs state with the hbmlib model. */
static int predict(int devfd, const FIXTURE_VARIANT(integrity) *variant, uint32_t *out)
{
	static struct hbm_node nodes[HBMPOOL_MAX_NODES];
	static struct hbm_node_model m[HBMPOOL_MAX_NODES];
	int n = hbm_list_nodes(nodes, HBMPOOL_MAX_NODES), k = 0;
	int self = hbm_self_node(devfd);

	if (n < 0)
		return n;
	if (self < 0)
		return self;
	for (int i = 0; i < n; i++) {
		if (nodes[i].id == (uint32_t)self)
			continue;
		m[k].id = nodes[i].id;
		m[k].distance = nodes[i].distance;
		m[k].free_bytes = nodes[i].free_bytes;
		k++;
	}
	return hbm_place(variant->policy, m, (size_t)k, ALL, (uint32_t)self,
			 variant->preferred, LEN, CHUNK, out, NCHUNK);
}

static void open_region(struct __test_metadata *_metadata,
			FIXTURE_DATA(integrity) *self,
			const FIXTURE_VARIANT(integrity) *variant)
{
	struct hbmpool_region_info ri;
	struct hbm_nodeset set;
	char got[64];
	int ret;

	ret = hbmt_region_open(&self->r, self->env.devfd, LEN, CHUNK, variant->policy,
			       ALL, variant->preferred, "integrity");
	ASSERT_EQ(0, ret) TH_LOG("create: %s", strerror(-ret));
	ASSERT_EQ(0, hbm_region_info(self->r.fd, &ri, self->ch, NCHUNK, &set));
	ASSERT_EQ(NCHUNK, ri.nr_chunks);
	EXPECT_EQ(sizeof(self->ch[0]), ri.chunk_entry_size);
	EXPECT_EQ(3, ri.nr_nodes);
	EXPECT_EQ(N_C + 1, ri.nr_node_bits);
	EXPECT_TRUE(hbm_nodeset_equal(ALL, &set))
		TH_LOG("node set %s", hbm_nodeset_format(&set, got, sizeof(got)));
}

/* Check the HBM behind chunks ch[first_chunk..] against the pattern of seed, or zeros if expect_zero. */
static size_t chunks_mismatch(const struct hbmpool_chunk_info *ch, uint64_t seed,
			      uint64_t first_chunk, uint64_t nchunks, int expect_zero,
			      uint64_t *bad_off)
{
	static uint8_t buf[CHUNK];
	size_t bad = 0;

	for (uint64_t c = first_chunk; c < first_chunk + nchunks; c++) {
		ssize_t n = hbm_hbm_pread(ch[c].node, buf, CHUNK, ch[c].node_offset);

		if (n != (ssize_t)CHUNK)
			return SIZE_MAX;
		if (expect_zero) {
			for (size_t i = 0; i < CHUNK; i++) {
				if (buf[i]) {
					if (!bad)
						*bad_off = c * CHUNK + i;
					bad++;
				}
			}
		} else {
			bad += hbm_pattern_check(buf, CHUNK, c * CHUNK, seed,
						 bad ? NULL : bad_off);
		}
	}
	return bad;
}

static size_t hbm_mismatches(FIXTURE_DATA(integrity) *self, uint64_t first_chunk,
			     uint64_t nchunks, int expect_zero, uint64_t *bad_off)
{
	return chunks_mismatch(self->ch, self->seed, first_chunk, nchunks, expect_zero, bad_off);
}

/* REGION_INFO's chunk table is exactly what the policy prescribes, and each node's free_bytes dropped by its chunks. */
TEST_F(integrity, placement)
{
	uint32_t want[NCHUNK];
	uint64_t free0[3], used[3] = { 0 }, v;
	const unsigned int ids[3] = { N_A, N_B, N_C };
	int n;

	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(0, hbm_node_u64(ids[i], "free_bytes", &free0[i]));
	}
	n = predict(self->env.devfd, variant, want);
	ASSERT_EQ((int)NCHUNK, n);
	open_region(_metadata, self, variant);
	for (uint64_t c = 0; c < NCHUNK; c++) {
		EXPECT_EQ(want[c], self->ch[c].node) TH_LOG("chunk %llu", (unsigned long long)c);
		EXPECT_EQ(1, self->ch[c].generation) TH_LOG("a freshly placed chunk");
		EXPECT_EQ(1, self->ch[c].nr_copies);
		EXPECT_EQ(1, self->ch[c].good_copies);
		for (int i = 0; i < 3; i++) {
			if (self->ch[c].node == ids[i])
				used[i] += CHUNK;
		}
	}
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(0, hbm_node_u64(ids[i], "free_bytes", &v));
		EXPECT_EQ(free0[i] - used[i], v) TH_LOG("node %u", ids[i]);
	}
	/* Chunks of one node never overlap in its HBM. */
	for (uint64_t c = 0; c < NCHUNK; c++) {
		for (uint64_t d = 0; d < c; d++) {
			if (self->ch[c].node != self->ch[d].node)
				continue;
			EXPECT_TRUE(self->ch[c].node_offset + CHUNK <= self->ch[d].node_offset ||
				    self->ch[d].node_offset + CHUNK <= self->ch[c].node_offset);
		}
	}
}

/* Every byte of a pattern written over every page reads back; after SYNC the home nodes' HBM holds exactly those bytes. */
TEST_F(integrity, pattern_roundtrip_and_sync_to_hbm)
{
	struct hbmpool_region_info ri;
	struct hbmpool_range rg;
	uint64_t bad = 0;
	size_t nbad;

	open_region(_metadata, self, variant);
	/* Write page by page, as an application would touch it. */
	for (uint64_t off = 0; off < LEN; off += HBMT_PAGE)
		hbm_pattern_fill(self->r.map + off, HBMT_PAGE, off, self->seed);
	nbad = hbm_pattern_check(self->r.map, LEN, 0, self->seed, &bad);
	ASSERT_EQ(0, nbad) TH_LOG("%zu bad bytes, first at offset %llu", nbad,
				  (unsigned long long)bad);
	ASSERT_EQ(0, hbm_region_info(self->r.fd, &ri, NULL, 0, NULL));
	EXPECT_EQ(LEN / HBMT_PAGE, ri.cached_pages);
	EXPECT_EQ(LEN / HBMT_PAGE, ri.dirty_pages);

	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, &rg));
	EXPECT_EQ(LEN / HBMT_PAGE, rg.pages_done);
	EXPECT_EQ(0, rg.pages_failed);
	ASSERT_EQ(0, hbm_region_info(self->r.fd, &ri, NULL, 0, NULL));
	EXPECT_EQ(0, ri.dirty_pages);
	EXPECT_EQ(LEN / HBMT_PAGE, ri.cached_pages);

	nbad = hbm_mismatches(self, 0, NCHUNK, 0, &bad);
	ASSERT_EQ(0, nbad) TH_LOG("HBM: %zu bad bytes, first at region offset %llu",
				  nbad, (unsigned long long)bad);
	/* Still readable from the cache afterwards, and a second sync is empty. */
	EXPECT_EQ(0, hbm_pattern_check(self->r.map, LEN, 0, self->seed, NULL));
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, &rg));
	EXPECT_EQ(0, rg.pages_done);
}

/* SYNC of one chunk writes back exactly that chunk: its HBM holds the data, the other chunks' HBM is still zero and they stay dirty. */
TEST_F(integrity, sync_range)
{
	const uint64_t per_chunk = CHUNK / HBMT_PAGE;
	struct hbmpool_region_info ri;
	struct hbmpool_range rg;
	uint64_t bad = 0;

	open_region(_metadata, self, variant);
	hbm_pattern_fill(self->r.map, LEN, 0, self->seed);
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 3 * CHUNK, CHUNK, &rg));
	EXPECT_EQ(per_chunk, rg.pages_done);
	ASSERT_EQ(0, hbm_region_info(self->r.fd, &ri, NULL, 0, NULL));
	EXPECT_EQ(LEN / HBMT_PAGE - per_chunk, ri.dirty_pages);
	EXPECT_EQ(0, hbm_mismatches(self, 3, 1, 0, &bad));
	EXPECT_EQ(0, hbm_mismatches(self, 0, 3, 1, &bad))
		TH_LOG("unsynced chunk reached HBM at %llu", (unsigned long long)bad);
	EXPECT_EQ(0, hbm_mismatches(self, 4, NCHUNK - 4, 1, &bad))
		TH_LOG("unsynced chunk reached HBM at %llu", (unsigned long long)bad);
	/* Page-sized sub-range, then "to the end" from an offset. */
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 5 * CHUNK + HBMT_PAGE, HBMT_PAGE, &rg));
	EXPECT_EQ(1, rg.pages_done);
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 8 * CHUNK, 0, &rg));
	EXPECT_EQ(8 * per_chunk, rg.pages_done);
	ASSERT_EQ(0, hbm_region_info(self->r.fd, &ri, NULL, 0, NULL));
	EXPECT_EQ(LEN / HBMT_PAGE - 9 * per_chunk - 1, ri.dirty_pages);
	EXPECT_EQ(0, hbm_mismatches(self, 8, NCHUNK - 8, 0, &bad));
}

/* A new region placed where an earlier region wrote and synced reads as zeros (no data leaks between regions). */
TEST_F(integrity, fresh_region_reads_zero)
{
	uint64_t bad = 0;
	size_t nz = 0;

	open_region(_metadata, self, variant);
	hbm_pattern_fill(self->r.map, LEN, 0, self->seed);
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL));
	hbmt_region_close(&self->r);
	ASSERT_EQ(0, hbmt_wait_node(N_A, "free_bytes", HBMT_EQ, 2 * HBMT_MIB, 5000, NULL));
	ASSERT_EQ(0, hbmt_wait_node(N_B, "free_bytes", HBMT_EQ, 2 * HBMT_MIB, 5000, NULL));
	ASSERT_EQ(0, hbmt_wait_node(N_C, "free_bytes", HBMT_EQ, 2 * HBMT_MIB, 5000, NULL));

	open_region(_metadata, self, variant);
	for (uint64_t i = 0; i < LEN; i++) {
		if (self->r.map[i]) {
			if (!nz)
				bad = i;
			nz++;
		}
	}
	EXPECT_EQ(0, nz) TH_LOG("%zu stale bytes, first at %llu", nz, (unsigned long long)bad);
}

/* Two regions on the same nodes never alias: each keeps its own pattern, in the cache and in HBM. */
TEST_F(integrity, two_regions_no_alias)
{
	const uint64_t len2 = LEN / 4;
	struct hbmpool_chunk_info ch2[NCHUNK];
	struct hbmpool_region_info ri;
	static uint8_t buf[CHUNK];
	int ret;

	/* Half the region each so both fit on the nodes. */
	ret = hbmt_region_open(&self->r, self->env.devfd, len2, CHUNK, variant->policy,
			       ALL, variant->preferred, "one");
	ASSERT_EQ(0, ret);
	ret = hbmt_region_open(&self->r2, self->env.devfd, len2, CHUNK, variant->policy,
			       ALL, variant->preferred, "two");
	ASSERT_EQ(0, ret) TH_LOG("second region: %s", strerror(-ret));
	ASSERT_NE(self->r.id, self->r2.id);
	hbm_pattern_fill(self->r.map, len2, 0, self->seed);
	hbm_pattern_fill(self->r2.map, len2, 0, ~self->seed);
	EXPECT_EQ(0, hbm_pattern_check(self->r.map, len2, 0, self->seed, NULL));
	EXPECT_EQ(0, hbm_pattern_check(self->r2.map, len2, 0, ~self->seed, NULL));
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL));
	ASSERT_EQ(0, hbm_region_sync(self->r2.fd, 0, 0, NULL));
	ASSERT_EQ(0, hbm_region_info(self->r2.fd, &ri, ch2, NCHUNK, NULL));
	ASSERT_EQ(len2 / CHUNK, ri.nr_chunks);
	for (uint64_t c = 0; c < len2 / CHUNK; c++) {
		ASSERT_EQ((ssize_t)CHUNK, hbm_hbm_pread(ch2[c].node, buf, CHUNK, ch2[c].node_offset));
		EXPECT_EQ(0, hbm_pattern_check(buf, CHUNK, c * CHUNK, ~self->seed, NULL))
			TH_LOG("region two, chunk %llu", (unsigned long long)c);
	}
	ASSERT_EQ(0, hbm_region_info(self->r.fd, &ri, self->ch, NCHUNK, NULL));
	for (uint64_t c = 0; c < len2 / CHUNK; c++) {
		ASSERT_EQ((ssize_t)CHUNK, hbm_hbm_pread(self->ch[c].node, buf, CHUNK,
							self->ch[c].node_offset));
		EXPECT_EQ(0, hbm_pattern_check(buf, CHUNK, c * CHUNK, self->seed, NULL))
			TH_LOG("region one, chunk %llu", (unsigned long long)c);
	}
}

/* Unmapping and mapping again (and a second mapping at an offset) shows the same bytes. */
TEST_F(integrity, remap_keeps_data)
{
	uint8_t *m;

	open_region(_metadata, self, variant);
	hbm_pattern_fill(self->r.map, LEN, 0, self->seed);
	ASSERT_EQ(0, munmap(self->r.map, LEN));
	self->r.map = NULL;
	m = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, self->r.fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	self->r.map = m;
	EXPECT_EQ(0, hbm_pattern_check(m, LEN, 0, self->seed, NULL));
	m = mmap(NULL, 2 * CHUNK, PROT_READ, MAP_SHARED, self->r.fd, (off_t)(5 * CHUNK));
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ(0, hbm_pattern_check(m, 2 * CHUNK, 5 * CHUNK, self->seed, NULL));
	munmap(m, 2 * CHUNK);
}

/* ---- node ids above 63 ---- */

#define N_H1	100	/* 2 MiB, distance 20: word 1 of the bitmap */
#define N_H2	513	/* 2 MiB, distance 30: word 8 */
#define N_H3	1023	/* 2 MiB, distance 25: the last id, bit 63 of word 15 */
#define HIGH	HBM_NODES(N_H1, N_H2, N_H3)

FIXTURE(high_ids)
{
	struct hbmt_env env;
	struct hbmt_region r;
	struct hbmpool_chunk_info ch[NCHUNK];
	uint64_t seed;
};

FIXTURE_SETUP(high_ids)
{
	hbmt_env_setup(_metadata, &self->env, BUDGET, 5000);
	hbmt_env_node(_metadata, &self->env, N_H1, 2, 20, NULL);
	hbmt_env_node(_metadata, &self->env, N_H2, 2, 30, "scaleout");
	hbmt_env_node(_metadata, &self->env, N_H3, 2, 25, "scaleacross");
	self->seed = 0x4849474800000000ULL ^ (uint64_t)getpid();
}

FIXTURE_TEARDOWN(high_ids)
{
	hbmt_region_close(&self->r);
	hbmt_env_teardown(_metadata, &self->env);
}

/*
 * A region over nodes 100, 513 and 1023 with policy: REGION_INFO returns
 * that node set and the chunk table the model predicts, every byte written
 * reads back, and after SYNC each chunk's bytes are in its node's HBM.
 */
static void high_roundtrip(struct __test_metadata *_metadata,
			   FIXTURE_DATA(high_ids) *self, uint32_t policy)
{
	static struct hbm_node nodes[HBMPOOL_MAX_NODES];
	static struct hbm_node_model m[HBMPOOL_MAX_NODES];
	const unsigned int ids[3] = { N_H1, N_H2, N_H3 };
	uint64_t free0[3], used[3] = { 0 }, v, bad = 0;
	struct hbmpool_region_info ri;
	struct hbm_nodeset set;
	uint32_t want[NCHUNK];
	int n, k = 0, self_id, ret;
	char buf[64];
	size_t nbad;

	self_id = hbm_self_node(self->env.devfd);
	ASSERT_LE(0, self_id);
	n = hbm_list_nodes(nodes, HBMPOOL_MAX_NODES);
	ASSERT_LT(0, n);
	for (int i = 0; i < n; i++) {
		if (nodes[i].id == (uint32_t)self_id)
			continue;
		m[k].id = nodes[i].id;
		m[k].distance = nodes[i].distance;
		m[k].free_bytes = nodes[i].free_bytes;
		k++;
	}
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(0, hbm_node_u64(ids[i], "free_bytes", &free0[i])) TH_LOG("node %u", ids[i]);
	}
	ASSERT_EQ((int)NCHUNK, hbm_place(policy, m, (size_t)k, HIGH, (uint32_t)self_id, 0,
					 LEN, CHUNK, want, NCHUNK));

	ret = hbmt_region_open(&self->r, self->env.devfd, LEN, CHUNK, policy, HIGH, 0, "high");
	ASSERT_EQ(0, ret) TH_LOG("create over 100, 513, 1023: %s", strerror(-ret));
	ASSERT_EQ(0, hbm_fdinfo_str(self->r.fd, "nodes", buf, sizeof(buf)));
	EXPECT_STREQ("100,513,1023", buf);

	ASSERT_EQ(0, hbm_region_info(self->r.fd, &ri, self->ch, NCHUNK, &set));
	ASSERT_EQ(NCHUNK, ri.nr_chunks);
	EXPECT_EQ(3, ri.nr_nodes);
	EXPECT_EQ(1024, ri.nr_node_bits);
	EXPECT_TRUE(hbm_nodeset_equal(HIGH, &set))
		TH_LOG("node set %s", hbm_nodeset_format(&set, buf, sizeof(buf)));
	for (uint64_t c = 0; c < NCHUNK; c++) {
		EXPECT_EQ(want[c], self->ch[c].node) TH_LOG("chunk %llu", (unsigned long long)c);
		EXPECT_EQ(1, self->ch[c].generation);
		EXPECT_EQ(1, self->ch[c].nr_copies);
		for (int i = 0; i < 3; i++) {
			if (self->ch[c].node == ids[i])
				used[i] += CHUNK;
		}
	}
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(0, hbm_node_u64(ids[i], "free_bytes", &v));
		EXPECT_EQ(free0[i] - used[i], v) TH_LOG("node %u", ids[i]);
	}

	for (uint64_t off = 0; off < LEN; off += HBMT_PAGE)
		hbm_pattern_fill(self->r.map + off, HBMT_PAGE, off, self->seed);
	nbad = hbm_pattern_check(self->r.map, LEN, 0, self->seed, &bad);
	ASSERT_EQ(0, nbad) TH_LOG("%zu bad bytes, first at offset %llu", nbad,
				  (unsigned long long)bad);
	ASSERT_EQ(0, hbm_region_sync(self->r.fd, 0, 0, NULL));
	nbad = chunks_mismatch(self->ch, self->seed, 0, NCHUNK, 0, &bad);
	ASSERT_EQ(0, nbad) TH_LOG("HBM: %zu bad bytes, first at region offset %llu",
				  nbad, (unsigned long long)bad);
}

/* Interleave: chunk i on 100, 513, 1023 in turn (ascending ids). */
TEST_F(high_ids, interleave)
{
	high_roundtrip(_metadata, self, HBMPOOL_POLICY_INTERLEAVE);
	EXPECT_EQ(N_H1, self->ch[0].node);
	EXPECT_EQ(N_H2, self->ch[1].node);
	EXPECT_EQ(N_H3, self->ch[2].node);
	EXPECT_EQ(N_H1, self->ch[3].node);
}

/* Bind: 100 (distance 20) fills first, then 1023 (25), never 513 (30). */
TEST_F(high_ids, bind)
{
	high_roundtrip(_metadata, self, HBMPOOL_POLICY_BIND);
	EXPECT_EQ(N_H1, self->ch[0].node);
	EXPECT_EQ(N_H3, self->ch[NCHUNK - 1].node);
}

/* Without node 1023 a region over the set is ENODEV; the id can be created again and used. */
TEST_F(high_ids, delete_and_recreate)
{
	struct stat st;

	ASSERT_EQ(0, hbm_node_del(N_H3));
	EXPECT_EQ(0, hbmt_wait_gone(HBM_SYSFS "/nodes/node1023", 5000));
	EXPECT_NE(0, stat(HBM_SYSFS "/nodes/node1023", &st));
	EXPECT_EQ(-ENODEV, hbmt_region_open(&self->r, self->env.devfd, LEN, CHUNK,
					    HBMPOOL_POLICY_INTERLEAVE, HIGH, 0, "gone"));
	ASSERT_EQ(0, hbm_node_add(N_H3, 2, 25, "scaleacross"));
	EXPECT_EQ(0, stat(HBM_SYSFS "/nodes/node1023", &st));
	high_roundtrip(_metadata, self, HBMPOOL_POLICY_INTERLEAVE);
}

TEST_HARNESS_MAIN
