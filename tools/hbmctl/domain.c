// SPDX-License-Identifier: GPL-2.0
/*
 * hbmctl domain: the domain's name, this node's id in it, its generation
 * and size (domain-get, domain-set).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "hbmctl.h"
#include "nl.h"
#include "output.h"

static void usage(FILE *f)
{
	fprintf(f,
		"  domain show\n"
		"  domain set [name NAME] [self ID] [key-file FILE]\n");
}

static int cmd_show(int argc, char **argv)
{
	static const struct out_col cols[] = {
		{ "name", "name", F_STR, NULL },
		{ "self-id", "self-id", F_STR, NULL },
		{ "generation", "generation", F_STR, NULL },
		{ "nr-nodes", "nr-nodes", F_STR, NULL },
		{ "max-nodes", "max-nodes", F_STR, NULL },
		{ "seq", "seq", F_STR, NULL },
		{ "key-set", "key-set", F_STR, NULL },
	};

	(void)argv;
	if (argc > 1)
		return ctl_bad(&ctl_obj_domain, "domain show takes no argument");
	return out_show_kv(HBMPOOL_CMD_DOMAIN_GET, cols, 7);
}

struct domain_set {
	const char *name;
	uint32_t self;
	bool has_self;
	unsigned char key[64];
	int key_len;		/* 0: no key given */
};

/*
 * The domain key: the file's bytes, 16 to 64 of them (e.g. made with
 * "head -c 32 /dev/urandom").  Returns 0 or an exit status.
 */
static int read_key(const char *path, struct domain_set *d)
{
	unsigned char extra;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "hbmctl: %s: %s\n", path, strerror(errno));
		return CTL_EXIT_FAIL;
	}
	n = read(fd, d->key, sizeof(d->key));
	if (n == (ssize_t)sizeof(d->key) && read(fd, &extra, 1) > 0)
		n = -2;
	close(fd);
	if (n < 16 || n > (ssize_t)sizeof(d->key)) {
		fprintf(stderr, "hbmctl: %s: a domain key is 16 to 64 bytes\n", path);
		return CTL_EXIT_FAIL;
	}
	d->key_len = (int)n;
	return 0;
}

static int build_set(struct nl_msg *msg, void *arg)
{
	struct domain_set *d = arg;

	if (d->name && nla_put_string(msg, HBMPOOL_A_DOMAIN_NAME, d->name))
		return -EMSGSIZE;
	if (d->has_self && nla_put_u32(msg, HBMPOOL_A_DOMAIN_SELF_ID, d->self))
		return -EMSGSIZE;
	if (d->key_len && nla_put(msg, HBMPOOL_A_DOMAIN_KEY, d->key_len, d->key))
		return -EMSGSIZE;
	return 0;
}

static int cmd_set(int argc, char **argv)
{
	struct domain_set d = { 0 };
	int i, ret;

	for (i = 1; i < argc; i += 2) {
		if (i + 1 >= argc)
			return ctl_bad(&ctl_obj_domain, "'%s' needs a value", argv[i]);
		if (!strcmp(argv[i], "name")) {
			d.name = argv[i + 1];
		} else if (!strcmp(argv[i], "self")) {
			if (ctl_parse_u32(argv[i + 1], &d.self))
				return ctl_bad(&ctl_obj_domain, "bad node id '%s'", argv[i + 1]);
			d.has_self = true;
		} else if (!strcmp(argv[i], "key-file")) {
			ret = read_key(argv[i + 1], &d);
			if (ret)
				return ret;
		} else {
			return ctl_bad(&ctl_obj_domain, "unknown argument '%s'", argv[i]);
		}
	}
	if (!d.name && !d.has_self && !d.key_len)
		return ctl_bad(&ctl_obj_domain, "domain set: nothing to set");
	ret = ctl_request(HBMPOOL_CMD_DOMAIN_SET, false, build_set, &d, NULL, NULL);
	explicit_bzero(d.key, sizeof(d.key));
	return ret;
}

static const struct ctl_cmd cmds[] = {
	{ "show", cmd_show },
	{ "set", cmd_set },
	{ NULL, NULL },
};

const struct ctl_obj ctl_obj_domain = { "domain", cmds, NULL, usage };
