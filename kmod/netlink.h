/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of the generic netlink family share: the family, how a
 * message of it is addressed, and the fill functions that events reuse.
 */
#ifndef _HBMPOOL_NETLINK_H
#define _HBMPOOL_NETLINK_H

#include <net/genetlink.h>
#include <linux/hbmpool_nl.h>

#include "hbmpool.h"

extern struct genl_family hbmpool_genl;

/*
 * A message to build: its addressing (a reply, a part of a dump, or an
 * event with portid and seq 0), its command, and the domain-wide sequence
 * number the values reflect.
 */
struct hbmpool_nl_msg {
	u32 portid;
	u32 seq;
	int flags;
	u8 cmd;
	u64 evseq;
	struct netlink_callback *cb;	/* a dump's, else NULL */
	bool has_chunks;		/* node-get: chunks, counted before the events were held */
	u32 chunks;
};

/* The addressing of a reply to @info; the caller sets cmd and evseq. */
static inline struct hbmpool_nl_msg hbmpool_nl_reply_to(struct genl_info *info)
{
	return (struct hbmpool_nl_msg){
		.portid = info->snd_portid,
		.seq = info->snd_seq,
		.cmd = info->genlhdr->cmd,
	};
}

/* The addressing of a part of dump @cb; the caller sets evseq. */
static inline struct hbmpool_nl_msg hbmpool_nl_dump_part(struct netlink_callback *cb)
{
	return (struct hbmpool_nl_msg){
		.portid = NETLINK_CB(cb->skb).portid,
		.seq = cb->nlh->nlmsg_seq,
		.flags = NLM_F_MULTI,
		.cmd = ((struct genlmsghdr *)nlmsg_data(cb->nlh))->cmd,
		.cb = cb,
	};
}

void *hbmpool_nl_put_hdr(struct sk_buff *msg, const struct hbmpool_nl_msg *m);
int hbmpool_nl_put_stats(struct sk_buff *msg, const u64 *v, bool global);
int hbmpool_nl_dump_done(struct sk_buff *skb, int err);
int hbmpool_nl_reply(struct genl_info *info,
		     int (*fill)(struct sk_buff *msg, void *obj,
				 const struct hbmpool_nl_msg *m),
		     void *obj);

int hbmpool_nl_node_fill(struct sk_buff *msg, struct hbmpool_node *node,
			 const struct hbmpool_nl_msg *m);
int hbmpool_nl_link_fill(struct sk_buff *msg, struct hbmpool_node *node,
			 const struct hbmpool_nl_msg *m);
int hbmpool_nl_region_fill(struct sk_buff *msg, struct hbmpool_region *r,
			   const struct hbmpool_nl_msg *m, u32 *next_chunk);

/* Handlers, by file. */
int hbmpool_nl_node_get(struct sk_buff *skb, struct genl_info *info);
int hbmpool_nl_node_dump(struct sk_buff *skb, struct netlink_callback *cb);
int hbmpool_nl_node_new(struct sk_buff *skb, struct genl_info *info);
int hbmpool_nl_node_del(struct sk_buff *skb, struct genl_info *info);
int hbmpool_nl_node_set(struct sk_buff *skb, struct genl_info *info);
int hbmpool_nl_link_get(struct sk_buff *skb, struct genl_info *info);
int hbmpool_nl_link_dump(struct sk_buff *skb, struct netlink_callback *cb);
int hbmpool_nl_link_set(struct sk_buff *skb, struct genl_info *info);
int hbmpool_nl_region_get(struct sk_buff *skb, struct genl_info *info);
int hbmpool_nl_region_dump(struct sk_buff *skb, struct netlink_callback *cb);
int hbmpool_nl_region_dump_start(struct netlink_callback *cb);
size_t hbmpool_nl_region_event_size(struct hbmpool_region *r);
int hbmpool_nl_resync_fill(struct sk_buff *msg, void *info,
			   const struct hbmpool_nl_msg *m);
int hbmpool_nl_resync_new(struct sk_buff *skb, struct genl_info *info);
int hbmpool_nl_resync_get(struct sk_buff *skb, struct genl_info *info);
int hbmpool_nl_resync_dump(struct sk_buff *skb, struct netlink_callback *cb);
int hbmpool_nl_resync_del(struct sk_buff *skb, struct genl_info *info);

#endif /* _HBMPOOL_NETLINK_H */
