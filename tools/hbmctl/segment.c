// SPDX-License-Identifier: GPL-2.0
/*
 * hbmctl segment: the segment this node exports to the domain
 * (segment-get, segment-new, segment-del).
 */
#include <errno.h>
#include <string.h>

#include "hbmctl.h"
#include "hbmlib.h"
#include "nl.h"
#include "output.h"

static void usage(FILE *f)
{
	fprintf(f,
		"  segment show\n"
		"  segment add SIZE [provider NAME]\n"
		"  segment del\n");
}

struct segment_args {
	uint64_t size;
	const char *provider;
};

static int build_add(struct nl_msg *msg, void *arg)
{
	struct segment_args *a = arg;

	if (nla_put_u64(msg, HBMPOOL_A_SEGMENT_SIZE, a->size) ||
	    (a->provider && nla_put_string(msg, HBMPOOL_A_SEGMENT_PROVIDER, a->provider)))
		return -EMSGSIZE;
	return 0;
}

static int cmd_add(int argc, char **argv)
{
	struct segment_args a = { 0 };

	if (argc < 2)
		return ctl_bad(&ctl_obj_segment, "segment add needs a size");
	if (hbm_parse_size(argv[1], &a.size) || !a.size)
		return ctl_bad(&ctl_obj_segment, "bad size '%s'", argv[1]);
	if (argc == 4 && !strcmp(argv[2], "provider"))
		a.provider = argv[3];
	else if (argc != 2)
		return ctl_bad(&ctl_obj_segment, "segment add SIZE [provider NAME]");
	return ctl_request(HBMPOOL_CMD_SEGMENT_NEW, false, build_add, &a, NULL, NULL);
}

static int cmd_del(int argc, char **argv)
{
	(void)argv;
	if (argc > 1)
		return ctl_bad(&ctl_obj_segment, "segment del takes no argument");
	return ctl_request(HBMPOOL_CMD_SEGMENT_DEL, false, NULL, NULL, NULL, NULL);
}

static int cmd_show(int argc, char **argv)
{
	static const struct out_col cols[] = {
		{ "size", "size", F_SIZE, NULL },
		{ "provider", "provider", F_STR, NULL },
		{ "used", "used", F_SIZE, NULL },
		{ "seq", "seq", F_STR, NULL },
		{ "incarnation", "incarnation", F_STR, NULL },
	};

	(void)argv;
	if (argc > 1)
		return ctl_bad(&ctl_obj_segment, "segment show takes no argument");
	return out_show_kv(HBMPOOL_CMD_SEGMENT_GET, cols, 5);
}

static const struct ctl_cmd cmds[] = {
	{ "show", cmd_show },
	{ "add", cmd_add },
	{ "del", cmd_del },
	{ NULL, NULL },
};

const struct ctl_obj ctl_obj_segment = { "segment", cmds, NULL, usage };
