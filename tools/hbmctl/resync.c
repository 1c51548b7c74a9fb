// SPDX-License-Identifier: GPL-2.0
/*
 * hbmctl resync: chunk moves and re-replications (resync-get, resync-del),
 * and
 * hbmctl region move (resync-new, then with --wait resync-get until the
 * move ends).
 *
 * A move copies a chunk of a region to another node while the region stays
 * mapped and in use, then switches the chunk to it and frees the source.
 * The kernel keeps a move that ended for 60 s (or until resync cancel).
 * A job of kind "replicate" is the kernel's own: it copies a chunk of a
 * replicated region to one more node, and the other copies stay.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hbmctl.h"
#include "nl.h"
#include "output.h"
#include "resync.h"

static void usage(FILE *f)
{
	fprintf(f,
		"  resync list\n"
		"  resync show [ID]\n"
		"  resync cancel ID\n");
}

int64_t ctl_json_int(json_object *obj, const char *key, int64_t def)
{
	json_object *v;

	if (!obj || !json_object_object_get_ex(obj, key, &v))
		return def;
	return json_object_get_int64(v);
}

const char *ctl_resync_state(json_object *job)
{
	json_object *v;

	if (!job || !json_object_object_get_ex(job, "state", &v))
		return "?";
	return json_object_get_string(v);
}

struct resync_req {
	uint32_t id;		/* resync-get, resync-del */
	uint32_t region;
	uint32_t chunk;
	uint32_t from;		/* CTL_NO_NODE: not sent */
	uint32_t to;
};

static int build_new(struct nl_msg *msg, void *arg)
{
	struct resync_req *r = arg;

	if (nla_put_u32(msg, HBMPOOL_A_RESYNC_REGION_ID, r->region) ||
	    nla_put_u32(msg, HBMPOOL_A_RESYNC_CHUNK, r->chunk) ||
	    (r->from != CTL_NO_NODE && nla_put_u32(msg, HBMPOOL_A_RESYNC_FROM_NODE_ID, r->from)) ||
	    (r->to != CTL_NO_NODE && nla_put_u32(msg, HBMPOOL_A_RESYNC_TO_NODE_ID, r->to)))
		return -EMSGSIZE;
	return 0;
}

static int build_id(struct nl_msg *msg, void *arg)
{
	struct resync_req *r = arg;

	return nla_put_u32(msg, HBMPOOL_A_RESYNC_ID, r->id) ? -EMSGSIZE : 0;
}

/* cmd's one reply into *job. */
static int request_one(uint8_t cmd, ctl_build_fn *build, struct resync_req *r,
		       json_object **job)
{
	json_object *arr = json_object_new_array();
	int ret;

	*job = NULL;
	if (!arr)
		return -ENOMEM;
	ret = ctl_request_err(cmd, false, build, r, arr, NULL);
	if (!ret) {
		*job = json_object_get(json_object_array_get_idx(arr, 0));
		if (!*job)
			ret = -EPROTO;	/* no reply */
	}
	json_object_put(arr);
	return ret;
}

int ctl_resync_new(uint32_t region, uint32_t chunk, uint32_t from, uint32_t to,
		   json_object **job)
{
	struct resync_req r = { .region = region, .chunk = chunk, .from = from, .to = to };

	return request_one(HBMPOOL_CMD_RESYNC_NEW, build_new, &r, job);
}

int ctl_resync_get(uint32_t id, json_object **job)
{
	struct resync_req r = { .id = id };

	return request_one(HBMPOOL_CMD_RESYNC_GET, build_id, &r, job);
}

/* "123/256 (48%)" */
static const char *progress_cell(json_object *row, char *buf, size_t len)
{
	int64_t pages = ctl_json_int(row, "pages", -1);
	int64_t done = ctl_json_int(row, "pages-done", -1);

	if (pages < 0 || done < 0)
		return "-";
	snprintf(buf, len, "%" PRId64 "/%" PRId64 " (%d%%)", done, pages,
		 pages ? (int)(done * 100 / pages) : 100);
	return buf;
}

/* The errno's text, "-" if none. */
static const char *error_cell(json_object *row, char *buf, size_t len)
{
	int64_t e = ctl_json_int(row, "error", 0);

	if (e <= 0)
		return "-";
	snprintf(buf, len, "%s", strerror((int)e));
	return buf;
}

static const struct out_col cols[] = {
	{ "ID", "id", F_STR, NULL },
	{ "KIND", "kind", F_STR, NULL },
	{ "REGION", "region-id", F_STR, NULL },
	{ "CHUNK", "chunk", F_STR, NULL },
	{ "FROM", "from-node-id", F_STR, NULL },
	{ "TO", "to-node-id", F_STR, NULL },
	{ "STATE", "state", F_STR, NULL },
	{ "PAGES", NULL, F_FUNC, progress_cell },
	{ "PASSES", "passes", F_STR, NULL },
	{ "ELAPSED-MS", "elapsed-ms", F_STR, NULL },
	{ "ERROR", NULL, F_FUNC, error_cell },
};
#define NR_COLS ((int)(sizeof(cols) / sizeof(cols[0])))

/* One move as a one-row table, or as a JSON object. */
static void print_job(json_object *job)
{
	json_object *arr;

	if (ctl.json) {
		out_json(job);
		return;
	}
	arr = json_object_new_array();
	if (!arr)
		return;
	json_object_array_add(arr, json_object_get(job));
	out_table(arr, cols, NR_COLS);
	json_object_put(arr);
}

static int cmd_list(int argc, char **argv)
{
	json_object *arr;
	int ret;

	(void)argv;
	if (argc > 1)
		return ctl_bad(&ctl_obj_resync, "resync list takes no argument");
	arr = json_object_new_array();
	if (!arr)
		return CTL_EXIT_FAIL;
	ret = ctl_request(HBMPOOL_CMD_RESYNC_GET, true, NULL, NULL, arr, NULL);
	if (!ret) {
		if (ctl.json)
			out_json(arr);
		else
			out_table(arr, cols, NR_COLS);
	}
	json_object_put(arr);
	return ret;
}

static int cmd_show(int argc, char **argv)
{
	json_object *job;
	uint32_t id;
	int ret;

	if (argc < 2)
		return cmd_list(1, argv);
	if (argc > 2)
		return ctl_bad(&ctl_obj_resync, "resync show takes at most a move id");
	if (ctl_parse_u32(argv[1], &id))
		return ctl_bad(&ctl_obj_resync, "bad move id '%s'", argv[1]);
	ret = ctl_resync_get(id, &job);
	if (ret) {
		ctl_nl_error(ret, HBMPOOL_CMD_RESYNC_GET);
		return CTL_EXIT_FAIL;
	}
	print_job(job);
	json_object_put(job);
	return 0;
}

static int cmd_cancel(int argc, char **argv)
{
	struct resync_req r = { 0 };

	if (argc != 2)
		return ctl_bad(&ctl_obj_resync, "resync cancel takes one move id");
	if (ctl_parse_u32(argv[1], &r.id))
		return ctl_bad(&ctl_obj_resync, "bad move id '%s'", argv[1]);
	return ctl_request(HBMPOOL_CMD_RESYNC_DEL, false, build_id, &r, NULL, NULL);
}

void ctl_sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * Poll move id every 150 ms until it ends; progress on stderr if it is a
 * terminal.  The exit status: 0 done, 1 failed or cancelled (with why).
 */
static int wait_move(uint32_t id)
{
	bool tty = isatty(STDERR_FILENO);
	json_object *job = NULL;
	const char *st;
	int ret;

	for (;;) {
		json_object_put(job);
		ret = ctl_resync_get(id, &job);
		if (ret) {
			if (tty)
				fputc('\n', stderr);
			ctl_nl_error(ret, HBMPOOL_CMD_RESYNC_GET);
			return CTL_EXIT_FAIL;
		}
		st = ctl_resync_state(job);
		if (tty) {
			char buf[64];

			fprintf(stderr, "\rmove %u: %s %s ", id, st,
				progress_cell(job, buf, sizeof(buf)));
			fflush(stderr);
		}
		if (strcmp(st, "copying"))
			break;
		ctl_sleep_ms(150);
	}
	if (tty)
		fputc('\n', stderr);
	print_job(job);
	ret = 0;
	if (!strcmp(st, "failed")) {
		fprintf(stderr, "hbmctl: move %u failed: %s\n", id,
			strerror((int)ctl_json_int(job, "error", EIO)));
		ret = CTL_EXIT_FAIL;
	} else if (strcmp(st, "done")) {
		int64_t e = ctl_json_int(job, "error", 0);

		fprintf(stderr, "hbmctl: move %u %s: %s\n", id, st,
			strerror(e > 0 ? (int)e : ECANCELED));
		ret = CTL_EXIT_FAIL;
	}
	json_object_put(job);
	return ret;
}

/* hbmctl region move REGION CHUNK [to NODE] [from NODE] [--wait] */
int ctl_region_move(int argc, char **argv)
{
	const struct ctl_obj *obj = &ctl_obj_region;
	uint32_t region, chunk, from = CTL_NO_NODE, to = CTL_NO_NODE, id;
	bool wait = false;
	json_object *job;
	int i, ret;

	if (argc < 3)
		return ctl_bad(obj, "region move needs a region id and a chunk index");
	if (ctl_parse_u32(argv[1], &region))
		return ctl_bad(obj, "bad region id '%s'", argv[1]);
	if (ctl_parse_u32(argv[2], &chunk))
		return ctl_bad(obj, "bad chunk index '%s'", argv[2]);
	for (i = 3; i < argc; i++) {
		uint32_t *node;

		if (!strcmp(argv[i], "--wait")) {
			wait = true;
			continue;
		}
		if (!strcmp(argv[i], "to"))
			node = &to;
		else if (!strcmp(argv[i], "from"))
			node = &from;
		else
			return ctl_bad(obj, "unknown argument '%s'", argv[i]);
		if (*node != CTL_NO_NODE)
			return ctl_bad(obj, "'%s' given twice", argv[i]);
		if (i + 1 >= argc)
			return ctl_bad(obj, "'%s' needs a node id", argv[i]);
		if (ctl_parse_u32(argv[i + 1], node) || *node == CTL_NO_NODE)
			return ctl_bad(obj, "bad node id '%s'", argv[i + 1]);
		i++;
	}
	ret = ctl_resync_new(region, chunk, from, to, &job);
	if (ret) {
		ctl_nl_error(ret, HBMPOOL_CMD_RESYNC_NEW);
		return CTL_EXIT_FAIL;
	}
	id = (uint32_t)ctl_json_int(job, "id", 0);
	if (!wait)
		print_job(job);
	json_object_put(job);
	return wait ? wait_move(id) : 0;
}

static const struct ctl_cmd cmds[] = {
	{ "show", cmd_show },
	{ "list", cmd_list },
	{ "cancel", cmd_cancel },
	{ NULL, NULL },
};

const struct ctl_obj ctl_obj_resync = { "resync", cmds, NULL, usage };
