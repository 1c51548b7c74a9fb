// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of the event channel of daemon/kernel_nl.c without the module:
 * kernel_nl.c is linked against a scripted hbmnl (the functions it calls,
 * below) whose hbm_nl_listen() hands it the events of a script, as the
 * real one would from the monitor socket, built as the kernel builds them
 * (attributes with libnl), an ENOBUFS where the script says.
 *
 *  1. events_open subscribes to "monitor" and makes the socket
 *     non-blocking;
 *  2. node, domain, link, segment, region, region-change (degraded and
 *     lost chunks) and resync (chunk move) events come out as small
 *     structs, their fields right; params events only count (numbers);
 *  3. a gap in the kernel's event numbers is an overrun, before the event
 *     after the gap; an ENOBUFS is an overrun, and the next number after
 *     it is no gap;
 *  4. a buffer smaller than the pending events: they come out over several
 *     reads, in order, none lost;
 *  5. domain_read: the epoch and the fenced flag from one domain-get (an
 *     older kernel's reply without them: 0, not fenced);
 *  6. chunk moves: chunks_read over a region split across two dump
 *     messages (sizes, the last chunk short, syncing-node-id), resync_new
 *     (its attributes, the move's id), resync_read, resync_del,
 *     resync_params (resync-mbps set only when given, resync-jobs read);
 *  7. stats_read: the counters, and the region dump summed: lost,
 *     degraded (lost ones included), replicated and degraded regions.
 *  8. the segment and transport shm: setup's segment-new with provider
 *     shm and its device (neither with ram); an existing segment kept
 *     with the same size, provider and device, refused (-EEXIST, said)
 *     with another provider or device; node_add's transport (shm with the
 *     device, else tcp); nodes_read tells the shm nodes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"

#include "hbmnl.h"
#include "kernel.h"

/* ---- the scripted hbmnl ---- */

struct step {
	int cmd;		/* 0: ENOBUFS */
	uint64_t seq;
	uint32_t id;
	uint32_t state;
	bool self, fenced;
	uint64_t epoch;
};

static struct step script[64];
static unsigned int nsteps, pos;
static char subscribed[32];
static int pipefd[2] = { -1, -1 };

struct hbm_nl {
	int dummy;
};

static struct hbm_nl the_nl;

int hbm_nl_open(struct hbm_nl **out)
{
	*out = &the_nl;
	return 0;
}

void hbm_nl_close(struct hbm_nl *nl)
{
	(void)nl;
}

/* Requests: only domain-get is answered, as the kernel's domain fill (below). */
static uint8_t req_cmd;
static unsigned int requests;
static struct {
	bool epoch;		/* the kernel has the attribute */
	uint64_t epoch_v;
	bool fenced;
} domain;

struct nl_msg *hbm_nl_msg(struct hbm_nl *nl, uint8_t cmd, int dump)
{
	(void)nl, (void)dump;
	req_cmd = cmd;
	return nlmsg_alloc();
}

/* The chunk-move requests' attributes, as the fake kernel took them. */
static struct nlattr *req_tb[HBMPOOL_A_RESYNC_MAX + 1];
static struct nl_msg *req_kept;
static bool req_chunks_flag;
static uint32_t req_mbps = UINT32_MAX;

static int reply_with(hbm_nl_reply_fn *cb, void *arg, uint8_t cmd, struct nl_msg *reply)
{
	int ret = cb ? cb(cmd, nlmsg_attrdata(nlmsg_hdr(reply), 0),
			  nlmsg_attrlen(nlmsg_hdr(reply), 0), arg) : 0;

	nlmsg_free(reply);
	return ret;
}

/* A region's dump message: its id, sizes if first, chunks [from, to). */
static int region_msg(hbm_nl_reply_fn *cb, void *arg, bool first, uint32_t from, uint32_t to)
{
	struct nl_msg *r = nlmsg_alloc();
	struct nlattr *n;
	uint32_t i;

	if (!r)
		return -ENOMEM;
	nla_put_u32(r, HBMPOOL_A_REGION_ID, 7);
	if (first) {
		nla_put_u64(r, HBMPOOL_A_REGION_CHUNK_SIZE, 1 << 20);
		nla_put_u64(r, HBMPOOL_A_REGION_LENGTH, (5 << 20) / 2);	/* 2.5 chunks */
	}
	for (i = from; i < to; i++) {
		n = nla_nest_start(r, HBMPOOL_A_REGION_CHUNK);
		nla_put_u32(r, HBMPOOL_A_CHUNK_INDEX, i);
		nla_put_u32(r, HBMPOOL_A_CHUNK_NODE_ID, 3);
		nla_put_u64(r, HBMPOOL_A_CHUNK_OFFSET, (uint64_t)i << 20);
		if (i == 1)
			nla_put_u32(r, HBMPOOL_A_CHUNK_SYNCING_NODE_ID, 2);
		if (i == 2)
			nla_put_flag(r, HBMPOOL_A_CHUNK_LOST);
		nla_nest_end(r, n);
	}
	return reply_with(cb, arg, HBMPOOL_CMD_REGION_GET, r);
}

static int resync_msg(hbm_nl_reply_fn *cb, void *arg, uint32_t id, uint32_t state, uint32_t error)
{
	struct nl_msg *r = nlmsg_alloc();

	if (!r)
		return -ENOMEM;
	nla_put_u32(r, HBMPOOL_A_RESYNC_ID, id);
	nla_put_u32(r, HBMPOOL_A_RESYNC_REGION_ID, 7);
	nla_put_u32(r, HBMPOOL_A_RESYNC_CHUNK, 1);
	nla_put_u32(r, HBMPOOL_A_RESYNC_FROM_NODE_ID, 3);
	nla_put_u32(r, HBMPOOL_A_RESYNC_TO_NODE_ID, 2);
	nla_put_u32(r, HBMPOOL_A_RESYNC_STATE, state);
	nla_put_u32(r, HBMPOOL_A_RESYNC_PAGES, 256);
	nla_put_u32(r, HBMPOOL_A_RESYNC_PAGES_DONE, 100);
	nla_put_u32(r, HBMPOOL_A_RESYNC_ERROR, error);
	return reply_with(cb, arg, HBMPOOL_CMD_RESYNC_GET, r);
}

/*
 * The region dump without chunks (stats_read): a replicated region with 3
 * chunks degraded, 1 of them lost; an unreplicated one with 2 lost (a
 * kernel before replicas: lost-chunks only); a replicated one, all good.
 */
static int stats_regions(hbm_nl_reply_fn *cb, void *arg)
{
	static const struct {
		uint32_t id, replicas, degraded, lost;
		bool has_replicas;
	} reg[] = { { 1, 2, 3, 1, true }, { 2, 0, 0, 2, false }, { 3, 3, 0, 0, true } };
	struct nl_msg *r;
	size_t i;
	int ret = 0;

	for (i = 0; i < sizeof(reg) / sizeof(reg[0]) && !ret; i++) {
		r = nlmsg_alloc();
		if (!r)
			return -ENOMEM;
		nla_put_u32(r, HBMPOOL_A_REGION_ID, reg[i].id);
		nla_put_u32(r, HBMPOOL_A_REGION_LOST_CHUNKS, reg[i].lost);
		if (reg[i].has_replicas) {
			nla_put_u32(r, HBMPOOL_A_REGION_REPLICAS, reg[i].replicas);
			nla_put_u32(r, HBMPOOL_A_REGION_DEGRADED_CHUNKS, reg[i].degraded);
		}
		ret = reply_with(cb, arg, HBMPOOL_CMD_REGION_GET, r);
	}
	return ret;
}

/* region-get (chunks), resync-*, params-*: the chunk moves' side */
static int moves_request(struct nl_msg *msg, hbm_nl_reply_fn *cb, void *arg)
{
	struct nlattr *tb[HBMPOOL_A_PARAMS_MAX + 1];
	struct nl_msg *r;
	int ret;

	nlmsg_free(req_kept);
	req_kept = msg;
	memset(req_tb, 0, sizeof(req_tb));
	switch (req_cmd) {
	case HBMPOOL_CMD_STATS_GET:
		r = nlmsg_alloc();
		if (!r)
			return -ENOMEM;
		nla_put_u64(r, HBMPOOL_A_STATS_FAULTS, 11);
		return reply_with(cb, arg, HBMPOOL_CMD_STATS_GET, r);
	case HBMPOOL_CMD_REGION_GET:
	{
		struct nlattr *rt[HBMPOOL_A_REGION_MAX + 1];

		nla_parse(rt, HBMPOOL_A_REGION_MAX, nlmsg_attrdata(nlmsg_hdr(msg), 0),
			  nlmsg_attrlen(nlmsg_hdr(msg), 0), NULL);
		req_chunks_flag = rt[HBMPOOL_A_REGION_CHUNKS] != NULL;
	}
		if (!req_chunks_flag)
			return stats_regions(cb, arg);
		/* one region over two messages, as a big one is */
		ret = region_msg(cb, arg, true, 0, 2);
		return ret ? ret : region_msg(cb, arg, false, 2, 3);
	case HBMPOOL_CMD_RESYNC_NEW:
		nla_parse(req_tb, HBMPOOL_A_RESYNC_MAX, nlmsg_attrdata(nlmsg_hdr(msg), 0),
			  nlmsg_attrlen(nlmsg_hdr(msg), 0), NULL);
		return resync_msg(cb, arg, 42, 0, 0);
	case HBMPOOL_CMD_RESYNC_GET:
		ret = resync_msg(cb, arg, 42, HBMPOOL_RESYNC_STATE_COPYING, 0);
		return ret ? ret : resync_msg(cb, arg, 43, HBMPOOL_RESYNC_STATE_FAILED, ETIMEDOUT);
	case HBMPOOL_CMD_RESYNC_DEL:
		nla_parse(req_tb, HBMPOOL_A_RESYNC_MAX, nlmsg_attrdata(nlmsg_hdr(msg), 0),
			  nlmsg_attrlen(nlmsg_hdr(msg), 0), NULL);
		return 0;
	case HBMPOOL_CMD_PARAMS_SET:
		nla_parse(tb, HBMPOOL_A_PARAMS_MAX, nlmsg_attrdata(nlmsg_hdr(msg), 0),
			  nlmsg_attrlen(nlmsg_hdr(msg), 0), NULL);
		req_mbps = tb[HBMPOOL_A_PARAMS_RESYNC_MBPS] ?
			   nla_get_u32(tb[HBMPOOL_A_PARAMS_RESYNC_MBPS]) : UINT32_MAX;
		return 0;
	case HBMPOOL_CMD_PARAMS_GET:
		r = nlmsg_alloc();
		if (!r)
			return -ENOMEM;
		nla_put_u32(r, HBMPOOL_A_PARAMS_FETCH_TIMEOUT_MS, 5000);
		nla_put_u32(r, HBMPOOL_A_PARAMS_RESYNC_JOBS, 3);
		return reply_with(cb, arg, HBMPOOL_CMD_PARAMS_GET, r);
	}
	return -EIO;
}

/* This node's segment as the fake kernel has it (size 0: none). */
static struct {
	uint64_t size;
	char provider[16], device[32];
	bool new_had_provider;		/* the last segment-new's request */
} seg;

/* The segment's and the nodes' side: domain-set, node-set, segment-*, node-get. */
static int setup_request(struct nl_msg *msg, hbm_nl_reply_fn *cb, void *arg)
{
	struct nlattr *tb[HBMPOOL_A_SEGMENT_MAX + 1];
	struct nl_msg *r;
	int ret = 0, i;

	nla_parse(tb, HBMPOOL_A_SEGMENT_MAX, nlmsg_attrdata(nlmsg_hdr(msg), 0),
		  nlmsg_attrlen(nlmsg_hdr(msg), 0), NULL);
	if (req_cmd == HBMPOOL_CMD_SEGMENT_NEW) {
		seg.size = nla_get_u64(tb[HBMPOOL_A_SEGMENT_SIZE]);
		seg.new_had_provider = tb[HBMPOOL_A_SEGMENT_PROVIDER];
		snprintf(seg.provider, sizeof(seg.provider), "%s",
			 tb[HBMPOOL_A_SEGMENT_PROVIDER] ?
			 nla_get_string(tb[HBMPOOL_A_SEGMENT_PROVIDER]) : "ram");
		snprintf(seg.device, sizeof(seg.device), "%s", tb[HBMPOOL_A_SEGMENT_DEVICE] ?
			 nla_get_string(tb[HBMPOOL_A_SEGMENT_DEVICE]) : "");
	}
	nlmsg_free(msg);
	switch (req_cmd) {
	case HBMPOOL_CMD_SEGMENT_GET:
		r = nlmsg_alloc();
		if (!r)
			return -ENOMEM;
		nla_put_u64(r, HBMPOOL_A_SEGMENT_SIZE, seg.size);
		nla_put_string(r, HBMPOOL_A_SEGMENT_PROVIDER, seg.size ? seg.provider : "none");
		nla_put_u64(r, HBMPOOL_A_SEGMENT_INCARNATION, seg.size ? 99 : 0);
		if (seg.size && *seg.device)
			nla_put_string(r, HBMPOOL_A_SEGMENT_DEVICE, seg.device);
		return reply_with(cb, arg, HBMPOOL_CMD_SEGMENT_GET, r);
	case HBMPOOL_CMD_NODE_GET:	/* node 2 over shm, node 3 over tcp */
		for (i = 2; i <= 3 && !ret; i++) {
			r = nlmsg_alloc();
			if (!r)
				return -ENOMEM;
			nla_put_u32(r, HBMPOOL_A_NODE_ID, i);
			nla_put_string(r, HBMPOOL_A_NODE_TRANSPORT, i == 2 ? "shm" : "tcp");
			if (i == 2)
				nla_put_string(r, HBMPOOL_A_NODE_DEVICE, "0000:00:12.0");
			ret = reply_with(cb, arg, HBMPOOL_CMD_NODE_GET, r);
		}
		return ret;
	}
	return 0;	/* domain-set, node-set: taken */
}

int hbm_nl_request(struct hbm_nl *nl, struct nl_msg *msg, hbm_nl_reply_fn *cb, void *arg)
{
	struct nl_msg *reply;
	int ret;

	(void)nl;
	requests++;
	if (req_cmd == HBMPOOL_CMD_DOMAIN_SET || req_cmd == HBMPOOL_CMD_NODE_SET ||
	    req_cmd == HBMPOOL_CMD_SEGMENT_NEW || req_cmd == HBMPOOL_CMD_SEGMENT_GET ||
	    req_cmd == HBMPOOL_CMD_NODE_GET)
		return setup_request(msg, cb, arg);
	if (req_cmd != HBMPOOL_CMD_DOMAIN_GET)
		return moves_request(msg, cb, arg);
	nlmsg_free(msg);
	reply = nlmsg_alloc();
	if (!reply)
		return -ENOMEM;
	ret = nla_put_string(reply, HBMPOOL_A_DOMAIN_NAME, "unit") ||
	      nla_put_u32(reply, HBMPOOL_A_DOMAIN_SELF_ID, 1) ||
	      (domain.epoch && nla_put_u64(reply, HBMPOOL_A_DOMAIN_EPOCH, domain.epoch_v)) ||
	      (domain.fenced && nla_put_flag(reply, HBMPOOL_A_DOMAIN_FENCED)) ? -EMSGSIZE : 0;
	if (!ret && cb)
		ret = cb(HBMPOOL_CMD_DOMAIN_GET, nlmsg_attrdata(nlmsg_hdr(reply), 0),
			 nlmsg_attrlen(nlmsg_hdr(reply), 0), arg);
	nlmsg_free(reply);
	return ret;
}

const char *hbm_nl_extack(const struct hbm_nl *nl)
{
	(void)nl;
	return "";
}

int hbm_nl_extack_attr(const struct hbm_nl *nl)
{
	(void)nl;
	return 0;
}

/* node-new's transport and device, as the fake kernel took them. */
static char new_transport[16], new_device[32];

int hbm_nl_node_new(struct hbm_nl *nl, const struct hbm_nl_node *n, char *ext, size_t extlen)
{
	(void)nl, (void)ext, (void)extlen;
	snprintf(new_transport, sizeof(new_transport), "%s", n->transport ? n->transport : "");
	snprintf(new_device, sizeof(new_device), "%s", n->device ? n->device : "");
	return 0;
}

int hbm_nl_node_del(struct hbm_nl *nl, uint32_t id, char *ext, size_t extlen)
{
	(void)nl, (void)id, (void)ext, (void)extlen;
	return -EIO;
}

int hbm_nl_subscribe(struct hbm_nl *nl, const char *group)
{
	(void)nl;
	snprintf(subscribed, sizeof(subscribed), "%s", group);
	return pipe(pipefd) ? -errno : 0;
}

int hbm_nl_monitor_fd(struct hbm_nl *nl)
{
	(void)nl;
	return pipefd[0] >= 0 ? pipefd[0] : -EINVAL;
}

/* One scripted event, with the attributes the kernel puts in it. */
static int deliver(const struct step *s, hbm_nl_reply_fn *cb, void *arg)
{
	struct nl_msg *msg = nlmsg_alloc();
	int ret = 0;

	if (!msg)
		return -ENOMEM;
	switch (s->cmd) {
	case HBMPOOL_CMD_NODE_ADD_NTF:
	case HBMPOOL_CMD_NODE_DEL_NTF:
	case HBMPOOL_CMD_NODE_CHANGE_NTF:
		ret = nla_put_u32(msg, HBMPOOL_A_NODE_ID, s->id) ||
		      nla_put_u32(msg, HBMPOOL_A_NODE_STATE, s->state) ||
		      (s->self && nla_put_flag(msg, HBMPOOL_A_NODE_SELF)) ||
		      nla_put_u64(msg, HBMPOOL_A_NODE_SEQ, s->seq);
		break;
	case HBMPOOL_CMD_LINK_CHANGE_NTF:
		ret = nla_put_u32(msg, HBMPOOL_A_LINK_NODE_ID, s->id) ||
		      nla_put_u32(msg, HBMPOOL_A_LINK_OPER_STATE, s->state) ||
		      nla_put_u32(msg, HBMPOOL_A_LINK_HEALTH, 3) ||
		      nla_put_u64(msg, HBMPOOL_A_LINK_SEQ, s->seq);
		break;
	case HBMPOOL_CMD_DOMAIN_CHANGE_NTF:
		ret = nla_put_string(msg, HBMPOOL_A_DOMAIN_NAME, "unit") ||
		      nla_put_u64(msg, HBMPOOL_A_DOMAIN_EPOCH, s->epoch) ||
		      (s->fenced && nla_put_flag(msg, HBMPOOL_A_DOMAIN_FENCED)) ||
		      nla_put_u64(msg, HBMPOOL_A_DOMAIN_SEQ, s->seq);
		break;
	case HBMPOOL_CMD_SEGMENT_CHANGE_NTF:
		ret = nla_put_u64(msg, HBMPOOL_A_SEGMENT_SEQ, s->seq);
		break;
	case HBMPOOL_CMD_REGION_NEW_NTF:
		ret = nla_put_u32(msg, HBMPOOL_A_REGION_ID, s->id) ||
		      nla_put_u64(msg, HBMPOOL_A_REGION_SEQ, s->seq);
		break;
	case HBMPOOL_CMD_REGION_CHANGE_NTF:
		/* region-get's attributes, as hbmpool_nl_region_fill() puts them */
		ret = nla_put_u32(msg, HBMPOOL_A_REGION_ID, s->id) ||
		      nla_put_u64(msg, HBMPOOL_A_REGION_SEQ, s->seq) ||
		      nla_put_u32(msg, HBMPOOL_A_REGION_LOST_CHUNKS, s->state) ||
		      nla_put_u32(msg, HBMPOOL_A_REGION_DEGRADED_CHUNKS, (uint32_t)s->epoch) ||
		      nla_put_u32(msg, HBMPOOL_A_REGION_REPLICAS, 2) ||
		      nla_put_u64(msg, HBMPOOL_A_REGION_LENGTH, 4 << 20);
		break;
	case HBMPOOL_CMD_RESYNC_CHANGE_NTF:
		ret = nla_put_u32(msg, HBMPOOL_A_RESYNC_ID, s->id) ||
		      nla_put_u32(msg, HBMPOOL_A_RESYNC_STATE, s->state) ||
		      nla_put_u64(msg, HBMPOOL_A_RESYNC_SEQ, s->seq);
		break;
	case HBMPOOL_CMD_PARAMS_CHANGE_NTF:
		ret = nla_put_u64(msg, HBMPOOL_A_PARAMS_SEQ, s->seq);
		break;
	}
	if (!ret)
		ret = cb((uint8_t)s->cmd, nlmsg_attrdata(nlmsg_hdr(msg), 0),
			 nlmsg_attrlen(nlmsg_hdr(msg), 0), arg);
	nlmsg_free(msg);
	return ret;
}

int hbm_nl_listen(struct hbm_nl *nl, hbm_nl_reply_fn *cb, void *arg)
{
	int ret;

	(void)nl;
	while (pos < nsteps) {
		if (!script[pos].cmd) {
			pos++;
			return -ENOBUFS;
		}
		ret = deliver(&script[pos++], cb, arg);
		if (ret)
			return ret < 0 ? ret : 0;
	}
	return -EAGAIN;
}

/* ---- the test ---- */

static void add(int cmd, uint64_t seq, uint32_t id, uint32_t state)
{
	script[nsteps++] = (struct step){ .cmd = cmd, .seq = seq, .id = id, .state = state };
}

int main(void)
{
	struct hbmd_kernel_domain d = { .epoch = 7, .fenced = true };
	struct hbmd_kernel_event ev[16];
	struct hbmd_kernel k;
	char err[256] = "";
	int fd, n, i, total;
	bool good;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (hbmd_kernel_nl_open(&k, err, sizeof(err))) {
		ok(0, "open: %s", err);
		return tap_finish();
	}
	fd = k.ops->events_open(k.ctx, err, sizeof(err));
	ok(fd >= 0 && fd == pipefd[0] && !strcmp(subscribed, HBMPOOL_MCGRP_MONITOR) &&
	   (fcntl(fd, F_GETFL) & O_NONBLOCK),
	   "events_open: the \"%s\" group, its socket non-blocking (%s)", subscribed,
	   fd < 0 ? err : "ok");
	ok(k.ops->events_open(k.ctx, err, sizeof(err)) == fd, "events_open again: the same socket");

	n = k.ops->events_read(k.ctx, ev, 16, err, sizeof(err));
	ok(n == 0, "nothing pending: 0 events (%d)", n);

	/* 2. the kinds */
	add(HBMPOOL_CMD_NODE_ADD_NTF, 1, 7, 0);
	script[nsteps] = (struct step){ .cmd = HBMPOOL_CMD_DOMAIN_CHANGE_NTF, .seq = 2,
					.epoch = 42, .fenced = true };
	nsteps++;
	add(HBMPOOL_CMD_LINK_CHANGE_NTF, 3, 7, 0);
	add(HBMPOOL_CMD_REGION_NEW_NTF, 4, 5, 0);
	add(HBMPOOL_CMD_PARAMS_CHANGE_NTF, 5, 0, 0);
	add(HBMPOOL_CMD_NODE_CHANGE_NTF, 6, 7, 2);
	script[nsteps] = (struct step){ .cmd = HBMPOOL_CMD_NODE_CHANGE_NTF, .seq = 7, .id = 1,
					.state = 2, .self = true };
	nsteps++;
	add(HBMPOOL_CMD_SEGMENT_CHANGE_NTF, 8, 0, 0);
	add(HBMPOOL_CMD_NODE_DEL_NTF, 9, 7, 3);
	n = k.ops->events_read(k.ctx, ev, 16, err, sizeof(err));
	ok(n == 8, "9 events, 1 of them params: 8 out (%d)", n);
	ok(n == 8 && ev[0].kind == HBMD_KEV_NODE_ADD && ev[0].id == 7 && ev[0].state == 0 &&
	   !ev[0].self && ev[0].seq == 1,
	   "node-add-ntf: node 7, live, seq 1");
	ok(n == 8 && ev[1].kind == HBMD_KEV_DOMAIN && ev[1].fenced && ev[1].epoch == 42,
	   "domain-change-ntf: fenced, epoch 42");
	ok(n == 8 && ev[2].kind == HBMD_KEV_LINK && ev[2].id == 7 && ev[2].state == 0 &&
	   ev[2].health == 3, "link-change-ntf: node 7, down, health 3");
	ok(n == 8 && ev[3].kind == HBMD_KEV_REGION && ev[3].id == 5 && ev[3].seq == 4,
	   "region-new-ntf: region 5, seq 4");
	ok(n == 8 && ev[4].kind == HBMD_KEV_NODE_CHANGE && ev[4].id == 7 &&
	   ev[4].state == HBMD_NODE_FENCED && ev[5].kind == HBMD_KEV_NODE_CHANGE && ev[5].self,
	   "node-change-ntf: node 7 fenced; this node's, self");
	ok(n == 8 && ev[6].kind == HBMD_KEV_SEGMENT && ev[7].kind == HBMD_KEV_NODE_DEL &&
	   ev[7].id == 7 && ev[7].seq == 9, "segment-change-ntf; node-del-ntf: node 7, seq 9");

	/* 3. losses */
	add(HBMPOOL_CMD_NODE_ADD_NTF, 12, 8, 0);	/* 10, 11 lost */
	add(HBMPOOL_CMD_DOMAIN_CHANGE_NTF, 13, 0, 0);
	script[nsteps++] = (struct step){ .cmd = 0 };	/* ENOBUFS */
	add(HBMPOOL_CMD_NODE_DEL_NTF, 20, 8, 3);	/* after a loss: no gap of its own */
	add(HBMPOOL_CMD_DOMAIN_CHANGE_NTF, 21, 0, 0);
	n = k.ops->events_read(k.ctx, ev, 16, err, sizeof(err));
	ok(n == 6 && ev[0].kind == HBMD_KEV_OVERRUN && ev[1].kind == HBMD_KEV_NODE_ADD &&
	   ev[1].id == 8 && ev[2].kind == HBMD_KEV_DOMAIN,
	   "a gap in the numbers (10, 11): an overrun before the event after it (%d events)", n);
	ok(n == 6 && ev[3].kind == HBMD_KEV_OVERRUN && ev[4].kind == HBMD_KEV_NODE_DEL &&
	   ev[5].kind == HBMD_KEV_DOMAIN,
	   "ENOBUFS: an overrun; the next number after it is no gap (one overrun, not two)");

	/* 4. a small buffer */
	for (i = 0; i < 10; i++)
		add(HBMPOOL_CMD_NODE_CHANGE_NTF, 22 + (uint64_t)i, 9, 0);
	good = true;
	total = 0;
	for (i = 0; i < 10; i++) {
		int j;

		n = k.ops->events_read(k.ctx, ev, 4, err, sizeof(err));
		if (n <= 0)
			break;
		for (j = 0; j < n; j++)
			good = good && ev[j].kind == HBMD_KEV_NODE_CHANGE &&
			       ev[j].seq == 22 + (uint64_t)total + (uint64_t)j;
		total += n;
	}
	ok(good && total == 10 && n == 0,
	   "10 events through a buffer of 4: all of them, in order, no overrun (%d)", total);
	/* a chunk move's event, numbered as every other: no gap */
	add(HBMPOOL_CMD_RESYNC_CHANGE_NTF, 32, 11, 1);
	n = k.ops->events_read(k.ctx, ev, 16, err, sizeof(err));
	ok(n == 1 && ev[0].kind == HBMD_KEV_RESYNC && ev[0].id == 11 && ev[0].state == 1 &&
	   ev[0].seq == 32, "resync-change-ntf: move 11, done, seq 32, no overrun (%d)", n);
	/* region-change-ntf: the region, its degraded and lost chunks */
	script[nsteps++] = (struct step){ .cmd = HBMPOOL_CMD_REGION_CHANGE_NTF, .seq = 33, .id = 4,
					  .state = 1, .epoch = 3 };
	add(HBMPOOL_CMD_REGION_NEW_NTF, 34, 5, 0);
	n = k.ops->events_read(k.ctx, ev, 16, err, sizeof(err));
	ok(n == 2 && ev[0].kind == HBMD_KEV_REGION_CHANGE && ev[0].id == 4 &&
	   ev[0].degraded == 3 && ev[0].lost == 1 && ev[0].seq == 33 &&
	   ev[1].kind == HBMD_KEV_REGION && ev[1].id == 5 && !ev[1].degraded && !ev[1].lost,
	   "region-change-ntf: region 4, 3 chunks degraded, 1 lost, seq 33; then a region-new-ntf without them (%d)",
	   n);
	n = k.ops->events_read(k.ctx, ev, 1, err, sizeof(err));
	ok(n == -EINVAL, "a buffer of 1: refused (room for an overrun and an event)");

	/* the domain: one domain-get for the epoch and the fenced flag */
	requests = 0;
	n = k.ops->domain_read(k.ctx, &d, err, sizeof(err));
	ok(n == 0 && requests == 1 && d.epoch == 0 && !d.fenced,
	   "domain_read on a kernel without epoch and fenced: 0, not fenced (one request: %u)",
	   requests);
	domain.epoch = true;
	domain.epoch_v = 42;
	domain.fenced = true;
	requests = 0;
	n = k.ops->domain_read(k.ctx, &d, err, sizeof(err));
	ok(n == 0 && requests == 1 && d.epoch == 42 && d.fenced,
	   "domain_read: epoch %llu, fenced %d, from one domain-get (%u requests)",
	   (unsigned long long)d.epoch, d.fenced, requests);
	domain.fenced = false;
	n = k.ops->domain_read(k.ctx, &d, err, sizeof(err));
	ok(n == 0 && d.epoch == 42 && !d.fenced, "domain_read: no fenced flag, not fenced");

	/* stats_read: the counters and the regions' sums */
	{
		struct hbmd_kernel_stats st;

		n = k.ops->stats_read(k.ctx, &st, err, sizeof(err));
		ok(n == 0 && st.faults == 11 && st.regions == 3 && st.lost_chunks == 3 &&
		   st.degraded_chunks == 5 && st.replicated_regions == 2 && st.degraded_regions == 2,
		   "stats_read: 3 regions, 2 replicated; 5 chunks of 2 regions degraded (a region without degraded-chunks: its lost ones), 3 lost (%d: %llu, %llu, %llu)",
		   n, (unsigned long long)st.degraded_chunks,
		   (unsigned long long)st.replicated_regions, (unsigned long long)st.degraded_regions);
		nlmsg_free(req_kept);
		req_kept = NULL;
	}

	/* 6. chunk moves: the chunks, a move, the moves, a deletion, the params */
	{
		struct hbmd_kernel_chunk *c = NULL;
		struct hbmd_kernel_resync *m = NULL;
		uint32_t id = 0, jobs = 0;
		size_t nc = 0, nm = 0;

		n = k.ops->chunks_read(k.ctx, &c, &nc, err, sizeof(err));
		ok(n == 0 && req_chunks_flag && nc == 3 && c[0].region == 7 && c[0].index == 0 &&
		   c[0].node == 3 && c[0].syncing_node == HBMD_NO_NODE && c[0].bytes == 1 << 20 &&
		   c[1].syncing_node == 2 && c[2].index == 2 && c[2].bytes == 1 << 19 &&
		   !c[0].lost && !c[1].lost && c[2].lost,
		   "chunks_read: region-get dump with the chunks flag; a region over two messages: 3 chunks, one syncing to node 2, the last one half a chunk and lost (%d, %zu)",
		   n, nc);
		free(c);
		n = k.ops->resync_new(k.ctx, 7, 1, 3, &id, err, sizeof(err));
		ok(n == 0 && id == 42 && req_tb[HBMPOOL_A_RESYNC_REGION_ID] &&
		   nla_get_u32(req_tb[HBMPOOL_A_RESYNC_REGION_ID]) == 7 &&
		   nla_get_u32(req_tb[HBMPOOL_A_RESYNC_CHUNK]) == 1 &&
		   nla_get_u32(req_tb[HBMPOOL_A_RESYNC_FROM_NODE_ID]) == 3 &&
		   !req_tb[HBMPOOL_A_RESYNC_TO_NODE_ID],
		   "resync_new: region 7 chunk 1 from node 3, no target (placement's): move %u", id);
		n = k.ops->resync_read(k.ctx, &m, &nm, err, sizeof(err));
		ok(n == 0 && nm == 2 && m[0].id == 42 && m[0].state == HBMPOOL_RESYNC_STATE_COPYING &&
		   m[0].from == 3 && m[0].to == 2 && m[0].pages == 256 && m[0].pages_done == 100 &&
		   m[1].id == 43 && m[1].state == HBMPOOL_RESYNC_STATE_FAILED &&
		   m[1].error == ETIMEDOUT, "resync_read: 2 moves, one copying, one failed (ETIMEDOUT)");
		free(m);
		n = k.ops->resync_del(k.ctx, 43, err, sizeof(err));
		ok(n == 0 && req_tb[HBMPOOL_A_RESYNC_ID] &&
		   nla_get_u32(req_tb[HBMPOOL_A_RESYNC_ID]) == 43, "resync_del 43");
		n = k.ops->resync_params(k.ctx, UINT32_MAX, &jobs, err, sizeof(err));
		ok(n == 0 && jobs == 3 && req_mbps == UINT32_MAX,
		   "resync_params: no mbps given, none set; resync-jobs 3");
		n = k.ops->resync_params(k.ctx, 250, &jobs, err, sizeof(err));
		ok(n == 0 && jobs == 3 && req_mbps == 250, "resync_params: resync-mbps 250 set");
		nlmsg_free(req_kept);
		req_kept = NULL;
	}

	/* 7. the segment, transport shm */
	{
		struct hbmd_kernel_setup su = {
			.domain = "unit", .self_id = 1, .key = (const unsigned char *)"0123456789abcdef",
			.key_len = 16, .segment_bytes = 32 << 20, .addr = "10.0.0.1", .port = 7070,
			.segment_device = "0000:00:11.0",
		};
		struct hbmd_kernel_peer p = { .id = 2, .addr = "10.0.0.2", .port = 7070,
					      .capacity = 1 << 20, .distance = 20, .link_type = 1,
					      .device = "0000:00:12.0" };
		struct hbmd_kernel_node *kn = NULL;
		uint64_t inc = 0;
		size_t nkn = 0;

		n = k.ops->setup(k.ctx, &su, &inc, err, sizeof(err));
		ok(n == 0 && inc == 99 && seg.size == 32 << 20 && !strcmp(seg.provider, "shm") &&
		   !strcmp(seg.device, "0000:00:11.0"),
		   "setup with a segment device: segment-new provider shm on 0000:00:11.0 (%d %s)", n,
		   n ? err : "");
		n = k.ops->setup(k.ctx, &su, &inc, err, sizeof(err));
		ok(n == 0 && inc == 99, "setup again: the segment kept (same size, provider, device)");
		su.segment_device = "0000:00:13.0";
		n = k.ops->setup(k.ctx, &su, &inc, err, sizeof(err));
		ok(n == -EEXIST && strstr(err, "provider shm on 0000:00:11.0, the config says shm on 0000:00:13.0"),
		   "setup on another device: -EEXIST, said (%s)", err);
		su.segment_device = NULL;
		n = k.ops->setup(k.ctx, &su, &inc, err, sizeof(err));
		ok(n == -EEXIST && strstr(err, "the config says ram"),
		   "setup with provider ram over an shm segment: -EEXIST, said (%s)", err);
		seg.size = 0;
		n = k.ops->setup(k.ctx, &su, &inc, err, sizeof(err));
		ok(n == 0 && !seg.new_had_provider && !strcmp(seg.provider, "ram") && !*seg.device,
		   "setup without a device: segment-new with neither provider nor device (ram)");
		n = k.ops->node_add(k.ctx, &p, err, sizeof(err));
		ok(n == 0 && !strcmp(new_transport, "shm") && !strcmp(new_device, "0000:00:12.0"),
		   "node_add with a device: transport shm, device 0000:00:12.0");
		p.device = NULL;
		n = k.ops->node_add(k.ctx, &p, err, sizeof(err));
		ok(n == 0 && !strcmp(new_transport, "tcp") && !*new_device,
		   "node_add without: transport tcp, no device");
		n = k.ops->nodes_read(k.ctx, &kn, &nkn, err, sizeof(err));
		ok(n == 0 && nkn == 2 && kn[0].id == 2 && kn[0].shm && kn[1].id == 3 && !kn[1].shm,
		   "nodes_read: node 2 over shm, node 3 not");
		free(kn);
	}

	k.ops->close(k.ctx);
	close(pipefd[0]);
	close(pipefd[1]);
	return tap_finish();
}
