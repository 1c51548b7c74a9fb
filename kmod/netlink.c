// SPDX-License-Identifier: GPL-2.0
/*
 * The hbmpool generic netlink family, as Documentation/netlink/specs/
 * hbmpool.yaml specifies it (uapi/linux/hbmpool_nl.h): parameters, global
 * counters and nodes, and the monitor group, which announces every event
 * of events.c.  The handlers validate strictly (the policies below
 * mirror the spec's checks), report every rejection through extack, and
 * call the core's operations, which sysfs calls too.  Tables are written
 * for 6.1: struct genl_ops with a policy each, no split ops.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <net/genetlink.h>
#include <linux/hbmpool_nl.h>

#include "hbmpool.h"

static struct genl_family hbmpool_genl;

/* Set while the family is registered; under the events lock (events.c). */
static bool hbmpool_nl_ready;

enum {
	HBMPOOL_MCGRP_MONITOR_IDX,
};

static const struct genl_multicast_group hbmpool_mcgrps[] = {
	[HBMPOOL_MCGRP_MONITOR_IDX] = { .name = HBMPOOL_MCGRP_MONITOR },
};

/* The kernel's states and link types are the ABI's, value for value. */
static_assert((int)HBMPOOL_NODE_LIVE == (int)HBMPOOL_NODE_STATE_LIVE);
static_assert((int)HBMPOOL_NODE_UNREACHABLE == (int)HBMPOOL_NODE_STATE_UNREACHABLE);
static_assert((int)HBMPOOL_NODE_FENCED == (int)HBMPOOL_NODE_STATE_FENCED);
static_assert((int)HBMPOOL_NODE_REMOVED == (int)HBMPOOL_NODE_STATE_REMOVED);
static_assert((int)HBMPOOL_LINK_LOCAL == (int)HBMPOOL_LINK_TYPE_LOCAL);
static_assert((int)HBMPOOL_LINK_SCALEUP == (int)HBMPOOL_LINK_TYPE_SCALEUP);
static_assert((int)HBMPOOL_LINK_SCALEOUT == (int)HBMPOOL_LINK_TYPE_SCALEOUT);
static_assert((int)HBMPOOL_LINK_SCALEACROSS == (int)HBMPOOL_LINK_TYPE_SCALEACROSS);

/* ---- policies ---- */

static struct netlink_range_validation hbmpool_budget_range = {
	.min = HBMPOOL_BUDGET_MIN,
	.max = HBMPOOL_BUDGET_MAX,
};

static struct netlink_range_validation hbmpool_timeout_range = {
	.min = HBMPOOL_TIMEOUT_MIN,
	.max = HBMPOOL_TIMEOUT_MAX,
};

static const struct nla_policy hbmpool_params_set_policy[HBMPOOL_A_PARAMS_FETCH_TIMEOUT_MS + 1] = {
	[HBMPOOL_A_PARAMS_CACHE_BUDGET_PAGES] =
		NLA_POLICY_FULL_RANGE(NLA_U64, &hbmpool_budget_range),
	[HBMPOOL_A_PARAMS_FETCH_TIMEOUT_MS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &hbmpool_timeout_range),
};

static const struct nla_policy hbmpool_node_get_policy[HBMPOOL_A_NODE_ID + 1] = {
	[HBMPOOL_A_NODE_ID] = NLA_POLICY_MAX(NLA_U32, HBMPOOL_MAX_NODES - 1),
};

static struct netlink_range_validation hbmpool_capacity_range = {
	.min = PAGE_SIZE,
	.max = 64ULL << 30,
};

/* node-new: STATE (5) is left unspecified, which strict validation refuses */
static const struct nla_policy hbmpool_node_new_policy[HBMPOOL_A_NODE_CAPACITY + 1] = {
	[HBMPOOL_A_NODE_ID] = NLA_POLICY_MAX(NLA_U32, HBMPOOL_MAX_NODES - 1),
	[HBMPOOL_A_NODE_TRANSPORT] = { .type = NLA_NUL_STRING, .len = 15 },
	[HBMPOOL_A_NODE_DISTANCE] = NLA_POLICY_RANGE(NLA_U32, HBMPOOL_DISTANCE_LOCAL + 1,
						     HBMPOOL_DISTANCE_MAX),
	[HBMPOOL_A_NODE_LINK_TYPE] = NLA_POLICY_RANGE(NLA_U32, HBMPOOL_LINK_SCALEUP,
						      HBMPOOL_LINK_SCALEACROSS),
	[HBMPOOL_A_NODE_CAPACITY] = NLA_POLICY_FULL_RANGE(NLA_U64, &hbmpool_capacity_range),
};

/* ---- params ---- */

static int hbmpool_nl_params_fill(struct sk_buff *msg, u32 portid, u32 seq,
				  u8 cmd, u64 evseq)
{
	void *hdr;

	hdr = genlmsg_put(msg, portid, seq, &hbmpool_genl, 0, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u64_64bit(msg, HBMPOOL_A_PARAMS_CACHE_BUDGET_PAGES,
			      READ_ONCE(hbmpool_cache_budget), HBMPOOL_A_PARAMS_PAD) ||
	    nla_put_u32(msg, HBMPOOL_A_PARAMS_FETCH_TIMEOUT_MS,
			READ_ONCE(hbmpool_fetch_timeout_ms)) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_PARAMS_SEQ, evseq,
			      HBMPOOL_A_PARAMS_PAD)) {
		genlmsg_cancel(msg, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return 0;
}

static int hbmpool_nl_params_get(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	int err;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	err = hbmpool_nl_params_fill(msg, info->snd_portid, info->snd_seq,
				     HBMPOOL_CMD_PARAMS_GET, hbmpool_events_hold());
	hbmpool_events_release();
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

static int hbmpool_nl_params_set(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **tb = info->attrs;
	int err;

	if (!tb[HBMPOOL_A_PARAMS_CACHE_BUDGET_PAGES] &&
	    !tb[HBMPOOL_A_PARAMS_FETCH_TIMEOUT_MS]) {
		NL_SET_ERR_MSG(info->extack, "no parameter to set");
		return -EINVAL;
	}
	err = hbmpool_ctl_begin();
	if (err) {
		NL_SET_ERR_MSG(info->extack, "the module is being unloaded");
		return err;
	}
	if (tb[HBMPOOL_A_PARAMS_CACHE_BUDGET_PAGES]) {
		WRITE_ONCE(hbmpool_cache_budget,
			   nla_get_u64(tb[HBMPOOL_A_PARAMS_CACHE_BUDGET_PAGES]));
		hbmpool_cache_budget_changed();
	}
	if (tb[HBMPOOL_A_PARAMS_FETCH_TIMEOUT_MS])
		WRITE_ONCE(hbmpool_fetch_timeout_ms,
			   nla_get_u32(tb[HBMPOOL_A_PARAMS_FETCH_TIMEOUT_MS]));
	hbmpool_event_params();
	hbmpool_ctl_end();
	return 0;
}

static int hbmpool_nl_node_new(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **tb = info->attrs;
	const char *transport = "sim";

	if (GENL_REQ_ATTR_CHECK(info, HBMPOOL_A_NODE_ID) ||
	    GENL_REQ_ATTR_CHECK(info, HBMPOOL_A_NODE_CAPACITY) ||
	    GENL_REQ_ATTR_CHECK(info, HBMPOOL_A_NODE_DISTANCE))
		return -EINVAL;
	if (tb[HBMPOOL_A_NODE_TRANSPORT])
		transport = nla_data(tb[HBMPOOL_A_NODE_TRANSPORT]);
	return hbmpool_node_create(nla_get_u32(tb[HBMPOOL_A_NODE_ID]), transport,
				   nla_get_u64(tb[HBMPOOL_A_NODE_CAPACITY]),
				   nla_get_u32(tb[HBMPOOL_A_NODE_DISTANCE]),
				   tb[HBMPOOL_A_NODE_LINK_TYPE] ?
				   nla_get_u32(tb[HBMPOOL_A_NODE_LINK_TYPE]) :
				   HBMPOOL_LINK_SCALEUP,
				   info->extack);
}

static int hbmpool_nl_node_del(struct sk_buff *skb, struct genl_info *info)
{
	if (GENL_REQ_ATTR_CHECK(info, HBMPOOL_A_NODE_ID))
		return -EINVAL;
	return hbmpool_node_delete(nla_get_u32(info->attrs[HBMPOOL_A_NODE_ID]),
				   info->extack);
}

/* ---- counters ---- */

/* The counters of @c; @global adds the ones only the module has. */
static int hbmpool_nl_put_stats(struct sk_buff *msg, struct hbmpool_counters *c,
				bool global)
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
	u64 *v;
	int i, err = -EMSGSIZE;

	v = kmalloc_array(HBMPOOL_NR_STATS, sizeof(*v), GFP_KERNEL);
	if (!v)
		return -ENOMEM;
	hbmpool_counters_read(c, v);
	for (i = 0; i < HBMPOOL_STAT_LAT0; i++) {
		if (!global && (i == HBMPOOL_STAT_OVER_BUDGET ||
				i == HBMPOOL_STAT_SHRINKER_FREED))
			continue;
		if (nla_put_u64_64bit(msg, attr_of[i], v[i], HBMPOOL_A_STATS_PAD))
			goto out;
	}
	if (global &&
	    (nla_put_u64_64bit(msg, HBMPOOL_A_STATS_CACHED_PAGES,
			       hbmpool_cache_nr_cached(), HBMPOOL_A_STATS_PAD) ||
	     nla_put_u64_64bit(msg, HBMPOOL_A_STATS_DIRTY_PAGES,
			       hbmpool_cache_nr_dirty(), HBMPOOL_A_STATS_PAD)))
		goto out;
	for (i = 0; i < HBMPOOL_LAT_BUCKETS; i++)
		if (nla_put_u64_64bit(msg, HBMPOOL_A_STATS_LAT_HIST,
				      v[HBMPOOL_STAT_LAT0 + i], HBMPOOL_A_STATS_PAD))
			goto out;
	err = 0;
out:
	kfree(v);
	return err;
}

static int hbmpool_nl_stats_get(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;
	int err;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &hbmpool_genl, 0, info->genlhdr->cmd);
	err = hdr ? hbmpool_nl_put_stats(msg, &hbmpool_global_stats, true) : -EMSGSIZE;
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/* ---- nodes ---- */

static int hbmpool_nl_node_fill(struct sk_buff *msg, struct hbmpool_node *node,
				u32 portid, u32 seq, int flags, u8 cmd,
				u64 evseq, struct netlink_callback *cb)
{
	struct nlattr *nest;
	void *hdr;
	int err;

	hdr = genlmsg_put(msg, portid, seq, &hbmpool_genl, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (cb)
		genl_dump_check_consistent(cb, hdr);
	if (nla_put_u32(msg, HBMPOOL_A_NODE_ID, node->id) ||
	    nla_put_string(msg, HBMPOOL_A_NODE_TRANSPORT,
			   node->transport ? node->transport->name : "local") ||
	    nla_put_u32(msg, HBMPOOL_A_NODE_DISTANCE, node->distance) ||
	    nla_put_u32(msg, HBMPOOL_A_NODE_LINK_TYPE, node->link) ||
	    nla_put_u32(msg, HBMPOOL_A_NODE_STATE, READ_ONCE(node->state)) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_NODE_CAPACITY,
			      hbmpool_node_capacity(node), HBMPOOL_A_NODE_PAD) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_NODE_FREE, hbmpool_node_free(node),
			      HBMPOOL_A_NODE_PAD) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_NODE_SEQ, evseq, HBMPOOL_A_NODE_PAD))
		goto err_cancel;
	nest = nla_nest_start(msg, HBMPOOL_A_NODE_STATS);
	if (!nest)
		goto err_cancel;
	err = hbmpool_nl_put_stats(msg, &node->stats, false);
	if (err) {
		genlmsg_cancel(msg, hdr);
		return err;
	}
	nla_nest_end(msg, nest);
	genlmsg_end(msg, hdr);
	return 0;

err_cancel:
	genlmsg_cancel(msg, hdr);
	return -EMSGSIZE;
}

static int hbmpool_nl_node_get(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *attr = info->attrs[HBMPOOL_A_NODE_ID];
	struct hbmpool_node *node;
	unsigned long id;
	struct sk_buff *msg;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, HBMPOOL_A_NODE_ID))
		return -EINVAL;
	id = nla_get_u32(attr);
	node = hbmpool_node_get_next(&id);
	if (node && node->id != nla_get_u32(attr)) {
		hbmpool_node_put(node);
		node = NULL;
	}
	if (!node) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "no such node");
		return -ENODEV;
	}
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (msg) {
		err = hbmpool_nl_node_fill(msg, node, info->snd_portid,
					   info->snd_seq, 0, HBMPOOL_CMD_NODE_GET,
					   hbmpool_events_hold(), NULL);
		hbmpool_events_release();
	} else {
		err = -ENOMEM;
	}
	hbmpool_node_put(node);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

/* Resumable: cb->args[0] is the next id to look at. */
static int hbmpool_nl_node_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	unsigned long id = cb->args[0];
	struct hbmpool_node *node;
	int err = 0;

	while ((node = hbmpool_node_get_next(&id))) {
		u64 evseq = hbmpool_events_hold();

		/* a change between two parts of the dump flags it interrupted */
		cb->seq = (u32)evseq;
		err = hbmpool_nl_node_fill(skb, node, NETLINK_CB(cb->skb).portid,
					   cb->nlh->nlmsg_seq, NLM_F_MULTI,
					   HBMPOOL_CMD_NODE_GET, evseq, cb);
		hbmpool_events_release();
		hbmpool_node_put(node);
		if (err)
			break;
		id++;
	}
	cb->args[0] = id;
	/* a full message ends this part of the dump; the next one resumes */
	if (err == -EMSGSIZE && skb->len)
		return skb->len;
	return err ?: skb->len;
}

/* ---- the monitor group: called by events.c, under its lock ---- */

static bool hbmpool_nl_listened(void)
{
	return hbmpool_nl_ready &&
	       genl_has_listeners(&hbmpool_genl, &init_net, HBMPOOL_MCGRP_MONITOR_IDX);
}

/*
 * Announces event @seq to the monitor group: @node's attributes, or the
 * parameters if @node is NULL.  A lost event shows to listeners as a gap in
 * the sequence numbers: they dump again.
 */
static void hbmpool_nl_event(struct hbmpool_node *node, u8 cmd, u64 seq)
{
	struct sk_buff *msg;
	int err = -ENOMEM;

	if (!hbmpool_nl_listened())
		return;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (msg)
		err = node ? hbmpool_nl_node_fill(msg, node, 0, 0, 0, cmd, seq, NULL) :
			     hbmpool_nl_params_fill(msg, 0, 0, cmd, seq);
	if (err) {
		nlmsg_free(msg);
		pr_warn_ratelimited("event %llu lost: %d\n", seq, err);
		return;
	}
	genlmsg_multicast(&hbmpool_genl, msg, 0, HBMPOOL_MCGRP_MONITOR_IDX,
			  GFP_KERNEL);
}

void hbmpool_nl_notify_node(struct hbmpool_node *node, enum hbmpool_event ev,
			    u64 seq)
{
	static const u8 cmd_of[] = {
		[HBMPOOL_EVENT_NODE_ADD] = HBMPOOL_CMD_NODE_ADD_NTF,
		[HBMPOOL_EVENT_NODE_DEL] = HBMPOOL_CMD_NODE_DEL_NTF,
		[HBMPOOL_EVENT_NODE_CHANGE] = HBMPOOL_CMD_NODE_CHANGE_NTF,
	};

	hbmpool_nl_event(node, cmd_of[ev], seq);
}

void hbmpool_nl_notify_params(u64 seq)
{
	hbmpool_nl_event(NULL, HBMPOOL_CMD_PARAMS_CHANGE_NTF, seq);
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
		.policy = hbmpool_node_get_policy,
		.maxattr = ARRAY_SIZE(hbmpool_node_get_policy) - 1,
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
		.policy = hbmpool_node_get_policy,
		.maxattr = ARRAY_SIZE(hbmpool_node_get_policy) - 1,
		.flags = GENL_ADMIN_PERM,
	},
};

static struct genl_family hbmpool_genl __ro_after_init = {
	.name = HBMPOOL_FAMILY_NAME,
	.version = HBMPOOL_FAMILY_VERSION,
	.netnsok = false,
	.module = THIS_MODULE,
	.ops = hbmpool_genl_ops,
	.n_ops = ARRAY_SIZE(hbmpool_genl_ops),
	.mcgrps = hbmpool_mcgrps,
	.n_mcgrps = ARRAY_SIZE(hbmpool_mcgrps),
	.resv_start_op = HBMPOOL_CMD_PARAMS_GET,	/* every op validates strictly */
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
