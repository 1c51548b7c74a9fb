// SPDX-License-Identifier: GPL-2.0
/*
 * hbmctl segment: the segment this node exports to the domain
 * (segment-get).
 */
#include "hbmctl.h"
#include "nl.h"
#include "output.h"

static void usage(FILE *f)
{
	fprintf(f, "  segment show\n");
}

static int cmd_show(int argc, char **argv)
{
	static const struct out_col cols[] = {
		{ "size", "size", F_SIZE, NULL },
		{ "provider", "provider", F_STR, NULL },
		{ "used", "used", F_SIZE, NULL },
		{ "seq", "seq", F_STR, NULL },
	};

	(void)argv;
	if (argc > 1)
		return ctl_bad(&ctl_obj_segment, "segment show takes no argument");
	return out_show_kv(HBMPOOL_CMD_SEGMENT_GET, cols, 4);
}

static const struct ctl_cmd cmds[] = {
	{ "show", cmd_show },
	{ NULL, NULL },
};

const struct ctl_obj ctl_obj_segment = { "segment", cmds, NULL, usage };
