// SPDX-License-Identifier: GPL-2.0
/*
 * hbmctl's JSON of the replicated regions' attributes, without the module:
 * messages built here as the kernel builds them (region-get with chunk
 * nests, resync-get, node-get) go through ctl_attrs_json() (nl.c, over
 * schema.c) and out_cell() (output.c), and the members must be the
 * netlink attributes' names, multi-attrs as arrays, enums by name.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/msg.h>

#include "hbmctl.h"
#include "nl.h"
#include "output.h"
#include "tap.h"

/*
 * What main.c gives the rest of hbmctl; nl.c and output.c refer to them,
 * this test calls none of the paths that use them.
 */
struct ctl_opts ctl;

int ctl_bad(const struct ctl_obj *obj, const char *fmt, ...)
{
	(void)obj;
	(void)fmt;
	return CTL_EXIT_USAGE;
}

int ctl_parse_u32(const char *s, uint32_t *v)
{
	(void)s;
	(void)v;
	return -EINVAL;
}

/* msg's attributes (no family header) as JSON of set, as a string. */
static char *json_of(const struct ctl_set *set, struct nl_msg *msg)
{
	struct nlmsghdr *h = nlmsg_hdr(msg);
	json_object *o = ctl_attrs_json(set, nlmsg_attrdata(h, 0), nlmsg_attrlen(h, 0));
	char *s = o ? strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN)) : NULL;

	json_object_put(o);
	return s;
}

static json_object *obj_of(const struct ctl_set *set, struct nl_msg *msg)
{
	struct nlmsghdr *h = nlmsg_hdr(msg);

	return ctl_attrs_json(set, nlmsg_attrdata(h, 0), nlmsg_attrlen(h, 0));
}

/* A chunk nest: index, first home, good copies' homes, outdated ones'. */
static int put_chunk(struct nl_msg *msg, uint32_t index, const uint32_t *good, int ngood,
		     const uint32_t *outdated, int nout)
{
	struct nlattr *n = nla_nest_start(msg, HBMPOOL_A_REGION_CHUNK);
	int i;

	if (!n || nla_put_u32(msg, HBMPOOL_A_CHUNK_INDEX, index))
		return -EMSGSIZE;
	if (ngood && nla_put_u32(msg, HBMPOOL_A_CHUNK_NODE_ID, good[0]))
		return -EMSGSIZE;
	for (i = 0; i < ngood; i++)
		if (nla_put_u32(msg, HBMPOOL_A_CHUNK_COPY_NODE_ID, good[i]))
			return -EMSGSIZE;
	for (i = 0; i < nout; i++)
		if (nla_put_u32(msg, HBMPOOL_A_CHUNK_OUTDATED_NODE_ID, outdated[i]))
			return -EMSGSIZE;
	if (!ngood && nla_put_flag(msg, HBMPOOL_A_CHUNK_LOST))
		return -EMSGSIZE;
	if (nla_put_u32(msg, HBMPOOL_A_CHUNK_GOOD_COPIES, (uint32_t)ngood))
		return -EMSGSIZE;
	nla_nest_end(msg, n);
	return 0;
}

static void test_region(void)
{
	static const uint32_t g0[] = { 2, 5 }, g1[] = { 4 }, o1[] = { 5 }, o2[] = { 2, 5 };
	struct nl_msg *msg = nlmsg_alloc();
	json_object *o, *ch, *c, *v;
	char *s = NULL, buf[64];

	if (!msg || nla_put_u32(msg, HBMPOOL_A_REGION_ID, 3) ||
	    nla_put_u32(msg, HBMPOOL_A_REGION_REPLICAS, 2) ||
	    nla_put_u32(msg, HBMPOOL_A_REGION_DEGRADED_CHUNKS, 2) ||
	    nla_put_u32(msg, HBMPOOL_A_REGION_LOST_CHUNKS, 1) ||
	    put_chunk(msg, 0, g0, 2, NULL, 0) || put_chunk(msg, 1, g1, 1, o1, 1) ||
	    put_chunk(msg, 2, NULL, 0, o2, 2)) {
		ok(0, "a region-get reply built");
		nlmsg_free(msg);
		return;
	}
	s = json_of(&ctl_set_region, msg);
	ok(s && strstr(s, "\"replicas\":2") && strstr(s, "\"degraded-chunks\":2") &&
	   strstr(s, "\"lost-chunks\":1"),
	   "region: replicas, degraded-chunks, lost-chunks by their attribute names: %s",
	   s ? s : "(null)");
	ok(s && strstr(s, "{\"index\":0,\"node-id\":2,\"copy-node-id\":[2,5],\"good-copies\":2}"),
	   "a healthy chunk: copy-node-id an array in fetch order, good-copies");
	ok(s && strstr(s, "{\"index\":1,\"node-id\":4,\"copy-node-id\":[4],\"outdated-node-id\":[5],\"good-copies\":1}"),
	   "a degraded chunk: one good copy, outdated-node-id an array");
	ok(s && strstr(s, "{\"index\":2,\"outdated-node-id\":[2,5],\"lost\":true,\"good-copies\":0}"),
	   "a lost chunk: no copy-node-id attribute, two outdated, lost, 0 good copies");
	free(s);

	o = obj_of(&ctl_set_region, msg);
	c = o && json_object_object_get_ex(o, "chunk", &ch) ? json_object_array_get_idx(ch, 0) :
	    NULL;
	ok(c && !strcmp(out_cell(c, "copy-node-id", F_STR, buf, sizeof(buf)), "2,5") &&
	   !strcmp(out_cell(c, "outdated-node-id", F_STR, buf, sizeof(buf)), "-") &&
	   !strcmp(out_cell(c, "good-copies", F_STR, buf, sizeof(buf)), "2"),
	   "the table's cells: COPIES 2,5, OUTDATED -, GOOD 2");
	ok(o && json_object_object_get_ex(o, "replicas", &v) && json_object_get_int64(v) == 2,
	   "replicas is a number");
	json_object_put(o);
	nlmsg_free(msg);
}

static void test_resync_kind(void)
{
	static const struct {
		uint32_t kind;
		const char *want;
	} cases[] = {
		{ HBMPOOL_RESYNC_KIND_MOVE, "\"kind\":\"move\"" },
		{ HBMPOOL_RESYNC_KIND_REPLICATE, "\"kind\":\"replicate\"" },
		{ 7, "\"kind\":7" },	/* a later kernel's kind: its number */
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct nl_msg *msg = nlmsg_alloc();
		char *s = NULL;

		if (msg && !nla_put_u32(msg, HBMPOOL_A_RESYNC_ID, 9) &&
		    !nla_put_u32(msg, HBMPOOL_A_RESYNC_KIND, cases[i].kind))
			s = json_of(&ctl_set_resync, msg);
		ok(s && strstr(s, cases[i].want), "resync kind %u: %s (%s)", cases[i].kind,
		   cases[i].want, s ? s : "(null)");
		free(s);
		nlmsg_free(msg);
	}
}

static void test_node_and_event(void)
{
	struct nl_msg *msg = nlmsg_alloc();
	char *s = NULL;

	if (msg && !nla_put_u32(msg, HBMPOOL_A_NODE_ID, 4) &&
	    !nla_put_u32(msg, HBMPOOL_A_NODE_FAILURE_DOMAIN, 4294967295U))
		s = json_of(&ctl_set_node, msg);
	ok(s && strstr(s, "\"failure-domain\":4294967295"), "node: failure-domain (%s)",
	   s ? s : "(null)");
	free(s);
	nlmsg_free(msg);
	ok(ctl_cmd_name(HBMPOOL_CMD_REGION_CHANGE_NTF) &&
	   !strcmp(ctl_cmd_name(HBMPOOL_CMD_REGION_CHANGE_NTF), "region-change-ntf") &&
	   ctl_cmd_set(HBMPOOL_CMD_REGION_CHANGE_NTF) == &ctl_set_region,
	   "monitor: region-change-ntf by name, with the region's attributes");
	ok(!strcmp(ctl_attr_name(&ctl_set_chunk, HBMPOOL_A_CHUNK_COPY_NODE_ID), "copy-node-id") &&
	   !strcmp(ctl_attr_name(&ctl_set_chunk, HBMPOOL_A_CHUNK_OUTDATED_NODE_ID),
		   "outdated-node-id") &&
	   !strcmp(ctl_attr_name(&ctl_set_chunk, HBMPOOL_A_CHUNK_GOOD_COPIES), "good-copies"),
	   "extack names: the chunk's new attributes");
}

int main(void)
{
	test_region();
	test_resync_kind();
	test_node_and_event();
	return tap_finish();
}
