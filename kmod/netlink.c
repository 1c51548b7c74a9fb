// SPDX-License-Identifier: GPL-2.0
/*
 * The hbmpool generic netlink family, as Documentation/netlink/specs/
 * hbmpool.yaml specifies it (uapi/linux/hbmpool_nl.h): the family, its
 * policies and operations table, the domain, segment, parameters and
 * global counters, and the monitor group, which announces every event of
 * events.c.  Nodes and links are in netlink_node.c, regions in
 * netlink_region.c.  The handlers validate strictly (the policies below
 * mirror the spec's checks), report every rejection through extack, and
 * call the core's operations, which sysfs calls too.  Tables are written
 * for 6.1: struct genl_ops with a policy each, no split ops.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "netlink.h"
#include "resync.h"
#include "tcp.h"

/* Set while the family is registered; under the events lock (events.c). */
static bool hbmpool_nl_ready;

enum {
	HBMPOOL_MCGRP_MONITOR_IDX,
};

static const struct genl_multicast_group hbmpool_mcgrps[] = {
	[HBMPOOL_MCGRP_MONITOR_IDX] = { .name = HBMPOOL_MCGRP_MONITOR },
};

/* The kernel's states, link types and policies are the ABI's, value for value. */
static_assert((int)HBMPOOL_NODE_LIVE == (int)HBMPOOL_NODE_STATE_LIVE);
static_assert((int)HBMPOOL_NODE_UNREACHABLE == (int)HBMPOOL_NODE_STATE_UNREACHABLE);
static_assert((int)HBMPOOL_NODE_FENCED == (int)HBMPOOL_NODE_STATE_FENCED);
static_assert((int)HBMPOOL_NODE_REMOVED == (int)HBMPOOL_NODE_STATE_REMOVED);
static_assert((int)HBMPOOL_LINK_LOCAL == (int)HBMPOOL_LINK_TYPE_LOCAL);
static_assert((int)HBMPOOL_LINK_SCALEUP == (int)HBMPOOL_LINK_TYPE_SCALEUP);
static_assert((int)HBMPOOL_LINK_SCALEOUT == (int)HBMPOOL_LINK_TYPE_SCALEOUT);
static_assert((int)HBMPOOL_LINK_SCALEACROSS == (int)HBMPOOL_LINK_TYPE_SCALEACROSS);
static_assert(HBMPOOL_POLICY_BIND == HBMPOOL_PLACEMENT_POLICY_BIND);
static_assert(HBMPOOL_POLICY_INTERLEAVE == HBMPOOL_PLACEMENT_POLICY_INTERLEAVE);
static_assert(HBMPOOL_POLICY_PREFERRED == HBMPOOL_PLACEMENT_POLICY_PREFERRED);
static_assert(HBMPOOL_POLICY_WEIGHTED_INTERLEAVE ==
	      HBMPOOL_PLACEMENT_POLICY_WEIGHTED_INTERLEAVE);

/* ---- policies, one per operation that takes attributes ---- */

#define HBMPOOL_NL_NAME_MAX	(HBMPOOL_NAME_LEN - 1)
#define HBMPOOL_NL_ID		NLA_POLICY_MAX(NLA_U32, HBMPOOL_MAX_NODES - 1)

static struct netlink_range_validation hbmpool_budget_range = {
	.min = HBMPOOL_BUDGET_MIN,
	.max = HBMPOOL_BUDGET_MAX,
};

static struct netlink_range_validation hbmpool_timeout_range = {
	.min = HBMPOOL_TIMEOUT_MIN,
	.max = HBMPOOL_TIMEOUT_MAX,
};

static struct netlink_range_validation hbmpool_capacity_range = {
	.min = PAGE_SIZE,
	.max = 64ULL << 30,
};

static struct netlink_range_validation hbmpool_port_range = {
	.min = 1,
	.max = U16_MAX,
};

static struct netlink_range_validation hbmpool_resync_mbps_range = {
	.min = 0,
	.max = HBMPOOL_RESYNC_MBPS_MAX,
};

/* 0..65535 does not fit NLA_POLICY_RANGE's s16 bounds */
static struct netlink_range_validation hbmpool_weight_range = {
	.min = 0,
	.max = HBMPOOL_WEIGHT_MAX,
};

static const struct nla_policy hbmpool_params_set_policy[HBMPOOL_A_PARAMS_MAX + 1] = {
	[HBMPOOL_A_PARAMS_CACHE_BUDGET_PAGES] =
		NLA_POLICY_FULL_RANGE(NLA_U64, &hbmpool_budget_range),
	[HBMPOOL_A_PARAMS_FETCH_TIMEOUT_MS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &hbmpool_timeout_range),
	[HBMPOOL_A_PARAMS_READAHEAD_MAX_PAGES] =
		NLA_POLICY_RANGE(NLA_U32, 1, HBMPOOL_RA_MAX),
	[HBMPOOL_A_PARAMS_RESYNC_MBPS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &hbmpool_resync_mbps_range),
	[HBMPOOL_A_PARAMS_RESYNC_JOBS] =
		NLA_POLICY_RANGE(NLA_U32, 1, HBMPOOL_RESYNC_JOBS_MAX),
	[HBMPOOL_A_PARAMS_FULL_PCT] = NLA_POLICY_RANGE(NLA_U32, 1, 100),
	[HBMPOOL_A_PARAMS_AVOID_DEGRADED] = NLA_POLICY_MAX(NLA_U8, 1),
};

static const struct nla_policy hbmpool_resync_new_policy[HBMPOOL_A_RESYNC_TO_NODE_ID + 1] = {
	[HBMPOOL_A_RESYNC_REGION_ID] = { .type = NLA_U32 },
	[HBMPOOL_A_RESYNC_CHUNK] = { .type = NLA_U32 },
	[HBMPOOL_A_RESYNC_FROM_NODE_ID] = HBMPOOL_NL_ID,
	[HBMPOOL_A_RESYNC_TO_NODE_ID] = HBMPOOL_NL_ID,
};

static const struct nla_policy hbmpool_resync_id_policy[HBMPOOL_A_RESYNC_ID + 1] = {
	[HBMPOOL_A_RESYNC_ID] = { .type = NLA_U32 },
};

static const struct nla_policy hbmpool_node_id_policy[HBMPOOL_A_NODE_ID + 1] = {
	[HBMPOOL_A_NODE_ID] = HBMPOOL_NL_ID,
};

/* Attributes not listed (state, free, ...) are refused by strict validation. */
static const struct nla_policy hbmpool_node_new_policy[HBMPOOL_A_NODE_FAILURE_DOMAIN + 1] = {
	[HBMPOOL_A_NODE_ID] = HBMPOOL_NL_ID,
	[HBMPOOL_A_NODE_TRANSPORT] = { .type = NLA_NUL_STRING, .len = 15 },
	[HBMPOOL_A_NODE_DISTANCE] = NLA_POLICY_RANGE(NLA_U32, HBMPOOL_DISTANCE_LOCAL + 1,
						     HBMPOOL_DISTANCE_MAX),
	[HBMPOOL_A_NODE_LINK_TYPE] = NLA_POLICY_RANGE(NLA_U32, HBMPOOL_LINK_SCALEUP,
						      HBMPOOL_LINK_SCALEACROSS),
	[HBMPOOL_A_NODE_CAPACITY] = NLA_POLICY_FULL_RANGE(NLA_U64, &hbmpool_capacity_range),
	[HBMPOOL_A_NODE_NAME] = { .type = NLA_NUL_STRING, .len = HBMPOOL_NL_NAME_MAX },
	[HBMPOOL_A_NODE_ADDR] = NLA_POLICY_RANGE(NLA_BINARY, 4, 16),
	[HBMPOOL_A_NODE_PORT] = NLA_POLICY_FULL_RANGE(NLA_U16, &hbmpool_port_range),
	[HBMPOOL_A_NODE_WEIGHT] = NLA_POLICY_FULL_RANGE(NLA_U32, &hbmpool_weight_range),
	[HBMPOOL_A_NODE_DRAINING] = NLA_POLICY_MAX(NLA_U8, 1),
	[HBMPOOL_A_NODE_DEVICE] = { .type = NLA_NUL_STRING, .len = HBMPOOL_NL_DEVICE_MAX },
	[HBMPOOL_A_NODE_FAILURE_DOMAIN] = { .type = NLA_U32 },
};

static const struct nla_policy hbmpool_node_set_policy[HBMPOOL_A_NODE_FAILURE_DOMAIN + 1] = {
	[HBMPOOL_A_NODE_ID] = HBMPOOL_NL_ID,
	[HBMPOOL_A_NODE_STATE] = NLA_POLICY_MAX(NLA_U32, HBMPOOL_NODE_STATE_REMOVED),
	[HBMPOOL_A_NODE_DISTANCE] = NLA_POLICY_RANGE(NLA_U32, HBMPOOL_DISTANCE_LOCAL + 1,
						     HBMPOOL_DISTANCE_MAX),
	[HBMPOOL_A_NODE_LINK_TYPE] = NLA_POLICY_RANGE(NLA_U32, HBMPOOL_LINK_SCALEUP,
						      HBMPOOL_LINK_SCALEACROSS),
	[HBMPOOL_A_NODE_NAME] = { .type = NLA_NUL_STRING, .len = HBMPOOL_NL_NAME_MAX },
	[HBMPOOL_A_NODE_ADDR] = NLA_POLICY_RANGE(NLA_BINARY, 4, 16),
	[HBMPOOL_A_NODE_PORT] = NLA_POLICY_FULL_RANGE(NLA_U16, &hbmpool_port_range),
	[HBMPOOL_A_NODE_WEIGHT] = NLA_POLICY_FULL_RANGE(NLA_U32, &hbmpool_weight_range),
	[HBMPOOL_A_NODE_DRAINING] = NLA_POLICY_MAX(NLA_U8, 1),
	[HBMPOOL_A_NODE_FAILURE_DOMAIN] = { .type = NLA_U32 },
};

static const struct nla_policy hbmpool_domain_set_policy[HBMPOOL_A_DOMAIN_MAX + 1] = {
	[HBMPOOL_A_DOMAIN_NAME] = { .type = NLA_NUL_STRING, .len = HBMPOOL_NL_NAME_MAX },
	[HBMPOOL_A_DOMAIN_SELF_ID] = HBMPOOL_NL_ID,
	[HBMPOOL_A_DOMAIN_KEY] = NLA_POLICY_RANGE(NLA_BINARY, HBMPOOL_KEY_MIN,
						  HBMPOOL_KEY_MAX),
	[HBMPOOL_A_DOMAIN_EPOCH] = { .type = NLA_U64 },
	[HBMPOOL_A_DOMAIN_FENCED] = { .type = NLA_FLAG },
};

static const struct nla_policy hbmpool_link_get_policy[HBMPOOL_A_LINK_NODE_ID + 1] = {
	[HBMPOOL_A_LINK_NODE_ID] = HBMPOOL_NL_ID,
};

static const struct nla_policy hbmpool_link_set_policy[HBMPOOL_A_LINK_ADMIN_STATE + 1] = {
	[HBMPOOL_A_LINK_NODE_ID] = HBMPOOL_NL_ID,
	[HBMPOOL_A_LINK_ADMIN_STATE] = NLA_POLICY_MAX(NLA_U32, HBMPOOL_LINK_STATE_UP),
};

static struct netlink_range_validation hbmpool_segment_size_range = {
	.min = PAGE_SIZE,
	.max = HBMPOOL_EXPORT_MAX,
};

static const struct nla_policy hbmpool_segment_new_policy[HBMPOOL_A_SEGMENT_DEVICE + 1] = {
	[HBMPOOL_A_SEGMENT_SIZE] = NLA_POLICY_FULL_RANGE(NLA_U64, &hbmpool_segment_size_range),
	[HBMPOOL_A_SEGMENT_PROVIDER] = { .type = NLA_NUL_STRING, .len = 15 },
	[HBMPOOL_A_SEGMENT_DEVICE] = { .type = NLA_NUL_STRING, .len = HBMPOOL_NL_DEVICE_MAX },
};

static const struct nla_policy hbmpool_region_get_policy[HBMPOOL_A_REGION_CHUNKS + 1] = {
	[HBMPOOL_A_REGION_ID] = { .type = NLA_U32 },
	[HBMPOOL_A_REGION_CHUNKS] = { .type = NLA_FLAG },
};

/* ---- helpers shared by the family's files ---- */

void *hbmpool_nl_put_hdr(struct sk_buff *msg, const struct hbmpool_nl_msg *m)
{
	void *hdr = genlmsg_put(msg, m->portid, m->seq, &hbmpool_genl, m->flags,
				m->cmd);

	if (hdr && m->cb)
		genl_dump_check_consistent(m->cb, hdr);
	return hdr;
}

/*
 * The end of a part of a dump: a full message ends the part and the next
 * one resumes; an error with nothing in the part is the dump's error.
 */
int hbmpool_nl_dump_done(struct sk_buff *skb, int err)
{
	if (err == -EMSGSIZE && skb->len)
		return skb->len;
	return err ?: skb->len;
}

/* Counters @v (HBMPOOL_NR_STATS); @global adds the ones only the module has. */
int hbmpool_nl_put_stats(struct sk_buff *msg, const u64 *v, bool global)
{
	static const u8 attr_of[HBMPOOL_STAT_LAT0] = {
		[HBMPOOL_STAT_FAULTS] = HBMPOOL_A_STATS_FAULTS,
		[HBMPOOL_STAT_FETCHES] = HBMPOOL_A_STATS_FETCHES,
		[HBMPOOL_STAT_BYTES_FETCHED] = HBMPOOL_A_STATS_BYTES_FETCHED,
		[HBMPOOL_STAT_WRITEBACKS] = HBMPOOL_A_STATS_WRITEBACKS,
		[HBMPOOL_STAT_BYTES_WRITTEN_BACK] = HBMPOOL_A_STATS_BYTES_WRITTEN_BACK,
		[HBMPOOL_STAT_EVICTIONS] = HBMPOOL_A_STATS_EVICTIONS,
		[HBMPOOL_STAT_ERRORS] = HBMPOOL_A_STATS_ERRORS,
		[HBMPOOL_STAT_TIMEOUTS] = HBMPOOL_A_STATS_TIMEOUTS,
		[HBMPOOL_STAT_OVER_BUDGET] = HBMPOOL_A_STATS_OVER_BUDGET,
		[HBMPOOL_STAT_SHRINKER_FREED] = HBMPOOL_A_STATS_SHRINKER_FREED,
	};
	int i;

	for (i = 0; i < HBMPOOL_STAT_LAT0; i++) {
		if (!global && (i == HBMPOOL_STAT_OVER_BUDGET ||
				i == HBMPOOL_STAT_SHRINKER_FREED))
			continue;
		if (nla_put_u64_64bit(msg, attr_of[i], v[i], HBMPOOL_A_STATS_PAD))
			return -EMSGSIZE;
	}
	if (global &&
	    (nla_put_u64_64bit(msg, HBMPOOL_A_STATS_CACHED_PAGES,
			       hbmpool_cache_nr_cached(), HBMPOOL_A_STATS_PAD) ||
	     nla_put_u64_64bit(msg, HBMPOOL_A_STATS_DIRTY_PAGES,
			       hbmpool_cache_nr_dirty(), HBMPOOL_A_STATS_PAD)))
		return -EMSGSIZE;
	for (i = 0; i < HBMPOOL_LAT_BUCKETS; i++)
		if (nla_put_u64_64bit(msg, HBMPOOL_A_STATS_LAT_HIST,
				      v[HBMPOOL_STAT_LAT0 + i], HBMPOOL_A_STATS_PAD))
			return -EMSGSIZE;
	return 0;
}

/*
 * Replies to @info with one message that @fill builds from @obj, reflecting
 * the sequence number it holds the events at.
 */
int hbmpool_nl_reply(struct genl_info *info,
		     int (*fill)(struct sk_buff *msg, void *obj,
				 const struct hbmpool_nl_msg *m),
		     void *obj)
{
	struct hbmpool_nl_msg m = hbmpool_nl_reply_to(info);
	struct sk_buff *msg;
	int err;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	m.evseq = hbmpool_events_hold();
	err = fill(msg, obj, &m);
	hbmpool_events_release();
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

/* ---- params ---- */

static int hbmpool_nl_params_fill(struct sk_buff *msg, void *unused,
				  const struct hbmpool_nl_msg *m)
{
	void *hdr = hbmpool_nl_put_hdr(msg, m);

	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u64_64bit(msg, HBMPOOL_A_PARAMS_CACHE_BUDGET_PAGES,
			      READ_ONCE(hbmpool_cache_budget), HBMPOOL_A_PARAMS_PAD) ||
	    nla_put_u32(msg, HBMPOOL_A_PARAMS_FETCH_TIMEOUT_MS,
			READ_ONCE(hbmpool_fetch_timeout_ms)) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_PARAMS_SEQ, m->evseq,
			      HBMPOOL_A_PARAMS_PAD) ||
	    nla_put_u32(msg, HBMPOOL_A_PARAMS_READAHEAD_MAX_PAGES,
			READ_ONCE(hbmpool_readahead_max)) ||
	    nla_put_u32(msg, HBMPOOL_A_PARAMS_RESYNC_MBPS,
			READ_ONCE(hbmpool_resync_mbps)) ||
	    nla_put_u32(msg, HBMPOOL_A_PARAMS_RESYNC_JOBS,
			READ_ONCE(hbmpool_resync_jobs)) ||
	    nla_put_u32(msg, HBMPOOL_A_PARAMS_FULL_PCT,
			READ_ONCE(hbmpool_place_full_pct)) ||
	    nla_put_u8(msg, HBMPOOL_A_PARAMS_AVOID_DEGRADED,
		       READ_ONCE(hbmpool_place_avoid_degraded))) {
		genlmsg_cancel(msg, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return 0;
}

static int hbmpool_nl_params_get(struct sk_buff *skb, struct genl_info *info)
{
	return hbmpool_nl_reply(info, hbmpool_nl_params_fill, NULL);
}

static int hbmpool_nl_params_set(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **tb = info->attrs;
	struct hbmpool_params_req p = {};
	u64 budget;
	u32 timeout, ra, mbps, jobs, full;
	u8 avoid;

	if (tb[HBMPOOL_A_PARAMS_CACHE_BUDGET_PAGES]) {
		budget = nla_get_u64(tb[HBMPOOL_A_PARAMS_CACHE_BUDGET_PAGES]);
		p.budget = &budget;
	}
	if (tb[HBMPOOL_A_PARAMS_FETCH_TIMEOUT_MS]) {
		timeout = nla_get_u32(tb[HBMPOOL_A_PARAMS_FETCH_TIMEOUT_MS]);
		p.timeout_ms = &timeout;
	}
	if (tb[HBMPOOL_A_PARAMS_READAHEAD_MAX_PAGES]) {
		ra = nla_get_u32(tb[HBMPOOL_A_PARAMS_READAHEAD_MAX_PAGES]);
		p.ra_max = &ra;
	}
	if (tb[HBMPOOL_A_PARAMS_RESYNC_MBPS]) {
		mbps = nla_get_u32(tb[HBMPOOL_A_PARAMS_RESYNC_MBPS]);
		p.resync_mbps = &mbps;
	}
	if (tb[HBMPOOL_A_PARAMS_RESYNC_JOBS]) {
		jobs = nla_get_u32(tb[HBMPOOL_A_PARAMS_RESYNC_JOBS]);
		p.resync_jobs = &jobs;
	}
	if (tb[HBMPOOL_A_PARAMS_FULL_PCT]) {
		full = nla_get_u32(tb[HBMPOOL_A_PARAMS_FULL_PCT]);
		p.full_pct = &full;
	}
	if (tb[HBMPOOL_A_PARAMS_AVOID_DEGRADED]) {
		avoid = nla_get_u8(tb[HBMPOOL_A_PARAMS_AVOID_DEGRADED]);
		p.avoid_degraded = &avoid;
	}
	return hbmpool_params_set(&p, info->extack);
}

/* ---- global counters ---- */

static int hbmpool_nl_stats_fill(struct sk_buff *msg, void *unused,
				 const struct hbmpool_nl_msg *m)
{
	void *hdr;
	u64 *v;
	int err = -ENOMEM;

	v = kmalloc_array(HBMPOOL_NR_STATS, sizeof(*v), GFP_KERNEL);
	if (!v)
		return err;
	hbmpool_counters_read(&hbmpool_global_stats, v);
	err = -EMSGSIZE;
	hdr = hbmpool_nl_put_hdr(msg, m);
	if (hdr) {
		err = hbmpool_nl_put_stats(msg, v, true);
		if (err)
			genlmsg_cancel(msg, hdr);
		else
			genlmsg_end(msg, hdr);
	}
	kfree(v);
	return err;
}

static int hbmpool_nl_stats_get(struct sk_buff *skb, struct genl_info *info)
{
	return hbmpool_nl_reply(info, hbmpool_nl_stats_fill, NULL);
}

/* ---- the domain ---- */

/* Under hbmpool_events_hold(): the generation must match m->evseq. */
static int hbmpool_nl_domain_fill(struct sk_buff *msg, void *unused,
				  const struct hbmpool_nl_msg *m)
{
	char name[HBMPOOL_NAME_LEN];
	void *hdr = hbmpool_nl_put_hdr(msg, m);

	if (!hdr)
		return -EMSGSIZE;
	hbmpool_domain_name(name);
	if (nla_put_string(msg, HBMPOOL_A_DOMAIN_NAME, name) ||
	    nla_put_u32(msg, HBMPOOL_A_DOMAIN_SELF_ID, READ_ONCE(hbmpool_self_id)) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_DOMAIN_GENERATION,
			      hbmpool_domain_generation(), HBMPOOL_A_DOMAIN_PAD) ||
	    nla_put_u32(msg, HBMPOOL_A_DOMAIN_NR_NODES, hbmpool_nr_nodes()) ||
	    nla_put_u32(msg, HBMPOOL_A_DOMAIN_MAX_NODES, HBMPOOL_MAX_NODES) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_DOMAIN_SEQ, m->evseq,
			      HBMPOOL_A_DOMAIN_PAD) ||
	    (hbmpool_domain_key_set() && nla_put_flag(msg, HBMPOOL_A_DOMAIN_KEY_SET)) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_DOMAIN_EPOCH, hbmpool_domain_epoch_get(),
			      HBMPOOL_A_DOMAIN_PAD) ||
	    (hbmpool_export_is_fenced() && nla_put_flag(msg, HBMPOOL_A_DOMAIN_FENCED))) {
		genlmsg_cancel(msg, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return 0;
}

static int hbmpool_nl_domain_get(struct sk_buff *skb, struct genl_info *info)
{
	return hbmpool_nl_reply(info, hbmpool_nl_domain_fill, NULL);
}

static int hbmpool_nl_domain_set(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **tb = info->attrs;
	u32 self;

	struct nlattr *key = tb[HBMPOOL_A_DOMAIN_KEY];
	bool named = tb[HBMPOOL_A_DOMAIN_NAME] || tb[HBMPOOL_A_DOMAIN_SELF_ID] || key;
	int err = 0;

	if (!named && !tb[HBMPOOL_A_DOMAIN_EPOCH] && !tb[HBMPOOL_A_DOMAIN_FENCED]) {
		NL_SET_ERR_MSG(info->extack, "nothing to set: name, self-id, key, epoch or fenced");
		return -EINVAL;
	}
	if (tb[HBMPOOL_A_DOMAIN_SELF_ID])
		self = nla_get_u32(tb[HBMPOOL_A_DOMAIN_SELF_ID]);
	if (named)
		err = hbmpool_domain_set(tb[HBMPOOL_A_DOMAIN_NAME] ?
					 nla_data(tb[HBMPOOL_A_DOMAIN_NAME]) : NULL,
					 tb[HBMPOOL_A_DOMAIN_SELF_ID] ? &self : NULL,
					 key ? nla_data(key) : NULL, key ? nla_len(key) : 0,
					 info->extack);
	if (!err && tb[HBMPOOL_A_DOMAIN_EPOCH])
		err = hbmpool_domain_epoch_set(nla_get_u64(tb[HBMPOOL_A_DOMAIN_EPOCH]),
					       info->extack);
	if (!err && tb[HBMPOOL_A_DOMAIN_FENCED])
		err = hbmpool_export_fence();
	return err;
}

/* ---- the segment this node exports ---- */

static int hbmpool_nl_segment_fill(struct sk_buff *msg, void *unused,
				   const struct hbmpool_nl_msg *m)
{
	void *hdr = hbmpool_nl_put_hdr(msg, m);
	struct hbmpool_tcp_home_stats st;
	char device[HBMPOOL_NL_DEVICE_MAX + 1];
	u64 size, used, incarnation;
	const char *provider;

	if (!hdr)
		return -EMSGSIZE;
	hbmpool_export_info(&size, &provider, &used, &incarnation, device);
	hbmpool_tcp_home_stats(&st);
	if (nla_put_u64_64bit(msg, HBMPOOL_A_SEGMENT_SIZE, size, HBMPOOL_A_SEGMENT_PAD) ||
	    nla_put_string(msg, HBMPOOL_A_SEGMENT_PROVIDER, provider) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_SEGMENT_USED, used, HBMPOOL_A_SEGMENT_PAD) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_SEGMENT_SEQ, m->evseq,
			      HBMPOOL_A_SEGMENT_PAD) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_SEGMENT_INCARNATION, incarnation,
			      HBMPOOL_A_SEGMENT_PAD) ||
	    nla_put_u32(msg, HBMPOOL_A_SEGMENT_SESSIONS, st.sessions) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_SEGMENT_ACCEPTED, st.accepted,
			      HBMPOOL_A_SEGMENT_PAD) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_SEGMENT_AUTH_FAILURES, st.auth_failures,
			      HBMPOOL_A_SEGMENT_PAD) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_SEGMENT_REJECTED, st.rejected,
			      HBMPOOL_A_SEGMENT_PAD) ||
	    (device[0] && nla_put_string(msg, HBMPOOL_A_SEGMENT_DEVICE, device))) {
		genlmsg_cancel(msg, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return 0;
}

static int hbmpool_nl_segment_get(struct sk_buff *skb, struct genl_info *info)
{
	return hbmpool_nl_reply(info, hbmpool_nl_segment_fill, NULL);
}

static int hbmpool_nl_segment_new(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **tb = info->attrs;

	if (GENL_REQ_ATTR_CHECK(info, HBMPOOL_A_SEGMENT_SIZE))
		return -EINVAL;
	return hbmpool_export_new(nla_get_u64(tb[HBMPOOL_A_SEGMENT_SIZE]),
				  tb[HBMPOOL_A_SEGMENT_PROVIDER] ?
				  nla_data(tb[HBMPOOL_A_SEGMENT_PROVIDER]) : "ram",
				  tb[HBMPOOL_A_SEGMENT_DEVICE] ?
				  nla_data(tb[HBMPOOL_A_SEGMENT_DEVICE]) : "",
				  info->extack);
}

static int hbmpool_nl_segment_del(struct sk_buff *skb, struct genl_info *info)
{
	return hbmpool_export_del(info->extack);
}

/* ---- the monitor group: called by events.c, under its lock ---- */

static bool hbmpool_nl_listened(void)
{
	return hbmpool_nl_ready &&
	       genl_has_listeners(&hbmpool_genl, &init_net, HBMPOOL_MCGRP_MONITOR_IDX);
}

static int hbmpool_nl_node_fill_obj(struct sk_buff *msg, void *obj,
				    const struct hbmpool_nl_msg *m)
{
	return hbmpool_nl_node_fill(msg, obj, m);
}

static int hbmpool_nl_link_fill_obj(struct sk_buff *msg, void *obj,
				    const struct hbmpool_nl_msg *m)
{
	return hbmpool_nl_link_fill(msg, obj, m);
}

static int hbmpool_nl_region_fill_obj(struct sk_buff *msg, void *obj,
				      const struct hbmpool_nl_msg *m)
{
	return hbmpool_nl_region_fill(msg, obj, m, NULL);
}

/*
 * Announces event @seq about @obj to the monitor group.  A lost event
 * shows to listeners as a gap in the sequence numbers: they dump again.
 */
void hbmpool_nl_notify(enum hbmpool_event ev, void *obj, u64 seq)
{
	static const struct {
		u8 cmd;
		int (*fill)(struct sk_buff *msg, void *obj,
			    const struct hbmpool_nl_msg *m);
	} event[HBMPOOL_NR_EVENTS] = {
		[HBMPOOL_EVENT_NODE_ADD] = { HBMPOOL_CMD_NODE_ADD_NTF, hbmpool_nl_node_fill_obj },
		[HBMPOOL_EVENT_NODE_DEL] = { HBMPOOL_CMD_NODE_DEL_NTF, hbmpool_nl_node_fill_obj },
		[HBMPOOL_EVENT_NODE_CHANGE] = { HBMPOOL_CMD_NODE_CHANGE_NTF,
						hbmpool_nl_node_fill_obj },
		[HBMPOOL_EVENT_LINK_CHANGE] = { HBMPOOL_CMD_LINK_CHANGE_NTF,
						hbmpool_nl_link_fill_obj },
		[HBMPOOL_EVENT_REGION_NEW] = { HBMPOOL_CMD_REGION_NEW_NTF,
					       hbmpool_nl_region_fill_obj },
		[HBMPOOL_EVENT_REGION_DEL] = { HBMPOOL_CMD_REGION_DEL_NTF,
					       hbmpool_nl_region_fill_obj },
		[HBMPOOL_EVENT_SEGMENT_CHANGE] = { HBMPOOL_CMD_SEGMENT_CHANGE_NTF,
						   hbmpool_nl_segment_fill },
		[HBMPOOL_EVENT_PARAMS_CHANGE] = { HBMPOOL_CMD_PARAMS_CHANGE_NTF,
						  hbmpool_nl_params_fill },
		[HBMPOOL_EVENT_DOMAIN_CHANGE] = { HBMPOOL_CMD_DOMAIN_CHANGE_NTF,
						  hbmpool_nl_domain_fill },
		[HBMPOOL_EVENT_RESYNC_CHANGE] = { HBMPOOL_CMD_RESYNC_CHANGE_NTF,
						  hbmpool_nl_resync_fill },
		[HBMPOOL_EVENT_REGION_CHANGE] = { HBMPOOL_CMD_REGION_CHANGE_NTF,
						  hbmpool_nl_region_fill_obj },
	};
	struct hbmpool_nl_msg m = { .cmd = event[ev].cmd, .evseq = seq };
	size_t size = NLMSG_GOODSIZE;
	struct sk_buff *msg;
	int err = -ENOMEM;

	if (!hbmpool_nl_listened())
		return;
	if (ev == HBMPOOL_EVENT_REGION_NEW || ev == HBMPOOL_EVENT_REGION_DEL ||
	    ev == HBMPOOL_EVENT_REGION_CHANGE)
		size = hbmpool_nl_region_event_size(obj);
	msg = genlmsg_new(size, GFP_KERNEL);
	if (msg)
		err = event[ev].fill(msg, obj, &m);
	if (err) {
		nlmsg_free(msg);
		pr_warn_ratelimited("event %llu lost: %d\n", seq, err);
		return;
	}
	genlmsg_multicast(&hbmpool_genl, msg, 0, HBMPOOL_MCGRP_MONITOR_IDX,
			  GFP_KERNEL);
}

/* ---- the family ---- */

static const struct genl_ops hbmpool_genl_ops[] = {
	{
		.cmd = HBMPOOL_CMD_PARAMS_GET,
		.doit = hbmpool_nl_params_get,
	},
	{
		.cmd = HBMPOOL_CMD_PARAMS_SET,
		.doit = hbmpool_nl_params_set,
		.policy = hbmpool_params_set_policy,
		.maxattr = ARRAY_SIZE(hbmpool_params_set_policy) - 1,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = HBMPOOL_CMD_STATS_GET,
		.doit = hbmpool_nl_stats_get,
	},
	{
		.cmd = HBMPOOL_CMD_NODE_GET,
		.doit = hbmpool_nl_node_get,
		.dumpit = hbmpool_nl_node_dump,
		.policy = hbmpool_node_id_policy,
		.maxattr = ARRAY_SIZE(hbmpool_node_id_policy) - 1,
	},
	{
		.cmd = HBMPOOL_CMD_NODE_NEW,
		.doit = hbmpool_nl_node_new,
		.policy = hbmpool_node_new_policy,
		.maxattr = ARRAY_SIZE(hbmpool_node_new_policy) - 1,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = HBMPOOL_CMD_NODE_DEL,
		.doit = hbmpool_nl_node_del,
		.policy = hbmpool_node_id_policy,
		.maxattr = ARRAY_SIZE(hbmpool_node_id_policy) - 1,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = HBMPOOL_CMD_DOMAIN_GET,
		.doit = hbmpool_nl_domain_get,
	},
	{
		.cmd = HBMPOOL_CMD_DOMAIN_SET,
		.doit = hbmpool_nl_domain_set,
		.policy = hbmpool_domain_set_policy,
		.maxattr = ARRAY_SIZE(hbmpool_domain_set_policy) - 1,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = HBMPOOL_CMD_NODE_SET,
		.doit = hbmpool_nl_node_set,
		.policy = hbmpool_node_set_policy,
		.maxattr = ARRAY_SIZE(hbmpool_node_set_policy) - 1,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = HBMPOOL_CMD_LINK_GET,
		.doit = hbmpool_nl_link_get,
		.dumpit = hbmpool_nl_link_dump,
		.policy = hbmpool_link_get_policy,
		.maxattr = ARRAY_SIZE(hbmpool_link_get_policy) - 1,
	},
	{
		.cmd = HBMPOOL_CMD_LINK_SET,
		.doit = hbmpool_nl_link_set,
		.policy = hbmpool_link_set_policy,
		.maxattr = ARRAY_SIZE(hbmpool_link_set_policy) - 1,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = HBMPOOL_CMD_SEGMENT_GET,
		.doit = hbmpool_nl_segment_get,
	},
	{
		.cmd = HBMPOOL_CMD_SEGMENT_NEW,
		.doit = hbmpool_nl_segment_new,
		.policy = hbmpool_segment_new_policy,
		.maxattr = ARRAY_SIZE(hbmpool_segment_new_policy) - 1,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = HBMPOOL_CMD_SEGMENT_DEL,
		.doit = hbmpool_nl_segment_del,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = HBMPOOL_CMD_REGION_GET,
		.doit = hbmpool_nl_region_get,
		.start = hbmpool_nl_region_dump_start,
		.dumpit = hbmpool_nl_region_dump,
		.policy = hbmpool_region_get_policy,
		.maxattr = ARRAY_SIZE(hbmpool_region_get_policy) - 1,
	},
	{
		.cmd = HBMPOOL_CMD_RESYNC_NEW,
		.doit = hbmpool_nl_resync_new,
		.policy = hbmpool_resync_new_policy,
		.maxattr = ARRAY_SIZE(hbmpool_resync_new_policy) - 1,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = HBMPOOL_CMD_RESYNC_GET,
		.doit = hbmpool_nl_resync_get,
		.dumpit = hbmpool_nl_resync_dump,
		.policy = hbmpool_resync_id_policy,
		.maxattr = ARRAY_SIZE(hbmpool_resync_id_policy) - 1,
	},
	{
		.cmd = HBMPOOL_CMD_RESYNC_DEL,
		.doit = hbmpool_nl_resync_del,
		.policy = hbmpool_resync_id_policy,
		.maxattr = ARRAY_SIZE(hbmpool_resync_id_policy) - 1,
		.flags = GENL_ADMIN_PERM,
	},
};

struct genl_family hbmpool_genl __ro_after_init = {
	.name = HBMPOOL_FAMILY_NAME,
	.version = HBMPOOL_FAMILY_VERSION,
	.netnsok = false,
	.module = THIS_MODULE,
	.ops = hbmpool_genl_ops,
	.n_ops = ARRAY_SIZE(hbmpool_genl_ops),
	.mcgrps = hbmpool_mcgrps,
	.n_mcgrps = ARRAY_SIZE(hbmpool_mcgrps),
	.resv_start_op = HBMPOOL_CMD_PARAMS_GET,	/* every op validates strictly */
	/*
	 * The module serialises itself (its own locks): a segment-new that
	 * reserves gigabytes must not hold every generic netlink family up.
	 */
	.parallel_ops = true,
};

int hbmpool_netlink_init(void)
{
	int err = genl_register_family(&hbmpool_genl);

	if (err)
		return err;
	hbmpool_events_hold();
	hbmpool_nl_ready = true;
	hbmpool_events_release();
	return 0;
}

void hbmpool_netlink_exit(void)
{
	hbmpool_events_hold();
	hbmpool_nl_ready = false;
	hbmpool_events_release();
	genl_unregister_family(&hbmpool_genl);
}
