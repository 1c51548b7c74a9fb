// SPDX-License-Identifier: GPL-2.0
/*
 * hbmnl: the hbmpool generic netlink family over libnl (see hbmnl.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/netlink.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "hbmnl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

struct hbm_nl {
	struct nl_sock *sk;		/* requests */
	struct nl_sock *mon;		/* multicast, NULL until subscribed */
	int family;
	char ext[256];			/* extack message of the last refusal */
	int ext_attr;			/* NLMSGERR_ATTR_OFFS, as an attribute type */
	int ext_miss;			/* NLMSGERR_ATTR_MISS_TYPE */
};

/* One request in flight. */
struct hbm_req {
	struct hbm_nl *nl;
	struct nl_msg *msg;		/* the request, for NLMSGERR_ATTR_OFFS */
	hbm_nl_reply_fn *cb;
	void *arg;
	int err;			/* the kernel's -errno */
	int cb_err;			/* the callback's first negative return */
	bool done;
	bool intr;
};

/* libnl's NLE_* as an errno, for the few that matter here. */
static int nlerr_errno(int nlerr)
{
	switch (nlerr < 0 ? -nlerr : nlerr) {
	case NLE_NOMEM:
		return -ENOMEM;
	case NLE_OBJ_NOTFOUND:
		return -ENOENT;
	case NLE_PERM:
		return -EPERM;
	case NLE_AGAIN:
		return -EAGAIN;
	case NLE_INTR:
		return -EINTR;
	default:
		return -EIO;
	}
}

static struct nl_sock *sock_new(void)
{
	struct nl_sock *sk = nl_socket_alloc();
	int one = 1;

	if (!sk)
		return NULL;
	if (genl_connect(sk)) {
		nl_socket_free(sk);
		return NULL;
	}
	/* Big dumps (a region's chunks) need messages of any size. */
	nl_socket_enable_msg_peek(sk);
	/* Best effort: a kernel without them still answers, without text. */
	setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	return sk;
}

int hbm_nl_open(struct hbm_nl **out)
{
	struct hbm_nl *nl = calloc(1, sizeof(*nl));
	int ret;

	if (!nl)
		return -ENOMEM;
	nl->sk = sock_new();
	if (!nl->sk) {
		free(nl);
		return -EIO;
	}
	ret = genl_ctrl_resolve(nl->sk, HBMPOOL_FAMILY_NAME);
	if (ret < 0) {
		nl_socket_free(nl->sk);
		free(nl);
		return -ENOENT;
	}
	nl->family = ret;
	*out = nl;
	return 0;
}

void hbm_nl_close(struct hbm_nl *nl)
{
	if (!nl)
		return;
	if (nl->mon)
		nl_socket_free(nl->mon);
	nl_socket_free(nl->sk);
	free(nl);
}

struct nl_msg *hbm_nl_msg(struct hbm_nl *nl, uint8_t cmd, int dump)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0,
			 dump ? NLM_F_DUMP : 0, cmd, HBMPOOL_FAMILY_VERSION)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

const char *hbm_nl_extack(const struct hbm_nl *nl)
{
	return nl->ext;
}

int hbm_nl_extack_attr(const struct hbm_nl *nl)
{
	return nl->ext_attr;
}

int hbm_nl_extack_missing(const struct hbm_nl *nl)
{
	return nl->ext_miss;
}

/* The type of the top-level request attribute at byte offs of the request. */
static int attr_at(struct nl_msg *msg, uint32_t offs)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct nlattr *a;
	int rem;

	nla_for_each_attr(a, genlmsg_attrdata(nlmsg_data(nlh), 0),
			  genlmsg_attrlen(nlmsg_data(nlh), 0), rem) {
		uint32_t start = (uint32_t)((char *)a - (char *)nlh);

		if (offs >= start && offs < start + nla_total_size(nla_len(a)))
			return nla_type(a);
	}
	return 0;
}

/*
 * The extack TLVs of an ack start ack_len bytes into it: after the error
 * code and the request's header (all of the request without NLM_F_CAPPED),
 * as in iw's error_handler().
 */
static void parse_extack(struct hbm_req *r, struct nlmsghdr *nlh, size_t ack_len)
{
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	struct nlattr *attrs;
	int len;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS) || nlh->nlmsg_len <= ack_len)
		return;
	attrs = (struct nlattr *)((char *)nlh + ack_len);
	len = (int)(nlh->nlmsg_len - ack_len);
	if (nla_parse(tb, NLMSGERR_ATTR_MAX, attrs, len, NULL))
		return;
	if (tb[NLMSGERR_ATTR_MSG]) {
		int n = (int)strnlen(nla_data(tb[NLMSGERR_ATTR_MSG]),
				     nla_len(tb[NLMSGERR_ATTR_MSG]));

		snprintf(r->nl->ext, sizeof(r->nl->ext), "%.*s", n,
			 (char *)nla_data(tb[NLMSGERR_ATTR_MSG]));
	}
	if (tb[NLMSGERR_ATTR_OFFS] && nla_len(tb[NLMSGERR_ATTR_OFFS]) >= 4 && r->msg)
		r->nl->ext_attr = attr_at(r->msg, nla_get_u32(tb[NLMSGERR_ATTR_OFFS]));
	if (tb[NLMSGERR_ATTR_MISS_TYPE] && nla_len(tb[NLMSGERR_ATTR_MISS_TYPE]) >= 4)
		r->nl->ext_miss = (int)nla_get_u32(tb[NLMSGERR_ATTR_MISS_TYPE]);
}

static int on_error(struct sockaddr_nl *who, struct nlmsgerr *e, void *arg)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)e - 1;
	struct hbm_req *r = arg;
	size_t ack_len = NLMSG_HDRLEN + sizeof(*e);

	(void)who;
	r->err = e->error;
	r->done = true;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		ack_len += NLMSG_ALIGN(e->msg.nlmsg_len - NLMSG_HDRLEN);
	parse_extack(r, nlh, ack_len);
	return NL_STOP;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	struct hbm_req *r = arg;

	(void)msg;
	r->done = true;
	return NL_STOP;
}

/* NLMSG_DONE: a dump ends; its payload is the dump's status. */
static int on_finish(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct hbm_req *r = arg;

	if (nlh->nlmsg_len >= NLMSG_HDRLEN + sizeof(int)) {
		int st = *(int *)nlmsg_data(nlh);

		if (st < 0) {
			r->err = st;
			/* no request header here: the TLVs follow the status */
			parse_extack(r, nlh, NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(int)));
		}
	}
	r->done = true;
	return NL_STOP;
}

static int on_intr(struct nl_msg *msg, void *arg)
{
	struct hbm_req *r = arg;

	(void)msg;
	r->intr = true;
	return NL_OK;
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct genlmsghdr *gh = nlmsg_data(nlh);
	struct hbm_req *r = arg;
	int ret;

	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		r->intr = true;
	/* Keep reading to the ack after a callback failed: the socket stays in step. */
	if (!r->cb || r->cb_err)
		return NL_OK;
	if (nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN) {
		r->cb_err = -EBADMSG;
		return NL_OK;
	}
	ret = r->cb(gh->cmd, genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0), r->arg);
	if (ret < 0)
		r->cb_err = ret;
	return NL_OK;
}

int hbm_nl_request(struct hbm_nl *nl, struct nl_msg *msg, hbm_nl_reply_fn *cb, void *arg)
{
	struct hbm_req r = { .nl = nl, .msg = msg, .cb = cb, .arg = arg };
	struct nl_cb *c;
	int ret;

	nl->ext[0] = '\0';
	nl->ext_attr = 0;
	nl->ext_miss = 0;
	c = nl_cb_alloc(NL_CB_DEFAULT);
	if (!c) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	nl_cb_err(c, NL_CB_CUSTOM, on_error, &r);
	nl_cb_set(c, NL_CB_ACK, NL_CB_CUSTOM, on_ack, &r);
	nl_cb_set(c, NL_CB_FINISH, NL_CB_CUSTOM, on_finish, &r);
	nl_cb_set(c, NL_CB_DUMP_INTR, NL_CB_CUSTOM, on_intr, &r);
	nl_cb_set(c, NL_CB_VALID, NL_CB_CUSTOM, on_valid, &r);

	ret = nl_send_auto(nl->sk, msg);
	if (ret < 0) {
		ret = nlerr_errno(ret);
		goto out;
	}
	ret = 0;
	while (!r.done) {
		int rc = nl_recvmsgs(nl->sk, c);

		/* An error callback's NL_STOP comes back as an NLE code: not ours. */
		if (rc < 0 && !r.done) {
			ret = nlerr_errno(rc);
			break;
		}
	}
	if (!ret)
		ret = r.err ? r.err : r.cb_err ? r.cb_err : r.intr ? -EINTR : 0;
out:
	nl_cb_put(c);
	nlmsg_free(msg);
	return ret;
}

int hbm_nl_subscribe(struct hbm_nl *nl, const char *group)
{
	int grp;

	grp = genl_ctrl_resolve_grp(nl->sk, HBMPOOL_FAMILY_NAME, group);
	if (grp < 0)
		return -ENOENT;
	if (!nl->mon) {
		nl->mon = sock_new();
		if (!nl->mon)
			return -EIO;
		/* room for a burst of events; a listener that still overruns
		 * gets -ENOBUFS from hbm_nl_listen() */
		nl_socket_set_buffer_size(nl->mon, 4 << 20, 0);
	}
	if (nl_socket_add_membership(nl->mon, grp) < 0)
		return -EIO;
	return 0;
}

/* Events are not answers: they carry no sequence number of ours. */
static int no_seq_check(struct nl_msg *msg, void *arg)
{
	(void)msg;
	(void)arg;
	return NL_OK;
}

struct hbm_listen {
	hbm_nl_reply_fn *cb;
	void *arg;
	int ret;
};

static int on_event(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct genlmsghdr *gh = nlmsg_data(nlh);
	struct hbm_listen *l = arg;

	if (nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
		return NL_SKIP;
	l->ret = l->cb(gh->cmd, genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0), l->arg);
	return l->ret ? NL_STOP : NL_OK;
}

int hbm_nl_listen(struct hbm_nl *nl, hbm_nl_reply_fn *cb, void *arg)
{
	struct hbm_listen l = { .cb = cb, .arg = arg };
	bool nonblock;
	struct nl_cb *c;
	int ret = 0, fd;

	if (!nl->mon)
		return -EINVAL;
	c = nl_cb_alloc(NL_CB_DEFAULT);
	if (!c)
		return -ENOMEM;
	nl_cb_set(c, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, no_seq_check, NULL);
	nl_cb_set(c, NL_CB_VALID, NL_CB_CUSTOM, on_event, &l);
	fd = nl_socket_get_fd(nl->mon);
	nonblock = fcntl(fd, F_GETFL) & O_NONBLOCK;
	while (!l.ret) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int rc;

		/* libnl takes EAGAIN for an empty read: look first (an overrun is POLLERR) */
		if (nonblock && (poll(&p, 1, 0) <= 0 || !(p.revents & (POLLIN | POLLERR)))) {
			ret = -EAGAIN;
			break;
		}
		rc = nl_recvmsgs(nl->mon, c);

		if (rc < 0 && !l.ret) {
			/* libnl reports the socket's overrun (ENOBUFS) as NLE_NOMEM */
			ret = rc == -NLE_NOMEM ? -ENOBUFS : nlerr_errno(rc);
			break;
		}
	}
	nl_cb_put(c);
	if (!ret && l.ret < 0)
		ret = l.ret;
	return ret;
}

int hbm_nl_monitor_fd(struct hbm_nl *nl)
{
	return nl->mon ? nl_socket_get_fd(nl->mon) : -EINVAL;
}

int hbm_nl_link_type(const char *name)
{
	static const char *const names[] = {
		[HBMPOOL_LINK_TYPE_LOCAL] = "local",
		[HBMPOOL_LINK_TYPE_SCALEUP] = "scaleup",
		[HBMPOOL_LINK_TYPE_SCALEOUT] = "scaleout",
		[HBMPOOL_LINK_TYPE_SCALEACROSS] = "scaleacross",
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return (int)i;
	return -EINVAL;
}

/* Run a write request; copy its extack message out. */
static int do_write(struct hbm_nl *nl, struct nl_msg *msg, char *ext, size_t extlen)
{
	int ret = hbm_nl_request(nl, msg, NULL, NULL);

	if (ext && extlen)
		snprintf(ext, extlen, "%s", ret ? nl->ext : "");
	return ret;
}

int hbm_nl_node_new(struct hbm_nl *nl, const struct hbm_nl_node *n, char *ext, size_t extlen)
{
	struct nl_msg *msg = hbm_nl_msg(nl, HBMPOOL_CMD_NODE_NEW, 0);

	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, HBMPOOL_A_NODE_ID, n->id) ||
	    nla_put_u64(msg, HBMPOOL_A_NODE_CAPACITY, n->capacity) ||
	    nla_put_u32(msg, HBMPOOL_A_NODE_DISTANCE, n->distance) ||
	    (n->transport && nla_put_string(msg, HBMPOOL_A_NODE_TRANSPORT, n->transport)) ||
	    (n->link_type >= 0 && nla_put_u32(msg, HBMPOOL_A_NODE_LINK_TYPE, (uint32_t)n->link_type)) ||
	    (n->name && nla_put_string(msg, HBMPOOL_A_NODE_NAME, n->name)) ||
	    (n->addr_len && nla_put(msg, HBMPOOL_A_NODE_ADDR, (int)n->addr_len, n->addr)) ||
	    (n->port && nla_put_u16(msg, HBMPOOL_A_NODE_PORT, n->port)) ||
	    (n->device && nla_put_string(msg, HBMPOOL_A_NODE_DEVICE, n->device)) ||
	    (n->failure_domain &&
	     nla_put_u32(msg, HBMPOOL_A_NODE_FAILURE_DOMAIN, n->failure_domain))) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return do_write(nl, msg, ext, extlen);
}

int hbm_nl_node_del(struct hbm_nl *nl, uint32_t id, char *ext, size_t extlen)
{
	struct nl_msg *msg = hbm_nl_msg(nl, HBMPOOL_CMD_NODE_DEL, 0);

	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, HBMPOOL_A_NODE_ID, id)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return do_write(nl, msg, ext, extlen);
}

int hbm_nl_node_fence(struct hbm_nl *nl, uint32_t id, char *ext, size_t extlen)
{
	struct nl_msg *msg = hbm_nl_msg(nl, HBMPOOL_CMD_NODE_SET, 0);

	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, HBMPOOL_A_NODE_ID, id) ||
	    nla_put_u32(msg, HBMPOOL_A_NODE_STATE, HBMPOOL_NODE_STATE_FENCED)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return do_write(nl, msg, ext, extlen);
}

int hbm_nl_node_weight(struct hbm_nl *nl, uint32_t id, uint32_t weight,
		       char *ext, size_t extlen)
{
	struct nl_msg *msg = hbm_nl_msg(nl, HBMPOOL_CMD_NODE_SET, 0);

	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, HBMPOOL_A_NODE_ID, id) ||
	    nla_put_u32(msg, HBMPOOL_A_NODE_WEIGHT, weight)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return do_write(nl, msg, ext, extlen);
}

int hbm_nl_node_draining(struct hbm_nl *nl, uint32_t id, uint8_t draining,
			 char *ext, size_t extlen)
{
	struct nl_msg *msg = hbm_nl_msg(nl, HBMPOOL_CMD_NODE_SET, 0);

	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, HBMPOOL_A_NODE_ID, id) ||
	    nla_put_u8(msg, HBMPOOL_A_NODE_DRAINING, draining)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return do_write(nl, msg, ext, extlen);
}

int hbm_nl_link_admin(struct hbm_nl *nl, uint32_t id, int up, char *ext, size_t extlen)
{
	struct nl_msg *msg = hbm_nl_msg(nl, HBMPOOL_CMD_LINK_SET, 0);

	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, HBMPOOL_A_LINK_NODE_ID, id) ||
	    nla_put_u32(msg, HBMPOOL_A_LINK_ADMIN_STATE,
			up ? HBMPOOL_LINK_STATE_UP : HBMPOOL_LINK_STATE_DOWN)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return do_write(nl, msg, ext, extlen);
}

int hbm_nl_params_set(struct hbm_nl *nl, const struct hbm_nl_params *p,
		      char *ext, size_t extlen)
{
	struct nl_msg *msg;

	if (p->fetch_timeout_ms > UINT32_MAX || p->readahead_max_pages > UINT32_MAX)
		return -ERANGE;		/* the attributes are u32 */
	msg = hbm_nl_msg(nl, HBMPOOL_CMD_PARAMS_SET, 0);
	if (!msg)
		return -ENOMEM;
	if ((p->cache_budget_pages >= 0 &&
	     nla_put_u64(msg, HBMPOOL_A_PARAMS_CACHE_BUDGET_PAGES,
			 (uint64_t)p->cache_budget_pages)) ||
	    (p->fetch_timeout_ms >= 0 &&
	     nla_put_u32(msg, HBMPOOL_A_PARAMS_FETCH_TIMEOUT_MS,
			 (uint32_t)p->fetch_timeout_ms)) ||
	    (p->readahead_max_pages >= 0 &&
	     nla_put_u32(msg, HBMPOOL_A_PARAMS_READAHEAD_MAX_PAGES,
			 (uint32_t)p->readahead_max_pages))) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return do_write(nl, msg, ext, extlen);
}
