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
		"  segment add SIZE [provider ram|shm] [device PCI-NAME]\n"
		"           (provider shm: this node's ivshmem device, e.g. 0000:00:11.0)\n"
		"  segment del\n");
}

struct segment_args {
	uint64_t size;
	const char *provider;
	const char *device;
};

static int build_add(struct nl_msg *msg, void *arg)
{
	struct segment_args *a = arg;

	if (nla_put_u64(msg, HBMPOOL_A_SEGMENT_SIZE, a->size) ||
	    (a->provider && nla_put_string(msg, HBMPOOL_A_SEGMENT_PROVIDER, a->provider)) ||
	    (a->device && nla_put_string(msg, HBMPOOL_A_SEGMENT_DEVICE, a->device)))
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
	for (int i = 2; i < argc; i += 2) {
		if (i + 1 >= argc)
			return ctl_bad(&ctl_obj_segment, "'%s' needs a value", argv[i]);
		if (!strcmp(argv[i], "provider"))
			a.provider = argv[i + 1];
		else if (!strcmp(argv[i], "device"))
			a.device = argv[i + 1];
		else
			return ctl_bad(&ctl_obj_segment,
				       "segment add SIZE [provider NAME] [device PCI-NAME]");
	}
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
		{ "device", "device", F_STR, NULL },
	};

	(void)argv;
	if (argc > 1)
		return ctl_bad(&ctl_obj_segment, "segment show takes no argument");
	return out_show_kv(HBMPOOL_CMD_SEGMENT_GET, cols, 6);
}

static const struct ctl_cmd cmds[] = {
	{ "show", cmd_show },
	{ "add", cmd_add },
	{ "del", cmd_del },
	{ NULL, NULL },
};

const struct ctl_obj ctl_obj_segment = { "segment", cmds, NULL, usage };
