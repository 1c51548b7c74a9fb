// SPDX-License-Identifier: GPL-2.0
/*
 * hbmctl params: show and set the module's parameters (params-get,
 * params-set).
 */
#include <errno.h>
#include <string.h>

#include "hbmctl.h"
#include "nl.h"
#include "output.h"

static void usage(FILE *f)
{
	fprintf(f,
		"  params show\n"
		"  params set [cache-budget-pages N] [fetch-timeout-ms N] [readahead-max-pages N]\n"
		"             [resync-mbps N] [resync-jobs N] [full-pct N] [avoid-degraded 0|1]\n");
}

static int cmd_show(int argc, char **argv)
{
	static const struct out_col cols[] = {
		{ "cache-budget-pages", "cache-budget-pages", F_STR, NULL },
		{ "cache-budget", "cache-budget-pages", F_PAGES, NULL },
		{ "fetch-timeout-ms", "fetch-timeout-ms", F_STR, NULL },
		{ "readahead-max-pages", "readahead-max-pages", F_STR, NULL },
		{ "resync-mbps", "resync-mbps", F_STR, NULL },
		{ "resync-jobs", "resync-jobs", F_STR, NULL },
		{ "full-pct", "full-pct", F_STR, NULL },
		{ "avoid-degraded", "avoid-degraded", F_STR, NULL },
		{ "seq", "seq", F_STR, NULL },
	};

	(void)argv;
	if (argc > 1)
		return ctl_bad(&ctl_obj_params, "params show takes no argument");
	return out_show_kv(HBMPOOL_CMD_PARAMS_GET, cols, (int)(sizeof(cols) / sizeof(cols[0])));
}

/* The parameters params set knows: name, attribute, its width in bits. */
static const struct {
	const char *name;
	int attr;
	int bits;
} params[] = {
	{ "cache-budget-pages", HBMPOOL_A_PARAMS_CACHE_BUDGET_PAGES, 64 },
	{ "fetch-timeout-ms", HBMPOOL_A_PARAMS_FETCH_TIMEOUT_MS, 32 },
	{ "readahead-max-pages", HBMPOOL_A_PARAMS_READAHEAD_MAX_PAGES, 32 },
	{ "resync-mbps", HBMPOOL_A_PARAMS_RESYNC_MBPS, 32 },
	{ "resync-jobs", HBMPOOL_A_PARAMS_RESYNC_JOBS, 32 },
	{ "full-pct", HBMPOOL_A_PARAMS_FULL_PCT, 32 },
	{ "avoid-degraded", HBMPOOL_A_PARAMS_AVOID_DEGRADED, 8 },
};
#define NR_PARAMS ((int)(sizeof(params) / sizeof(params[0])))

struct params_set {
	bool given[NR_PARAMS];
	uint64_t v[NR_PARAMS];
};

/* The values as given: the kernel checks their ranges (with an extack). */
static int build_set(struct nl_msg *msg, void *arg)
{
	struct params_set *p = arg;
	int i;

	for (i = 0; i < NR_PARAMS; i++) {
		if (!p->given[i])
			continue;
		if (params[i].bits == 64 ? nla_put_u64(msg, params[i].attr, p->v[i]) :
		    params[i].bits == 32 ? nla_put_u32(msg, params[i].attr, (uint32_t)p->v[i]) :
		    nla_put_u8(msg, params[i].attr, (uint8_t)p->v[i]))
			return -EMSGSIZE;
	}
	return 0;
}

static int cmd_set(int argc, char **argv)
{
	struct params_set p = { 0 };
	bool any = false;
	int i, k;

	for (i = 1; i < argc; i += 2) {
		uint64_t v;

		for (k = 0; k < NR_PARAMS; k++)
			if (!strcmp(argv[i], params[k].name))
				break;
		if (k == NR_PARAMS)
			return ctl_bad(&ctl_obj_params, "unknown parameter '%s'", argv[i]);
		if (i + 1 >= argc)
			return ctl_bad(&ctl_obj_params, "'%s' needs a value", argv[i]);
		if (ctl_parse_u64(argv[i + 1], &v) || v > INT64_MAX ||
		    (params[k].bits < 64 && v >> params[k].bits))
			return ctl_bad(&ctl_obj_params, "bad %s '%s'", argv[i], argv[i + 1]);
		p.given[k] = true;
		p.v[k] = v;
		any = true;
	}
	if (!any)
		return ctl_bad(&ctl_obj_params, "params set: nothing to set");
	return ctl_request(HBMPOOL_CMD_PARAMS_SET, false, build_set, &p, NULL, NULL);
}

static const struct ctl_cmd cmds[] = {
	{ "show", cmd_show },
	{ "set", cmd_set },
	{ NULL, NULL },
};

const struct ctl_obj ctl_obj_params = { "params", cmds, NULL, usage };
