// SPDX-License-Identifier: GPL-2.0
/*
 * The netlink family's nodes and links: node-get/new/del/set and
 * link-get/set.  A link is this node's view of another node: its admin
 * state (set by the operator), its operational state (the transport's
 * reach and the admin state), and the counters of the requests it carried.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "netlink.h"
#include "shm.h"

/* ---- nodes ---- */

int hbmpool_nl_node_fill(struct sk_buff *msg, struct hbmpool_node *node,
			 const struct hbmpool_nl_msg *m)
{
	struct hbmpool_node_conf conf;
	struct nlattr *nest;
	void *hdr;
	u64 *v;
	int err = -ENOMEM;

	v = kmalloc_array(HBMPOOL_NR_STATS, sizeof(*v), GFP_KERNEL);
	if (!v)
		return err;
	hbmpool_counters_read(&node->stats, v);
	hbmpool_node_conf_read(node, &conf);
	err = -EMSGSIZE;
	hdr = hbmpool_nl_put_hdr(msg, m);
	if (!hdr)
		goto out;
	if (nla_put_u32(msg, HBMPOOL_A_NODE_ID, node->id) ||
	    nla_put_string(msg, HBMPOOL_A_NODE_TRANSPORT,
			   node->transport ? node->transport->name : "local") ||
	    nla_put_u32(msg, HBMPOOL_A_NODE_DISTANCE, conf.distance) ||
	    nla_put_u32(msg, HBMPOOL_A_NODE_LINK_TYPE, conf.link) ||
	    nla_put_u32(msg, HBMPOOL_A_NODE_STATE, READ_ONCE(node->state)) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_NODE_CAPACITY,
			      hbmpool_node_capacity(node), HBMPOOL_A_NODE_PAD) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_NODE_FREE, hbmpool_node_free(node),
			      HBMPOOL_A_NODE_PAD) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_NODE_SEQ, m->evseq, HBMPOOL_A_NODE_PAD) ||
	    nla_put_string(msg, HBMPOOL_A_NODE_NAME, conf.name) ||
	    (conf.addr_len &&
	     nla_put(msg, HBMPOOL_A_NODE_ADDR, conf.addr_len, conf.addr)) ||
	    (conf.port && nla_put_u16(msg, HBMPOOL_A_NODE_PORT, conf.port)) ||
	    (!node->transport && nla_put_flag(msg, HBMPOOL_A_NODE_SELF)) ||
	    nla_put_u32(msg, HBMPOOL_A_NODE_WEIGHT, conf.weight) ||
	    nla_put_u8(msg, HBMPOOL_A_NODE_DRAINING, conf.draining) ||
	    nla_put_u32(msg, HBMPOOL_A_NODE_FAILURE_DOMAIN, conf.failure_domain) ||
	    nla_put_u32(msg, HBMPOOL_A_NODE_EFFECTIVE_WEIGHT,
			hbmpool_node_weight(node, &conf)) ||
	    (m->has_chunks && nla_put_u32(msg, HBMPOOL_A_NODE_CHUNKS, m->chunks)) ||
	    (conf.device[0] && nla_put_string(msg, HBMPOOL_A_NODE_DEVICE, conf.device)))
		goto err_cancel;
	nest = nla_nest_start(msg, HBMPOOL_A_NODE_STATS);
	if (!nest || hbmpool_nl_put_stats(msg, v, false))
		goto err_cancel;
	nla_nest_end(msg, nest);
	genlmsg_end(msg, hdr);
	err = 0;
	goto out;

err_cancel:
	genlmsg_cancel(msg, hdr);
out:
	kfree(v);
	return err;
}

/* A reference to node @id, or NULL with the extack set on @attr. */
static struct hbmpool_node *hbmpool_nl_node_lookup(struct nlattr *attr,
						   struct netlink_ext_ack *extack)
{
	unsigned long id = nla_get_u32(attr);
	struct hbmpool_node *node = hbmpool_node_get_next(&id);

	if (node && node->id != nla_get_u32(attr)) {
		hbmpool_node_put(node);
		node = NULL;
	}
	if (!node)
		NL_SET_ERR_MSG_ATTR(extack, attr, "no such node");
	return node;
}

typedef int (*hbmpool_nl_node_filler)(struct sk_buff *msg,
				      struct hbmpool_node *node,
				      const struct hbmpool_nl_msg *m);

/* A do of node-get or link-get: one message about the node @attr names. */
static int hbmpool_nl_node_reply(struct genl_info *info, struct nlattr *attr,
				 hbmpool_nl_node_filler fill)
{
	struct hbmpool_nl_msg m = hbmpool_nl_reply_to(info);
	struct hbmpool_node *node;
	struct sk_buff *msg;
	int err = -ENOMEM;

	node = hbmpool_nl_node_lookup(attr, info->extack);
	if (!node)
		return -ENODEV;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (msg) {
		/* it may put a region's last reference, whose release has an event */
		if (m.cmd == HBMPOOL_CMD_NODE_GET) {
			m.chunks = hbmpool_node_chunks(node);
			m.has_chunks = true;
		}
		m.evseq = hbmpool_events_hold();
		err = fill(msg, node, &m);
		hbmpool_events_release();
	}
	hbmpool_node_put(node);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

/*
 * A dump of node-get or link-get, resumable: cb->args[0] is the next id to
 * look at.  @others skips this node's own entry.
 */
static int hbmpool_nl_node_walk(struct sk_buff *skb, struct netlink_callback *cb,
				hbmpool_nl_node_filler fill, bool others)
{
	struct hbmpool_nl_msg m = hbmpool_nl_dump_part(cb);
	unsigned long id = cb->args[0];
	struct hbmpool_node *node;
	int err = 0;

	while ((node = hbmpool_node_get_next(&id))) {
		if (!others || node->transport) {
			if (m.cmd == HBMPOOL_CMD_NODE_GET) {
				m.chunks = hbmpool_node_chunks(node);
				m.has_chunks = true;
			}
			m.evseq = hbmpool_events_hold();
			/* a change between two parts of the dump flags it interrupted */
			cb->seq = (u32)m.evseq;
			err = fill(skb, node, &m);
			hbmpool_events_release();
		}
		hbmpool_node_put(node);
		if (err)
			break;
		id++;
	}
	cb->args[0] = id;
	return hbmpool_nl_dump_done(skb, err);
}

int hbmpool_nl_node_get(struct sk_buff *skb, struct genl_info *info)
{
	if (GENL_REQ_ATTR_CHECK(info, HBMPOOL_A_NODE_ID))
		return -EINVAL;
	return hbmpool_nl_node_reply(info, info->attrs[HBMPOOL_A_NODE_ID],
				     hbmpool_nl_node_fill);
}

int hbmpool_nl_node_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	return hbmpool_nl_node_walk(skb, cb, hbmpool_nl_node_fill, false);
}

/*
 * The settings a node-new or node-set gives, into @conf; returns the
 * HBMPOOL_CONF_* bits of those given, or -EINVAL.
 */
static int hbmpool_nl_node_conf(struct genl_info *info,
				struct hbmpool_node_conf *conf)
{
	struct nlattr **tb = info->attrs;
	unsigned int which = 0;

	/* both policies reach failure-domain: their attrs[] arrays are that long */
	if (tb[HBMPOOL_A_NODE_FAILURE_DOMAIN]) {
		conf->failure_domain = nla_get_u32(tb[HBMPOOL_A_NODE_FAILURE_DOMAIN]);
		which |= HBMPOOL_CONF_FAILURE_DOMAIN;
	}
	if (tb[HBMPOOL_A_NODE_WEIGHT]) {
		conf->weight = nla_get_u32(tb[HBMPOOL_A_NODE_WEIGHT]);
		which |= HBMPOOL_CONF_WEIGHT;
	}
	if (tb[HBMPOOL_A_NODE_DRAINING]) {
		conf->draining = nla_get_u8(tb[HBMPOOL_A_NODE_DRAINING]);
		which |= HBMPOOL_CONF_DRAINING;
	}
	if (tb[HBMPOOL_A_NODE_NAME]) {
		nla_strscpy(conf->name, tb[HBMPOOL_A_NODE_NAME], sizeof(conf->name));
		which |= HBMPOOL_CONF_NAME;
	}
	if (tb[HBMPOOL_A_NODE_ADDR]) {
		conf->addr_len = nla_len(tb[HBMPOOL_A_NODE_ADDR]);
		if (conf->addr_len != 4 && conf->addr_len != 16) {
			NL_SET_ERR_MSG_ATTR(info->extack, tb[HBMPOOL_A_NODE_ADDR],
					    "addr: 4 bytes (IPv4) or 16 bytes (IPv6)");
			return -EINVAL;
		}
		nla_memcpy(conf->addr, tb[HBMPOOL_A_NODE_ADDR], sizeof(conf->addr));
		which |= HBMPOOL_CONF_ADDR;
	}
	if (tb[HBMPOOL_A_NODE_PORT]) {
		conf->port = nla_get_u16(tb[HBMPOOL_A_NODE_PORT]);
		which |= HBMPOOL_CONF_PORT;
	}
	if (tb[HBMPOOL_A_NODE_DISTANCE]) {
		conf->distance = nla_get_u32(tb[HBMPOOL_A_NODE_DISTANCE]);
		which |= HBMPOOL_CONF_DISTANCE;
	}
	if (tb[HBMPOOL_A_NODE_LINK_TYPE]) {
		conf->link = nla_get_u32(tb[HBMPOOL_A_NODE_LINK_TYPE]);
		which |= HBMPOOL_CONF_LINK;
	}
	return which;
}

int hbmpool_nl_node_new(struct sk_buff *skb, struct genl_info *info)
{
	struct hbmpool_node_conf conf = { .link = HBMPOOL_LINK_SCALEUP };
	struct nlattr **tb = info->attrs;
	const char *transport = "sim";
	int which;

	if (GENL_REQ_ATTR_CHECK(info, HBMPOOL_A_NODE_ID) ||
	    GENL_REQ_ATTR_CHECK(info, HBMPOOL_A_NODE_CAPACITY) ||
	    GENL_REQ_ATTR_CHECK(info, HBMPOOL_A_NODE_DISTANCE))
		return -EINVAL;
	which = hbmpool_nl_node_conf(info, &conf);
	if (which < 0)
		return which;
	if (tb[HBMPOOL_A_NODE_PORT] && !tb[HBMPOOL_A_NODE_ADDR]) {
		NL_SET_ERR_MSG_ATTR(info->extack, tb[HBMPOOL_A_NODE_PORT],
				    "port without addr");
		return -EINVAL;
	}
	if (tb[HBMPOOL_A_NODE_TRANSPORT])
		transport = nla_data(tb[HBMPOOL_A_NODE_TRANSPORT]);
	/* node-new only: node-set's attrs[] does not reach it */
	if (tb[HBMPOOL_A_NODE_DEVICE]) {
		if (strcmp(transport, "shm")) {
			NL_SET_ERR_MSG_ATTR(info->extack, tb[HBMPOOL_A_NODE_DEVICE],
					    "device: only the shm transport takes a device");
			return -EINVAL;
		}
		nla_strscpy(conf.device, tb[HBMPOOL_A_NODE_DEVICE], sizeof(conf.device));
	}
	if (!strcmp(transport, "shm")) {
		/* the transport's attach checks it again: this is for the message */
		struct hbmpool_shm_dev *dev;

		if (!conf.device[0]) {
			NL_SET_ERR_MSG(info->extack, "device: required by the shm transport");
			return -EINVAL;
		}
		dev = hbmpool_shm_dev_get(conf.device);
		if (!dev) {
			NL_SET_ERR_MSG_ATTR(info->extack, tb[HBMPOOL_A_NODE_DEVICE],
					    "device: no such ivshmem device bound to hbmpool");
			return -ENODEV;
		}
		hbmpool_shm_dev_put(dev);
	}
	return hbmpool_node_create(nla_get_u32(tb[HBMPOOL_A_NODE_ID]), transport,
				   nla_get_u64(tb[HBMPOOL_A_NODE_CAPACITY]),
				   &conf, info->extack);
}

int hbmpool_nl_node_del(struct sk_buff *skb, struct genl_info *info)
{
	if (GENL_REQ_ATTR_CHECK(info, HBMPOOL_A_NODE_ID))
		return -EINVAL;
	return hbmpool_node_delete(nla_get_u32(info->attrs[HBMPOOL_A_NODE_ID]),
				   info->extack);
}

int hbmpool_nl_node_set(struct sk_buff *skb, struct genl_info *info)
{
	struct hbmpool_node_conf conf = {};
	int which;

	if (GENL_REQ_ATTR_CHECK(info, HBMPOOL_A_NODE_ID))
		return -EINVAL;
	which = hbmpool_nl_node_conf(info, &conf);
	if (which < 0)
		return which;
	if (info->attrs[HBMPOOL_A_NODE_STATE]) {
		struct nlattr *st = info->attrs[HBMPOOL_A_NODE_STATE];

		if (nla_get_u32(st) != HBMPOOL_NODE_STATE_FENCED) {
			NL_SET_ERR_MSG_ATTR(info->extack, st,
					    "state: only fenced can be set (the node is declared dead)");
			return -EINVAL;
		}
		if (which) {
			NL_SET_ERR_MSG_ATTR(info->extack, st, "state fenced comes alone");
			return -EINVAL;
		}
		return hbmpool_node_fence(nla_get_u32(info->attrs[HBMPOOL_A_NODE_ID]),
					  info->extack);
	}
	if (!which) {
		NL_SET_ERR_MSG(info->extack,
			       "nothing to set: name, distance, link-type, addr, port, weight, draining, failure-domain or state");
		return -EINVAL;
	}
	return hbmpool_node_set(nla_get_u32(info->attrs[HBMPOOL_A_NODE_ID]), &conf,
				which, info->extack);
}

/* ---- links ---- */

/* What the transport knows of the link, if it tells (a connected transport). */
static int hbmpool_nl_link_put_info(struct sk_buff *msg, struct hbmpool_node *node)
{
	struct hbmpool_link_info *li;
	int i, err = 0;

	if (!node->transport || !node->transport->ops->link_info)
		return 0;
	li = kzalloc(sizeof(*li), GFP_KERNEL);
	if (!li)
		return -ENOMEM;
	node->transport->ops->link_info(node, li);
	if (nla_put_u32(msg, HBMPOOL_A_LINK_HEALTH, li->health) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_LINK_RTT, li->rtt_ns, HBMPOOL_A_LINK_PAD) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_LINK_BYTES, li->bytes, HBMPOOL_A_LINK_PAD) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_LINK_RETRIES, li->retries,
			      HBMPOOL_A_LINK_PAD) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_LINK_DIGEST_ERRORS, li->digest_errors,
			      HBMPOOL_A_LINK_PAD) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_LINK_CONNECTS, li->connects,
			      HBMPOOL_A_LINK_PAD) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_LINK_AUTH_FAILURES, li->auth_failures,
			      HBMPOOL_A_LINK_PAD) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_LINK_INCARNATION, li->incarnation,
			      HBMPOOL_A_LINK_PAD))
		err = -EMSGSIZE;
	for (i = 0; !err && i < ARRAY_SIZE(li->rtt_hist); i++)
		if (nla_put_u64_64bit(msg, HBMPOOL_A_LINK_RTT_HIST, li->rtt_hist[i],
				      HBMPOOL_A_LINK_PAD))
			err = -EMSGSIZE;
	kfree(li);
	return err;
}

int hbmpool_nl_link_fill(struct sk_buff *msg, struct hbmpool_node *node,
			 const struct hbmpool_nl_msg *m)
{
	bool admin_up = !READ_ONCE(node->admin_down);
	void *hdr;
	u64 *v;
	int i, err = -ENOMEM;

	v = kmalloc_array(HBMPOOL_NR_STATS, sizeof(*v), GFP_KERNEL);
	if (!v)
		return err;
	hbmpool_counters_read(&node->stats, v);
	err = -EMSGSIZE;
	hdr = hbmpool_nl_put_hdr(msg, m);
	if (!hdr)
		goto out;
	if (nla_put_u32(msg, HBMPOOL_A_LINK_NODE_ID, node->id) ||
	    nla_put_u32(msg, HBMPOOL_A_LINK_ADMIN_STATE,
			admin_up ? HBMPOOL_LINK_STATE_UP : HBMPOOL_LINK_STATE_DOWN) ||
	    nla_put_u32(msg, HBMPOOL_A_LINK_OPER_STATE,
			hbmpool_node_usable(node) ? HBMPOOL_LINK_STATE_UP :
						    HBMPOOL_LINK_STATE_DOWN) ||
	    nla_put_string(msg, HBMPOOL_A_LINK_TRANSPORT,
			   node->transport ? node->transport->name : "local") ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_LINK_REQUESTS,
			      v[HBMPOOL_STAT_FETCHES] + v[HBMPOOL_STAT_WRITEBACKS] +
			      v[HBMPOOL_STAT_ERRORS], HBMPOOL_A_LINK_PAD) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_LINK_ERRORS, v[HBMPOOL_STAT_ERRORS],
			      HBMPOOL_A_LINK_PAD) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_LINK_TIMEOUTS, v[HBMPOOL_STAT_TIMEOUTS],
			      HBMPOOL_A_LINK_PAD) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_LINK_FLAPS, atomic64_read(&node->flaps),
			      HBMPOOL_A_LINK_PAD) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_LINK_SEQ, m->evseq, HBMPOOL_A_LINK_PAD))
		goto err_cancel;
	for (i = 0; i < HBMPOOL_LAT_BUCKETS; i++)
		if (nla_put_u64_64bit(msg, HBMPOOL_A_LINK_LAT_HIST,
				      v[HBMPOOL_STAT_LAT0 + i], HBMPOOL_A_LINK_PAD))
			goto err_cancel;
	err = hbmpool_nl_link_put_info(msg, node);
	if (err)
		goto err_cancel;
	genlmsg_end(msg, hdr);
	err = 0;
	goto out;

err_cancel:
	genlmsg_cancel(msg, hdr);
out:
	kfree(v);
	return err;
}

int hbmpool_nl_link_get(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *attr = info->attrs[HBMPOOL_A_LINK_NODE_ID];

	if (GENL_REQ_ATTR_CHECK(info, HBMPOOL_A_LINK_NODE_ID))
		return -EINVAL;
	if (nla_get_u32(attr) == READ_ONCE(hbmpool_self_id)) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "no link to this node itself");
		return -EINVAL;
	}
	return hbmpool_nl_node_reply(info, attr, hbmpool_nl_link_fill);
}

int hbmpool_nl_link_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	return hbmpool_nl_node_walk(skb, cb, hbmpool_nl_link_fill, true);
}

int hbmpool_nl_link_set(struct sk_buff *skb, struct genl_info *info)
{
	if (GENL_REQ_ATTR_CHECK(info, HBMPOOL_A_LINK_NODE_ID) ||
	    GENL_REQ_ATTR_CHECK(info, HBMPOOL_A_LINK_ADMIN_STATE))
		return -EINVAL;
	return hbmpool_link_set(nla_get_u32(info->attrs[HBMPOOL_A_LINK_NODE_ID]),
				nla_get_u32(info->attrs[HBMPOOL_A_LINK_ADMIN_STATE]) ==
				HBMPOOL_LINK_STATE_UP, info->extack);
}
