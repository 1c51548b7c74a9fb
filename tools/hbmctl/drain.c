// SPDX-License-Identifier: GPL-2.0
/*
 * hbmctl node drain NODE [--wait] [--jobs N]: the local drain of a node.
 *
 * node-set draining 1 (placement gives NODE no new chunk), then every chunk
 * of this kernel's regions whose home is NODE (region-get dump, chunks) is
 * moved off it (resync-new from NODE, no to: placement chooses), at most N
 * moves in flight (default: the resync-jobs parameter).  A move that fails
 * is tried again after 0.5 s, then 1 s; a chunk whose third move failed is
 * reported.  A lost chunk (its home lost the memory that held it) is not
 * moved but reported at once.  Without --wait, one pass starts the moves it can and returns:
 * the kernel carries them out, and the remaining chunks wait for another
 * drain.  With --wait, it goes on until node-get NODE reports chunks 0
 * (exit 0), or until nothing is moving and every chunk left failed (exit 1,
 * naming each region, chunk and error).  The drain of the whole domain is
 * hbmpoold's (hbmctl domain drain).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hbmctl.h"
#include "nl.h"
#include "output.h"
#include "resync.h"

#define DRAIN_ATTEMPTS	3
#define DRAIN_POLL_MS	200
#define DRAIN_BACKOFF_MS 500
/* Polls with chunks on the node but none in a region here: give up. */
#define DRAIN_IDLE_POLLS 50

struct dchunk {
	uint32_t region;
	uint32_t chunk;
	uint32_t job;		/* the move in flight, if moving */
	bool moving;
	bool failed;		/* DRAIN_ATTEMPTS moves failed */
	bool seen;		/* on the node in the last scan */
	bool busy;		/* being moved by someone else (syncing-node-id) */
	bool lost;		/* its data is gone (the chunk's lost flag): never moved */
	int attempts;
	int err;		/* the last failure, a positive errno */
	char msg[128];		/* its extack */
	uint64_t not_before;	/* ms: the back-off */
};

struct drain {
	uint32_t node;
	uint32_t jobs;
	struct dchunk *c;
	size_t n, cap;
	uint32_t inflight;
	uint32_t started;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static struct dchunk *find(struct drain *d, uint32_t region, uint32_t chunk)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (d->c[i].region == region && d->c[i].chunk == chunk)
			return &d->c[i];
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 64;
		struct dchunk *c = realloc(d->c, cap * sizeof(*c));

		if (!c)
			return NULL;
		d->c = c;
		d->cap = cap;
	}
	memset(&d->c[d->n], 0, sizeof(d->c[0]));
	d->c[d->n].region = region;
	d->c[d->n].chunk = chunk;
	return &d->c[d->n++];
}

static void failed_attempt(struct dchunk *c, int err, const char *msg)
{
	c->attempts++;
	c->err = err;
	snprintf(c->msg, sizeof(c->msg), "%s", msg ? msg : "");
	if (c->attempts >= DRAIN_ATTEMPTS)
		c->failed = true;
	else
		c->not_before = now_ms() + ((uint64_t)DRAIN_BACKOFF_MS << (c->attempts - 1));
}

static int build_chunks(struct nl_msg *msg, void *arg)
{
	(void)arg;
	return nla_put_flag(msg, HBMPOOL_A_REGION_CHUNKS) ? -EMSGSIZE : 0;
}

/* The chunks on the node now; drops those that left it.  0 or -errno. */
static int scan(struct drain *d)
{
	json_object *arr = json_object_new_array();
	size_t i, j, k;
	int ret;

	if (!arr)
		return -ENOMEM;
	ret = ctl_request_err(HBMPOOL_CMD_REGION_GET, true, build_chunks, NULL, arr,
			      ctl_region_merge);
	if (ret) {
		json_object_put(arr);
		return ret;
	}
	for (k = 0; k < d->n; k++)
		d->c[k].seen = false;
	for (i = 0; i < json_object_array_length(arr); i++) {
		json_object *reg = json_object_array_get_idx(arr, i), *chunks;
		uint32_t rid = (uint32_t)ctl_json_int(reg, "id", 0);

		if (!json_object_object_get_ex(reg, "chunk", &chunks))
			continue;
		for (j = 0; j < json_object_array_length(chunks); j++) {
			json_object *ch = json_object_array_get_idx(chunks, j);
			struct dchunk *c;

			if (ctl_json_int(ch, "node-id", -1) != d->node)
				continue;
			c = find(d, rid, (uint32_t)ctl_json_int(ch, "index", 0));
			if (!c) {
				json_object_put(arr);
				return -ENOMEM;
			}
			c->seen = true;
			c->busy = ctl_json_int(ch, "syncing-node-id", -1) >= 0;
			c->lost = json_object_object_get_ex(ch, "lost", NULL);
			if (c->lost && !c->failed) {
				c->failed = true;	/* for good: nothing to move */
				c->err = ENODATA;
				snprintf(c->msg, sizeof(c->msg),
					 "the chunk is lost: its home lost the memory that held it");
			}
		}
	}
	json_object_put(arr);
	/* Keep what is still there, and the moves still to hear from. */
	for (k = 0, j = 0; k < d->n; k++)
		if (d->c[k].seen || d->c[k].moving)
			d->c[j++] = d->c[k];
	d->n = j;
	return 0;
}

/* Hear from the moves in flight. */
static void poll_moves(struct drain *d)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		struct dchunk *c = &d->c[i];
		json_object *job;
		const char *st;
		int ret;

		if (!c->moving)
			continue;
		ret = ctl_resync_get(c->job, &job);
		if (ret == -ENOENT) {
			/* ended and forgotten: the next scan tells where the chunk is */
			c->moving = false;
			d->inflight--;
			continue;
		}
		if (ret)
			continue;	/* ask again next time */
		st = ctl_resync_state(job);
		if (strcmp(st, "copying")) {
			c->moving = false;
			d->inflight--;
			if (strcmp(st, "done")) {
				int64_t e = ctl_json_int(job, "error", 0);
				char msg[64];

				snprintf(msg, sizeof(msg), "move %u %s", c->job, st);
				failed_attempt(c, e > 0 ? (int)e : ECANCELED, msg);
				fprintf(stderr, "hbmctl: region %u chunk %u: %s: %s (attempt %d of %d)\n",
					c->region, c->chunk, msg, strerror(c->err), c->attempts,
					DRAIN_ATTEMPTS);
			}
		}
		json_object_put(job);
	}
}

/* Start moves while fewer than d->jobs are in flight; 0 or -errno (fatal). */
static int start_moves(struct drain *d)
{
	uint64_t now = now_ms();
	size_t i;

	for (i = 0; i < d->n && d->inflight < d->jobs; i++) {
		struct dchunk *c = &d->c[i];
		json_object *job;
		int ret;

		if (!c->seen || c->moving || c->failed || c->busy || now < c->not_before)
			continue;
		ret = ctl_resync_new(c->region, c->chunk, d->node, CTL_NO_NODE, &job);
		if (!ret) {
			c->job = (uint32_t)ctl_json_int(job, "id", 0);
			c->moving = true;
			d->inflight++;
			d->started++;
			json_object_put(job);
		} else if (ret == -EBUSY) {
			/* someone else moves it: look again later */
			c->not_before = now + DRAIN_BACKOFF_MS;
		} else if (ret == -ENOENT) {
			c->seen = false;	/* the region went */
		} else if (ret == -EOPNOTSUPP || ret == -EPERM || ret == -ENOTCONN) {
			return ret;		/* no move can work */
		} else {
			failed_attempt(c, -ret, hbm_nl_extack(ctl_nl()));
			fprintf(stderr, "hbmctl: region %u chunk %u: resync-new: %s%s%s (attempt %d of %d)\n",
				c->region, c->chunk, strerror(-ret), c->msg[0] ? ": " : "",
				c->msg, c->attempts, DRAIN_ATTEMPTS);
		}
	}
	return 0;
}

struct node_req {
	uint32_t id;
	int draining;		/* -1: node-get */
};

static int build_node(struct nl_msg *msg, void *arg)
{
	struct node_req *r = arg;

	if (nla_put_u32(msg, HBMPOOL_A_NODE_ID, r->id) ||
	    (r->draining >= 0 && nla_put_u8(msg, HBMPOOL_A_NODE_DRAINING, (uint8_t)r->draining)))
		return -EMSGSIZE;
	return 0;
}

/* The node's chunks (node-get), -1 if it does not say; -errno on refusal. */
static int64_t node_chunks(uint32_t node)
{
	struct node_req r = { .id = node, .draining = -1 };
	json_object *arr = json_object_new_array();
	int64_t v;
	int ret;

	if (!arr)
		return -ENOMEM;
	ret = ctl_request_err(HBMPOOL_CMD_NODE_GET, false, build_node, &r, arr, NULL);
	v = ret ? ret : ctl_json_int(json_object_array_get_idx(arr, 0), "chunks", -1);
	json_object_put(arr);
	return v;
}

static int build_params(struct nl_msg *msg, void *arg)
{
	(void)msg;
	(void)arg;
	return 0;
}

/* The resync-jobs parameter, 4 (its default) if the kernel does not say. */
static uint32_t resync_jobs(void)
{
	json_object *arr = json_object_new_array();
	int64_t v = -1;

	if (arr && !ctl_request_err(HBMPOOL_CMD_PARAMS_GET, false, build_params, NULL, arr, NULL))
		v = ctl_json_int(json_object_array_get_idx(arr, 0), "resync-jobs", -1);
	json_object_put(arr);
	return v > 0 ? (uint32_t)v : 4;
}

static size_t nr_on_node(const struct drain *d)
{
	size_t i, n = 0;

	for (i = 0; i < d->n; i++)
		n += d->c[i].seen;
	return n;
}

/* The outcome on stdout; the chunks that could not be moved on stderr. */
static int report(const struct drain *d, int64_t left, bool wait)
{
	json_object *o = json_object_new_object(), *failed = json_object_new_array();
	int ret = 0;
	size_t i;

	for (i = 0; i < d->n; i++) {
		const struct dchunk *c = &d->c[i];
		json_object *f;

		if (!c->seen || c->moving || !c->err || (wait && !c->failed))
			continue;
		fprintf(stderr, "hbmctl: region %u chunk %u could not be moved off node %u: %s%s%s%s\n",
			c->region, c->chunk, d->node, strerror(c->err), c->msg[0] ? " (" : "",
			c->msg, c->msg[0] ? ")" : "");
		ret = CTL_EXIT_FAIL;
		f = json_object_new_object();
		if (!f || !failed)
			continue;
		json_object_object_add(f, "region-id", json_object_new_int64(c->region));
		json_object_object_add(f, "chunk", json_object_new_int64(c->chunk));
		json_object_object_add(f, "error", json_object_new_int(c->err));
		json_object_object_add(f, "attempts", json_object_new_int(c->attempts));
		json_object_array_add(failed, f);
	}
	if (ctl.json && o) {
		json_object_object_add(o, "node-id", json_object_new_int64(d->node));
		json_object_object_add(o, "chunks", json_object_new_int64(left));
		json_object_object_add(o, "started", json_object_new_int64(d->started));
		json_object_object_add(o, "moving", json_object_new_int64(d->inflight));
		json_object_object_add(o, "failed", json_object_get(failed));
		out_json(o);
	} else {
		printf("node %u: %" PRId64 " chunks left, %u moves started, %u moving\n",
		       d->node, left, d->started, d->inflight);
	}
	json_object_put(failed);
	json_object_put(o);
	return ret;
}

static void progress(const struct drain *d, int64_t left, bool tty, int64_t *last)
{
	if (tty) {
		fprintf(stderr, "\rnode %u: %" PRId64 " chunks left, %u moving   ", d->node,
			left, d->inflight);
		fflush(stderr);
	} else if (left != *last) {
		fprintf(stderr, "node %u: %" PRId64 " chunks left, %u moving\n", d->node, left,
			d->inflight);
	}
	*last = left;
}

int ctl_node_drain(int argc, char **argv)
{
	const struct ctl_obj *obj = &ctl_obj_node;
	struct drain d = { 0 };
	struct node_req nr = { .draining = 1 };
	bool wait = false, has_jobs = false, tty = isatty(STDERR_FILENO);
	int64_t left = -1, last = -2;
	int i, ret, idle = 0;

	if (argc < 2)
		return ctl_bad(obj, "node drain needs a node id");
	if (ctl_parse_u32(argv[1], &d.node))
		return ctl_bad(obj, "bad node id '%s'", argv[1]);
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--wait")) {
			wait = true;
		} else if (!strcmp(argv[i], "--jobs")) {
			if (i + 1 >= argc)
				return ctl_bad(obj, "'--jobs' needs a number");
			if (ctl_parse_u32(argv[i + 1], &d.jobs) || !d.jobs)
				return ctl_bad(obj, "bad --jobs '%s'", argv[i + 1]);
			has_jobs = true;
			i++;
		} else {
			return ctl_bad(obj, "unknown argument '%s'", argv[i]);
		}
	}
	nr.id = d.node;
	ret = ctl_request(HBMPOOL_CMD_NODE_SET, false, build_node, &nr, NULL, NULL);
	if (ret)
		return ret;
	if (!has_jobs)
		d.jobs = resync_jobs();

	for (;;) {
		poll_moves(&d);
		ret = scan(&d);
		if (!ret)
			ret = start_moves(&d);
		if (ret) {
			if (tty && last != -2)
				fputc('\n', stderr);
			ctl_nl_error(ret, ret == -EOPNOTSUPP || ret == -EPERM ?
				     HBMPOOL_CMD_RESYNC_NEW : HBMPOOL_CMD_REGION_GET);
			free(d.c);
			return CTL_EXIT_FAIL;
		}
		left = node_chunks(d.node);
		if (left < -1) {
			if (tty && last != -2)
				fputc('\n', stderr);
			ctl_nl_error((int)left, HBMPOOL_CMD_NODE_GET);
			free(d.c);
			return CTL_EXIT_FAIL;
		}
		if (left < 0)		/* a kernel without chunks: count them here */
			left = (int64_t)nr_on_node(&d);
		if (!wait)
			break;
		progress(&d, left, tty, &last);
		if (left == 0)
			break;
		if (!d.inflight) {
			size_t k, todo = 0;

			for (k = 0; k < d.n; k++)
				todo += d.c[k].seen && !d.c[k].failed;
			/* every chunk left failed for good */
			if (d.n && !todo)
				break;
			/* the kernel counts chunks no region here shows */
			if (!d.n && ++idle > DRAIN_IDLE_POLLS) {
				if (tty)
					fputc('\n', stderr);
				fprintf(stderr, "hbmctl: node %u still has %" PRId64 " chunks, but no region here holds one there\n",
					d.node, left);
				free(d.c);
				return CTL_EXIT_FAIL;
			}
			if (d.n)
				idle = 0;
		}
		ctl_sleep_ms(DRAIN_POLL_MS);
	}
	if (tty && wait)
		fputc('\n', stderr);
	ret = report(&d, left, wait);
	if (wait && left && !ret)
		ret = CTL_EXIT_FAIL;
	free(d.c);
	return ret;
}

int ctl_node_undrain(int argc, char **argv)
{
	struct node_req nr = { .draining = 0 };

	if (argc != 2)
		return ctl_bad(&ctl_obj_node, "node undrain takes one node id");
	if (ctl_parse_u32(argv[1], &nr.id))
		return ctl_bad(&ctl_obj_node, "bad node id '%s'", argv[1]);
	return ctl_request(HBMPOOL_CMD_NODE_SET, false, build_node, &nr, NULL, NULL);
}
