/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The attribute sets of Documentation/netlink/specs/hbmpool.yaml, as data:
 * what nl.c needs to turn any reply or event into JSON (names, types,
 * enums by name, multi-attr as arrays, nests as objects).
 */
#ifndef HBMCTL_SCHEMA_H
#define HBMCTL_SCHEMA_H

#include <stdbool.h>

enum ctl_kind {
	K_NONE,		/* unknown or pad: skipped */
	K_U16,
	K_U32,
	K_U64,
	K_STR,
	K_FLAG,
	K_BOOL,		/* u8 0 or 1: false or true */
	K_ADDR,		/* binary: an IPv4 or IPv6 address */
	K_NEST,
};

struct ctl_enum {
	const char *const *names;
	int n;
};

struct ctl_attr {
	const char *name;
	enum ctl_kind kind;
	const struct ctl_enum *en;	/* u32 printed by name */
	const struct ctl_set *nest;
	bool multi;
};

struct ctl_set {
	const char *name;
	int max;
	const struct ctl_attr *attrs;	/* indexed by type, 0..max */
};

extern const struct ctl_set ctl_set_params, ctl_set_stats, ctl_set_node,
	ctl_set_domain, ctl_set_link, ctl_set_segment, ctl_set_chunk,
	ctl_set_region, ctl_set_resync;
extern const struct ctl_enum ctl_enum_node_state, ctl_enum_link_type,
	ctl_enum_link_state, ctl_enum_policy, ctl_enum_resync_state,
	ctl_enum_resync_kind;

/* A command's name ("node-add-ntf") and attribute set; NULL if unknown. */
const char *ctl_cmd_name(int cmd);
const struct ctl_set *ctl_cmd_set(int cmd);
/* The name of attribute type in set, or NULL. */
const char *ctl_attr_name(const struct ctl_set *set, int type);

#endif /* HBMCTL_SCHEMA_H */
