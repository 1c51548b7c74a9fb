// SPDX-License-Identifier: GPL-2.0
/*
 * hbmpoold: the hbmpool domain daemon (issue 9).  See daemon/README.md and
 * Documentation/man/hbmpoold.8.
 *
 *   hbmpoold [-c CONFIG] [-f] [-v]
 *
 * Reads the config (refusing to start on any error, all of them printed),
 * sets the kernel up and joins the domain (agent.c), then runs the event
 * loop (loop.c) until SIGTERM or SIGINT, or until a graceful leave
 * (hbmctl domain leave: drained, then out of the domain) ends it with
 * exit status 0; SIGHUP reads the config again
 * (reload(): [health] and [placement] take effect, other changes wait for
 * a restart).  Under systemd (Type=notify) it
 * sends READY=1 once it is a member, STATUS= on every change and
 * WATCHDOG=1 at half of WatchdogSec=.  The control socket ([control]
 * socket) gives the domain's view as JSON (control.h); [metrics] listen,
 * Prometheus metrics (metrics.h), served from the same loop.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "agent.h"
#include "config.h"
#include "control.h"
#include "exit_status.h"
#include "kernel.h"
#include "log.h"
#include "loop.h"
#include "metrics.h"

#ifdef HBMD_FAKE_KERNEL
/* Test builds only (selftests/unit/hbmpoold_unit): the fake kernel. */
#include <time.h>
#include "fake_kernel.h"
static struct fake_kernel fake;
#endif

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hbmpoold [-c CONFIG] [-f] [-v]\n"
		"  -c CONFIG  the config file (default " HBM_CONF_PATH ")\n"
		"  -f         stay in the foreground (as under systemd)\n"
		"  -v         debug messages too\n"
		"  -h         this help\n");
}

/* Print every line of a config error report, then the verdict. */
static void config_errors(const char *path, const char *errors)
{
	const char *p = errors, *nl;
	unsigned int n = 0;

	while (p && *p) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		hbmd_log(LOG_ERR, "%.*s", (int)(nl - p), p);
		n++;
		p = *nl ? nl + 1 : nl;
	}
	hbmd_log(LOG_ERR, "%s: %u error%s: not starting", path, n, n == 1 ? "" : "s");
}

/* Each line of text at level, with a prefix. */
static void log_lines(int level, const char *prefix, const char *text)
{
	const char *p = text, *nl;

	while (p && *p) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		hbmd_log(level, "%s%.*s", prefix, (int)(nl - p), p);
		p = *nl ? nl + 1 : nl;
	}
}

/*
 * SIGHUP: the config file read again.  A file with an error changes
 * nothing (every error logged).  Else the keys that may change at run
 * time ([health], [placement]) take their new values; a change of another
 * key is an error naming file, line and key, its running value kept
 * (hbm_config_reload()).
 */
static void reload(const char *path, struct hbm_config *conf, struct hbmd_agent *agent)
{
	char *errors = NULL, *applied = NULL;
	struct hbm_config next;
	int ret, n;

	ret = hbm_config_load(path, &next, &errors);
	if (ret) {
		log_lines(LOG_ERR, "SIGHUP: ", errors ? errors : strerror(-ret));
		hbmd_log(LOG_ERR, "SIGHUP: %s: not reloaded, nothing changed", path);
		free(errors);
		return;
	}
	n = hbm_config_reload(conf, &next, path, &applied, &errors);
	hbm_config_free(&next);
	if (n < 0) {
		hbmd_log(LOG_ERR, "SIGHUP: %s: %s; nothing changed", path, strerror(-n));
		return;
	}
	log_lines(LOG_ERR, "SIGHUP: ", errors);
	log_lines(LOG_NOTICE, "SIGHUP: applied: ", applied);
	if (n)
		hbmd_agent_reconfigured(agent);
	hbmd_log(n || errors ? LOG_NOTICE : LOG_INFO, "SIGHUP: %s: %d change%s applied%s", path, n,
		 n == 1 ? "" : "s",
		 errors ? "; the others need a restart (the running values are kept)" : "");
	free(errors);
	free(applied);
}

/* After a graceful leave, the control socket still answers this long. */
#define HBMD_LEAVE_LINGER_MS	3000

static uint64_t min64(uint64_t x, uint64_t y)
{
	return x < y ? x : y;
}

/* The control socket's view: the agent's. */
static int agent_view(void *arg, char **json)
{
	return hbmd_agent_json(arg, json);
}

/* The control socket's requests (control.h): drain, undrain and leave. */
static int agent_request(void *arg, const char *cmd, uint32_t node, char *err, size_t errlen)
{
	if (!strcmp(cmd, "leave"))
		return hbmd_agent_leave(arg, err, errlen);
	return hbmd_agent_drain(arg, node, !strcmp(cmd, "drain"), err, errlen);
}

int main(int argc, char **argv)
{
	const char *path = HBM_CONF_PATH;
	char *conf_path = NULL;
	struct pollfd fds[HBMD_LOOP_MAX_FDS];
	uint64_t wd_usec = 0, wd_ms = 0, wd_next = UINT64_MAX;
	char err[256] = "", status[256] = "";
	struct hbmd_agent *agent = NULL;
	struct hbmd_metrics *metrics = NULL;
	struct hbmd_metrics_source msrc;
	uint64_t deadline, left_at = UINT64_MAX;
	struct hbm_config conf;
	struct hbmd_kernel k;
	struct hbmd_loop loop;
	bool foreground = false, verbose = false;
	char *errors = NULL;
	int opt, ret, sig, rc = HBMD_EXIT_OK;
	struct hbmd_control *ctl = NULL;
	unsigned int n, nc, i;

	while ((opt = getopt(argc, argv, "c:fvh")) != -1) {
		switch (opt) {
		case 'c':
			path = optarg;
			break;
		case 'f':
			foreground = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(stdout);
			return HBMD_EXIT_OK;
		default:
			usage(stderr);
			return HBMD_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "hbmpoold: unexpected argument \"%s\"\n", argv[optind]);
		usage(stderr);
		return HBMD_EXIT_USAGE;
	}
	hbmd_log_init(verbose ? LOG_DEBUG : LOG_INFO);

	ret = hbm_config_load(path, &conf, &errors);
	if (ret) {
		if (ret == -EINVAL)
			config_errors(path, errors);
		else
			hbmd_log(LOG_ERR, "%s", errors ? errors : strerror(-ret));
		free(errors);
		sd_notifyf(0, "STATUS=config %s: not starting", path);
		return HBMD_EXIT_CONFIG;
	}

	/* for SIGHUP: daemon() makes / the working directory */
	conf_path = realpath(path, NULL);
	if (!conf_path)
		conf_path = strdup(path);
	if (!conf_path) {
		hbmd_log(LOG_ERR, "out of memory");
		hbm_config_free(&conf);
		return HBMD_EXIT_FAILURE;
	}

	ret = hbmd_loop_init(&loop, true, err, sizeof(err));
	if (ret) {
		hbmd_log(LOG_ERR, "event loop: %s", err);
		hbm_config_free(&conf);
		free(conf_path);
		return HBMD_EXIT_FAILURE;
	}
#ifdef HBMD_FAKE_KERNEL
	fk_init(&fake, conf.node_id, (uint64_t)time(NULL), false);
	k = fk_kernel(&fake);
	ret = 0;
	hbmd_log(LOG_WARNING, "a test build: a fake kernel, no netlink");
#else
	ret = hbmd_kernel_nl_open(&k, err, sizeof(err));
#endif
	if (ret) {
		hbmd_log(LOG_ERR, "kernel: %s", err);
		sd_notifyf(0, "STATUS=kernel: %s", err);
		rc = HBMD_EXIT_FAILURE;
		goto out_loop;
	}
	ret = hbmd_agent_new(&conf, k, hbmd_log_cb, NULL, &agent);
	if (ret)
		goto out_join;
	/* before joining: a port in use stops the daemon before the others see it */
	msrc = (struct hbmd_metrics_source){ agent, conf.domain, conf.node_id };
	if (conf.metrics_listen &&
	    hbmd_metrics_open(conf.metrics_listen, hbmd_metrics_scrape, &msrc, &metrics,
			      err, sizeof(err))) {
		hbmd_log(LOG_ERR, "[metrics] listen: %s", err);
		sd_notifyf(0, "STATUS=[metrics] listen: %s", err);
		rc = HBMD_EXIT_FAILURE;
		goto out;
	}
	if (metrics)
		hbmd_log(LOG_INFO, "metrics on http://%s/metrics", conf.metrics_listen);
	ret = hbmd_agent_start(agent);
out_join:
	if (ret) {
		hbmd_log(LOG_ERR, "node %u could not join domain %s: %s", conf.node_id,
			 conf.domain, strerror(-ret));
		sd_notifyf(0, "STATUS=could not join domain %s: %s", conf.domain, strerror(-ret));
		/* fenced: nothing changes until an operator gives it a new segment */
		rc = ret == -ESTALE ? HBMD_EXIT_FENCED : HBMD_EXIT_FAILURE;
		goto out;
	}
	ret = hbmd_control_open(conf.control_socket, agent_view, agent, &ctl, err, sizeof(err));
	if (ret) {
		hbmd_log(LOG_ERR, "control socket: %s", err);
		rc = HBMD_EXIT_FAILURE;
		goto out;
	}
	hbmd_control_set_request(ctl, agent_request);
	if (!foreground && daemon(0, 1)) {
		hbmd_log(LOG_ERR, "daemon: %s", strerror(errno));
		rc = HBMD_EXIT_FAILURE;
		goto out;
	}
	if (sd_watchdog_enabled(0, &wd_usec) > 0 && wd_usec) {
		wd_ms = wd_usec / 2000;		/* twice per period */
		if (!wd_ms)
			wd_ms = 1;
		wd_next = hbmd_now_ms() + wd_ms;
	}
	snprintf(status, sizeof(status), "%s", hbmd_agent_status(agent));
	sd_notifyf(0, "READY=1\nSTATUS=%s", status);
	hbmd_log(LOG_INFO, "%s", status);

	for (;;) {
		n = hbmd_agent_fds(agent, fds, HBMD_LOOP_MAX_FDS - 2 - HBMD_CONTROL_CLIENTS);
		nc = hbmd_control_fds(ctl, fds + n, 1 + HBMD_CONTROL_CLIENTS);
		deadline = min64(min64(hbmd_agent_deadline(agent), wd_next),
				 min64(hbmd_control_deadline(ctl), left_at));
		if (metrics) {
			fds[n + nc] = (struct pollfd){ .fd = hbmd_metrics_fd(metrics),
						       .events = POLLIN };
			deadline = min64(deadline, hbmd_metrics_deadline(metrics));
		}
		ret = hbmd_loop_wait(&loop, fds, n + nc + !!metrics, deadline, &sig);
		if (ret < 0) {
			hbmd_log(LOG_CRIT, "event loop: %s", strerror(-ret));
			rc = HBMD_EXIT_FAILURE;
			break;
		}
		for (i = 0; i < n; i++)
			if (fds[i].revents)
				hbmd_agent_event(agent, fds[i].fd, fds[i].revents);
		hbmd_agent_tick(agent);
		for (i = n; i < n + nc; i++)
			if (fds[i].revents &&
			    hbmd_control_event(ctl, fds[i].fd, fds[i].revents, err, sizeof(err)) < 0)
				hbmd_log(LOG_WARNING, "%s", err);
		if (hbmd_now_ms() >= hbmd_control_deadline(ctl))
			hbmd_control_event(ctl, -1, 0, err, sizeof(err));
		if (metrics && (fds[n + nc].revents ||
				hbmd_now_ms() >= hbmd_metrics_deadline(metrics)))
			hbmd_metrics_run(metrics);
		if (strcmp(status, hbmd_agent_status(agent))) {
			snprintf(status, sizeof(status), "%s", hbmd_agent_status(agent));
			sd_notifyf(0, "STATUS=%s", status);
		}
		if (wd_ms && hbmd_now_ms() >= wd_next) {
			sd_notify(0, "WATCHDOG=1");
			wd_next = hbmd_now_ms() + wd_ms;
		}
		if (hbmd_agent_left(agent) && left_at == UINT64_MAX) {
			/*
			 * A graceful leave (hbmctl domain leave): exit 0, which the
			 * unit does not restart, after HBMD_LEAVE_LINGER_MS in which
			 * the control socket still shows it (hbmctl --wait).
			 */
			hbmd_log(LOG_NOTICE, "node %u left domain %s: drained, lease revoked; exiting",
				 conf.node_id, conf.domain);
			sd_notifyf(0, "STOPPING=1\nSTATUS=left domain %s", conf.domain);
			left_at = hbmd_now_ms() + HBMD_LEAVE_LINGER_MS;
		}
		if (hbmd_now_ms() >= left_at) {
			rc = HBMD_EXIT_OK;
			break;
		}
		if (sig == SIGHUP) {
			reload(conf_path, &conf, agent);
		} else if (sig) {
			hbmd_log(LOG_NOTICE, "%s: stopping; the lease runs out in %u s unless hbmpoold is back on the same segment before",
				 strsignal(sig), conf.lease_ttl_s);
			sd_notify(0, "STOPPING=1");
			hbmd_agent_stop(agent, false);
			break;
		}
	}
out:
	hbmd_metrics_close(metrics);
	hbmd_control_close(ctl);
	hbmd_agent_free(agent);	/* closes the kernel */
out_loop:
	hbmd_loop_fini(&loop);
	hbm_config_free(&conf);
	free(conf_path);
	return rc;
}
