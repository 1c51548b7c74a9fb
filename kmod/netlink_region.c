// SPDX-License-Identifier: GPL-2.0
/*
 * The netlink family's regions: region-get of one region or a dump of all,
 * with their placement on request.  A region's chunks may outnumber what
 * one message holds (up to 2^20 of them): a dump continues the region in
 * the next messages, each with the region's id and the following chunks.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "netlink.h"

/* Most chunks a do reply carries; more need a dump. */
#define HBMPOOL_NL_DO_CHUNKS	1024

/*
 * Room for a chunk's nest: index, node, offset (with its pad), generation,
 * syncing node, lost.
 */
#define HBMPOOL_NL_CHUNK_SIZE	160

/*
 * Every part of a region dump has room for a region over every node: its
 * node ids (8 bytes each) and the rest (under 1 KiB).  netlink's default,
 * NLMSG_GOODSIZE, holds a region over about 390 nodes.
 */
#define HBMPOOL_NL_REGION_DUMP_ALLOC	16384
static_assert(HBMPOOL_NL_REGION_DUMP_ALLOC >= 1024 + HBMPOOL_MAX_NODES * 8);

/* A message's size for @r, with @chunks chunks of its placement. */
static size_t hbmpool_nl_region_size(struct hbmpool_region *r, u32 chunks)
{
	return NLMSG_GOODSIZE +
	       bitmap_weight(r->nodes, HBMPOOL_MAX_NODES) * nla_total_size(sizeof(u32)) +
	       (size_t)chunks * HBMPOOL_NL_CHUNK_SIZE;
}

/* An event about @r: sized for it (see hbmpool_nl_notify()). */
size_t hbmpool_nl_region_event_size(struct hbmpool_region *r)
{
	return hbmpool_nl_region_size(r, 0);
}

static int hbmpool_nl_put_chunk(struct sk_buff *msg, struct hbmpool_region *r,
				u32 i)
{
	u32 node, gen, c, syncing = U32_MAX, ngood = 0, nbad = 0;
	u32 good[HBMPOOL_MAX_COPIES], bad[HBMPOOL_MAX_COPIES];
	struct hbmpool_rcopy rc[HBMPOOL_MAX_COPIES];
	const struct hbmpool_chunk_map *map;
	struct nlattr *nest;
	int first;
	u64 offset;

	rcu_read_lock();
	map = rcu_dereference(r->chunks[i].map);
	hbmpool_map_rcopies(map, rc);
	/* node-id and offset: the copy fetches read, else the first */
	first = hbmpool_replica_pick(rc, map->nr_copies, -1);
	if (first < 0)
		first = 0;
	node = map->copies[first].node->id;
	offset = map->copies[first].offset;
	gen = map->gen;
	if (hbmpool_rcopy_good(&rc[first]))
		good[ngood++] = node;
	for (c = 0; c < map->nr_copies; c++) {
		if (map->copies[c].state == HBMPOOL_COPY_SYNCING)
			syncing = map->copies[c].node->id;
		else if (!hbmpool_rcopy_good(&rc[c]))
			bad[nbad++] = map->copies[c].node->id;
		else if (c != first)
			good[ngood++] = map->copies[c].node->id;
	}
	rcu_read_unlock();

	nest = nla_nest_start(msg, HBMPOOL_A_REGION_CHUNK);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(msg, HBMPOOL_A_CHUNK_INDEX, i) ||
	    nla_put_u32(msg, HBMPOOL_A_CHUNK_NODE_ID, node) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_CHUNK_OFFSET, offset, HBMPOOL_A_CHUNK_PAD) ||
	    nla_put_u32(msg, HBMPOOL_A_CHUNK_GENERATION, gen) ||
	    (syncing != U32_MAX &&
	     nla_put_u32(msg, HBMPOOL_A_CHUNK_SYNCING_NODE_ID, syncing)) ||
	    (!ngood && nla_put_flag(msg, HBMPOOL_A_CHUNK_LOST)) ||
	    nla_put_u32(msg, HBMPOOL_A_CHUNK_GOOD_COPIES, ngood))
		goto cancel;
	for (c = 0; c < ngood; c++)
		if (nla_put_u32(msg, HBMPOOL_A_CHUNK_COPY_NODE_ID, good[c]))
			goto cancel;
	for (c = 0; c < nbad; c++)
		if (nla_put_u32(msg, HBMPOOL_A_CHUNK_OUTDATED_NODE_ID, bad[c]))
			goto cancel;
	nla_nest_end(msg, nest);
	return 0;
cancel:
	nla_nest_cancel(msg, nest);
	return -EMSGSIZE;
}

/* Everything about @r but its chunks. */
static int hbmpool_nl_region_put(struct sk_buff *msg, struct hbmpool_region *r,
				 const struct hbmpool_nl_msg *m)
{
	struct nlattr *nest;
	unsigned int bit;
	u64 *v;
	int err = -ENOMEM;

	v = kmalloc_array(HBMPOOL_NR_STATS, sizeof(*v), GFP_KERNEL);
	if (!v)
		return err;
	hbmpool_region_stats_read(&r->stats, v);
	err = -EMSGSIZE;
	if (nla_put_string(msg, HBMPOOL_A_REGION_NAME, r->name) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_REGION_LENGTH, r->length,
			      HBMPOOL_A_REGION_PAD) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_REGION_CHUNK_SIZE, r->chunk_size,
			      HBMPOOL_A_REGION_PAD) ||
	    nla_put_u32(msg, HBMPOOL_A_REGION_POLICY, r->policy) ||
	    nla_put_u32(msg, HBMPOOL_A_REGION_PREFERRED_NODE, r->preferred) ||
	    (r->shared && nla_put_flag(msg, HBMPOOL_A_REGION_SHARED)) ||
	    nla_put_u32(msg, HBMPOOL_A_REGION_NR_CHUNKS, r->nr_chunks) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_REGION_CACHED_PAGES,
			      atomic_long_read(&r->nr_cached), HBMPOOL_A_REGION_PAD) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_REGION_DIRTY_PAGES,
			      atomic_long_read(&r->nr_dirty), HBMPOOL_A_REGION_PAD) ||
	    nla_put_u32(msg, HBMPOOL_A_REGION_UID,
			from_kuid_munged(&init_user_ns, r->uid)) ||
	    nla_put_u32(msg, HBMPOOL_A_REGION_MODE, r->mode))
		goto out;
	for_each_set_bit(bit, r->nodes, HBMPOOL_MAX_NODES)
		if (nla_put_u32(msg, HBMPOOL_A_REGION_NODE_ID, bit))
			goto out;
	nest = nla_nest_start(msg, HBMPOOL_A_REGION_STATS);
	if (!nest || hbmpool_nl_put_stats(msg, v, false))
		goto out;
	nla_nest_end(msg, nest);
	err = 0;
out:
	kfree(v);
	return err;
}

/**
 * hbmpool_nl_region_fill - a message about region @r
 * @msg: to fill
 * @r: the region
 * @m: the message's addressing
 * @next_chunk: NULL: no placement.  Else the first chunk to put, which is
 *	updated to the first one that did not fit (r->nr_chunks: all did).
 *	A message from a chunk other than 0 continues the region: it
 *	carries only the id and chunks.
 *
 * Return: 0, or -EMSGSIZE when not even the region (or, continuing, one
 * chunk) fits.
 */
int hbmpool_nl_region_fill(struct sk_buff *msg, struct hbmpool_region *r,
			   const struct hbmpool_nl_msg *m, u32 *next_chunk)
{
	bool cont = next_chunk && *next_chunk;	/* continues the region */
	u32 i, first = next_chunk ? *next_chunk : 0;
	u32 lost, degraded;
	void *hdr;
	int err;

	hdr = hbmpool_nl_put_hdr(msg, m);
	if (!hdr)
		return -EMSGSIZE;
	err = -EMSGSIZE;
	lost = cont ? 0 : hbmpool_region_lost_chunks(r, &degraded);
	if (nla_put_u32(msg, HBMPOOL_A_REGION_ID, r->id) ||
	    nla_put_u64_64bit(msg, HBMPOOL_A_REGION_SEQ, m->evseq,
			      HBMPOOL_A_REGION_PAD) ||
	    (!cont && (nla_put_u32(msg, HBMPOOL_A_REGION_LOST_CHUNKS, lost) ||
		       nla_put_u32(msg, HBMPOOL_A_REGION_DEGRADED_CHUNKS, degraded) ||
		       nla_put_u32(msg, HBMPOOL_A_REGION_REPLICAS, r->replicas))))
		goto err_cancel;
	if (!cont) {
		err = hbmpool_nl_region_put(msg, r, m);
		if (err)
			goto err_cancel;
	}
	for (i = first; next_chunk && i < r->nr_chunks; i++) {
		if (hbmpool_nl_put_chunk(msg, r, i))
			break;
	}
	if (next_chunk) {
		/* no chunk fit: the region goes to the next message whole */
		if (i == first && first < r->nr_chunks) {
			err = -EMSGSIZE;
			goto err_cancel;
		}
		*next_chunk = i;
	}
	genlmsg_end(msg, hdr);
	return 0;

err_cancel:
	genlmsg_cancel(msg, hdr);
	return err;
}

static struct hbmpool_region *hbmpool_nl_region_lookup(u32 id)
{
	unsigned long next = id;
	struct hbmpool_region *r = hbmpool_region_get_next(&next);

	if (r && r->id != id) {
		hbmpool_region_put(r);
		r = NULL;
	}
	return r;
}

int hbmpool_nl_region_get(struct sk_buff *skb, struct genl_info *info)
{
	struct hbmpool_nl_msg m = hbmpool_nl_reply_to(info);
	struct nlattr *attr = info->attrs[HBMPOOL_A_REGION_ID];
	bool chunks = nla_get_flag(info->attrs[HBMPOOL_A_REGION_CHUNKS]);
	struct hbmpool_region *r;
	struct sk_buff *msg;
	u32 next = 0;
	int err = -ENOMEM;

	if (GENL_REQ_ATTR_CHECK(info, HBMPOOL_A_REGION_ID))
		return -EINVAL;
	r = hbmpool_nl_region_lookup(nla_get_u32(attr));
	if (!r) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "no such region");
		return -ENOENT;
	}
	if (chunks && r->nr_chunks > HBMPOOL_NL_DO_CHUNKS) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[HBMPOOL_A_REGION_CHUNKS],
				    "too many chunks for one reply: dump with the region's id");
		err = -EMSGSIZE;
		goto out_put;
	}
	msg = genlmsg_new(hbmpool_nl_region_size(r, chunks ? r->nr_chunks : 0),
			  GFP_KERNEL | __GFP_NOWARN);
	if (!msg)
		goto out_put;
	m.evseq = hbmpool_events_hold();
	err = hbmpool_nl_region_fill(msg, r, &m, chunks ? &next : NULL);
	hbmpool_events_release();
	if (!err && chunks && next != r->nr_chunks)
		err = -EMSGSIZE;
	if (err) {
		NL_SET_ERR_MSG(info->extack, "the region does not fit one reply: dump it");
		nlmsg_free(msg);
		goto out_put;
	}
	err = genlmsg_reply(msg, info);
out_put:
	hbmpool_region_put(r);
	return err;
}

/*
 * Resumable: cb->args[0] is the id of the region to put next, cb->args[1]
 * its next chunk (0: the region from its start).  With a region id in the
 * request, only that region.
 */
/* Dumps of regions get parts large enough for a region over every node. */
int hbmpool_nl_region_dump_start(struct netlink_callback *cb)
{
	cb->min_dump_alloc = HBMPOOL_NL_REGION_DUMP_ALLOC;
	return 0;
}

int hbmpool_nl_region_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	const struct genl_dumpit_info *info = genl_dumpit_info(cb);
	struct nlattr *id_attr = info->attrs[HBMPOOL_A_REGION_ID];
	bool chunks = nla_get_flag(info->attrs[HBMPOOL_A_REGION_CHUNKS]);
	struct hbmpool_nl_msg m = hbmpool_nl_dump_part(cb);
	unsigned long id = cb->args[0];
	struct hbmpool_region *r;
	int err = 0;

	if (id_attr && id < nla_get_u32(id_attr))
		id = nla_get_u32(id_attr);
	while ((r = hbmpool_region_get_next(&id))) {
		/*
		 * The region being continued may be gone: start the next one
		 * whole.  Ids are not reused soon (they are allocated
		 * cyclically), so a region of the same id is the same region.
		 */
		u32 start = r->id == cb->args[0] ? cb->args[1] : 0, next = start;

		if (id_attr && r->id != nla_get_u32(id_attr)) {
			hbmpool_region_put(r);
			break;
		}
		m.evseq = hbmpool_events_hold();
		/* a change between two parts of the dump flags it interrupted */
		cb->seq = (u32)m.evseq;
		err = hbmpool_nl_region_fill(skb, r, &m, chunks ? &next : NULL);
		hbmpool_events_release();
		if (!err && chunks && next < r->nr_chunks) {
			cb->args[1] = next;	/* the rest in the next part */
			err = -EMSGSIZE;
		} else if (!err) {
			cb->args[1] = 0;
			id++;
		} else {
			cb->args[1] = start;	/* this part had no room for it */
		}
		hbmpool_region_put(r);		/* may announce its end: after release */
		if (err)
			break;
	}
	cb->args[0] = id;
	return hbmpool_nl_dump_done(skb, err);
}
