/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rebalancer: the agent's part that moves this node's chunks toward
 * the nodes under their share when the domain changes (issue 9).
 *
 * The leader decides: when a member joins (or comes back with a new
 * incarnation) while it runs, it puts PREFIX/DOMAIN/rebalance (JSON: node,
 * the member that joined; epoch).  Every member's agent sees the key
 * change in its watch and starts a rebalance (hbmd_rebalancer_request()):
 * passes, every HBMD_REBALANCE_PASS_MS, read this node's regions and their
 * chunks (region-get dump: policy, node set, where each chunk lives), the
 * nodes (node-get dump: state, draining, free bytes, effective weight) and
 * the kernel's moves, and let the planner (rebalance.h) choose moves of
 * chunks of interleaved regions (interleave, weighted interleave: the
 * policies that spread by share; bind and preferred keep their order) from
 * nodes over their share to nodes under it, at most jobs in flight; each
 * one is a resync-new with from and to.  Planning waits until the joined
 * node is live in this kernel (its add and handshake follow the join),
 * at most HBMD_REBALANCE_JOIN_WAIT_MS.  Lost chunks are neither counted
 * nor moved; a chunk whose move failed is not tried again in the same
 * rebalance.  A rebalance ends when a pass plans nothing and
 * nothing of it is in flight, or after HBMD_REBALANCE_MAX_FAILURES failed
 * moves (logged).  While a drain runs,
 * the rebalance waits: the drain's moves come first.
 *
 * Nothing here talks to etcd: the agent reads and writes the key.
 */
#ifndef HBMPOOLD_REBALANCE_AGENT_H
#define HBMPOOLD_REBALANCE_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel.h"

#define HBMD_REBALANCE_PASS_MS		1000
#define HBMD_REBALANCE_WAIT_MS		5000	/* a pass while a drain runs */
#define HBMD_REBALANCE_JOIN_WAIT_MS	60000	/* for the joined node to be live here */
#define HBMD_REBALANCE_MAX_FAILURES	20

typedef void hbmd_rebalance_log_fn(void *arg, int level, const char *msg);

struct hbmd_rebalancer;

/* jobs: moves in flight at most (0: 2). */
int hbmd_rebalancer_new(struct hbmd_kernel k, uint32_t self, unsigned int jobs,
			hbmd_rebalance_log_fn *log, void *log_arg, struct hbmd_rebalancer **out);
void hbmd_rebalancer_free(struct hbmd_rebalancer *r);

/* The leader asked for a rebalance (node: the member that joined). */
void hbmd_rebalancer_request(struct hbmd_rebalancer *r, uint32_t node, uint64_t now);
/* When the next pass is due (UINT64_MAX: no rebalance). */
uint64_t hbmd_rebalancer_deadline(const struct hbmd_rebalancer *r);
/* A pass if due; draining: a drain exists (the rebalance waits). */
void hbmd_rebalancer_run(struct hbmd_rebalancer *r, bool draining, uint64_t now);
bool hbmd_rebalancer_active(const struct hbmd_rebalancer *r);
/* Moves of this node that ended done, since the daemon started. */
uint64_t hbmd_rebalancer_moved(const struct hbmd_rebalancer *r);

/* The rebalance key's value, both ways.  0, or -EPROTO / -ENOMEM. */
int hbmd_rebalance_encode(uint32_t node, int64_t epoch, char *buf, size_t len);
int hbmd_rebalance_parse(const char *val, size_t len, uint32_t *node, char *err, size_t errlen);

#endif /* HBMPOOLD_REBALANCE_AGENT_H */
