/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The replication of the members' regions (issue 10), as pure logic: no
 * I/O, unit-tested without etcd or a kernel.
 *
 * A member's summary: over its kernel's regions (region-get dump), those
 * with replicas > 1, the chunks with fewer good copies than their
 * region's replicas ("degraded", lost ones included, as the kernel counts
 * them), the regions with such a chunk, and the chunks with no good copy
 * left ("lost", over every region).  The kernel restores the copies by
 * itself (re-replication); the summary says how far it is.
 *
 * Each member publishes its summary as
 *
 *   PREFIX/DOMAIN/replication/ID   under the member's lease:
 *       {"regions": 1, "degraded_regions": 1, "degraded_chunks": 3,
 *        "lost_chunks": 0, "updated": WALL MS}
 *
 * once it has anything to say (a replicated region, a degraded or lost
 * chunk), and from then on whenever it changes (at most once a second),
 * zeros included: the key is never deleted by its member, only with its
 * lease, so that a deletion always means that the member is gone and a
 * report of zeros that its copies are good again.  A member with no
 * replicated region that never lost a chunk writes no key.
 *
 * A value from a peer is checked strictly: an object with the five
 * unsigned integers, lost_chunks <= degraded_chunks, degraded_regions <=
 * degraded_chunks and degraded_regions > 0 iff degraded_chunks > 0;
 * anything else is -EPROTO with the reason, never a crash.  Unknown
 * fields are ignored, for later versions.
 */
#ifndef HBMPOOLD_REPLICATION_H
#define HBMPOOLD_REPLICATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel.h"

/* One member's summary. */
struct hbm_repl {
	uint64_t regions;		/* regions with replicas > 1 */
	uint64_t degraded_regions;	/* regions with a degraded chunk */
	uint64_t degraded;		/* chunks short of copies, lost ones included */
	uint64_t lost;			/* chunks with no good copy */
};

/* A member's published summary, as the domain's view keeps it. */
struct hbm_repl_report {
	uint32_t member;
	struct hbm_repl r;
	uint64_t updated;		/* its wall-clock ms */
};

/* Every member's report, sorted by member. */
struct hbm_repl_view {
	struct hbm_repl_report *rep;
	size_t n, cap;
};

/* The summary of the kernel's regions (stats_read's sums). */
void hbm_repl_from_stats(const struct hbmd_kernel_stats *s, struct hbm_repl *r);
bool hbm_repl_equal(const struct hbm_repl *a, const struct hbm_repl *b);
/* Anything to report: a degraded or lost chunk. */
bool hbm_repl_degraded(const struct hbm_repl *r);
/* All zero: nothing replicated, nothing degraded or lost. */
bool hbm_repl_zero(const struct hbm_repl *r);

/* "PREFIX/DOMAIN/replication/" and ".../replication/ID"; -ENAMETOOLONG, -EINVAL. */
int hbm_repl_prefix(char *buf, size_t len, const char *prefix, const char *domain);
int hbm_repl_key(char *buf, size_t len, const char *prefix, const char *domain, uint32_t id);
/* The member id of a key under the prefix (decimal 0..1023), or -EPROTO. */
int hbm_repl_key_id(const char *repl_prefix, const char *key, uint32_t *id);

/* The value (above) into buf: 0, or -ENOSPC. */
int hbm_repl_encode(const struct hbm_repl *r, uint64_t wall_ms, char *buf, size_t len);
/* A value (len bytes, not NUL-terminated): 0, or -EPROTO with the reason in err. */
int hbm_repl_parse(const char *val, size_t len, struct hbm_repl *r, uint64_t *updated,
		   char *err, size_t errlen);

/*
 * One line for the log: "3 chunks of 1 region degraded, 0 lost" (of r),
 * "all copies good" when nothing is degraded.
 */
void hbm_repl_text(const struct hbm_repl *r, char *buf, size_t len);
/*
 * What the leader says when member's report goes from was to now (NULL:
 * none, as a member that never reported, or whose key went with its
 * lease): the syslog level (LOG_WARNING when chunks became degraded or
 * lost, or more of them did; LOG_INFO when fewer are degraded, when all
 * copies are good again: "replication restored", and when a member with
 * degraded chunks is gone) with the line in msg ("member 1: ..."), or -1:
 * nothing to say.
 */
int hbm_repl_change(uint32_t member, const struct hbm_repl *was, const struct hbm_repl *now,
		    char *msg, size_t len);

void hbm_repl_view_init(struct hbm_repl_view *v);
void hbm_repl_view_free(struct hbm_repl_view *v);
/* Every report forgotten (before a range brings them all again). */
void hbm_repl_view_clear(struct hbm_repl_view *v);
/*
 * member's value (NULL: its key deleted): 0, -ENOMEM, or -EPROTO with the
 * reason in err (a bad value is no report: the member's is dropped).
 */
int hbm_repl_view_set(struct hbm_repl_view *v, uint32_t member, const char *val, size_t len,
		      char *err, size_t errlen);
/* member's report (NULL: none). */
const struct hbm_repl_report *hbm_repl_view_find(const struct hbm_repl_view *v, uint32_t member);
/* The reports summed; how many members report degraded or lost chunks. */
unsigned int hbm_repl_view_total(const struct hbm_repl_view *v, struct hbm_repl *total);

#endif /* HBMPOOLD_REPLICATION_H */
