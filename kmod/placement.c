// SPDX-License-Identifier: GPL-2.0
/*
 * Placement: which nodes hold the chunks of a region, under its policy, and
 * the chunk maps that record it.
 *
 * A chunk's map lists its copies (the region's replicas, plus a move's or a
 * re-replication's target while one fills it) with a generation.  Maps
 * are published with rcu_assign_pointer() and read under rcu_read_lock()
 * through hbmpool_read_copy() and hbmpool_write_set(); a map that changes
 * is replaced whole (resync.c, replication.c, under the region's
 * maps_lock), never edited in place.  Each copy holds a reference on its
 * node.
 *
 * Which node takes a chunk is pchoice.c's pure logic; this file gathers
 * what it needs of the nodes (their class, distance, weight, free bytes)
 * under hbmpool_nodes_lock and asks the homes for the chunks.  A region
 * with replicas k gets k copies of every chunk on k distinct nodes, of
 * distinct failure domains where the nodes name theirs; which copies are
 * good, and which one a fetch reads, is replica.c's pure logic over
 * hbmpool_map_rcopies().
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>

#include "hbmpool.h"
#include "linkstate.h"
#include "pchoice.h"
#include "resync.h"

/* Whether copy @cp's home still has the memory the copy was placed in. */
static bool hbmpool_copy_current(const struct hbmpool_copy *cp)
{
	enum hbmpool_node_state st = READ_ONCE(cp->node->state);

	return cp->gen == hbmpool_node_data_gen(cp->node) &&
	       st != HBMPOOL_NODE_FENCED && st != HBMPOOL_NODE_REMOVED;
}

/**
 * hbmpool_map_rcopies - describe a chunk map's copies for replica.c
 * @map: the map, under RCU or its region's maps_lock
 * @rc: map->nr_copies entries to fill
 *
 * Any context.
 */
void hbmpool_map_rcopies(const struct hbmpool_chunk_map *map,
			 struct hbmpool_rcopy *rc)
{
	u32 c;

	for (c = 0; c < map->nr_copies; c++) {
		const struct hbmpool_copy *cp = &map->copies[c];
		bool linked = hbmpool_node_usable(cp->node);

		rc[c] = (struct hbmpool_rcopy){
			.state = cp->state,
			.intact = hbmpool_copy_current(cp),
			.linked = linked,
			.reachable = linked && !READ_ONCE(cp->node->suspect),
			.domain = READ_ONCE(cp->node->conf.failure_domain),
		};
	}
}

/* The copy of @map a fetch reads (hbmpool_replica_pick()), or -1: none is good. */
int hbmpool_map_pick(const struct hbmpool_chunk_map *map)
{
	struct hbmpool_rcopy rc[HBMPOOL_MAX_COPIES];

	hbmpool_map_rcopies(map, rc);
	return hbmpool_replica_pick(rc, map->nr_copies, -1);
}

/* Good copies of @map (hbmpool_rcopy_good()). */
u32 hbmpool_map_good(const struct hbmpool_chunk_map *map)
{
	struct hbmpool_rcopy rc[HBMPOOL_MAX_COPIES];

	hbmpool_map_rcopies(map, rc);
	return hbmpool_replica_good(rc, map->nr_copies);
}

u64 hbmpool_chunk_len(struct hbmpool_region *r, u32 i)
{
	return min_t(u64, r->chunk_size, r->length - ((u64)i << r->chunk_shift));
}

/* A map for @nr_copies copies, to be filled; NULL without memory. */
struct hbmpool_chunk_map *hbmpool_map_alloc(u32 nr_copies, u32 gen)
{
	struct hbmpool_chunk_map *map;

	map = kzalloc(struct_size(map, copies, nr_copies), GFP_KERNEL);
	if (map) {
		map->gen = gen;
		map->nr_copies = nr_copies;
	}
	return map;
}

/**
 * hbmpool_map_free - free a chunk map nobody reads any more
 * @r: the region
 * @i: the chunk
 * @map: the map (no reader left: unpublished and a grace period passed)
 * @give_back: bit c set: copy c's chunk goes back to its home (if the home
 *	did not lose it meanwhile)
 *
 * Drops the map's node references and its reference on its move.  May sleep.
 */
void hbmpool_map_free(struct hbmpool_region *r, u32 i,
		      struct hbmpool_chunk_map *map, unsigned long give_back)
{
	u32 c;

	for (c = 0; c < map->nr_copies; c++) {
		struct hbmpool_node *node = map->copies[c].node;

		/* a home that lost its memory holds nothing of ours */
		if ((give_back & BIT(c)) &&
		    map->copies[c].gen == hbmpool_node_data_gen(node))
			node->transport->ops->free_chunks(node, map->copies[c].offset,
							  hbmpool_chunk_len(r, i),
							  map->copies[c].gen);
		hbmpool_node_put(node);
	}
	if (map->job)
		hbmpool_resync_put(map->job);
	kfree(map);
}

/*
 * Asks @node, the home, for @len bytes and records them as copy @c of
 * chunk @i's map @map: the home chooses the offset, so chunks of different
 * clients never overlap.
 */
static bool hbmpool_chunk_alloc(struct hbmpool_region *r, u32 i,
				struct hbmpool_chunk_map *map, u32 c,
				struct hbmpool_node *node)
{
	u64 offset;
	u32 gen;

	/* before the home answers: a loss meanwhile makes the chunk lost, not wrong */
	gen = hbmpool_node_data_gen(node);
	if (node->transport->ops->alloc_chunks(node, hbmpool_chunk_len(r, i),
					       &offset))
		return false;
	hbmpool_node_get(node);
	map->copies[c].node = node;
	map->copies[c].offset = offset;
	map->copies[c].gen = gen;
	map->copies[c].state = HBMPOOL_COPY_UPTODATE;
	return true;
}

/* Frees the maps of chunks [0, @nr), every copy's chunk given back: nobody reads them any more. */
static void hbmpool_chunks_free(struct hbmpool_region *r, u32 nr)
{
	u32 i;

	for (i = 0; i < nr; i++) {
		struct hbmpool_chunk_map *map;

		map = rcu_dereference_protected(r->chunks[i].map, true);
		if (!map)
			continue;
		RCU_INIT_POINTER(r->chunks[i].map, NULL);
		hbmpool_map_free(r, i, map, ~0UL);
		if (!(i % 1024))
			cond_resched();
	}
}

/* A node whose segment would be this full after a chunk is a last resort (%). */
unsigned int hbmpool_place_full_pct = 100;
/* Whether a node whose link is degraded is a last resort. */
unsigned int hbmpool_place_avoid_degraded = 1;

/*
 * How @node may take new chunks (see pchoice.h).  @li: room for the
 * transport's view of the link.  Under hbmpool_nodes_lock, which node-set
 * and link-set hold to change what this reads.
 */
static enum hbmpool_pclass hbmpool_node_pclass(struct hbmpool_node *node,
					       struct hbmpool_link_info *li)
{
	lockdep_assert_held(&hbmpool_nodes_lock);
	/* unreachable, fenced, removed, or its link set down */
	if (!hbmpool_node_usable(node) || node->conf.draining)
		return HBMPOOL_PCLASS_NEVER;
	if (node->transport->ops->link_info) {
		memset(li, 0, sizeof(*li));
		node->transport->ops->link_info(node, li);
		if (li->health == HBMPOOL_LSTATE_DEGRADED &&
		    READ_ONCE(hbmpool_place_avoid_degraded))
			return HBMPOOL_PCLASS_DEGRADED;
	}
	return HBMPOOL_PCLASS_OK;
}

/* @node as a candidate of @r's placement; under hbmpool_nodes_lock. */
static void hbmpool_pcand_init(struct hbmpool_pcand *c, struct hbmpool_region *r,
			       struct hbmpool_node *node, struct hbmpool_link_info *li)
{
	c->id = node->id;
	c->distance = node->conf.distance;
	c->weight = hbmpool_node_weight(node, &node->conf);
	c->preferred = r->policy == HBMPOOL_POLICY_PREFERRED && node->id == r->preferred;
	c->pclass = hbmpool_node_pclass(node, li);
	/* full-pct: the bytes a chunk should leave free on the node */
	c->reserve = div_u64(hbmpool_node_capacity(node) *
			     (100 - READ_ONCE(hbmpool_place_full_pct)), 100);
}

/*
 * Hides from a choice the candidates that may not take another copy of a
 * chunk whose first @ncopies copies are in @map: their nodes, and nodes of
 * their (non-zero) failure domains.  @saved keeps the classes for
 * hbmpool_place_unhide().  Under hbmpool_nodes_lock.
 */
static void hbmpool_place_hide(struct hbmpool_pcand *cand,
			       struct hbmpool_node **set, unsigned int nr,
			       const struct hbmpool_chunk_map *map, u32 ncopies,
			       u8 *saved)
{
	unsigned int j;
	u32 c;

	lockdep_assert_held(&hbmpool_nodes_lock);
	for (j = 0; j < nr; j++) {
		u32 fd = set[j]->conf.failure_domain;

		saved[j] = cand[j].pclass;
		for (c = 0; c < ncopies; c++)
			if (map->copies[c].node == set[j] ||
			    (fd && map->copies[c].node->conf.failure_domain == fd))
				cand[j].pclass = HBMPOOL_PCLASS_NEVER;
	}
}

static void hbmpool_place_unhide(struct hbmpool_pcand *cand, unsigned int nr,
				 const u8 *saved)
{
	unsigned int j;

	for (j = 0; j < nr; j++)
		cand[j].pclass = saved[j];
}

/*
 * Places the copies of chunk @i of @r (r->replicas of them) with the
 * candidates @cand of nodes @set; a home that refuses takes no more of the
 * region.  -ENOSPC: not enough eligible nodes of distinct failure domains
 * with room.
 */
static int hbmpool_place_chunk(struct hbmpool_region *r, u32 i,
			       struct hbmpool_pcand *cand,
			       struct hbmpool_node **set, unsigned int nr,
			       struct hbmpool_pstate *st, u8 *saved)
{
	u64 len = hbmpool_chunk_len(r, i);
	struct hbmpool_chunk_map *map;
	u32 c;
	int k = -1;

	map = hbmpool_map_alloc(r->replicas, 1);
	if (!map)
		return -ENOMEM;
	for (c = 0; c < r->replicas; c++) {
		hbmpool_place_hide(cand, set, nr, map, c, saved);
		while ((k = hbmpool_pchoose(cand, nr, st, len)) >= 0) {
			if (hbmpool_chunk_alloc(r, i, map, c, set[k])) {
				cand[k].free -= len;
				break;
			}
			saved[k] = HBMPOOL_PCLASS_NEVER;
			cand[k].pclass = HBMPOOL_PCLASS_NEVER;
		}
		hbmpool_place_unhide(cand, nr, saved);
		if (k < 0)
			break;
	}
	if (k < 0) {
		map->nr_copies = c;	/* those placed go back */
		hbmpool_map_free(r, i, map, ~0UL);
		return -ENOSPC;
	}
	rcu_assign_pointer(r->chunks[i].map, map);
	return 0;
}

/*
 * Chooses the homes of every chunk of @r under its policy (hbmpool_pchoose()),
 * r->replicas distinct ones per chunk, and reserves the capacity; all or
 * nothing.  Only eligible nodes take
 * chunks: live, link up, not draining, with room; one whose link is
 * degraded only when no other is.  A home that refuses a chunk takes no
 * more of this region.  -ENODEV: a node of the set does not exist;
 * -ENOSPC: the eligible nodes of the set lack the room (none eligible
 * included).  Serialised with node removal and node-set by
 * hbmpool_nodes_lock.
 */
int hbmpool_place(struct hbmpool_region *r)
{
	struct hbmpool_pstate st = { .policy = r->policy };
	struct hbmpool_link_info *li;
	struct hbmpool_node **set;
	struct hbmpool_pcand *cand;
	unsigned int nr = 0, n, bit;
	u64 avail = 0;
	u8 *saved;
	u32 i;
	int err = -ENOMEM;

	n = bitmap_weight(r->nodes, HBMPOOL_MAX_NODES);
	set = kcalloc(n, sizeof(*set), GFP_KERNEL);
	cand = kcalloc(n, sizeof(*cand), GFP_KERNEL);
	saved = kcalloc(n, sizeof(*saved), GFP_KERNEL);
	li = kmalloc(sizeof(*li), GFP_KERNEL);
	if (!set || !cand || !saved || !li)
		goto out_free;

	err = 0;
	mutex_lock(&hbmpool_nodes_lock);
	for_each_set_bit(bit, r->nodes, HBMPOOL_MAX_NODES) {
		struct hbmpool_node *node = __hbmpool_node_lookup(bit);
		struct hbmpool_pcand *c = &cand[nr];

		if (!node || !node->transport) {
			err = -ENODEV;
			goto out_unlock;
		}
		set[nr++] = node;
		hbmpool_pcand_init(c, r, node, li);
		if (c->pclass != HBMPOOL_PCLASS_NEVER) {
			c->free = node->transport->ops->free_bytes(node);
			avail += c->free;
		}
	}
	if (r->length * r->replicas > avail) {
		err = -ENOSPC;
		goto out_unlock;
	}

	for (i = 0; i < r->nr_chunks; i++) {
		err = hbmpool_place_chunk(r, i, cand, set, nr, &st, saved);
		if (err) {
			hbmpool_chunks_free(r, i);
			goto out_unlock;
		}
		if (!(i % 1024))
			cond_resched();
	}
out_unlock:
	mutex_unlock(&hbmpool_nodes_lock);
out_free:
	kfree(li);
	kfree(saved);
	kfree(cand);
	kfree(set);
	return err;
}

/* Gives a region's capacity back to its homes; drops its node references. */
void hbmpool_unplace(struct hbmpool_region *r)
{
	hbmpool_chunks_free(r, r->nr_chunks);
}

/*
 * Whether an up-to-date copy of chunk @i of @r lives on @node (a move's
 * target does not count: it holds nothing the chunk is read from).
 */
bool hbmpool_chunk_on_node(struct hbmpool_region *r, u32 i,
			   struct hbmpool_node *node)
{
	const struct hbmpool_chunk_map *map;
	bool on = false;
	u32 c;

	rcu_read_lock();
	map = rcu_dereference(r->chunks[i].map);
	for (c = 0; map && c < map->nr_copies; c++)
		on |= map->copies[c].node == node &&
		      map->copies[c].state == HBMPOOL_COPY_UPTODATE;
	rcu_read_unlock();
	return on;
}

/* Whether chunk @i of @r has a good copy (hbmpool_rcopy_good()). */
bool hbmpool_chunk_good(struct hbmpool_region *r, u32 i)
{
	bool good;

	rcu_read_lock();
	good = hbmpool_map_good(rcu_dereference(r->chunks[i].map));
	rcu_read_unlock();
	return good;
}

/* This node's chunks with an up-to-date copy on @node: what a drain has left. */
u32 hbmpool_node_chunks(struct hbmpool_node *node)
{
	struct hbmpool_region **regions;
	unsigned long k, n;
	u32 i, nr = 0;

	regions = hbmpool_regions_get_all(&n);
	for (k = 0; regions && k < n; k++) {
		struct hbmpool_region *r = regions[k];

		for (i = 0; r->placed && i < r->nr_chunks; i++)
			nr += hbmpool_chunk_on_node(r, i, node);
		hbmpool_region_put(r);
		cond_resched();
	}
	kvfree(regions);
	return nr;
}

/*
 * Why @nd may not take a new copy of chunk @i of @r: -EEXIST, it holds a
 * good copy or one being filled; -EXDEV, a good copy (other than on node
 * @from, a move's source) shares its failure domain.  0: it may.
 */
static int hbmpool_copy_blocked(struct hbmpool_region *r, u32 i,
				struct hbmpool_node *nd, u32 from)
{
	struct hbmpool_rcopy rc[HBMPOOL_MAX_COPIES];
	const struct hbmpool_chunk_map *map;
	u32 c, n = 0;
	int err = 0;

	rcu_read_lock();
	map = rcu_dereference(r->chunks[i].map);
	hbmpool_map_rcopies(map, rc);
	for (c = 0; c < map->nr_copies; c++) {
		if (map->copies[c].node == nd &&
		    (hbmpool_rcopy_good(&rc[c]) || rc[c].state == HBMPOOL_COPY_SYNCING))
			err = -EEXIST;
		if (map->copies[c].node->id != from)
			rc[n++] = rc[c];
	}
	if (!err && !hbmpool_replica_domain_free(rc, n, READ_ONCE(nd->conf.failure_domain)))
		err = -EXDEV;
	rcu_read_unlock();
	return err;
}

/**
 * hbmpool_place_copy - reserve a new copy of chunk @i of @r for a move
 * @r: the region (placed)
 * @i: the chunk
 * @to: the node asked for, or U32_MAX: placement chooses among the
 *	region's node set, under its policy (hbmpool_pchoose_target())
 * @from: the node of a move's source (its failure domain is freed), or
 *	U32_MAX for a re-replication
 * @offset: set to the copy's offset at its home
 * @gen: set to the home's data generation the copy is placed in
 * @why: set to the reason of a refusal
 *
 * Eligible: a node of the set that holds no good copy of the chunk (nor one
 * being filled), shares no failure domain with another good copy, live,
 * link up, not draining, with room (a degraded link as a last resort).
 * Return: the home, referenced, or ERR_PTR(-EINVAL) (not in the set, this
 * node, draining, its failure domain taken), -EEXIST (it holds a copy),
 * -ENODEV (no such node, or not usable), -ENOSPC, -ENOMEM.
 */
struct hbmpool_node *hbmpool_place_copy(struct hbmpool_region *r, u32 i,
					u32 to, u32 from, u64 *offset, u32 *gen,
					const char **why)
{
	u64 len = hbmpool_chunk_len(r, i);
	struct hbmpool_link_info *li;
	struct hbmpool_node **set, *node = ERR_PTR(-ENOSPC);
	struct hbmpool_pcand *cand;
	unsigned int nr = 0, n, bit;
	int k;

	*why = "no node of the region's set has room";
	if (to != U32_MAX && (to >= HBMPOOL_MAX_NODES || !test_bit(to, r->nodes))) {
		*why = "the target is not in the region's node set";
		return ERR_PTR(-EINVAL);
	}
	n = bitmap_weight(r->nodes, HBMPOOL_MAX_NODES);
	set = kcalloc(n, sizeof(*set), GFP_KERNEL);
	cand = kcalloc(n, sizeof(*cand), GFP_KERNEL);
	li = kmalloc(sizeof(*li), GFP_KERNEL);
	if (!set || !cand || !li) {
		node = ERR_PTR(-ENOMEM);
		*why = "out of memory";
		goto out_free;
	}

	mutex_lock(&hbmpool_nodes_lock);
	for_each_set_bit(bit, r->nodes, HBMPOOL_MAX_NODES) {
		struct hbmpool_node *nd = __hbmpool_node_lookup(bit);
		struct hbmpool_pcand *c;
		int blocked;

		if (to != U32_MAX && bit != to)
			continue;
		if (!nd) {
			if (to != U32_MAX) {
				node = ERR_PTR(-ENODEV);
				*why = "no such node";
				goto out_unlock;
			}
			continue;
		}
		if (!nd->transport) {
			if (to != U32_MAX) {
				node = ERR_PTR(-EINVAL);
				*why = "the target is this node, which serves no chunk of its own";
				goto out_unlock;
			}
			continue;
		}
		blocked = hbmpool_copy_blocked(r, i, nd, from);
		c = &cand[nr];
		hbmpool_pcand_init(c, r, nd, li);
		if (blocked)
			c->pclass = HBMPOOL_PCLASS_NEVER;
		if (to != U32_MAX && blocked == -EEXIST) {
			node = ERR_PTR(-EEXIST);
			*why = "the target already holds the chunk";
			goto out_unlock;
		}
		if (to != U32_MAX && blocked) {
			node = ERR_PTR(-EINVAL);
			*why = "another copy of the chunk is in the target's failure domain";
			goto out_unlock;
		}
		if (to != U32_MAX && nd->conf.draining) {
			node = ERR_PTR(-EINVAL);
			*why = "the target is draining";
			goto out_unlock;
		}
		if (to != U32_MAX && c->pclass == HBMPOOL_PCLASS_NEVER) {
			node = ERR_PTR(-ENODEV);
			*why = "the target is not reachable (state, link)";
			goto out_unlock;
		}
		if (c->pclass != HBMPOOL_PCLASS_NEVER)
			c->free = nd->transport->ops->free_bytes(nd);
		set[nr++] = nd;
	}
	while ((k = hbmpool_pchoose_target(cand, nr, r->policy, len)) >= 0) {
		/* before the home answers: a loss meanwhile makes the copy lost */
		*gen = hbmpool_node_data_gen(set[k]);
		if (!set[k]->transport->ops->alloc_chunks(set[k], len, offset)) {
			node = set[k];
			hbmpool_node_get(node);
			break;
		}
		cand[k].pclass = HBMPOOL_PCLASS_NEVER;
	}
	if (IS_ERR(node) && to != U32_MAX)
		*why = "the target has no room";
out_unlock:
	mutex_unlock(&hbmpool_nodes_lock);
out_free:
	kfree(li);
	kfree(cand);
	kfree(set);
	return node;
}

/**
 * hbmpool_map_lost - whether a chunk's data is gone
 * @map: the chunk's map, under RCU or its region's maps_lock
 *
 * A chunk is lost when no copy is good: each lives on memory its home lost
 * since the copy was placed (the node's data generation moved on, or it was
 * fenced), or missed a write.  Such copies are never read.  A SYNCING copy
 * on lost memory only fails its move.
 */
bool hbmpool_map_lost(const struct hbmpool_chunk_map *map)
{
	return !hbmpool_map_good(map);
}

/*
 * Chunks of @r that are lost (hbmpool_map_lost()), and in *@degraded those
 * with fewer good copies than replicas (lost ones included).
 */
u32 hbmpool_region_lost_chunks(struct hbmpool_region *r, u32 *degraded)
{
	const struct hbmpool_chunk_map *map;
	u32 i, lost = 0, deg = 0, good;

	rcu_read_lock();
	for (i = 0; r->placed && i < r->nr_chunks; i++) {
		map = rcu_dereference(r->chunks[i].map);
		if (!map)
			continue;
		good = hbmpool_map_good(map);
		lost += !good;
		deg += good < r->replicas;
	}
	rcu_read_unlock();
	if (degraded)
		*degraded = deg;
	return lost;
}
