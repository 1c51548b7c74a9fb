/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hbmlib: the pure logic shared by hbmbench, hbmdemo and the selftests.
 *
 * Nothing here touches the kernel, so all of it is covered by the host-side
 * unit test (selftests/unit/hbmlib_unit.c, "make -C selftests unit").
 * Functions that can fail return 0 or a negative errno.
 */
#ifndef HBMLIB_H
#define HBMLIB_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>
#include <linux/hbmpool.h>

/*
 * Sizes: decimal or 0x-hex, optional binary suffix k/K, m/M, g/G, t/T
 * (optionally followed by "iB" or "B"), e.g. "4096", "64k", "2MiB", "0x1000".
 * -EINVAL on junk or an empty string, -ERANGE on overflow.
 */
int hbm_parse_size(const char *s, uint64_t *out);

/* Plain unsigned integer (decimal or 0x-hex), no suffix, no sign. */
int hbm_parse_u64(const char *s, uint64_t *out);

/*
 * Node sets: node n is bit (n % 64) of word n / 64, the layout of the
 * bitmaps the ioctls take (nodes_ptr, nr_node_bits), so that w can be handed
 * to the kernel as it is, with nr_node_bits = HBM_NODESET_BITS.  Ids are
 * 0..HBMPOOL_MAX_NODES-1; the helpers ignore (set, clear) or report absent
 * (test) any id beyond, never touching memory outside the set.
 */
#define HBM_NODESET_BITS	HBMPOOL_MAX_NODES
#define HBM_NODESET_WORDS	(HBM_NODESET_BITS / 64)

struct hbm_nodeset {
	uint64_t w[HBM_NODESET_WORDS];
};

void hbm_nodeset_zero(struct hbm_nodeset *s);
void hbm_nodeset_set(struct hbm_nodeset *s, unsigned int id);
void hbm_nodeset_clear(struct hbm_nodeset *s, unsigned int id);
int hbm_nodeset_test(const struct hbm_nodeset *s, unsigned int id);
int hbm_nodeset_empty(const struct hbm_nodeset *s);
int hbm_nodeset_equal(const struct hbm_nodeset *a, const struct hbm_nodeset *b);
/* Number of ids in the set. */
unsigned int hbm_nodeset_count(const struct hbm_nodeset *s);
/* Smallest id in the set, or -1 if it is empty. */
int hbm_nodeset_first(const struct hbm_nodeset *s);
/* Smallest id above prev in the set, or -1; hbm_nodeset_next(s, -1) is first. */
int hbm_nodeset_next(const struct hbm_nodeset *s, int prev);
/* Bits a bitmap needs to hold the set: its highest id + 1 (0 if empty). */
unsigned int hbm_nodeset_bits(const struct hbm_nodeset *s);
/*
 * The set as a list, "1,3,5-7" (the format hbm_parse_nodelist reads and the
 * fdinfo "nodes" line shows), "" if empty; truncated to len - 1 characters
 * if longer.  Returns buf.
 */
const char *hbm_nodeset_format(const struct hbm_nodeset *s, char *buf, size_t len);
/* s = { ids[0], ..., ids[n - 1] }; returns s. */
struct hbm_nodeset *hbm_nodeset_of(struct hbm_nodeset *s, const unsigned int *ids,
				   size_t n);
/*
 * HBM_NODES(3, 700): a pointer to a new set of those ids (at least one), a
 * compound literal that lives until the end of the enclosing block, e.g.
 * hbm_create_init(&rc, len, 0, HBMPOOL_POLICY_BIND, HBM_NODES(3, 700), 0, "");
 */
#define HBM_NODES(...)							\
	hbm_nodeset_of(&(struct hbm_nodeset){ { 0 } },			\
		       (const unsigned int[]){ __VA_ARGS__ },		\
		       sizeof((const unsigned int[]){ __VA_ARGS__ }) /	\
		       sizeof(unsigned int))

/*
 * Node lists: "1,3,5-7" -> the set of those ids.  Ids must be in
 * [min_id, max_id] (max_id < HBMPOOL_MAX_NODES); ranges must ascend.
 * -EINVAL otherwise, and *set is left alone.
 */
int hbm_parse_nodelist(const char *s, unsigned int min_id, unsigned int max_id,
		       struct hbm_nodeset *set);

/*
 * Test pattern.  Every byte depends on its absolute offset in the region and
 * on a seed, so a page landing at the wrong address, a stale page or a page
 * of another region is detected.  The 64-bit word at an 8-aligned offset o is
 * hbm_pattern_word(o, seed) (a bijection of o ^ seed), stored little-endian.
 */
uint64_t hbm_pattern_word(uint64_t offset, uint64_t seed);
uint8_t hbm_pattern_byte(uint64_t offset, uint64_t seed);
/* Fill buf, which holds the bytes at [offset, offset + len). */
void hbm_pattern_fill(void *buf, size_t len, uint64_t offset, uint64_t seed);
/*
 * Number of bytes of buf that differ from the pattern; *first_bad gets the
 * offset (region offset, not buffer index) of the first one, if any.
 */
size_t hbm_pattern_check(const void *buf, size_t len, uint64_t offset,
			 uint64_t seed, uint64_t *first_bad);

/* xorshift64* PRNG; state must not be 0 (0 is replaced by a constant). */
uint64_t hbm_rand(uint64_t *state);
/* v[i] = a uniformly shuffled permutation of 0..n-1 (Fisher-Yates). */
void hbm_permutation(uint32_t *v, size_t n, uint64_t seed);

/* Percentiles of samples (nearest-rank).  hbm_sort_u64 sorts ascending. */
void hbm_sort_u64(uint64_t *v, size_t n);
/* p in [0, 100]; v sorted; n > 0.  p = 0 gives the minimum. */
uint64_t hbm_percentile_sorted(const uint64_t *v, size_t n, double p);

/*
 * Percentiles of a log2 histogram (bucket i = [2^i, 2^(i+1)) ns).  Returns
 * the index of the bucket holding the p-th percentile (nearest rank), or -1
 * if the histogram is empty.
 */
int hbm_hist_percentile(const __u64 *hist, unsigned int nbuckets, double p);
uint64_t hbm_hist_total(const __u64 *hist, unsigned int nbuckets);

/*
 * Model of the placement policies of the admin guide, used to predict the
 * chunk table the kernel must return.  Every node given is taken as
 * eligible (live, link up, not draining); a node is used for a chunk only
 * while it has room for it.
 *   bind:       nodes of the set by (distance, id) ascending; each chunk goes
 *               to the first node with room (fill nearest, then spill).
 *   interleave: round robin over the nodes of the set by ascending id,
 *               skipping those without room: chunk i on the (i mod n)-th
 *               node while all have room.
 *   preferred:  the preferred node while it has room, then the other nodes of
 *               the set by (distance, id).
 *   weighted-interleave: smooth weighted round robin over the nodes with
 *               room: each gains its weight, the one with the most credit
 *               (lowest id on a tie) takes the chunk and loses the sum.
 * self is this node's id (struct hbmpool_features.self_node): the set must
 * not hold it.  nodes[] describes the other nodes (an entry for self, or for
 * a node outside the set, is ignored; ids repeated: the first counts); its
 * weight is the effective weight (0 counts as 1).
 * Each chunk reserves chunk_size bytes.  On success returns the number of
 * chunks and writes min(that, max_out) node ids to out; the free_bytes of
 * nodes[] are not modified.  -EINVAL for a bad policy, an empty set, a set
 * holding self or a bad preferred node; -ENODEV for a node of the set
 * missing from nodes[]; -ENOSPC if it does not fit; -ENOMEM.
 */
struct hbm_node_model {
	uint32_t id;
	uint32_t distance;
	uint64_t free_bytes;
	uint32_t weight;
};

int hbm_place(uint32_t policy, const struct hbm_node_model *nodes, size_t nnodes,
	      const struct hbm_nodeset *set, uint32_t self, uint32_t preferred,
	      uint64_t length, uint64_t chunk_size, uint32_t *out, size_t max_out);

/* "1.5 GiB"-style human size into buf; returns buf. */
const char *hbm_human_size(uint64_t bytes, char *buf, size_t len);

/*
 * For a process that holds something until told to stop: SIGTERM and SIGINT
 * set *flag, and are blocked from now on; *waitmask is the mask to
 * sigsuspend() with, which lets them in.  One flag per process.
 */
void hbm_stop_signals(volatile sig_atomic_t *flag, sigset_t *waitmask);

#endif /* HBMLIB_H */
