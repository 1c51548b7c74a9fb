// SPDX-License-Identifier: GPL-2.0
/*
 * membership_scale: the membership core of hbmpoold at scale (issue 9).
 * Starts one etcd on 127.0.0.1 (or uses --etcd URL), then for each N of
 * --nodes (default "64,256,1024") runs mscale_run(): N simulated nodes
 * join, KILL of them crash at once, and it prints one row per N: the
 * time to join, the detection times (kill to each survivor's watch
 * deleting each dead node: min, median, p99, max, s; lagmax: the largest
 * detection after the dead lease's proven end), the agreement time (first
 * survivor at the new epoch to the last), the requests per second and the
 * watch messages per second, and the HTTP bytes per second per node, up
 * and down, in the steady state (st) and from the kill to the last
 * detection (ev).  Exit 0 if every N met the goal (detection <= TTL + 1 s,
 * agreement <= 2 s, nothing missed, no survivor fenced), 1 if not, 2 if
 * a run failed.
 *
 *   membership_scale [--nodes 64,256,1024] [--kill 10] [--ttl 10]
 *                    [--steady S] [--starting 32] [--ranging 1]
 *                    [--idle probe|resync|none] [--etcd URL] [-q]
 *
 * --idle: what a node does after 2 TTLs without a watch message: probe
 * (the default, as the agent: one range of limit 1, keys only, whose count
 * and newest revision say whether the watch missed something, and only
 * then a read of the domain), resync (read the whole domain again, the
 * agent before the probe) or none.  --no-idle-resync is --idle none.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "etcd.h"
#include "mscale.h"

static char dir[64];
static pid_t etcd_pid;

static void etcd_stop(void)
{
	char cmd[128];
	int st;

	if (etcd_pid > 0) {
		kill(etcd_pid, SIGTERM);
		waitpid(etcd_pid, &st, 0);
		etcd_pid = 0;
	}
	if (dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", dir);
		dir[0] = '\0';
	}
}

/* A free port on 127.0.0.1 (kept bound until every port is chosen). */
static int free_port(int *fd)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);

	*fd = socket(AF_INET, SOCK_STREAM, 0);
	if (*fd >= 0 && !bind(*fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(*fd, (struct sockaddr *)&a, &len))
		return ntohs(a.sin_port);
	return -1;
}

static int etcd_start(const char *bin, char *url, size_t len)
{
	int f1, f2, cport = free_port(&f1), pport = free_port(&f2);
	char curl[64], purl[64], cluster[96], data[96], log[96];
	const char *eps[1] = { url };
	struct hbm_etcd_opts o = { .endpoints = eps, .nr_endpoints = 1,
				   .connect_timeout_ms = 500, .request_timeout_ms = 1000 };
	struct hbm_etcd *e;
	struct hbm_etcd_kvs kvs;
	int i, fd;

	close(f1);
	close(f2);
	snprintf(dir, sizeof(dir), "/tmp/hbm_mscale.XXXXXX");
	if (cport < 0 || pport < 0 || !mkdtemp(dir)) {
		dir[0] = '\0';
		fprintf(stderr, "no free port or temporary directory\n");
		return -1;
	}
	snprintf(url, len, "http://127.0.0.1:%d", cport);
	snprintf(curl, sizeof(curl), "http://127.0.0.1:%d", cport);
	snprintf(purl, sizeof(purl), "http://127.0.0.1:%d", pport);
	snprintf(cluster, sizeof(cluster), "scale=%s", purl);
	snprintf(data, sizeof(data), "%s/data", dir);
	snprintf(log, sizeof(log), "%s/etcd.log", dir);
	etcd_pid = fork();
	if (etcd_pid < 0)
		return -1;
	if (!etcd_pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		/* etcd's defaults otherwise (heartbeat 100 ms, election 1 s) */
		execl(bin, "etcd", "--name", "scale", "--data-dir", data,
		      "--listen-client-urls", curl, "--advertise-client-urls", curl,
		      "--listen-peer-urls", purl, "--initial-advertise-peer-urls", purl,
		      "--initial-cluster", cluster, "--logger", "zap", "--log-outputs", "stderr",
		      (char *)NULL);
		_exit(127);
	}
	if (hbm_etcd_open(&o, &e))
		return -1;
	for (i = 0; i < 100; i++) {
		if (!hbm_etcd_get(e, "/probe", false, &kvs, NULL)) {
			hbm_etcd_close(e);
			return 0;
		}
		usleep(100000);
	}
	fprintf(stderr, "etcd did not answer on %s: %s\n", url, hbm_etcd_error(e));
	hbm_etcd_close(e);
	return -1;
}

/* The machine's load: the runs share it (nice). */
static void print_load(const char *when)
{
	char buf[128] = "?";
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			strcpy(buf, "?\n");
		fclose(f);
	}
	printf("# load average %s the runs: %s", when, buf);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "nodes", required_argument, NULL, 'n' },
		{ "kill", required_argument, NULL, 'k' },
		{ "ttl", required_argument, NULL, 't' },
		{ "steady", required_argument, NULL, 's' },
		{ "starting", required_argument, NULL, 'j' },
		{ "ranging", required_argument, NULL, 'r' },
		{ "idle", required_argument, NULL, 'i' },
		{ "no-idle-resync", no_argument, NULL, 'R' },
		{ "etcd", required_argument, NULL, 'e' },
		{ "quiet", no_argument, NULL, 'q' },
		{ 0 }
	};
	struct mscale_opts o = { .kill = 10, .ttl_s = 10, .request_ms = 2000, .starting = 32,
				 .ranging = 1,
				 .idle = MSCALE_IDLE_PROBE, .log = stderr };
	const char *nodes = "64,256,1024", *etcd_url = NULL, *bin = getenv("HBM_ETCD");
	struct mscale_result res[16];
	struct mscale_opts ro[16];
	unsigned int nr = 0, i, steady = 0;
	char url[64], domain[32], *list, *tok, *save;
	struct rlimit rl;
	int c, rc = 0;

	while ((c = getopt_long(argc, argv, "n:k:t:s:j:r:i:Re:q", lo, NULL)) != -1) {
		switch (c) {
		case 'n': nodes = optarg; break;
		case 'k': o.kill = atoi(optarg); break;
		case 't': o.ttl_s = atoi(optarg); break;
		case 's': steady = atoi(optarg); break;
		case 'j': o.starting = atoi(optarg); break;
		case 'r': o.ranging = atoi(optarg); break;
		case 'i':
			for (o.idle = MSCALE_IDLE_PROBE; o.idle <= MSCALE_IDLE_NONE; o.idle++)
				if (!strcmp(optarg, mscale_idle_name(o.idle)))
					break;
			if (o.idle > MSCALE_IDLE_NONE)
				goto usage;
			break;
		case 'R': o.idle = MSCALE_IDLE_NONE; break;
		case 'e': etcd_url = optarg; break;
		case 'q': o.log = NULL; break;
		default:
usage:
			fprintf(stderr, "usage: %s [--nodes 64,256,1024] [--kill 10] [--ttl 10] [--steady S] [--starting 32] [--ranging 1] [--idle probe|resync|none] [--no-idle-resync] [--etcd URL] [-q]\n",
				argv[0]);
			return 64;
		}
	}
	/* the request timeout of the daemon, or less for short TTLs (config.c's rule) */
	if (o.request_ms * 3 >= o.ttl_s * 1000)
		o.request_ms = o.ttl_s * 1000 / 4;
	/* the steady window covers an idle resync (2 TTLs of quiet watch) */
	o.steady_s = steady ? steady : 2 * o.ttl_s + 2;
	/* 2 descriptors a node (its watch, its keepalive), etcd the same */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (!etcd_url) {
		if (etcd_start(bin ? bin : "/usr/bin/etcd", url, sizeof(url))) {
			etcd_stop();
			return 2;
		}
		etcd_url = url;
	}
	o.endpoint = etcd_url;
	o.etcd_pid = etcd_pid;
	print_load("before");
	list = strdup(nodes);
	for (tok = strtok_r(list, ",", &save); tok && nr < 16; tok = strtok_r(NULL, ",", &save)) {
		ro[nr] = o;
		ro[nr].nodes = atoi(tok);
		snprintf(domain, sizeof(domain), "scale%u-%u", nr, ro[nr].nodes);
		ro[nr].domain = strdup(domain);
		if (mscale_run(&ro[nr], &res[nr]))
			rc = 2;
		else if (res[nr].det_max > o.ttl_s + 1 || res[nr].agree_s > 2 ||
			 res[nr].pairs_missed || res[nr].not_agreed || res[nr].fenced ||
			 res[nr].other_leaves)
			rc = rc ? rc : 1;
		nr++;
	}
	printf("# membership_scale: etcd %s, %u killed, lease TTL %u s, request timeout %u ms, steady window %u s, idle watches: %s, %u registering and %u reading at once\n",
	       etcd_url, o.kill, o.ttl_s, o.request_ms, o.steady_s, mscale_idle_name(o.idle),
	       o.starting, o.ranging);
	printf("# det_*: s from the kill to a survivor's watch deleting a dead node (all pairs); lagmax: s after the dead lease's proven end\n");
	printf("# agr_s: first survivor at the new epoch to the last; miss: pairs missed + survivors not agreed\n");
	printf("# rps: requests/s; msg/s: watch messages/s; up/down: HTTP B/s per node, st = steady, ev = kill to last detection\n");
	mscale_print_header(stdout);
	for (i = 0; i < nr; i++)
		mscale_print(stdout, &res[i], &ro[i]);
	if (nr > 1 && res[0].done && res[nr - 1].done) {
		const struct mscale_result *a = &res[0], *b = &res[nr - 1];

		printf("# ratios %u vs %u nodes: join %.2f, det_med %.2f, det_max %.2f, agree %.2f, rps_st %.2f, down_st/node %.2f, up_st/node %.2f\n",
		       b->nodes, a->nodes, b->join_s / a->join_s, b->det_med / a->det_med,
		       b->det_max / a->det_max, a->agree_s > 0 ? b->agree_s / a->agree_s : 0,
		       b->steady.rps / a->steady.rps, b->steady.down / a->steady.down,
		       b->steady.up / a->steady.up);
	}
	for (i = 0; i < nr; i++) {
		printf("# %u nodes: %u survivors, epoch %lld -> %lld, new epoch reached %.3f..%.3f s after the kill, %u watch streams, lag %.2f..%.2f s, event window %.1f s, down max/node st %.0f ev %.0f B/s, %u grants or creates retried\n",
		       res[i].nodes, res[i].survivors, (long long)res[i].epoch_before,
		       (long long)res[i].epoch_after, res[i].first_at_s, res[i].last_at_s,
		       res[i].watch_streams, res[i].lag_min, res[i].lag_max, res[i].event.s,
		       res[i].steady.down_max, res[i].event.down_max, res[i].retries);
		printf("# %u nodes: idle probes: %.2f/s and %.1f / %.1f B/s up / down per node steady, %.1f/s in the event; %u answered (%u before the kill), %.0f / %.0f B each; %u said the watch missed changes (%u before the kill), %u failed; %u ranges after the join\n",
		       res[i].nodes, res[i].steady.probes, res[i].steady.probe_up,
		       res[i].steady.probe_down, res[i].event.probes, res[i].probes,
		       res[i].quiet_probes, res[i].probe_up_each, res[i].probe_down_each,
		       res[i].probe_missed, res[i].quiet_missed, res[i].probe_failed,
		       res[i].resyncs);
		printf("# %u nodes: %u loop stalls over 0.5 s, the longest %.2f s with %.3f s on a CPU\n",
		       res[i].nodes, res[i].stalls, res[i].stall_max_s, res[i].stall_max_cpu_s);
		printf("# %u nodes: CPU s/s (of 2 cores here) simulator/etcd: steady %.2f/%.2f, event %.2f/%.2f; the join took %.1f/%.1f CPU s\n",
		       res[i].nodes, res[i].steady.cpu, res[i].steady.etcd_cpu, res[i].event.cpu,
		       res[i].event.etcd_cpu, res[i].join_cpu, res[i].join_etcd_cpu);
		free((char *)ro[i].domain);
	}
	print_load("after");
	printf("# goal (detection <= TTL + 1 s, agreement <= 2 s): %s\n",
	       rc == 0 ? "met" : rc == 1 ? "NOT met" : "a run failed");
	free(list);
	etcd_stop();
	return rc;
}
