/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hbmpoold's configuration, /etc/hbmpool/hbmpoold.conf (INI, read with
 * inih).  Every key is documented in Documentation/hbmpoold.conf.rst.
 *
 * hbm_config_load() reads the whole file, checks every key and the keys
 * against each other, and reports every problem it finds, one per line,
 * each naming the file, the line and the key:
 *
 *   hbmpoold.conf:12: [etcd] lease_ttl: must be 2..60 (seconds), not "90"
 *   hbmpoold.conf: [node] id: required key missing
 *
 * Unknown sections and keys, a key given twice, a line too long and a line
 * that is neither "[section]" nor "key = value" are errors too.  The daemon
 * refuses to start on any error.  Nothing here touches the network; the
 * files the config names (domain key, TLS files) are checked for existence
 * and, for the domain key, its size.
 */
#ifndef HBMPOOLD_CONFIG_H
#define HBMPOOLD_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "topology.h"

#define HBM_CONF_PATH		"/etc/hbmpool/hbmpoold.conf"
#define HBM_CONF_MAX_ENDPOINTS	16
#define HBM_CONF_NAME_MAX	31	/* the kernel's domain name max-len */
#define HBM_CONF_MAX_NODES	1024	/* ids 0..1023 */
#define HBM_CONF_PCI_MAX	12	/* a PCI name, "DDDD:BB:DD.F" */

struct hbm_config {
	/* [domain] */
	char domain[HBM_CONF_NAME_MAX + 1];
	char *key_file;			/* the domain key, 16..64 bytes */
	char *etcd_prefix;		/* default "/hbmpool" */

	/* [node] */
	uint32_t node_id;		/* 0..1023 */
	char *address;			/* IPv4 or IPv6 literal */
	uint16_t port;			/* default 7070 */
	uint64_t segment_bytes;		/* page aligned, 4 KiB..1 TiB */
	struct hbm_location loc;	/* tray, rack, site: "" when not set */
	unsigned int failure_domain;	/* the kernel's u32, 0 (default): none */
	char segment_provider[8];	/* "ram" (default) or "shm" */
	/* provider shm: this node's ivshmem device, "DDDD:BB:DD.F"; "" else */
	char segment_device[HBM_CONF_PCI_MAX + 1];

	/* [shm] */
	bool shm_discover;		/* peers' devices looked for at their join, default yes */

	/* [etcd] */
	char *endpoints[HBM_CONF_MAX_ENDPOINTS];	/* "http(s)://host:port" */
	unsigned int nr_endpoints;
	char *ca_file, *cert_file, *key_file_tls;	/* NULL when not set */
	unsigned int connect_timeout_ms;	/* default 1000 */
	unsigned int request_timeout_ms;	/* default 2000 */
	unsigned int lease_ttl_s;		/* default 10, 2..60 */

	/* [health] (health.h: how a link's state is judged from them) */
	unsigned int health_interval_ms;	/* a sample of every link this often, default 1000 */
	unsigned int degraded_rtt_us;	/* RTT EWMA above: degraded, default 200000 */
	unsigned int degraded_error_pct;	/* failed requests in the window: degraded, default 5 */
	unsigned int down_error_pct;	/* ... down, default 50 */
	unsigned int error_window_ms;	/* the error rate's window, default 10000 */
	unsigned int degrade_after;	/* samples in a row before degraded, default 3 */
	unsigned int down_after;	/* samples in a row before down, default 3 */
	unsigned int recover_after;	/* good samples in a row before better, default 5 */
	unsigned int hold_ms;		/* least time in a state before a better one, default 10000 */

	/* [placement] */
	bool avoid_degraded;		/* default true */
	unsigned int full_pct;		/* a node this full takes no new chunk, default 95 */

	/* [distance]: per relation (topology.h), never decreasing */
	struct hbm_distances dist;	/* default 20, 30, 40, 80 */

	/* [drain]: chunk moves off drained nodes (drain_agent.h) */
	unsigned int drain_jobs;	/* moves at once, 0 (default): the kernel's resync-jobs */
	unsigned int drain_mbps;	/* resync-mbps to set, HBM_CONF_UNSET (default): kept */

	/* [metrics] */
	char *metrics_listen;		/* "ADDR:PORT", "[ADDR6]:PORT"; NULL: off */

	/* [control] */
	char *control_socket;		/* default /run/hbmpool/hbmpoold.sock */

	/* the line where each key was set (hbm_config_key()'s order), 0: not set */
#define HBM_CONF_MAX_KEYS	48
	unsigned int line[HBM_CONF_MAX_KEYS];
};

#define HBM_CONF_UNSET	UINT_MAX	/* an optional number not given */

/*
 * Read path into conf (zeroed first, defaults applied).  Returns 0, or
 * -EINVAL with every problem in *errors (one per line, "\n"-terminated;
 * free() it), or -errno when the file cannot be read (*errors says so) or
 * memory runs out.  On error conf holds nothing to free.
 */
int hbm_config_load(const char *path, struct hbm_config *conf, char **errors);
void hbm_config_free(struct hbm_config *conf);

/*
 * The keys the parser knows, for help texts and for the test that holds
 * the documentation to them: the i-th key's name and section, NULL past
 * the last.
 */
const char *hbm_config_key(size_t i, const char **section);

/*
 * Whether the i-th key takes a new value at run time (a reload, SIGHUP):
 * [health] (the next sample is judged with the new values), [placement]
 * (read at each decision) and [distance] (the agent sets the new
 * distances of the nodes in the kernel at once: hbmd_agent_reconfigured()).
 * The others need a restart: the node's identity ([domain], [node], its
 * location included: set in the kernel and in etcd at start), the etcd
 * client and the lease ([etcd]: a new TTL is a new lease), the sockets
 * bound at start ([metrics], [control]).
 */
bool hbm_config_key_reloadable(size_t i);

/*
 * A reload: next (loaded from path, without error) against the running
 * cur.  Each key whose value differs: a reloadable one is copied into cur
 * and named in *applied ("hbmpoold.conf:20: [health] hold_ms: 10000 ->
 * 2000", one per line); another is an error line in *errors, cur keeping
 * its value:
 *
 *   hbmpoold.conf:8: [node] port: changed (7070 -> 7071), but only a restart applies it; running value kept
 *
 * (no line number, and ", the default", when the key was removed from the
 * file).  The lines are next's, the file as it is now.  Both "\n"-terminated, malloc'ed (free() them), NULL if none.
 * Reloadable keys are checked against each other only (the [health]
 * and [distance] checks), so taking them all from next with the others from cur is a
 * valid config.  Returns how many keys were applied, or -ENOMEM (cur
 * unchanged).
 */
int hbm_config_reload(struct hbm_config *cur, const struct hbm_config *next, const char *path,
		      char **applied, char **errors);

/*
 * A size: digits with an optional K, M, G or T suffix (powers of 1024, an
 * optional trailing "iB" or "B" allowed: "16G", "16GiB").  -EINVAL if not
 * a size, -ERANGE if over 2^64 - 1.
 */
int hbm_config_parse_size(const char *s, uint64_t *out);

/*
 * A PCI device's name as sysfs spells it: "DDDD:BB:DD.F", lower-case hex
 * (domain 4 digits, bus 2, device 2 up to 1f, function 0..7).
 */
bool hbm_config_pci_name_valid(const char *s);

/*
 * A listen address: "A.B.C.D:PORT" or "[IPv6]:PORT", literals only (no
 * host name), port 0..65535 (the [metrics] listen key wants 1..65535).
 * -EINVAL if not one.
 */
int hbm_config_parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len);

#endif /* HBMPOOLD_CONFIG_H */
