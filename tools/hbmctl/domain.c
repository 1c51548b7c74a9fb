// SPDX-License-Identifier: GPL-2.0
/*
 * hbmctl domain: the domain's name, this node's id in it, its generation
 * and size (domain-get, domain-set); domain status, hbmpoold's view of the
 * domain, and domain drain|undrain|leave, requests to hbmpoold, are
 * daemon.c's.
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
		"  domain set [name NAME] [self ID] [key-file FILE] [epoch N]\n"
		"  domain fence   (this node serves nothing until a new segment)\n"
		"  domain status [--socket PATH]   (hbmpoold's view: members, leader, links)\n"
		"  domain drain ID [--wait [--timeout S]] [--socket PATH]   (hbmpoold: node ID\n"
		"                      takes no new chunks, every member moves its chunks off it)\n"
		"  domain undrain ID [--socket PATH]   (it takes new chunks again)\n"
		"  domain leave [--wait [--timeout S]] [--socket PATH]   (this node drains\n"
		"                      itself, then leaves the domain; hbmpoold exits)\n");
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
		{ "epoch", "epoch", F_STR, NULL },
		{ "fenced", "fenced", F_STR, NULL },
	};

	(void)argv;
	if (argc > 1)
		return ctl_bad(&ctl_obj_domain, "domain show takes no argument");
	return out_show_kv(HBMPOOL_CMD_DOMAIN_GET, cols, 9);
}

struct domain_set {
	const char *name;
	uint32_t self;
	bool has_self;
	unsigned char key[64];
	int key_len;		/* 0: no key given */
	uint64_t epoch;
	bool has_epoch;
	bool fence;
};

/*
 * The domain key: the file's bytes, 16 to 64 of them (e.g. made with
 * "head -c 32 /dev/urandom").  Returns 0 or an exit status.
 */
static int read_key(const char *path, struct domain_set *d)
{
	unsigned char buf[sizeof(d->key) + 1];
	size_t n = 0;
	ssize_t r = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "hbmctl: %s: %s\n", path, strerror(errno));
		return CTL_EXIT_FAIL;
	}
	/* to the end: a pipe may give the key in pieces */
	while (n < sizeof(buf)) {
		r = read(fd, buf + n, sizeof(buf) - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (r < 0) {
		fprintf(stderr, "hbmctl: %s: %s\n", path, strerror(errno));
		explicit_bzero(buf, sizeof(buf));
		return CTL_EXIT_FAIL;
	}
	if (n < 16 || n > sizeof(d->key)) {
		fprintf(stderr, "hbmctl: %s: a domain key is 16 to 64 bytes\n", path);
		explicit_bzero(buf, sizeof(buf));
		return CTL_EXIT_FAIL;
	}
	memcpy(d->key, buf, n);
	explicit_bzero(buf, sizeof(buf));
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
	if (d->has_epoch && nla_put_u64(msg, HBMPOOL_A_DOMAIN_EPOCH, d->epoch))
		return -EMSGSIZE;
	if (d->fence && nla_put_flag(msg, HBMPOOL_A_DOMAIN_FENCED))
		return -EMSGSIZE;
	return 0;
}

static int cmd_set(int argc, char **argv)
{
	struct domain_set d = { 0 };
	int i, ret = 0;

	for (i = 1; !ret && i < argc; i += 2) {
		if (i + 1 >= argc) {
			ret = ctl_bad(&ctl_obj_domain, "'%s' needs a value", argv[i]);
		} else if (!strcmp(argv[i], "name")) {
			d.name = argv[i + 1];
		} else if (!strcmp(argv[i], "self")) {
			if (ctl_parse_u32(argv[i + 1], &d.self))
				ret = ctl_bad(&ctl_obj_domain, "bad node id '%s'", argv[i + 1]);
			d.has_self = true;
		} else if (!strcmp(argv[i], "key-file")) {
			ret = read_key(argv[i + 1], &d);
		} else if (!strcmp(argv[i], "epoch")) {
			if (ctl_parse_u64(argv[i + 1], &d.epoch))
				ret = ctl_bad(&ctl_obj_domain, "bad epoch '%s'", argv[i + 1]);
			d.has_epoch = true;
		} else {
			ret = ctl_bad(&ctl_obj_domain, "unknown argument '%s'", argv[i]);
		}
	}
	if (!ret && !d.name && !d.has_self && !d.key_len && !d.has_epoch)
		ret = ctl_bad(&ctl_obj_domain, "domain set: nothing to set");
	if (!ret)
		ret = ctl_request(HBMPOOL_CMD_DOMAIN_SET, false, build_set, &d, NULL, NULL);
	explicit_bzero(d.key, sizeof(d.key));	/* on every path */
	return ret;
}

static int cmd_fence(int argc, char **argv)
{
	struct domain_set d = { .fence = true };

	(void)argv;
	if (argc > 1)
		return ctl_bad(&ctl_obj_domain, "domain fence takes no argument");
	return ctl_request(HBMPOOL_CMD_DOMAIN_SET, false, build_set, &d, NULL, NULL);
}

static const struct ctl_cmd cmds[] = {
	{ "show", cmd_show },
	{ "set", cmd_set },
	{ "fence", cmd_fence },
	{ "status", ctl_domain_status },
	{ "drain", ctl_domain_drain },
	{ "undrain", ctl_domain_drain },
	{ "leave", ctl_domain_leave },
	{ NULL, NULL },
};

const struct ctl_obj ctl_obj_domain = { "domain", cmds, NULL, usage };
