/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * hbmpool: pooled remote HBM exposed as mmap-able, page-fault-driven regions.
 *
 * This header is the only interface shared by hbmpool.ko and user space.
 *
 * Conventions for every ioctl structure:
 *  - The first member is "size": the caller sets it to sizeof() of the
 *    structure it was compiled against.  The kernel accepts any size from the
 *    first published version (HBMPOOL_*_SIZE_VER0) up to the page size
 *    (smaller: -EINVAL; larger: -E2BIG); bytes it does not know must be zero
 *    (else -E2BIG), a missing tail is treated as zero.
 *    Output is written up to min(size, kernel's sizeof()).
 *  - Every "reserved" or padding member, and every output member marked
 *    "in: zero", must be zero on input (else -EINVAL).
 *  - On output, "size" holds sizeof() of the kernel's structure, so that a
 *    caller learns which members the kernel knows.
 *  - Unknown flag bits give -EINVAL; unknown ioctl numbers give -ENOTTY.
 *  - The ioctl number is matched on type and number; its size bits are not
 *    used, the "size" member is.
 *  - Pointers travel as __u64.
 */
#ifndef _UAPI_LINUX_HBMPOOL_H
#define _UAPI_LINUX_HBMPOOL_H

#include <linux/const.h>
#include <linux/types.h>
#include <linux/ioctl.h>

#define HBMPOOL_DEV_NAME	"hbmpool"
#define HBMPOOL_API_VERSION	1

/*
 * Node ids are 0..HBMPOOL_MAX_NODES-1 and domain-wide: this node's own id is
 * the domain's choice (struct hbmpool_features.self_node, or the netlink
 * family's domain-get), not a fixed number.
 */
#define HBMPOOL_MAX_NODES	1024
#define HBMPOOL_NAME_LEN	32

/*
 * Node sets: a bitmap of __u64 words in user memory, node n being bit
 * (n % 64) of word (n / 64), with its size in bits, as mbind(2) takes them.
 * The words read or written are DIV_ROUND_UP(nr_node_bits, 64).
 */
#define HBMPOOL_NODE_BITS_MAX	32768	/* largest nr_node_bits accepted */

/* NUMA-style distances: 10 is local. */
#define HBMPOOL_DISTANCE_LOCAL	10
#define HBMPOOL_DISTANCE_MAX	255

/*
 * Node weights for weighted interleave (netlink node-set weight): 0 asks
 * for the automatic weight (capacity in MiB * 10 / distance, at least 1),
 * otherwise 1..HBMPOOL_WEIGHT_MAX.
 */
#define HBMPOOL_WEIGHT_MAX	65535

/*
 * Region placement policies (struct hbmpool_region_create.policy).  Each
 * chooses among the eligible nodes of the set: live, link up, not
 * draining, with room for the chunk; a node whose link is degraded only
 * when no other is eligible.
 */
#define HBMPOOL_POLICY_BIND		0	/* nodes of the set, nearest first */
#define HBMPOOL_POLICY_INTERLEAVE	1	/* round-robin over the set */
#define HBMPOOL_POLICY_PREFERRED	2	/* preferred node, then the rest by distance */
#define HBMPOOL_POLICY_WEIGHTED_INTERLEAVE 3	/* in proportion to the nodes' weights */
#define HBMPOOL_POLICY_MAX		HBMPOOL_POLICY_WEIGHTED_INTERLEAVE

#define HBMPOOL_CHUNK_DEFAULT	(2ULL << 20)	/* 2 MiB */
#define HBMPOOL_CHUNK_MIN	4096ULL		/* PAGE_SIZE on x86-64 */
#define HBMPOOL_CHUNK_MAX	(1024ULL * 1024 * 1024)	/* 1 GiB */

/* Feature bits reported by HBMPOOL_IOC_GET_FEATURES. */
#define HBMPOOL_FEAT_POLICY_BIND	_BITULL(0)
#define HBMPOOL_FEAT_POLICY_INTERLEAVE	_BITULL(1)
#define HBMPOOL_FEAT_POLICY_PREFERRED	_BITULL(2)
#define HBMPOOL_FEAT_REGION_INFO	_BITULL(3)
#define HBMPOOL_FEAT_REGION_STATS	_BITULL(4)
#define HBMPOOL_FEAT_REGION_SYNC	_BITULL(5)
#define HBMPOOL_FEAT_REGION_PREFETCH	_BITULL(6)
#define HBMPOOL_FEAT_REGION_OPEN	_BITULL(7)	/* shared regions, REGION_OPEN */
#define HBMPOOL_FEAT_POLICY_WEIGHTED_INTERLEAVE _BITULL(8)
#define HBMPOOL_FEAT_RESYNC		_BITULL(9)	/* chunk moves: resync-new */
#define HBMPOOL_FEAT_REPLICAS		_BITULL(10)	/* region_create.replicas */

/* HBMPOOL_IOC_GET_FEATURES, on /dev/hbmpool. All members are output. */
struct hbmpool_features {
	__u32 size;		/* in */
	__u32 api_version;	/* out: HBMPOOL_API_VERSION */
	__u64 features;		/* out: HBMPOOL_FEAT_* */
	__u32 max_nodes;	/* out: HBMPOOL_MAX_NODES */
	__u32 page_size;	/* out: fetch granule in bytes */
	__u32 self_node;	/* out: this node's id in the domain */
	__u32 chunk_info_size;	/* out: sizeof(struct hbmpool_chunk_info) */
	__u64 reserved[3];	/* in: zero */
};

#define HBMPOOL_FEATURES_SIZE_VER0	56

/*
 * HBMPOOL_IOC_REGION_CREATE, on /dev/hbmpool.  Reserves the region's
 * capacity on the nodes its policy chooses and returns a new file descriptor
 * (O_RDWR | O_CLOEXEC) to mmap with MAP_SHARED.
 *
 * A region lives while a file descriptor or a mapping of it exists.  With
 * HBMPOOL_REGION_SHARED it is also found by its name: HBMPOOL_IOC_REGION_OPEN
 * gives other processes of this node a descriptor of the same region, and
 * every mapping of it, in any process, sees one copy through one cache.  A
 * region's descriptor can also be opened again through /proc/PID/fd/N, for
 * tools that take a path.  Both are checked against the region's owner (the
 * creator's fsuid and fsgid) and mode, as for a file.
 *
 * The node set is a bitmap (see "Node sets" above) of other nodes of the
 * domain: this node's own id and ids of HBMPOOL_MAX_NODES and above must not
 * be in it.
 *
 * Errors: EINVAL (bad flags, reserved, policy, length, chunk size, node set
 * empty or with this node or an id out of range, nr_node_bits 0 or above
 * HBMPOOL_NODE_BITS_MAX, name not NUL-terminated or empty for a shared
 * region, mode outside 0777, more than 2^20 chunks), E2BIG/EINVAL (size,
 * see above), EFAULT (nodes_ptr), EEXIST (a shared region of that name
 * exists), ENODEV (a node in the set does not exist), ENOSPC (the nodes lack
 * the capacity), EMFILE/ENFILE, ENOMEM.
 */
struct hbmpool_region_create {
	__u32 size;		/* in: sizeof(struct hbmpool_region_create) */
	__u32 flags;		/* in: HBMPOOL_REGION_* */
	__u64 length;		/* in: bytes, > 0, multiple of the page size */
	__u64 chunk_size;	/* in: 0 (default) or a power of two in [CHUNK_MIN, CHUNK_MAX] */
	__u64 nodes_ptr;	/* in: user pointer to the node set's bitmap */
	__u32 nr_node_bits;	/* in: bits of the bitmap, 1..HBMPOOL_NODE_BITS_MAX */
	__u32 policy;		/* in: HBMPOOL_POLICY_* */
	__u32 preferred_node;	/* in: PREFERRED only (must be in the set); else zero */
	__u32 mode;		/* in: permission bits (0..0777) for opening it again; 0: 0600 */
	char name[HBMPOOL_NAME_LEN];	/* in: NUL-terminated, may be empty */
	__u32 region_id;	/* out */
	__u32 fd;		/* out: the region's file descriptor (also the return value) */
	__u32 replicas;		/* in: copies of each chunk, 1..HBMPOOL_REPLICAS_MAX; 0: 1 */
	__u32 pad;		/* in: zero */
	__u64 reserved[3];	/* in: zero */
};

#define HBMPOOL_REGION_CREATE_SIZE_VER0	120

/*
 * The most copies of a chunk a region may ask for.  Every copy lives on
 * another node of the set, and on another failure domain where the nodes
 * name theirs; a write-back reaches every up-to-date copy, a fetch is
 * served by the nearest one that is reachable (Documentation/design.rst,
 * "Replicated regions").
 */
#define HBMPOOL_REPLICAS_MAX	4

/* struct hbmpool_region_create.flags */
#define HBMPOOL_REGION_SHARED	0x1U	/* named; others may open it by name */
#define HBMPOOL_REGION_FLAGS	HBMPOOL_REGION_SHARED

/*
 * HBMPOOL_IOC_REGION_OPEN, on /dev/hbmpool.  Returns a new file descriptor
 * (O_RDWR | O_CLOEXEC) of the shared region called @name.
 *
 * Errors: EINVAL (flags, reserved, name not NUL-terminated or empty), ENOENT
 * (no shared region of that name), EACCES (its mode does not grant the
 * caller read and write), EMFILE/ENFILE, ENOMEM.
 */
struct hbmpool_region_open {
	__u32 size;		/* in: sizeof(struct hbmpool_region_open) */
	__u32 flags;		/* in: zero */
	char name[HBMPOOL_NAME_LEN];	/* in: NUL-terminated */
	__u32 region_id;	/* out */
	__u32 fd;		/* out: also the return value */
	__u64 reserved[2];	/* in: zero */
};

#define HBMPOOL_REGION_OPEN_SIZE_VER0	64

/*
 * One entry of the placement table returned by HBMPOOL_IOC_REGION_INFO.
 * Entries lie chunk_entry_size bytes apart, so that the entry can grow
 * (e.g. with every copy of a replicated chunk) as the other structures do.
 */
struct hbmpool_chunk_info {
	__u32 node;		/* home node of the chunk's first copy */
	__u32 generation;	/* changes whenever the chunk's copies change */
	__u64 node_offset;	/* byte offset of the chunk in the node's segment */
	__u32 nr_copies;	/* copies of the chunk (up to date or not) */
	__u32 good_copies;	/* of which up to date, on memory their home still has */
};

#define HBMPOOL_CHUNK_INFO_SIZE_VER0	24

/*
 * HBMPOOL_IOC_REGION_INFO, on a region fd.
 *
 * If chunks_ptr is non-zero, up to nr_chunks_max entries are written there,
 * chunk_entry_size bytes apart (at least HBMPOOL_CHUNK_INFO_SIZE_VER0, a
 * multiple of 8, at most the page size): the members the kernel knows, and
 * zeros in the rest of each entry.
 *
 * If nodes_ptr is non-zero, the node set is written there as a bitmap of
 * DIV_ROUND_UP(nr_node_bits, 64) words (see "Node sets"); nr_node_bits
 * comes back as the bits the set needs (its highest id + 1): a caller whose
 * bitmap was smaller got the set cut short.
 *
 * Errors: EINVAL (flags, reserved, chunk_entry_size, nr_node_bits above
 * HBMPOOL_NODE_BITS_MAX), EFAULT, EINTR.
 */
struct hbmpool_region_info {
	__u32 size;		/* in */
	__u32 flags;		/* in: zero; out: zero */
	__u64 length;		/* out */
	__u64 chunk_size;	/* out */
	__u64 nodes_ptr;	/* in: user pointer to a bitmap, or 0 */
	__u32 nr_node_bits;	/* in: bits at nodes_ptr; out: bits the set needs */
	__u32 nr_nodes;		/* out: nodes in the set */
	__u32 policy;		/* out */
	__u32 preferred_node;	/* out */
	char name[HBMPOOL_NAME_LEN];	/* out */
	__u32 region_id;	/* out */
	__u32 nr_chunks;	/* out: chunks in the region */
	__u64 chunks_ptr;	/* in: user pointer to the chunk entries, or 0 */
	__u32 nr_chunks_max;	/* in: entries at chunks_ptr */
	__u32 chunk_entry_size;	/* in: bytes per entry; out: the kernel's entry size */
	__u64 cached_pages;	/* out: pages of the region in the local cache */
	__u64 dirty_pages;	/* out: of which dirty */
	__u32 replicas;		/* out: copies each chunk should have */
	__u32 degraded_chunks;	/* out: chunks with fewer good copies than replicas */
	__u32 lost_chunks;	/* out: chunks with no good copy left */
	__u32 pad;		/* in: zero; out: zero */
	__u64 reserved[2];	/* in: zero */
};

#define HBMPOOL_REGION_INFO_SIZE_VER0	152

/* Fetch latency histogram: bucket i counts latencies in [2^i, 2^(i+1)) ns. */
#define HBMPOOL_LAT_BUCKETS	32

/* HBMPOOL_IOC_REGION_STATS, on a region fd.  Counters since creation. */
struct hbmpool_stats {
	__u32 size;		/* in */
	__u32 pad;		/* in: zero */
	__u64 faults;		/* page faults handled (retries not counted again) */
	__u64 fetches;		/* pages fetched from a home node */
	__u64 bytes_fetched;
	__u64 writebacks;	/* pages written back to a home node */
	__u64 bytes_written_back;
	__u64 evictions;	/* pages dropped from the local cache */
	__u64 errors;		/* failed fetches and write-backs (timeouts included) */
	__u64 timeouts;		/* fetches and write-backs that outlasted the timeout */
	__u64 lat_hist[HBMPOOL_LAT_BUCKETS];	/* fetch latency, log2 ns buckets */
	__u64 reserved[4];	/* in: zero; out: zero */
};

#define HBMPOOL_STATS_SIZE_VER0		360

/*
 * HBMPOOL_IOC_REGION_SYNC and HBMPOOL_IOC_REGION_PREFETCH, on a region fd.
 * offset and length are page aligned; length 0 means "to the end".
 *
 * SYNC writes back every dirty cached page of the range and waits; -EIO if
 * any could not be written back (those pages stay dirty and cached: no data
 * is dropped).  PREFETCH fetches pages of the range that are not cached into
 * the cache, without mapping them, and stops when the cache reaches 15/16
 * of its budget, so that it never causes an eviction; it is a
 * hint: failures are counted, not returned.
 */
struct hbmpool_range {
	__u32 size;		/* in */
	__u32 flags;		/* in: zero */
	__u64 offset;		/* in */
	__u64 length;		/* in */
	__u64 pages_done;	/* in: zero; out: pages written back / fetched */
	__u64 pages_failed;	/* in: zero; out: pages that failed */
	__u64 reserved[2];	/* in: zero */
};

#define HBMPOOL_RANGE_SIZE_VER0		56

#define HBMPOOL_IOC_MAGIC		0xB7

#define HBMPOOL_IOC_GET_FEATURES	_IOWR(HBMPOOL_IOC_MAGIC, 0x00, struct hbmpool_features)
#define HBMPOOL_IOC_REGION_CREATE	_IOWR(HBMPOOL_IOC_MAGIC, 0x01, struct hbmpool_region_create)
#define HBMPOOL_IOC_REGION_OPEN		_IOWR(HBMPOOL_IOC_MAGIC, 0x02, struct hbmpool_region_open)
#define HBMPOOL_IOC_REGION_INFO		_IOWR(HBMPOOL_IOC_MAGIC, 0x10, struct hbmpool_region_info)
#define HBMPOOL_IOC_REGION_STATS	_IOWR(HBMPOOL_IOC_MAGIC, 0x11, struct hbmpool_stats)
#define HBMPOOL_IOC_REGION_SYNC		_IOWR(HBMPOOL_IOC_MAGIC, 0x12, struct hbmpool_range)
#define HBMPOOL_IOC_REGION_PREFETCH	_IOWR(HBMPOOL_IOC_MAGIC, 0x13, struct hbmpool_range)

#endif /* _UAPI_LINUX_HBMPOOL_H */
