/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Keyed writes over etcd_async.h, for the agent's keys that it writes
 * again and again (its links, its drain progress, the rebalance request):
 * at most one request in flight per key, so that two writes of one key
 * never race (etcd would apply them in any order); a write of a key while
 * one is in flight waits, and a newer one replaces it (only the newest
 * value matters), sent when the one in flight ends, whatever its result.
 *
 * The callback gets the result of every write sent, with the tag given
 * with it (a replaced write is never sent, and never called back); it may
 * write again (any key).  hbm_ew_cancel_all() drops everything: requests
 * cancelled, no callback.
 */
#ifndef HBMPOOLD_ETCD_WRITER_H
#define HBMPOOLD_ETCD_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "etcd_async.h"

struct hbm_ewriter;

typedef void hbm_ew_done_fn(void *arg, uint64_t tag, const struct hbm_etcd_result *r);

int hbm_ew_open(struct hbm_etcd_async *as, hbm_ew_done_fn *fn, void *arg,
		struct hbm_ewriter **out);
/* Everything cancelled and freed (not from the callback). */
void hbm_ew_free(struct hbm_ewriter *w);
void hbm_ew_cancel_all(struct hbm_ewriter *w);
/* Put key = value under lease (0: none), now or after the write in flight.  0 or -ENOMEM. */
int hbm_ew_put(struct hbm_ewriter *w, const char *key, const void *value, size_t len,
	       int64_t lease, uint64_t tag);
/* Delete key, now or after the write in flight. */
int hbm_ew_delete(struct hbm_ewriter *w, const char *key, uint64_t tag);
/* A write of key in flight or waiting. */
bool hbm_ew_busy(const struct hbm_ewriter *w, const char *key);
/* Keys with a write in flight or waiting. */
unsigned int hbm_ew_keys(const struct hbm_ewriter *w);

#endif /* HBMPOOLD_ETCD_WRITER_H */
