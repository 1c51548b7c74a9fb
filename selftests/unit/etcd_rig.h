/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A real etcd for the host unit tests (etcd_unit, agent_unit): started on
 * 127.0.0.1 with free ports and a temporary data directory
 * (etcd_start()), stopped and its directory removed by etcd_stop(); it
 * never outlives the test (PR_SET_PDEATHSIG).  /usr/bin/etcd, or $HBM_ETCD
 * if the test sets etcd_bin from it.  Like tap.h, one test program per file
 * includes it, after tap.h.
 */
#ifndef HBM_UNIT_ETCD_RIG_H
#define HBM_UNIT_ETCD_RIG_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "etcd.h"
#include "tap.h"

/* HBM_ETCD=PATH runs another etcd binary (or proves the skip). */
#define ETCD_BIN	"/usr/bin/etcd"
static __attribute__((unused)) const char *etcd_bin = ETCD_BIN;
#define KSFT_SKIP	4

static __attribute__((unused)) double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static __attribute__((unused)) char dir[64];
static __attribute__((unused)) pid_t etcd_pid;
static __attribute__((unused)) char url[64], dead_url[64];

/*
 * A free port on 127.0.0.1: bound to port 0, then closed by the caller.
 * The sockets stay open until every port is chosen, so that all differ.
 */
static __attribute__((unused)) int free_port(int *fd)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);

	*fd = socket(AF_INET, SOCK_STREAM, 0);
	if (*fd >= 0 && !bind(*fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(*fd, (struct sockaddr *)&a, &len))
		return ntohs(a.sin_port);
	return -1;
}

static __attribute__((unused)) void etcd_stop(void)
{
	char cmd[128];
	int st;

	if (etcd_pid > 0) {
		kill(etcd_pid, SIGCONT);
		kill(etcd_pid, SIGTERM);
		waitpid(etcd_pid, &st, 0);
		etcd_pid = 0;
	}
	if (dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			fprintf(stderr, "# could not remove %s\n", dir);
		dir[0] = '\0';
	}
}

static __attribute__((unused)) void show_log(void)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "tail -n 20 '%s/etcd.log' | sed 's/^/# /'", dir);
	if (system(cmd))
		fprintf(stderr, "# no etcd log\n");
}

static __attribute__((unused)) struct hbm_etcd *client(const char *const *eps, unsigned int n, unsigned int req_ms)
{
	struct hbm_etcd_opts o = {
		.endpoints = eps, .nr_endpoints = n,
		.connect_timeout_ms = 1000, .request_timeout_ms = req_ms,
	};
	struct hbm_etcd *e;

	return hbm_etcd_open(&o, &e) ? NULL : e;
}

/*
 * SIGSTOP etcd and wait until it is stopped (state T in /proc): the
 * signal is delivered asynchronously, and a request sent before it takes
 * effect would still be answered.  0, or -1 if it did not stop within 2 s.
 */
static __attribute__((unused)) int etcd_sigstop(void)
{
	char path[64], buf[256], *p;
	double t0 = now();
	FILE *f;

	if (etcd_pid <= 0 || kill(etcd_pid, SIGSTOP))
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)etcd_pid);
	while (now() - t0 < 2) {
		f = fopen(path, "r");
		if (!f)
			return -1;
		p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		fclose(f);
		if (p && p[1] == ' ' && p[2] == 'T')
			return 0;
		usleep(1000);
	}
	return -1;
}

/* Start etcd; 0 when it answers, else -1 (reported). */
static __attribute__((unused)) int etcd_start(void)
{
	int fds[3], cport = free_port(&fds[0]), pport = free_port(&fds[1]);
	int dport = free_port(&fds[2]);
	char curl[64], purl[64], cluster[96], data[96], log[96];
	const char *eps[1] = { url };
	struct hbm_etcd *e;
	struct hbm_etcd_kvs kvs;
	double t0 = now();
	int fd, st;

	for (fd = 0; fd < 3; fd++)
		if (fds[fd] >= 0)
			close(fds[fd]);
	snprintf(dir, sizeof(dir), "/tmp/hbm_etcd.XXXXXX");
	if (cport < 0 || pport < 0 || dport < 0 || !mkdtemp(dir)) {
		ok(0, "free ports and a temporary directory");
		return -1;
	}
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", cport);
	snprintf(dead_url, sizeof(dead_url), "http://127.0.0.1:%d", dport);
	snprintf(curl, sizeof(curl), "http://127.0.0.1:%d", cport);
	snprintf(purl, sizeof(purl), "http://127.0.0.1:%d", pport);
	snprintf(cluster, sizeof(cluster), "unit=%s", purl);
	snprintf(data, sizeof(data), "%s/data", dir);
	snprintf(log, sizeof(log), "%s/etcd.log", dir);

	etcd_pid = fork();
	if (etcd_pid < 0) {
		ok(0, "fork: %s", strerror(errno));
		return -1;
	}
	if (!etcd_pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);	/* never outlive the test */
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(etcd_bin, "etcd", "--name", "unit", "--data-dir", data,
		      "--listen-client-urls", curl, "--advertise-client-urls", curl,
		      "--listen-peer-urls", purl, "--initial-advertise-peer-urls", purl,
		      "--initial-cluster", cluster, "--heartbeat-interval", "50",
		      "--election-timeout", "500", "--logger", "zap", "--log-outputs", "stderr",
		      (char *)NULL);
		_exit(127);
	}
	e = client(eps, 1, 1000);
	if (!e) {
		ok(0, "a client");
		return -1;
	}
	while (now() - t0 < 10) {
		if (!hbm_etcd_get(e, "/probe", false, &kvs, NULL)) {
			hbm_etcd_close(e);
			ok(1, "etcd answers on %s after %.1f s", url, now() - t0);
			return 0;
		}
		if (waitpid(etcd_pid, &st, WNOHANG) == etcd_pid) {
			etcd_pid = 0;
			break;
		}
		usleep(100000);
	}
	ok(0, "etcd answers on %s (%s)", url, hbm_etcd_error(e));
	hbm_etcd_close(e);
	show_log();
	return -1;
}

/*
 * Starts the test's etcd ($HBM_ETCD, else /usr/bin/etcd) for @what.  0: it
 * answers.  Otherwise the test ends with the status put in *@status: a skip
 * (no etcd; the reason printed) or a failure (it did not start).
 */
static __attribute__((unused)) int etcd_rig_begin(const char *what, int *status)
{
	if (getenv("HBM_ETCD"))
		etcd_bin = getenv("HBM_ETCD");
	if (access(etcd_bin, X_OK)) {
		printf("# SKIP %s: %s not found (Debian package etcd-server; make deps)\n",
		       what, etcd_bin);
		*status = tap_finish();
		if (!*status)
			*status = KSFT_SKIP;
		return -1;
	}
	if (etcd_start()) {
		etcd_stop();
		*status = tap_finish();
		return -1;
	}
	return 0;
}

#endif /* HBM_UNIT_ETCD_RIG_H */
