// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel operations of kernel.h over the hbmpool generic netlink family
 * (tools/lib/hbmnl, libnl), as hbmctl drives it (tools/hbmctl/node.c,
 * domain.c, segment.c).
 *
 * The control plane's operations:
 *   node-set   state = fenced      declares a peer dead
 *   node-set   distance, link-type a peer's place (its location, [distance])
 *   domain-set epoch (u64)         the membership epoch, never decreasing
 *   domain-set fenced (flag)       this node fences itself
 * (the netlink spec, uapi/linux/hbmpool_nl.h).  An older
 * kernel that does not know one of these attributes refuses it with
 * EINVAL and an extack pointing at it: that is -EOPNOTSUPP here.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "hbmnl.h"
#include "kernel.h"

struct knl {
	struct hbm_nl *nl;	/* requests; its monitor socket: the events */
	int evfd;		/* -1 until events_open */
	uint64_t evseq;		/* the last event's number, 0: none yet */
};

static const char *cmd_name(uint8_t cmd)
{
	switch (cmd) {
	case HBMPOOL_CMD_NODE_NEW:
		return "node-new";
	case HBMPOOL_CMD_NODE_DEL:
		return "node-del";
	case HBMPOOL_CMD_NODE_SET:
		return "node-set";
	case HBMPOOL_CMD_NODE_GET:
		return "node-get";
	case HBMPOOL_CMD_DOMAIN_SET:
		return "domain-set";
	case HBMPOOL_CMD_DOMAIN_GET:
		return "domain-get";
	case HBMPOOL_CMD_SEGMENT_NEW:
		return "segment-new";
	case HBMPOOL_CMD_SEGMENT_GET:
		return "segment-get";
	case HBMPOOL_CMD_SEGMENT_DEL:
		return "segment-del";
	case HBMPOOL_CMD_LINK_GET:
		return "link-get";
	case HBMPOOL_CMD_STATS_GET:
		return "stats-get";
	case HBMPOOL_CMD_REGION_GET:
		return "region-get";
	case HBMPOOL_CMD_RESYNC_NEW:
		return "resync-new";
	case HBMPOOL_CMD_RESYNC_GET:
		return "resync-get";
	case HBMPOOL_CMD_RESYNC_DEL:
		return "resync-del";
	case HBMPOOL_CMD_PARAMS_GET:
		return "params-get";
	case HBMPOOL_CMD_PARAMS_SET:
		return "params-set";
	default:
		return "request";
	}
}

/*
 * Send msg; a refusal becomes err: "CMD: strerror: extack".  new_attr: the
 * attribute a kernel without issue 9 does not know (0: none); its refusal
 * is -EOPNOTSUPP.
 */
static int knl_request(struct knl *k, struct nl_msg *msg, uint8_t cmd, int new_attr,
		       hbm_nl_reply_fn *cb, void *arg, char *err, size_t errlen)
{
	int ret = hbm_nl_request(k->nl, msg, cb, arg);
	const char *ext;

	if (!ret)
		return 0;
	ext = hbm_nl_extack(k->nl);
	if (ret == -EINVAL && new_attr && hbm_nl_extack_attr(k->nl) == new_attr)
		ret = -EOPNOTSUPP;
	snprintf(err, errlen, "%s: %s%s%s%s", cmd_name(cmd), strerror(-ret),
		 *ext ? " (" : "", ext, *ext ? ")" : "");
	return ret;
}

static struct nl_msg *knl_msg(struct knl *k, uint8_t cmd, int dump, char *err, size_t errlen)
{
	struct nl_msg *msg = hbm_nl_msg(k->nl, cmd, dump);

	if (!msg)
		snprintf(err, errlen, "%s: out of memory", cmd_name(cmd));
	return msg;
}

static int put_failed(struct nl_msg *msg, uint8_t cmd, char *err, size_t errlen)
{
	nlmsg_free(msg);
	snprintf(err, errlen, "%s: message too big", cmd_name(cmd));
	return -EMSGSIZE;
}

struct seg_info {
	uint64_t size;
	uint64_t incarnation;
	char provider[16];	/* "" if the kernel did not say */
	char device[32];	/* "" with provider ram */
};

/* A string attribute into buf ("" if absent; bounded by its length). */
static void get_str(struct nlattr *a, char *buf, size_t len)
{
	snprintf(buf, len, "%.*s", a ? nla_len(a) : 0, a ? (const char *)nla_data(a) : "");
}

static int seg_cb(uint8_t cmd, struct nlattr *attrs, int len, void *arg)
{
	struct nlattr *tb[HBMPOOL_A_SEGMENT_MAX + 1];
	struct seg_info *s = arg;

	(void)cmd;
	if (nla_parse(tb, HBMPOOL_A_SEGMENT_MAX, attrs, len, NULL))
		return -EPROTO;
	if (tb[HBMPOOL_A_SEGMENT_SIZE])
		s->size = nla_get_u64(tb[HBMPOOL_A_SEGMENT_SIZE]);
	if (tb[HBMPOOL_A_SEGMENT_INCARNATION])
		s->incarnation = nla_get_u64(tb[HBMPOOL_A_SEGMENT_INCARNATION]);
	get_str(tb[HBMPOOL_A_SEGMENT_PROVIDER], s->provider, sizeof(s->provider));
	get_str(tb[HBMPOOL_A_SEGMENT_DEVICE], s->device, sizeof(s->device));
	return 0;
}

static int segment_get(struct knl *k, struct seg_info *s, char *err, size_t errlen)
{
	struct nl_msg *msg = knl_msg(k, HBMPOOL_CMD_SEGMENT_GET, 0, err, errlen);

	if (!msg)
		return -ENOMEM;
	memset(s, 0, sizeof(*s));
	return knl_request(k, msg, HBMPOOL_CMD_SEGMENT_GET, 0, seg_cb, s, err, errlen);
}

/* IPv4 or IPv6 literal into addr (4 or 16 bytes); 0 if neither. */
static size_t parse_addr(const char *s, uint8_t addr[16])
{
	if (inet_pton(AF_INET, s, addr) == 1)
		return 4;
	if (inet_pton(AF_INET6, s, addr) == 1)
		return 16;
	return 0;
}

/* node-set on the self node: its home listens on addr:port. */
static int self_listen(struct knl *k, const struct hbmd_kernel_setup *s, char *err, size_t errlen)
{
	struct nl_msg *msg;
	uint8_t addr[16];
	size_t alen = parse_addr(s->addr, addr);

	if (!alen) {
		snprintf(err, errlen, "node %u: bad address \"%s\"", s->self_id, s->addr);
		return -EINVAL;
	}
	msg = knl_msg(k, HBMPOOL_CMD_NODE_SET, 0, err, errlen);
	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, HBMPOOL_A_NODE_ID, s->self_id) ||
	    nla_put(msg, HBMPOOL_A_NODE_ADDR, (int)alen, addr) ||
	    nla_put_u16(msg, HBMPOOL_A_NODE_PORT, s->port))
		return put_failed(msg, HBMPOOL_CMD_NODE_SET, err, errlen);
	return knl_request(k, msg, HBMPOOL_CMD_NODE_SET, 0, NULL, NULL, err, errlen);
}

static int knl_setup(void *ctx, const struct hbmd_kernel_setup *s, uint64_t *incarnation,
		     char *err, size_t errlen)
{
	struct knl *k = ctx;
	struct seg_info seg;
	struct nl_msg *msg;
	int ret;

	msg = knl_msg(k, HBMPOOL_CMD_DOMAIN_SET, 0, err, errlen);
	if (!msg)
		return -ENOMEM;
	if (nla_put_string(msg, HBMPOOL_A_DOMAIN_NAME, s->domain) ||
	    nla_put_u32(msg, HBMPOOL_A_DOMAIN_SELF_ID, s->self_id) ||
	    nla_put(msg, HBMPOOL_A_DOMAIN_KEY, (int)s->key_len, s->key))
		return put_failed(msg, HBMPOOL_CMD_DOMAIN_SET, err, errlen);
	ret = knl_request(k, msg, HBMPOOL_CMD_DOMAIN_SET, 0, NULL, NULL, err, errlen);
	if (ret)
		return ret;
	ret = self_listen(k, s, err, errlen);
	if (ret)
		return ret;

	/* An existing segment is kept (a restarted daemon): its data lives. */
	ret = segment_get(k, &seg, err, errlen);
	if (ret)
		return ret;
	if (!seg.size) {
		msg = knl_msg(k, HBMPOOL_CMD_SEGMENT_NEW, 0, err, errlen);
		if (!msg)
			return -ENOMEM;
		if (nla_put_u64(msg, HBMPOOL_A_SEGMENT_SIZE, s->segment_bytes) ||
		    (s->segment_device &&
		     (nla_put_string(msg, HBMPOOL_A_SEGMENT_PROVIDER, "shm") ||
		      nla_put_string(msg, HBMPOOL_A_SEGMENT_DEVICE, s->segment_device))))
			return put_failed(msg, HBMPOOL_CMD_SEGMENT_NEW, err, errlen);
		ret = knl_request(k, msg, HBMPOOL_CMD_SEGMENT_NEW, 0, NULL, NULL, err, errlen);
		if (ret)
			return ret;
		ret = segment_get(k, &seg, err, errlen);
		if (ret)
			return ret;
	} else if (seg.size != s->segment_bytes) {
		snprintf(err, errlen,
			 "the kernel exports a segment of %llu bytes, the config says %llu: remove it (hbmctl segment del) or fix [node] segment_size",
			 (unsigned long long)seg.size, (unsigned long long)s->segment_bytes);
		return -EEXIST;
	} else if (*seg.provider && (strcmp(seg.provider, s->segment_device ? "shm" : "ram") ||
				     strcmp(seg.device, s->segment_device ? s->segment_device : ""))) {
		snprintf(err, errlen,
			 "the kernel exports a segment of provider %s%s%s, the config says %s%s: remove it (hbmctl segment del) or fix [node] segment_provider and segment_device",
			 seg.provider, *seg.device ? " on " : "", seg.device,
			 s->segment_device ? "shm on " : "ram",
			 s->segment_device ? s->segment_device : "");
		return -EEXIST;
	}
	if (!seg.incarnation) {
		snprintf(err, errlen, "segment-get: the kernel gave no incarnation");
		return -EPROTO;
	}
	*incarnation = seg.incarnation;
	return 0;
}

static int knl_node_add(void *ctx, const struct hbmd_kernel_peer *p, char *err, size_t errlen)
{
	struct hbm_nl_node n = {
		.id = p->id, .capacity = p->capacity, .distance = p->distance,
		.transport = p->device ? "shm" : "tcp", .device = p->device,
		.link_type = p->link_type, .port = p->port, .failure_domain = p->failure_domain,
	};
	struct knl *k = ctx;
	int ret;

	n.addr_len = parse_addr(p->addr, n.addr);
	if (!n.addr_len) {
		snprintf(err, errlen, "node %u: bad address \"%s\"", p->id, p->addr);
		return -EINVAL;
	}
	ret = hbm_nl_node_new(k->nl, &n, NULL, 0);
	if (ret)
		snprintf(err, errlen, "node-new %u: %s%s%s", p->id, strerror(-ret),
			 *hbm_nl_extack(k->nl) ? ": " : "", hbm_nl_extack(k->nl));
	return ret;
}

static int knl_node_remove(void *ctx, uint32_t id, char *err, size_t errlen)
{
	struct knl *k = ctx;
	int ret = hbm_nl_node_del(k->nl, id, NULL, 0);

	if (ret)
		snprintf(err, errlen, "node-del %u: %s%s%s", id, strerror(-ret),
			 *hbm_nl_extack(k->nl) ? ": " : "", hbm_nl_extack(k->nl));
	return ret;
}

static int knl_node_fence(void *ctx, uint32_t id, char *err, size_t errlen)
{
	struct knl *k = ctx;
	struct nl_msg *msg = knl_msg(k, HBMPOOL_CMD_NODE_SET, 0, err, errlen);

	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, HBMPOOL_A_NODE_ID, id) ||
	    nla_put_u32(msg, HBMPOOL_A_NODE_STATE, HBMPOOL_NODE_STATE_FENCED))
		return put_failed(msg, HBMPOOL_CMD_NODE_SET, err, errlen);
	return knl_request(k, msg, HBMPOOL_CMD_NODE_SET, HBMPOOL_A_NODE_STATE, NULL, NULL,
			   err, errlen);
}

static int knl_node_place(void *ctx, uint32_t id, uint32_t distance, int link_type,
			  char *err, size_t errlen)
{
	struct knl *k = ctx;
	struct nl_msg *msg = knl_msg(k, HBMPOOL_CMD_NODE_SET, 0, err, errlen);

	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, HBMPOOL_A_NODE_ID, id) ||
	    nla_put_u32(msg, HBMPOOL_A_NODE_DISTANCE, distance) ||
	    nla_put_u32(msg, HBMPOOL_A_NODE_LINK_TYPE, (uint32_t)link_type))
		return put_failed(msg, HBMPOOL_CMD_NODE_SET, err, errlen);
	return knl_request(k, msg, HBMPOOL_CMD_NODE_SET, 0, NULL, NULL, err, errlen);
}

static int knl_node_failure_domain(void *ctx, uint32_t id, uint32_t failure_domain,
				   char *err, size_t errlen)
{
	struct knl *k = ctx;
	struct nl_msg *msg = knl_msg(k, HBMPOOL_CMD_NODE_SET, 0, err, errlen);

	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, HBMPOOL_A_NODE_ID, id) ||
	    nla_put_u32(msg, HBMPOOL_A_NODE_FAILURE_DOMAIN, failure_domain))
		return put_failed(msg, HBMPOOL_CMD_NODE_SET, err, errlen);
	return knl_request(k, msg, HBMPOOL_CMD_NODE_SET, HBMPOOL_A_NODE_FAILURE_DOMAIN, NULL,
			   NULL, err, errlen);
}

static int knl_node_drain(void *ctx, uint32_t id, bool draining, char *err, size_t errlen)
{
	struct knl *k = ctx;
	struct nl_msg *msg = knl_msg(k, HBMPOOL_CMD_NODE_SET, 0, err, errlen);

	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, HBMPOOL_A_NODE_ID, id) ||
	    nla_put_u8(msg, HBMPOOL_A_NODE_DRAINING, draining ? 1 : 0))
		return put_failed(msg, HBMPOOL_CMD_NODE_SET, err, errlen);
	return knl_request(k, msg, HBMPOOL_CMD_NODE_SET, HBMPOOL_A_NODE_DRAINING, NULL, NULL,
			   err, errlen);
}

static int domain_cb(uint8_t cmd, struct nlattr *attrs, int len, void *arg)
{
	struct nlattr *tb[HBMPOOL_A_DOMAIN_MAX + 1];
	struct hbmd_kernel_domain *d = arg;

	(void)cmd;
	if (nla_parse(tb, HBMPOOL_A_DOMAIN_MAX, attrs, len, NULL))
		return -EPROTO;
	if (tb[HBMPOOL_A_DOMAIN_EPOCH])
		d->epoch = nla_get_u64(tb[HBMPOOL_A_DOMAIN_EPOCH]);
	d->fenced = tb[HBMPOOL_A_DOMAIN_FENCED] != NULL;
	return 0;
}

/* One domain-get: the epoch and the fenced flag (absent in an older kernel: 0, false). */
static int knl_domain_read(void *ctx, struct hbmd_kernel_domain *d, char *err, size_t errlen)
{
	struct knl *k = ctx;
	struct nl_msg *msg = knl_msg(k, HBMPOOL_CMD_DOMAIN_GET, 0, err, errlen);

	memset(d, 0, sizeof(*d));
	if (!msg)
		return -ENOMEM;
	return knl_request(k, msg, HBMPOOL_CMD_DOMAIN_GET, 0, domain_cb, d, err, errlen);
}

static int knl_set_epoch(void *ctx, uint64_t epoch, char *err, size_t errlen)
{
	struct knl *k = ctx;
	struct nl_msg *msg = knl_msg(k, HBMPOOL_CMD_DOMAIN_SET, 0, err, errlen);

	if (!msg)
		return -ENOMEM;
	if (nla_put_u64(msg, HBMPOOL_A_DOMAIN_EPOCH, epoch))
		return put_failed(msg, HBMPOOL_CMD_DOMAIN_SET, err, errlen);
	return knl_request(k, msg, HBMPOOL_CMD_DOMAIN_SET, HBMPOOL_A_DOMAIN_EPOCH, NULL, NULL,
			   err, errlen);
}

static int knl_fence_self(void *ctx, char *err, size_t errlen)
{
	struct knl *k = ctx;
	struct nl_msg *msg = knl_msg(k, HBMPOOL_CMD_DOMAIN_SET, 0, err, errlen);

	if (!msg)
		return -ENOMEM;
	if (nla_put_flag(msg, HBMPOOL_A_DOMAIN_FENCED))
		return put_failed(msg, HBMPOOL_CMD_DOMAIN_SET, err, errlen);
	return knl_request(k, msg, HBMPOOL_CMD_DOMAIN_SET, HBMPOOL_A_DOMAIN_FENCED, NULL, NULL,
			   err, errlen);
}

struct dump {
	void *a;		/* the array */
	size_t n, cap, size;	/* entries, room, entry size */
};

static void *dump_slot(struct dump *d)
{
	void *p;

	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 16;

		p = realloc(d->a, cap * d->size);
		if (!p)
			return NULL;
		d->a = p;
		d->cap = cap;
	}
	p = (char *)d->a + d->n++ * d->size;
	memset(p, 0, d->size);
	return p;
}

static int node_cb(uint8_t cmd, struct nlattr *attrs, int len, void *arg)
{
	struct nlattr *tb[HBMPOOL_A_NODE_MAX + 1];
	struct hbmd_kernel_node *n;
	char transport[16];

	(void)cmd;
	if (nla_parse(tb, HBMPOOL_A_NODE_MAX, attrs, len, NULL) || !tb[HBMPOOL_A_NODE_ID])
		return -EPROTO;
	n = dump_slot(arg);
	if (!n)
		return -ENOMEM;
	n->id = nla_get_u32(tb[HBMPOOL_A_NODE_ID]);
	n->state = tb[HBMPOOL_A_NODE_STATE] ? (int)nla_get_u32(tb[HBMPOOL_A_NODE_STATE]) : 0;
	n->self = !!tb[HBMPOOL_A_NODE_SELF];
	n->draining = tb[HBMPOOL_A_NODE_DRAINING] && nla_get_u8(tb[HBMPOOL_A_NODE_DRAINING]);
	get_str(tb[HBMPOOL_A_NODE_TRANSPORT], transport, sizeof(transport));
	n->shm = !strcmp(transport, "shm");
	n->capacity = tb[HBMPOOL_A_NODE_CAPACITY] ? nla_get_u64(tb[HBMPOOL_A_NODE_CAPACITY]) : 0;
	n->free = tb[HBMPOOL_A_NODE_FREE] ? nla_get_u64(tb[HBMPOOL_A_NODE_FREE]) : 0;
	n->weight = tb[HBMPOOL_A_NODE_EFFECTIVE_WEIGHT] ?
		    nla_get_u32(tb[HBMPOOL_A_NODE_EFFECTIVE_WEIGHT]) : 0;
	return 0;
}

static int link_cb(uint8_t cmd, struct nlattr *attrs, int len, void *arg)
{
	struct nlattr *tb[HBMPOOL_A_LINK_MAX + 1];
	struct hbmd_kernel_link *l;

	(void)cmd;
	if (nla_parse(tb, HBMPOOL_A_LINK_MAX, attrs, len, NULL) || !tb[HBMPOOL_A_LINK_NODE_ID])
		return -EPROTO;
	l = dump_slot(arg);
	if (!l)
		return -ENOMEM;
	l->node_id = nla_get_u32(tb[HBMPOOL_A_LINK_NODE_ID]);
	l->oper_state = tb[HBMPOOL_A_LINK_OPER_STATE] ?
			(int)nla_get_u32(tb[HBMPOOL_A_LINK_OPER_STATE]) : 0;
	l->health = tb[HBMPOOL_A_LINK_HEALTH] ? (int)nla_get_u32(tb[HBMPOOL_A_LINK_HEALTH]) : -1;
	l->rtt_ns = tb[HBMPOOL_A_LINK_RTT] ? nla_get_u64(tb[HBMPOOL_A_LINK_RTT]) : 0;
	l->requests = tb[HBMPOOL_A_LINK_REQUESTS] ? nla_get_u64(tb[HBMPOOL_A_LINK_REQUESTS]) : 0;
	l->errors = tb[HBMPOOL_A_LINK_ERRORS] ? nla_get_u64(tb[HBMPOOL_A_LINK_ERRORS]) : 0;
	l->timeouts = tb[HBMPOOL_A_LINK_TIMEOUTS] ? nla_get_u64(tb[HBMPOOL_A_LINK_TIMEOUTS]) : 0;
	l->retries = tb[HBMPOOL_A_LINK_RETRIES] ? nla_get_u64(tb[HBMPOOL_A_LINK_RETRIES]) : 0;
	l->digest_errors = tb[HBMPOOL_A_LINK_DIGEST_ERRORS] ?
			   nla_get_u64(tb[HBMPOOL_A_LINK_DIGEST_ERRORS]) : 0;
	l->flaps = tb[HBMPOOL_A_LINK_FLAPS] ? nla_get_u64(tb[HBMPOOL_A_LINK_FLAPS]) : 0;
	return 0;
}

/* A dump, again while a change races it (-EINTR), at most 5 times. */
static int knl_dump(struct knl *k, uint8_t cmd, hbm_nl_reply_fn *cb, struct dump *d,
		    char *err, size_t errlen)
{
	struct nl_msg *msg;
	int ret = -EINTR, i;

	for (i = 0; i < 5 && ret == -EINTR; i++) {
		d->n = 0;
		msg = knl_msg(k, cmd, 1, err, errlen);
		if (!msg)
			return -ENOMEM;
		ret = knl_request(k, msg, cmd, 0, cb, d, err, errlen);
	}
	if (ret) {
		free(d->a);
		d->a = NULL;
		d->n = 0;
	}
	return ret;
}

static int knl_nodes_read(void *ctx, struct hbmd_kernel_node **nodes, size_t *n,
			  char *err, size_t errlen)
{
	struct dump d = { .size = sizeof(**nodes) };
	int ret = knl_dump(ctx, HBMPOOL_CMD_NODE_GET, node_cb, &d, err, errlen);

	*nodes = d.a;
	*n = d.n;
	return ret;
}

static int knl_links_read(void *ctx, struct hbmd_kernel_link **links, size_t *n,
			  char *err, size_t errlen)
{
	struct dump d = { .size = sizeof(**links) };
	int ret = knl_dump(ctx, HBMPOOL_CMD_LINK_GET, link_cb, &d, err, errlen);

	*links = d.a;
	*n = d.n;
	return ret;
}

static int stats_cb(uint8_t cmd, struct nlattr *attrs, int len, void *arg)
{
	struct nlattr *tb[HBMPOOL_A_STATS_MAX + 1];
	struct hbmd_kernel_stats *s = arg;
	static const struct {
		int attr;
		size_t off;
	} map[] = {
#define M(a, f) { HBMPOOL_A_STATS_##a, offsetof(struct hbmd_kernel_stats, f) }
		M(FAULTS, faults), M(FETCHES, fetches), M(BYTES_FETCHED, bytes_fetched),
		M(WRITEBACKS, writebacks), M(BYTES_WRITTEN_BACK, bytes_written_back),
		M(EVICTIONS, evictions), M(ERRORS, errors), M(TIMEOUTS, timeouts),
		M(OVER_BUDGET, over_budget), M(SHRINKER_FREED, shrinker_freed),
		M(CACHED_PAGES, cached_pages), M(DIRTY_PAGES, dirty_pages),
#undef M
	};
	size_t i;

	(void)cmd;
	if (nla_parse(tb, HBMPOOL_A_STATS_MAX, attrs, len, NULL))
		return -EPROTO;
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (tb[map[i].attr])
			*(uint64_t *)((char *)s + map[i].off) = nla_get_u64(tb[map[i].attr]);
	return 0;
}

/*
 * A region's replication (replicas, degraded-chunks) into the sums; its
 * lost chunks are degraded too (a kernel before replicas says only lost).
 */
static void region_health(struct nlattr **tb, struct hbmd_kernel_stats *s)
{
	uint32_t lost = tb[HBMPOOL_A_REGION_LOST_CHUNKS] ?
			nla_get_u32(tb[HBMPOOL_A_REGION_LOST_CHUNKS]) : 0;
	uint32_t degraded = tb[HBMPOOL_A_REGION_DEGRADED_CHUNKS] ?
			    nla_get_u32(tb[HBMPOOL_A_REGION_DEGRADED_CHUNKS]) : 0;

	if (degraded < lost)
		degraded = lost;
	s->degraded_chunks += degraded;
	s->degraded_regions += degraded > 0;
	if (tb[HBMPOOL_A_REGION_REPLICAS] && nla_get_u32(tb[HBMPOOL_A_REGION_REPLICAS]) > 1)
		s->replicated_regions++;
}

static int region_cb(uint8_t cmd, struct nlattr *attrs, int len, void *arg)
{
	struct nlattr *tb[HBMPOOL_A_REGION_MAX + 1];
	struct hbmd_kernel_stats *s = arg;

	(void)cmd;
	if (nla_parse(tb, HBMPOOL_A_REGION_MAX, attrs, len, NULL))
		return -EPROTO;
	s->regions++;
	if (tb[HBMPOOL_A_REGION_LOST_CHUNKS])
		s->lost_chunks += nla_get_u32(tb[HBMPOOL_A_REGION_LOST_CHUNKS]);
	region_health(tb, s);
	return 0;
}

static int knl_stats_read(void *ctx, struct hbmd_kernel_stats *s, char *err, size_t errlen)
{
	struct knl *k = ctx;
	struct nl_msg *msg;
	int ret = -EINTR, i;

	memset(s, 0, sizeof(*s));
	msg = knl_msg(k, HBMPOOL_CMD_STATS_GET, 0, err, errlen);
	if (!msg)
		return -ENOMEM;
	ret = knl_request(k, msg, HBMPOOL_CMD_STATS_GET, 0, stats_cb, s, err, errlen);
	if (ret)
		return ret;
	/* the regions, without their chunks; again while a change races the dump */
	for (i = 0, ret = -EINTR; i < 5 && ret == -EINTR; i++) {
		s->regions = s->lost_chunks = 0;
		s->degraded_chunks = s->replicated_regions = s->degraded_regions = 0;
		msg = knl_msg(k, HBMPOOL_CMD_REGION_GET, 1, err, errlen);
		if (!msg)
			return -ENOMEM;
		ret = knl_request(k, msg, HBMPOOL_CMD_REGION_GET, 0, region_cb, s, err, errlen);
	}
	return ret;
}

/* ---- chunk moves (HBMPOOL_FEAT_RESYNC) ---- */

struct chunk_dump {
	struct dump d;			/* struct hbmd_kernel_chunk */
	struct dump r;			/* struct region_size: each region's sizes */
};

struct region_size {
	uint32_t id;
	uint64_t chunk_size, length;
	uint64_t set[HBMD_SET_WORDS];	/* the node set */
	int policy;
};

/*
 * One message of the region dump: a region, or the next chunks of one
 * whose chunks did not fit the previous message (its id again).
 */
static int chunk_cb(uint8_t cmd, struct nlattr *attrs, int len, void *arg)
{
	struct nlattr *tb[HBMPOOL_A_REGION_MAX + 1], *ct[HBMPOOL_A_CHUNK_MAX + 1], *pos;
	struct chunk_dump *cd = arg;
	struct hbmd_kernel_chunk *c;
	struct region_size *rs;
	uint32_t id;
	int rem;

	(void)cmd;
	if (nla_parse(tb, HBMPOOL_A_REGION_MAX, attrs, len, NULL) || !tb[HBMPOOL_A_REGION_ID])
		return -EPROTO;
	id = nla_get_u32(tb[HBMPOOL_A_REGION_ID]);
	if (tb[HBMPOOL_A_REGION_CHUNK_SIZE]) {
		rs = dump_slot(&cd->r);
		if (!rs)
			return -ENOMEM;
		rs->id = id;
		rs->chunk_size = nla_get_u64(tb[HBMPOOL_A_REGION_CHUNK_SIZE]);
		rs->length = tb[HBMPOOL_A_REGION_LENGTH] ?
			     nla_get_u64(tb[HBMPOOL_A_REGION_LENGTH]) : 0;
		memset(rs->set, 0, sizeof(rs->set));
		rs->policy = tb[HBMPOOL_A_REGION_POLICY] ?
			     (int)nla_get_u32(tb[HBMPOOL_A_REGION_POLICY]) : -1;
		nla_for_each_attr(pos, attrs, len, rem) {
			uint32_t nid;

			if (nla_type(pos) != HBMPOOL_A_REGION_NODE_ID || nla_len(pos) != 4)
				continue;
			nid = nla_get_u32(pos);
			if (nid < HBMD_SET_WORDS * 64)
				rs->set[nid / 64] |= 1ULL << (nid % 64);
		}
	}
	nla_for_each_attr(pos, attrs, len, rem) {
		if (nla_type(pos) != HBMPOOL_A_REGION_CHUNK)
			continue;
		if (nla_parse_nested(ct, HBMPOOL_A_CHUNK_MAX, pos, NULL) ||
		    !ct[HBMPOOL_A_CHUNK_INDEX] || !ct[HBMPOOL_A_CHUNK_NODE_ID])
			return -EPROTO;
		c = dump_slot(&cd->d);
		if (!c)
			return -ENOMEM;
		c->region = id;
		c->index = nla_get_u32(ct[HBMPOOL_A_CHUNK_INDEX]);
		c->node = nla_get_u32(ct[HBMPOOL_A_CHUNK_NODE_ID]);
		c->syncing_node = ct[HBMPOOL_A_CHUNK_SYNCING_NODE_ID] ?
				  nla_get_u32(ct[HBMPOOL_A_CHUNK_SYNCING_NODE_ID]) : HBMD_NO_NODE;
		c->lost = !!ct[HBMPOOL_A_CHUNK_LOST];
	}
	return 0;
}

static int knl_chunks_read(void *ctx, struct hbmd_kernel_chunk **chunks, size_t *n,
			   char *err, size_t errlen)
{
	struct chunk_dump cd = { .d = { .size = sizeof(**chunks) },
				 .r = { .size = sizeof(struct region_size) } };
	struct region_size *rs;
	struct nl_msg *msg;
	size_t i, j;
	int ret = -EINTR, t;

	*chunks = NULL;
	*n = 0;
	for (t = 0; t < 5 && ret == -EINTR; t++) {
		cd.d.n = cd.r.n = 0;
		msg = knl_msg(ctx, HBMPOOL_CMD_REGION_GET, 1, err, errlen);
		if (!msg) {
			ret = -ENOMEM;
			break;
		}
		if (nla_put_flag(msg, HBMPOOL_A_REGION_CHUNKS)) {
			ret = put_failed(msg, HBMPOOL_CMD_REGION_GET, err, errlen);
			break;
		}
		ret = knl_request(ctx, msg, HBMPOOL_CMD_REGION_GET, 0, chunk_cb, &cd, err, errlen);
	}
	if (ret) {
		free(cd.d.a);
		free(cd.r.a);
		return ret;
	}
	rs = cd.r.a;
	*chunks = cd.d.a;
	*n = cd.d.n;
	for (i = 0; i < cd.d.n; i++) {
		struct hbmd_kernel_chunk *c = &(*chunks)[i];

		for (j = 0; j < cd.r.n && rs[j].id != c->region; j++)
			;
		if (j == cd.r.n)
			continue;
		c->bytes = rs[j].chunk_size;
		memcpy(c->set, rs[j].set, sizeof(c->set));
		c->policy = rs[j].policy;
		if (rs[j].length && (uint64_t)c->index * rs[j].chunk_size < rs[j].length &&
		    rs[j].length - (uint64_t)c->index * rs[j].chunk_size < rs[j].chunk_size)
			c->bytes = rs[j].length - (uint64_t)c->index * rs[j].chunk_size;
	}
	free(cd.r.a);
	return 0;
}

static uint32_t get_u32_or(struct nlattr *a, uint32_t def)
{
	return a ? nla_get_u32(a) : def;
}

static int resync_cb(uint8_t cmd, struct nlattr *attrs, int len, void *arg)
{
	struct nlattr *tb[HBMPOOL_A_RESYNC_MAX + 1];
	struct hbmd_kernel_resync *r;

	(void)cmd;
	if (nla_parse(tb, HBMPOOL_A_RESYNC_MAX, attrs, len, NULL) || !tb[HBMPOOL_A_RESYNC_ID])
		return -EPROTO;
	r = dump_slot(arg);
	if (!r)
		return -ENOMEM;
	r->id = nla_get_u32(tb[HBMPOOL_A_RESYNC_ID]);
	r->region = get_u32_or(tb[HBMPOOL_A_RESYNC_REGION_ID], 0);
	r->chunk = get_u32_or(tb[HBMPOOL_A_RESYNC_CHUNK], 0);
	r->from = get_u32_or(tb[HBMPOOL_A_RESYNC_FROM_NODE_ID], HBMD_NO_NODE);
	r->to = get_u32_or(tb[HBMPOOL_A_RESYNC_TO_NODE_ID], HBMD_NO_NODE);
	r->state = (int)get_u32_or(tb[HBMPOOL_A_RESYNC_STATE], 0);
	r->error = (int)get_u32_or(tb[HBMPOOL_A_RESYNC_ERROR], 0);
	r->pages = get_u32_or(tb[HBMPOOL_A_RESYNC_PAGES], 0);
	r->pages_done = get_u32_or(tb[HBMPOOL_A_RESYNC_PAGES_DONE], 0);
	return 0;
}

/* A move of chunk of region from node from, to node to (HBMD_NO_NODE: placement's choice). */
static int knl_resync_new_to(void *ctx, uint32_t region, uint32_t chunk, uint32_t from,
			     uint32_t to, uint32_t *id, char *err, size_t errlen)
{
	struct dump d = { .size = sizeof(struct hbmd_kernel_resync) };
	struct nl_msg *msg = knl_msg(ctx, HBMPOOL_CMD_RESYNC_NEW, 0, err, errlen);
	int ret;

	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, HBMPOOL_A_RESYNC_REGION_ID, region) ||
	    nla_put_u32(msg, HBMPOOL_A_RESYNC_CHUNK, chunk) ||
	    nla_put_u32(msg, HBMPOOL_A_RESYNC_FROM_NODE_ID, from) ||
	    (to != HBMD_NO_NODE && nla_put_u32(msg, HBMPOOL_A_RESYNC_TO_NODE_ID, to)))
		return put_failed(msg, HBMPOOL_CMD_RESYNC_NEW, err, errlen);
	ret = knl_request(ctx, msg, HBMPOOL_CMD_RESYNC_NEW, 0, resync_cb, &d, err, errlen);
	if (!ret && !d.n) {
		snprintf(err, errlen, "resync-new: the kernel gave no move id");
		ret = -EPROTO;
	}
	if (!ret)
		*id = ((struct hbmd_kernel_resync *)d.a)[0].id;
	free(d.a);
	return ret;
}

static int knl_resync_new(void *ctx, uint32_t region, uint32_t chunk, uint32_t from,
			  uint32_t *id, char *err, size_t errlen)
{
	return knl_resync_new_to(ctx, region, chunk, from, HBMD_NO_NODE, id, err, errlen);
}

static int knl_resync_read(void *ctx, struct hbmd_kernel_resync **moves, size_t *n,
			   char *err, size_t errlen)
{
	struct dump d = { .size = sizeof(**moves) };
	int ret = knl_dump(ctx, HBMPOOL_CMD_RESYNC_GET, resync_cb, &d, err, errlen);

	*moves = d.a;
	*n = d.n;
	return ret;
}

static int knl_resync_del(void *ctx, uint32_t id, char *err, size_t errlen)
{
	struct nl_msg *msg = knl_msg(ctx, HBMPOOL_CMD_RESYNC_DEL, 0, err, errlen);

	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, HBMPOOL_A_RESYNC_ID, id))
		return put_failed(msg, HBMPOOL_CMD_RESYNC_DEL, err, errlen);
	return knl_request(ctx, msg, HBMPOOL_CMD_RESYNC_DEL, 0, NULL, NULL, err, errlen);
}

static int params_cb(uint8_t cmd, struct nlattr *attrs, int len, void *arg)
{
	struct nlattr *tb[HBMPOOL_A_PARAMS_MAX + 1];

	(void)cmd;
	if (nla_parse(tb, HBMPOOL_A_PARAMS_MAX, attrs, len, NULL))
		return -EPROTO;
	*(uint32_t *)arg = get_u32_or(tb[HBMPOOL_A_PARAMS_RESYNC_JOBS], 0);
	return 0;
}

static int knl_resync_params(void *ctx, uint32_t mbps, uint32_t *jobs, char *err, size_t errlen)
{
	struct nl_msg *msg;
	int ret;

	if (mbps != UINT32_MAX) {
		msg = knl_msg(ctx, HBMPOOL_CMD_PARAMS_SET, 0, err, errlen);
		if (!msg)
			return -ENOMEM;
		if (nla_put_u32(msg, HBMPOOL_A_PARAMS_RESYNC_MBPS, mbps))
			return put_failed(msg, HBMPOOL_CMD_PARAMS_SET, err, errlen);
		ret = knl_request(ctx, msg, HBMPOOL_CMD_PARAMS_SET, HBMPOOL_A_PARAMS_RESYNC_MBPS,
				  NULL, NULL, err, errlen);
		if (ret)
			return ret;
	}
	*jobs = 0;
	msg = knl_msg(ctx, HBMPOOL_CMD_PARAMS_GET, 0, err, errlen);
	if (!msg)
		return -ENOMEM;
	return knl_request(ctx, msg, HBMPOOL_CMD_PARAMS_GET, 0, params_cb, jobs, err, errlen);
}

static int knl_segment_del(void *ctx, char *err, size_t errlen)
{
	struct nl_msg *msg = knl_msg(ctx, HBMPOOL_CMD_SEGMENT_DEL, 0, err, errlen);

	if (!msg)
		return -ENOMEM;
	return knl_request(ctx, msg, HBMPOOL_CMD_SEGMENT_DEL, 0, NULL, NULL, err, errlen);
}

static int knl_placement_params(void *ctx, uint32_t full_pct, bool avoid_degraded, char *err,
				size_t errlen)
{
	struct nl_msg *msg = knl_msg(ctx, HBMPOOL_CMD_PARAMS_SET, 0, err, errlen);

	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, HBMPOOL_A_PARAMS_FULL_PCT, full_pct) ||
	    nla_put_u8(msg, HBMPOOL_A_PARAMS_AVOID_DEGRADED, avoid_degraded))
		return put_failed(msg, HBMPOOL_CMD_PARAMS_SET, err, errlen);
	return knl_request(ctx, msg, HBMPOOL_CMD_PARAMS_SET, HBMPOOL_A_PARAMS_FULL_PCT, NULL, NULL,
			   err, errlen);
}

/*
 * The monitor group on a socket of its own, non-blocking, with a receive
 * buffer of 8 MiB if the daemon may force it (CAP_NET_ADMIN), else what
 * hbm_nl_subscribe() got (4 MiB, capped by net.core.rmem_max).
 */
static int knl_events_open(void *ctx, char *err, size_t errlen)
{
	struct knl *k = ctx;
	int ret, fd, size = 8 << 20;

	if (k->evfd >= 0)
		return k->evfd;
	ret = hbm_nl_subscribe(k->nl, HBMPOOL_MCGRP_MONITOR);
	if (ret) {
		snprintf(err, errlen, "joining the group \"%s\": %s", HBMPOOL_MCGRP_MONITOR,
			 strerror(-ret));
		return ret;
	}
	fd = hbm_nl_monitor_fd(k->nl);
	if (fd < 0 || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)) {
		snprintf(err, errlen, "the monitor socket: %s", strerror(fd < 0 ? -fd : errno));
		return fd < 0 ? fd : -errno;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size));	/* best effort */
	k->evfd = fd;
	k->evseq = 0;
	return fd;
}

struct evbuf {
	struct knl *k;
	struct hbmd_kernel_event *ev;
	size_t n, cap;
};

static struct hbmd_kernel_event *ev_slot(struct evbuf *b, int kind, uint64_t seq)
{
	struct hbmd_kernel_event *e = &b->ev[b->n++];

	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->seq = seq;
	e->health = -1;
	return e;
}

/* Every event: its number checked (a gap is a loss), the ones the agent uses kept. */
static int ev_cb(uint8_t cmd, struct nlattr *attrs, int len, void *arg)
{
	struct nlattr *tb[64];
	struct evbuf *b = arg;
	struct hbmd_kernel_event *e;
	int max, seq_attr, kind;
	uint64_t seq = 0;

	switch (cmd) {
	case HBMPOOL_CMD_NODE_ADD_NTF:
	case HBMPOOL_CMD_NODE_DEL_NTF:
	case HBMPOOL_CMD_NODE_CHANGE_NTF:
		max = HBMPOOL_A_NODE_MAX;
		seq_attr = HBMPOOL_A_NODE_SEQ;
		kind = cmd == HBMPOOL_CMD_NODE_ADD_NTF ? HBMD_KEV_NODE_ADD :
		       cmd == HBMPOOL_CMD_NODE_DEL_NTF ? HBMD_KEV_NODE_DEL : HBMD_KEV_NODE_CHANGE;
		break;
	case HBMPOOL_CMD_LINK_CHANGE_NTF:
		max = HBMPOOL_A_LINK_MAX;
		seq_attr = HBMPOOL_A_LINK_SEQ;
		kind = HBMD_KEV_LINK;
		break;
	case HBMPOOL_CMD_DOMAIN_CHANGE_NTF:
		max = HBMPOOL_A_DOMAIN_MAX;
		seq_attr = HBMPOOL_A_DOMAIN_SEQ;
		kind = HBMD_KEV_DOMAIN;
		break;
	case HBMPOOL_CMD_SEGMENT_CHANGE_NTF:
		max = HBMPOOL_A_SEGMENT_MAX;
		seq_attr = HBMPOOL_A_SEGMENT_SEQ;
		kind = HBMD_KEV_SEGMENT;
		break;
	case HBMPOOL_CMD_REGION_NEW_NTF:
	case HBMPOOL_CMD_REGION_DEL_NTF:
		max = HBMPOOL_A_REGION_MAX;
		seq_attr = HBMPOOL_A_REGION_SEQ;
		kind = HBMD_KEV_REGION;
		break;
	case HBMPOOL_CMD_REGION_CHANGE_NTF:
		max = HBMPOOL_A_REGION_MAX;
		seq_attr = HBMPOOL_A_REGION_SEQ;
		kind = HBMD_KEV_REGION_CHANGE;
		break;
	case HBMPOOL_CMD_RESYNC_CHANGE_NTF:
		max = HBMPOOL_A_RESYNC_MAX;
		seq_attr = HBMPOOL_A_RESYNC_SEQ;
		kind = HBMD_KEV_RESYNC;
		break;
	case HBMPOOL_CMD_PARAMS_CHANGE_NTF:
		max = HBMPOOL_A_PARAMS_MAX;
		seq_attr = HBMPOOL_A_PARAMS_SEQ;
		kind = -1;
		break;
	default:
		return 0;	/* a newer kernel's: not ours */
	}
	if (max >= (int)(sizeof(tb) / sizeof(tb[0])) || nla_parse(tb, max, attrs, len, NULL))
		return 0;	/* not understood: its number missing shows as a gap */
	if (tb[seq_attr])
		seq = nla_get_u64(tb[seq_attr]);
	/* one number per event, domain-wide, in order: a gap is a lost event */
	if (seq && b->k->evseq && seq != b->k->evseq + 1)
		ev_slot(b, HBMD_KEV_OVERRUN, 0);
	if (seq)
		b->k->evseq = seq;
	if (kind >= 0) {
		e = ev_slot(b, kind, seq);
		switch (kind) {
		case HBMD_KEV_LINK:
			e->id = tb[HBMPOOL_A_LINK_NODE_ID] ?
				nla_get_u32(tb[HBMPOOL_A_LINK_NODE_ID]) : UINT32_MAX;
			e->state = tb[HBMPOOL_A_LINK_OPER_STATE] ?
				   (int)nla_get_u32(tb[HBMPOOL_A_LINK_OPER_STATE]) : 0;
			e->health = tb[HBMPOOL_A_LINK_HEALTH] ?
				    (int)nla_get_u32(tb[HBMPOOL_A_LINK_HEALTH]) : -1;
			break;
		case HBMD_KEV_DOMAIN:
			e->fenced = !!tb[HBMPOOL_A_DOMAIN_FENCED];
			e->epoch = tb[HBMPOOL_A_DOMAIN_EPOCH] ?
				   nla_get_u64(tb[HBMPOOL_A_DOMAIN_EPOCH]) : 0;
			break;
		case HBMD_KEV_SEGMENT:
			break;
		case HBMD_KEV_REGION:
		case HBMD_KEV_REGION_CHANGE:
			e->id = tb[HBMPOOL_A_REGION_ID] ? nla_get_u32(tb[HBMPOOL_A_REGION_ID]) :
				UINT32_MAX;
			e->degraded = tb[HBMPOOL_A_REGION_DEGRADED_CHUNKS] ?
				      nla_get_u32(tb[HBMPOOL_A_REGION_DEGRADED_CHUNKS]) : 0;
			e->lost = tb[HBMPOOL_A_REGION_LOST_CHUNKS] ?
				  nla_get_u32(tb[HBMPOOL_A_REGION_LOST_CHUNKS]) : 0;
			break;
		case HBMD_KEV_RESYNC:
			e->id = tb[HBMPOOL_A_RESYNC_ID] ? nla_get_u32(tb[HBMPOOL_A_RESYNC_ID]) :
				UINT32_MAX;
			e->state = tb[HBMPOOL_A_RESYNC_STATE] ?
				   (int)nla_get_u32(tb[HBMPOOL_A_RESYNC_STATE]) : 0;
			break;
		default:	/* a node */
			e->id = tb[HBMPOOL_A_NODE_ID] ? nla_get_u32(tb[HBMPOOL_A_NODE_ID]) :
				UINT32_MAX;
			e->state = tb[HBMPOOL_A_NODE_STATE] ?
				   (int)nla_get_u32(tb[HBMPOOL_A_NODE_STATE]) : 0;
			e->self = !!tb[HBMPOOL_A_NODE_SELF];
			break;
		}
	}
	/* room for two more (a gap and an event) or stop after this message */
	return b->n + 2 > b->cap;
}

static int knl_events_read(void *ctx, struct hbmd_kernel_event *ev, size_t n,
			   char *err, size_t errlen)
{
	struct knl *k = ctx;
	struct evbuf b = { .k = k, .ev = ev, .cap = n };
	int ret;

	if (k->evfd < 0) {
		snprintf(err, errlen, "no event channel");
		return -EINVAL;
	}
	if (n < 2) {
		snprintf(err, errlen, "room for 2 events at least");
		return -EINVAL;
	}
	while (b.n + 2 <= b.cap) {
		ret = hbm_nl_listen(k->nl, ev_cb, &b);
		if (ret == -ENOBUFS) {
			/* lost: the next number is no gap of its own */
			ev_slot(&b, HBMD_KEV_OVERRUN, 0);
			k->evseq = 0;
			continue;
		}
		if (ret == -EAGAIN || ret == 0)
			break;	/* drained, or full */
		if (b.n)
			break;	/* these first; the error again next time */
		snprintf(err, errlen, "reading the kernel's events: %s", strerror(-ret));
		return ret;
	}
	return (int)b.n;
}

static void knl_close(void *ctx)
{
	struct knl *k = ctx;

	hbm_nl_close(k->nl);
	free(k);
}

static const struct hbmd_kernel_ops knl_ops = {
	.setup = knl_setup,
	.node_add = knl_node_add,
	.node_remove = knl_node_remove,
	.node_fence = knl_node_fence,
	.node_place = knl_node_place,
	.node_failure_domain = knl_node_failure_domain,
	.node_drain = knl_node_drain,
	.domain_read = knl_domain_read,
	.set_epoch = knl_set_epoch,
	.fence_self = knl_fence_self,
	.nodes_read = knl_nodes_read,
	.links_read = knl_links_read,
	.close = knl_close,
	.stats_read = knl_stats_read,
	.events_open = knl_events_open,
	.events_read = knl_events_read,
	.chunks_read = knl_chunks_read,
	.resync_new = knl_resync_new,
	.resync_new_to = knl_resync_new_to,
	.resync_read = knl_resync_read,
	.resync_del = knl_resync_del,
	.resync_params = knl_resync_params,
	.placement_params = knl_placement_params,
	.segment_del = knl_segment_del,
};

int hbmd_kernel_nl_open(struct hbmd_kernel *kern, char *err, size_t errlen)
{
	struct knl *k = calloc(1, sizeof(*k));
	int ret;

	if (!k) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = hbm_nl_open(&k->nl);
	if (ret) {
		if (ret == -ENOENT)
			snprintf(err, errlen,
				 "the hbmpool netlink family is not there: is hbmpool.ko loaded?");
		else
			snprintf(err, errlen, "cannot open a generic netlink socket: %s",
				 strerror(-ret));
		free(k);
		return ret;
	}
	k->evfd = -1;
	kern->ops = &knl_ops;
	kern->ctx = k;
	return 0;
}
