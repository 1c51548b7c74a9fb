/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/*
 * The hbmpool generic netlink family.  The source of truth is
 * Documentation/netlink/specs/hbmpool.yaml; these enums mirror it, value
 * for value (make check compares the spec, this header and the running
 * kernel's policy).
 */
#ifndef _UAPI_LINUX_HBMPOOL_NL_H
#define _UAPI_LINUX_HBMPOOL_NL_H

#define HBMPOOL_FAMILY_NAME	"hbmpool"
#define HBMPOOL_FAMILY_VERSION	1
#define HBMPOOL_MCGRP_MONITOR	"monitor"

enum hbmpool_nl_node_state {
	HBMPOOL_NODE_STATE_LIVE = 0,
	HBMPOOL_NODE_STATE_UNREACHABLE = 1,
	HBMPOOL_NODE_STATE_FENCED = 2,
	HBMPOOL_NODE_STATE_REMOVED = 3,
};

enum hbmpool_nl_link_type {
	HBMPOOL_LINK_TYPE_LOCAL = 0,
	HBMPOOL_LINK_TYPE_SCALEUP = 1,
	HBMPOOL_LINK_TYPE_SCALEOUT = 2,
	HBMPOOL_LINK_TYPE_SCALEACROSS = 3,
};

/* attribute-set "params" */
enum {
	HBMPOOL_A_PARAMS_CACHE_BUDGET_PAGES = 1,	/* u64 */
	HBMPOOL_A_PARAMS_FETCH_TIMEOUT_MS = 2,		/* u32 */
	HBMPOOL_A_PARAMS_PAD = 3,
	HBMPOOL_A_PARAMS_SEQ = 4,			/* u64 */

	__HBMPOOL_A_PARAMS_MAX,
	HBMPOOL_A_PARAMS_MAX = (__HBMPOOL_A_PARAMS_MAX - 1)
};

/* attribute-set "stats": counters, each u64 */
enum {
	HBMPOOL_A_STATS_FAULTS = 1,
	HBMPOOL_A_STATS_FETCHES = 2,
	HBMPOOL_A_STATS_BYTES_FETCHED = 3,
	HBMPOOL_A_STATS_WRITEBACKS = 4,
	HBMPOOL_A_STATS_BYTES_WRITTEN_BACK = 5,
	HBMPOOL_A_STATS_EVICTIONS = 6,
	HBMPOOL_A_STATS_ERRORS = 7,
	HBMPOOL_A_STATS_TIMEOUTS = 8,
	HBMPOOL_A_STATS_OVER_BUDGET = 9,
	HBMPOOL_A_STATS_SHRINKER_FREED = 10,
	HBMPOOL_A_STATS_CACHED_PAGES = 11,
	HBMPOOL_A_STATS_DIRTY_PAGES = 12,
	HBMPOOL_A_STATS_LAT_HIST = 13,		/* u64, once per log2-ns bucket, in order */
	HBMPOOL_A_STATS_PAD = 14,

	__HBMPOOL_A_STATS_MAX,
	HBMPOOL_A_STATS_MAX = (__HBMPOOL_A_STATS_MAX - 1)
};

/* attribute-set "node" */
enum {
	HBMPOOL_A_NODE_ID = 1,			/* u32 */
	HBMPOOL_A_NODE_TRANSPORT = 2,		/* string */
	HBMPOOL_A_NODE_DISTANCE = 3,		/* u32 */
	HBMPOOL_A_NODE_LINK_TYPE = 4,		/* u32, enum hbmpool_nl_link_type */
	HBMPOOL_A_NODE_STATE = 5,		/* u32, enum hbmpool_nl_node_state */
	HBMPOOL_A_NODE_CAPACITY = 6,		/* u64, bytes */
	HBMPOOL_A_NODE_FREE = 7,		/* u64, bytes */
	HBMPOOL_A_NODE_STATS = 8,		/* nest, attribute-set "stats" */
	HBMPOOL_A_NODE_PAD = 9,
	HBMPOOL_A_NODE_SEQ = 10,		/* u64 */

	__HBMPOOL_A_NODE_MAX,
	HBMPOOL_A_NODE_MAX = (__HBMPOOL_A_NODE_MAX - 1)
};

enum {
	HBMPOOL_CMD_PARAMS_GET = 1,
	HBMPOOL_CMD_PARAMS_SET = 2,
	HBMPOOL_CMD_STATS_GET = 3,
	HBMPOOL_CMD_NODE_GET = 4,
	HBMPOOL_CMD_NODE_ADD_NTF = 5,
	HBMPOOL_CMD_NODE_DEL_NTF = 6,
	HBMPOOL_CMD_NODE_CHANGE_NTF = 7,
	HBMPOOL_CMD_PARAMS_CHANGE_NTF = 8,
	HBMPOOL_CMD_NODE_NEW = 9,
	HBMPOOL_CMD_NODE_DEL = 10,

	__HBMPOOL_CMD_MAX,
	HBMPOOL_CMD_MAX = (__HBMPOOL_CMD_MAX - 1)
};

#endif /* _UAPI_LINUX_HBMPOOL_NL_H */
