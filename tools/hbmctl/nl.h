/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hbmctl's netlink: one session over tools/lib/hbmnl (socket with extended
 * acks, family resolved, requests, dumps, the monitor group), replies
 * turned into JSON through schema.c, kernel refusals printed as
 * "hbmctl: <strerror>: <extack message>".
 */
#ifndef HBMCTL_NL_H
#define HBMCTL_NL_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "hbmnl.h"
#include "schema.h"

/* The session, opened on first use; NULL (and a message) if it cannot be. */
struct hbm_nl *ctl_nl(void);

/* Adds a request's attributes; 0 or -EMSGSIZE. */
typedef int ctl_build_fn(struct nl_msg *msg, void *arg);
/*
 * A reply that continues the last element of arr (a region's chunks over
 * several messages): merge it there and return true (obj is then put).
 */
typedef bool ctl_merge_fn(json_object *arr, json_object *obj);

/* region-get's merge (region.c): a region's chunks over several messages. */
bool ctl_region_merge(json_object *arr, json_object *obj);

/*
 * Send cmd (a dump if dump), with build's attributes (build may be NULL);
 * each reply is appended to arr (may be NULL) as an object of set.  A dump
 * a change interrupted is run again.  Returns the exit status: 0, or 1
 * with the refusal printed.
 */
int ctl_request(uint8_t cmd, bool dump, ctl_build_fn *build, void *barg,
		json_object *arr, ctl_merge_fn *merge);

/*
 * ctl_request() that prints nothing: 0 or the -errno (the kernel's, whose
 * extack ctl_nl_error() can still print; -ENOTCONN without a session).
 */
int ctl_request_err(uint8_t cmd, bool dump, ctl_build_fn *build, void *barg,
		    json_object *arr, ctl_merge_fn *merge);

struct ctl_obj;
struct out_col;
/*
 * OBJECT show [ID]: one object by its node id (a do with the u32 attribute
 * attr) or all of them (a dump), as a table of cols or as JSON.  Returns
 * the exit status.
 */
int ctl_show_by_id(const struct ctl_obj *obj, uint8_t cmd, int attr, int argc,
		   char **argv, const struct out_col *cols, int ncols);

/* A message's attributes as a JSON object of set. */
json_object *ctl_attrs_json(const struct ctl_set *set, struct nlattr *attrs, int len);

/* "hbmctl: <strerror>[: <extack>]" on stderr for a refusal of cmd. */
void ctl_nl_error(int err, uint8_t cmd);

#endif /* HBMCTL_NL_H */
