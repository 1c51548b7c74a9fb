// SPDX-License-Identifier: GPL-2.0
/*
 * The chunk-move commands of the netlink family: resync-new, resync-get
 * (do and dump), resync-del, and the resync-change-ntf event's message.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <net/genetlink.h>

#include "netlink.h"
#include "resync.h"

/* @obj: a struct hbmpool_resync_info, a snapshot of the move */
int hbmpool_nl_resync_fill(struct sk_buff *msg, void *obj,
			   const struct hbmpool_nl_msg *m)
{
	const struct hbmpool_resync_info *info = obj;
	void *hdr = hbmpool_nl_put_hdr(msg, m);

	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(msg, HBMPOOL_A_RESYNC_ID, info->id) ||
	    nla_put_u32(msg, HBMPOOL_A_RESYNC_REGION_ID, info->region_id) ||
	    nla_put_u32(msg, HBMPOOL_A_RESYNC_CHUNK, info->chunk) ||
	    nla_put_u32(msg, HBMPOOL_A_RESYNC_FROM_NODE_ID, info->from) ||
	    nla_put_u32(msg, HBMPOOL_A_RESYNC_TO_NODE_ID, info->to) ||
	    nla_put_u32(msg, HBMPOOL_A_RESYNC_STATE, info->state) ||
	    nla_put_u32(msg, HBMPOOL_A_RESYNC_PAGES, info->pages) ||
	    nla_put_u32(msg, HBMPOOL_A_RESYNC_PAGES_DONE, info->pages_done) ||
	    nla_put_u32(msg, HBMPOOL_A_RESYNC_ERROR, info->error) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_RESYNC_SEQ, m->evseq,
			      HBMPOOL_A_RESYNC_PAD) ||
	    nla_put_u32(msg, HBMPOOL_A_RESYNC_ELAPSED_MS, info->elapsed_ms) ||
	    nla_put_u32(msg, HBMPOOL_A_RESYNC_PASSES, info->passes) ||
	    nla_put_u32(msg, HBMPOOL_A_RESYNC_KIND, info->kind)) {
		genlmsg_cancel(msg, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return 0;
}

static u32 hbmpool_nl_resync_node(struct genl_info *info, int attr)
{
	return info->attrs[attr] ? nla_get_u32(info->attrs[attr]) : HBMPOOL_RESYNC_NONE;
}

int hbmpool_nl_resync_new(struct sk_buff *skb, struct genl_info *info)
{
	struct hbmpool_resync_info ri;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, HBMPOOL_A_RESYNC_REGION_ID) ||
	    GENL_REQ_ATTR_CHECK(info, HBMPOOL_A_RESYNC_CHUNK))
		return -EINVAL;
	err = hbmpool_ctl_begin();
	if (err) {
		NL_SET_ERR_MSG(info->extack, "the module is being unloaded");
		return err;
	}
	err = hbmpool_resync_new(nla_get_u32(info->attrs[HBMPOOL_A_RESYNC_REGION_ID]),
				 nla_get_u32(info->attrs[HBMPOOL_A_RESYNC_CHUNK]),
				 hbmpool_nl_resync_node(info, HBMPOOL_A_RESYNC_FROM_NODE_ID),
				 hbmpool_nl_resync_node(info, HBMPOOL_A_RESYNC_TO_NODE_ID),
				 &ri, info->extack);
	hbmpool_ctl_end();
	if (err)
		return err;
	return hbmpool_nl_reply(info, hbmpool_nl_resync_fill, &ri);
}

int hbmpool_nl_resync_get(struct sk_buff *skb, struct genl_info *info)
{
	struct hbmpool_resync_info ri;

	if (GENL_REQ_ATTR_CHECK(info, HBMPOOL_A_RESYNC_ID))
		return -EINVAL;
	if (hbmpool_resync_get(nla_get_u32(info->attrs[HBMPOOL_A_RESYNC_ID]), &ri)) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[HBMPOOL_A_RESYNC_ID],
				    "no such move (ended ones are kept 60 s)");
		return -ENOENT;
	}
	return hbmpool_nl_reply(info, hbmpool_nl_resync_fill, &ri);
}

/* Resumable: cb->args[0] is the next id to look at. */
int hbmpool_nl_resync_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct hbmpool_nl_msg m = hbmpool_nl_dump_part(cb);
	struct hbmpool_resync_info ri;
	unsigned long id = cb->args[0];
	int err = 0;

	while (!hbmpool_resync_get_next(&id, &ri)) {
		m.evseq = hbmpool_events_hold();
		cb->seq = (u32)m.evseq;
		err = hbmpool_nl_resync_fill(skb, &ri, &m);
		hbmpool_events_release();
		if (err)
			break;
		id++;
	}
	cb->args[0] = id;
	return hbmpool_nl_dump_done(skb, err);
}

int hbmpool_nl_resync_del(struct sk_buff *skb, struct genl_info *info)
{
	if (GENL_REQ_ATTR_CHECK(info, HBMPOOL_A_RESYNC_ID))
		return -EINVAL;
	return hbmpool_resync_del(nla_get_u32(info->attrs[HBMPOOL_A_RESYNC_ID]),
				  info->extack);
}
