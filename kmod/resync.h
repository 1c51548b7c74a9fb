/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Chunk moves (resync.c): fill a new copy of a chunk while its region stays
 * mapped and written, then switch to it and give the old one back.
 */
#ifndef _HBMPOOL_RESYNC_H
#define _HBMPOOL_RESYNC_H

#include <linux/types.h>

struct hbmpool_region;
struct hbmpool_resync;
struct netlink_ext_ack;

enum hbmpool_resync_state {
	HBMPOOL_RESYNC_COPYING,
	HBMPOOL_RESYNC_DONE,
	HBMPOOL_RESYNC_FAILED,
	HBMPOOL_RESYNC_CANCELLED,
};

/* A move as netlink shows it: a snapshot, taken by hbmpool_resync_get(). */
struct hbmpool_resync_info {
	u32 id;
	u32 region_id;
	u32 chunk;
	u32 from;
	u32 to;
	u32 state;		/* enum hbmpool_resync_state */
	u32 pages;
	u32 pages_done;
	u32 error;		/* positive errno, or 0 */
	u32 elapsed_ms;
	u32 passes;
	u32 kind;		/* enum hbmpool_nl_resync_kind */
};

#define HBMPOOL_RESYNC_NONE	U32_MAX		/* no node given */
#define HBMPOOL_RESYNC_JOBS_MAX	64
#define HBMPOOL_RESYNC_MBPS_MAX	1000000

extern unsigned int hbmpool_resync_mbps;	/* READ_ONCE; 0: no limit */
extern unsigned int hbmpool_resync_jobs;

int hbmpool_resync_new(u32 region_id, u32 chunk, u32 from, u32 to,
		       struct hbmpool_resync_info *info,
		       struct netlink_ext_ack *extack);
int hbmpool_resync_replicate(struct hbmpool_region *r, u32 chunk);
int hbmpool_resync_get(u32 id, struct hbmpool_resync_info *info);
int hbmpool_resync_get_next(unsigned long *id, struct hbmpool_resync_info *info);
int hbmpool_resync_del(u32 id, struct netlink_ext_ack *extack);
void hbmpool_resync_set_jobs(unsigned int jobs);

void hbmpool_resync_get_ref(struct hbmpool_resync *job);
void hbmpool_resync_put(struct hbmpool_resync *job);
void hbmpool_resync_fail(struct hbmpool_resync *job, int err);
void hbmpool_resync_region_gone(struct hbmpool_region *r);

int hbmpool_resync_init(void);
void hbmpool_resync_exit(void);

#endif /* _HBMPOOL_RESYNC_H */
