// SPDX-License-Identifier: GPL-2.0
/*
 * hbmctl link: the links to the other nodes (link-get, link-set).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hbmctl.h"
#include "nl.h"
#include "output.h"

static void usage(FILE *f)
{
	fprintf(f,
		"  link show [NODE]\n"
		"  link set NODE up|down\n");
}

struct link_set {
	uint32_t node;
	int state;	/* -1: none */
};

static int build(struct nl_msg *msg, void *arg)
{
	struct link_set *l = arg;

	if (nla_put_u32(msg, HBMPOOL_A_LINK_NODE_ID, l->node))
		return -EMSGSIZE;
	if (l->state >= 0 && nla_put_u32(msg, HBMPOOL_A_LINK_ADMIN_STATE, (uint32_t)l->state))
		return -EMSGSIZE;
	return 0;
}

/* The round-trip EWMA, in the unit that fits it; "-" before the first. */
static const char *rtt_cell(json_object *row, char *buf, size_t len)
{
	json_object *v;
	double ns;

	if (!json_object_object_get_ex(row, "rtt", &v))
		return "-";
	ns = (double)json_object_get_uint64(v);
	if (ns <= 0)
		return "-";
	if (ns < 1e3)
		snprintf(buf, len, "%.0fns", ns);
	else if (ns < 1e6)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else
		snprintf(buf, len, "%.1fms", ns / 1e6);
	return buf;
}

static int cmd_show(int argc, char **argv)
{
	static const struct out_col cols[] = {
		{ "NODE", "node-id", F_STR, NULL },
		{ "ADMIN", "admin-state", F_STR, NULL },
		{ "OPER", "oper-state", F_STR, NULL },
		{ "HEALTH", "health", F_STR, NULL },
		{ "TRANSPORT", "transport", F_STR, NULL },
		{ "REQUESTS", "requests", F_STR, NULL },
		{ "ERRORS", "errors", F_STR, NULL },
		{ "TIMEOUTS", "timeouts", F_STR, NULL },
		{ "FLAPS", "flaps", F_STR, NULL },
		{ "RTT", "rtt", F_FUNC, rtt_cell },
	};

	return ctl_show_by_id(&ctl_obj_link, HBMPOOL_CMD_LINK_GET, HBMPOOL_A_LINK_NODE_ID,
			      argc, argv, cols, (int)(sizeof(cols) / sizeof(cols[0])));
}

static int cmd_set(int argc, char **argv)
{
	struct link_set l;

	if (argc != 3)
		return ctl_bad(&ctl_obj_link, "link set takes a node id and up or down");
	if (ctl_parse_u32(argv[1], &l.node))
		return ctl_bad(&ctl_obj_link, "bad node id '%s'", argv[1]);
	l.state = ctl_enum_value(ctl_enum_link_state.names, ctl_enum_link_state.n, argv[2]);
	if (l.state < 0)
		return ctl_bad(&ctl_obj_link, "bad link state '%s' (up or down)", argv[2]);
	return ctl_request(HBMPOOL_CMD_LINK_SET, false, build, &l, NULL, NULL);
}

static const struct ctl_cmd cmds[] = {
	{ "show", cmd_show },
	{ "set", cmd_set },
	{ NULL, NULL },
};

const struct ctl_obj ctl_obj_link = { "link", cmds, NULL, usage };
