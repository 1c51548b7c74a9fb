/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent: hbmpoold's per-node state machine (issue 9).
 *
 *  - start: set the kernel up (domain, self id, key, segment: its
 *    incarnation), take a lease, register this node under it
 *    (PREFIX/DOMAIN/members/ID, create-if-absent, the incarnation in the
 *    value), read the domain (members and leader), bring the kernel's
 *    nodes to the members (adding those missing, fencing and removing the
 *    others), push the epoch, stand for leader, watch the domain's prefix;
 *  - keep the lease alive with lease.c's decisions, and fence this node in
 *    the kernel (final: the agent then does nothing more) when lease.c says
 *    the lease could be gone, when etcd says it is gone, or when this
 *    node's key is deleted or taken by another incarnation;
 *  - apply every membership change to the kernel: a join adds the node
 *    (TCP transport; the distance and link type of its location,
 *    topology.h), a leave fences it in the kernel and removes it
 *    HBMD_REMOVE_DELAY_MS later, a new incarnation or address is a leave
 *    and a join, a new location a node-set of its distance and link
 *    type; push the epoch after each change;
 *  - leader election: the leader key, created under the lease; tried again
 *    whenever the key is deleted;
 *  - link health: every [health] interval_ms, the kernel's links to members
 *    judged (health.h); a change logged; a link published under the lease
 *    (PREFIX/DOMAIN/links/FROM/TO, links.h) on its first sample, on a
 *    change and every HBM_HEALTH_REFRESH_MS, deleted when it leaves the
 *    kernel; every node's links kept from the same range and watch as the
 *    members (hbmd_agent_links(), the control socket's "links");
 *  - the kernel's events (kernel.h; subscribed before the first read of
 *    the kernel's nodes): a change made behind the agent's back (a node
 *    removed, fenced or added by hbmctl, this node fenced) brings its view
 *    to the kernel, then the kernel to the members; a link event samples
 *    that link at once; events lost (an overrun): the nodes and links read
 *    again.  The event descriptor is one of hbmd_agent_fds();
 *  - replication (replication_agent.h): this node's replicated regions,
 *    read on the kernel's region events, published under the lease as
 *    PREFIX/DOMAIN/replication/SELF; every member's report kept from the
 *    range and watch; the leader logs a member's degraded or lost chunks
 *    and their restoration.
 *
 * The agent is driven by its caller's loop (loop.c in hbmpoold, threads in
 * the unit test): wait for the descriptors of hbmd_agent_fds() or until
 * hbmd_agent_deadline(), then hbmd_agent_event() for each ready one and
 * hbmd_agent_tick().  Once running, the agent never waits for etcd: its
 * requests (keepalive, election, resync, probe, its links, drain progress
 * and rebalance request) run in that loop too (etcd_async.h), among the
 * descriptors and the deadline, and are handled as they end.  Synchronous
 * are only hbmd_agent_start() and hbmd_agent_stop() (before and after
 * the loop serves), a leave's last steps, and hbmd_agent_drain(), which
 * answers the control socket at once (bounded by the request timeout,
 * once per endpoint, and made only when it would end before the lease's
 * fence time).
 *
 * Messages go to the log callback, with syslog levels.
 */
#ifndef HBMPOOLD_AGENT_H
#define HBMPOOLD_AGENT_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "kernel.h"
#include "lease.h"

#define HBMD_REMOVE_DELAY_MS	1000	/* from a leave's fence to node-del */
#define HBMD_RETRY_MS		1000	/* a failed kernel or etcd step, again */
#define HBMD_LEAVE_NAG_MS	30000	/* a leave says what it waits for this often */

typedef void hbmd_log_fn(void *arg, int level, const char *msg);

enum hbmd_agent_state {
	HBMD_AGENT_NEW,
	HBMD_AGENT_RUNNING,
	HBMD_AGENT_FENCED,	/* final */
	HBMD_AGENT_STOPPED,
};

struct hbmd_agent;

/*
 * Start the agent: everything up to the watch (above).  The kernel is the
 * agent's from here (closed by hbmd_agent_free()).  Returns 0, or -errno
 * with the reason logged (nothing to free but the agent).
 */
int hbmd_agent_new(const struct hbm_config *conf, struct hbmd_kernel kernel, hbmd_log_fn *log,
		   void *log_arg, struct hbmd_agent **out);
int hbmd_agent_start(struct hbmd_agent *a);

/* The descriptors to wait on (up to n), and until when. */
unsigned int hbmd_agent_fds(struct hbmd_agent *a, struct pollfd *fds, unsigned int n);
uint64_t hbmd_agent_deadline(const struct hbmd_agent *a);
/* A descriptor is ready. */
void hbmd_agent_event(struct hbmd_agent *a, int fd, short revents);
/* Do whatever is due (CLOCK_MONOTONIC). */
void hbmd_agent_tick(struct hbmd_agent *a);

/*
 * Stop: the watch ends, the agent does nothing more.  revoke: give the
 * lease back, so that the others see this node leave at once (and fence
 * it); else the lease runs out by itself, and a daemon restarted in time
 * with the same segment takes it over.
 */
void hbmd_agent_stop(struct hbmd_agent *a, bool revoke);
void hbmd_agent_free(struct hbmd_agent *a);
/*
 * The config the agent was given changed in place (a reload: only the keys
 * hbm_config_key_reloadable() allows): its [health] values are taken from
 * now on (the links keep their state; a shorter interval_ms brings the
 * next sample forward); a new [distance] table is set at once on every
 * member in the kernel whose distance changes (node-set).  From the caller's loop, as the other calls.
 */
void hbmd_agent_reconfigured(struct hbmd_agent *a);

/*
 * A drain of node id (on) or its end (off), for the control socket: the
 * key PREFIX/DOMAIN/drains/ID (membership.h) written (a transaction: a
 * drain already there is kept) or deleted in etcd, one synchronous call;
 * every daemon, this one included, applies it from its watch: node-set
 * draining 1|0 on node id in its kernel (not in id's own kernel, which
 * refuses it), and on a node that joins while drained, right after its
 * add; every daemon then moves its own chunks off id (drain_agent.h) and
 * publishes its progress.  id need not be a member
 * (yet).  0, or -errno with the reason in err: -EINVAL (id), -EAGAIN (this
 * daemon is no member, or its lease is too close to its end), etcd's.
 */
int hbmd_agent_drain(struct hbmd_agent *a, uint32_t id, bool on, char *err, size_t errlen);

/*
 * A graceful leave, for the control socket: a drain of this node (as
 * hbmd_agent_drain()), then, once every member reports no chunk of its
 * left on this node (PREFIX/DOMAIN/drains/SELF/progress/M, drain_agent.h),
 * the lease revoked (the others see this node leave), the drain key
 * deleted, and hbmd_agent_left() true: the daemon exits 0.  An undrain of
 * this node meanwhile cancels the leave.  0 (also when already leaving),
 * or -errno with the reason in err.
 */
int hbmd_agent_leave(struct hbmd_agent *a, char *err, size_t errlen);
bool hbmd_agent_leaving(const struct hbmd_agent *a);
bool hbmd_agent_left(const struct hbmd_agent *a);

enum hbmd_agent_state hbmd_agent_state(const struct hbmd_agent *a);
bool hbmd_agent_is_leader(const struct hbmd_agent *a);
/* The leader as last seen (-1: none known). */
int hbmd_agent_leader_id(const struct hbmd_agent *a);
int64_t hbmd_agent_epoch(const struct hbmd_agent *a);
size_t hbmd_agent_nr_members(const struct hbmd_agent *a);
uint64_t hbmd_agent_incarnation(const struct hbmd_agent *a);
const struct hbm_lease *hbmd_agent_lease(const struct hbmd_agent *a);
/*
 * The agent's view as JSON (malloc'ed), for the control socket:
 *   {"node": 2, "state": "member", "status": "...", "epoch": 9,
 *    "leader": 3, "is_leader": false, "incarnation": 1001,
 *    "lease": {"id": "299ca209d88a920d", "ttl_ms": 2000, "proven_for_ms": 1650},
 *    "members": [{"id": 1, "addr": "10.0.0.1", "port": 7070,
 *                 "segment_bytes": ..., "capacity": ..., "incarnation": ...,
 *                 "kernel": "live", "location": {"rack": "r1", "tray": "t2"},
 *                 "relation": "rack", "distance": 30, "link_type": "scaleout",
 *                 "draining": false},
 *                ...],
 *    "drains": [3, ...], "leaving": false, "left": false,
 *    "drain_progress": [{"node": 3, "chunks_left": 5, "bytes_left": 10485760,
 *                        "failures": 0, "members": 3, "reported": 3, "done": false,
 *                        "by_member": [{"id": 1, "chunks_left": 5, "bytes_left": ...,
 *                                       "failures": 0, "updated": 1764100000123}, ...]}],
 *    "replication": {"regions": 2, "degraded_regions": 1, "degraded_chunks": 3,
 *                    "lost_chunks": 0, "members_degraded": 1,
 *                    "by_member": [{"id": 1, "regions": 1, "degraded_regions": 1,
 *                                   "degraded_chunks": 3, "lost_chunks": 0,
 *                                   "updated": 1764100000123}, ...]},
 *    "links": [{"from": 1, "to": 2, "state": "degraded", "rtt_us": 250000,
 *               "error_pct": 0, "changes": 3, "since": 1764100000123}, ...]}
 * state: new, member, fenced, stopped; leader null when none is known;
 * kernel: how this agent left the member in the kernel (self, live,
 * fenced, absent); location: the levels the member names ({} if none);
 * relation, distance, link_type (not for this node): what this node gives
 * the member from the two locations and [distance] (topology.h);
 * draining: a key PREFIX/DOMAIN/drains/ID for it; drains: every drained
 * id, sorted, members or not; leaving: hbmd_agent_leave() in progress;
 * left: it is done (the daemon exits);
 * drain_progress: per drain, the members' progress reports summed (only
 * members count; done: every member reported none left); replication:
 * every member's report (PREFIX/DOMAIN/replication/ID, replication.h)
 * summed, members_degraded those with degraded or lost chunks, by_member
 * each report (members that have said nothing have none); links: every node's published links (links.h), this
 * node's included as etcd has them.
 */
int hbmd_agent_json(const struct hbmd_agent *a, char **json);
/* A member as this agent has it, for the metrics. */
struct hbmd_agent_member {
	uint32_t id;
	const char *kernel;	/* as in hbmd_agent_json(): self, live, fenced, absent */
	uint64_t capacity;	/* bytes, from its registration */
};
/* The i-th member (sorted by id); -ENOENT past the last. */
int hbmd_agent_member(const struct hbmd_agent *a, size_t i, struct hbmd_agent_member *m);
/* The kernel the agent drives, for quick reads that change nothing (the metrics). */
struct hbmd_kernel hbmd_agent_kernel(const struct hbmd_agent *a);
/* The domain's link matrix as this agent last read it from etcd (links.h). */
struct hbm_links;
const struct hbm_links *hbmd_agent_links(const struct hbmd_agent *a);
/* One line for sd_notify STATUS=. */
const char *hbmd_agent_status(const struct hbmd_agent *a);

#endif /* HBMPOOLD_AGENT_H */
