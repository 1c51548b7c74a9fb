/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The domain's link matrix as etcd holds it, as pure logic (no I/O), in
 * membership.h's style.  Keys, under the config's etcd_prefix:
 *
 *   PREFIX/DOMAIN/links/FROM/TO   node FROM's link to node TO, put by FROM
 *                                 under FROM's lease (a dead node's links
 *                                 vanish with its member key):
 *       {"state": "degraded", "rtt_us": 250000, "error_pct": 0,
 *        "changes": 3, "since": 1764100000123}
 *
 * FROM and TO are decimal ids 0..1023 without leading zeros, never equal;
 * state is "up", "degraded" or "down" (health.h); rtt_us the kernel's RTT
 * EWMA (0: none yet); error_pct 0..100 over the health window; changes the
 * link's state changes since FROM's daemon started; since the wall-clock
 * time (ms since the epoch, FROM's clock) of the last change, or of the
 * first sample.  A node publishes a link when it first samples it and when
 * its state changes (rtt_us and error_pct are those of that moment), never
 * every sample nor to refresh it, and deletes it when the link leaves its
 * kernel.  Unknown fields are ignored.
 *
 * Scale: one key per pair (N x (N - 1) in a full mesh), but writes only on
 * changes, which hysteresis bounds (health.h); each write reaches every
 * daemon's watch.  A node's death makes each survivor publish one change
 * (its link down) before the lease ends: N writes and N x N watch
 * messages, where the member key's deletion makes N.
 *
 * Values come from other nodes: every field is checked; bad data is
 * -EPROTO with a message naming the key, never a crash.
 */
#ifndef HBMPOOLD_LINKS_H
#define HBMPOOLD_LINKS_H

#include <stddef.h>
#include <stdint.h>

#include "etcd.h"
#include "health.h"

struct hbm_link {
	uint32_t from, to;
	enum hbm_health state;
	uint64_t rtt_us;
	unsigned int error_pct;
	uint64_t changes;
	uint64_t since_ms;
	int64_t mod_revision;
	int64_t lease;
};

struct hbm_links {
	struct hbm_link *l;		/* sorted by (from, to), unique */
	size_t n;
	unsigned int bad;		/* entries refused by hbm_links_build() */
};

/* "PREFIX/DOMAIN/links/" and ".../links/FROM/TO". */
int hbm_links_prefix(char *buf, size_t len, const char *prefix, const char *domain);
int hbm_link_key(char *buf, size_t len, const char *prefix, const char *domain, uint32_t from,
		 uint32_t to);

/* The value (JSON, malloc'ed; from and to are in the key). */
int hbm_link_encode(const struct hbm_link *l, char **json);
/* One key/value under links_prefix (-EPROTO, the reason naming the key in err). */
int hbm_link_parse(const char *links_prefix, const struct hbm_etcd_kv *kv, struct hbm_link *l,
		   char *err, size_t errlen);

/* The matrix from a range of links_prefix: bad entries left out and counted. */
int hbm_links_build(const char *links_prefix, const struct hbm_etcd_kv *kvs, size_t n,
		    struct hbm_links *out);
/*
 * One watch event on links_prefix: a put sets the link, a delete removes
 * it; a put of a bad value removes it too and returns -EPROTO.
 */
int hbm_links_apply(struct hbm_links *t, const char *links_prefix,
		    const struct hbm_etcd_event *ev, char *err, size_t errlen);
const struct hbm_link *hbm_links_find(const struct hbm_links *t, uint32_t from, uint32_t to);
void hbm_links_free(struct hbm_links *t);

#endif /* HBMPOOLD_LINKS_H */
