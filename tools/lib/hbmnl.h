/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hbmnl: the hbmpool generic netlink family over libnl-3/libnl-genl-3,
 * shared by hbmctl and the selftests.
 *
 * One engine sends a request and receives its replies (one message for a
 * do, many for a dump) until the ack or NLMSG_DONE.  The socket asks for
 * extended acks (NETLINK_EXT_ACK) without the echoed request
 * (NETLINK_CAP_ACK); libnl 3.7 has no extack API, so the error callback
 * reads NLMSGERR_ATTR_MSG, NLMSGERR_ATTR_OFFS and NLMSGERR_ATTR_MISS_TYPE
 * from the ack's TLVs itself, as iw does.  The text of the last refusal is
 * kept in the handle (hbm_nl_extack()).
 *
 * Every function returns 0 (or a non-negative value) on success and a
 * negative errno on failure; none of them prints anything.
 */
#ifndef HBMNL_H
#define HBMNL_H

#include <stddef.h>
#include <stdint.h>

#include <netlink/attr.h>
#include <netlink/msg.h>

#include <linux/hbmpool_nl.h>

struct hbm_nl;

/* A reply: the message's attributes (after the genl header), the command. */
typedef int hbm_nl_reply_fn(uint8_t cmd, struct nlattr *attrs, int len, void *arg);

/* Open a socket and resolve the family; -ENOENT if hbmpool is not loaded. */
int hbm_nl_open(struct hbm_nl **out);
void hbm_nl_close(struct hbm_nl *nl);

/* A new request of cmd (NLM_F_DUMP when dump); NULL if out of memory. */
struct nl_msg *hbm_nl_msg(struct hbm_nl *nl, uint8_t cmd, int dump);
/*
 * Send msg (freed here) and call cb (may be NULL) on every reply.  A
 * refusal returns the kernel's -errno and leaves its extack in the handle;
 * a dump the kernel flagged NLM_F_DUMP_INTR (a change raced it) returns
 * -EINTR after all its messages: dump again.  A callback's negative return
 * ends the request with that value.
 */
int hbm_nl_request(struct hbm_nl *nl, struct nl_msg *msg, hbm_nl_reply_fn *cb, void *arg);

/*
 * The extack of the last refusal: its message ("" if none), the type of
 * the top-level request attribute it points at (NLMSGERR_ATTR_OFFS) and of
 * a missing required attribute (NLMSGERR_ATTR_MISS_TYPE), 0 if none.
 */
const char *hbm_nl_extack(const struct hbm_nl *nl);
int hbm_nl_extack_attr(const struct hbm_nl *nl);
int hbm_nl_extack_missing(const struct hbm_nl *nl);

/*
 * Join the multicast group (HBMPOOL_MCGRP_MONITOR) on a socket of its own,
 * then hbm_nl_listen() calls cb on each event until cb returns non-zero
 * (a negative value is returned) or an error: -ENOBUFS when the socket
 * overran and events were lost (listening again goes on after the gap).
 */
int hbm_nl_subscribe(struct hbm_nl *nl, const char *group);
int hbm_nl_listen(struct hbm_nl *nl, hbm_nl_reply_fn *cb, void *arg);
/*
 * The subscribed socket's descriptor (-EINVAL before hbm_nl_subscribe()),
 * for a caller's poll loop: made non-blocking, hbm_nl_listen() returns
 * -EAGAIN once every pending event went to cb.
 */
int hbm_nl_monitor_fd(struct hbm_nl *nl);

/* node-new.  Optional fields: NULL / 0 (addr_len 0: no address). */
struct hbm_nl_node {
	uint32_t id;
	uint64_t capacity;		/* bytes */
	uint32_t distance;
	const char *transport;		/* NULL: the kernel's default, "sim" */
	const char *device;		/* "shm": the home's PCI device, or NULL */
	int link_type;			/* enum hbmpool_nl_link_type, -1: default */
	const char *name;
	uint8_t addr[16];
	size_t addr_len;		/* 0, 4 or 16 */
	uint16_t port;
	uint32_t failure_domain;	/* 0: none (not sent: kernels before it refuse it) */
};

/*
 * The write operations.  ext (may be NULL) receives the extack message of
 * a refusal ("" if there is none).
 */
int hbm_nl_node_new(struct hbm_nl *nl, const struct hbm_nl_node *n, char *ext, size_t extlen);
int hbm_nl_node_del(struct hbm_nl *nl, uint32_t id, char *ext, size_t extlen);
/* Declare node id dead: node-set state fenced. */
int hbm_nl_node_fence(struct hbm_nl *nl, uint32_t id, char *ext, size_t extlen);
/*
 * node-set weight (0: automatic; sent as given, so that a bad value reaches
 * the kernel's check) and draining (sent as the u8 given).
 */
int hbm_nl_node_weight(struct hbm_nl *nl, uint32_t id, uint32_t weight,
		       char *ext, size_t extlen);
int hbm_nl_node_draining(struct hbm_nl *nl, uint32_t id, uint8_t draining,
			 char *ext, size_t extlen);
/* link-set: the link to node id administratively up or down. */
int hbm_nl_link_admin(struct hbm_nl *nl, uint32_t id, int up, char *ext, size_t extlen);
/* Parameters of params-set: a negative value is not sent (one must be). */
struct hbm_nl_params {
	int64_t cache_budget_pages;
	int64_t fetch_timeout_ms;
	int64_t readahead_max_pages;
};
#define HBM_NL_PARAMS_UNSET { -1, -1, -1 }
int hbm_nl_params_set(struct hbm_nl *nl, const struct hbm_nl_params *p,
		      char *ext, size_t extlen);

/* "scaleup" -> HBMPOOL_LINK_TYPE_SCALEUP, ...; -EINVAL if unknown. */
int hbm_nl_link_type(const char *name);

#endif /* HBMNL_H */
