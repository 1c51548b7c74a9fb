// SPDX-License-Identifier: GPL-2.0
/*
 * The attribute sets of the hbmpool family (see schema.h), value for value
 * as in Documentation/netlink/specs/hbmpool.yaml and
 * uapi/linux/hbmpool_nl.h.
 */
#include <stddef.h>

#include <linux/hbmpool_nl.h>

#include "schema.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *const node_state_names[] = {
	[HBMPOOL_NODE_STATE_LIVE] = "live",
	[HBMPOOL_NODE_STATE_UNREACHABLE] = "unreachable",
	[HBMPOOL_NODE_STATE_FENCED] = "fenced",
	[HBMPOOL_NODE_STATE_REMOVED] = "removed",
};
static const char *const link_type_names[] = {
	[HBMPOOL_LINK_TYPE_LOCAL] = "local",
	[HBMPOOL_LINK_TYPE_SCALEUP] = "scaleup",
	[HBMPOOL_LINK_TYPE_SCALEOUT] = "scaleout",
	[HBMPOOL_LINK_TYPE_SCALEACROSS] = "scaleacross",
};
static const char *const link_state_names[] = {
	[HBMPOOL_LINK_STATE_DOWN] = "down",
	[HBMPOOL_LINK_STATE_UP] = "up",
};
static const char *const link_health_names[] = {
	[HBMPOOL_LINK_HEALTH_DOWN] = "down",
	[HBMPOOL_LINK_HEALTH_CONNECTING] = "connecting",
	[HBMPOOL_LINK_HEALTH_LIVE] = "live",
	[HBMPOOL_LINK_HEALTH_DEGRADED] = "degraded",
};
static const char *const policy_names[] = {
	[HBMPOOL_PLACEMENT_POLICY_BIND] = "bind",
	[HBMPOOL_PLACEMENT_POLICY_INTERLEAVE] = "interleave",
	[HBMPOOL_PLACEMENT_POLICY_PREFERRED] = "preferred",
	[HBMPOOL_PLACEMENT_POLICY_WEIGHTED_INTERLEAVE] = "weighted-interleave",
};
static const char *const resync_kind_names[] = {
	[HBMPOOL_RESYNC_KIND_MOVE] = "move",
	[HBMPOOL_RESYNC_KIND_REPLICATE] = "replicate",
};
static const char *const resync_state_names[] = {
	[HBMPOOL_RESYNC_STATE_COPYING] = "copying",
	[HBMPOOL_RESYNC_STATE_DONE] = "done",
	[HBMPOOL_RESYNC_STATE_FAILED] = "failed",
	[HBMPOOL_RESYNC_STATE_CANCELLED] = "cancelled",
};

#define ENUM(n) { n, (int)ARRAY_SIZE(n) }
const struct ctl_enum ctl_enum_node_state = ENUM(node_state_names);
const struct ctl_enum ctl_enum_link_type = ENUM(link_type_names);
const struct ctl_enum ctl_enum_link_state = ENUM(link_state_names);
const struct ctl_enum ctl_enum_policy = ENUM(policy_names);
const struct ctl_enum ctl_enum_resync_state = ENUM(resync_state_names);
const struct ctl_enum ctl_enum_resync_kind = ENUM(resync_kind_names);
static const struct ctl_enum ctl_enum_link_health = ENUM(link_health_names);

#define SET(var, sname, arr, mx) \
	const struct ctl_set var = { .name = sname, .max = mx, .attrs = arr }

static const struct ctl_attr params_attrs[HBMPOOL_A_PARAMS_MAX + 1] = {
	[HBMPOOL_A_PARAMS_CACHE_BUDGET_PAGES] = { .name = "cache-budget-pages", .kind = K_U64 },
	[HBMPOOL_A_PARAMS_FETCH_TIMEOUT_MS] = { .name = "fetch-timeout-ms", .kind = K_U32 },
	[HBMPOOL_A_PARAMS_SEQ] = { .name = "seq", .kind = K_U64 },
	[HBMPOOL_A_PARAMS_READAHEAD_MAX_PAGES] = { .name = "readahead-max-pages", .kind = K_U32 },
	[HBMPOOL_A_PARAMS_RESYNC_MBPS] = { .name = "resync-mbps", .kind = K_U32 },
	[HBMPOOL_A_PARAMS_RESYNC_JOBS] = { .name = "resync-jobs", .kind = K_U32 },
	[HBMPOOL_A_PARAMS_FULL_PCT] = { .name = "full-pct", .kind = K_U32 },
	[HBMPOOL_A_PARAMS_AVOID_DEGRADED] = { .name = "avoid-degraded", .kind = K_BOOL },
};
SET(ctl_set_params, "params", params_attrs, HBMPOOL_A_PARAMS_MAX);

static const struct ctl_attr stats_attrs[HBMPOOL_A_STATS_MAX + 1] = {
	[HBMPOOL_A_STATS_FAULTS] = { .name = "faults", .kind = K_U64 },
	[HBMPOOL_A_STATS_FETCHES] = { .name = "fetches", .kind = K_U64 },
	[HBMPOOL_A_STATS_BYTES_FETCHED] = { .name = "bytes-fetched", .kind = K_U64 },
	[HBMPOOL_A_STATS_WRITEBACKS] = { .name = "writebacks", .kind = K_U64 },
	[HBMPOOL_A_STATS_BYTES_WRITTEN_BACK] = { .name = "bytes-written-back", .kind = K_U64 },
	[HBMPOOL_A_STATS_EVICTIONS] = { .name = "evictions", .kind = K_U64 },
	[HBMPOOL_A_STATS_ERRORS] = { .name = "errors", .kind = K_U64 },
	[HBMPOOL_A_STATS_TIMEOUTS] = { .name = "timeouts", .kind = K_U64 },
	[HBMPOOL_A_STATS_OVER_BUDGET] = { .name = "over-budget", .kind = K_U64 },
	[HBMPOOL_A_STATS_SHRINKER_FREED] = { .name = "shrinker-freed", .kind = K_U64 },
	[HBMPOOL_A_STATS_CACHED_PAGES] = { .name = "cached-pages", .kind = K_U64 },
	[HBMPOOL_A_STATS_DIRTY_PAGES] = { .name = "dirty-pages", .kind = K_U64 },
	[HBMPOOL_A_STATS_LAT_HIST] = { .name = "lat-hist", .kind = K_U64, .multi = true },
};
SET(ctl_set_stats, "stats", stats_attrs, HBMPOOL_A_STATS_MAX);

static const struct ctl_attr node_attrs[HBMPOOL_A_NODE_MAX + 1] = {
	[HBMPOOL_A_NODE_ID] = { .name = "id", .kind = K_U32 },
	[HBMPOOL_A_NODE_TRANSPORT] = { .name = "transport", .kind = K_STR },
	[HBMPOOL_A_NODE_DISTANCE] = { .name = "distance", .kind = K_U32 },
	[HBMPOOL_A_NODE_LINK_TYPE] = { .name = "link-type", .kind = K_U32, .en = &ctl_enum_link_type },
	[HBMPOOL_A_NODE_STATE] = { .name = "state", .kind = K_U32, .en = &ctl_enum_node_state },
	[HBMPOOL_A_NODE_CAPACITY] = { .name = "capacity", .kind = K_U64 },
	[HBMPOOL_A_NODE_FREE] = { .name = "free", .kind = K_U64 },
	[HBMPOOL_A_NODE_STATS] = { .name = "stats", .kind = K_NEST, .nest = &ctl_set_stats },
	[HBMPOOL_A_NODE_SEQ] = { .name = "seq", .kind = K_U64 },
	[HBMPOOL_A_NODE_NAME] = { .name = "name", .kind = K_STR },
	[HBMPOOL_A_NODE_ADDR] = { .name = "addr", .kind = K_ADDR },
	[HBMPOOL_A_NODE_PORT] = { .name = "port", .kind = K_U16 },
	[HBMPOOL_A_NODE_SELF] = { .name = "self", .kind = K_FLAG },
	[HBMPOOL_A_NODE_WEIGHT] = { .name = "weight", .kind = K_U32 },
	[HBMPOOL_A_NODE_DRAINING] = { .name = "draining", .kind = K_BOOL },
	[HBMPOOL_A_NODE_EFFECTIVE_WEIGHT] = { .name = "effective-weight", .kind = K_U32 },
	[HBMPOOL_A_NODE_CHUNKS] = { .name = "chunks", .kind = K_U32 },
	[HBMPOOL_A_NODE_DEVICE] = { .name = "device", .kind = K_STR },
	[HBMPOOL_A_NODE_FAILURE_DOMAIN] = { .name = "failure-domain", .kind = K_U32 },
};
SET(ctl_set_node, "node", node_attrs, HBMPOOL_A_NODE_MAX);

static const struct ctl_attr domain_attrs[HBMPOOL_A_DOMAIN_MAX + 1] = {
	[HBMPOOL_A_DOMAIN_NAME] = { .name = "name", .kind = K_STR },
	[HBMPOOL_A_DOMAIN_SELF_ID] = { .name = "self-id", .kind = K_U32 },
	[HBMPOOL_A_DOMAIN_GENERATION] = { .name = "generation", .kind = K_U64 },
	[HBMPOOL_A_DOMAIN_NR_NODES] = { .name = "nr-nodes", .kind = K_U32 },
	[HBMPOOL_A_DOMAIN_MAX_NODES] = { .name = "max-nodes", .kind = K_U32 },
	[HBMPOOL_A_DOMAIN_SEQ] = { .name = "seq", .kind = K_U64 },
	[HBMPOOL_A_DOMAIN_KEY] = { .name = "key", .kind = K_NONE },	/* named, never shown */
	[HBMPOOL_A_DOMAIN_KEY_SET] = { .name = "key-set", .kind = K_FLAG },
	[HBMPOOL_A_DOMAIN_EPOCH] = { .name = "epoch", .kind = K_U64 },
	[HBMPOOL_A_DOMAIN_FENCED] = { .name = "fenced", .kind = K_FLAG },
};
SET(ctl_set_domain, "domain", domain_attrs, HBMPOOL_A_DOMAIN_MAX);

static const struct ctl_attr link_attrs[HBMPOOL_A_LINK_MAX + 1] = {
	[HBMPOOL_A_LINK_NODE_ID] = { .name = "node-id", .kind = K_U32 },
	[HBMPOOL_A_LINK_ADMIN_STATE] = { .name = "admin-state", .kind = K_U32, .en = &ctl_enum_link_state },
	[HBMPOOL_A_LINK_OPER_STATE] = { .name = "oper-state", .kind = K_U32, .en = &ctl_enum_link_state },
	[HBMPOOL_A_LINK_TRANSPORT] = { .name = "transport", .kind = K_STR },
	[HBMPOOL_A_LINK_REQUESTS] = { .name = "requests", .kind = K_U64 },
	[HBMPOOL_A_LINK_ERRORS] = { .name = "errors", .kind = K_U64 },
	[HBMPOOL_A_LINK_TIMEOUTS] = { .name = "timeouts", .kind = K_U64 },
	[HBMPOOL_A_LINK_LAT_HIST] = { .name = "lat-hist", .kind = K_U64, .multi = true },
	[HBMPOOL_A_LINK_FLAPS] = { .name = "flaps", .kind = K_U64 },
	[HBMPOOL_A_LINK_SEQ] = { .name = "seq", .kind = K_U64 },
	[HBMPOOL_A_LINK_HEALTH] = { .name = "health", .kind = K_U32, .en = &ctl_enum_link_health },
	[HBMPOOL_A_LINK_RTT] = { .name = "rtt", .kind = K_U64 },
	[HBMPOOL_A_LINK_RTT_HIST] = { .name = "rtt-hist", .kind = K_U64, .multi = true },
	[HBMPOOL_A_LINK_BYTES] = { .name = "bytes", .kind = K_U64 },
	[HBMPOOL_A_LINK_RETRIES] = { .name = "retries", .kind = K_U64 },
	[HBMPOOL_A_LINK_DIGEST_ERRORS] = { .name = "digest-errors", .kind = K_U64 },
	[HBMPOOL_A_LINK_CONNECTS] = { .name = "connects", .kind = K_U64 },
	[HBMPOOL_A_LINK_AUTH_FAILURES] = { .name = "auth-failures", .kind = K_U64 },
	[HBMPOOL_A_LINK_INCARNATION] = { .name = "incarnation", .kind = K_U64 },
};
SET(ctl_set_link, "link", link_attrs, HBMPOOL_A_LINK_MAX);

static const struct ctl_attr segment_attrs[HBMPOOL_A_SEGMENT_MAX + 1] = {
	[HBMPOOL_A_SEGMENT_SIZE] = { .name = "size", .kind = K_U64 },
	[HBMPOOL_A_SEGMENT_PROVIDER] = { .name = "provider", .kind = K_STR },
	[HBMPOOL_A_SEGMENT_USED] = { .name = "used", .kind = K_U64 },
	[HBMPOOL_A_SEGMENT_SEQ] = { .name = "seq", .kind = K_U64 },
	[HBMPOOL_A_SEGMENT_INCARNATION] = { .name = "incarnation", .kind = K_U64 },
	[HBMPOOL_A_SEGMENT_SESSIONS] = { .name = "sessions", .kind = K_U32 },
	[HBMPOOL_A_SEGMENT_ACCEPTED] = { .name = "accepted", .kind = K_U64 },
	[HBMPOOL_A_SEGMENT_AUTH_FAILURES] = { .name = "auth-failures", .kind = K_U64 },
	[HBMPOOL_A_SEGMENT_REJECTED] = { .name = "rejected", .kind = K_U64 },
	[HBMPOOL_A_SEGMENT_DEVICE] = { .name = "device", .kind = K_STR },
};
SET(ctl_set_segment, "segment", segment_attrs, HBMPOOL_A_SEGMENT_MAX);

static const struct ctl_attr chunk_attrs[HBMPOOL_A_CHUNK_MAX + 1] = {
	[HBMPOOL_A_CHUNK_INDEX] = { .name = "index", .kind = K_U32 },
	[HBMPOOL_A_CHUNK_NODE_ID] = { .name = "node-id", .kind = K_U32 },
	[HBMPOOL_A_CHUNK_OFFSET] = { .name = "offset", .kind = K_U64 },
	[HBMPOOL_A_CHUNK_GENERATION] = { .name = "generation", .kind = K_U32 },
	[HBMPOOL_A_CHUNK_SYNCING_NODE_ID] = { .name = "syncing-node-id", .kind = K_U32 },
	[HBMPOOL_A_CHUNK_LOST] = { .name = "lost", .kind = K_FLAG },
	[HBMPOOL_A_CHUNK_COPY_NODE_ID] = { .name = "copy-node-id", .kind = K_U32, .multi = true },
	[HBMPOOL_A_CHUNK_OUTDATED_NODE_ID] = { .name = "outdated-node-id", .kind = K_U32, .multi = true },
	[HBMPOOL_A_CHUNK_GOOD_COPIES] = { .name = "good-copies", .kind = K_U32 },
};
SET(ctl_set_chunk, "chunk", chunk_attrs, HBMPOOL_A_CHUNK_MAX);

static const struct ctl_attr region_attrs[HBMPOOL_A_REGION_MAX + 1] = {
	[HBMPOOL_A_REGION_ID] = { .name = "id", .kind = K_U32 },
	[HBMPOOL_A_REGION_NAME] = { .name = "name", .kind = K_STR },
	[HBMPOOL_A_REGION_LENGTH] = { .name = "length", .kind = K_U64 },
	[HBMPOOL_A_REGION_CHUNK_SIZE] = { .name = "chunk-size", .kind = K_U64 },
	[HBMPOOL_A_REGION_POLICY] = { .name = "policy", .kind = K_U32, .en = &ctl_enum_policy },
	[HBMPOOL_A_REGION_PREFERRED_NODE] = { .name = "preferred-node", .kind = K_U32 },
	[HBMPOOL_A_REGION_NODE_ID] = { .name = "node-id", .kind = K_U32, .multi = true },
	[HBMPOOL_A_REGION_SHARED] = { .name = "shared", .kind = K_FLAG },
	[HBMPOOL_A_REGION_NR_CHUNKS] = { .name = "nr-chunks", .kind = K_U32 },
	[HBMPOOL_A_REGION_CACHED_PAGES] = { .name = "cached-pages", .kind = K_U64 },
	[HBMPOOL_A_REGION_DIRTY_PAGES] = { .name = "dirty-pages", .kind = K_U64 },
	[HBMPOOL_A_REGION_STATS] = { .name = "stats", .kind = K_NEST, .nest = &ctl_set_stats },
	[HBMPOOL_A_REGION_CHUNK] = { .name = "chunk", .kind = K_NEST, .nest = &ctl_set_chunk, .multi = true },
	[HBMPOOL_A_REGION_CHUNKS] = { .name = "chunks", .kind = K_FLAG },
	[HBMPOOL_A_REGION_UID] = { .name = "uid", .kind = K_U32 },
	[HBMPOOL_A_REGION_MODE] = { .name = "mode", .kind = K_U32 },
	[HBMPOOL_A_REGION_SEQ] = { .name = "seq", .kind = K_U64 },
	[HBMPOOL_A_REGION_LOST_CHUNKS] = { .name = "lost-chunks", .kind = K_U32 },
	[HBMPOOL_A_REGION_REPLICAS] = { .name = "replicas", .kind = K_U32 },
	[HBMPOOL_A_REGION_DEGRADED_CHUNKS] = { .name = "degraded-chunks", .kind = K_U32 },
};
SET(ctl_set_region, "region", region_attrs, HBMPOOL_A_REGION_MAX);

static const struct ctl_attr resync_attrs[HBMPOOL_A_RESYNC_MAX + 1] = {
	[HBMPOOL_A_RESYNC_ID] = { .name = "id", .kind = K_U32 },
	[HBMPOOL_A_RESYNC_REGION_ID] = { .name = "region-id", .kind = K_U32 },
	[HBMPOOL_A_RESYNC_CHUNK] = { .name = "chunk", .kind = K_U32 },
	[HBMPOOL_A_RESYNC_FROM_NODE_ID] = { .name = "from-node-id", .kind = K_U32 },
	[HBMPOOL_A_RESYNC_TO_NODE_ID] = { .name = "to-node-id", .kind = K_U32 },
	[HBMPOOL_A_RESYNC_STATE] = { .name = "state", .kind = K_U32, .en = &ctl_enum_resync_state },
	[HBMPOOL_A_RESYNC_PAGES] = { .name = "pages", .kind = K_U32 },
	[HBMPOOL_A_RESYNC_PAGES_DONE] = { .name = "pages-done", .kind = K_U32 },
	[HBMPOOL_A_RESYNC_ERROR] = { .name = "error", .kind = K_U32 },
	[HBMPOOL_A_RESYNC_SEQ] = { .name = "seq", .kind = K_U64 },
	[HBMPOOL_A_RESYNC_ELAPSED_MS] = { .name = "elapsed-ms", .kind = K_U32 },
	[HBMPOOL_A_RESYNC_PASSES] = { .name = "passes", .kind = K_U32 },
	[HBMPOOL_A_RESYNC_KIND] = { .name = "kind", .kind = K_U32, .en = &ctl_enum_resync_kind },
};
SET(ctl_set_resync, "resync", resync_attrs, HBMPOOL_A_RESYNC_MAX);

static const struct {
	const char *name;
	const struct ctl_set *set;
} cmds[] = {
	[HBMPOOL_CMD_PARAMS_GET] = { "params-get", &ctl_set_params },
	[HBMPOOL_CMD_PARAMS_SET] = { "params-set", &ctl_set_params },
	[HBMPOOL_CMD_STATS_GET] = { "stats-get", &ctl_set_stats },
	[HBMPOOL_CMD_NODE_GET] = { "node-get", &ctl_set_node },
	[HBMPOOL_CMD_NODE_ADD_NTF] = { "node-add-ntf", &ctl_set_node },
	[HBMPOOL_CMD_NODE_DEL_NTF] = { "node-del-ntf", &ctl_set_node },
	[HBMPOOL_CMD_NODE_CHANGE_NTF] = { "node-change-ntf", &ctl_set_node },
	[HBMPOOL_CMD_PARAMS_CHANGE_NTF] = { "params-change-ntf", &ctl_set_params },
	[HBMPOOL_CMD_NODE_NEW] = { "node-new", &ctl_set_node },
	[HBMPOOL_CMD_NODE_DEL] = { "node-del", &ctl_set_node },
	[HBMPOOL_CMD_DOMAIN_GET] = { "domain-get", &ctl_set_domain },
	[HBMPOOL_CMD_DOMAIN_SET] = { "domain-set", &ctl_set_domain },
	[HBMPOOL_CMD_DOMAIN_CHANGE_NTF] = { "domain-change-ntf", &ctl_set_domain },
	[HBMPOOL_CMD_NODE_SET] = { "node-set", &ctl_set_node },
	[HBMPOOL_CMD_LINK_GET] = { "link-get", &ctl_set_link },
	[HBMPOOL_CMD_LINK_SET] = { "link-set", &ctl_set_link },
	[HBMPOOL_CMD_LINK_CHANGE_NTF] = { "link-change-ntf", &ctl_set_link },
	[HBMPOOL_CMD_SEGMENT_GET] = { "segment-get", &ctl_set_segment },
	[HBMPOOL_CMD_REGION_GET] = { "region-get", &ctl_set_region },
	[HBMPOOL_CMD_REGION_NEW_NTF] = { "region-new-ntf", &ctl_set_region },
	[HBMPOOL_CMD_REGION_DEL_NTF] = { "region-del-ntf", &ctl_set_region },
	[HBMPOOL_CMD_SEGMENT_NEW] = { "segment-new", &ctl_set_segment },
	[HBMPOOL_CMD_SEGMENT_DEL] = { "segment-del", &ctl_set_segment },
	[HBMPOOL_CMD_SEGMENT_CHANGE_NTF] = { "segment-change-ntf", &ctl_set_segment },
	[HBMPOOL_CMD_RESYNC_NEW] = { "resync-new", &ctl_set_resync },
	[HBMPOOL_CMD_RESYNC_GET] = { "resync-get", &ctl_set_resync },
	[HBMPOOL_CMD_RESYNC_DEL] = { "resync-del", &ctl_set_resync },
	[HBMPOOL_CMD_RESYNC_CHANGE_NTF] = { "resync-change-ntf", &ctl_set_resync },
	[HBMPOOL_CMD_REGION_CHANGE_NTF] = { "region-change-ntf", &ctl_set_region },
};

const char *ctl_cmd_name(int cmd)
{
	return cmd > 0 && cmd < (int)ARRAY_SIZE(cmds) ? cmds[cmd].name : NULL;
}

const struct ctl_set *ctl_cmd_set(int cmd)
{
	return cmd > 0 && cmd < (int)ARRAY_SIZE(cmds) ? cmds[cmd].set : NULL;
}

const char *ctl_attr_name(const struct ctl_set *set, int type)
{
	if (!set || type <= 0 || type > set->max)
		return NULL;
	return set->attrs[type].name;
}
