/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a node is, and how far another one is from it.
 *
 * A node's location names up to three failure domains, each within the
 * next (the config's [node] tray, rack and site; the member value's
 * "location"):
 *
 *   tray   the scale-up domain: the nodes one scale-up fabric joins
 *          (NVLink, UALink, CXL: a tray, a pod)
 *   rack   the nodes one scale-out network's leaf joins
 *   site   a building or data centre: beyond it, scale-across links
 *
 * Each name is 1..31 of A-Z a-z 0-9 . _ -, or "" (not named).  A name is
 * scoped by the ones above it: two nodes are in the same tray when both
 * name the same tray and their racks and sites are the same (both named
 * alike, or both not named); in the same rack when both name the same
 * rack and their sites are the same; in the same site when both name the
 * same site.  Anything else, a node with no location included, is
 * "other": what is not known to be close is taken as far.
 *
 * The relation gives the distance the kernel places by (NUMA-like: 10 is
 * this node, HBMPOOL_DISTANCE_LOCAL; a peer 11..255, the [distance]
 * section) and the link type it reports: scale-up within a tray,
 * scale-out within a rack or a site, scale-across between two named
 * sites; between nodes of which one names no site, scale-out (nothing
 * says it is farther; it is what the daemon set before locations).
 *
 * Pure functions (membership.c): no I/O.
 */
#ifndef HBMPOOLD_TOPOLOGY_H
#define HBMPOOLD_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HBM_LOC_NAME_MAX	31

struct hbm_location {
	char site[HBM_LOC_NAME_MAX + 1];	/* "": not named */
	char rack[HBM_LOC_NAME_MAX + 1];
	char tray[HBM_LOC_NAME_MAX + 1];
};

/* Closest first. */
enum hbm_relation {
	HBM_REL_TRAY,		/* same tray: scale-up */
	HBM_REL_RACK,		/* same rack, another tray */
	HBM_REL_SITE,		/* same site, another rack */
	HBM_REL_OTHER,		/* another site, or not known */
	HBM_REL_COUNT,
};

/* The distance of each relation ([distance]), closest first: never decreasing. */
struct hbm_distances {
	unsigned int d[HBM_REL_COUNT];
};

#define HBM_DIST_TRAY_DEFAULT	20
#define HBM_DIST_RACK_DEFAULT	30
#define HBM_DIST_SITE_DEFAULT	40
#define HBM_DIST_OTHER_DEFAULT	80
#define HBM_DIST_MIN		11	/* HBMPOOL_DISTANCE_LOCAL + 1 */
#define HBM_DIST_MAX		255	/* HBMPOOL_DISTANCE_MAX */

/* enum hbmpool_nl_link_type's values (uapi/linux/hbmpool_nl.h). */
#define HBM_LINK_SCALEUP	1
#define HBM_LINK_SCALEOUT	2
#define HBM_LINK_SCALEACROSS	3

/* A location name: "" or 1..31 of A-Z a-z 0-9 . _ - */
bool hbm_location_name_valid(const char *s);
/* Whether any level is named. */
bool hbm_location_known(const struct hbm_location *l);
bool hbm_location_equal(const struct hbm_location *a, const struct hbm_location *b);
/* "site/rack/tray" with "-" for a level not named, "" when none is; 0 or -ENOSPC. */
int hbm_location_format(const struct hbm_location *l, char *buf, size_t len);

enum hbm_relation hbm_topology_relation(const struct hbm_location *self,
					const struct hbm_location *peer);
/* "tray", "rack", "site", "other". */
const char *hbm_relation_name(enum hbm_relation r);
/* The link type (HBM_LINK_*) of a relation between these two. */
int hbm_topology_link_type(const struct hbm_location *self, const struct hbm_location *peer);
/* Both: the distance from dist, the link type; returns the relation. */
enum hbm_relation hbm_topology_place(const struct hbm_location *self,
				     const struct hbm_location *peer,
				     const struct hbm_distances *dist, uint32_t *distance,
				     int *link_type);
/* "scaleup", "scaleout", "scaleacross" (as hbmctl names them), "?" else. */
const char *hbm_link_type_name(int link_type);

#endif /* HBMPOOLD_TOPOLOGY_H */
