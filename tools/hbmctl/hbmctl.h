/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hbmctl: the admin CLI of the hbmpool generic netlink family.
 *
 * main.c parses "hbmctl [-j] [-p] OBJECT COMMAND [ARGS]" and dispatches to
 * the object's table of commands (domain.c, node.c, ...); nl.c is the
 * request engine (over tools/lib/hbmnl) that turns replies into json-c
 * objects through the attribute sets of schema.c; output.c prints them as
 * JSON or as aligned tables.
 *
 * Exit status: 0 success, 1 the kernel (or the system) refused, or hbmpoold
 * did not answer (domain status), 2 a bad command line (with the usage on
 * stderr).
 */
#ifndef HBMCTL_H
#define HBMCTL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define CTL_EXIT_FAIL	1
#define CTL_EXIT_USAGE	2

/* Global options. */
struct ctl_opts {
	bool json;		/* -j */
	bool pretty;		/* -p */
};
extern struct ctl_opts ctl;

struct ctl_cmd {
	const char *name;
	/* argv[0] is the command's name; returns the exit status. */
	int (*fn)(int argc, char **argv);
};

struct ctl_obj {
	const char *name;
	const struct ctl_cmd *cmds;	/* NULL-terminated; NULL: run takes argv */
	int (*run)(int argc, char **argv);
	void (*usage)(FILE *f);
};

extern const struct ctl_obj ctl_obj_domain, ctl_obj_node, ctl_obj_link,
	ctl_obj_segment, ctl_obj_region, ctl_obj_params, ctl_obj_stats,
	ctl_obj_monitor, ctl_obj_resync;

/*
 * A bad command line for obj: "hbmctl: MESSAGE" and obj's usage (all of it
 * if obj is NULL) on stderr; returns CTL_EXIT_USAGE.
 */
int ctl_bad(const struct ctl_obj *obj, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * hbmctl domain status [--socket PATH] (daemon.c): hbmpoold's view of the
 * domain from its control socket; no netlink.
 */
int ctl_domain_status(int argc, char **argv);
/*
 * hbmctl domain drain|undrain N [--socket PATH] (daemon.c): a request on
 * hbmpoold's control socket (node N takes no new chunks, or takes them
 * again).
 */
int ctl_domain_drain(int argc, char **argv);
int ctl_domain_leave(int argc, char **argv);

/*
 * hbmctl region move REGION CHUNK [to NODE] [from NODE] [--wait]
 * (resync.c): resync-new, and with --wait resync-get until it ends.
 */
int ctl_region_move(int argc, char **argv);
/*
 * hbmctl node drain NODE [--wait] [--jobs N] (drain.c): draining on, then
 * a move of every chunk off NODE; hbmctl node undrain NODE: draining off.
 */
int ctl_node_drain(int argc, char **argv);
int ctl_node_undrain(int argc, char **argv);

void ctl_sleep_ms(unsigned int ms);

/* Argument parsers: 0 or -EINVAL / -ERANGE. */
int ctl_parse_u32(const char *s, uint32_t *v);
int ctl_parse_u64(const char *s, uint64_t *v);
/* IPv4 (4 bytes) or IPv6 (16 bytes) into addr; the length, or -EINVAL. */
int ctl_parse_addr(const char *s, uint8_t addr[16]);
/* An enum value by name (names[0..n-1]); -EINVAL if none. */
int ctl_enum_value(const char *const *names, int n, const char *s);

#endif /* HBMCTL_H */
