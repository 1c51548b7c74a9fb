// SPDX-License-Identifier: GPL-2.0
/*
 * Placement: which nodes hold the chunks of a region, under its policy, and
 * the chunk maps that record it.
 *
 * A chunk's map lists its copies (one today; replicas later) with a
 * generation.  Maps are published with rcu_assign_pointer() and read under
 * rcu_read_lock() through hbmpool_read_copy() and hbmpool_write_set(); a map
 * that changes is replaced whole, never edited in place.  Each copy holds a
 * reference on its node.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "hbmpool.h"

static int hbmpool_node_cmp(const void *a, const void *b)
{
	const struct hbmpool_node *x = *(const struct hbmpool_node **)a;
	const struct hbmpool_node *y = *(const struct hbmpool_node **)b;

	/* under hbmpool_nodes_lock, which node-set holds to change them */
	if (x->conf.distance != y->conf.distance)
		return x->conf.distance < y->conf.distance ? -1 : 1;
	return x->id < y->id ? -1 : 1;
}

static u64 hbmpool_chunk_len(struct hbmpool_region *r, u32 i)
{
	return min_t(u64, r->chunk_size, r->length - ((u64)i << r->chunk_shift));
}

/*
 * Asks @node, the home, for @len bytes and records them as the only copy of
 * chunk @i: the home chooses the offset, so chunks of different clients
 * never overlap.
 */
static bool hbmpool_chunk_alloc(struct hbmpool_region *r, u32 i,
				struct hbmpool_node *node)
{
	struct hbmpool_chunk_map *map;
	u64 offset;
	u32 gen;

	if (!node)
		return false;
	map = kmalloc(struct_size(map, copies, 1), GFP_KERNEL);
	if (!map)
		return false;
	/* before the home answers: a loss meanwhile makes the chunk lost, not wrong */
	gen = hbmpool_node_data_gen(node);
	if (node->transport->ops->alloc_chunks(node, hbmpool_chunk_len(r, i),
					       &offset)) {
		kfree(map);
		return false;
	}
	hbmpool_node_get(node);
	map->gen = 1;
	map->nr_copies = 1;
	map->copies[0].node = node;
	map->copies[0].offset = offset;
	map->copies[0].gen = gen;
	rcu_assign_pointer(r->chunks[i].map, map);
	return true;
}

/* Frees the maps of chunks [0, @nr): nobody reads them any more. */
static void hbmpool_chunks_free(struct hbmpool_region *r, u32 nr)
{
	u32 i, c;

	for (i = 0; i < nr; i++) {
		struct hbmpool_chunk_map *map;

		map = rcu_dereference_protected(r->chunks[i].map, true);
		if (!map)
			continue;
		for (c = 0; c < map->nr_copies; c++) {
			struct hbmpool_node *node = map->copies[c].node;

			/* a home that lost its memory holds nothing of ours */
			if (map->copies[c].gen == hbmpool_node_data_gen(node))
				node->transport->ops->free_chunks(node, map->copies[c].offset,
								  hbmpool_chunk_len(r, i),
								  map->copies[c].gen);
			hbmpool_node_put(node);
		}
		RCU_INIT_POINTER(r->chunks[i].map, NULL);
		kfree(map);
		if (!(i % 1024))
			cond_resched();
	}
}

/*
 * Chooses a home for every chunk of @r under its policy and reserves the
 * capacity; all or nothing.  -ENODEV: a node of the set does not exist;
 * -ENOSPC: the set lacks the room.  Serialised with node removal by
 * hbmpool_nodes_lock.
 */
int hbmpool_place(struct hbmpool_region *r)
{
	struct hbmpool_node **set, **ordered;
	unsigned int nr = 0, j, bit;
	u64 avail = 0;
	u32 i;
	int err = 0;

	j = bitmap_weight(r->nodes, HBMPOOL_MAX_NODES);
	set = kcalloc(2 * j, sizeof(*set), GFP_KERNEL);
	if (!set)
		return -ENOMEM;
	ordered = set + j;

	mutex_lock(&hbmpool_nodes_lock);
	for_each_set_bit(bit, r->nodes, HBMPOOL_MAX_NODES) {
		set[nr] = __hbmpool_node_lookup(bit);
		if (!set[nr] || !set[nr]->transport) {
			err = -ENODEV;
			goto out_unlock;
		}
		avail += set[nr]->transport->ops->free_bytes(set[nr]);
		nr++;
	}
	if (r->length > avail) {
		err = -ENOSPC;
		goto out_unlock;
	}
	memcpy(ordered, set, nr * sizeof(set[0]));
	sort(ordered, nr, sizeof(ordered[0]), hbmpool_node_cmp, NULL);

	for (i = 0; i < r->nr_chunks; i++) {
		bool ok = false;

		switch (r->policy) {
		case HBMPOOL_POLICY_INTERLEAVE:
			ok = hbmpool_chunk_alloc(r, i, set[i % nr]);
			break;
		case HBMPOOL_POLICY_PREFERRED:
			ok = hbmpool_chunk_alloc(r, i,
						 __hbmpool_node_lookup(r->preferred));
			fallthrough;
		case HBMPOOL_POLICY_BIND:
			for (j = 0; !ok && j < nr; j++)
				ok = hbmpool_chunk_alloc(r, i, ordered[j]);
			break;
		}
		if (!ok) {
			hbmpool_chunks_free(r, i);
			err = -ENOSPC;
			goto out_unlock;
		}
		if (!(i % 1024))
			cond_resched();
	}
out_unlock:
	mutex_unlock(&hbmpool_nodes_lock);
	kfree(set);
	return err;
}

/* Gives a region's capacity back to its homes; drops its node references. */
void hbmpool_unplace(struct hbmpool_region *r)
{
	hbmpool_chunks_free(r, r->nr_chunks);
}

/* Whether a copy of chunk @i of @r lives on @node. */
bool hbmpool_chunk_on_node(struct hbmpool_region *r, u32 i,
			   struct hbmpool_node *node)
{
	const struct hbmpool_chunk_map *map;
	bool on = false;
	u32 c;

	rcu_read_lock();
	map = rcu_dereference(r->chunks[i].map);
	for (c = 0; map && c < map->nr_copies; c++)
		on |= map->copies[c].node == node;
	rcu_read_unlock();
	return on;
}

/* Chunks of @r whose copy lives on memory its home lost (none are read). */
u32 hbmpool_region_lost_chunks(struct hbmpool_region *r)
{
	const struct hbmpool_chunk_map *map;
	u32 i, c, lost = 0;

	rcu_read_lock();
	for (i = 0; r->placed && i < r->nr_chunks; i++) {
		map = rcu_dereference(r->chunks[i].map);
		for (c = 0; map && c < map->nr_copies; c++) {
			if (map->copies[c].gen !=
			    hbmpool_node_data_gen(map->copies[c].node)) {
				lost++;
				break;
			}
		}
	}
	rcu_read_unlock();
	return lost;
}
