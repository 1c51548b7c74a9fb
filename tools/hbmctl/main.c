// SPDX-License-Identifier: GPL-2.0
/*
 * hbmctl: the admin CLI of the hbmpool generic netlink family.
 *
 *   hbmctl [-j] [-p] OBJECT COMMAND [ARGS]
 *
 * Argument parsing, dispatch and usage; the objects are in their own files.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hbmcli.h"
#include "hbmctl.h"
#include "hbmlib.h"

struct ctl_opts ctl;

static const struct ctl_obj *const objs[] = {
	&ctl_obj_domain, &ctl_obj_node, &ctl_obj_link, &ctl_obj_segment,
	&ctl_obj_region, &ctl_obj_resync, &ctl_obj_params, &ctl_obj_stats, &ctl_obj_monitor,
};
#define NR_OBJS ((int)(sizeof(objs) / sizeof(objs[0])))

static void usage(FILE *f, const char *argv0)
{
	int i;

	(void)argv0;
	fprintf(f,
		"usage: hbmctl [-j] [-p] OBJECT COMMAND [ARGS]\n"
		"       hbmctl help | hbmctl OBJECT help\n"
		"\n"
		"  -j, --json     JSON output (exact numbers, enums by name)\n"
		"  -p, --pretty   indented JSON (with -j)\n"
		"  -h, --help     this text\n"
		"\n"
		"OBJECT COMMAND:\n");
	for (i = 0; i < NR_OBJS; i++)
		objs[i]->usage(f);
	fprintf(f,
		"\n"
		"SIZE: bytes, or with a suffix k, M, G, T (powers of 1024), e.g. 64M.\n"
		"Exit status: 0 success, 1 refused by the kernel (or no answer from hbmpoold),\n"
		"2 bad command line.\n");
}

int ctl_bad(const struct ctl_obj *obj, const char *fmt, ...)
{
	va_list ap;

	fputs("hbmctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (obj) {
		fputs("usage:\n", stderr);
		obj->usage(stderr);
	} else {
		usage(stderr, "hbmctl");
	}
	return CTL_EXIT_USAGE;
}

int ctl_parse_u64(const char *s, uint64_t *v)
{
	return hbm_parse_u64(s, v);
}

int ctl_parse_u32(const char *s, uint32_t *v)
{
	uint64_t x;
	int ret = hbm_parse_u64(s, &x);

	if (ret)
		return ret;
	if (x > UINT32_MAX)
		return -ERANGE;
	*v = (uint32_t)x;
	return 0;
}

int ctl_parse_addr(const char *s, uint8_t addr[16])
{
	if (inet_pton(AF_INET, s, addr) == 1)
		return 4;
	if (inet_pton(AF_INET6, s, addr) == 1)
		return 16;
	return -EINVAL;
}

int ctl_enum_value(const char *const *names, int n, const char *s)
{
	int i;

	for (i = 0; i < n; i++)
		if (names[i] && !strcmp(names[i], s))
			return i;
	return -EINVAL;
}

static bool is_help(const char *s)
{
	return !strcmp(s, "help") || !strcmp(s, "-h") || !strcmp(s, "--help");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct ctl_obj *obj = NULL;
	const struct ctl_cmd *cmd;
	int c, i;

	/* '+': options end at OBJECT, as for ip(8). */
	while ((c = getopt_long(argc, argv, "+jph", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			ctl.json = true;
			break;
		case 'p':
			ctl.pretty = true;
			break;
		case 'h':
			return hbm_cli_usage(usage, argv[0], 1);
		default:
			return hbm_cli_usage(usage, argv[0], 0);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		return ctl_bad(NULL, "no object given");
	if (is_help(argv[0]))
		return hbm_cli_usage(usage, argv[0], 1);
	for (i = 0; i < NR_OBJS; i++)
		if (!strcmp(argv[0], objs[i]->name))
			obj = objs[i];
	if (!obj)
		return ctl_bad(NULL, "unknown object '%s'", argv[0]);
	argc--;
	argv++;
	if (argc >= 1 && is_help(argv[0])) {
		fputs("usage:\n", stdout);
		obj->usage(stdout);
		return 0;
	}
	if (!obj->cmds)
		return obj->run(argc, argv);
	/* No command: show, as "ip link" is "ip link show". */
	if (argc < 1)
		return obj->cmds[0].fn(1, (char *[]){ "show", NULL });
	for (cmd = obj->cmds; cmd->name; cmd++)
		if (!strcmp(argv[0], cmd->name))
			return cmd->fn(argc, argv);
	return ctl_bad(obj, "unknown command '%s %s'", obj->name, argv[0]);
}
