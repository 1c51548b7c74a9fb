/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The membership scale experiment (issue 9): N simulated nodes in one
 * process against one etcd, each running the daemon's membership core (a
 * lease kept by lease.c's discipline, its member key in membership.c's
 * layout, a watch of the domain prefix applied to its own member table and
 * epoch by membership.c), over etcd_multi.c.  All join; then `kill` of them
 * stop at once as a crash would (no revoke, keepalives stop, connections
 * closed), and the survivors' watches tell when each sees each dead node
 * go and when each reaches the new epoch.  Used by membership_scale (the
 * benchmark) and mscale_unit (the smoke test).
 */
#ifndef HBM_MSCALE_H
#define HBM_MSCALE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* What a node does when its watch has been quiet for 2 TTLs. */
enum mscale_idle {
	MSCALE_IDLE_PROBE,	/* the agent's: one probe, a re-read if it says so */
	MSCALE_IDLE_RESYNC,	/* the agent's before: read the whole domain again */
	MSCALE_IDLE_NONE,	/* nothing */
};

struct mscale_opts {
	const char *endpoint;		/* "http://127.0.0.1:PORT" */
	const char *domain;		/* its own per run: keys PREFIX/DOMAIN/... */
	unsigned int nodes;		/* 1..1024 */
	unsigned int kill;		/* nodes that crash */
	unsigned int ttl_s;		/* lease TTL (the daemon's default: 10) */
	unsigned int request_ms;	/* request timeout (the daemon's: 2000) */
	unsigned int steady_s;		/* the steady-state window before the kill */
	unsigned int starting;		/* nodes registering at once (the rest wait) */
	unsigned int ranging;		/* first ranges at once (0: as starting) */
	enum mscale_idle idle;		/* after 2 TTLs of quiet watch (0: probe) */
	int etcd_pid;			/* for its CPU time, 0: unknown */
	FILE *log;			/* progress lines, or NULL */
};

struct mscale_counts {
	double s;			/* the window */
	double rps;			/* requests/s (POSTs and watches started) */
	double msgs;			/* watch messages delivered /s */
	double up, down;		/* bytes/s per live node, mean */
	double up_max, down_max;	/* of the busiest node */
	double cpu, etcd_cpu;		/* CPU s/s of the simulator, of etcd */
	double probes;			/* idle probes sent /s (in rps too) */
	double probe_up, probe_down;	/* their bytes/s per live node, mean (in up, down too) */
};

struct mscale_result {
	bool done;			/* the experiment ran to its end */
	char err[256];			/* else why not */
	unsigned int nodes, killed, survivors;
	double join_s;			/* start to every table holding every node */
	double join_cpu, join_etcd_cpu;	/* CPU s spent in it */
	unsigned int watch_streams;	/* open at the kill */
	/* detection: kill to a survivor's watch deleting a dead node, all pairs */
	unsigned int pairs, pairs_missed;
	double det_min, det_med, det_p99, det_max;
	/* the same from the dead lease's proven end (last keepalive sent + TTL) */
	double lag_min, lag_max;
	/* the new epoch: the revision of the last of the deletions */
	int64_t epoch_before, epoch_after;
	double agree_s;			/* first survivor at the new epoch to the last */
	double first_at_s, last_at_s;	/* from the kill */
	unsigned int not_agreed;	/* survivors that never reached it */
	unsigned int fenced;		/* survivors that lost their lease (must be 0) */
	unsigned int other_leaves;	/* deletions of live nodes seen (must be 0) */
	unsigned int failed;		/* nodes that could not join */
	unsigned int retries;		/* grants and creates tried again */
	unsigned int resyncs;		/* ranges after the join (idle or broken watches) */
	unsigned int quiet_resyncs;	/* of them before the kill */
	/* idle probes answered, and those that said the watch missed something */
	unsigned int probes, probe_missed;
	unsigned int quiet_probes, quiet_missed;	/* the same before the kill */
	unsigned int probe_failed;	/* not answered (the domain is read again) */
	double probe_up_each, probe_down_each;	/* HTTP bytes of one probe, mean */
	/* loop iterations over 0.5 s: the simulator off its CPU (or busy) */
	unsigned int stalls;
	double stall_max_s, stall_max_cpu_s;	/* the longest, and its CPU time */
	struct mscale_counts steady, event;
};

/*
 * The idle mode's name.  The probe itself is the agent's (hbm_etcd_probe()
 * in daemon/etcd.c): its body and reply are etcd.c's hbm_etcd_body_probe()
 * and hbm_etcd_reply_probe().
 */
const char *mscale_idle_name(enum mscale_idle idle);

int mscale_run(const struct mscale_opts *o, struct mscale_result *r);
void mscale_print_header(FILE *f);
void mscale_print(FILE *f, const struct mscale_result *r, const struct mscale_opts *o);

#endif /* HBM_MSCALE_H */
