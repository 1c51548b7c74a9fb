// SPDX-License-Identifier: GPL-2.0
/* The lease discipline, as pure logic: see lease.h. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "lease.h"

int hbm_lease_granted(struct hbm_lease *l, int64_t id, int64_t ttl_s, uint64_t sent_ms,
		      uint64_t margin_ms, uint64_t retry_ms)
{
	if (id <= 0 || ttl_s <= 0 || margin_ms * 3 >= (uint64_t)ttl_s * 1000 || !retry_ms)
		return -EINVAL;
	memset(l, 0, sizeof(*l));
	l->state = HBM_LEASE_HELD;
	l->id = id;
	l->ttl_ms = (uint64_t)ttl_s * 1000;
	l->margin_ms = margin_ms;
	l->retry_ms = retry_ms;
	l->valid_until = sent_ms + l->ttl_ms;
	l->renew_at = sent_ms + l->ttl_ms / 3;
	return 0;
}

/* The last moment the node may serve: the lease's proven end minus the margin. */
static uint64_t fence_at(const struct hbm_lease *l)
{
	return l->valid_until - l->margin_ms;
}

enum hbm_lease_action hbm_lease_tick(struct hbm_lease *l, uint64_t now)
{
	if (l->state != HBM_LEASE_HELD)
		return l->state == HBM_LEASE_FENCED ? HBM_LEASE_FENCE : HBM_LEASE_WAIT;
	if (now >= fence_at(l)) {
		l->state = HBM_LEASE_FENCED;
		return HBM_LEASE_FENCE;
	}
	if (!l->in_flight && now >= l->renew_at)
		return HBM_LEASE_RENEW;
	return HBM_LEASE_WAIT;
}

void hbm_lease_sent(struct hbm_lease *l, uint64_t now)
{
	if (l->state != HBM_LEASE_HELD)
		return;
	l->in_flight = true;
	l->sent_at = now;
}

void hbm_lease_renewed(struct hbm_lease *l, int64_t ttl_s, uint64_t now)
{
	uint64_t until;

	if (l->state != HBM_LEASE_HELD || !l->in_flight)
		return;
	l->in_flight = false;
	if (ttl_s <= 0) {
		hbm_lease_failed(l, true, now);
		return;
	}
	l->failures = 0;
	l->ttl_ms = (uint64_t)ttl_s * 1000;
	until = l->sent_at + l->ttl_ms;	/* from when it was sent, not answered */
	if (until > l->valid_until)
		l->valid_until = until;
	l->renew_at = l->sent_at + l->ttl_ms / 3;
}

void hbm_lease_failed(struct hbm_lease *l, bool gone, uint64_t now)
{
	if (l->state != HBM_LEASE_HELD)
		return;
	l->in_flight = false;
	if (gone) {
		/* etcd says the lease is gone: the others may already act on it */
		l->state = HBM_LEASE_FENCED;
		return;
	}
	l->failures++;
	l->renew_at = now + l->retry_ms;
}

uint64_t hbm_lease_next(const struct hbm_lease *l)
{
	if (l->state != HBM_LEASE_HELD)
		return UINT64_MAX;
	if (l->in_flight || l->renew_at > fence_at(l))
		return fence_at(l);
	return l->renew_at;
}
