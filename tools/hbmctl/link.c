// SPDX-License-Identifier: GPL-2.0
/*
 * hbmctl link: the links to the other nodes (link-get, link-set).
 */
#include <errno.h>
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

static int cmd_show(int argc, char **argv)
{
	static const struct out_col cols[] = {
		{ "NODE", "node-id", F_STR, NULL },
		{ "ADMIN", "admin-state", F_STR, NULL },
		{ "OPER", "oper-state", F_STR, NULL },
		{ "TRANSPORT", "transport", F_STR, NULL },
		{ "REQUESTS", "requests", F_STR, NULL },
		{ "ERRORS", "errors", F_STR, NULL },
		{ "TIMEOUTS", "timeouts", F_STR, NULL },
		{ "FLAPS", "flaps", F_STR, NULL },
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
