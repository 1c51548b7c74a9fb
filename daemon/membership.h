/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The domain's membership as etcd holds it, as pure logic: no I/O, so that
 * it is unit-tested without etcd and can be driven by 1024 simulated nodes.
 *
 * Keys, under the config's etcd_prefix (default "/hbmpool"):
 *
 *   PREFIX/DOMAIN/members/ID   one per member, under the member's lease:
 *       {"id": 3, "addr": "10.0.0.3", "port": 7070,
 *        "segment_bytes": 17179869184, "capacity": 17179869184,
 *        "incarnation": 1234567890123,
 *        "location": {"site": "fra1", "rack": "r12", "tray": "t3"},
 *        "failure_domain": 12}
 *   PREFIX/DOMAIN/leader       the elected daemon, under its lease:
 *       {"id": 3, "incarnation": 1234567890123}
 *
 * ID is decimal 0..1023 without leading zeros and equals the value's "id";
 * addr is an IPv4 or IPv6 literal; port 1..65535; capacity (bytes free for
 * new chunks) at most segment_bytes; incarnation non-zero (the kernel draws
 * a new one per segment: a new incarnation means the old segment's data is
 * gone).  "location" (topology.h) is optional, as are each of its names
 * (only those the node's config names are there; none: no "location"): a
 * value without it, from a daemon before locations, is a member of no
 * known location.  Each name given is 1..31 of A-Z a-z 0-9 . _ -.
 * "failure_domain" (the config's [node] failure_domain, sent to the
 * kernels as the node's failure-domain) is optional too: absent, from a
 * daemon before failure domains or with none set, is 0 (none); present, it
 * is 0..4294967295.
 * Unknown fields are ignored (in "location" too), for later versions.
 *
 * The epoch is the etcd revision of the last membership change: the
 * greatest mod_revision of the member keys, raised by every put and delete
 * event applied (a delete event carries the deletion's revision).  A table
 * built from a range alone cannot see the revision of a deletion that
 * happened after the last put: see hbm_members_build().
 *
 * Every function returns 0 or a negative errno; bad data from etcd is
 * -EPROTO with a message naming the key, never a crash.
 */
#ifndef HBMPOOLD_MEMBERSHIP_H
#define HBMPOOLD_MEMBERSHIP_H

#include <stddef.h>
#include <stdint.h>

#include "etcd.h"
#include "topology.h"

#define HBM_MEMBER_MAX_ID	1023
#define HBM_ADDR_MAX		46	/* INET6_ADDRSTRLEN */

struct hbm_member {
	uint32_t id;
	char addr[HBM_ADDR_MAX];
	uint16_t port;
	uint64_t segment_bytes;
	uint64_t capacity;
	uint64_t incarnation;
	struct hbm_location loc;	/* "" where not named */
	uint32_t failure_domain;	/* 0: none */
	int64_t create_revision;	/* of its key: when it registered */
	int64_t mod_revision;
	int64_t lease;
};

struct hbm_members {
	struct hbm_member *m;		/* sorted by id, ids unique */
	size_t n;
	int64_t epoch;
	unsigned int bad;		/* entries refused (not members) */
	char *errors;			/* their messages, "\n"-terminated; NULL if none */
};

/* The keys: "PREFIX/DOMAIN/members/", ".../members/ID", "PREFIX/DOMAIN/leader". */
int hbm_members_prefix(char *buf, size_t len, const char *prefix, const char *domain);
int hbm_member_key(char *buf, size_t len, const char *prefix, const char *domain, uint32_t id);
/*
 * PREFIX/DOMAIN/incarnations/ID: the incarnation node ID last registered
 * with, decimal, under no lease.  A daemon that finds its kernel's segment
 * there but cannot take the registration's lease over knows that the lease
 * ran out while it was away: the others have fenced that segment.
 */
int hbm_incarnation_key(char *buf, size_t len, const char *prefix, const char *domain,
			uint32_t id);
int hbm_leader_key(char *buf, size_t len, const char *prefix, const char *domain);
/*
 * PREFIX/DOMAIN/drains/ID: present, node ID is draining (it takes no new
 * chunks in any node's kernel), whether it is a member or not (yet), under
 * no lease; written by the daemon that took the request
 * ({"node": ID, "by": ITS ID, "since": WALL MS}; only the key's presence
 * counts).  hbm_drain_id(): the ID of a key under the drains prefix
 * (decimal 0..1023 without leading zeros), or -EPROTO.
 */
int hbm_drains_prefix(char *buf, size_t len, const char *prefix, const char *domain);
int hbm_drain_key(char *buf, size_t len, const char *prefix, const char *domain, uint32_t id);
int hbm_drain_id(const char *drains_prefix, const char *key, uint32_t *id);

/* A member's value (JSON, malloc'ed, NUL-terminated). */
int hbm_member_encode(const struct hbm_member *m, char **json);

/*
 * One key/value under members_prefix into *m (revisions and lease from the
 * kv).  -EPROTO with the reason in err (which names the key).
 */
int hbm_member_parse(const char *members_prefix, const struct hbm_etcd_kv *kv,
		     struct hbm_member *m, char *err, size_t errlen);

/*
 * The table from a range of members_prefix.  A bad entry is left out,
 * counted in out->bad and explained in out->errors; the others make the
 * table (one node writing garbage does not take the domain down).  Two
 * entries for one id cannot come from etcd (one key per id); if they do,
 * both are refused.  The epoch is the greatest mod_revision of every kv
 * given, good or bad, so that every node computes the same.  Returns 0 or
 * -ENOMEM.  A deletion is invisible here: after a restart, apply the watch
 * from the range's header revision + 1 (hbm_members_apply()), and take the
 * domain-wide epoch from the leader (issue 9, not done yet).
 */
int hbm_members_build(const char *members_prefix, const struct hbm_etcd_kv *kvs, size_t n,
		      struct hbm_members *out);
void hbm_members_free(struct hbm_members *t);
int hbm_members_copy(const struct hbm_members *src, struct hbm_members *dst);
const struct hbm_member *hbm_members_find(const struct hbm_members *t, uint32_t id);

/*
 * One watch event on members_prefix: a put adds or replaces the member, a
 * delete removes it; the epoch rises to the event's revision.  A put of a
 * bad value removes the member too (its old value is gone from etcd) and
 * returns -EPROTO with the reason in err; the table stays consistent.
 */
int hbm_members_apply(struct hbm_members *t, const char *members_prefix,
		      const struct hbm_etcd_event *ev, char *err, size_t errlen);

enum hbm_member_ev_type {
	HBM_MEMBER_JOIN,
	HBM_MEMBER_LEAVE,
	HBM_MEMBER_CHANGE,
};

/* What changed (HBM_MEMBER_CHANGE). */
#define HBM_MCH_ADDR		(1u << 0)	/* address or port */
#define HBM_MCH_SEGMENT		(1u << 1)	/* segment_bytes */
#define HBM_MCH_CAPACITY	(1u << 2)
#define HBM_MCH_INCARNATION	(1u << 3)	/* a new segment: the old one's data is lost */
#define HBM_MCH_LOCATION	(1u << 4)	/* its tray, rack or site */
#define HBM_MCH_FAILURE_DOMAIN	(1u << 5)

struct hbm_member_event {
	enum hbm_member_ev_type type;
	uint32_t id;
	unsigned int changed;		/* HBM_MCH_*, for CHANGE */
	struct hbm_member old;		/* LEAVE, CHANGE */
	struct hbm_member new;		/* JOIN, CHANGE */
};

/*
 * The events that take table a to table b, by id.  A key written again
 * with the same value (only its revisions or lease differ) is no event.
 * *ev is malloc'ed (NULL when *n is 0).
 */
int hbm_members_diff(const struct hbm_members *a, const struct hbm_members *b,
		     struct hbm_member_event **ev, size_t *n);

/* The leader key. */
struct hbm_leader {
	uint32_t id;
	uint64_t incarnation;
	int64_t lease;
	int64_t term;			/* the key's create_revision: grows with every election */
};

/*
 * For the other values of the domain (links.c): the value as one JSON
 * object (NULL, reason in err), and a required unsigned field in
 * [min, max] (-EPROTO, reason in err).
 */
struct json_object;
struct json_object *hbm_json_object(const char *v, size_t len, char *err, size_t errlen);
int hbm_json_u64(struct json_object *o, const char *name, uint64_t min, uint64_t max,
		 uint64_t *out, char *err, size_t errlen);

int hbm_leader_encode(uint32_t id, uint64_t incarnation, char **json);
int hbm_leader_parse(const struct hbm_etcd_kv *kv, struct hbm_leader *l, char *err,
		     size_t errlen);

#endif /* HBMPOOLD_MEMBERSHIP_H */
