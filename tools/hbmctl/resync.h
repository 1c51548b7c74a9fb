/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Chunk moves (resync-new, resync-get, resync-del), shared by resync.c
 * (hbmctl resync, hbmctl region move) and drain.c (hbmctl node drain).
 * None of these prints anything: they return 0 or the kernel's -errno,
 * whose extack ctl_nl_error() can print.
 */
#ifndef HBMCTL_RESYNC_H
#define HBMCTL_RESYNC_H

#include <stdint.h>

#include <json-c/json.h>

#define CTL_NO_NODE	UINT32_MAX	/* from / to not given */

/* resync-new: move chunk of region; *job (put by the caller) is the reply. */
int ctl_resync_new(uint32_t region, uint32_t chunk, uint32_t from, uint32_t to,
		   json_object **job);
/* resync-get of one move into *job (put by the caller). */
int ctl_resync_get(uint32_t id, json_object **job);

/* A u32/u64 member of obj, or def if absent. */
int64_t ctl_json_int(json_object *obj, const char *key, int64_t def);
/* The move's state by name ("copying", "done", ...), "?" if absent. */
const char *ctl_resync_state(json_object *job);

#endif /* HBMCTL_RESYNC_H */
