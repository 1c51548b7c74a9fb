// SPDX-License-Identifier: GPL-2.0
/*
 * Placement over the states and weights the control plane sets: weighted
 * interleave spreads chunks in proportion to the nodes' weights (set or
 * automatic); draining, fenced and link-down nodes take no new chunk under
 * any policy (nor unreachable ones); bind and preferred go to the nearest eligible node; with no
 * eligible node the create is ENOSPC; node-set refuses bad weights and
 * draining values with an extack.  The full-pct parameter makes a nearly
 * full node a last resort; params-set refuses bad full-pct and
 * avoid-degraded values.  Where the chunks went is read from the
 * nodes' free_bytes (each chunk reserves its size there).
 */
#include <stdio.h>

#include "kselftest_harness.h"
#include "hbmtest.h"
#include "hbmnl.h"

/* Three simulated nodes of 16 MiB at distances 20, 30 and 40. */
#define N_A	60
#define N_B	61
#define N_C	62
#define CAP_MIB	16
#define NR	4

FIXTURE(plc)
{
	struct hbmt_env env;
	struct hbm_nl *nl;
	int fd[NR];		/* regions, -1 when closed */
	char ext[256];		/* the last refusal's extack */
};

FIXTURE_SETUP(plc)
{
	int i, ret;

	for (i = 0; i < NR; i++)
		self->fd[i] = -1;
	self->nl = NULL;
	hbmt_env_setup(_metadata, &self->env, 256, 2000);
	hbmt_env_node(_metadata, &self->env, N_A, CAP_MIB, 20, NULL);
	hbmt_env_node(_metadata, &self->env, N_B, CAP_MIB, 30, NULL);
	hbmt_env_node(_metadata, &self->env, N_C, CAP_MIB, 40, NULL);
	ret = hbm_nl_open(&self->nl);
	ASSERT_EQ(0, ret) TH_LOG("netlink: %s", strerror(-ret));
}

/* params-set of one attribute of 1 or 4 bytes: 0 or -errno (extack in the handle). */
static int params_set(struct hbm_nl *nl, int attr, uint32_t v, int bytes)
{
	struct nl_msg *m = hbm_nl_msg(nl, HBMPOOL_CMD_PARAMS_SET, 0);

	if (!m)
		return -ENOMEM;
	if (bytes == 1 ? nla_put_u8(m, attr, (uint8_t)v) : nla_put_u32(m, attr, v)) {
		nlmsg_free(m);
		return -EMSGSIZE;
	}
	return hbm_nl_request(nl, m, NULL, NULL);
}

struct place_params {
	int64_t full_pct, avoid_degraded;
};

static int on_params(uint8_t cmd, struct nlattr *attrs, int len, void *arg)
{
	struct place_params *p = arg;
	struct nlattr *a;
	int rem;

	(void)cmd;
	nla_for_each_attr(a, attrs, len, rem) {
		if (nla_type(a) == HBMPOOL_A_PARAMS_FULL_PCT)
			p->full_pct = nla_get_u32(a);
		else if (nla_type(a) == HBMPOOL_A_PARAMS_AVOID_DEGRADED)
			p->avoid_degraded = nla_get_u8(a);
	}
	return 0;
}

static int params_get(struct hbm_nl *nl, struct place_params *p)
{
	struct nl_msg *m = hbm_nl_msg(nl, HBMPOOL_CMD_PARAMS_GET, 0);

	p->full_pct = p->avoid_degraded = -1;
	if (!m)
		return -ENOMEM;
	return hbm_nl_request(nl, m, on_params, p);
}

FIXTURE_TEARDOWN(plc)
{
	/* the defaults back, whatever a test did */
	if (self->nl) {
		params_set(self->nl, HBMPOOL_A_PARAMS_FULL_PCT, 100, 4);
		params_set(self->nl, HBMPOOL_A_PARAMS_AVOID_DEGRADED, 1, 1);
	}
	for (int i = 0; i < NR; i++)
		if (self->fd[i] >= 0)
			close(self->fd[i]);
	if (self->nl)
		hbm_nl_close(self->nl);
	hbmt_env_teardown(_metadata, &self->env);
}

/* MiB reserved on node id. */
static uint64_t used_mib(unsigned int id)
{
	uint64_t v = 0;

	if (hbm_node_u64(id, "free_bytes", &v))
		return ~0ULL;
	return ((uint64_t)CAP_MIB * HBMT_MIB - v) / HBMT_MIB;
}

/* Creates a region of mib MiB in 1 MiB chunks into slot; returns fd or -errno. */
static int create(FIXTURE_DATA(plc) *self, int slot, unsigned int mib,
		  uint32_t policy, const struct hbm_nodeset *set, uint32_t preferred)
{
	struct hbmpool_region_create rc;
	int fd;

	hbm_create_init(&rc, mib * HBMT_MIB, HBMT_MIB, policy, set, preferred, "plc");
	fd = hbm_region_create(self->env.devfd, &rc);
	if (fd >= 0)
		self->fd[slot] = fd;
	return fd;
}

#define SET(id, w) do {								\
	int __r = hbm_nl_node_weight(self->nl, (id), (w), self->ext, sizeof(self->ext)); \
	ASSERT_EQ(0, __r) TH_LOG("weight %u on %u: %s (%s)", (w), (id),	\
				 strerror(-__r), self->ext);			\
} while (0)

#define DRAIN(id, on) do {							\
	int __r = hbm_nl_node_draining(self->nl, (id), (on), self->ext, sizeof(self->ext)); \
	ASSERT_EQ(0, __r) TH_LOG("draining %u on %u: %s (%s)", (on), (id),	\
				 strerror(-__r), self->ext);			\
} while (0)

/* The feature bit of the new policy is reported. */
TEST_F(plc, feature_bit)
{
	struct hbmpool_features f;

	ASSERT_EQ(0, hbm_features(self->env.devfd, &f));
	EXPECT_TRUE(f.features & HBMPOOL_FEAT_POLICY_WEIGHTED_INTERLEAVE);
	EXPECT_EQ(3, HBMPOOL_POLICY_WEIGHTED_INTERLEAVE);
	EXPECT_EQ(HBMPOOL_POLICY_WEIGHTED_INTERLEAVE, HBMPOOL_POLICY_MAX);
}

/* Weights 1:3 put 8 chunks 2:6 and 16 chunks 4:12 (exact on multiples of 4). */
TEST_F(plc, weighted_1_3)
{
	SET(N_A, 1);
	SET(N_B, 3);
	ASSERT_LE(0, create(self, 0, 8, HBMPOOL_POLICY_WEIGHTED_INTERLEAVE,
			    HBM_NODES(N_A, N_B), 0));
	EXPECT_EQ(2, used_mib(N_A));
	EXPECT_EQ(6, used_mib(N_B));
	ASSERT_LE(0, create(self, 1, 8, HBMPOOL_POLICY_WEIGHTED_INTERLEAVE,
			    HBM_NODES(N_A, N_B), 0));
	EXPECT_EQ(4, used_mib(N_A));
	EXPECT_EQ(12, used_mib(N_B));
	EXPECT_EQ(0, used_mib(N_C));
}

/* Weight 0 is automatic: capacity MiB * 10 / distance (16 MiB: 8 at 20, 5 at 30). */
TEST_F(plc, weighted_auto)
{
	uint64_t w;

	ASSERT_EQ(0, hbm_node_u64(N_A, "weight", &w));
	EXPECT_EQ(0, w);
	ASSERT_EQ(0, hbm_node_u64(N_A, "effective_weight", &w));
	EXPECT_EQ(8, w);
	ASSERT_EQ(0, hbm_node_u64(N_B, "effective_weight", &w));
	EXPECT_EQ(5, w);
	ASSERT_LE(0, create(self, 0, 13, HBMPOOL_POLICY_WEIGHTED_INTERLEAVE,
			    HBM_NODES(N_A, N_B), 0));
	EXPECT_EQ(8, used_mib(N_A));
	EXPECT_EQ(5, used_mib(N_B));
	/* set, it is shown as set; 0 gives the automatic one back */
	SET(N_B, 7);
	ASSERT_EQ(0, hbm_node_u64(N_B, "weight", &w));
	EXPECT_EQ(7, w);
	ASSERT_EQ(0, hbm_node_u64(N_B, "effective_weight", &w));
	EXPECT_EQ(7, w);
	SET(N_B, 0);
	ASSERT_EQ(0, hbm_node_u64(N_B, "effective_weight", &w));
	EXPECT_EQ(5, w);
}

/* Interleave and weighted interleave skip a draining node, and use it again once it is not. */
TEST_F(plc, interleave_skips_draining)
{
	uint64_t d;

	DRAIN(N_B, 1);
	ASSERT_EQ(0, hbm_node_u64(N_B, "draining", &d));
	EXPECT_EQ(1, d);
	ASSERT_LE(0, create(self, 0, 6, HBMPOOL_POLICY_INTERLEAVE,
			    HBM_NODES(N_A, N_B, N_C), 0));
	EXPECT_EQ(3, used_mib(N_A));
	EXPECT_EQ(0, used_mib(N_B));
	EXPECT_EQ(3, used_mib(N_C));
	SET(N_A, 1);
	SET(N_B, 1);
	SET(N_C, 1);
	ASSERT_LE(0, create(self, 1, 4, HBMPOOL_POLICY_WEIGHTED_INTERLEAVE,
			    HBM_NODES(N_A, N_B, N_C), 0));
	EXPECT_EQ(5, used_mib(N_A));
	EXPECT_EQ(0, used_mib(N_B));
	EXPECT_EQ(5, used_mib(N_C));
	DRAIN(N_B, 0);
	ASSERT_EQ(0, hbm_node_u64(N_B, "draining", &d));
	EXPECT_EQ(0, d);
	ASSERT_LE(0, create(self, 2, 3, HBMPOOL_POLICY_INTERLEAVE,
			    HBM_NODES(N_A, N_B, N_C), 0));
	EXPECT_EQ(1, used_mib(N_B));
}

/* A fenced node takes no chunk under interleave or weighted interleave. */
TEST_F(plc, skips_fenced)
{
	int ret;

	ret = hbm_nl_node_fence(self->nl, N_C, self->ext, sizeof(self->ext));
	ASSERT_EQ(0, ret) TH_LOG("fence: %s (%s)", strerror(-ret), self->ext);
	ASSERT_LE(0, create(self, 0, 4, HBMPOOL_POLICY_INTERLEAVE,
			    HBM_NODES(N_A, N_B, N_C), 0));
	EXPECT_EQ(2, used_mib(N_A));
	EXPECT_EQ(2, used_mib(N_B));
	SET(N_A, 1);
	SET(N_B, 1);
	ASSERT_LE(0, create(self, 1, 4, HBMPOOL_POLICY_WEIGHTED_INTERLEAVE,
			    HBM_NODES(N_A, N_B, N_C), 0));
	EXPECT_EQ(4, used_mib(N_A));
	EXPECT_EQ(4, used_mib(N_B));
	/* the fenced node alone: nothing eligible */
	EXPECT_EQ(-ENOSPC, create(self, 2, 1, HBMPOOL_POLICY_BIND, HBM_NODES(N_C), 0));
}

/* Bind goes to the nearest eligible node: past a draining one; preferred passes over a draining preferred node. */
TEST_F(plc, bind_nearest_eligible)
{
	ASSERT_LE(0, create(self, 0, 2, HBMPOOL_POLICY_BIND, HBM_NODES(N_A, N_B, N_C), 0));
	EXPECT_EQ(2, used_mib(N_A));
	DRAIN(N_A, 1);
	ASSERT_LE(0, create(self, 1, 2, HBMPOOL_POLICY_BIND, HBM_NODES(N_A, N_B, N_C), 0));
	EXPECT_EQ(2, used_mib(N_A));
	EXPECT_EQ(2, used_mib(N_B));
	EXPECT_EQ(0, used_mib(N_C));
	ASSERT_LE(0, create(self, 2, 1, HBMPOOL_POLICY_PREFERRED,
			    HBM_NODES(N_A, N_B, N_C), N_A));
	EXPECT_EQ(2, used_mib(N_A));
	EXPECT_EQ(3, used_mib(N_B));
	/* full nodes are skipped: bind spills to the next nearest */
	ASSERT_LE(0, create(self, 3, 14, HBMPOOL_POLICY_BIND, HBM_NODES(N_B, N_C), 0));
	EXPECT_EQ(16, used_mib(N_B));
	EXPECT_EQ(1, used_mib(N_C));
}

/* A node whose link is set down (unreachable to requests) takes no chunk. */
TEST_F(plc, skips_link_down)
{
	int ret;

	ret = hbm_nl_link_admin(self->nl, N_A, 0, self->ext, sizeof(self->ext));
	ASSERT_EQ(0, ret) TH_LOG("link down: %s (%s)", strerror(-ret), self->ext);
	ASSERT_LE(0, create(self, 0, 2, HBMPOOL_POLICY_BIND, HBM_NODES(N_A, N_B), 0));
	EXPECT_EQ(0, used_mib(N_A));
	EXPECT_EQ(2, used_mib(N_B));
	ASSERT_LE(0, create(self, 1, 2, HBMPOOL_POLICY_INTERLEAVE, HBM_NODES(N_A, N_B), 0));
	EXPECT_EQ(0, used_mib(N_A));
	EXPECT_EQ(4, used_mib(N_B));
	ret = hbm_nl_link_admin(self->nl, N_A, 1, self->ext, sizeof(self->ext));
	ASSERT_EQ(0, ret) TH_LOG("link up: %s (%s)", strerror(-ret), self->ext);
	ASSERT_LE(0, create(self, 2, 2, HBMPOOL_POLICY_BIND, HBM_NODES(N_A, N_B), 0));
	EXPECT_EQ(2, used_mib(N_A));
	/* unreachable (the transport lost the link): skipped too */
	ASSERT_EQ(0, hbm_node_knob(N_A, "link_down", 1));
	ASSERT_LE(0, create(self, 3, 2, HBMPOOL_POLICY_BIND, HBM_NODES(N_A, N_C), 0));
	EXPECT_EQ(2, used_mib(N_A));
	EXPECT_EQ(2, used_mib(N_C));
	ASSERT_EQ(0, hbm_node_knob(N_A, "link_down", 0));
}

/* No eligible node: ENOSPC under every policy, nothing reserved; eligible again, it fits. */
TEST_F(plc, none_eligible)
{
	uint32_t p;

	DRAIN(N_A, 1);
	DRAIN(N_B, 1);
	for (p = 0; p <= HBMPOOL_POLICY_MAX; p++)
		EXPECT_EQ(-ENOSPC, create(self, 0, 2, p, HBM_NODES(N_A, N_B),
					  p == HBMPOOL_POLICY_PREFERRED ? N_A : 0))
			TH_LOG("policy %u", p);
	EXPECT_EQ(0, used_mib(N_A));
	EXPECT_EQ(0, used_mib(N_B));
	/* one eligible node with too little room for the region: ENOSPC too */
	DRAIN(N_B, 0);
	EXPECT_EQ(-ENOSPC, create(self, 0, 17, HBMPOOL_POLICY_INTERLEAVE,
				  HBM_NODES(N_A, N_B), 0));
	ASSERT_LE(0, create(self, 0, 2, HBMPOOL_POLICY_INTERLEAVE, HBM_NODES(N_A, N_B), 0));
	EXPECT_EQ(2, used_mib(N_B));
}

/* node-set refuses a weight above 65535 and draining other than 0 or 1 (ERANGE, with an extack at the attribute); and this node's own entry (EINVAL), and an absent node (ENODEV). */
TEST_F(plc, bad_values)
{
	uint64_t w;
	int ret, me;

	ret = hbm_nl_node_weight(self->nl, N_A, HBMPOOL_WEIGHT_MAX + 1, self->ext,
				 sizeof(self->ext));
	EXPECT_EQ(-ERANGE, ret);
	EXPECT_NE(0, strlen(self->ext)) TH_LOG("no extack for weight 65536");
	EXPECT_EQ(HBMPOOL_A_NODE_WEIGHT, hbm_nl_extack_attr(self->nl));
	ret = hbm_nl_node_draining(self->nl, N_A, 2, self->ext, sizeof(self->ext));
	EXPECT_EQ(-ERANGE, ret);
	EXPECT_NE(0, strlen(self->ext)) TH_LOG("no extack for draining 2");
	EXPECT_EQ(HBMPOOL_A_NODE_DRAINING, hbm_nl_extack_attr(self->nl));
	ret = hbm_nl_node_weight(self->nl, N_A, HBMPOOL_WEIGHT_MAX, self->ext,
				 sizeof(self->ext));
	EXPECT_EQ(0, ret) TH_LOG("weight 65535: %s", self->ext);
	ASSERT_EQ(0, hbm_node_u64(N_A, "weight", &w));
	EXPECT_EQ(HBMPOOL_WEIGHT_MAX, w);
	me = hbm_self_node(self->env.devfd);
	ASSERT_LE(0, me);
	ret = hbm_nl_node_weight(self->nl, (uint32_t)me, 5, self->ext, sizeof(self->ext));
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_NE(0, strlen(self->ext));
	ret = hbm_nl_node_draining(self->nl, 999, 1, self->ext, sizeof(self->ext));
	EXPECT_EQ(-ENODEV, ret);
	EXPECT_NE(0, strlen(self->ext));
}

/*
 * full-pct 75 on 16 MiB nodes: a chunk that would leave less than 4 MiB free
 * goes to a node with more room first; with none, into the reserve (a last
 * resort, not a refusal).  Moves' targets follow the same rule.
 */
TEST_F(plc, full_pct_last_resort)
{
	struct place_params p;

	ASSERT_EQ(0, params_get(self->nl, &p));
	EXPECT_EQ(100, p.full_pct);
	EXPECT_EQ(1, p.avoid_degraded);
	ASSERT_EQ(0, params_set(self->nl, HBMPOOL_A_PARAMS_FULL_PCT, 75, 4));
	ASSERT_EQ(0, params_get(self->nl, &p));
	EXPECT_EQ(75, p.full_pct);
	/* bind: A (nearest) up to 12 MiB, then B */
	ASSERT_LE(0, create(self, 0, 14, HBMPOOL_POLICY_BIND, HBM_NODES(N_A, N_B), 0));
	EXPECT_EQ(12, used_mib(N_A));
	EXPECT_EQ(2, used_mib(N_B));
	/* A alone: no other node, so the reserve is used */
	ASSERT_LE(0, create(self, 1, 3, HBMPOOL_POLICY_BIND, HBM_NODES(N_A), 0));
	EXPECT_EQ(15, used_mib(N_A));
	/* interleave over A, C: A is past its threshold, so every chunk goes to C */
	ASSERT_LE(0, create(self, 2, 4, HBMPOOL_POLICY_INTERLEAVE, HBM_NODES(N_A, N_C), 0));
	EXPECT_EQ(15, used_mib(N_A));
	EXPECT_EQ(4, used_mib(N_C));
	/* back to 100: A takes its last MiB again under bind */
	ASSERT_EQ(0, params_set(self->nl, HBMPOOL_A_PARAMS_FULL_PCT, 100, 4));
	ASSERT_LE(0, create(self, 3, 1, HBMPOOL_POLICY_BIND, HBM_NODES(N_A, N_C), 0));
	EXPECT_EQ(16, used_mib(N_A));
}

/* params-set refuses full-pct 0 and 101 and avoid-degraded 2 (ERANGE at the attribute), keeps the values. */
TEST_F(plc, params_bad_values)
{
	struct place_params p;

	EXPECT_EQ(-ERANGE, params_set(self->nl, HBMPOOL_A_PARAMS_FULL_PCT, 0, 4));
	EXPECT_EQ(HBMPOOL_A_PARAMS_FULL_PCT, hbm_nl_extack_attr(self->nl));
	EXPECT_EQ(-ERANGE, params_set(self->nl, HBMPOOL_A_PARAMS_FULL_PCT, 101, 4));
	EXPECT_EQ(-ERANGE, params_set(self->nl, HBMPOOL_A_PARAMS_AVOID_DEGRADED, 2, 1));
	EXPECT_EQ(HBMPOOL_A_PARAMS_AVOID_DEGRADED, hbm_nl_extack_attr(self->nl));
	EXPECT_NE(0, strlen(hbm_nl_extack(self->nl)));
	EXPECT_EQ(0, params_set(self->nl, HBMPOOL_A_PARAMS_AVOID_DEGRADED, 0, 1));
	ASSERT_EQ(0, params_get(self->nl, &p));
	EXPECT_EQ(100, p.full_pct);
	EXPECT_EQ(0, p.avoid_degraded);
}

/* A policy past HBMPOOL_POLICY_MAX is still EINVAL. */
TEST_F(plc, unknown_policy)
{
	EXPECT_EQ(-EINVAL, create(self, 0, 1, HBMPOOL_POLICY_MAX + 1, HBM_NODES(N_A), 0));
	EXPECT_EQ(-EINVAL, create(self, 0, 1, ~0U, HBM_NODES(N_A), 0));
	EXPECT_EQ(0, used_mib(N_A));
}

TEST_HARNESS_MAIN
