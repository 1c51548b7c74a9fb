// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of hbmpoold itself (daemon/main.c), built with the fake kernel
 * (unit/hbmpoold_fake: -DHBMD_FAKE_KERNEL, a test build only):
 *
 *  - the exit statuses (daemon/exit_status.h) are those of hbmpoold(8)'s
 *    EXIT STATUS, and the unit restarts neither 3 nor 78;
 *  - a bad option: exit 64; a config with several errors: exit 78, every
 *    error printed, and the count;
 *  - against a real etcd on 127.0.0.1 (etcd_rig.h): started with a
 *    NOTIFY_SOCKET of the test's and WATCHDOG_USEC, it sends READY=1 with
 *    a STATUS=, then WATCHDOG=1 at half the period; its node's key is in
 *    etcd; its control socket answers; its metrics endpoint answers GET
 *    /metrics with the epoch of the control socket, one member (itself,
 *    up), itself as leader, its capacity from the fake kernel; "hbmctl
 *    domain status" (unit/hbmctl_san) reads the same socket, as a table
 *    and as JSON; "hbmctl domain drain 7" through it: the view has
 *    drains [7] (written to etcd, seen by the daemon's watch), undrain
 *    empties them; a daemon
 *    whose metrics port is taken exits before it joins; SIGHUP with a
 *    changed [health] key (applied) and [node] port (refused: file, line,
 *    key), then with an invalid file (every error, nothing changed), still
 *    running; SIGTERM: STOPPING=1, exit 0, the control socket removed, the
 *    key left to its lease; started again, "hbmctl domain leave --wait":
 *    drained (nothing on the fake kernel), out of the domain (lease
 *    revoked, drain key deleted), exit 0.
 *
 * Skipped (exit 4) without /usr/bin/etcd after the offline part.  TAP.
 */
#include <poll.h>
#include <sys/un.h>

#include <curl/curl.h>

#include "tap.h"
#include "etcd_rig.h"

#include <ctype.h>

#include "exit_status.h"

#ifndef HBMPOOLD_FAKE
#define HBMPOOLD_FAKE	"unit/hbmpoold_fake"
#endif
#ifndef HBMCTL
#define HBMCTL		"unit/hbmctl_san"
#endif

/* "hbmctl ARGS" (a shell command line), its stdout into buf; its exit status. */
static int hbmctl(const char *args, char *buf, size_t len)
{
	char cmd[512];
	size_t n = 0;
	FILE *f;
	int st;

	buf[0] = '\0';
	if (access(HBMCTL, X_OK)) {
		snprintf(buf, len, "%s: not built (make -C selftests unit/hbmctl_san)", HBMCTL);
		return -1;
	}
	snprintf(cmd, sizeof(cmd), "%s %s", HBMCTL, args);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (n < len - 1 && !feof(f) && !ferror(f))
		n += fread(buf + n, 1, len - 1 - n, f);
	buf[n] = '\0';
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Run the daemon with args, stderr into *out (malloc'ed); its exit status. */
static int run(char *const argv[], char **out)
{
	char buf[8192];
	size_t len = 0;
	ssize_t r;
	int p[2], st;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (!pid) {
		dup2(p[1], 2);
		close(p[0]);
		execv(HBMPOOLD_FAKE, argv);
		_exit(127);
	}
	close(p[1]);
	while (len < sizeof(buf) - 1 && (r = read(p[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)r;
	close(p[0]);
	buf[len] = '\0';
	*out = strdup(buf);
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The file's text (malloc'ed, NUL-terminated); NULL if unreadable. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	long len;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (len = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET)) {
		buf = malloc((size_t)len + 1);
		if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
			free(buf);
			buf = NULL;
		} else if (buf) {
			buf[len] = '\0';
		}
	}
	fclose(f);
	return buf;
}

/* Does the number n stand alone (not in a longer number) in s[0..len)? */
static bool has_number(const char *s, size_t len, int n)
{
	char num[16];
	size_t k = (size_t)snprintf(num, sizeof(num), "%d", n), i;

	for (i = 0; i + k <= len; i++)
		if (!memcmp(s + i, num, k) && (!i || !isdigit((unsigned char)s[i - 1])) &&
		    (i + k == len || !isdigit((unsigned char)s[i + k])))
			return true;
	return false;
}

/*
 * daemon/exit_status.h against hbmpoold(8)'s EXIT STATUS (every status
 * named there) and the unit (RestartPreventExitStatus=: fenced and config
 * errors, not the failures a restart may mend).
 */
static void test_exit_statuses(void)
{
	static const int all[] = { HBMD_EXIT_OK, HBMD_EXIT_FAILURE, HBMD_EXIT_FENCED,
				   HBMD_EXIT_USAGE, HBMD_EXIT_CONFIG };
	char *man = slurp(HBM_TOP "/Documentation/man/hbmpoold.8");
	char *unit = slurp(HBM_TOP "/daemon/hbmpoold.service");
	const char *sec = man ? strstr(man, "\n.SH EXIT STATUS\n") : NULL, *end, *line, *eol;
	bool good = sec != NULL;
	unsigned int i;

	end = sec ? strstr(sec + 1, "\n.SH ") : NULL;
	if (sec && !end)
		end = sec + strlen(sec);
	for (i = 0; good && i < sizeof(all) / sizeof(all[0]); i++)
		if (!has_number(sec, (size_t)(end - sec), all[i])) {
			printf("# exit status %d is not in hbmpoold(8)'s EXIT STATUS\n", all[i]);
			good = false;
		}
	ok(good, "every exit status of exit_status.h is in hbmpoold(8)'s EXIT STATUS");
	line = unit ? strstr(unit, "\nRestartPreventExitStatus=") : NULL;
	eol = line ? strchrnul(line + 1, '\n') : NULL;
	ok(line && has_number(line, (size_t)(eol - line), HBMD_EXIT_FENCED) &&
	   has_number(line, (size_t)(eol - line), HBMD_EXIT_CONFIG) &&
	   !has_number(line, (size_t)(eol - line), HBMD_EXIT_FAILURE),
	   "the unit restarts neither a fenced node (%d) nor a bad config (%d), but a failure (%d)",
	   HBMD_EXIT_FENCED, HBMD_EXIT_CONFIG, HBMD_EXIT_FAILURE);
	free(man);
	free(unit);
}

static void test_offline(const char *tmp)
{
	char path[128], *out = NULL;
	char *bad_opt[] = { "hbmpoold", "-x", NULL };
	char *bad_conf[] = { "hbmpoold", "-f", "-c", path, NULL };
	FILE *f;
	int rc;

	rc = run(bad_opt, &out);
	ok(rc == HBMD_EXIT_USAGE && out && strstr(out, "usage:"),
	   "a bad option: exit 64 and the usage (%d)", rc);
	free(out);
	snprintf(path, sizeof(path), "%s/bad.conf", tmp);
	f = fopen(path, "w");
	if (!f) {
		ok(0, "%s: %s", path, strerror(errno));
		return;
	}
	fprintf(f, "[domain]\nname = x y\n[bogus]\n[etcd]\nlease_ttl = 90\n[metrics]\n"
		"listen = localhost:9477\n");
	fclose(f);
	rc = run(bad_conf, &out);
	ok(rc == HBMD_EXIT_CONFIG && out && strstr(out, ":2: [domain] name:") && strstr(out, ":3: [bogus]") &&
	   strstr(out, ":5: [etcd] lease_ttl:") && strstr(out, ":7: [metrics] listen:") &&
	   strstr(out, "[node] id: required key missing") &&
	   strstr(out, "errors: not starting"),
	   "a config with errors: exit 78, each error with its line, and the count (%d)", rc);
	if (rc != HBMD_EXIT_CONFIG && out)
		printf("# %s", out);
	free(out);
}

/* Does a line of the log file match the basic regular expression re? */
static bool logged(const char *log, const char *re)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "grep -q -- '%s' '%s'", re, log);
	return !system(cmd);
}

/*
 * Writes conf as ctext then extra, sends pid SIGHUP, and waits (up to 5 s,
 * a loaded machine's scheduling, not the daemon's speed) for the reload's
 * last line, done_re.
 */
static void sighup_with(pid_t pid, const char *conf, const char *ctext, const char *extra,
			const char *log, const char *done_re)
{
	FILE *f = fopen(conf, "w");
	int i;

	if (f) {
		fprintf(f, "%s%s", ctext, extra);
		fclose(f);
	}
	kill(pid, SIGHUP);
	for (i = 0; i < 100 && !logged(log, done_re); i++)
		usleep(50000);
}

/* The next datagram on the notify socket within ms; "" if none. */
static const char *notify_recv(int fd, int ms, char *buf, size_t len)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t r;

	buf[0] = '\0';
	if (poll(&p, 1, ms) == 1) {
		r = recv(fd, buf, len - 1, 0);
		buf[r > 0 ? r : 0] = '\0';
	}
	return buf;
}

/* Wait up to ms for a datagram holding s; true if one came. */
static bool notify_wait(int fd, const char *s, int ms, char *buf, size_t len)
{
	double t0 = now();

	while ((now() - t0) * 1000 < ms)
		if (strstr(notify_recv(fd, 50, buf, len), s))
			return true;
	return false;
}

static size_t on_body(char *p, size_t sz, size_t n, void *arg)
{
	char *buf = arg;
	size_t len = strlen(buf), room = 16383 - len;

	memcpy(buf + len, p, sz * n < room ? sz * n : room);
	buf[len + (sz * n < room ? sz * n : room)] = '\0';
	return sz * n;
}

/* GET url into buf (16 KiB); the HTTP status, or -1. */
static long scrape(const char *url, char *buf, char *ctype, size_t ctlen)
{
	CURL *c = curl_easy_init();
	long status = -1;
	char *ct = NULL;

	buf[0] = ctype[0] = '\0';
	if (!c)
		return -1;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, buf);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 3000L);
	if (curl_easy_perform(c) == CURLE_OK) {
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
		if (!curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct) && ct)
			snprintf(ctype, ctlen, "%s", ct);
	}
	curl_easy_cleanup(c);
	return status;
}

/* The value of the sample line that starts with "name " in text; -1 if none. */
static long long metric(const char *text, const char *name)
{
	size_t n = strlen(name);
	const char *p = text;

	for (; (p = strstr(p, name)); p++)
		if ((p == text || p[-1] == '\n') && p[n] == ' ')
			return atoll(p + n + 1);
	return -1;
}

/*
 * A daemon whose metrics port is taken says so and exits 1 before it
 * joins: its key never reaches etcd.
 */
static void test_port_taken(const char *key)
{
	char conf[128], *out = NULL, *argv[] = { "hbmpoold", "-f", "-c", conf, NULL };
	struct hbm_etcd_kvs kvs = { 0 };
	const char *eps[1] = { url };
	struct hbm_etcd *e;
	int hold, port, rc;
	FILE *f;

	port = free_port(&hold);
	if (port < 0 || listen(hold, 1)) {
		ok(0, "a port to hold");
		return;
	}
	snprintf(conf, sizeof(conf), "%s/taken.conf", dir);
	f = fopen(conf, "w");
	if (!f) {
		ok(0, "the config");
		close(hold);
		return;
	}
	fprintf(f, "[domain]\nname = d\nkey_file = %s\netcd_prefix = /hbmdaemon\n"
		"[node]\nid = 6\naddress = 127.0.0.1\nsegment_size = 1M\n"
		"[etcd]\nendpoints = %s\nrequest_timeout_ms = 500\nlease_ttl = 3\n"
		"[metrics]\nlisten = 127.0.0.1:%d\n[control]\nsocket = %s/ctl6\n", key, url, port,
		dir);
	fclose(f);
	rc = run(argv, &out);
	close(hold);
	ok(rc == 1 && out && strstr(out, "[metrics] listen: 127.0.0.1:") &&
	   strstr(out, "Address already in use"),
	   "the metrics port taken: exit 1 with the reason (%d)", rc);
	if (rc != 1 && out)
		printf("# %s", out);
	free(out);
	e = client(eps, 1, 1000);
	ok(e && !hbm_etcd_get(e, "/hbmdaemon/d/members/6", false, &kvs, NULL) && kvs.n == 0,
	   "... before it joined: no key of node 6 in etcd");
	hbm_etcd_kvs_free(&kvs);
	if (e)
		hbm_etcd_close(e);
}

/*
 * A graceful leave: the daemon started again, "hbmctl domain leave --wait"
 * drains it (no chunks on the fake kernel: at once), then it leaves: the
 * lease revoked (its key gone at once), its drain key deleted, exit 0 with
 * a log line, the control socket removed, and hbmctl says it left.
 */
static void test_leave(struct hbm_etcd *e, const char *conf, const char *ctext, const char *ctl)
{
	struct hbm_etcd_kvs kvs = { 0 };
	char log[160], args[256], out[4096];
	int fd, st = 0, rc;
	double t0;
	pid_t pid;
	FILE *f = fopen(conf, "w");

	/* the config as it was before the SIGHUPs */
	if (!f || fputs(ctext, f) < 0 || fclose(f)) {
		ok(0, "the config again");
		return;
	}

	snprintf(log, sizeof(log), "%s/leave.log", dir);
	pid = fork();
	if (!pid) {
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0)
			dup2(fd, 2);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl(HBMPOOLD_FAKE, "hbmpoold", "-f", "-c", conf, (char *)NULL);
		_exit(127);
	}
	/* a new fake kernel is a new segment: the old key expires first (3 s lease) */
	t0 = now();
	while (access(ctl, F_OK) && now() - t0 < 15)
		usleep(50000);
	snprintf(args, sizeof(args), "domain leave --wait --socket %s", ctl);
	rc = hbmctl(args, out, sizeof(out));
	ok(rc == 0 && strstr(out, "leaving: this node drains itself") &&
	   strstr(out, "node 5: left the domain (hbmpoold exit"),
	   "hbmctl domain leave --wait: exit %d, left", rc);
	if (rc)
		printf("# %.1000s\n", out);
	t0 = now();
	while (waitpid(pid, &st, WNOHANG) == 0 && now() - t0 < 5)
		usleep(20000);
	rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	ok(rc == 0 && access(ctl, F_OK) &&
	   logged(log, "node 5 left domain d: drained, lease revoked; exiting$"),
	   "... the daemon exits 0 (%d) with a log line, its socket removed", rc);
	if (rc)
		kill(pid, SIGKILL);
	ok(e && !hbm_etcd_get(e, "/hbmdaemon/d/members/5", false, &kvs, NULL) && kvs.n == 0,
	   "... its member key gone at once (lease revoked)");
	hbm_etcd_kvs_free(&kvs);
	ok(e && !hbm_etcd_get(e, "/hbmdaemon/d/drains/", true, &kvs, NULL) && kvs.n == 0,
	   "... its drain key and progress gone (%zu keys left)", kvs.n);
	hbm_etcd_kvs_free(&kvs);
	if (nfail) {
		snprintf(args, sizeof(args), "sed 's/^/# /' '%s'", log);
		if (system(args))
			printf("# no log\n");
	}
}

static void test_daemon(void)
{
	char conf[128], key[128], nsock[108], ctl[108], log[128], env[3][160], buf[1024], ctext[1024];
	char murl[96], mbody[16384], ctype[128], want[96], args[256], out[4096];
	long long epoch = -1;
	int mport, mfd;
	long status;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *eps[1] = { url };
	struct hbm_etcd_kvs kvs = { 0 };
	struct hbm_etcd *e;
	int nfd, fd, st, rc, wd, tries;
	double t0;
	size_t len;
	ssize_t r;
	pid_t pid;
	FILE *f;

	snprintf(conf, sizeof(conf), "%s/d.conf", dir);
	snprintf(key, sizeof(key), "%s/d.key", dir);
	snprintf(nsock, sizeof(nsock), "%s/notify", dir);
	snprintf(ctl, sizeof(ctl), "%s/ctl", dir);
	snprintf(log, sizeof(log), "%s/hbmpoold.log", dir);
	f = fopen(key, "w");
	if (!f || fwrite("0123456789abcdef0123456789abcdef", 1, 32, f) != 32 || fclose(f)) {
		ok(0, "the key file");
		return;
	}
	f = fopen(conf, "w");
	if (!f) {
		ok(0, "the config");
		return;
	}
	mport = free_port(&mfd);
	if (mfd >= 0)
		close(mfd);
	/* 16 lines */
	snprintf(ctext, sizeof(ctext),
		 "[domain]\nname = d\nkey_file = %s\netcd_prefix = /hbmdaemon\n"
		 "[node]\nid = 5\naddress = 127.0.0.1\nsegment_size = 1M\n"
		 "[etcd]\nendpoints = %s\nrequest_timeout_ms = 500\nlease_ttl = 3\n"
		 "[metrics]\nlisten = 127.0.0.1:%d\n[control]\nsocket = %s\n", key, url, mport, ctl);
	fputs(ctext, f);
	fclose(f);
	test_port_taken(key);

	nfd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", nsock);
	if (nfd < 0 || bind(nfd, (struct sockaddr *)&sa, sizeof(sa))) {
		ok(0, "the notify socket: %s", strerror(errno));
		return;
	}
	pid = fork();
	if (!pid) {
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0)
			dup2(fd, 2);
		snprintf(env[0], sizeof(env[0]), "NOTIFY_SOCKET=%s", nsock);
		snprintf(env[1], sizeof(env[1]), "WATCHDOG_USEC=400000");
		snprintf(env[2], sizeof(env[2]), "WATCHDOG_PID=%d", (int)getpid());
		putenv(env[0]);
		putenv(env[1]);
		putenv(env[2]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl(HBMPOOLD_FAKE, "hbmpoold", "-f", "-c", conf, (char *)NULL);
		_exit(127);
	}
	ok(notify_wait(nfd, "READY=1", 5000, buf, sizeof(buf)) && strstr(buf, "STATUS=member: node 5"),
	   "READY=1 with its status: \"%s\"", buf);
	t0 = now();
	for (wd = 0; now() - t0 < 1;)
		wd += !!strstr(notify_recv(nfd, 50, buf, sizeof(buf)), "WATCHDOG=1");
	ok(wd >= 3 && wd <= 8, "WATCHDOG=1 every 200 ms for WatchdogSec 400 ms: %d in 1 s", wd);

	e = client(eps, 1, 1000);
	ok(e && !hbm_etcd_get(e, "/hbmdaemon/d/members/5", false, &kvs, NULL) && kvs.n == 1 &&
	   kvs.kv[0].lease, "node 5's key is in etcd, under a lease");
	hbm_etcd_kvs_free(&kvs);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", ctl);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	len = 0;
	if (fd >= 0 && !connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		while (len < sizeof(buf) - 1 && (r = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
			len += (size_t)r;
	if (fd >= 0)
		close(fd);
	buf[len] = '\0';
	ok(strstr(buf, "\"node\":5") && strstr(buf, "\"state\":\"member\"") &&
	   strstr(buf, "\"kernel\":\"self\""), "the control socket answers: %.80s...", buf);
	if (strstr(buf, "\"epoch\":"))
		epoch = atoll(strstr(buf, "\"epoch\":") + 8);

	snprintf(args, sizeof(args), "domain status --socket %s", ctl);
	rc = hbmctl(args, out, sizeof(out));
	ok(rc == 0 && strstr(out, "\nstate        member\n") && strstr(out, "\nleader       5\n") &&
	   strstr(out, "\nis-leader    yes\n") && strstr(out, "\nmembers      1\n") &&
	   strstr(out, "\n5   ") && strstr(out, " self "),
	   "hbmctl domain status: exit %d, member, leader 5, one member (self)", rc);
	if (nfail)
		printf("# %.1000s\n", out);
	snprintf(args, sizeof(args), "-j domain status --socket %s", ctl);
	rc = hbmctl(args, out, sizeof(out));
	ok(rc == 0 && !strncmp(out, "{\"node\":5,", 10) && strstr(out, "\"kernel\":\"self\""),
	   "hbmctl -j domain status: exit %d, the daemon's object: %.60s...", rc, out);

	/* drains through the daemon: a request on its socket, etcd, its watch */
	snprintf(args, sizeof(args), "domain drain 7 --socket %s", ctl);
	rc = hbmctl(args, out, sizeof(out));
	ok(rc == 0 && strstr(out, "node 7: draining"), "hbmctl domain drain 7: exit %d, %.60s", rc,
	   out);
	for (tries = 0; tries < 40; tries++) {
		snprintf(args, sizeof(args), "-j domain status --socket %s", ctl);
		rc = hbmctl(args, out, sizeof(out));
		if (strstr(out, "\"drains\":[7]"))
			break;
		usleep(50000);
	}
	ok(rc == 0 && strstr(out, "\"drains\":[7]") && strstr(out, "\"draining\":false"),
	   "... the daemon's view has drains [7] (from etcd), member 5 not draining");
	snprintf(args, sizeof(args), "domain undrain 7 --socket %s", ctl);
	rc = hbmctl(args, out, sizeof(out));
	for (tries = 0; rc == 0 && tries < 40; tries++) {
		snprintf(args, sizeof(args), "-j domain status --socket %s", ctl);
		if (hbmctl(args, out, sizeof(out)) == 0 && strstr(out, "\"drains\":[]"))
			break;
		usleep(50000);
	}
	ok(rc == 0 && strstr(out, "\"drains\":[]"), "hbmctl domain undrain 7: exit %d, no drains left",
	   rc);

	snprintf(murl, sizeof(murl), "http://127.0.0.1:%d/metrics", mport);
	status = scrape(murl, mbody, ctype, sizeof(ctype));
	ok(status == 200 && !strncmp(ctype, "text/plain; version=0.0.4", 25),
	   "GET /metrics on port %d: %ld, %s", mport, status, ctype);
	ok(epoch > 0 && metric(mbody, "hbmpool_domain_epoch") == epoch,
	   "the metrics' epoch is the control socket's: %lld, %lld",
	   metric(mbody, "hbmpool_domain_epoch"), epoch);
	ok(metric(mbody, "hbmpool_domain_members") == 1 &&
	   metric(mbody, "hbmpool_member_up{node=\"5\"}") == 1 &&
	   metric(mbody, "hbmpool_member_state{node=\"5\",state=\"self\"}") == 1 &&
	   metric(mbody, "hbmpoold_agent_state{state=\"member\"}") == 1 &&
	   metric(mbody, "hbmpool_domain_leader") == 5 && metric(mbody, "hbmpoold_is_leader") == 1,
	   "members: 1, node 5 up and self, a member, the leader");
	ok(metric(mbody, "hbmpool_node_capacity_bytes{node=\"5\"}") == 1 << 20 &&
	   metric(mbody, "hbmpoold_kernel_read_ok{read=\"stats\"}") == 1 &&
	   metric(mbody, "hbmpool_faults_total") == 0,
	   "from the (fake) kernel: its capacity, its counters");
	snprintf(want, sizeof(want), "http://127.0.0.1:%d/other", mport);
	status = scrape(want, buf, ctype, sizeof(ctype));
	ok(status == 404, "GET /other: %ld", status);
	if (nfail)
		printf("# %.2000s\n", mbody);

	/* SIGHUP: [health] hold_ms applied, [node] port refused (lines 18, 20) */
	sighup_with(pid, conf, ctext, "[health]\nhold_ms = 2000\n[node]\nport = 7071\n", log,
		    "SIGHUP: .*d\\.conf: 1 change applied");
	ok(waitpid(pid, &st, WNOHANG) == 0, "SIGHUP: still running");
	ok(logged(log, "SIGHUP: applied: .*d\\.conf:18: \\[health\\] hold_ms: 10000 -> 2000$") &&
	   logged(log, "SIGHUP: .*d\\.conf:20: \\[node\\] port: changed (7070 -> 7071), but only a restart applies it; running value kept$") &&
	   logged(log, "SIGHUP: .*d\\.conf: 1 change applied; the others need a restart"),
	   "SIGHUP: [health] hold_ms applied; [node] port refused, named by file, line and key");
	/* an invalid file: every error, nothing changed */
	sighup_with(pid, conf, ctext, "[health]\nhold_ms = soon\n[bogus]\n", log,
		    "SIGHUP: .*d\\.conf: not reloaded");
	ok(waitpid(pid, &st, WNOHANG) == 0 &&
	   logged(log, "SIGHUP: .*d\\.conf:18: \\[health\\] hold_ms: must be") &&
	   logged(log, "SIGHUP: .*d\\.conf:19: \\[bogus\\]: unknown section") &&
	   logged(log, "SIGHUP: .*d\\.conf: not reloaded, nothing changed"),
	   "SIGHUP with an invalid file: every error logged, nothing changed, still running");

	kill(pid, SIGTERM);
	ok(notify_wait(nfd, "STOPPING=1", 3000, buf, sizeof(buf)), "SIGTERM: STOPPING=1");
	t0 = now();
	while (waitpid(pid, &st, WNOHANG) == 0 && now() - t0 < 3)
		usleep(20000);
	rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	ok(rc == 0 && access(ctl, F_OK), "... exit 0 (%d), the control socket removed", rc);
	if (rc)
		kill(pid, SIGKILL);
	ok(e && !hbm_etcd_get(e, "/hbmdaemon/d/members/5", false, &kvs, NULL) && kvs.n == 1,
	   "the key is left to its lease (a restart on the same segment takes it over)");
	hbm_etcd_kvs_free(&kvs);
	test_leave(e, conf, ctext, ctl);
	if (e)
		hbm_etcd_close(e);
	close(nfd);
	if (nfail) {
		snprintf(buf, sizeof(buf), "sed 's/^/# /' '%s'", log);
		if (system(buf))
			printf("# no log\n");
	}
}

int main(void)
{
	int status;
	char tmp[] = "/tmp/hbmpoold_unit.XXXXXX";
	char cmd[64];

	setvbuf(stdout, NULL, _IOLBF, 0);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (!mkdtemp(tmp)) {
		ok(0, "mkdtemp");
		return tap_finish();
	}
	test_exit_statuses();
	test_offline(tmp);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd))
		printf("# could not remove %s\n", tmp);

	if (etcd_rig_begin("the daemon", &status))
		return status;
	test_daemon();
	etcd_stop();
	return tap_finish();
}
