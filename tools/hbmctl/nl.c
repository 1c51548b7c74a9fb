// SPDX-License-Identifier: GPL-2.0
/*
 * hbmctl's netlink session and the JSON form of replies (see nl.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hbmctl.h"
#include "nl.h"

static struct hbm_nl *sess;

static void close_session(void)
{
	hbm_nl_close(sess);
	sess = NULL;
}

struct hbm_nl *ctl_nl(void)
{
	int ret;

	if (sess)
		return sess;
	ret = hbm_nl_open(&sess);
	if (ret == -ENOENT) {
		fprintf(stderr, "hbmctl: no generic netlink family \"%s\" (is hbmpool.ko loaded?)\n",
			HBMPOOL_FAMILY_NAME);
		return NULL;
	}
	if (ret) {
		fprintf(stderr, "hbmctl: netlink socket: %s\n", strerror(-ret));
		return NULL;
	}
	atexit(close_session);
	return sess;
}

void ctl_nl_error(int err, uint8_t cmd)
{
	const struct ctl_set *set = ctl_cmd_set(cmd);
	const char *ext = sess ? hbm_nl_extack(sess) : "";
	int attr = sess ? hbm_nl_extack_attr(sess) : 0;
	int miss = sess ? hbm_nl_extack_missing(sess) : 0;
	const char *sep = ": ";

	fprintf(stderr, "hbmctl: %s", strerror(-err));
	if (*ext) {
		fprintf(stderr, "%s%s", sep, ext);
		sep = " ";
	}
	if (attr) {
		const char *n = ctl_attr_name(set, attr);

		if (n)
			fprintf(stderr, "%s(attribute %s)", sep, n);
		else
			fprintf(stderr, "%s(attribute %d)", sep, attr);
		sep = " ";
	}
	if (miss) {
		const char *n = ctl_attr_name(set, miss);

		if (n)
			fprintf(stderr, "%smissing attribute %s", sep, n);
		else
			fprintf(stderr, "%smissing attribute %d", sep, miss);
		sep = " ";
	}
	if (err == -EOPNOTSUPP && !*ext && ctl_cmd_name(cmd))
		fprintf(stderr, "%sthis kernel has no %s", sep, ctl_cmd_name(cmd));
	fputc('\n', stderr);
}

static json_object *attr_json(const struct ctl_attr *d, struct nlattr *a)
{
	int len = nla_len(a);
	char buf[INET6_ADDRSTRLEN];

	switch (d->kind) {
	case K_U16:
		if (len < 2)
			return NULL;
		return json_object_new_int(nla_get_u16(a));
	case K_U32: {
		uint32_t v;

		if (len < 4)
			return NULL;
		v = nla_get_u32(a);
		if (d->en && v < (uint32_t)d->en->n && d->en->names[v])
			return json_object_new_string(d->en->names[v]);
		return json_object_new_int64(v);
	}
	case K_U64: {
		uint64_t v;

		if (len < 8)
			return NULL;
		memcpy(&v, nla_data(a), sizeof(v));
		return json_object_new_uint64(v);
	}
	case K_STR:
		return json_object_new_string_len(nla_data(a), (int)strnlen(nla_data(a), len));
	case K_FLAG:
		return json_object_new_boolean(1);
	case K_ADDR:
		if ((len == 4 && inet_ntop(AF_INET, nla_data(a), buf, sizeof(buf))) ||
		    (len == 16 && inet_ntop(AF_INET6, nla_data(a), buf, sizeof(buf))))
			return json_object_new_string(buf);
		return NULL;
	case K_NEST:
		return ctl_attrs_json(d->nest, nla_data(a), len);
	default:
		return NULL;
	}
}

json_object *ctl_attrs_json(const struct ctl_set *set, struct nlattr *attrs, int len)
{
	json_object *obj = json_object_new_object();
	struct nlattr *a;
	int rem;

	if (!obj || !set)
		return obj;
	nla_for_each_attr(a, attrs, len, rem) {
		int type = nla_type(a);
		const struct ctl_attr *d;
		json_object *v;

		/* Unknown (newer) attributes and pads are left out. */
		if (type <= 0 || type > set->max || set->attrs[type].kind == K_NONE)
			continue;
		d = &set->attrs[type];
		v = attr_json(d, a);
		if (!v)
			continue;
		if (d->multi) {
			json_object *arr;

			if (!json_object_object_get_ex(obj, d->name, &arr)) {
				arr = json_object_new_array();
				json_object_object_add(obj, d->name, arr);
			}
			json_object_array_add(arr, v);
		} else {
			json_object_object_add(obj, d->name, v);
		}
	}
	return obj;
}

struct collect {
	const struct ctl_set *set;
	json_object *arr;
	ctl_merge_fn *merge;
};

static int on_reply(uint8_t cmd, struct nlattr *attrs, int len, void *arg)
{
	struct collect *c = arg;
	json_object *obj;

	(void)cmd;
	if (!c->arr)
		return 0;
	obj = ctl_attrs_json(c->set, attrs, len);
	if (!obj)
		return -ENOMEM;
	if (c->merge && c->merge(c->arr, obj))
		return 0;
	json_object_array_add(c->arr, obj);
	return 0;
}

int ctl_request(uint8_t cmd, bool dump, ctl_build_fn *build, void *barg,
		json_object *arr, ctl_merge_fn *merge)
{
	struct collect c = { .set = ctl_cmd_set(cmd), .arr = arr, .merge = merge };
	struct hbm_nl *nl = ctl_nl();
	int tries, ret = 0;

	if (!nl)
		return CTL_EXIT_FAIL;
	/* A dump a change raced is flagged NLM_F_DUMP_INTR: dump again. */
	for (tries = 0; tries < 5; tries++) {
		struct nl_msg *msg = hbm_nl_msg(nl, cmd, dump);
		int berr = msg ? 0 : -ENOMEM;

		if (!berr && build)
			berr = build(msg, barg);
		if (berr) {
			nlmsg_free(msg);
			fprintf(stderr, "hbmctl: cannot build the request: %s\n",
				strerror(berr == -EMSGSIZE ? EMSGSIZE : ENOMEM));
			return CTL_EXIT_FAIL;
		}
		if (arr)
			json_object_array_del_idx(arr, 0, json_object_array_length(arr));
		ret = hbm_nl_request(nl, msg, on_reply, &c);
		if (ret != -EINTR || !dump)
			break;
	}
	if (ret) {
		ctl_nl_error(ret, cmd);
		return CTL_EXIT_FAIL;
	}
	return 0;
}
