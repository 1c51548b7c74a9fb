// SPDX-License-Identifier: GPL-2.0
/*
 * hbmctl node: the nodes of the domain (node-get, node-new, node-del,
 * node-set).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "hbmctl.h"
#include "hbmlib.h"
#include "nl.h"
#include "output.h"

static void usage(FILE *f)
{
	fprintf(f,
		"  node show [ID]\n"
		"  node add ID capacity SIZE distance N [transport NAME]\n"
		"           [link scaleup|scaleout|scaleacross] [name NAME] [addr IP] [port N]\n"
		"           [device PCI-NAME]   (transport shm: the home's ivshmem device)\n"
		"           [failure-domain N|none]\n"
		"  node del ID\n"
		"  node set ID [name NAME] [distance N] [link scaleup|scaleout|scaleacross]\n"
		"           [addr IP] [port N] [weight N|auto] [draining on|off]\n"
		"           [failure-domain N|none]\n"
		"  node set ID state fenced   (declare it dead: final)\n"
		"  node drain ID [--wait] [--jobs N]   (draining on, move its chunks off)\n"
		"  node undrain ID                     (draining off)\n");
}

/* "addr:port", "[addr6]:port", "addr" or "-". */
static const char *addr_cell(json_object *row, char *buf, size_t len)
{
	json_object *a, *p;

	if (!json_object_object_get_ex(row, "addr", &a))
		return "-";
	if (!json_object_object_get_ex(row, "port", &p))
		snprintf(buf, len, "%s", json_object_get_string(a));
	else if (strchr(json_object_get_string(a), ':'))
		snprintf(buf, len, "[%s]:%d", json_object_get_string(a), json_object_get_int(p));
	else
		snprintf(buf, len, "%s:%d", json_object_get_string(a), json_object_get_int(p));
	return buf;
}

/* The failure domain, "-" when none (0) or not reported. */
static const char *fdomain_cell(json_object *row, char *buf, size_t len)
{
	json_object *v;

	if (!json_object_object_get_ex(row, "failure-domain", &v) || !json_object_get_int64(v))
		return "-";
	snprintf(buf, len, "%lld", (long long)json_object_get_int64(v));
	return buf;
}

/* The effective weight, with "(auto)" when the kernel derives it. */
static const char *weight_cell(json_object *row, char *buf, size_t len)
{
	json_object *w, *e;

	if (!json_object_object_get_ex(row, "effective-weight", &e))
		return "-";
	if (json_object_object_get_ex(row, "weight", &w) && json_object_get_int64(w))
		snprintf(buf, len, "%lld", (long long)json_object_get_int64(e));
	else
		snprintf(buf, len, "%lld(auto)", (long long)json_object_get_int64(e));
	return buf;
}

static int cmd_show(int argc, char **argv)
{
	static const struct out_col cols[] = {
		{ "ID", "id", F_STR, NULL },
		{ "NAME", "name", F_STR, NULL },
		{ "STATE", "state", F_STR, NULL },
		{ "TRANSPORT", "transport", F_STR, NULL },
		{ "LINK", "link-type", F_STR, NULL },
		{ "DISTANCE", "distance", F_STR, NULL },
		{ "CAPACITY", "capacity", F_SIZE, NULL },
		{ "FREE", "free", F_SIZE, NULL },
		{ "WEIGHT", NULL, F_FUNC, weight_cell },
		{ "DRAINING", "draining", F_STR, NULL },
		{ "CHUNKS", "chunks", F_STR, NULL },
		{ "FAILURE-DOMAIN", NULL, F_FUNC, fdomain_cell },
		{ "ADDR", NULL, F_FUNC, addr_cell },
	};

	return ctl_show_by_id(&ctl_obj_node, HBMPOOL_CMD_NODE_GET, HBMPOOL_A_NODE_ID,
			      argc, argv, cols, (int)(sizeof(cols) / sizeof(cols[0])));
}

/* The arguments of node add / node set. */
struct node_args {
	struct hbm_nl_node n;
	bool has_distance;
	bool has_capacity;
	bool fence;
	bool has_weight;
	uint32_t weight;
	int draining;		/* -1: not given */
	bool has_failure_domain;	/* n.failure_domain given (0: none) */
};

/* Parse "KEY VALUE..." of argv[first..]; set: node set's keys only. */
static int parse_args(int argc, char **argv, int first, bool set, struct node_args *a)
{
	int i;

	for (i = first; i < argc; i += 2) {
		const char *k = argv[i], *v;
		uint64_t x;
		int r;

		if (i + 1 >= argc)
			return ctl_bad(&ctl_obj_node, "'%s' needs a value", k);
		v = argv[i + 1];
		if (!strcmp(k, "capacity") && !set) {
			if (hbm_parse_size(v, &a->n.capacity))
				return ctl_bad(&ctl_obj_node, "bad size '%s'", v);
			a->has_capacity = true;
		} else if (!strcmp(k, "distance")) {
			if (ctl_parse_u32(v, &a->n.distance))
				return ctl_bad(&ctl_obj_node, "bad distance '%s'", v);
			a->has_distance = true;
		} else if (!strcmp(k, "transport") && !set) {
			a->n.transport = v;
		} else if (!strcmp(k, "device") && !set) {
			a->n.device = v;
		} else if (!strcmp(k, "link")) {
			r = hbm_nl_link_type(v);
			if (r <= 0)
				return ctl_bad(&ctl_obj_node, "bad link type '%s'", v);
			a->n.link_type = r;
		} else if (!strcmp(k, "name")) {
			a->n.name = v;
		} else if (!strcmp(k, "addr")) {
			r = ctl_parse_addr(v, a->n.addr);
			if (r < 0)
				return ctl_bad(&ctl_obj_node, "bad address '%s' (IPv4 or IPv6)", v);
			a->n.addr_len = (size_t)r;
		} else if (!strcmp(k, "state") && set) {
			if (strcmp(v, "fenced"))
				return ctl_bad(&ctl_obj_node, "bad state '%s': only fenced can be set", v);
			a->fence = true;
		} else if (!strcmp(k, "weight") && set) {
			if (!strcmp(v, "auto"))
				a->weight = 0;
			else if (ctl_parse_u32(v, &a->weight) || a->weight > HBMPOOL_WEIGHT_MAX)
				return ctl_bad(&ctl_obj_node, "bad weight '%s': 0..%u or auto",
					       v, HBMPOOL_WEIGHT_MAX);
			a->has_weight = true;
		} else if (!strcmp(k, "draining") && set) {
			if (!strcmp(v, "on") || !strcmp(v, "1"))
				a->draining = 1;
			else if (!strcmp(v, "off") || !strcmp(v, "0"))
				a->draining = 0;
			else
				return ctl_bad(&ctl_obj_node, "bad draining '%s': on or off", v);
		} else if (!strcmp(k, "failure-domain")) {
			if (!strcmp(v, "none"))
				a->n.failure_domain = 0;
			else if (ctl_parse_u32(v, &a->n.failure_domain))
				return ctl_bad(&ctl_obj_node,
					       "bad failure domain '%s': 0..%u, or none (0)",
					       v, UINT32_MAX);
			a->has_failure_domain = true;
		} else if (!strcmp(k, "port")) {
			if (ctl_parse_u64(v, &x) || !x || x > 65535)
				return ctl_bad(&ctl_obj_node, "bad port '%s'", v);
			a->n.port = (uint16_t)x;
		} else {
			return ctl_bad(&ctl_obj_node, "unknown argument '%s'", k);
		}
	}
	return 0;
}

static int cmd_add(int argc, char **argv)
{
	struct node_args a = { .n.link_type = -1, .draining = -1 };
	struct hbm_nl *nl;
	int ret;

	if (argc < 2)
		return ctl_bad(&ctl_obj_node, "node add needs an id");
	if (ctl_parse_u32(argv[1], &a.n.id))
		return ctl_bad(&ctl_obj_node, "bad node id '%s'", argv[1]);
	ret = parse_args(argc, argv, 2, false, &a);
	if (ret)
		return ret;
	if (!a.has_capacity || !a.has_distance)
		return ctl_bad(&ctl_obj_node, "node add needs capacity and distance");
	nl = ctl_nl();
	if (!nl)
		return CTL_EXIT_FAIL;
	ret = hbm_nl_node_new(nl, &a.n, NULL, 0);
	if (ret) {
		ctl_nl_error(ret, HBMPOOL_CMD_NODE_NEW);
		return CTL_EXIT_FAIL;
	}
	return 0;
}

static int cmd_del(int argc, char **argv)
{
	struct hbm_nl *nl;
	uint32_t id;
	int ret;

	if (argc != 2)
		return ctl_bad(&ctl_obj_node, "node del takes one node id");
	if (ctl_parse_u32(argv[1], &id))
		return ctl_bad(&ctl_obj_node, "bad node id '%s'", argv[1]);
	nl = ctl_nl();
	if (!nl)
		return CTL_EXIT_FAIL;
	ret = hbm_nl_node_del(nl, id, NULL, 0);
	if (ret) {
		ctl_nl_error(ret, HBMPOOL_CMD_NODE_DEL);
		return CTL_EXIT_FAIL;
	}
	return 0;
}

static int build_set(struct nl_msg *msg, void *arg)
{
	struct node_args *a = arg;

	if (nla_put_u32(msg, HBMPOOL_A_NODE_ID, a->n.id) ||
	    (a->n.name && nla_put_string(msg, HBMPOOL_A_NODE_NAME, a->n.name)) ||
	    (a->has_distance && nla_put_u32(msg, HBMPOOL_A_NODE_DISTANCE, a->n.distance)) ||
	    (a->n.link_type >= 0 && nla_put_u32(msg, HBMPOOL_A_NODE_LINK_TYPE, (uint32_t)a->n.link_type)) ||
	    (a->n.addr_len && nla_put(msg, HBMPOOL_A_NODE_ADDR, (int)a->n.addr_len, a->n.addr)) ||
	    (a->n.port && nla_put_u16(msg, HBMPOOL_A_NODE_PORT, a->n.port)) ||
	    (a->fence && nla_put_u32(msg, HBMPOOL_A_NODE_STATE, HBMPOOL_NODE_STATE_FENCED)) ||
	    (a->has_weight && nla_put_u32(msg, HBMPOOL_A_NODE_WEIGHT, a->weight)) ||
	    (a->draining >= 0 && nla_put_u8(msg, HBMPOOL_A_NODE_DRAINING, (uint8_t)a->draining)) ||
	    (a->has_failure_domain &&
	     nla_put_u32(msg, HBMPOOL_A_NODE_FAILURE_DOMAIN, a->n.failure_domain)))
		return -EMSGSIZE;
	return 0;
}

static int cmd_set(int argc, char **argv)
{
	struct node_args a = { .n.link_type = -1, .draining = -1 };
	int ret;

	if (argc < 2)
		return ctl_bad(&ctl_obj_node, "node set needs an id");
	if (ctl_parse_u32(argv[1], &a.n.id))
		return ctl_bad(&ctl_obj_node, "bad node id '%s'", argv[1]);
	ret = parse_args(argc, argv, 2, true, &a);
	if (ret)
		return ret;
	if (argc < 4)
		return ctl_bad(&ctl_obj_node, "node set: nothing to set");
	return ctl_request(HBMPOOL_CMD_NODE_SET, false, build_set, &a, NULL, NULL);
}

static const struct ctl_cmd cmds[] = {
	{ "show", cmd_show },
	{ "add", cmd_add },
	{ "del", cmd_del },
	{ "set", cmd_set },
	{ "drain", ctl_node_drain },
	{ "undrain", ctl_node_undrain },
	{ NULL, NULL },
};

const struct ctl_obj ctl_obj_node = { "node", cmds, NULL, usage };
