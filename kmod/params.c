// SPDX-License-Identifier: GPL-2.0
/*
 * The module's run-time parameters (cache budget, fetch timeout, read-ahead
 * window, the rate and number of chunk moves, placement's full threshold
 * and its view of degraded links): the one operation that changes them
 * after load (netlink's params-set).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <net/netlink.h>

#include "hbmpool.h"
#include "resync.h"

/**
 * hbmpool_params_set - change parameters
 * @p: the parameters to change (struct hbmpool_params_req; NULL fields stay)
 * @extack: the refusal's reason
 *
 * One event announces the change.  Return: 0, -EINVAL (out of range or
 * nothing to set), -ENODEV (the module is going).
 */
int hbmpool_params_set(const struct hbmpool_params_req *p,
		       struct netlink_ext_ack *extack)
{
	int err;

	if (!p->budget && !p->timeout_ms && !p->ra_max && !p->resync_mbps &&
	    !p->resync_jobs && !p->full_pct && !p->avoid_degraded) {
		NL_SET_ERR_MSG(extack, "no parameter to set");
		return -EINVAL;
	}
	if (p->budget && (*p->budget < HBMPOOL_BUDGET_MIN ||
			  *p->budget > HBMPOOL_BUDGET_MAX)) {
		NL_SET_ERR_MSG(extack, "cache-budget-pages: 16..16777216");
		return -EINVAL;
	}
	if (p->timeout_ms && (*p->timeout_ms < HBMPOOL_TIMEOUT_MIN ||
			      *p->timeout_ms > HBMPOOL_TIMEOUT_MAX)) {
		NL_SET_ERR_MSG(extack, "fetch-timeout-ms: 10..600000");
		return -EINVAL;
	}
	if (p->ra_max && (*p->ra_max < 1 || *p->ra_max > HBMPOOL_RA_MAX)) {
		NL_SET_ERR_MSG(extack, "readahead-max-pages: 1..512");
		return -EINVAL;
	}
	if (p->resync_mbps && *p->resync_mbps > HBMPOOL_RESYNC_MBPS_MAX) {
		NL_SET_ERR_MSG(extack, "resync-mbps: 0..1000000");
		return -EINVAL;
	}
	if (p->resync_jobs && (*p->resync_jobs < 1 ||
			       *p->resync_jobs > HBMPOOL_RESYNC_JOBS_MAX)) {
		NL_SET_ERR_MSG(extack, "resync-jobs: 1..64");
		return -EINVAL;
	}
	if (p->full_pct && (*p->full_pct < 1 || *p->full_pct > 100)) {
		NL_SET_ERR_MSG(extack, "full-pct: 1..100");
		return -EINVAL;
	}
	if (p->avoid_degraded && *p->avoid_degraded > 1) {
		NL_SET_ERR_MSG(extack, "avoid-degraded: 0 or 1");
		return -EINVAL;
	}
	err = hbmpool_ctl_begin();
	if (err) {
		NL_SET_ERR_MSG(extack, "the module is being unloaded");
		return err;
	}
	if (p->budget) {
		WRITE_ONCE(hbmpool_cache_budget, *p->budget);
		hbmpool_cache_budget_changed();
	}
	if (p->timeout_ms)
		WRITE_ONCE(hbmpool_fetch_timeout_ms, *p->timeout_ms);
	if (p->ra_max)
		WRITE_ONCE(hbmpool_readahead_max, *p->ra_max);
	if (p->resync_mbps)
		WRITE_ONCE(hbmpool_resync_mbps, *p->resync_mbps);
	if (p->resync_jobs)
		hbmpool_resync_set_jobs(*p->resync_jobs);
	if (p->full_pct)
		WRITE_ONCE(hbmpool_place_full_pct, *p->full_pct);
	if (p->avoid_degraded)
		WRITE_ONCE(hbmpool_place_avoid_degraded, *p->avoid_degraded);
	hbmpool_event(HBMPOOL_EVENT_PARAMS_CHANGE, NULL);
	hbmpool_ctl_end();
	return 0;
}
