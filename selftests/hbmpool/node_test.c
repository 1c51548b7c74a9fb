// SPDX-License-Identifier: GPL-2.0
/*
 * Nodes as devices: a node is a device on the "hbmpool" bus, linked from
 * /sys/kernel/hbmpool/nodes/, announced with uevents (add, change of its
 * link state, remove) that carry its id and state.  The core's per-node
 * fault injection (debugfs fail_fetch/fail_writeback) and the fail_request
 * fault_attr fail transfers whatever the transport.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/netlink.h>

#include "kselftest_harness.h"
#include "hbmtest.h"
#include "hbmnl.h"

#define N_D	45
#define BUS	"/sys/bus/hbmpool/devices"
#define FAILREQ	HBM_DEBUGFS "/fail_request"

FIXTURE(node)
{
	struct hbmt_env env;
	int uev;		/* NETLINK_KOBJECT_UEVENT, or -1 */
	int failreq_set;
};

FIXTURE_SETUP(node)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1 };

	hbmt_env_setup(_metadata, &self->env, 256, 2000);
	self->uev = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
			   NETLINK_KOBJECT_UEVENT);
	ASSERT_LE(0, self->uev) TH_LOG("uevent socket: %s", strerror(errno));
	ASSERT_EQ(0, bind(self->uev, (struct sockaddr *)&sa, sizeof(sa)));
	hbmt_env_node(_metadata, &self->env, N_D, 4, 20, NULL);
}

FIXTURE_TEARDOWN(node)
{
	if (self->failreq_set)
		hbm_write_str(FAILREQ "/probability", "0");
	hbm_node_knob(N_D, "link_down", 0);
	if (self->uev >= 0)
		close(self->uev);
	hbmt_env_teardown(_metadata, &self->env);
}

/*
 * Waits up to 3 s for a uevent of node N_D with ACTION=action (and
 * HBMPOOL_NODE_STATE=state if given); 0 if seen.
 */
static int wait_uevent(int fd, const char *action, const char *state)
{
	char want_node[32], want_action[32], want_state[48], buf[4096];

	snprintf(want_node, sizeof(want_node), "HBMPOOL_NODE=%u", N_D);
	snprintf(want_action, sizeof(want_action), "ACTION=%s", action);
	snprintf(want_state, sizeof(want_state), "HBMPOOL_NODE_STATE=%s", state ?: "");
	for (int waited = 0; waited < 3000; ) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		bool node = false, act = false, st = !state;
		ssize_t n;

		if (poll(&p, 1, 100) <= 0) {
			waited += 100;
			continue;
		}
		n = recv(fd, buf, sizeof(buf) - 1, 0);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		for (char *s = buf; s < buf + n; s += strlen(s) + 1) {
			node |= !strcmp(s, want_node);
			act |= !strcmp(s, want_action);
			st |= state && !strcmp(s, want_state);
		}
		if (node && act && st)
			return 0;
	}
	return -ETIMEDOUT;
}

static bool file_has_line(const char *path, const char *line)
{
	char buf[1024];
	bool found = false;
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	while (!found && fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		found = !strcmp(buf, line);
	}
	fclose(f);
	return found;
}

/* A node is a device on the hbmpool bus; nodes/nodeN is a link to it; its uevent file names it and its state. */
TEST_F(node, bus_device)
{
	char dev[128], link[128], line[64];
	struct stat a, b;
	int me;

	snprintf(dev, sizeof(dev), BUS "/node%u", N_D);
	snprintf(link, sizeof(link), HBM_SYSFS "/nodes/node%u", N_D);
	ASSERT_EQ(0, stat(dev, &a)) TH_LOG("%s: %s", dev, strerror(errno));
	ASSERT_EQ(0, stat(link, &b));
	EXPECT_EQ(a.st_ino, b.st_ino) TH_LOG("nodes/node%u is not the bus device", N_D);
	ASSERT_EQ(0, lstat(link, &b));
	EXPECT_TRUE(S_ISLNK(b.st_mode));
	snprintf(dev, sizeof(dev), BUS "/node%u/uevent", N_D);
	snprintf(line, sizeof(line), "HBMPOOL_NODE=%u", N_D);
	EXPECT_TRUE(file_has_line(dev, line));
	EXPECT_TRUE(file_has_line(dev, "HBMPOOL_NODE_STATE=up"));
	/* this node (self_node) is a device too */
	me = hbm_self_node(self->env.devfd);
	ASSERT_LE(0, me) TH_LOG("self node: %s", strerror(-me));
	snprintf(dev, sizeof(dev), BUS "/node%d/stats/faults", me);
	EXPECT_EQ(0, stat(dev, &a)) TH_LOG("%s", dev);
}

/* Add, link down, link up and removal are each announced with a uevent. */
TEST_F(node, uevents)
{
	char dev[128];

	/* the add of the fixture's node */
	EXPECT_EQ(0, wait_uevent(self->uev, "add", "up")) TH_LOG("no add uevent");
	ASSERT_EQ(0, hbm_node_knob(N_D, "link_down", 1));
	EXPECT_EQ(0, wait_uevent(self->uev, "change", "down")) TH_LOG("no change uevent (down)");
	snprintf(dev, sizeof(dev), BUS "/node%u/uevent", N_D);
	EXPECT_TRUE(file_has_line(dev, "HBMPOOL_NODE_STATE=down"));
	ASSERT_EQ(0, hbm_node_knob(N_D, "link_down", 0));
	EXPECT_EQ(0, wait_uevent(self->uev, "change", "up")) TH_LOG("no change uevent (up)");
	/* writing the same state again is no change */
	ASSERT_EQ(0, hbm_node_knob(N_D, "link_down", 0));
	EXPECT_EQ(-ETIMEDOUT, wait_uevent(self->uev, "change", NULL));
	ASSERT_EQ(0, hbm_node_del(N_D));
	EXPECT_EQ(0, wait_uevent(self->uev, "remove", NULL)) TH_LOG("no remove uevent");
	snprintf(dev, sizeof(dev), BUS "/node%u", N_D);
	EXPECT_EQ(-1, access(dev, F_OK));
}

/* weight, effective_weight and draining are read-only files of the node; node-set of either is a change uevent. */
TEST_F(node, weight_draining)
{
	static const char *const files[] = { "weight", "effective_weight", "draining" };
	struct hbm_nl *nl;
	char path[128], ext[256];
	struct stat st;
	uint64_t v;
	int ret;

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), BUS "/node%u/%s", N_D, files[i]);
		ASSERT_EQ(0, stat(path, &st)) TH_LOG("%s: %s", path, strerror(errno));
		EXPECT_EQ(0444, st.st_mode & 0777) TH_LOG("%s", path);
	}
	/* 4 MiB at distance 20: 4 * 10 / 20 = 2 */
	ASSERT_EQ(0, hbm_node_u64(N_D, "effective_weight", &v));
	EXPECT_EQ(2, v);
	ASSERT_EQ(0, hbm_nl_open(&nl));
	EXPECT_EQ(0, wait_uevent(self->uev, "add", "up"));
	ret = hbm_nl_node_weight(nl, N_D, 9, ext, sizeof(ext));
	EXPECT_EQ(0, ret) TH_LOG("weight: %s (%s)", strerror(-ret), ext);
	EXPECT_EQ(0, wait_uevent(self->uev, "change", NULL)) TH_LOG("no change uevent (weight)");
	ASSERT_EQ(0, hbm_node_u64(N_D, "weight", &v));
	EXPECT_EQ(9, v);
	ret = hbm_nl_node_draining(nl, N_D, 1, ext, sizeof(ext));
	EXPECT_EQ(0, ret) TH_LOG("draining: %s (%s)", strerror(-ret), ext);
	EXPECT_EQ(0, wait_uevent(self->uev, "change", NULL)) TH_LOG("no change uevent (draining)");
	ASSERT_EQ(0, hbm_node_u64(N_D, "draining", &v));
	EXPECT_EQ(1, v);
	hbm_nl_close(nl);
}

/* The core's fault knobs are 0/1 on every node, this node included; anything else is EINVAL. */
TEST_F(node, fail_knobs)
{
	char path[128], buf[16];
	int me;

	snprintf(path, sizeof(path), HBM_DEBUGFS "/node%u/fail_fetch", N_D);
	ASSERT_EQ(0, hbm_read_str(path, buf, sizeof(buf)));
	EXPECT_STREQ("0", buf);
	ASSERT_EQ(0, hbm_write_str(path, "1"));
	ASSERT_EQ(0, hbm_read_str(path, buf, sizeof(buf)));
	EXPECT_STREQ("1", buf);
	EXPECT_EQ(-EINVAL, hbm_write_str(path, "2"));
	EXPECT_EQ(-EINVAL, hbm_write_str(path, "y"));
	ASSERT_EQ(0, hbm_write_str(path, "0"));
	me = hbm_self_node(self->env.devfd);
	ASSERT_LE(0, me);
	snprintf(path, sizeof(path), HBM_DEBUGFS "/node%d/fail_writeback", me);
	EXPECT_EQ(0, access(path, F_OK)) TH_LOG("%s: this node has the knob too", path);
}

/* fail_request (a kernel fault_attr) fails fetches with EIO: the fault gets SIGBUS; off again, the page is fetched. */
TEST_F(node, fail_request)
{
	struct hbmt_region r;
	struct hbmpool_stats st;
	uint64_t v;

	if (access(FAILREQ, F_OK))
		SKIP(return, "no %s: this kernel has no CONFIG_FAULT_INJECTION_DEBUG_FS", FAILREQ);
	ASSERT_EQ(0, hbmt_region_open(&r, self->env.devfd, 4 * HBMT_PAGE, 0,
				      HBMPOOL_POLICY_BIND, HBM_NODES(N_D), 0, "failreq"));
	ASSERT_EQ(0, hbm_write_str(FAILREQ "/times", "-1"));
	ASSERT_EQ(0, hbm_write_str(FAILREQ "/verbose", "0"));
	ASSERT_EQ(0, hbm_write_str(FAILREQ "/interval", "1"));
	self->failreq_set = 1;
	ASSERT_EQ(0, hbm_write_str(FAILREQ "/probability", "100"));
	EXPECT_EQ(SIGBUS, hbmt_probe_read(r.map, &v, NULL));
	ASSERT_EQ(0, hbm_write_str(FAILREQ "/probability", "0"));
	EXPECT_EQ(0, hbmt_probe_read(r.map, &v, NULL));
	ASSERT_EQ(0, hbm_region_stats(r.fd, &st));
	EXPECT_LE(1, st.errors);
	EXPECT_LE(1, st.fetches);
	hbmt_region_close(&r);
}

TEST_HARNESS_MAIN
