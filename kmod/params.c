// SPDX-License-Identifier: GPL-2.0
/*
 * The module's run-time parameters (cache budget, fetch timeout, read-ahead
 * window, the rate and number of chunk moves): the one operation that
 * changes them after load (netlink's params-set).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <net/netlink.h>

#include "hbmpool.h"
#include "resync.h"

/**
 * hbmpool_params_set - change parameters
 * @budget: the cache budget in pages, or NULL: unchanged
 * @timeout_ms: the fetch timeout, or NULL: unchanged
 * @ra_max: the largest read-ahead window in pages, or NULL: unchanged
 * @resync_mbps: the rate of chunk moves in MiB/s (0: no limit), or NULL
 * @resync_jobs: chunk moves that copy at once, or NULL
 * @extack: the refusal's reason
 *
 * One event announces the change.  Return: 0, -EINVAL (out of range or
 * nothing to set), -ENODEV (the module is going).
 */
int hbmpool_params_set(const u64 *budget, const u32 *timeout_ms,
		       const u32 *ra_max, const u32 *resync_mbps,
		       const u32 *resync_jobs, struct netlink_ext_ack *extack)
{
	int err;

	if (!budget && !timeout_ms && !ra_max && !resync_mbps && !resync_jobs) {
		NL_SET_ERR_MSG(extack, "no parameter to set");
		return -EINVAL;
	}
	if (budget && (*budget < HBMPOOL_BUDGET_MIN || *budget > HBMPOOL_BUDGET_MAX)) {
		NL_SET_ERR_MSG(extack, "cache-budget-pages: 16..16777216");
		return -EINVAL;
	}
	if (timeout_ms && (*timeout_ms < HBMPOOL_TIMEOUT_MIN ||
			   *timeout_ms > HBMPOOL_TIMEOUT_MAX)) {
		NL_SET_ERR_MSG(extack, "fetch-timeout-ms: 10..600000");
		return -EINVAL;
	}
	if (ra_max && (*ra_max < 1 || *ra_max > HBMPOOL_RA_MAX)) {
		NL_SET_ERR_MSG(extack, "readahead-max-pages: 1..512");
		return -EINVAL;
	}
	if (resync_mbps && *resync_mbps > HBMPOOL_RESYNC_MBPS_MAX) {
		NL_SET_ERR_MSG(extack, "resync-mbps: 0..1000000");
		return -EINVAL;
	}
	if (resync_jobs && (*resync_jobs < 1 || *resync_jobs > HBMPOOL_RESYNC_JOBS_MAX)) {
		NL_SET_ERR_MSG(extack, "resync-jobs: 1..64");
		return -EINVAL;
	}
	err = hbmpool_ctl_begin();
	if (err) {
		NL_SET_ERR_MSG(extack, "the module is being unloaded");
		return err;
	}
	if (budget) {
		WRITE_ONCE(hbmpool_cache_budget, *budget);
		hbmpool_cache_budget_changed();
	}
	if (timeout_ms)
		WRITE_ONCE(hbmpool_fetch_timeout_ms, *timeout_ms);
	if (ra_max)
		WRITE_ONCE(hbmpool_readahead_max, *ra_max);
	if (resync_mbps)
		WRITE_ONCE(hbmpool_resync_mbps, *resync_mbps);
	if (resync_jobs)
		hbmpool_resync_set_jobs(*resync_jobs);
	hbmpool_event(HBMPOOL_EVENT_PARAMS_CHANGE, NULL);
	hbmpool_ctl_end();
	return 0;
}
