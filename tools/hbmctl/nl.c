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
#include "output.h"

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

/* An attribute of set, by its name if the spec gives one, else its number. */
static void print_attr(const char *sep, const char *what, const struct ctl_set *set,
		       int type, const char *end)
{
	const char *n = ctl_attr_name(set, type);

	if (n)
		fprintf(stderr, "%s%s%s%s", sep, what, n, end);
	else
		fprintf(stderr, "%s%s%d%s", sep, what, type, end);
}

void ctl_nl_error(int err, uint8_t cmd)
{
	const struct ctl_set *set = ctl_cmd_set(cmd);
	const char *ext = sess ? hbm_nl_extack(sess) : "";
	int attr = sess ? hbm_nl_extack_attr(sess) : 0;
	int miss = sess ? hbm_nl_extack_missing(sess) : 0;
	const char *sep = ": ";

	/* No session: ctl_nl() said why. */
	if (!sess && err == -ENOTCONN)
		return;
	fprintf(stderr, "hbmctl: %s", strerror(-err));
	if (*ext) {
		fprintf(stderr, "%s%s", sep, ext);
		sep = " ";
	}
	if (attr) {
		print_attr(sep, "(attribute ", set, attr, ")");
		sep = " ";
	}
	if (miss) {
		print_attr(sep, "missing attribute ", set, miss, "");
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
	case K_BOOL:
		if (len < 1)
			return NULL;
		return json_object_new_boolean(nla_get_u8(a) != 0);
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

/* The request; *sent false if it could not be built (nothing was sent). */
static int request(uint8_t cmd, bool dump, ctl_build_fn *build, void *barg,
		   json_object *arr, ctl_merge_fn *merge, bool *sent)
{
	struct collect c = { .set = ctl_cmd_set(cmd), .arr = arr, .merge = merge };
	struct hbm_nl *nl = ctl_nl();
	int tries, ret = 0;

	*sent = false;
	if (!nl)
		return -ENOTCONN;
	/* A dump a change raced is flagged NLM_F_DUMP_INTR: dump again. */
	for (tries = 0; tries < 5; tries++) {
		struct nl_msg *msg = hbm_nl_msg(nl, cmd, dump);
		int berr = msg ? 0 : -ENOMEM;

		if (!berr && build)
			berr = build(msg, barg);
		if (berr) {
			nlmsg_free(msg);
			return berr == -EMSGSIZE ? -EMSGSIZE : -ENOMEM;
		}
		if (arr)
			json_object_array_del_idx(arr, 0, json_object_array_length(arr));
		*sent = true;
		ret = hbm_nl_request(nl, msg, on_reply, &c);
		if (ret != -EINTR || !dump)
			break;
	}
	return ret;
}

int ctl_request_err(uint8_t cmd, bool dump, ctl_build_fn *build, void *barg,
		    json_object *arr, ctl_merge_fn *merge)
{
	bool sent;

	return request(cmd, dump, build, barg, arr, merge, &sent);
}

int ctl_request(uint8_t cmd, bool dump, ctl_build_fn *build, void *barg,
		json_object *arr, ctl_merge_fn *merge)
{
	bool sent;
	int ret;

	if (!ctl_nl())
		return CTL_EXIT_FAIL;
	ret = request(cmd, dump, build, barg, arr, merge, &sent);
	if (ret && !sent) {
		fprintf(stderr, "hbmctl: cannot build the request: %s\n", strerror(-ret));
		return CTL_EXIT_FAIL;
	}
	if (ret) {
		ctl_nl_error(ret, cmd);
		return CTL_EXIT_FAIL;
	}
	return 0;
}

struct show_id {
	int attr;
	uint32_t id;
};

static int build_show_id(struct nl_msg *msg, void *arg)
{
	struct show_id *s = arg;

	return nla_put_u32(msg, s->attr, s->id) ? -EMSGSIZE : 0;
}

int ctl_show_by_id(const struct ctl_obj *obj, uint8_t cmd, int attr, int argc,
		   char **argv, const struct out_col *cols, int ncols)
{
	struct show_id s = { .attr = attr };
	json_object *arr;
	int ret;

	if (argc > 2)
		return ctl_bad(obj, "%s show takes at most a node id", obj->name);
	if (argc == 2 && ctl_parse_u32(argv[1], &s.id))
		return ctl_bad(obj, "bad node id '%s'", argv[1]);
	arr = json_object_new_array();
	if (!arr)
		return CTL_EXIT_FAIL;
	ret = ctl_request(cmd, argc < 2, argc == 2 ? build_show_id : NULL, &s, arr, NULL);
	if (!ret) {
		if (ctl.json)
			out_json(arr);
		else
			out_table(arr, cols, ncols);
	}
	json_object_put(arr);
	return ret;
}
