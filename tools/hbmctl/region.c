// SPDX-License-Identifier: GPL-2.0
/*
 * hbmctl region: the regions and, with "chunks", their placement
 * (region-get).  A region's chunks that do not fit one message continue in
 * the next ones, each repeating the region's id: they are merged here.
 * A replicated region's chunk names the homes of its good copies
 * (copy-node-id, in fetch order) and of its outdated ones
 * (outdated-node-id); both are JSON arrays, empty ones included, whenever
 * the kernel reports copies (good-copies).  region move is a chunk move
 * (resync.c).
 */
#include <errno.h>
#include <string.h>

#include "hbmctl.h"
#include "nl.h"
#include "output.h"

static void usage(FILE *f)
{
	fprintf(f,
		"  region show [ID] [chunks]\n"
		"  region move REGION CHUNK [to NODE] [from NODE] [--wait]\n");
}

struct region_req {
	uint32_t id;
	bool has_id;
	bool chunks;
};

static int build(struct nl_msg *msg, void *arg)
{
	struct region_req *r = arg;

	if (r->has_id && nla_put_u32(msg, HBMPOOL_A_REGION_ID, r->id))
		return -EMSGSIZE;
	if (r->chunks && nla_put_flag(msg, HBMPOOL_A_REGION_CHUNKS))
		return -EMSGSIZE;
	return 0;
}

static bool same_id(json_object *a, json_object *b)
{
	json_object *x, *y;

	return json_object_object_get_ex(a, "id", &x) && json_object_object_get_ex(b, "id", &y) &&
	       json_object_get_int64(x) == json_object_get_int64(y);
}

/* A message that repeats the last region's id carries more of its chunks. */
bool ctl_region_merge(json_object *arr, json_object *obj)
{
	size_t n = json_object_array_length(arr);
	json_object *last, *more, *chunks;
	size_t i;

	if (!n)
		return false;
	last = json_object_array_get_idx(arr, n - 1);
	if (!same_id(last, obj))
		return false;
	if (json_object_object_get_ex(obj, "chunk", &more)) {
		if (!json_object_object_get_ex(last, "chunk", &chunks)) {
			chunks = json_object_new_array();
			json_object_object_add(last, "chunk", chunks);
		}
		for (i = 0; i < json_object_array_length(more); i++)
			json_object_array_add(chunks,
					      json_object_get(json_object_array_get_idx(more, i)));
	}
	json_object_put(obj);
	return true;
}

/*
 * A chunk of a kernel that reports copies has both lists, as arrays: a
 * lost chunk has no copy-node-id attribute, a healthy one no
 * outdated-node-id, and a reader should not have to tell absent from empty.
 */
static void chunk_lists(json_object *arr)
{
	static const char *const lists[] = { "copy-node-id", "outdated-node-id" };
	json_object *reg, *chunks, *ch, *v;
	size_t i, c, l;

	for (i = 0; i < json_object_array_length(arr); i++) {
		reg = json_object_array_get_idx(arr, i);
		if (!json_object_object_get_ex(reg, "chunk", &chunks))
			continue;
		for (c = 0; c < json_object_array_length(chunks); c++) {
			ch = json_object_array_get_idx(chunks, c);
			if (!json_object_object_get_ex(ch, "good-copies", &v))
				continue;
			for (l = 0; l < sizeof(lists) / sizeof(lists[0]); l++)
				if (!json_object_object_get_ex(ch, lists[l], &v))
					json_object_object_add(ch, lists[l],
							       json_object_new_array());
		}
	}
}

static const char *mode_cell(json_object *row, char *buf, size_t len)
{
	json_object *m;

	if (!json_object_object_get_ex(row, "mode", &m))
		return "-";
	snprintf(buf, len, "%04o", (unsigned int)json_object_get_int64(m));
	return buf;
}

static int cmd_show(int argc, char **argv)
{
	static const struct out_col cols[] = {
		{ "ID", "id", F_STR, NULL },
		{ "NAME", "name", F_STR, NULL },
		{ "LENGTH", "length", F_SIZE, NULL },
		{ "CHUNK", "chunk-size", F_SIZE, NULL },
		{ "CHUNKS", "nr-chunks", F_STR, NULL },
		{ "POLICY", "policy", F_STR, NULL },
		{ "REPLICAS", "replicas", F_STR, NULL },
		{ "DEGRADED", "degraded-chunks", F_STR, NULL },
		{ "LOST", "lost-chunks", F_STR, NULL },
		{ "NODES", "node-id", F_STR, NULL },
		{ "CACHED", "cached-pages", F_PAGES, NULL },
		{ "DIRTY", "dirty-pages", F_PAGES, NULL },
		{ "UID", "uid", F_STR, NULL },
		{ "MODE", NULL, F_FUNC, mode_cell },
		{ "SHARED", "shared", F_STR, NULL },
	};
	static const struct out_col ccols[] = {
		{ "INDEX", "index", F_STR, NULL },
		{ "NODE", "node-id", F_STR, NULL },
		{ "GOOD", "good-copies", F_STR, NULL },
		{ "COPIES", "copy-node-id", F_STR, NULL },
		{ "OUTDATED", "outdated-node-id", F_STR, NULL },
		{ "OFFSET", "offset", F_STR, NULL },
		{ "GENERATION", "generation", F_STR, NULL },
		{ "MOVING-TO", "syncing-node-id", F_STR, NULL },
		{ "LOST", "lost", F_STR, NULL },
	};
	struct region_req r = { 0 };
	json_object *arr;
	size_t i;
	int a, ret;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "chunks") && !r.chunks) {
			r.chunks = true;
		} else if (!r.has_id && !ctl_parse_u32(argv[a], &r.id)) {
			r.has_id = true;
		} else {
			return ctl_bad(&ctl_obj_region, "bad argument '%s'", argv[a]);
		}
	}
	arr = json_object_new_array();
	if (!arr)
		return CTL_EXIT_FAIL;
	/*
	 * The placement of a large region does not fit one reply: chunks
	 * come by a dump, limited to the region's id when one is given.
	 */
	ret = ctl_request(HBMPOOL_CMD_REGION_GET, !r.has_id || r.chunks, build, &r,
			  arr, ctl_region_merge);
	if (!ret)
		chunk_lists(arr);
	if (!ret && r.has_id && !json_object_array_length(arr)) {
		fprintf(stderr, "hbmctl: No such file or directory: no such region\n");
		ret = CTL_EXIT_FAIL;
	} else if (!ret && ctl.json) {
		out_json(arr);
	} else if (!ret) {
		out_table(arr, cols, (int)(sizeof(cols) / sizeof(cols[0])));
		for (i = 0; r.chunks && i < json_object_array_length(arr); i++) {
			json_object *reg = json_object_array_get_idx(arr, i), *ch, *id;

			if (!json_object_object_get_ex(reg, "chunk", &ch) ||
			    !json_object_object_get_ex(reg, "id", &id))
				continue;
			printf("\nregion %s chunks:\n", json_object_get_string(id));
			out_table(ch, ccols, (int)(sizeof(ccols) / sizeof(ccols[0])));
		}
	}
	json_object_put(arr);
	return ret;
}

static const struct ctl_cmd cmds[] = {
	{ "show", cmd_show },
	{ "move", ctl_region_move },
	{ NULL, NULL },
};

const struct ctl_obj ctl_obj_region = { "region", cmds, NULL, usage };
