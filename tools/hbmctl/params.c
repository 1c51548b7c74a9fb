// SPDX-License-Identifier: GPL-2.0
/*
 * hbmctl params: show and set the module's parameters (params-get,
 * params-set).
 */
#include <string.h>

#include "hbmctl.h"
#include "nl.h"
#include "output.h"

static void usage(FILE *f)
{
	fprintf(f,
		"  params show\n"
		"  params set [cache-budget-pages N] [fetch-timeout-ms N] [readahead-max-pages N]\n");
}

static int cmd_show(int argc, char **argv)
{
	static const struct out_col cols[] = {
		{ "cache-budget-pages", "cache-budget-pages", F_STR, NULL },
		{ "cache-budget", "cache-budget-pages", F_PAGES, NULL },
		{ "fetch-timeout-ms", "fetch-timeout-ms", F_STR, NULL },
		{ "readahead-max-pages", "readahead-max-pages", F_STR, NULL },
		{ "seq", "seq", F_STR, NULL },
	};

	(void)argv;
	if (argc > 1)
		return ctl_bad(&ctl_obj_params, "params show takes no argument");
	return out_show_kv(HBMPOOL_CMD_PARAMS_GET, cols, 5);
}

static int cmd_set(int argc, char **argv)
{
	struct hbm_nl_params p = HBM_NL_PARAMS_UNSET;
	struct hbm_nl *nl;
	int i, ret;

	for (i = 1; i < argc; i += 2) {
		uint64_t v;

		if (i + 1 >= argc)
			return ctl_bad(&ctl_obj_params, "'%s' needs a value", argv[i]);
		if (ctl_parse_u64(argv[i + 1], &v) || v > INT64_MAX)
			return ctl_bad(&ctl_obj_params, "bad %s '%s'", argv[i], argv[i + 1]);
		if (!strcmp(argv[i], "cache-budget-pages")) {
			p.cache_budget_pages = (int64_t)v;
		} else if (!strcmp(argv[i], "fetch-timeout-ms") ||
			   !strcmp(argv[i], "readahead-max-pages")) {
			if (v > UINT32_MAX)
				return ctl_bad(&ctl_obj_params, "bad %s '%s'", argv[i], argv[i + 1]);
			if (argv[i][0] == 'f')
				p.fetch_timeout_ms = (int64_t)v;
			else
				p.readahead_max_pages = (int64_t)v;
		} else {
			return ctl_bad(&ctl_obj_params, "unknown parameter '%s'", argv[i]);
		}
	}
	if (p.cache_budget_pages < 0 && p.fetch_timeout_ms < 0 &&
	    p.readahead_max_pages < 0)
		return ctl_bad(&ctl_obj_params, "params set: nothing to set");
	nl = ctl_nl();
	if (!nl)
		return CTL_EXIT_FAIL;
	ret = hbm_nl_params_set(nl, &p, NULL, 0);
	if (ret) {
		ctl_nl_error(ret, HBMPOOL_CMD_PARAMS_SET);
		return CTL_EXIT_FAIL;
	}
	return 0;
}

static const struct ctl_cmd cmds[] = {
	{ "show", cmd_show },
	{ "set", cmd_set },
	{ NULL, NULL },
};

const struct ctl_obj ctl_obj_params = { "params", cmds, NULL, usage };
