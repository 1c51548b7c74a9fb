// SPDX-License-Identifier: GPL-2.0
/*
 * hbmpool ABI tests: every field of every ioctl of uapi/linux/hbmpool.h is
 * validated with the errno the header and the admin guide document, mmap
 * rules, the sysfs attributes and their rejected writes.
 *
 * Nodes 11..13 and 700 belong to this binary; 64 and 1000 are never created
 * (unknown nodes).
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "hbmtest.h"

#define N_NEAR	11	/* 4 MiB, distance 20, default link */
#define N_FAR	12	/* 4 MiB, distance 30, scaleout */
#define N_SPARE	13	/* never created by setup: "unknown node" */
#define N_HIGH	700	/* 1 MiB, distance 25: created by the tests that need it */
#define N_UNKNOWN_64	64	/* never created: first id of the second word */
#define N_UNKNOWN_HIGH	1000	/* never created */

FIXTURE(abi)
{
	struct hbmt_env env;
	struct hbmt_region r[4];
	int self;		/* this node's id */
};

FIXTURE_SETUP(abi)
{
	hbmt_env_setup(_metadata, &self->env, 256, 5000);
	hbmt_env_node(_metadata, &self->env, N_NEAR, 4, 20, NULL);
	hbmt_env_node(_metadata, &self->env, N_FAR, 4, 30, "scaleout");
	hbm_node_del(N_SPARE);
	hbm_node_del(N_HIGH);
	self->self = hbm_self_node(self->env.devfd);
	ASSERT_LE(0, self->self) TH_LOG("self node: %s", strerror(-self->self));
	ASSERT_GT(HBMPOOL_MAX_NODES, self->self);
}

FIXTURE_TEARDOWN(abi)
{
	for (int i = 0; i < 4; i++)
		hbmt_region_close(&self->r[i]);
	hbm_node_del(N_SPARE);
	hbmt_env_teardown(_metadata, &self->env);
}

static uint64_t node_free(unsigned int id)
{
	uint64_t v = UINT64_MAX;

	hbm_node_u64(id, "free_bytes", &v);
	return v;
}

static uint64_t nregions(void)
{
	uint64_t v = UINT64_MAX;

	hbm_global_u64("nr_regions", &v);
	return v;
}

static int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

/* { N_NEAR }: static, for requests that outlive the function building them. */
static const struct hbm_nodeset set_near = {
	.w[N_NEAR / 64] = 1ULL << (N_NEAR % 64),
};

/* A good create request: 1 MiB bound to the near node. */
static void good_create(struct hbmpool_region_create *rc)
{
	hbm_create_init(rc, HBMT_MIB, 256 * 1024, HBMPOOL_POLICY_BIND,
			&set_near, 0, "abi");
}

/*
 * GET_FEATURES reports API 1, 1024 nodes, the page size, this node's id (0
 * on a fresh module), the chunk entry size and every feature the tests rely
 * on, and no feature bit the header does not define (REGION_OPEN is bit 7,
 * POLICY_WEIGHTED_INTERLEAVE bit 8, the highest).
 */
TEST_F(abi, features)
{
	const uint64_t need = HBMPOOL_FEAT_POLICY_BIND | HBMPOOL_FEAT_POLICY_INTERLEAVE |
		HBMPOOL_FEAT_POLICY_PREFERRED | HBMPOOL_FEAT_REGION_INFO |
		HBMPOOL_FEAT_REGION_STATS | HBMPOOL_FEAT_REGION_SYNC |
		HBMPOOL_FEAT_REGION_PREFETCH | HBMPOOL_FEAT_REGION_OPEN |
		HBMPOOL_FEAT_POLICY_WEIGHTED_INTERLEAVE;
	struct hbmpool_features f;

	ASSERT_EQ(HBMPOOL_FEATURES_SIZE_VER0, sizeof(f));
	ASSERT_EQ(HBMPOOL_CHUNK_INFO_SIZE_VER0, sizeof(struct hbmpool_chunk_info));
	ASSERT_EQ(1024, HBMPOOL_MAX_NODES);
	ASSERT_EQ(0x80, HBMPOOL_FEAT_REGION_OPEN);
	ASSERT_EQ(0x100, HBMPOOL_FEAT_POLICY_WEIGHTED_INTERLEAVE);
	ASSERT_EQ(3, HBMPOOL_POLICY_WEIGHTED_INTERLEAVE);
	ASSERT_EQ(HBMPOOL_POLICY_WEIGHTED_INTERLEAVE, HBMPOOL_POLICY_MAX);
	memset(&f, 0, sizeof(f));
	f.size = sizeof(f);
	f.self_node = 0xdead;		/* out only: overwritten */
	f.chunk_info_size = 0xbeef;
	/* self_node and chunk_info_size are outputs, not "in: zero" */
	ASSERT_EQ(0, xioctl(self->env.devfd, HBMPOOL_IOC_GET_FEATURES, &f));
	EXPECT_EQ(sizeof(f), f.size);
	EXPECT_EQ(HBMPOOL_API_VERSION, f.api_version);
	EXPECT_EQ(1024, f.max_nodes);
	EXPECT_EQ((uint32_t)sysconf(_SC_PAGESIZE), f.page_size);
	EXPECT_EQ(0, f.self_node) TH_LOG("a freshly loaded module is node 0 of its domain");
	EXPECT_EQ((uint32_t)self->self, f.self_node);
	EXPECT_EQ(24, f.chunk_info_size);
	EXPECT_EQ(sizeof(struct hbmpool_chunk_info), f.chunk_info_size);
	EXPECT_EQ(need, f.features & need);
	EXPECT_EQ(0, f.features & ~((HBMPOOL_FEAT_REPLICAS << 1) - 1))
		TH_LOG("features 0x%llx: a bit the header does not define",
		       (unsigned long long)f.features);
	for (size_t i = 0; i < ARRAY_SIZE(f.reserved); i++) {
		EXPECT_EQ(0, f.reserved[i]);
	}
}

/* GET_FEATURES size rules: 0 and < VER0 EINVAL, larger with zero tail OK (tail untouched), non-zero tail E2BIG, reserved EINVAL. */
TEST_F(abi, features_size_and_reserved)
{
	union {
		struct hbmpool_features f;
		uint8_t raw[sizeof(struct hbmpool_features) + 64];
	} u;
	int fd = self->env.devfd;

	memset(&u, 0, sizeof(u));
	u.f.size = 0;
	EXPECT_EQ(-EINVAL, xioctl(fd, HBMPOOL_IOC_GET_FEATURES, &u));
	u.f.size = HBMPOOL_FEATURES_SIZE_VER0 - 8;
	EXPECT_EQ(-EINVAL, xioctl(fd, HBMPOOL_IOC_GET_FEATURES, &u));
	u.f.size = 4;
	EXPECT_EQ(-EINVAL, xioctl(fd, HBMPOOL_IOC_GET_FEATURES, &u));

	memset(&u, 0, sizeof(u));
	u.f.size = sizeof(u);
	ASSERT_EQ(0, xioctl(fd, HBMPOOL_IOC_GET_FEATURES, &u));
	EXPECT_EQ(HBMPOOL_API_VERSION, u.f.api_version);
	for (size_t i = sizeof(u.f); i < sizeof(u); i++) {
		ASSERT_EQ(0, u.raw[i]) TH_LOG("kernel wrote past its struct at %zu", i);
	}
	EXPECT_EQ(sizeof(u.f), u.f.size) TH_LOG("size out = the kernel's sizeof");

	/* Larger than a page: E2BIG even with a zero tail. */
	{
		static uint8_t big[8192];
		struct hbmpool_features *bf = (struct hbmpool_features *)big;

		memset(big, 0, sizeof(big));
		bf->size = 4096 + 8;
		EXPECT_EQ(-E2BIG, xioctl(fd, HBMPOOL_IOC_GET_FEATURES, big));
		bf->size = 4096;
		EXPECT_EQ(0, xioctl(fd, HBMPOOL_IOC_GET_FEATURES, big));
	}

	memset(&u, 0, sizeof(u));
	u.f.size = sizeof(u);
	u.raw[sizeof(u) - 1] = 1;
	EXPECT_EQ(-E2BIG, xioctl(fd, HBMPOOL_IOC_GET_FEATURES, &u));
	memset(&u, 0, sizeof(u));
	u.f.size = sizeof(u);
	u.raw[sizeof(u.f)] = 0x80;
	EXPECT_EQ(-E2BIG, xioctl(fd, HBMPOOL_IOC_GET_FEATURES, &u));

	for (size_t i = 0; i < ARRAY_SIZE(u.f.reserved); i++) {
		memset(&u, 0, sizeof(u));
		u.f.size = sizeof(u.f);
		u.f.reserved[i] = 1ULL << 63;
		EXPECT_EQ(-EINVAL, xioctl(fd, HBMPOOL_IOC_GET_FEATURES, &u))
			TH_LOG("reserved[%zu]", i);
	}
}

/* The ioctl number is matched on type and number only: other size bits still reach GET_FEATURES. */
TEST_F(abi, ioctl_size_bits_ignored)
{
	struct hbmpool_features f;
	unsigned long cmd = _IOC(_IOC_READ | _IOC_WRITE, HBMPOOL_IOC_MAGIC, 0x00, 8);

	memset(&f, 0, sizeof(f));
	f.size = sizeof(f);
	ASSERT_EQ(0, xioctl(self->env.devfd, cmd, &f));
	EXPECT_EQ(HBMPOOL_API_VERSION, f.api_version);
}

/* Unknown ioctl numbers give ENOTTY on /dev/hbmpool and on a region fd; region ioctls on /dev/hbmpool and CREATE on a region fd give ENOTTY. */
TEST_F(abi, enotty)
{
	struct hbmpool_region_create rc;
	uint8_t buf[512];
	int fd;

	memset(buf, 0, sizeof(buf));
	*(uint32_t *)buf = 256;
	fd = self->env.devfd;
	EXPECT_EQ(-ENOTTY, xioctl(fd, _IOWR(HBMPOOL_IOC_MAGIC, 0x03, struct hbmpool_features), buf));
	EXPECT_EQ(-ENOTTY, xioctl(fd, _IOWR(HBMPOOL_IOC_MAGIC, 0x7f, struct hbmpool_features), buf));
	EXPECT_EQ(-ENOTTY, xioctl(fd, _IOWR(HBMPOOL_IOC_MAGIC, 0xff, struct hbmpool_features), buf));
	EXPECT_EQ(-ENOTTY, xioctl(fd, _IOWR('x', 0x00, struct hbmpool_features), buf));
	EXPECT_EQ(-ENOTTY, xioctl(fd, _IOWR('x', 0x01, struct hbmpool_region_create), buf));
	EXPECT_EQ(-ENOTTY, xioctl(fd, HBMPOOL_IOC_REGION_INFO, buf));
	EXPECT_EQ(-ENOTTY, xioctl(fd, HBMPOOL_IOC_REGION_STATS, buf));
	EXPECT_EQ(-ENOTTY, xioctl(fd, HBMPOOL_IOC_REGION_SYNC, buf));
	EXPECT_EQ(-ENOTTY, xioctl(fd, HBMPOOL_IOC_REGION_PREFETCH, buf));

	ASSERT_EQ(0, hbmt_region_open(&self->r[0], self->env.devfd, HBMT_MIB, 0,
				      HBMPOOL_POLICY_BIND, &set_near, 0, "enotty"));
	fd = self->r[0].fd;
	good_create(&rc);
	EXPECT_EQ(-ENOTTY, xioctl(fd, HBMPOOL_IOC_REGION_CREATE, &rc));
	EXPECT_EQ(-ENOTTY, xioctl(fd, _IOWR(HBMPOOL_IOC_MAGIC, 0x14, struct hbmpool_range), buf));
	EXPECT_EQ(-ENOTTY, xioctl(fd, _IOWR(HBMPOOL_IOC_MAGIC, 0x7f, struct hbmpool_range), buf));
	EXPECT_EQ(-ENOTTY, xioctl(fd, _IOWR('x', 0x10, struct hbmpool_region_info), buf));
}

/* A good CREATE returns the fd (also in .fd), O_CLOEXEC, reserves the capacity and shows the request's attributes in the fd's fdinfo. */
TEST_F(abi, create_ok)
{
	struct hbmpool_region_create rc;
	uint64_t free0 = node_free(N_NEAR), n0 = nregions(), v;
	char buf[128];
	int fd, flags;

	good_create(&rc);
	rc.region_id = 0xdeadbeef;
	rc.fd = 0xdeadbeef;
	fd = hbm_region_create(self->env.devfd, &rc);
	ASSERT_LE(0, fd) TH_LOG("create: %s", strerror(-fd));
	self->r[0].fd = fd;
	EXPECT_EQ((uint32_t)fd, rc.fd);
	EXPECT_NE(0xdeadbeef, rc.region_id);
	flags = fcntl(fd, F_GETFD);
	EXPECT_TRUE(flags & FD_CLOEXEC);
	flags = fcntl(fd, F_GETFL);
	EXPECT_EQ(O_RDWR, flags & O_ACCMODE);
	EXPECT_EQ(free0 - HBMT_MIB, node_free(N_NEAR));
	EXPECT_EQ(n0 + 1, nregions());

	ASSERT_EQ(0, hbm_fdinfo_u64(fd, "hbmpool-region", &v));
	EXPECT_EQ(rc.region_id, v);
	ASSERT_EQ(0, hbm_fdinfo_str(fd, "name", buf, sizeof(buf)));
	EXPECT_STREQ("abi", buf);
	ASSERT_EQ(0, hbm_fdinfo_u64(fd, "shared", &v));
	EXPECT_EQ(0, v);
	ASSERT_EQ(0, hbm_fdinfo_u64(fd, "length", &v));
	EXPECT_EQ(HBMT_MIB, v);
	ASSERT_EQ(0, hbm_fdinfo_u64(fd, "chunk_size", &v));
	EXPECT_EQ(256 * 1024, v);
	ASSERT_EQ(0, hbm_fdinfo_str(fd, "policy", buf, sizeof(buf)));
	EXPECT_STREQ("bind", buf);
	ASSERT_EQ(0, hbm_fdinfo_str(fd, "nodes", buf, sizeof(buf)));
	EXPECT_EQ(N_NEAR, strtoull(buf, NULL, 10)) TH_LOG("nodes '%s'", buf);
	ASSERT_EQ(0, hbm_fdinfo_u64(fd, "cached_pages", &v));
	EXPECT_EQ(0, v);
	ASSERT_EQ(0, hbm_fdinfo_u64(fd, "dirty_pages", &v));
	EXPECT_EQ(0, v);

	/* Default chunk size is reported as 2 MiB. */
	hbm_create_init(&rc, 4 * HBMT_MIB, 0, HBMPOOL_POLICY_INTERLEAVE,
			HBM_NODES(N_NEAR, N_FAR), 0, "");
	fd = hbm_region_create(self->env.devfd, &rc);
	ASSERT_LE(0, fd);
	self->r[1].fd = fd;
	ASSERT_EQ(0, hbm_fdinfo_u64(fd, "chunk_size", &v));
	EXPECT_EQ(HBMPOOL_CHUNK_DEFAULT, v);
	ASSERT_EQ(0, hbm_fdinfo_str(fd, "name", buf, sizeof(buf)));
	EXPECT_STREQ("", buf);
	ASSERT_EQ(0, hbm_fdinfo_str(fd, "policy", buf, sizeof(buf)));
	EXPECT_STREQ("interleave", buf);
	ASSERT_EQ(0, hbm_fdinfo_str(fd, "nodes", buf, sizeof(buf)));
	EXPECT_STREQ("11-12", buf);	/* N_NEAR, N_FAR as a bitmap list */
	EXPECT_NE(self->r[0].fd, fd);

	close(self->r[0].fd);
	close(self->r[1].fd);
	self->r[0].fd = self->r[1].fd = -1;
	EXPECT_EQ(0, hbmt_wait_global("nr_regions", HBMT_EQ, n0, 5000, &v));
	EXPECT_EQ(free0, node_free(N_NEAR));
}

/* CREATE size rules: 0 and < VER0 EINVAL, larger with zero tail OK, larger with non-zero tail E2BIG. */
TEST_F(abi, create_size)
{
	union {
		struct hbmpool_region_create c;
		uint8_t raw[sizeof(struct hbmpool_region_create) + 64];
	} u;
	uint64_t n0 = nregions();
	int fd;

	ASSERT_EQ(HBMPOOL_REGION_CREATE_SIZE_VER0, sizeof(u.c));
	memset(&u, 0, sizeof(u));
	good_create(&u.c);
	u.c.size = 0;
	EXPECT_EQ(-EINVAL, hbm_region_create(self->env.devfd, &u.c));
	u.c.size = HBMPOOL_REGION_CREATE_SIZE_VER0 - 8;
	EXPECT_EQ(-EINVAL, hbm_region_create(self->env.devfd, &u.c));
	u.c.size = sizeof(u);
	u.raw[sizeof(u) - 1] = 0xff;
	EXPECT_EQ(-E2BIG, hbm_region_create(self->env.devfd, &u.c));
	u.raw[sizeof(u) - 1] = 0;
	u.raw[sizeof(u.c)] = 1;
	EXPECT_EQ(-E2BIG, hbm_region_create(self->env.devfd, &u.c));
	EXPECT_EQ(n0, nregions());

	u.raw[sizeof(u.c)] = 0;
	fd = hbm_region_create(self->env.devfd, &u.c);
	ASSERT_LE(0, fd) TH_LOG("larger size, zero tail: %s", strerror(-fd));
	self->r[0].fd = fd;
	EXPECT_EQ((uint32_t)fd, u.c.fd);
	for (size_t i = sizeof(u.c); i < sizeof(u); i++) {
		ASSERT_EQ(0, u.raw[i]) TH_LOG("kernel wrote past its struct at %zu", i);
	}
	EXPECT_EQ(n0 + 1, nregions());
}

enum bad_field {
	BAD_FLAGS_LOW, BAD_FLAGS_HIGH, BAD_RESERVED0, BAD_RESERVED1, BAD_RESERVED2,
	BAD_RESERVED3, BAD_POLICY, BAD_POLICY_HUGE,
	BAD_SET_EMPTY, BAD_SET_EMPTY_BIG, BAD_SET_SELF, BAD_SET_ONLY_SELF,
	BAD_SET_ID_1500, BAD_SET_ID_1024, BAD_SET_ID_32767, BAD_SET_BITS_ZERO,
	BAD_SET_BITS_32769, BAD_SET_BITS_HUGE, BAD_SET_PTR_UNMAPPED, BAD_SET_PTR_NULL,
	BAD_SET_PTR_KERNEL, BAD_SET_PTR_SECOND_WORD, BAD_SET_PTR_LAST_WORD,
	BAD_SET_UNKNOWN, BAD_SET_UNKNOWN_64, BAD_SET_UNKNOWN_HIGH, BAD_SET_65_BIT_64,
	OK_SET_BITS_65, OK_SET_BITS_12, OK_SET_BITS_64_EDGE, OK_SET_BITS_32768,
	BAD_PREF_NOT_IN_SET, BAD_PREF_SELF, BAD_PREF_OUT_OF_RANGE, BAD_PREF_HUGE,
	BAD_PREF_WITH_BIND, BAD_PREF_WITH_INTERLEAVE,
	BAD_CHUNK_NOT_POW2, BAD_CHUNK_ODD, BAD_CHUNK_TOO_SMALL, BAD_CHUNK_TOO_BIG,
	BAD_CHUNK_HUGE, BAD_LEN_ZERO, BAD_LEN_UNALIGNED_LOW, BAD_LEN_UNALIGNED_HIGH,
	BAD_LEN_ONE, BAD_NAME_NO_NUL, BAD_OUT_FIELDS_GARBAGE, NR_BAD
};

static const struct {
	const char *what;
	int err;
} bad_expect[NR_BAD] = {
	[BAD_FLAGS_LOW]		= { "flags = 2 (unknown)", -EINVAL },
	[BAD_FLAGS_HIGH]	= { "flags = 1<<31", -EINVAL },
	[BAD_RESERVED0]		= { "pad != 0", -EINVAL },
	[BAD_RESERVED1]		= { "reserved[0] != 0", -EINVAL },
	[BAD_RESERVED2]		= { "reserved[2] != 0", -EINVAL },
	[BAD_RESERVED3]		= { "replicas = REPLICAS_MAX + 1", -EINVAL },
	[BAD_POLICY]		= { "policy = MAX + 1", -EINVAL },
	[BAD_POLICY_HUGE]	= { "policy = ~0", -EINVAL },
	[BAD_SET_EMPTY]		= { "empty node set (1024 bits)", -EINVAL },
	[BAD_SET_EMPTY_BIG]	= { "empty node set (32768 bits)", -EINVAL },
	[BAD_SET_SELF]		= { "this node's id in the set", -EINVAL },
	[BAD_SET_ONLY_SELF]	= { "the set is this node alone", -EINVAL },
	[BAD_SET_ID_1500]	= { "2048 bits, bit 1500 set", -EINVAL },
	[BAD_SET_ID_1024]	= { "1025 bits, bit 1024 set", -EINVAL },
	[BAD_SET_ID_32767]	= { "32768 bits, bit 32767 set", -EINVAL },
	[BAD_SET_BITS_ZERO]	= { "nr_node_bits = 0", -EINVAL },
	[BAD_SET_BITS_32769]	= { "nr_node_bits = 32769", -EINVAL },
	[BAD_SET_BITS_HUGE]	= { "nr_node_bits = ~0", -EINVAL },
	[BAD_SET_PTR_UNMAPPED]	= { "nodes_ptr unmapped", -EFAULT },
	[BAD_SET_PTR_NULL]	= { "nodes_ptr = 0", -EFAULT },
	[BAD_SET_PTR_KERNEL]	= { "nodes_ptr a kernel address", -EFAULT },
	[BAD_SET_PTR_SECOND_WORD] = { "65 bits, the second word unreadable", -EFAULT },
	[BAD_SET_PTR_LAST_WORD]	= { "1024 bits, the 16th word unreadable", -EFAULT },
	[BAD_SET_UNKNOWN]	= { "unknown node in the set", -ENODEV },
	[BAD_SET_UNKNOWN_64]	= { "unknown node 64 in the set", -ENODEV },
	[BAD_SET_UNKNOWN_HIGH]	= { "unknown node 1000 in the set", -ENODEV },
	[BAD_SET_65_BIT_64]	= { "65 bits, bit 64 (unknown) set: two words read", -ENODEV },
	[OK_SET_BITS_65]	= { "65 bits, second word zero", 0 },
	[OK_SET_BITS_12]	= { "12 bits (node 11)", 0 },
	[OK_SET_BITS_64_EDGE]	= { "64 bits ending where the readable memory ends", 0 },
	[OK_SET_BITS_32768]	= { "32768 bits", 0 },
	[BAD_PREF_NOT_IN_SET]	= { "preferred not in the set", -EINVAL },
	[BAD_PREF_SELF]		= { "preferred = this node", -EINVAL },
	[BAD_PREF_OUT_OF_RANGE]	= { "preferred = 1024", -EINVAL },
	[BAD_PREF_HUGE]		= { "preferred = ~0", -EINVAL },
	[BAD_PREF_WITH_BIND]	= { "preferred_node != 0 with bind", -EINVAL },
	[BAD_PREF_WITH_INTERLEAVE] = { "preferred_node != 0 with interleave", -EINVAL },
	[BAD_CHUNK_NOT_POW2]	= { "chunk_size = 3 pages", -EINVAL },
	[BAD_CHUNK_ODD]		= { "chunk_size = 4097", -EINVAL },
	[BAD_CHUNK_TOO_SMALL]	= { "chunk_size = 2048", -EINVAL },
	[BAD_CHUNK_TOO_BIG]	= { "chunk_size = 2 GiB", -EINVAL },
	[BAD_CHUNK_HUGE]	= { "chunk_size = 1<<63", -EINVAL },
	[BAD_LEN_ZERO]		= { "length = 0", -EINVAL },
	[BAD_LEN_UNALIGNED_LOW]	= { "length = 1 MiB - 1", -EINVAL },
	[BAD_LEN_UNALIGNED_HIGH] = { "length = 1 MiB + 512", -EINVAL },
	[BAD_LEN_ONE]		= { "length = 1", -EINVAL },
	[BAD_NAME_NO_NUL]	= { "name without NUL", -EINVAL },
	[BAD_OUT_FIELDS_GARBAGE] = { "out fields region_id/fd preset (ignored)", 0 },
};

/* Room for the largest bitmap the kernel reads: HBMPOOL_NODE_BITS_MAX + 64 bits. */
#define BITS_WORDS	(HBMPOOL_NODE_BITS_MAX / 64 + 1)

/* What make_bad() builds the node sets in. */
struct bad_ctx {
	unsigned int self;
	uint64_t *bits;		/* BITS_WORDS words */
	uint64_t *guard;	/* a readable page, then an unreadable one */
	void *unmapped;		/* a page that is not mapped */
};

static void bits_set(uint64_t *w, unsigned int id)
{
	w[id / 64] |= 1ULL << (id % 64);
}

/* The node set is ctx->bits: { N_NEAR } plus extra (if not ~0), nbits bits. */
static void use_bits(struct hbmpool_region_create *rc, struct bad_ctx *ctx,
		     unsigned int extra, uint32_t nbits, int with_near)
{
	memset(ctx->bits, 0, BITS_WORDS * sizeof(uint64_t));
	if (with_near)
		bits_set(ctx->bits, N_NEAR);
	if (extra != ~0U)
		bits_set(ctx->bits, extra);
	rc->nodes_ptr = (uintptr_t)ctx->bits;
	rc->nr_node_bits = nbits;
}

static void make_bad(struct hbmpool_region_create *rc, struct bad_ctx *ctx,
		     enum bad_field b)
{
	uint64_t *edge = ctx->guard + 4096 / 8;	/* first unreadable word */

	good_create(rc);
	switch (b) {
	case BAD_FLAGS_LOW:		rc->flags = 2; break;
	case BAD_FLAGS_HIGH:		rc->flags = 1U << 31; break;
	case BAD_RESERVED0:		rc->pad = 1; break;
	case BAD_RESERVED1:		rc->reserved[0] = 1ULL << 40; break;
	case BAD_RESERVED2:		rc->reserved[2] = 0x80; break;
	case BAD_RESERVED3:		rc->replicas = HBMPOOL_REPLICAS_MAX + 1; break;
	case BAD_POLICY:		rc->policy = HBMPOOL_POLICY_MAX + 1; break;
	case BAD_POLICY_HUGE:		rc->policy = ~0U; break;
	case BAD_SET_EMPTY:		use_bits(rc, ctx, ~0U, 1024, 0); break;
	case BAD_SET_EMPTY_BIG:
		use_bits(rc, ctx, ~0U, HBMPOOL_NODE_BITS_MAX, 0);
		break;
	case BAD_SET_SELF:		use_bits(rc, ctx, ctx->self, 1024, 1); break;
	case BAD_SET_ONLY_SELF:		use_bits(rc, ctx, ctx->self, 1024, 0); break;
	case BAD_SET_ID_1500:		use_bits(rc, ctx, 1500, 2048, 1); break;
	case BAD_SET_ID_1024:		use_bits(rc, ctx, 1024, 1025, 1); break;
	case BAD_SET_ID_32767:
		use_bits(rc, ctx, HBMPOOL_NODE_BITS_MAX - 1, HBMPOOL_NODE_BITS_MAX, 1);
		break;
	case BAD_SET_BITS_ZERO:		use_bits(rc, ctx, ~0U, 0, 1); break;
	case BAD_SET_BITS_32769:
		use_bits(rc, ctx, ~0U, HBMPOOL_NODE_BITS_MAX + 1, 1);
		break;
	case BAD_SET_BITS_HUGE:		use_bits(rc, ctx, ~0U, ~0U, 1); break;
	case BAD_SET_PTR_UNMAPPED:	rc->nodes_ptr = (uintptr_t)ctx->unmapped; break;
	case BAD_SET_PTR_NULL:		rc->nodes_ptr = 0; break;
	case BAD_SET_PTR_KERNEL:	rc->nodes_ptr = 0xffff888000000000ULL; break;
	case BAD_SET_PTR_SECOND_WORD:
		/* word 0 readable ({ N_NEAR }), word 1 not */
		edge[-1] = 1ULL << N_NEAR;
		rc->nodes_ptr = (uintptr_t)&edge[-1];
		rc->nr_node_bits = 65;
		break;
	case BAD_SET_PTR_LAST_WORD:
		/* words 0..14 readable, word 15 not */
		memset(&edge[-15], 0, 15 * sizeof(uint64_t));
		edge[-15] = 1ULL << N_NEAR;
		rc->nodes_ptr = (uintptr_t)&edge[-15];
		rc->nr_node_bits = 1024;
		break;
	case BAD_SET_UNKNOWN:		use_bits(rc, ctx, N_SPARE, 1024, 1); break;
	case BAD_SET_UNKNOWN_64:	use_bits(rc, ctx, N_UNKNOWN_64, 1024, 1); break;
	case BAD_SET_UNKNOWN_HIGH:	use_bits(rc, ctx, N_UNKNOWN_HIGH, 1024, 0); break;
	case BAD_SET_65_BIT_64:		use_bits(rc, ctx, N_UNKNOWN_64, 65, 1); break;
	case OK_SET_BITS_65:		use_bits(rc, ctx, ~0U, 65, 1); break;
	case OK_SET_BITS_12:		use_bits(rc, ctx, ~0U, N_NEAR + 1, 1); break;
	case OK_SET_BITS_64_EDGE:
		edge[-1] = 1ULL << N_NEAR;
		rc->nodes_ptr = (uintptr_t)&edge[-1];
		rc->nr_node_bits = 64;
		break;
	case OK_SET_BITS_32768:
		use_bits(rc, ctx, ~0U, HBMPOOL_NODE_BITS_MAX, 1);
		break;
	case BAD_PREF_NOT_IN_SET:
		rc->policy = HBMPOOL_POLICY_PREFERRED;
		rc->preferred_node = N_FAR;
		break;
	case BAD_PREF_SELF:
		rc->policy = HBMPOOL_POLICY_PREFERRED;
		rc->preferred_node = ctx->self;
		break;
	case BAD_PREF_OUT_OF_RANGE:
		rc->policy = HBMPOOL_POLICY_PREFERRED;
		rc->preferred_node = HBMPOOL_MAX_NODES;
		break;
	case BAD_PREF_HUGE:
		rc->policy = HBMPOOL_POLICY_PREFERRED;
		rc->preferred_node = ~0U;
		break;
	case BAD_PREF_WITH_BIND:	rc->preferred_node = N_NEAR; break;
	case BAD_PREF_WITH_INTERLEAVE:
		rc->policy = HBMPOOL_POLICY_INTERLEAVE;
		rc->preferred_node = N_NEAR;
		break;
	case BAD_CHUNK_NOT_POW2:	rc->chunk_size = 3 * HBMT_PAGE; break;
	case BAD_CHUNK_ODD:		rc->chunk_size = HBMT_PAGE + 1; break;
	case BAD_CHUNK_TOO_SMALL:	rc->chunk_size = HBMPOOL_CHUNK_MIN / 2; break;
	case BAD_CHUNK_TOO_BIG:		rc->chunk_size = HBMPOOL_CHUNK_MAX * 2; break;
	case BAD_CHUNK_HUGE:		rc->chunk_size = 1ULL << 63; break;
	case BAD_LEN_ZERO:		rc->length = 0; break;
	case BAD_LEN_UNALIGNED_LOW:	rc->length = HBMT_MIB - 1; break;
	case BAD_LEN_UNALIGNED_HIGH:	rc->length = HBMT_MIB + 512; break;
	case BAD_LEN_ONE:		rc->length = 1; break;
	case BAD_NAME_NO_NUL:		memset(rc->name, 'n', sizeof(rc->name)); break;
	case BAD_OUT_FIELDS_GARBAGE:
		rc->region_id = 0xffffffff;
		rc->fd = 0xffffffff;
		break;
	case NR_BAD:
		break;
	}
}

/*
 * Every CREATE field is validated with its documented errno, the node set
 * as the header's "Node sets" says (DIV_ROUND_UP(nr_node_bits, 64) words
 * read, ids 1024 and above, this node and an empty set refused), and a
 * rejected CREATE reserves nothing and creates no region.
 */
TEST_F(abi, create_bad_fields)
{
	uint64_t free_near = node_free(N_NEAR), free_far = node_free(N_FAR);
	uint64_t n0 = nregions();
	static uint64_t bits[BITS_WORDS];
	struct bad_ctx ctx = { .self = (unsigned int)self->self, .bits = bits };
	uint8_t *pages;

	/* page 0 readable, page 1 PROT_NONE, page 2 unmapped */
	pages = mmap(NULL, 3 * HBMT_PAGE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, pages);
	ASSERT_EQ(0, mprotect(pages + HBMT_PAGE, HBMT_PAGE, PROT_NONE));
	ASSERT_EQ(0, munmap(pages + 2 * HBMT_PAGE, HBMT_PAGE));
	ctx.guard = (uint64_t *)pages;
	ctx.unmapped = pages + 2 * HBMT_PAGE;

	for (int b = 0; b < NR_BAD; b++) {
		struct hbmpool_region_create rc;
		int fd;

		make_bad(&rc, &ctx, (enum bad_field)b);
		fd = hbm_region_create(self->env.devfd, &rc);
		if (bad_expect[b].err == 0) {
			EXPECT_LE(0, fd) TH_LOG("%s: %s", bad_expect[b].what, strerror(-fd));
			if (fd >= 0)
				close(fd);
			EXPECT_EQ(0, hbmt_wait_global("nr_regions", HBMT_EQ, n0, 5000, NULL));
		} else {
			EXPECT_EQ(bad_expect[b].err, fd)
				TH_LOG("%s: got %d (%s)", bad_expect[b].what, fd,
				       fd < 0 ? strerror(-fd) : "created");
			if (fd >= 0)
				close(fd);
		}
		EXPECT_EQ(n0, nregions()) TH_LOG("%s", bad_expect[b].what);
		EXPECT_EQ(free_near, node_free(N_NEAR)) TH_LOG("%s", bad_expect[b].what);
		EXPECT_EQ(free_far, node_free(N_FAR)) TH_LOG("%s", bad_expect[b].what);
	}
	munmap(pages, 2 * HBMT_PAGE);
}

/* Names up to 31 bytes are accepted and shown in sysfs and REGION_INFO; chunk sizes MIN and MAX are accepted. */
TEST_F(abi, create_limits_accepted)
{
	struct hbmpool_region_create rc;
	struct hbmpool_region_info ri;
	char buf[64];
	int fd;

	good_create(&rc);
	memset(rc.name, 'x', sizeof(rc.name) - 1);
	rc.name[sizeof(rc.name) - 1] = '\0';
	fd = hbm_region_create(self->env.devfd, &rc);
	ASSERT_LE(0, fd);
	self->r[0].fd = fd;
	ASSERT_EQ(0, hbm_fdinfo_str(fd, "name", buf, sizeof(buf)));
	EXPECT_EQ(31, strlen(buf));
	ASSERT_EQ(0, hbm_region_info(fd, &ri, NULL, 0, NULL));
	EXPECT_EQ(0, memcmp(ri.name, rc.name, sizeof(rc.name)));

	hbm_create_init(&rc, 16 * HBMT_PAGE, HBMPOOL_CHUNK_MIN, HBMPOOL_POLICY_BIND,
			&set_near, 0, "min");
	fd = hbm_region_create(self->env.devfd, &rc);
	ASSERT_LE(0, fd) TH_LOG("chunk MIN: %s", strerror(-fd));
	self->r[1].fd = fd;
	ASSERT_EQ(0, hbm_region_info(fd, &ri, NULL, 0, NULL));
	EXPECT_EQ(16, ri.nr_chunks);

	/* CHUNK_MAX with a 1-page region: one chunk; capacity per the node. */
	hbm_create_init(&rc, HBMT_PAGE, HBMPOOL_CHUNK_MAX, HBMPOOL_POLICY_BIND,
			&set_near, 0, "max");
	fd = hbm_region_create(self->env.devfd, &rc);
	/* A 1 GiB chunk cannot be reserved on a 4 MiB node unless the kernel
	 * reserves only the region's length; both are legal, but not EINVAL. */
	EXPECT_TRUE(fd >= 0 || fd == -ENOSPC) TH_LOG("chunk MAX: %s", strerror(-fd));
	if (fd >= 0)
		self->r[2].fd = fd;
}

/* A valid length larger than the pool (1 TiB in 2 MiB chunks) is ENOSPC; more chunks than the kernel handles is EINVAL or ENOSPC; nothing leaks. */
TEST_F(abi, create_too_large)
{
	uint64_t free_near = node_free(N_NEAR), n0 = nregions();
	struct hbmpool_region_create rc;
	int fd;

	good_create(&rc);
	rc.length = 1ULL << 40;
	rc.chunk_size = 0;
	EXPECT_EQ(-ENOSPC, hbm_region_create(self->env.devfd, &rc));
	/* 2^28 chunks of 4 KiB: EINVAL (a chunk-count limit) or ENOSPC. */
	rc.chunk_size = HBMPOOL_CHUNK_MIN;
	fd = hbm_region_create(self->env.devfd, &rc);
	EXPECT_TRUE(fd == -EINVAL || fd == -ENOSPC) TH_LOG("got %d", fd);
	EXPECT_EQ(free_near, node_free(N_NEAR));
	EXPECT_EQ(n0, nregions());
}

/* ENOSPC when the set lacks room (bind over everything, interleave with one full node) and no capacity leaks from the partial reservation. */
TEST_F(abi, enospc_no_leak)
{
	const struct hbm_nodeset *both = HBM_NODES(N_NEAR, N_FAR);
	uint64_t cap_near, cap_far, n0 = nregions();
	struct hbmpool_region_create rc;
	int fd;

	ASSERT_EQ(0, hbm_node_u64(N_NEAR, "capacity_bytes", &cap_near));
	ASSERT_EQ(0, hbm_node_u64(N_FAR, "capacity_bytes", &cap_far));
	ASSERT_EQ(4 * HBMT_MIB, cap_near);
	ASSERT_EQ(cap_near, node_free(N_NEAR));
	ASSERT_EQ(cap_far, node_free(N_FAR));

	/* bind: 9 MiB over 8 MiB: reserves 8 MiB on the way, then fails. */
	hbm_create_init(&rc, 9 * HBMT_MIB, HBMT_MIB, HBMPOOL_POLICY_BIND, both, 0, "bind");
	EXPECT_EQ(-ENOSPC, hbm_region_create(self->env.devfd, &rc));
	EXPECT_EQ(cap_near, node_free(N_NEAR));
	EXPECT_EQ(cap_far, node_free(N_FAR));
	/* preferred likewise. */
	hbm_create_init(&rc, 9 * HBMT_MIB, HBMT_MIB, HBMPOOL_POLICY_PREFERRED, both, N_FAR, "pref");
	EXPECT_EQ(-ENOSPC, hbm_region_create(self->env.devfd, &rc));
	EXPECT_EQ(cap_near, node_free(N_NEAR));
	EXPECT_EQ(cap_far, node_free(N_FAR));

	/* Fill 3 MiB of the far node, then interleave more than is left
	 * over both -> ENOSPC, nothing stays reserved on the near node. */
	hbm_create_init(&rc, 3 * HBMT_MIB, HBMT_MIB, HBMPOOL_POLICY_BIND, HBM_NODES(N_FAR), 0, "fill");
	fd = hbm_region_create(self->env.devfd, &rc);
	ASSERT_LE(0, fd);
	self->r[0].fd = fd;
	EXPECT_EQ(cap_far - 3 * HBMT_MIB, node_free(N_FAR));
	hbm_create_init(&rc, cap_near + cap_far - 2 * HBMT_MIB, HBMT_MIB,
			HBMPOOL_POLICY_INTERLEAVE, both, 0, "il");
	EXPECT_EQ(-ENOSPC, hbm_region_create(self->env.devfd, &rc));
	EXPECT_EQ(cap_near, node_free(N_NEAR));
	EXPECT_EQ(cap_far - 3 * HBMT_MIB, node_free(N_FAR));
	/* Interleave goes on past the full far node: 4 MiB, the far node
	 * takes its last 1 MiB, the near one 3 MiB. */
	hbm_create_init(&rc, 4 * HBMT_MIB, HBMT_MIB, HBMPOOL_POLICY_INTERLEAVE, both, 0, "il");
	fd = hbm_region_create(self->env.devfd, &rc);
	ASSERT_LE(0, fd) TH_LOG("interleave with a spill: %s", strerror(-fd));
	self->r[2].fd = fd;
	EXPECT_EQ(cap_near - 3 * HBMT_MIB, node_free(N_NEAR));
	EXPECT_EQ(cap_far - 4 * HBMT_MIB, node_free(N_FAR));
	/* Exactly what is left still fits (bind skips the full far node). */
	hbm_create_init(&rc, cap_near + cap_far - 7 * HBMT_MIB, HBMT_MIB,
			HBMPOOL_POLICY_BIND, both, 0, "rest");
	fd = hbm_region_create(self->env.devfd, &rc);
	ASSERT_LE(0, fd) TH_LOG("exact fit: %s", strerror(-fd));
	self->r[1].fd = fd;
	EXPECT_EQ(0, node_free(N_NEAR));
	EXPECT_EQ(0, node_free(N_FAR));
	hbm_create_init(&rc, HBMT_PAGE, HBMPOOL_CHUNK_MIN, HBMPOOL_POLICY_BIND, both, 0, "full");
	EXPECT_EQ(-ENOSPC, hbm_region_create(self->env.devfd, &rc));
	EXPECT_EQ(n0 + 3, nregions());

	close(self->r[0].fd);
	close(self->r[1].fd);
	close(self->r[2].fd);
	self->r[0].fd = self->r[1].fd = self->r[2].fd = -1;
	EXPECT_EQ(0, hbmt_wait_node(N_NEAR, "free_bytes", HBMT_EQ, cap_near, 5000, NULL));
	EXPECT_EQ(0, hbmt_wait_node(N_FAR, "free_bytes", HBMT_EQ, cap_far, 5000, NULL));
	EXPECT_EQ(n0, nregions());
}

/* mmap: MAP_PRIVATE is EINVAL; a mapping (or offset + length) beyond the region is EINVAL; a sub-range at an offset maps the same bytes. */
TEST_F(abi, mmap_rules)
{
	struct hbmt_region *r = &self->r[0];
	const uint64_t len = 64 * HBMT_PAGE;
	uint8_t *sub;
	void *m;

	ASSERT_EQ(0, hbmt_region_open(r, self->env.devfd, len, 16 * HBMT_PAGE,
				      HBMPOOL_POLICY_BIND, &set_near, 0, "mmap"));
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, r->fd, 0);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, r->fd, 0);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	/* One page longer than the region. */
	m = mmap(NULL, len + HBMT_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	/* In-range length, but offset + length past the end. */
	m = mmap(NULL, 2 * HBMT_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd,
		 (off_t)(len - HBMT_PAGE));
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	/* Offset at the end. */
	m = mmap(NULL, HBMT_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, (off_t)len);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);

	/* A window at offset 5 pages sees the same bytes as the full mapping. */
	sub = mmap(NULL, 8 * HBMT_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd,
		   (off_t)(5 * HBMT_PAGE));
	ASSERT_NE(MAP_FAILED, sub);
	hbm_pattern_fill(r->map, len, 0, 0x5eed);
	EXPECT_EQ(0, hbm_pattern_check(sub, 8 * HBMT_PAGE, 5 * HBMT_PAGE, 0x5eed, NULL));
	hbm_pattern_fill(sub, 8 * HBMT_PAGE, 5 * HBMT_PAGE, 0xbeef);
	EXPECT_EQ(0, hbm_pattern_check(r->map + 5 * HBMT_PAGE, 8 * HBMT_PAGE,
				       5 * HBMT_PAGE, 0xbeef, NULL));
	EXPECT_EQ(0, hbm_pattern_check(r->map, 5 * HBMT_PAGE, 0, 0x5eed, NULL));
	munmap(sub, 8 * HBMT_PAGE);
	/* The last page alone is fine. */
	m = mmap(NULL, HBMT_PAGE, PROT_READ, MAP_SHARED, r->fd, (off_t)(len - HBMT_PAGE));
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ(0, hbm_pattern_check(m, HBMT_PAGE, len - HBMT_PAGE, 0x5eed, NULL));
	munmap(m, HBMT_PAGE);
}

/*
 * REGION_INFO echoes the request, fills at most nr_chunks_max entries, each
 * with generation 1 and one copy, returns the node set, validates size,
 * flags and reserved, and its chunks fit their nodes without overlap.
 */
TEST_F(abi, region_info)
{
	const struct hbm_nodeset *both = HBM_NODES(N_NEAR, N_FAR);
	union {
		struct hbmpool_region_info i;
		uint8_t raw[sizeof(struct hbmpool_region_info) + 32];
	} u;
	struct hbmpool_chunk_info ch[10];
	struct hbmpool_region_create rc;
	struct hbm_nodeset set;
	uint64_t bits[HBM_NODESET_WORDS];
	int fd;

	ASSERT_EQ(HBMPOOL_REGION_INFO_SIZE_VER0, sizeof(u.i));
	ASSERT_EQ(HBMPOOL_CHUNK_INFO_SIZE_VER0, sizeof(ch[0]));
	hbm_create_init(&rc, 8 * 256 * 1024, 256 * 1024, HBMPOOL_POLICY_PREFERRED,
			both, N_FAR, "info");
	fd = hbm_region_create(self->env.devfd, &rc);
	ASSERT_LE(0, fd);
	self->r[0].fd = fd;

	memset(&u, 0, sizeof(u));
	memset(ch, 0xa5, sizeof(ch));
	memset(bits, 0xff, sizeof(bits));
	u.i.size = sizeof(u.i);
	u.i.chunks_ptr = (uintptr_t)ch;
	u.i.nr_chunks_max = 3;
	u.i.chunk_entry_size = sizeof(ch[0]);
	u.i.nodes_ptr = (uintptr_t)bits;
	u.i.nr_node_bits = HBM_NODESET_BITS;
	ASSERT_EQ(0, xioctl(fd, HBMPOOL_IOC_REGION_INFO, &u));
	EXPECT_EQ(0, u.i.flags);
	EXPECT_EQ(rc.length, u.i.length);
	EXPECT_EQ(rc.chunk_size, u.i.chunk_size);
	EXPECT_EQ((uintptr_t)bits, u.i.nodes_ptr);
	EXPECT_EQ(N_FAR + 1, u.i.nr_node_bits) TH_LOG("out: the highest id + 1");
	EXPECT_EQ(2, u.i.nr_nodes);
	EXPECT_EQ(both->w[0], bits[0]);
	for (int w = 1; w < HBM_NODESET_WORDS; w++) {
		EXPECT_EQ(0, bits[w]) TH_LOG("word %d of the node set", w);
	}
	EXPECT_EQ(HBMPOOL_POLICY_PREFERRED, u.i.policy);
	EXPECT_EQ(N_FAR, u.i.preferred_node);
	EXPECT_STREQ("info", u.i.name);
	EXPECT_EQ(rc.region_id, u.i.region_id);
	EXPECT_EQ(8, u.i.nr_chunks);
	EXPECT_EQ(3, u.i.nr_chunks_max);
	EXPECT_EQ(24, u.i.chunk_entry_size) TH_LOG("out: the kernel's entry size");
	EXPECT_EQ(0, u.i.cached_pages);
	EXPECT_EQ(0, u.i.dirty_pages);
	EXPECT_EQ(1, u.i.replicas) TH_LOG("out: one copy per chunk by default");
	EXPECT_EQ(0, u.i.degraded_chunks);
	EXPECT_EQ(0, u.i.lost_chunks);
	EXPECT_EQ(0, u.i.pad);
	for (int i = 0; i < 2; i++) {
		EXPECT_EQ(0, u.i.reserved[i]);
	}
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(N_FAR, ch[i].node);
		EXPECT_EQ(1, ch[i].generation) TH_LOG("chunk %d: freshly placed", i);
		EXPECT_EQ(1, ch[i].nr_copies) TH_LOG("chunk %d", i);
		EXPECT_EQ(1, ch[i].good_copies) TH_LOG("chunk %d", i);
	}
	for (size_t i = 3 * sizeof(ch[0]); i < sizeof(ch); i++) {
		ASSERT_EQ(0xa5, ((uint8_t *)ch)[i]) TH_LOG("wrote past nr_chunks_max at byte %zu", i);
	}

	/* No pointers: counts and sizes only. */
	memset(&u, 0, sizeof(u));
	u.i.size = sizeof(u.i);
	u.i.nr_chunks_max = 10;
	ASSERT_EQ(0, xioctl(fd, HBMPOOL_IOC_REGION_INFO, &u));
	EXPECT_EQ(8, u.i.nr_chunks);
	EXPECT_EQ(2, u.i.nr_nodes);
	EXPECT_EQ(N_FAR + 1, u.i.nr_node_bits);

	/* Full table: chunks within capacity, no overlap on a node. */
	ASSERT_EQ(0, hbm_region_info(fd, &u.i, ch, 10, &set));
	EXPECT_TRUE(hbm_nodeset_equal(both, &set));
	for (int i = 0; i < 8; i++) {
		uint64_t cap = 0;

		EXPECT_EQ(1, ch[i].generation);
		EXPECT_EQ(1, ch[i].nr_copies);
		ASSERT_EQ(0, hbm_node_u64(ch[i].node, "capacity_bytes", &cap));
		EXPECT_LE(ch[i].node_offset + rc.chunk_size, cap);
		for (int j = 0; j < i; j++)
			if (ch[j].node == ch[i].node) {
				EXPECT_TRUE(ch[i].node_offset + rc.chunk_size <= ch[j].node_offset ||
					    ch[j].node_offset + rc.chunk_size <= ch[i].node_offset)
					TH_LOG("chunks %d and %d overlap on node %u", j, i, ch[i].node);
			}
	}

	/* Bad size, flags and reserved. */
	memset(&u, 0, sizeof(u));
	u.i.size = 0;
	EXPECT_EQ(-EINVAL, xioctl(fd, HBMPOOL_IOC_REGION_INFO, &u));
	u.i.size = HBMPOOL_REGION_INFO_SIZE_VER0 - 8;
	EXPECT_EQ(-EINVAL, xioctl(fd, HBMPOOL_IOC_REGION_INFO, &u));
	memset(&u, 0, sizeof(u));
	u.i.size = sizeof(u);
	u.raw[sizeof(u) - 1] = 1;
	EXPECT_EQ(-E2BIG, xioctl(fd, HBMPOOL_IOC_REGION_INFO, &u));
	memset(&u, 0, sizeof(u));
	u.i.size = sizeof(u);
	ASSERT_EQ(0, xioctl(fd, HBMPOOL_IOC_REGION_INFO, &u));
	EXPECT_EQ(8, u.i.nr_chunks);
	for (size_t i = sizeof(u.i); i < sizeof(u); i++) {
		ASSERT_EQ(0, u.raw[i]);
	}
	EXPECT_EQ(sizeof(u.i), u.i.size) TH_LOG("size out = the kernel's sizeof");
	memset(&u, 0, sizeof(u));
	u.i.size = sizeof(u.i);
	u.i.flags = 1;
	EXPECT_EQ(-EINVAL, xioctl(fd, HBMPOOL_IOC_REGION_INFO, &u)) TH_LOG("flags is in: zero");
	for (int r = 0; r < 2; r++) {
		memset(&u, 0, sizeof(u));
		u.i.size = sizeof(u.i);
		u.i.reserved[r] = 1;
		EXPECT_EQ(-EINVAL, xioctl(fd, HBMPOOL_IOC_REGION_INFO, &u)) TH_LOG("reserved[%d]", r);
	}
	memset(&u, 0, sizeof(u));
	u.i.size = sizeof(u.i);
	u.i.pad = 1;
	EXPECT_EQ(-EINVAL, xioctl(fd, HBMPOOL_IOC_REGION_INFO, &u)) TH_LOG("pad is in: zero");
	/* Bad chunks and nodes pointers are EFAULT, not a crash. */
	memset(&u, 0, sizeof(u));
	u.i.size = sizeof(u.i);
	u.i.chunks_ptr = 16;
	u.i.nr_chunks_max = 8;
	u.i.chunk_entry_size = sizeof(ch[0]);
	EXPECT_EQ(-EFAULT, xioctl(fd, HBMPOOL_IOC_REGION_INFO, &u));
	memset(&u, 0, sizeof(u));
	u.i.size = sizeof(u.i);
	u.i.nodes_ptr = 16;
	u.i.nr_node_bits = 64;
	EXPECT_EQ(-EFAULT, xioctl(fd, HBMPOOL_IOC_REGION_INFO, &u));
	memset(&u, 0, sizeof(u));
	u.i.size = sizeof(u.i);
	u.i.nodes_ptr = 0xffff888000000000ULL;
	u.i.nr_node_bits = 64;
	EXPECT_EQ(-EFAULT, xioctl(fd, HBMPOOL_IOC_REGION_INFO, &u));
}

/* REGION_INFO's chunk_entry_size: >= 24, a multiple of 8, <= the page size, else EINVAL (ignored without chunks_ptr); larger entries are zero-filled. */
TEST_F(abi, region_info_chunk_stride)
{
	static const uint32_t bad_sizes[] = { 0, 8, 12, 16, 20, 28, 36, 4096 + 8, 8192, ~0U };
	enum { NCH = 8, BIG = 32 };
	static uint8_t buf[NCH * 4096 + 64];
	struct hbmpool_chunk_info ref[NCH];
	struct hbmpool_region_info ri;
	uint32_t page = (uint32_t)sysconf(_SC_PAGESIZE);
	int fd;

	ASSERT_EQ(0, hbmt_region_open(&self->r[0], self->env.devfd, NCH * 256 * 1024, 256 * 1024,
				      HBMPOOL_POLICY_INTERLEAVE, HBM_NODES(N_NEAR, N_FAR), 0,
				      "stride"));
	fd = self->r[0].fd;
	ASSERT_EQ(0, hbm_region_info(fd, &ri, ref, NCH, NULL));
	ASSERT_EQ(NCH, ri.nr_chunks);
	ASSERT_EQ(sizeof(ref[0]), ri.chunk_entry_size);

	for (size_t k = 0; k < ARRAY_SIZE(bad_sizes); k++) {
		memset(buf, 0xee, sizeof(buf));
		memset(&ri, 0, sizeof(ri));
		ri.size = sizeof(ri);
		ri.chunks_ptr = (uintptr_t)buf;
		ri.nr_chunks_max = 2;
		ri.chunk_entry_size = bad_sizes[k];
		EXPECT_EQ(-EINVAL, xioctl(fd, HBMPOOL_IOC_REGION_INFO, &ri))
			TH_LOG("chunk_entry_size %u", bad_sizes[k]);
		for (size_t i = 0; i < sizeof(buf); i++) {
			ASSERT_EQ(0xee, buf[i]) TH_LOG("entry size %u: byte %zu written",
						       bad_sizes[k], i);
		}
	}
	/* Without chunks_ptr the entry size does not matter; out is still the kernel's. */
	memset(&ri, 0, sizeof(ri));
	ri.size = sizeof(ri);
	ri.chunk_entry_size = 12;
	ri.nr_chunks_max = 4;
	ASSERT_EQ(0, xioctl(fd, HBMPOOL_IOC_REGION_INFO, &ri)) TH_LOG("entry size 12, no chunks_ptr");
	EXPECT_EQ(NCH, ri.nr_chunks);
	EXPECT_EQ(24, ri.chunk_entry_size);

	/* 32-byte entries: the kernel's 24 bytes, then zeros; 32 bytes apart. */
	memset(buf, 0xff, sizeof(buf));
	memset(&ri, 0, sizeof(ri));
	ri.size = sizeof(ri);
	ri.chunks_ptr = (uintptr_t)buf;
	ri.nr_chunks_max = NCH - 1;
	ri.chunk_entry_size = BIG;
	ASSERT_EQ(0, xioctl(fd, HBMPOOL_IOC_REGION_INFO, &ri));
	EXPECT_EQ(NCH, ri.nr_chunks);
	EXPECT_EQ(24, ri.chunk_entry_size) TH_LOG("out: the kernel's entry size");
	for (int c = 0; c < NCH - 1; c++) {
		struct hbmpool_chunk_info e;

		memcpy(&e, buf + c * BIG, sizeof(e));
		EXPECT_EQ(ref[c].node, e.node) TH_LOG("chunk %d", c);
		EXPECT_EQ(ref[c].node_offset, e.node_offset) TH_LOG("chunk %d", c);
		EXPECT_EQ(1, e.generation) TH_LOG("chunk %d", c);
		EXPECT_EQ(1, e.nr_copies) TH_LOG("chunk %d", c);
		EXPECT_EQ(1, e.good_copies) TH_LOG("chunk %d", c);
		for (int i = 24; i < BIG; i++) {
			EXPECT_EQ(0, buf[c * BIG + i]) TH_LOG("chunk %d, byte %d of its entry", c, i);
		}
	}
	for (size_t i = (NCH - 1) * BIG; i < sizeof(buf); i++) {
		ASSERT_EQ(0xff, buf[i]) TH_LOG("wrote past nr_chunks_max entries at byte %zu", i);
	}

	/* The largest entry, a page: still the kernel's members, then zeros. */
	memset(buf, 0xff, sizeof(buf));
	memset(&ri, 0, sizeof(ri));
	ri.size = sizeof(ri);
	ri.chunks_ptr = (uintptr_t)buf;
	ri.nr_chunks_max = 2;
	ri.chunk_entry_size = page;
	ASSERT_EQ(0, xioctl(fd, HBMPOOL_IOC_REGION_INFO, &ri)) TH_LOG("entry size %u", page);
	for (int c = 0; c < 2; c++) {
		struct hbmpool_chunk_info e;
		size_t nz = 0;

		memcpy(&e, buf + (size_t)c * page, sizeof(e));
		EXPECT_EQ(ref[c].node, e.node);
		EXPECT_EQ(ref[c].node_offset, e.node_offset);
		EXPECT_EQ(1, e.generation);
		for (size_t i = 24; i < page; i++)
			nz += buf[(size_t)c * page + i] != 0;
		EXPECT_EQ(0, nz) TH_LOG("chunk %d: %zu non-zero bytes after the kernel's 24", c, nz);
	}
	EXPECT_EQ(0xff, buf[2 * (size_t)page]);
}

/* REGION_INFO with only the node bitmap asked for; 0 or -errno. */
static int info_nodes(int fd, void *bitmap, uint32_t nbits, struct hbmpool_region_info *ri)
{
	memset(ri, 0, sizeof(*ri));
	ri->size = sizeof(*ri);
	ri->nodes_ptr = (uintptr_t)bitmap;
	ri->nr_node_bits = nbits;
	return xioctl(fd, HBMPOOL_IOC_REGION_INFO, ri);
}

/*
 * REGION_INFO's node bitmap: nr_node_bits comes back as the highest id + 1,
 * DIV_ROUND_UP(in, 64) words are written (a smaller bitmap gets the set cut
 * short, words beyond are left alone), nr_nodes counts the set; ids above
 * 63 round-trip; nr_node_bits above HBMPOOL_NODE_BITS_MAX is EINVAL.
 */
TEST_F(abi, region_info_node_bitmap)
{
	static uint64_t big[HBMPOOL_NODE_BITS_MAX / 64 + 1];
	const struct hbm_nodeset *want = HBM_NODES(N_NEAR, N_HIGH);
	struct hbmpool_chunk_info ch[2];
	struct hbmpool_region_info ri;
	uint64_t bits[HBM_NODESET_WORDS];
	char buf[64];
	int fd;

	hbmt_env_node(_metadata, &self->env, N_HIGH, 1, 25, NULL);
	ASSERT_EQ(0, hbmt_region_open(&self->r[0], self->env.devfd, 2 * 256 * 1024, 256 * 1024,
				      HBMPOOL_POLICY_INTERLEAVE, want, 0, "bitmap"));
	fd = self->r[0].fd;
	ASSERT_EQ(0, hbm_fdinfo_str(fd, "nodes", buf, sizeof(buf)));
	EXPECT_STREQ("11,700", buf);
	ASSERT_EQ(0, hbm_region_info(fd, &ri, ch, 2, NULL));
	EXPECT_EQ(N_NEAR, ch[0].node);
	EXPECT_EQ(N_HIGH, ch[1].node);

	/* The size alone. */
	ASSERT_EQ(0, info_nodes(fd, NULL, 0, &ri));
	EXPECT_EQ(N_HIGH + 1, ri.nr_node_bits);
	EXPECT_EQ(2, ri.nr_nodes);

	/* One word: cut short to node 11, nothing beyond the word written. */
	memset(bits, 0xff, sizeof(bits));
	ASSERT_EQ(0, info_nodes(fd, bits, 64, &ri));
	EXPECT_EQ(N_HIGH + 1, ri.nr_node_bits) TH_LOG("out: the bits the set needs");
	EXPECT_EQ(2, ri.nr_nodes);
	EXPECT_EQ(1ULL << N_NEAR, bits[0]);
	for (int w = 1; w < HBM_NODESET_WORDS; w++) {
		EXPECT_EQ(~0ULL, bits[w]) TH_LOG("word %d written for 64 bits", w);
	}

	/* 12 words (768 bits): the whole set, words 12.. left alone. */
	memset(bits, 0xff, sizeof(bits));
	ASSERT_EQ(0, info_nodes(fd, bits, 768, &ri));
	EXPECT_EQ(N_HIGH + 1, ri.nr_node_bits);
	for (int w = 0; w < 12; w++) {
		EXPECT_EQ(want->w[w], bits[w]) TH_LOG("word %d", w);
	}
	for (int w = 12; w < HBM_NODESET_WORDS; w++) {
		EXPECT_EQ(~0ULL, bits[w]) TH_LOG("word %d written for 768 bits", w);
	}

	/* The most the kernel takes: every word written, zeros past the set. */
	memset(big, 0xff, sizeof(big));
	ASSERT_EQ(0, info_nodes(fd, big, HBMPOOL_NODE_BITS_MAX, &ri));
	EXPECT_EQ(N_HIGH + 1, ri.nr_node_bits);
	EXPECT_EQ(2, ri.nr_nodes);
	for (int w = 0; w < HBMPOOL_NODE_BITS_MAX / 64; w++) {
		ASSERT_EQ(w < HBM_NODESET_WORDS ? want->w[w] : 0, big[w]) TH_LOG("word %d", w);
	}
	EXPECT_EQ(~0ULL, big[HBMPOOL_NODE_BITS_MAX / 64]);

	/* One bit too many; then a bad pointer. */
	memset(big, 0xff, sizeof(big));
	EXPECT_EQ(-EINVAL, info_nodes(fd, big, HBMPOOL_NODE_BITS_MAX + 1, &ri));
	EXPECT_EQ(~0ULL, big[0]);
	EXPECT_EQ(-EINVAL, info_nodes(fd, big, ~0U, &ri));
	EXPECT_EQ(-EINVAL, info_nodes(fd, NULL, HBMPOOL_NODE_BITS_MAX + 1, &ri))
		TH_LOG("nr_node_bits is checked without a pointer too");
	EXPECT_EQ(-EFAULT, info_nodes(fd, (void *)16, 1024, &ri));

	hbmt_region_close(&self->r[0]);
}

/* REGION_STATS: all zero on a new region, reserved out zero, size and pad validated. */
TEST_F(abi, region_stats)
{
	union {
		struct hbmpool_stats s;
		uint8_t raw[sizeof(struct hbmpool_stats) + 32];
	} u;
	struct hbmpool_stats zero;
	int fd;

	ASSERT_EQ(HBMPOOL_STATS_SIZE_VER0, sizeof(u.s));
	ASSERT_EQ(0, hbmt_region_open(&self->r[0], self->env.devfd, HBMT_MIB, 0,
				      HBMPOOL_POLICY_BIND, &set_near, 0, "stats"));
	fd = self->r[0].fd;
	memset(&u, 0xff, sizeof(u));
	memset(&u.s, 0, sizeof(u.s));	/* in: size, pad zero; out fields preset zero */
	memset(u.s.lat_hist, 0x5a, sizeof(u.s.lat_hist));
	u.s.faults = 77;
	u.s.size = sizeof(u.s);
	ASSERT_EQ(0, xioctl(fd, HBMPOOL_IOC_REGION_STATS, &u));
	memset(&zero, 0, sizeof(zero));
	zero.size = sizeof(zero);
	EXPECT_EQ(0, memcmp(&zero, &u.s, sizeof(zero))) TH_LOG("new region has non-zero stats");
	for (size_t i = sizeof(u.s); i < sizeof(u); i++) {
		ASSERT_EQ(0xff, u.raw[i]) TH_LOG("kernel wrote past size at %zu", i);
	}

	memset(&u, 0, sizeof(u));
	u.s.size = 0;
	EXPECT_EQ(-EINVAL, xioctl(fd, HBMPOOL_IOC_REGION_STATS, &u));
	u.s.size = HBMPOOL_STATS_SIZE_VER0 - 8;
	EXPECT_EQ(-EINVAL, xioctl(fd, HBMPOOL_IOC_REGION_STATS, &u));
	u.s.size = sizeof(u.s);
	u.s.pad = 1;
	EXPECT_EQ(-EINVAL, xioctl(fd, HBMPOOL_IOC_REGION_STATS, &u));
	memset(&u, 0, sizeof(u));
	u.s.size = sizeof(u);
	u.raw[sizeof(u.s) + 3] = 1;
	EXPECT_EQ(-E2BIG, xioctl(fd, HBMPOOL_IOC_REGION_STATS, &u));
	memset(&u, 0, sizeof(u));
	u.s.size = sizeof(u);
	EXPECT_EQ(0, xioctl(fd, HBMPOOL_IOC_REGION_STATS, &u));
	EXPECT_EQ(sizeof(u.s), u.s.size) TH_LOG("size out = the kernel's sizeof");
	for (int r = 0; r < 4; r++) {
		memset(&u, 0, sizeof(u));
		u.s.size = sizeof(u.s);
		u.s.reserved[r] = 1;
		EXPECT_EQ(-EINVAL, xioctl(fd, HBMPOOL_IOC_REGION_STATS, &u)) TH_LOG("reserved[%d]", r);
	}

	/* One touched page shows up as one fault and one fetch. */
	self->r[0].map[0] = 1;
	ASSERT_EQ(0, hbm_region_stats(fd, &u.s));
	EXPECT_EQ(1, u.s.fetches);
	EXPECT_LE(1, u.s.faults);
	EXPECT_EQ(HBMT_PAGE, u.s.bytes_fetched);
	EXPECT_EQ(1, hbm_hist_total(u.s.lat_hist, HBMPOOL_LAT_BUCKETS));
}

/* SYNC and PREFETCH validate size, flags, reserved and page alignment; a clean SYNC does nothing. */
TEST_F(abi, range_ioctls)
{
	static const unsigned long cmds[2] = { HBMPOOL_IOC_REGION_SYNC, HBMPOOL_IOC_REGION_PREFETCH };
	union {
		struct hbmpool_range r;
		uint8_t raw[sizeof(struct hbmpool_range) + 16];
	} u;
	int fd;

	ASSERT_EQ(HBMPOOL_RANGE_SIZE_VER0, sizeof(u.r));
	ASSERT_EQ(0, hbmt_region_open(&self->r[0], self->env.devfd, HBMT_MIB, 0,
				      HBMPOOL_POLICY_BIND, &set_near, 0, "range"));
	fd = self->r[0].fd;
	for (int c = 0; c < 2; c++) {
		const char *n = c ? "PREFETCH" : "SYNC";

		memset(&u, 0, sizeof(u));
		u.r.size = 0;
		EXPECT_EQ(-EINVAL, xioctl(fd, cmds[c], &u)) TH_LOG("%s size 0", n);
		u.r.size = HBMPOOL_RANGE_SIZE_VER0 - 8;
		EXPECT_EQ(-EINVAL, xioctl(fd, cmds[c], &u)) TH_LOG("%s small size", n);
		memset(&u, 0, sizeof(u));
		u.r.size = sizeof(u);
		u.raw[sizeof(u) - 2] = 1;
		EXPECT_EQ(-E2BIG, xioctl(fd, cmds[c], &u)) TH_LOG("%s tail", n);
		memset(&u, 0, sizeof(u));
		u.r.size = sizeof(u.r);
		u.r.flags = 1;
		EXPECT_EQ(-EINVAL, xioctl(fd, cmds[c], &u)) TH_LOG("%s flags", n);
		for (int r = 0; r < 2; r++) {
			memset(&u, 0, sizeof(u));
			u.r.size = sizeof(u.r);
			u.r.reserved[r] = 1;
			EXPECT_EQ(-EINVAL, xioctl(fd, cmds[c], &u)) TH_LOG("%s reserved[%d]", n, r);
		}
		memset(&u, 0, sizeof(u));
		u.r.size = sizeof(u.r);
		u.r.offset = 100;
		EXPECT_EQ(-EINVAL, xioctl(fd, cmds[c], &u)) TH_LOG("%s offset", n);
		memset(&u, 0, sizeof(u));
		u.r.size = sizeof(u.r);
		u.r.length = HBMT_PAGE + 1;
		EXPECT_EQ(-EINVAL, xioctl(fd, cmds[c], &u)) TH_LOG("%s length", n);
	}
	/* Clean region: SYNC of everything succeeds with nothing to do. */
	memset(&u, 0, sizeof(u));
	u.r.size = sizeof(u);
	ASSERT_EQ(0, xioctl(fd, HBMPOOL_IOC_REGION_SYNC, &u));
	EXPECT_EQ(0, u.r.pages_done);
	EXPECT_EQ(0, u.r.pages_failed);
	/* pages_done/pages_failed are "in: zero; out: ...". */
	for (int c = 0; c < 2; c++) {
		memset(&u, 0, sizeof(u));
		u.r.size = sizeof(u.r);
		u.r.pages_done = 99;
		EXPECT_EQ(-EINVAL, xioctl(fd, cmds[c], &u));
		memset(&u, 0, sizeof(u));
		u.r.size = sizeof(u.r);
		u.r.pages_failed = 1;
		EXPECT_EQ(-EINVAL, xioctl(fd, cmds[c], &u));
	}
	/* A larger struct with a zero tail: the tail is left alone. */
	memset(&u, 0, sizeof(u));
	u.r.size = sizeof(u);
	ASSERT_EQ(0, xioctl(fd, HBMPOOL_IOC_REGION_SYNC, &u));
	for (size_t i = sizeof(u.r); i < sizeof(u); i++) {
		ASSERT_EQ(0, u.raw[i]);
	}
}

/* node-new builds nodes/nodeN with the documented attributes (default link scaleup); this node (self_node) is the local cache node. */
TEST_F(abi, sysfs_node_attrs)
{
	static const char *const links[] = { "scaleup", "scaleout", "scaleacross" };
	char buf[64];
	uint64_t v, budget;

	ASSERT_EQ(0, hbm_node_u64(N_NEAR, "id", &v));
	EXPECT_EQ(N_NEAR, v);
	ASSERT_EQ(0, hbm_node_str(N_NEAR, "state", buf, sizeof(buf)));
	EXPECT_STREQ("up", buf);
	ASSERT_EQ(0, hbm_node_u64(N_NEAR, "distance", &v));
	EXPECT_EQ(20, v);
	ASSERT_EQ(0, hbm_node_str(N_NEAR, "link_type", buf, sizeof(buf)));
	EXPECT_STREQ("scaleup", buf);
	ASSERT_EQ(0, hbm_node_str(N_NEAR, "transport", buf, sizeof(buf)));
	EXPECT_STREQ("sim", buf);
	ASSERT_EQ(0, hbm_node_u64(N_NEAR, "capacity_bytes", &v));
	EXPECT_EQ(4 * HBMT_MIB, v);
	ASSERT_EQ(0, hbm_node_u64(N_NEAR, "free_bytes", &v));
	EXPECT_EQ(4 * HBMT_MIB, v);
	ASSERT_EQ(0, hbm_node_str(N_FAR, "link_type", buf, sizeof(buf)));
	EXPECT_STREQ("scaleout", buf);
	ASSERT_EQ(0, hbm_readf_u64(&v, HBM_SYSFS "/nodes/node%u/stats/fetches", N_NEAR));
	EXPECT_EQ(0, v);

	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(0, hbm_node_add(N_SPARE, 1, 11 + i, links[i]));
		ASSERT_EQ(0, hbm_node_str(N_SPARE, "link_type", buf, sizeof(buf)));
		EXPECT_STREQ(links[i], buf);
		ASSERT_EQ(0, hbm_node_u64(N_SPARE, "distance", &v));
		EXPECT_EQ(11 + i, v);
		EXPECT_EQ(0, access(HBM_DEBUGFS "/node13/hbm", R_OK)) TH_LOG("debugfs for the node");
		ASSERT_EQ(0, hbm_node_del(N_SPARE));
		EXPECT_EQ(0, hbmt_wait_gone(HBM_SYSFS "/nodes/node13", 5000));
	}

	ASSERT_EQ(0, hbm_node_u64(self->self, "distance", &v));
	EXPECT_EQ(HBMPOOL_DISTANCE_LOCAL, v);
	ASSERT_EQ(0, hbm_node_str(self->self, "link_type", buf, sizeof(buf)));
	EXPECT_STREQ("local", buf);
	ASSERT_EQ(0, hbm_node_str(self->self, "transport", buf, sizeof(buf)));
	EXPECT_STREQ("local", buf);
	ASSERT_EQ(0, hbm_global_u64("cache_budget_pages", &budget));
	ASSERT_EQ(0, hbm_node_u64(self->self, "capacity_bytes", &v));
	EXPECT_EQ(budget * HBMT_PAGE, v);
}

/*
 * Node creation (hbm_node_add: sysfs new_node before, netlink node-new now)
 * refuses ids above 1023, this node's own id, capacities and distances out
 * of range and unknown links, creating nothing; an existing id is EEXIST;
 * removing an unknown id is ENODEV, this node cannot be removed; ids above
 * 63 are accepted.
 */
TEST_F(abi, node_add_del_errors)
{
	static const struct {
		unsigned int id, cap_mib, distance;
		const char *link;
	} bad[] = {
		{ 1024, 1, 20, NULL }, { 65535, 1, 20, NULL }, { ~0U, 1, 20, NULL },
		{ N_SPARE, 0, 20, NULL }, { N_SPARE, 65537, 20, NULL },
		{ N_SPARE, 1, 10, NULL }, { N_SPARE, 1, 256, NULL }, { N_SPARE, 1, 0, NULL },
		{ N_SPARE, 1, 20, "fastlink" }, { N_SPARE, 1, 20, "local" },
	};
	char path[128];
	struct stat st;
	int ret;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		ret = hbm_node_add(bad[i].id, bad[i].cap_mib, bad[i].distance, bad[i].link);
		EXPECT_GT(0, ret) TH_LOG("node %u %u MiB distance %u link %s accepted",
					 bad[i].id, bad[i].cap_mib, bad[i].distance,
					 bad[i].link ?: "(default)");
		EXPECT_NE(0, stat(HBM_SYSFS "/nodes/node13", &st));
		if (!ret)
			hbm_node_del(bad[i].id);
	}
	/* This node's own id is not a node to create. */
	ret = hbm_node_add((unsigned int)self->self, 4, 20, NULL);
	EXPECT_EQ(-EINVAL, ret) TH_LOG("self %d: %d", self->self, ret);
	if (!ret)
		hbm_node_del((unsigned int)self->self);

	/* Boundaries accepted; an existing id is EEXIST. */
	EXPECT_EQ(0, hbm_node_add(N_SPARE, 1, 255, "scaleacross"));
	EXPECT_EQ(-EEXIST, hbm_node_add(N_SPARE, 1, 255, "scaleacross"));
	EXPECT_EQ(-EEXIST, hbm_node_add(N_NEAR, 4, 20, NULL));
	EXPECT_EQ(0, hbm_node_del(N_SPARE));
	EXPECT_EQ(-ENODEV, hbm_node_del(N_SPARE));
	EXPECT_EQ(-ENODEV, hbm_node_del(62));
	EXPECT_EQ(-ENODEV, hbm_node_del(N_UNKNOWN_HIGH));
	EXPECT_GT(0, hbm_node_del(1024));
	EXPECT_NE(0, hbm_node_del((unsigned int)self->self))
		TH_LOG("the local node cannot be removed");
	snprintf(path, sizeof(path), HBM_SYSFS "/nodes/node%d", self->self);
	EXPECT_EQ(0, stat(path, &st));
	/* distance 11 is valid; so are ids above 63. */
	EXPECT_EQ(0, hbm_node_add(N_SPARE, 1, 11, NULL));
	EXPECT_EQ(0, hbm_node_del(N_SPARE));
	EXPECT_EQ(0, hbm_node_add(N_HIGH, 1, 11, NULL));
	EXPECT_EQ(0, stat(HBM_SYSFS "/nodes/node700", &st));
	EXPECT_EQ(0, hbm_node_del(N_HIGH));
	EXPECT_EQ(0, hbmt_wait_gone(HBM_SYSFS "/nodes/node700", 5000));
}

/*
 * cache_budget_pages and fetch_timeout_ms are a read-only view: a write is
 * refused (EACCES) and changes nothing.  params-set (hbm_set_global_u64)
 * refuses values out of range (ERANGE) keeping the value, and accepts the
 * bounds, which sysfs then shows.
 */
TEST_F(abi, param_ranges)
{
	static const struct {
		const char *knob;
		uint64_t keep, lo, hi, bad[3];
	} k[] = {
		{ "cache_budget_pages", 300, 16, 16777216, { 0, 15, 16777217 } },
		{ "fetch_timeout_ms", 1234, 10, 600000, { 0, 9, 600001 } },
	};
	char path[128];
	uint64_t v;

	for (size_t i = 0; i < ARRAY_SIZE(k); i++) {
		snprintf(path, sizeof(path), HBM_SYSFS "/%s", k[i].knob);
		ASSERT_EQ(0, hbm_set_global_u64(k[i].knob, k[i].keep));
		EXPECT_EQ(-EACCES, hbm_write_u64(path, k[i].lo)) TH_LOG("%s written", k[i].knob);
		for (size_t j = 0; j < ARRAY_SIZE(k[i].bad); j++) {
			EXPECT_EQ(-ERANGE, hbm_set_global_u64(k[i].knob, k[i].bad[j]))
				TH_LOG("%s %llu", k[i].knob, (unsigned long long)k[i].bad[j]);
			ASSERT_EQ(0, hbm_global_u64(k[i].knob, &v));
			EXPECT_EQ(k[i].keep, v);
		}
		EXPECT_EQ(0, hbm_set_global_u64(k[i].knob, k[i].lo));
		ASSERT_EQ(0, hbm_global_u64(k[i].knob, &v));
		EXPECT_EQ(k[i].lo, v);
		EXPECT_EQ(0, hbm_set_global_u64(k[i].knob, k[i].hi));
		ASSERT_EQ(0, hbm_global_u64(k[i].knob, &v));
		EXPECT_EQ(k[i].hi, v);
	}
}

/* debugfs knobs exist for a simulated node and reject out-of-range values (latency_us > 1000000). */
TEST_F(abi, debugfs_knobs)
{
	static const char *const knobs[] = {
		"latency_us", "bandwidth_mbps", "fail_fetch", "fail_writeback",
		"hang_fetch", "link_down", "nowait_copy", "hbm",
	};
	char path[256], buf[8];
	uint64_t v;

	if (hbmt_debugfs_missing())
		SKIP(return, "%s", hbmt_debugfs_missing());
	for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
		snprintf(path, sizeof(path), HBM_DEBUGFS "/node%u/%s", N_NEAR, knobs[i]);
		EXPECT_EQ(0, access(path, R_OK)) TH_LOG("%s", path);
	}
	snprintf(path, sizeof(path), HBM_DEBUGFS "/node%u/latency_us", N_NEAR);
	EXPECT_NE(0, hbm_write_u64(path, 1000001));
	EXPECT_EQ(0, hbm_write_u64(path, 1000000));
	ASSERT_EQ(0, hbm_read_u64(path, &v));
	EXPECT_EQ(1000000, v);
	EXPECT_EQ(0, hbm_write_u64(path, 0));
	/* link_down shows in the node's state. */
	ASSERT_EQ(0, hbm_node_knob(N_NEAR, "link_down", 1));
	ASSERT_EQ(0, hbm_node_str(N_NEAR, "state", path, sizeof(path)));
	EXPECT_STREQ("down", path);
	ASSERT_EQ(0, hbm_node_knob(N_NEAR, "link_down", 0));
	ASSERT_EQ(0, hbm_node_str(N_NEAR, "state", path, sizeof(path)));
	EXPECT_STREQ("up", path);
	/* Unwritten HBM reads as zeros. */
	ASSERT_EQ(8, hbm_hbm_pread(N_NEAR, buf, 8, HBMT_MIB));
	for (int i = 0; i < 8; i++) {
		EXPECT_EQ(0, buf[i]);
	}
}

/*
 * Lengths near 2^64 must be rejected (EINVAL or ENOSPC), never wrap around in
 * the chunk count; nothing leaks.  Kept as the last test of the file: a
 * kernel that wraps may crash, and the tests above still report first.
 */
TEST_F(abi, create_length_overflow)
{
	static const uint64_t chunks[] = { 256 * 1024, HBMPOOL_CHUNK_MIN, 0, HBMPOOL_CHUNK_MAX };
	uint64_t free_near = node_free(N_NEAR), n0 = nregions();
	struct hbmpool_region_create rc;
	int fd;

	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		good_create(&rc);
		rc.chunk_size = chunks[i];
		rc.length = ~0ULL & ~(HBMT_PAGE - 1);
		fd = hbm_region_create(self->env.devfd, &rc);
		EXPECT_TRUE(fd == -EINVAL || fd == -ENOSPC)
			TH_LOG("length 2^64-4096, chunk %llu: got %d",
			       (unsigned long long)chunks[i], fd);
		rc.length = 1ULL << 63;
		fd = hbm_region_create(self->env.devfd, &rc);
		EXPECT_TRUE(fd == -EINVAL || fd == -ENOSPC)
			TH_LOG("length 2^63, chunk %llu: got %d",
			       (unsigned long long)chunks[i], fd);
	}
	EXPECT_EQ(free_near, node_free(N_NEAR));
	EXPECT_EQ(n0, nregions());
}

TEST_HARNESS_MAIN
