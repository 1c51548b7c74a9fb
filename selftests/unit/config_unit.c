// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of hbmpoold's config file parser (daemon/config.c): a full
 * file and its defaults, then one broken file per rule, each checked for
 * the exact "file:line: [section] key: ..." of its message; then the
 * shipped example must load, and it, Documentation/hbmpoold.conf.rst and
 * the man page Documentation/man/hbmpoold.conf.5 must name every key the
 * parser knows (the man page: an entry per key in its section, no entry
 * for a key the parser does not know, and an EXAMPLE that loads).  Files
 * live in a temporary directory, removed at the end.  TAP output.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "tap.h"

static char dir[64], path[128], keypath[128], shortkey[128];

static void write_file(const char *p, const char *text)
{
	FILE *f = fopen(p, "w");

	if (!f || fputs(text, f) < 0 || fclose(f)) {
		perror(p);
		exit(1);
	}
}

/* A minimal valid file: the required keys, lines 1..9. */
static const char *base(void)
{
	static char buf[512];

	snprintf(buf, sizeof(buf),
		 "[domain]\n"				/* 1 */
		 "name = pod7\n"			/* 2 */
		 "key_file = %s\n"			/* 3 */
		 "[node]\n"				/* 4 */
		 "id = 3\n"				/* 5 */
		 "address = 10.0.0.3\n"			/* 6 */
		 "segment_size = 16G\n"			/* 7 */
		 "[etcd]\n"				/* 8 */
		 "endpoints = http://127.0.0.1:2379\n",	/* 9 */
		 keypath);
	return buf;
}

/* Load text (after base() if with_base); return the error text or NULL. */
static char *load(bool with_base, const char *text, struct hbm_config *conf, int *ret)
{
	char buf[2048], *err = NULL;

	snprintf(buf, sizeof(buf), "%s%s", with_base ? base() : "", text);
	write_file(path, buf);
	*ret = hbm_config_load(path, conf, &err);
	return err;
}

/* The file with extra lines must fail with msg (after the path) in its errors. */
static void expect(bool with_base, const char *text, const char *msg, const char *what)
{
	struct hbm_config conf;
	char want[512], *err;
	int ret;

	err = load(with_base, text, &conf, &ret);
	if (!ret)
		hbm_config_free(&conf);
	snprintf(want, sizeof(want), "%s%s", path, msg);
	ok(ret == -EINVAL && err && strstr(err, want), "%s: \"%s\"%s%s", what, want,
	   err && !strstr(err, want) ? " got: " : "", err && !strstr(err, want) ? err : "");
	free(err);
}

/* The file with extra lines must load. */
static void expect_ok(bool with_base, const char *text, const char *what)
{
	struct hbm_config conf;
	char *err;
	int ret;

	err = load(with_base, text, &conf, &ret);
	ok(ret == 0 && !err, "%s%s%s", what, err ? ": " : "", err ? err : "");
	if (!ret)
		hbm_config_free(&conf);
	free(err);
}

static void test_good(void)
{
	struct hbm_config conf;
	char text[2048], *err;
	int ret;

	err = load(true, "", &conf, &ret);
	ok(ret == 0 && !err, "the required keys alone load (%d)", ret);
	if (ret)
		return;
	ok(!strcmp(conf.domain, "pod7") && conf.node_id == 3 && !strcmp(conf.address, "10.0.0.3") &&
	   conf.segment_bytes == 16ULL << 30, "domain, id, address, segment size read");
	ok(conf.nr_endpoints == 1 && !strcmp(conf.endpoints[0], "http://127.0.0.1:2379"),
	   "one endpoint");
	ok(conf.port == 7070 && conf.lease_ttl_s == 10 && conf.connect_timeout_ms == 1000 &&
	   conf.request_timeout_ms == 2000 && conf.health_interval_ms == 1000 &&
	   conf.degraded_rtt_us == 200000 && conf.degraded_error_pct == 5 &&
	   conf.down_error_pct == 50 && conf.error_window_ms == 10000 &&
	   conf.degrade_after == 3 && conf.down_after == 3 && conf.recover_after == 5 &&
	   conf.hold_ms == 10000 &&
	   conf.avoid_degraded && conf.full_pct == 95 &&
	   conf.metrics_listen && !strcmp(conf.metrics_listen, "127.0.0.1:9477") &&
	   conf.dist.d[HBM_REL_TRAY] == 20 && conf.dist.d[HBM_REL_RACK] == 30 &&
	   conf.dist.d[HBM_REL_SITE] == 40 && conf.dist.d[HBM_REL_OTHER] == 80,
	   "defaults applied");
	ok(!*conf.loc.tray && !*conf.loc.rack && !*conf.loc.site, "no location: none named");
	ok(conf.failure_domain == 0, "no failure domain: 0 (none)");
	ok(!strcmp(conf.segment_provider, "ram") && !*conf.segment_device && conf.shm_discover,
	   "segment provider ram, no device, [shm] discover yes");
	ok(!strcmp(conf.etcd_prefix, "/hbmpool") &&
	   !strcmp(conf.control_socket, "/run/hbmpool/hbmpoold.sock") && !conf.ca_file,
	   "default prefix and control socket, no TLS");
	hbm_config_free(&conf);

	snprintf(text, sizeof(text),
		 "; a comment\n# another\n\n"
		 "[domain]\nname = a-b_c.9\nkey_file = %s\netcd_prefix = /x/y\n"
		 "[node]\nid = 1023\naddress = fd00::1\nport = 7071\nsegment_size = 4096\n"
		 "tray = t-1.a_B\nrack = R12\nsite = fra.1\nfailure_domain = 4294967295\n"
		 "[etcd]\nendpoints = https://e1:2379 , https://[::1]:2380/,https://10.1.1.1:1\n"
		 "ca_file = %s\ncert_file = %s\nkey_file = %s\n"
		 "connect_timeout_ms = 100\nrequest_timeout_ms = 500\nlease_ttl = 2\n"
		 "[health]\ninterval_ms = 100\ndegraded_rtt_us = 1\ndegraded_error_pct = 1\n"
		 "down_error_pct = 100\nerror_window_ms = 100\ndegrade_after = 100\n"
		 "down_after = 1\nrecover_after = 1000\nhold_ms = 0\n"
		 "[placement]\navoid_degraded = no ; inline comment\n"
		 "full_pct = 100\n"
		 "[distance]\nsame_tray = 11\nsame_rack = 11\nsame_site = 255\nother = 255\n"
		 "[metrics]\nlisten = [::1]:65535\n[control]\nsocket = /tmp/x.sock\n",
		 keypath, keypath, keypath, keypath);
	err = load(false, text, &conf, &ret);
	ok(ret == 0, "every key, at its bounds, loads%s%s", err ? ": " : "", err ? err : "");
	if (ret) {
		free(err);
		return;
	}
	ok(conf.nr_endpoints == 3 && !strcmp(conf.endpoints[0], "https://e1:2379") &&
	   !strcmp(conf.endpoints[1], "https://[::1]:2380") &&
	   !strcmp(conf.endpoints[2], "https://10.1.1.1:1"),
	   "three endpoints, trimmed, no trailing /");
	ok(conf.node_id == 1023 && conf.port == 7071 && conf.segment_bytes == 4096 &&
	   conf.lease_ttl_s == 2 && conf.request_timeout_ms == 500 &&
	   !conf.avoid_degraded && conf.full_pct == 100 &&
	   conf.metrics_listen && !strcmp(conf.metrics_listen, "[::1]:65535") &&
	   conf.hold_ms == 0 && conf.health_interval_ms == 100 &&
	   conf.degraded_rtt_us == 1 && conf.degraded_error_pct == 1 &&
	   conf.down_error_pct == 100 && conf.error_window_ms == 100 &&
	   conf.degrade_after == 100 && conf.down_after == 1 && conf.recover_after == 1000,
	   "every value read");
	ok(conf.ca_file && conf.cert_file && conf.key_file_tls && !strcmp(conf.etcd_prefix, "/x/y") &&
	   !strcmp(conf.control_socket, "/tmp/x.sock"), "paths read");
	ok(!strcmp(conf.loc.tray, "t-1.a_B") && !strcmp(conf.loc.rack, "R12") &&
	   !strcmp(conf.loc.site, "fra.1"), "location read");
	ok(conf.failure_domain == UINT32_MAX, "failure domain read (its maximum, 2^32 - 1)");
	ok(conf.dist.d[HBM_REL_TRAY] == 11 && conf.dist.d[HBM_REL_RACK] == 11 &&
	   conf.dist.d[HBM_REL_SITE] == 255 && conf.dist.d[HBM_REL_OTHER] == 255,
	   "distances read (equal neighbours allowed)");
	hbm_config_free(&conf);
}

/* [node] segment_provider and segment_device, [shm] discover. */
static void test_shm(void)
{
	static const char *const bad_dev[] = {
		"00:11.0", "0000:00:11", "0000:00:1A.0", "0000:00:20.0", "0000:00:11.8",
		"0000:0g:11.0", "0000-00-11.0", "10000:00:11.0",
	};
	struct hbm_config conf;
	char text[128], want[256], *err;
	size_t i;
	int ret;

	err = load(true, "[node]\nsegment_provider = shm\nsegment_device = 0000:00:1f.7\n"
		   "[shm]\ndiscover = no\n", &conf, &ret);
	ok(!ret && !strcmp(conf.segment_provider, "shm") &&
	   !strcmp(conf.segment_device, "0000:00:1f.7") && !conf.shm_discover,
	   "provider shm on 0000:00:1f.7, discover no: read%s%s", err ? ": " : "", err ? err : "");
	if (!ret)
		hbm_config_free(&conf);
	free(err);
	expect_ok(true, "[node]\nsegment_provider = ram\n[shm]\ndiscover = yes\n",
		  "provider ram given, discover yes: loads");
	expect(true, "[node]\nsegment_provider = shm\n",
	       ":11: [node] segment_provider: shm needs [node] segment_device",
	       "provider shm without a device");
	expect(true, "[node]\nsegment_device = 0000:00:11.0\n",
	       ":11: [node] segment_device: set, but segment_provider is ram",
	       "a device with the default provider (ram)");
	expect(true, "[node]\nsegment_provider = ram\nsegment_device = 0000:00:11.0\n",
	       ":12: [node] segment_device: set, but segment_provider is ram",
	       "a device with provider ram");
	expect(true, "[node]\nsegment_provider = nvme\n",
	       ":11: [node] segment_provider: \"nvme\": must be ram or shm", "an unknown provider");
	expect(true, "[node]\nsegment_provider = SHM\nsegment_device = 0000:00:11.0\n",
	       ":11: [node] segment_provider: \"SHM\": must be ram or shm",
	       "a provider in capitals");
	for (i = 0; i < sizeof(bad_dev) / sizeof(bad_dev[0]); i++) {
		snprintf(text, sizeof(text), "[node]\nsegment_provider = shm\nsegment_device = %s\n",
			 bad_dev[i]);
		snprintf(want, sizeof(want),
			 ":12: [node] segment_device: \"%s\": must be a PCI device's name", bad_dev[i]);
		expect(true, text, want, "a malformed device name");
	}
	expect(true, "[shm]\ndiscover = maybe\n", ":11: [shm] discover: \"maybe\": must be yes or no",
	       "discover neither yes nor no");
	expect(true, "[shm]\ndevice = 0000:00:11.0\n", ":11: [shm] device: unknown key",
	       "an unknown key of [shm]");
}

/* [node] failure_domain: the kernel's u32, 0 none. */
static void test_failure_domain(void)
{
	struct hbm_config conf;
	char *err;
	int ret;

	expect(true, "[node]\nfailure_domain = 4294967296\n",
	       ":11: [node] failure_domain: must be 0..4294967295 (0: none), not \"4294967296\"",
	       "a failure domain over 2^32 - 1");
	expect(true, "[node]\nfailure_domain = -1\n",
	       ":11: [node] failure_domain: must be 0..4294967295 (0: none), not \"-1\"",
	       "a negative failure domain");
	expect(true, "[node]\nfailure_domain = rack1\n",
	       ":11: [node] failure_domain: must be 0..4294967295 (0: none), not \"rack1\"",
	       "a failure domain by name (a number is wanted)");
	expect(true, "[node]\nfailure_domain =\n", ":11: [node] failure_domain: empty value",
	       "an empty failure domain");
	expect(true, "[node]\nfailure_domain = 1\nfailure_domain = 2\n",
	       ":12: [node] failure_domain: given twice (first on line 11)",
	       "a failure domain twice");
	err = load(true, "[node]\nfailure_domain = 12\n", &conf, &ret);
	ok(!ret && !err && conf.failure_domain == 12, "failure_domain = 12: read%s%s",
	   err ? ": " : "", err ? err : "");
	if (!ret)
		hbm_config_free(&conf);
	free(err);
	expect_ok(true, "[node]\nfailure_domain = 0\n", "failure_domain = 0 (none): loads");
}

static void test_topology(void)
{
	expect(true, "[node]\ntray = a/b\n",
	       ":11: [node] tray: \"a/b\": must be 1..31 of A-Z a-z 0-9 . _ -", "a tray with a /");
	expect(true, "[node]\nrack = r 1\n", ":11: [node] rack: \"r 1\": must be", "a rack with a space");
	expect(true, "[node]\nsite = 0123456789012345678901234567890123\n",
	       ":11: [node] site: \"0123456789012345678901234567890123\": must be", "a site too long");
	expect(true, "[node]\nsite =\n", ":11: [node] site: empty value", "an empty site");
	expect(true, "[node]\ntray = a\ntray = b\n", ":12: [node] tray: given twice (first on line 11)",
	       "a tray twice");
	expect(true, "[distance]\nsame_tray = 10\n", ":11: [distance] same_tray: must be 11..255, not \"10\"",
	       "distance 10 is this node's");
	expect(true, "[distance]\nother = 256\n", ":11: [distance] other: must be 11..255, not \"256\"",
	       "distance over 255");
	expect(true, "[distance]\nsame_rack = 15\n",
	       ":11: [distance] same_rack: same_rack (15) is less than same_tray (20): a closer relation must never be farther",
	       "same_rack under the default same_tray: named");
	expect(true, "[distance]\nsame_tray = 50\n",
	       ":11: [distance] same_tray: same_rack (30) is less than same_tray (50)",
	       "same_tray over the default same_rack: same_tray named (same_rack not set)");
	expect(true, "[distance]\nsame_rack = 20\nsame_site = 25\nother = 24\n",
	       ":13: [distance] other: other (24) is less than same_site (25)",
	       "other under same_site: other named");
	expect(true, "[distance]\nsame_site = 90\n",
	       ":11: [distance] same_site: other (80) is less than same_site (90)",
	       "same_site over the default other");
	expect_ok(true, "[distance]\nsame_tray = 40\nsame_rack = 40\nsame_site = 40\nother = 40\n",
		  "every distance equal: loads");
	expect_ok(true, "[node]\ntray = t1\n", "a tray alone (no rack, no site): loads");
}

static void test_sizes(void)
{
	uint64_t v;

	ok(!hbm_config_parse_size("0", &v) && v == 0, "size 0");
	ok(!hbm_config_parse_size("4K", &v) && v == 4096, "4K");
	ok(!hbm_config_parse_size("2MiB", &v) && v == 2 << 20, "2MiB");
	ok(!hbm_config_parse_size("3g", &v) && v == 3ULL << 30, "3g");
	ok(!hbm_config_parse_size("1T", &v) && v == 1ULL << 40, "1T");
	ok(!hbm_config_parse_size("100B", &v) && v == 100, "100B");
	ok(!hbm_config_parse_size("16777215T", &v) && v == 16777215ULL << 40, "16777215T fits");
	ok(hbm_config_parse_size("16777216T", &v) == -ERANGE, "16777216T overflows");
	ok(hbm_config_parse_size("99999999999999999999", &v) == -ERANGE, "20 digits overflow");
	ok(hbm_config_parse_size("-1", &v) == -EINVAL && hbm_config_parse_size("", &v) == -EINVAL &&
	   hbm_config_parse_size("1P", &v) == -EINVAL && hbm_config_parse_size("1 G", &v) == -EINVAL &&
	   hbm_config_parse_size("G", &v) == -EINVAL && hbm_config_parse_size("1Gi", &v) == -EINVAL,
	   "-1, empty, 1P, \"1 G\", G, 1Gi refused");
}

static void test_errors(void)
{
	static const char *const bad_listen[] = {
		"9477", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:65536", "localhost:9477",
		"::1:9477", "[::1]", "[::1]9477", "[127.0.0.1]:9477", "1.2.3.4:-1",
		"1.2.3.4: 80", "on",
	};
	static const char *const off_listen[] = { "", " off" };
	static const char *const good_listen[] = { "0.0.0.0:1", "[::]:9477", "10.0.0.1:9100" };
	char text[600], longline[400], want[160];
	struct sockaddr_storage ss;
	struct hbm_config conf;
	socklen_t sl;
	size_t i;
	char *err;
	int ret;

	expect(true, "lease_ttl = 90\n", ":10: [etcd] lease_ttl: must be 2..60 seconds, not \"90\"",
	       "ttl out of range");
	expect(true, "lease_ttl = 1\n", ":10: [etcd] lease_ttl: must be 2..60", "ttl 1");
	expect(true, "lease_ttl = 0x10\n", ":10: [etcd] lease_ttl: must be 2..60", "ttl in hex");
	expect(true, "lease_ttl = -5\n", ":10: [etcd] lease_ttl: must be 2..60", "negative ttl");
	expect(true, "lease_ttl = 99999999999999999999999\n", ":10: [etcd] lease_ttl: must be",
	       "huge ttl");
	expect(true, "request_timeout_ms = 2000\nlease_ttl = 5\n",
	       ":11: [etcd] lease_ttl: lease_ttl (5 s) must be over 3 x request_timeout_ms",
	       "a ttl that leaves no room for keepalives");
	expect(true, "frobnicate = 1\n", ":10: [etcd] frobnicate: unknown key", "unknown key");
	expect(true, "[bogus]\nx = 1\n", ":10: [bogus]: unknown section", "unknown section");
	expect(true, "[bogus]\n", ":10: [bogus]: unknown section", "empty unknown section");
	expect(true, "endpoints = http://x:1\n",
	       ":10: [etcd] endpoints: given twice (first on line 9)", "duplicate key");
	expect(true, "this is not ini\n", ":10: neither \"[section]\" nor \"key = value\"",
	       "a line of garbage");
	expect(true, "[node\n", ":10: neither", "an unclosed section");
	{
		struct hbm_config conf;
		char *err;
		int ret;

		err = load(true, "garbage one\n; fine\ngarbage two\n", &conf, &ret);
		ok(ret == -EINVAL && err && strstr(err, ":10: neither") && strstr(err, ":12: neither") &&
		   !strstr(err, ":11:"), "two bad lines: both reported");
		free(err);
	}
	expect_ok(true, "  lease_ttl = 20\n\tconnect_timeout_ms = 500\n",
		  "indented keys are keys, not continuations of the previous value");
	expect(true, "lease_ttl =\n", ":10: [etcd] lease_ttl: empty value", "a key without a value");
	memset(longline, 'a', sizeof(longline) - 2);
	longline[sizeof(longline) - 2] = '\n';
	longline[sizeof(longline) - 1] = '\0';
	memcpy(longline, "ca_file = /", 11);
	expect(true, longline, ":10: line longer than 197 characters", "a line too long for inih");

	expect(false, "[domain]\nname = pod7\n", ": [domain] key_file: required key missing",
	       "key_file missing");
	expect(false, "[domain]\nname = pod7\n", ": [node] id: required key missing", "id missing");
	expect(false, "", ": [etcd] endpoints: required key missing", "empty file: endpoints missing");

	expect(true, "[node]\nport = 0\n", ":11: [node] port: must be 1..65535, not \"0\"", "port 0");
	expect(true, "[node]\nport = 65536\n", ":11: [node] port: must be 1..65535", "port 65536");
	expect(true, "[domain]\netcd_prefix = hbm\n", ":11: [domain] etcd_prefix: \"hbm\": must start",
	       "relative prefix");
	expect(true, "[domain]\netcd_prefix = /hbm/\n", ":11: [domain] etcd_prefix:",
	       "prefix ending in /");
	expect(true, "[control]\nsocket = run/x\n",
	       ":11: [control] socket: \"run/x\": must be an absolute path", "relative socket path");
	expect(true, "[placement]\npolicy = bind\n",
	       ":11: [placement] policy: unknown key",
	       "policy is no key (regions carry their own policy)");
	expect(true, "[placement]\navoid_degraded = maybe\n",
	       ":11: [placement] avoid_degraded: \"maybe\": must be yes or no", "bad boolean");
	expect(true, "[placement]\nfull_pct = 0\n", ":11: [placement] full_pct: must be 1..100 %",
	       "full_pct 0");
	expect(true, "[health]\ndown_error_pct = 20\ndegraded_error_pct = 20\n",
	       ":11: [health] down_error_pct: down_error_pct (20) must be over degraded_error_pct (20)",
	       "down error rate not over degraded");
	expect(true, "[health]\ndegraded_error_pct = 60\n",
	       ":11: [health] degraded_error_pct: down_error_pct (50) must be over degraded_error_pct (60)",
	       "degraded error rate over the default down");
	expect(true, "[health]\nerror_window_ms = 500\n",
	       ":11: [health] error_window_ms: error_window_ms (500) must be at least interval_ms (1000)",
	       "error window under the interval");
	expect(true, "[health]\ndegrade_after = 0\n",
	       ":11: [health] degrade_after: must be 1..100 samples, not \"0\"", "degrade_after 0");
	expect(true, "[health]\ndegraded_rtt_us = 60000001\n",
	       ":11: [health] degraded_rtt_us: must be 1..60000000 us", "degraded_rtt_us too large");
	for (i = 0; i < sizeof(bad_listen) / sizeof(bad_listen[0]); i++) {
		snprintf(text, sizeof(text), "[metrics]\nlisten = %s\n", bad_listen[i]);
		snprintf(want, sizeof(want), ":11: [metrics] listen: \"%s\": must be ADDR:PORT",
			 bad_listen[i]);
		expect(true, text, want, "a bad metrics listen address");
	}
	for (i = 0; i < sizeof(off_listen) / sizeof(off_listen[0]); i++) {
		snprintf(text, sizeof(text), "[metrics]\nlisten =%s\n", off_listen[i]);
		err = load(true, text, &conf, &ret);
		ok(ret == 0 && !conf.metrics_listen, "metrics listen \"%s\": off (%d)",
		   off_listen[i], ret);
		free(err);
		if (!ret)
			hbm_config_free(&conf);
	}
	for (i = 0; i < sizeof(good_listen) / sizeof(good_listen[0]); i++) {
		snprintf(text, sizeof(text), "[metrics]\nlisten = %s\n", good_listen[i]);
		err = load(true, text, &conf, &ret);
		ok(ret == 0 && conf.metrics_listen && !strcmp(conf.metrics_listen, good_listen[i]),
		   "metrics listen \"%s\" loads (%d)", good_listen[i], ret);
		free(err);
		if (!ret)
			hbm_config_free(&conf);
	}
	ok(!hbm_config_parse_listen("[fe80::1]:0", &ss, &sl) && ss.ss_family == AF_INET6 &&
	   sl == sizeof(struct sockaddr_in6) &&
	   !hbm_config_parse_listen("10.1.2.3:80", &ss, &sl) && ss.ss_family == AF_INET &&
	   ntohs(((struct sockaddr_in *)&ss)->sin_port) == 80 &&
	   hbm_config_parse_listen("localhost:80", &ss, &sl) == -EINVAL,
	   "hbm_config_parse_listen: IPv6, IPv4 and its port; no host names");
	expect_ok(true, "[etcd]\nlease_ttl = 60\n", "a section may appear twice");

	/* The base lines changed, one at a time. */
	snprintf(text, sizeof(text),
		 "[domain]\nname = pod/7\nkey_file = %s\n[node]\nid = 1024\naddress = node3\n"
		 "segment_size = 1000\n[etcd]\nendpoints = 127.0.0.1:2379\n", keypath);
	err = load(false, text, &conf, &ret);
	ok(ret == -EINVAL && err && strstr(err, ":2: [domain] name: \"pod/7\": must be 1..31 of") &&
	   strstr(err, ":5: [node] id: must be 0..1023, not \"1024\"") &&
	   strstr(err, ":6: [node] address: \"node3\": must be an IPv4 or IPv6 address") &&
	   strstr(err, ":7: [node] segment_size: \"1000\": must be a multiple of 4K") &&
	   strstr(err, ":9: [etcd] endpoints: \"127.0.0.1:2379\": must start with http"),
	   "five bad values, five messages in one run");
	free(err);

	expect_ok(true, "[domain]\n", "an empty known section is fine");
	expect(true, "[node]\nsegment_size = 2T\n", ":11: [node] segment_size: given twice",
	       "segment size twice");

	snprintf(text, sizeof(text), "%s", base());
	*strstr(text, "name = pod7") = 'x';	/* "xame = pod7" */
	err = NULL;
	write_file(path, text);
	ret = hbm_config_load(path, &conf, &err);
	ok(ret == -EINVAL && err && strstr(err, ":2: [domain] xame: unknown key") &&
	   strstr(err, ": [domain] name: required key missing"), "a misspelt key: unknown and missing");
	free(err);

	expect(true, "endpoints2 = http://a:1\n", ":10: [etcd] endpoints2: unknown key",
	       "unknown etcd key");
	expect(true, "[node]\nsegment_size = 5T\n", ":11: [node] segment_size: given twice", "5T");
}

static void test_endpoints(void)
{
	static const struct {
		const char *ep, *msg;
	} bad[] = {
		{ "ftp://a:1", "must start with http:// or https://" },
		{ "http://a", "needs a port" },
		{ "http://:1", "needs a host" },
		{ "http://a:0", "port must be 1..65535" },
		{ "http://a:65536", "port must be 1..65535" },
		{ "http://a:x", "port must be 1..65535" },
		{ "http://a:1/v3", "nothing may follow host:port" },
		{ "http://[::1:1", "an IPv6 address needs its closing ']'" },
		{ "http://[zz]:1", "bad IPv6 address" },
		{ "http://[::1]", "needs a port" },
		{ "http://a b:1", "bad character in host" },
	};
	/* The base file with its endpoints line (line 9) replaced. */
	const char *b = base();
	int cut = strstr(b, "endpoints = ") - b;
	char text[900], msg[200];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "%.*sendpoints = %s\n", cut, b, bad[i].ep);
		snprintf(msg, sizeof(msg), ":9: [etcd] endpoints: \"%s\": %s", bad[i].ep, bad[i].msg);
		expect(false, text, msg, bad[i].ep);
	}
	snprintf(text, sizeof(text), "%.*sendpoints = http://a:1,,http://b:2\n", cut, b);
	expect(false, text, ":9: [etcd] endpoints: empty endpoint in the list", "an empty endpoint");
	snprintf(text, sizeof(text), "%.*sendpoints = http://a:1,https://b:2\n", cut, b);
	expect(false, text, ":9: [etcd] endpoints: mixes http:// and https://", "http and https");
	snprintf(text, sizeof(text), "%.*sendpoints = %s\n", cut, b,
		 "http://a:1,http://a:1,http://a:1,http://a:1,http://a:1,http://a:1,http://a:1,"
		 "http://a:1,http://a:1,http://a:1,http://a:1,http://a:1,http://a:1,http://a:1,"
		 "http://a:1,http://a:1,http://a:1");
	expect(false, text, ":9: [etcd] endpoints: more than 16 endpoints", "17 endpoints");
}

static void test_files(void)
{
	char text[600];

	snprintf(text, sizeof(text), "ca_file = %s/nonexistent\n", dir);
	expect(true, text, ":10: [etcd] ca_file: set, but the endpoints are http://",
	       "TLS file with http endpoints");
	snprintf(text, sizeof(text), "%s", base());
	{
		char *p = strstr(text, "http://");
		char t2[800];

		memmove(p + 1, p, strlen(p) + 1);
		memcpy(p, "https", 5);
		snprintf(t2, sizeof(t2), "%scert_file = %s\n", text, keypath);
		expect(false, t2, ":10: [etcd] cert_file: needs [etcd] key_file too",
		       "a client certificate without its key");
		snprintf(t2, sizeof(t2), "%sca_file = %s/nonexistent\n", text, dir);
		snprintf(text, sizeof(text), ":10: [etcd] ca_file: %s/nonexistent: No such file", dir);
		expect(false, t2, text, "a CA file that does not exist");
	}
	snprintf(text, sizeof(text), "[domain]\nkey_file = %s\n", shortkey);
	expect(true, text, ":11: [domain] key_file: given twice", "key file twice");
	{
		char t2[900], msg[300];
		const char *b = base();
		const char *k = strstr(b, "key_file = ");
		const char *eol = strchr(k, '\n');

		snprintf(t2, sizeof(t2), "%.*skey_file = %s%s", (int)(k - b), b, shortkey, eol);
		snprintf(msg, sizeof(msg), ":3: [domain] key_file: %s: must be a file of 16 to 64 "
			 "bytes (it has 8)", shortkey);
		expect(false, t2, msg, "a domain key of 8 bytes");
		snprintf(t2, sizeof(t2), "%.*skey_file = %s/none%s", (int)(k - b), b, dir, eol);
		snprintf(msg, sizeof(msg), ":3: [domain] key_file: %s/none: No such file", dir);
		expect(false, t2, msg, "a domain key file that does not exist");
	}
	{
		struct hbm_config conf;
		char *err = NULL;
		int ret;

		ret = hbm_config_load("/nonexistent/hbmpoold.conf", &conf, &err);
		ok(ret == -ENOENT && err &&
		   !strcmp(err, "/nonexistent/hbmpoold.conf: No such file or directory\n"),
		   "a missing file: -ENOENT, named");
		free(err);
	}
}

static char *slurp(const char *p)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = fopen(p, "r");

	if (f) {
		buf = calloc(1, 65536);
		n = buf ? fread(buf, 1, 65535, f) : 0;
		fclose(f);
	}
	if (buf && !n) {
		free(buf);
		buf = NULL;
	}
	return buf;
}

/*
 * The text between the header hdr_fmt (with the section's name) and the
 * next line starting with end; from the header's last character on if
 * keep_nl (its '\n', for a first entry that must follow one).
 */
static const char *block_of(const char *text, const char *hdr_fmt, const char *section,
			    const char *end, bool keep_nl, size_t *len)
{
	char hdr[40];
	const char *s, *e;

	snprintf(hdr, sizeof(hdr), hdr_fmt, section);
	s = strstr(text, hdr);
	if (!s)
		return NULL;
	s += strlen(hdr) - keep_nl;
	e = strstr(s + keep_nl, end);
	*len = e ? (size_t)(e - s) : strlen(s);
	return s;
}

/*
 * The text of [section] in text: from its header line to the next header
 * (a line starting with '[' in the example, a "[...]" title in the rst).
 */
static const char *section_of(const char *text, const char *section, size_t *len)
{
	return block_of(text, "\n[%s]\n", section, "\n[", false, len);
}

static bool has(const char *s, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	for (; len >= n; s++, len--)
		if (!memcmp(s, needle, n))
			return true;
	return false;
}

/*
 * The man page's subsection ".SS [section]": from its header to the next
 * ".SS" or ".SH".
 */
static const char *man_section_of(const char *man, const char *section, size_t *len)
{
	return block_of(man, "\n.SS [%s]\n", section, "\n.S", true, len);
}

/*
 * The key of the man page entry at p (just past a "\n.TP\n.B"): the word
 * after ".B " or ".BR ", copied to name; NULL if there is none, else the
 * end of the word, which must end the line or be followed by a space.
 */
static const char *man_entry(const char *p, char *name, size_t size)
{
	size_t n;

	if (*p == 'R')
		p++;
	if (*p++ != ' ')
		return NULL;
	n = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_");
	if (!n || n >= size || (p[n] != '\n' && p[n] != ' '))
		return NULL;
	memcpy(name, p, n);
	name[n] = '\0';
	return p + n;
}

/* Whether the man page text s (len bytes) has an entry for key name. */
static bool man_has_key(const char *s, size_t len, const char *name)
{
	static const char tag[] = "\n.TP\n.B";
	const char *end = s + len, *p;
	char word[64];

	for (p = s; (p = memmem(p, end - p, tag, strlen(tag))); p++)
		if (man_entry(p + strlen(tag), word, sizeof(word)) && !strcmp(word, name))
			return true;
	return false;
}

static bool key_known(const char *section, const char *name)
{
	const char *k, *sec;
	size_t i;

	for (i = 0; (k = hbm_config_key(i, &sec)); i++)
		if (!strcmp(sec, section) && !strcmp(k, name))
			return true;
	return false;
}

/*
 * Every ".SS [section]" of the man page is a section the parser knows, and
 * every entry in it a key of that section: nothing stale.
 */
static bool man_all_known(const char *man)
{
	static const char tag[] = "\n.TP\n.B";
	const char *p, *e, *q, *end;
	char section[32], word[64];
	bool good = true;
	size_t n;

	for (p = man; (p = strstr(p, "\n.SS [")); p = e) {
		p += strlen("\n.SS [");
		n = strcspn(p, "]\n");
		e = strstr(p, "\n.S");
		end = e ? e : p + strlen(p);
		if (!e)
			e = end;
		if (p[n] != ']' || p[n + 1] != '\n' || n >= sizeof(section)) {
			printf("# man page: bad section header \".SS [%.*s\"\n", (int)n, p);
			good = false;
			continue;
		}
		memcpy(section, p, n);
		section[n] = '\0';
		for (q = p; (q = memmem(q, end - q, tag, strlen(tag))); q++) {
			if (!man_entry(q + strlen(tag), word, sizeof(word))) {
				printf("# man page: [%s] has an entry that is not a key\n", section);
				good = false;
			} else if (!key_known(section, word)) {
				printf("# man page: [%s] %s is not a key the parser knows\n", section,
				       word);
				good = false;
			}
		}
	}
	return good;
}

/*
 * The man page's EXAMPLE (between its .EX and .EE), as a file: roff's
 * "\-" and "\e" undone; NULL if there is none or it holds another escape.
 */
static char *man_example(const char *man)
{
	const char *s = strstr(man, "\n.SH EXAMPLE\n"), *e;
	char *text, *d;

	s = s ? strstr(s, "\n.EX\n") : NULL;
	e = s ? strstr(s, "\n.EE\n") : NULL;
	if (!e)
		return NULL;
	s += strlen("\n.EX\n");
	text = malloc(e - s + 2);
	if (!text)
		return NULL;
	for (d = text; s <= e; s++) {
		if (*s == '\\') {
			s++;
			if (*s == '-')
				*d++ = '-';
			else if (*s == 'e')
				*d++ = '\\';
			else
				goto bad;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
	return text;
bad:
	free(text);
	return NULL;
}

/* text with its "key_file = /etc/hbmpool/domain.key" pointed at the test's key. */
static char *with_test_key(const char *text)
{
	static const char etc_key[] = "/etc/hbmpool/domain.key";
	const char *p = strstr(text, "\nkey_file = /etc/hbmpool/domain.key\n");
	char *out;

	if (!p)
		return NULL;
	p += strlen("\nkey_file = ");
	out = malloc(strlen(text) + strlen(keypath) + 1);
	if (out)
		sprintf(out, "%.*s%s%s", (int)(p - text), text, keypath, p + strlen(etc_key));
	return out;
}

/* The man page's example loads: the file it shows is a valid one. */
static void test_man_example(const char *man)
{
	char *ex = man_example(man), *text, *err = NULL;
	struct hbm_config conf;
	int ret;

	text = ex ? with_test_key(ex) : NULL;
	free(ex);
	if (!text) {
		ok(0, "the man page has an EXAMPLE (.EX/.EE) with key_file = /etc/hbmpool/domain.key");
		return;
	}
	write_file(path, text);
	free(text);
	ret = hbm_config_load(path, &conf, &err);
	ok(!ret, "the man page's example loads%s%s", err ? ": " : "", err ? err : "");
	if (!ret)
		hbm_config_free(&conf);
	free(err);
}

/*
 * The shipped example loads, and it, the reference and the man page name
 * every key.
 */
static void test_docs(void)
{
	char *ex = slurp(HBM_TOP "/daemon/hbmpoold.conf.example");
	char *rst = slurp(HBM_TOP "/Documentation/hbmpoold.conf.rst");
	char *man = slurp(HBM_TOP "/Documentation/man/hbmpoold.conf.5");
	const char *name, *section, *sec;
	char needle[64], *text, *err = NULL;
	struct hbm_config conf;
	int in_ex = 1, in_rst = 1, in_man = 1, ret;
	size_t i, len;

	ok(ex && rst && man, "daemon/hbmpoold.conf.example, Documentation/hbmpoold.conf.rst "
	   "and Documentation/man/hbmpoold.conf.5 read");
	if (!ex || !rst || !man)
		goto out;
	for (i = 0; (name = hbm_config_key(i, &section)); i++) {
		sec = section_of(ex, section, &len);
		snprintf(needle, sizeof(needle), "\n%s = ", name);
		if (!sec || !has(sec - 1, len + 1, needle)) {
			snprintf(needle, sizeof(needle), "\n;%s = ", name);
			if (!sec || !has(sec - 1, len + 1, needle)) {
				printf("# [%s] %s is not in the example\n", section, name);
				in_ex = 0;
			}
		}
		sec = section_of(rst, section, &len);
		snprintf(needle, sizeof(needle), "``%s``", name);
		if (!sec || !has(sec, len, needle)) {
			printf("# [%s] %s is not in the reference\n", section, name);
			in_rst = 0;
		}
		sec = man_section_of(man, section, &len);
		if (!sec || !man_has_key(sec, len, name)) {
			printf("# [%s] %s has no entry (.TP, .B %s) in the man page\n", section,
			       name, name);
			in_man = 0;
		}
	}
	ok(in_ex, "every key is in the example, in its section");
	ok(in_rst, "every key is in Documentation/hbmpoold.conf.rst, in its section");
	ok(in_man, "every key has an entry in Documentation/man/hbmpoold.conf.5, in its section");
	ok(man_all_known(man), "the man page's sections and entries are all known to the parser");
	test_man_example(man);

	/* The example, with the test's key file for /etc/hbmpool/domain.key. */
	text = with_test_key(ex);
	if (!text) {
		ok(0, "the example names /etc/hbmpool/domain.key");
		goto out;
	}
	write_file(path, text);
	free(text);
	ret = hbm_config_load(path, &conf, &err);
	ok(!ret, "the example loads%s%s", err ? ": " : "", err ? err : "");
	if (!ret) {
		ok(conf.node_id == 1 && conf.nr_endpoints == 3 && conf.segment_bytes == 16ULL << 30,
		   "the example: node 1, three endpoints, 16G");
		hbm_config_free(&conf);
	}
	free(err);
out:
	free(ex);
	free(rst);
	free(man);
}

/*
 * A reload (hbm_config_reload()): the running config against the file as
 * it is now.  [health] and [placement] changes are applied; a change of
 * another key is an error naming file, line and key, the running value
 * kept; a key removed from the file is named without a line; nothing
 * changed: nothing applied, no error.
 */
static void test_reload(void)
{
	struct hbm_config cur, next;
	char *err, *applied, *errors, want[512];
	const char *sec, *name, *p;
	unsigned int lines;
	size_t i;
	int ret, n;

	/* the running config: base() and lines 10..13 */
	err = load(true, "[node]\nport = 7071\n[health]\nhold_ms = 5000\n", &cur, &ret);
	free(err);
	if (ret) {
		ok(0, "the running config loads");
		return;
	}
	ok(cur.line[0] == 2 && cur.port == 7071 && cur.hold_ms == 5000,
	   "the line of each key is kept ([domain] name: %u)", cur.line[0]);

	/* the same file again: nothing */
	err = load(true, "[node]\nport = 7071\n[health]\nhold_ms = 5000\n", &next, &ret);
	free(err);
	n = ret ? -1 : hbm_config_reload(&cur, &next, path, &applied, &errors);
	ok(n == 0 && !applied && !errors, "the same file: nothing applied, no error (%d)", n);
	if (!ret)
		hbm_config_free(&next);

	/*
	 * Now: the segment size changed (line 7), the port removed (back to
	 * its default), hold_ms (11), degrade_after (12) and full_pct (14)
	 * changed.
	 */
	snprintf(want, sizeof(want),
		 "[domain]\nname = pod7\nkey_file = %s\n[node]\nid = 3\naddress = 10.0.0.3\n"
		 "segment_size = 32G\n[etcd]\nendpoints = http://127.0.0.1:2379\n"
		 "[health]\nhold_ms = 2000\ndegrade_after = 4\n[placement]\nfull_pct = 80\n",
		 keypath);
	err = load(false, want, &next, &ret);
	free(err);
	if (ret) {
		ok(0, "the new file loads");
		hbm_config_free(&cur);
		return;
	}
	n = hbm_config_reload(&cur, &next, path, &applied, &errors);
	snprintf(want, sizeof(want),
		 "%s:12: [health] degrade_after: 3 -> 4\n%s:11: [health] hold_ms: 5000 -> 2000\n"
		 "%s:14: [placement] full_pct: 95 -> 80\n", path, path, path);
	ok(n == 3 && applied && !strcmp(applied, want),
	   "[health] and [placement] changes applied (%d), each named with its line and both values (in the keys' order)",
	   n);
	if (applied && strcmp(applied, want))
		printf("# applied:\n%s", applied);
	ok(cur.hold_ms == 2000 && cur.degrade_after == 4 && cur.full_pct == 80,
	   "the running config has the new [health] and [placement] values");
	snprintf(want, sizeof(want),
		 "%s:7: [node] segment_size: changed (17179869184 -> 34359738368), but only a restart applies it; running value kept\n",
		 path);
	ok(errors && strstr(errors, want), "a changed segment size: an error naming file, line and key");
	snprintf(want, sizeof(want),
		 "%s: [node] port: changed (7071 -> 7070, the default), but only a restart applies it; running value kept\n",
		 path);
	ok(errors && strstr(errors, want), "a key removed from the file: named, without a line");
	for (p = errors, lines = 0; p && (p = strchr(p, '\n')); p++)
		lines++;
	ok(lines == 2 && cur.segment_bytes == 16ULL << 30 && cur.port == 7071,
	   "two errors, and the running values of those keys kept");
	if (errors && lines != 2)
		printf("# errors:\n%s", errors);
	free(applied);
	free(errors);
	hbm_config_free(&next);

	/* back to the first file: an [etcd] change is refused too, [health] follows */
	snprintf(want, sizeof(want), "lease_ttl = 20\n[health]\nhold_ms = 5000\n");
	err = load(true, want, &next, &ret);
	free(err);
	n = ret ? -1 : hbm_config_reload(&cur, &next, path, &applied, &errors);
	ok(n == 3 && cur.hold_ms == 5000 && cur.degrade_after == 3 &&
	   cur.full_pct == 95 && cur.lease_ttl_s == 10 && errors &&
	   strstr(errors, ":10: [etcd] lease_ttl: changed (10 -> 20)"),
	   "[etcd] lease_ttl refused, [health] and [placement] back (%d)", n);
	free(applied);
	free(errors);
	if (!ret)
		hbm_config_free(&next);
	hbm_config_free(&cur);

	/* the location is identity: refused; [distance] follows */
	err = load(true, "[node]\nrack = r1\n", &cur, &ret);
	free(err);
	if (ret) {
		ok(0, "a config with a rack loads");
		return;
	}
	err = load(true, "[node]\nrack = r2\ntray = t1\n[distance]\nsame_tray = 15\nother = 90\n",
		   &next, &ret);
	free(err);
	n = ret ? -1 : hbm_config_reload(&cur, &next, path, &applied, &errors);
	ok(n == 2 && cur.dist.d[HBM_REL_TRAY] == 15 && cur.dist.d[HBM_REL_OTHER] == 90 &&
	   cur.dist.d[HBM_REL_RACK] == 30 && !strcmp(cur.loc.rack, "r1") && !*cur.loc.tray &&
	   applied && strstr(applied, ":14: [distance] same_tray: 20 -> 15\n") &&
	   strstr(applied, ":15: [distance] other: 80 -> 90\n") && errors &&
	   strstr(errors, ":11: [node] rack: changed (r1 -> r2), but only a restart applies it") &&
	   strstr(errors, ":12: [node] tray: changed ((none) -> t1), but only a restart applies it"),
	   "[node] rack and tray refused (identity), [distance] applied (%d)", n);
	if (errors && n != 2)
		printf("# errors:\n%s", errors);
	free(applied);
	free(errors);
	if (!ret)
		hbm_config_free(&next);
	hbm_config_free(&cur);

	/* which keys a reload takes */
	for (i = 0, ret = 1; (name = hbm_config_key(i, &sec)); i++)
		if (hbm_config_key_reloadable(i) !=
		    (!strcmp(sec, "health") || !strcmp(sec, "placement") ||
		     !strcmp(sec, "distance"))) {
			printf("# [%s] %s\n", sec, name);
			ret = 0;
		}
	ok(ret, "reloadable: every [health], [placement] and [distance] key, no other");
}

int main(void)
{
	char cmd[200];

	snprintf(dir, sizeof(dir), "/tmp/config_unit.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/hbmpoold.conf", dir);
	snprintf(keypath, sizeof(keypath), "%s/domain.key", dir);
	snprintf(shortkey, sizeof(shortkey), "%s/short.key", dir);
	write_file(keypath, "0123456789abcdef0123456789abcdef");
	write_file(shortkey, "01234567");

	test_good();
	test_sizes();
	test_errors();
	test_topology();
	test_failure_domain();
	test_shm();
	test_endpoints();
	test_files();
	test_docs();
	test_reload();

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
	return tap_finish();
}
