// SPDX-License-Identifier: GPL-2.0
/*
 * hbmctl stats: the global counters (stats-get).
 */
#include "hbmctl.h"
#include "nl.h"
#include "output.h"

static void usage(FILE *f)
{
	fprintf(f, "  stats show\n");
}

static int cmd_show(int argc, char **argv)
{
	static const struct out_col cols[] = {
		{ "faults", "faults", F_STR, NULL },
		{ "fetches", "fetches", F_STR, NULL },
		{ "bytes-fetched", "bytes-fetched", F_SIZE, NULL },
		{ "writebacks", "writebacks", F_STR, NULL },
		{ "bytes-written-back", "bytes-written-back", F_SIZE, NULL },
		{ "evictions", "evictions", F_STR, NULL },
		{ "errors", "errors", F_STR, NULL },
		{ "timeouts", "timeouts", F_STR, NULL },
		{ "over-budget", "over-budget", F_STR, NULL },
		{ "shrinker-freed", "shrinker-freed", F_STR, NULL },
		{ "cached", "cached-pages", F_PAGES, NULL },
		{ "dirty", "dirty-pages", F_PAGES, NULL },
		{ "lat-hist", "lat-hist", F_STR, NULL },
	};

	(void)argv;
	if (argc > 1)
		return ctl_bad(&ctl_obj_stats, "stats show takes no argument");
	return out_show_kv(HBMPOOL_CMD_STATS_GET, cols, (int)(sizeof(cols) / sizeof(cols[0])));
}

static const struct ctl_cmd cmds[] = {
	{ "show", cmd_show },
	{ NULL, NULL },
};

const struct ctl_obj ctl_obj_stats = { "stats", cmds, NULL, usage };
