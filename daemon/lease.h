/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lease discipline of a member, as pure logic (times are passed in, in
 * ms of CLOCK_MONOTONIC): when to renew the lease that keeps this node a
 * member, and when to fence the node because the lease could have expired
 * on etcd (issue 9, after FaRM).
 *
 * etcd extends a lease to (the time it receives the keepalive + TTL), on
 * its own clock.  The request left here at sent_ms, before etcd received
 * it, so a successful grant or renewal sent at sent_ms proves the lease
 * lives at least until sent_ms + TTL on our clock, give or take the rate
 * difference of two clocks over one TTL, which the margin covers.  A
 * daemon that has not proven its lease alive beyond now + margin must
 * fence its node: stop serving its segment, so that the others may treat
 * it as dead once the lease is gone.  Fencing is final: the node rejoins
 * with a new lease and a new incarnation.
 *
 * Renewals are due every third of the TTL; a failed one is retried after
 * retry_ms (or at once if that is later than needed).
 */
#ifndef HBMPOOLD_LEASE_H
#define HBMPOOLD_LEASE_H

#include <stdbool.h>
#include <stdint.h>

enum hbm_lease_state {
	HBM_LEASE_NONE,		/* no lease yet */
	HBM_LEASE_HELD,
	HBM_LEASE_FENCED,	/* final */
};

enum hbm_lease_action {
	HBM_LEASE_WAIT,		/* nothing to do before hbm_lease_next() */
	HBM_LEASE_RENEW,	/* send a keepalive now (then hbm_lease_sent()) */
	HBM_LEASE_FENCE,	/* fence the node now: the lease may be gone */
};

struct hbm_lease {
	enum hbm_lease_state state;
	int64_t id;
	uint64_t ttl_ms;
	uint64_t margin_ms;
	uint64_t retry_ms;
	uint64_t valid_until;	/* proven alive until then (our clock) */
	uint64_t renew_at;	/* next keepalive due */
	bool in_flight;		/* a keepalive sent, no answer yet */
	uint64_t sent_at;	/* of the keepalive in flight */
	unsigned int failures;	/* renewals failed in a row */
};

/*
 * A lease granted: id, the TTL etcd granted (s), and when the grant
 * request was sent.  margin_ms: fence this long before the lease could
 * expire; retry_ms: between failed renewals.  -EINVAL if the margin leaves
 * no time to renew (margin_ms >= ttl / 3).
 */
int hbm_lease_granted(struct hbm_lease *l, int64_t id, int64_t ttl_s, uint64_t sent_ms,
		      uint64_t margin_ms, uint64_t retry_ms);
/* What to do at now (and HBM_LEASE_FENCE moves to FENCED). */
enum hbm_lease_action hbm_lease_tick(struct hbm_lease *l, uint64_t now);
/* A keepalive was sent at now. */
void hbm_lease_sent(struct hbm_lease *l, uint64_t now);
/* Its answer: the new TTL (s), or a failure (ttl_s 0: -ENOENT, the lease is gone). */
void hbm_lease_renewed(struct hbm_lease *l, int64_t ttl_s, uint64_t now);
void hbm_lease_failed(struct hbm_lease *l, bool gone, uint64_t now);
/* When hbm_lease_tick() next has something to do (UINT64_MAX: never). */
uint64_t hbm_lease_next(const struct hbm_lease *l);

#endif /* HBMPOOLD_LEASE_H */
