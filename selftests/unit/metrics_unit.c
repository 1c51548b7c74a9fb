// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of hbmpoold's metrics (daemon/metrics.c, metrics_http.c):
 *
 *  - rendering, no network: a snapshot rendered and the text checked
 *    line by line against the exposition format 0.0.4 (HELP then TYPE,
 *    one family per name, samples of the family they follow, label
 *    syntax and escapes, values that parse), the values of the snapshot
 *    in it, escaping of \, " and newline, one-hot states, families
 *    without samples when a kernel read failed; the checker itself is
 *    shown to reject broken texts;
 *  - serving: the endpoint on 127.0.0.1, port 0, driven by the daemon's
 *    io_uring loop (loop.c) in a thread, scraped with libcurl: 200 with
 *    Content-Type text/plain; version=0.0.4, the body; 404 for other
 *    paths; 405 with Allow for other methods; HEAD; 500 when the body
 *    cannot be made; a client that sends half a request blocks nothing;
 *    a port in use and a bad address refused with the reason; [::1] if
 *    the host has IPv6; closed: the port is free again;
 *  - the config refuses bad [metrics] listen values.
 *
 * TAP.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <curl/curl.h>

#include "config.h"
#include "loop.h"
#include "metrics.h"
#include "tap.h"

/* ---- the format checker ---- */

/* A label set: {k="v",...}; the escapes \\ \" \n only.  Returns the char after '}' or NULL. */
static const char *check_labels(const char *p, char *why, size_t wl)
{
	const char *k;

	if (*p != '{')
		return p;
	p++;
	for (;;) {
		k = p;
		while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
		       (p > k && *p >= '0' && *p <= '9'))
			p++;
		if (p == k || *p++ != '=' || *p++ != '"') {
			snprintf(why, wl, "bad label name or no =\"");
			return NULL;
		}
		while (*p != '"') {
			if (!*p || *p == '\n') {
				snprintf(why, wl, "unterminated label value");
				return NULL;
			}
			if (*p == '\\') {
				p++;
				if (*p != '\\' && *p != '"' && *p != 'n') {
					snprintf(why, wl, "bad escape \\%c", *p);
					return NULL;
				}
			}
			p++;
		}
		p++;
		if (*p == '}')
			return p + 1;
		if (*p++ != ',') {
			snprintf(why, wl, "no , or } after a label");
			return NULL;
		}
	}
}

/*
 * 0 if text is good exposition format 0.0.4 as hbmpoold writes it: every
 * family "# HELP n ...", "# TYPE n gauge|counter", then samples of n; no
 * name declared twice; nothing else.  Else -1, why says where.
 */
static int check_format(const char *text, char *why, size_t wl, unsigned int *families)
{
	char fam[128] = "", names[8192] = " ", line[1024], name[130];
	const char *p = text, *nl, *q;
	unsigned int ln = 0;
	bool typed = false;
	char *end;
	size_t n;

	*families = 0;
	if (!*text || text[strlen(text) - 1] != '\n') {
		snprintf(why, wl, "empty, or no newline at the end");
		return -1;
	}
	for (; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		n = (size_t)(nl - p);
		ln++;
		if (n >= sizeof(line)) {
			snprintf(why, wl, "line %u too long", ln);
			return -1;
		}
		memcpy(line, p, n);
		line[n] = '\0';
		if (!strncmp(line, "# HELP ", 7)) {
			if (sscanf(line + 7, "%127s", fam) != 1 || strlen(line) <= 8 + strlen(fam)) {
				snprintf(why, wl, "line %u: HELP without a name or text", ln);
				return -1;
			}
			snprintf(name, sizeof(name), " %s ", fam);
			if (strstr(names, name)) {
				snprintf(why, wl, "line %u: family %s declared twice", ln, fam);
				return -1;
			}
			if (strlen(names) + strlen(name) >= sizeof(names))
				return snprintf(why, wl, "too many families"), -1;
			strcat(names, name + 1);
			typed = false;
			(*families)++;
			continue;
		}
		if (!strncmp(line, "# TYPE ", 7)) {
			snprintf(name, sizeof(name), "%s ", fam);
			if (typed || strncmp(line + 7, name, strlen(name)) ||
			    (strcmp(line + 7 + strlen(name), "gauge") &&
			     strcmp(line + 7 + strlen(name), "counter"))) {
				snprintf(why, wl, "line %u: TYPE not right after HELP %s: %.80s", ln, fam,
					 line);
				return -1;
			}
			if (!strcmp(line + 7 + strlen(name), "counter") &&
			    (strlen(fam) < 6 || strcmp(fam + strlen(fam) - 6, "_total"))) {
				snprintf(why, wl, "line %u: counter %s without _total", ln, fam);
				return -1;
			}
			typed = true;
			continue;
		}
		if (line[0] == '#' || !typed) {
			snprintf(why, wl, "line %u: a comment, or a sample before HELP/TYPE: %.80s", ln,
				 line);
			return -1;
		}
		q = line;
		while (*q && *q != '{' && *q != ' ')
			q++;
		if ((size_t)(q - line) != strlen(fam) || strncmp(line, fam, strlen(fam))) {
			snprintf(why, wl, "line %u: sample of another family than %s: %.80s", ln, fam,
				 line);
			return -1;
		}
		q = check_labels(q, why, wl);
		if (!q) {
			snprintf(why + strlen(why), wl - strlen(why), " line %u", ln);
			return -1;
		}
		if (*q++ != ' ') {
			snprintf(why, wl, "line %u: no space before the value", ln);
			return -1;
		}
		strtod(q, &end);
		if (end == q || *end) {
			snprintf(why, wl, "line %u: value \"%s\" does not parse", ln, q);
			return -1;
		}
	}
	return 0;
}

/* ---- rendering ---- */

static struct hbmd_metrics_member members[] = {
	{ 3, "live" }, { 7, "self" }, { 9, "fenced" },
};
static struct hbmd_kernel_node knodes[] = {
	{ .id = 3, .state = 0, .capacity = 1ULL << 30, .free = 512ULL << 20 },
	{ .id = 7, .state = 0, .self = true, .capacity = 64ULL << 20, .free = 0 },
	{ .id = 9, .state = 2, .capacity = 2ULL << 30, .free = 2ULL << 30 },
	{ .id = 11, .state = 1, .capacity = 4096, .free = 4096 },
};
static struct hbmd_kernel_link klinks[] = {
	{ .node_id = 3, .oper_state = 1, .health = 3, .rtt_ns = 1500000 },
	{ .node_id = 9, .oper_state = 0, .health = -1, .rtt_ns = 0 },
};

static void snap_init(struct hbmd_metrics_snap *s)
{
	*s = (struct hbmd_metrics_snap){
		.domain = "a\"b\\c\nd", .node_id = 7, .state = "member", .is_leader = false,
		.epoch = 42, .leader_id = 3, .incarnation = 1001,
		.lease_ttl_ms = 3000, .lease_valid_ms = 2500,
		.members = members, .nr_members = 3,
		.nodes_ok = true, .nodes = knodes, .nr_nodes = 4,
		.links_ok = true, .links = klinks, .nr_links = 2,
		.stats_ok = true,
		.stats = { .faults = 11, .fetches = 12, .bytes_fetched = 49152, .writebacks = 2,
			   .errors = 1, .timeouts = 0, .cached_pages = 5, .regions = 2,
			   .lost_chunks = 4, .degraded_chunks = 9 },
	};
}

/* The line "sample" is in text, whole. */
static bool has_line(const char *text, const char *sample)
{
	size_t n = strlen(sample);
	const char *p = text;

	while ((p = strstr(p, sample))) {
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
		p++;
	}
	return false;
}

static unsigned int count_prefix(const char *text, const char *prefix)
{
	const char *p = text;
	unsigned int n = 0;

	while ((p = strstr(p, prefix))) {
		if (p == text || p[-1] == '\n')
			n++;
		p++;
	}
	return n;
}

static void test_checker(void)
{
	static const char *const bad[] = {
		"# HELP a x\n# TYPE a gauge\na 1\n# HELP a y\n# TYPE a gauge\na 2\n",
		"# HELP a x\n# TYPE a gauge\nb 1\n",
		"# HELP a x\n# TYPE a gauge\na{l=\"\\t\"} 1\n",
		"# HELP a x\n# TYPE a gauge\na{l=\"x} 1\n",
		"# HELP a x\n# TYPE a gauge\na one\n",
		"# HELP a_count x\n# TYPE a_count counter\na_count 1\n",
		"a 1\n",
		"# HELP a x\n# TYPE a gauge\na 1",
		"# HELP a x\na 1\n",
	};
	char why[256];
	unsigned int i, f, rejected = 0;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		rejected += check_format(bad[i], why, sizeof(why), &f) != 0;
	ok(rejected == sizeof(bad) / sizeof(bad[0]),
	   "the checker rejects %u broken texts of %zu (a name twice, another family, a bad escape, an open quote, a bad value, a counter without _total, no HELP, no final newline, no TYPE)",
	   rejected, sizeof(bad) / sizeof(bad[0]));
	ok(!check_format("# HELP a_total x \\\\ y\n# TYPE a_total counter\n"
			 "a_total{x=\"\\\"\\n\\\\\",y=\"\"} 1e-3\n", why, sizeof(why), &f) && f == 1,
	   "... and takes a good one");
}

static void test_render(void)
{
	struct hbmd_metrics_snap s;
	char *text = NULL, why[256];
	unsigned int fams, i, hot;
	size_t len;
	int ret;

	snap_init(&s);
	ret = hbmd_metrics_render(&s, &text, &len);
	ok(!ret && text && len == strlen(text), "render: %d, %zu bytes", ret, len);
	if (ret)
		return;
	ret = check_format(text, why, sizeof(why), &fams);
	ok(!ret && fams >= 30, "the text is exposition format 0.0.4, %u families%s%s", fams,
	   ret ? ": " : "", ret ? why : "");
	ok(has_line(text, "hbmpoold_info{domain=\"a\\\"b\\\\c\\nd\",node=\"7\"} 1"),
	   "label values escape \", \\ and newline");
	ok(has_line(text, "hbmpool_domain_epoch 42") && has_line(text, "hbmpool_domain_members 3") &&
	   has_line(text, "hbmpool_domain_leader 3") && has_line(text, "hbmpoold_is_leader 0") &&
	   has_line(text, "hbmpoold_fenced 0") && has_line(text, "hbmpoold_incarnation 1001"),
	   "epoch, members, leader, is_leader, fenced, incarnation");
	ok(has_line(text, "hbmpoold_agent_state{state=\"member\"} 1") &&
	   has_line(text, "hbmpoold_agent_state{state=\"new\"} 0") &&
	   count_prefix(text, "hbmpoold_agent_state{") == 4, "the agent's state, one-hot");
	ok(has_line(text, "hbmpoold_lease_ttl_seconds 3") &&
	   has_line(text, "hbmpoold_lease_valid_seconds 2.5"), "the lease in seconds");
	ok(has_line(text, "hbmpool_member_up{node=\"3\"} 1") &&
	   has_line(text, "hbmpool_member_up{node=\"7\"} 1") &&
	   has_line(text, "hbmpool_member_up{node=\"9\"} 0"), "members up: live and self, not fenced");
	for (i = 0, hot = 0; i < 3; i++) {
		char want[96];
		const char *st[] = { "self", "live", "fenced", "absent" };
		unsigned int j, ones = 0;

		for (j = 0; j < 4; j++) {
			snprintf(want, sizeof(want), "hbmpool_member_state{node=\"%u\",state=\"%s\"} 1",
				 members[i].id, st[j]);
			ones += has_line(text, want);
		}
		snprintf(want, sizeof(want), "hbmpool_member_state{node=\"%u\",state=\"%s\"} 1",
			 members[i].id, members[i].kernel);
		hot += ones == 1 && has_line(text, want);
	}
	ok(hot == 3 && count_prefix(text, "hbmpool_member_state{") == 12,
	   "member states one-hot: one 1 of four per member");
	ok(has_line(text, "hbmpool_node_state{node=\"11\",state=\"unreachable\"} 1") &&
	   has_line(text, "hbmpool_node_state{node=\"9\",state=\"fenced\"} 1") &&
	   has_line(text, "hbmpool_node_state{node=\"9\",state=\"live\"} 0") &&
	   has_line(text, "hbmpool_node_capacity_bytes{node=\"3\"} 1073741824") &&
	   has_line(text, "hbmpool_node_free_bytes{node=\"3\"} 536870912"),
	   "the kernel's nodes: state, capacity, free");
	ok(has_line(text, "hbmpool_link_oper_state{node=\"3\",state=\"up\"} 1") &&
	   has_line(text, "hbmpool_link_oper_state{node=\"9\",state=\"down\"} 1") &&
	   has_line(text, "hbmpool_link_health{node=\"3\",state=\"degraded\"} 1") &&
	   has_line(text, "hbmpool_link_health{node=\"3\",state=\"live\"} 0") &&
	   !strstr(text, "hbmpool_link_health{node=\"9\"") &&
	   has_line(text, "hbmpool_link_rtt_seconds{node=\"3\"} 0.0015"),
	   "links: oper state, health (none for a link without), RTT in seconds");
	ok(has_line(text, "# TYPE hbmpool_faults_total counter") &&
	   has_line(text, "hbmpool_faults_total 11") &&
	   has_line(text, "hbmpool_fetched_bytes_total 49152") &&
	   has_line(text, "# TYPE hbmpool_cached_pages gauge") &&
	   has_line(text, "hbmpool_cached_pages 5") && has_line(text, "hbmpool_regions 2") &&
	   has_line(text, "hbmpool_region_lost_chunks 4") &&
	   has_line(text, "# TYPE hbmpool_region_degraded_chunks gauge") &&
	   has_line(text, "hbmpool_region_degraded_chunks 9") &&
	   has_line(text, "hbmpoold_kernel_read_ok{read=\"stats\"} 1"),
	   "the kernel's counters (counter, _total) and gauges");
	free(text);

	/* kernel reads failed, no leader, fenced */
	snap_init(&s);
	s.nodes_ok = s.links_ok = s.stats_ok = false;
	s.leader_id = -1;
	s.state = "fenced";
	s.fenced = true;
	s.domain = "pod7";
	ret = hbmd_metrics_render(&s, &text, &len);
	i = 0;
	if (!ret && check_format(text, why, sizeof(why), &i))
		i = 0;
	ok(!ret && i == fams, "failed kernel reads: still good, the same %u families", i);
	if (ret)
		return;
	ok(has_line(text, "# TYPE hbmpool_node_state gauge") &&
	   !strstr(text, "\nhbmpool_node_state{") && !strstr(text, "\nhbmpool_link_rtt_seconds{") &&
	   !strstr(text, "\nhbmpool_faults_total ") &&
	   has_line(text, "hbmpoold_kernel_read_ok{read=\"nodes\"} 0") &&
	   has_line(text, "hbmpoold_kernel_read_ok{read=\"links\"} 0") &&
	   has_line(text, "hbmpoold_kernel_read_ok{read=\"stats\"} 0"),
	   "... families declared without samples, the failed reads at 0");
	ok(has_line(text, "hbmpool_domain_leader -1") && has_line(text, "hbmpoold_fenced 1") &&
	   has_line(text, "hbmpoold_agent_state{state=\"fenced\"} 1") &&
	   has_line(text, "hbmpoold_agent_state{state=\"member\"} 0"),
	   "no leader: -1; fenced: 1 and its state");
	free(text);

	/* no members at all */
	snap_init(&s);
	s.nr_members = 0;
	s.nr_nodes = s.nr_links = 0;
	ret = hbmd_metrics_render(&s, &text, &len);
	ok(!ret && !check_format(text, why, sizeof(why), &i) &&
	   has_line(text, "hbmpool_domain_members 0") && !strstr(text, "\nhbmpool_member_up{"),
	   "no member: still good, no member samples");
	free(text);
}

/* ---- serving ---- */

struct server {
	struct hbmd_metrics *m;
	pthread_t thread;
	int stop[2];		/* a pipe: the thread stops when it is readable */
	int fail;		/* the body callback fails (atomic) */
	unsigned int calls;	/* of the callback (atomic) */
};

static const char body[] = "# HELP t_x a test\n# TYPE t_x gauge\nt_x 1\n";

static int body_fn(void *arg, char **text, size_t *len)
{
	struct server *s = arg;

	__atomic_add_fetch(&s->calls, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&s->fail, __ATOMIC_SEQ_CST))
		return -EIO;
	*text = strdup(body);
	*len = strlen(body);
	return *text ? 0 : -ENOMEM;
}

/* The daemon's way: the io_uring loop waits on MHD's epoll descriptor and MHD's timeout. */
static void *serve(void *arg)
{
	struct server *s = arg;
	struct hbmd_loop loop;
	struct pollfd fds[2];
	char err[128];
	int sig;

	if (hbmd_loop_init(&loop, false, err, sizeof(err))) {
		fprintf(stderr, "# loop: %s\n", err);
		return NULL;
	}
	for (;;) {
		fds[0] = (struct pollfd){ .fd = hbmd_metrics_fd(s->m), .events = POLLIN };
		fds[1] = (struct pollfd){ .fd = s->stop[0], .events = POLLIN };
		if (hbmd_loop_wait(&loop, fds, 2, hbmd_metrics_deadline(s->m), &sig) < 0)
			break;
		if (fds[1].revents)
			break;
		hbmd_metrics_run(s->m);
	}
	hbmd_loop_fini(&loop);
	return NULL;
}

struct reply {
	long status;
	char headers[2048];
	char body[4096];
	size_t hlen, blen;
};

static size_t on_body(char *p, size_t sz, size_t n, void *arg)
{
	struct reply *r = arg;
	size_t len = sz * n, room = sizeof(r->body) - 1 - r->blen;

	memcpy(r->body + r->blen, p, len < room ? len : room);
	r->blen += len < room ? len : room;
	r->body[r->blen] = '\0';
	return len;
}

static size_t on_header(char *p, size_t sz, size_t n, void *arg)
{
	struct reply *r = arg;
	size_t len = sz * n, room = sizeof(r->headers) - 1 - r->hlen;

	memcpy(r->headers + r->hlen, p, len < room ? len : room);
	r->hlen += len < room ? len : room;
	r->headers[r->hlen] = '\0';
	return len;
}

/* One request; 0 or the curl error (then r->status is 0). */
static int request(CURL *c, const char *method, const char *url, struct reply *r)
{
	CURLcode rc;

	memset(r, 0, sizeof(*r));
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);	/* resets NOBODY and POST */
	curl_easy_setopt(c, CURLOPT_NOBODY, (long)!strcmp(method, "HEAD"));
	if (!strcmp(method, "POST")) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, "x=1");
	} else if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	}
	if (!strcmp(method, "GET") || !strcmp(method, "HEAD") || !strcmp(method, "POST"))
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, NULL);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 3000L);
	rc = curl_easy_perform(c);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	return (int)rc;
}

static bool header_is(const struct reply *r, const char *line)
{
	return strstr(r->headers, line) != NULL;
}

static int server_start(struct server *s, const char *listen_addr, char *err, size_t errlen)
{
	int ret;

	memset(s, 0, sizeof(*s));
	ret = hbmd_metrics_open(listen_addr, body_fn, s, &s->m, err, errlen);
	if (ret)
		return ret;
	if (pipe(s->stop) || pthread_create(&s->thread, NULL, serve, s)) {
		hbmd_metrics_close(s->m);
		return -errno;
	}
	return 0;
}

static void server_stop(struct server *s)
{
	if (write(s->stop[1], "x", 1) != 1)
		return;
	pthread_join(s->thread, NULL);
	close(s->stop[0]);
	close(s->stop[1]);
	hbmd_metrics_close(s->m);
}

static void test_serve(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char url[96], base[64], err[160], addr[64];
	struct hbmd_metrics *m2;
	struct server s, s6;
	struct reply r;
	unsigned int i, good;
	uint16_t port;
	CURL *c;
	int ret, fd;

	ret = server_start(&s, "127.0.0.1:0", err, sizeof(err));
	ok(!ret && hbmd_metrics_port(s.m) > 0, "listening on 127.0.0.1:%u (%s)",
	   ret ? 0 : hbmd_metrics_port(s.m), ret ? err : "ok");
	if (ret)
		return;
	port = hbmd_metrics_port(s.m);
	snprintf(base, sizeof(base), "http://127.0.0.1:%u", port);
	c = curl_easy_init();

	snprintf(url, sizeof(url), "%s/metrics", base);
	ret = request(c, "GET", url, &r);
	ok(!ret && r.status == 200 && !strcmp(r.body, body), "GET /metrics: 200 and the body (%d, %ld)",
	   ret, r.status);
	ok(header_is(&r, "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"),
	   "Content-Type: text/plain; version=0.0.4");
	for (i = 0, good = 0; i < 20; i++)
		good += !request(c, "GET", url, &r) && r.status == 200 && !strcmp(r.body, body);
	ok(good == 20, "20 scrapes in a row on one connection: %u good", good);

	snprintf(url, sizeof(url), "%s/metrics?x=1", base);
	ret = request(c, "GET", url, &r);
	ok(!ret && r.status == 200, "a query string is ignored: %ld",
	   r.status);
	ret = request(c, "HEAD", url, &r);
	ok(!ret && r.status == 200 && !r.blen && header_is(&r, "version=0.0.4"),
	   "HEAD /metrics: 200, no body (%d, %ld)", ret, r.status);

	snprintf(url, sizeof(url), "%s/", base);
	ret = request(c, "GET", url, &r);
	ok(!ret && r.status == 404, "GET /: 404 (%ld)", r.status);
	snprintf(url, sizeof(url), "%s/metricsx", base);
	ret = request(c, "GET", url, &r);
	ok(!ret && r.status == 404, "GET /metricsx: 404 (%ld)", r.status);
	snprintf(url, sizeof(url), "%s/other", base);
	ret = request(c, "POST", url, &r);
	ok(!ret && r.status == 404, "POST /other: 404 (%ld)", r.status);

	snprintf(url, sizeof(url), "%s/metrics", base);
	ret = request(c, "POST", url, &r);
	ok(!ret && r.status == 405 && header_is(&r, "Allow: GET, HEAD\r\n"),
	   "POST /metrics: 405 with Allow: GET, HEAD (%d, %ld)", ret, r.status);
	ret = request(c, "PUT", url, &r);
	ok(!ret && r.status == 405, "PUT /metrics: 405 (%ld)", r.status);
	ret = request(c, "DELETE", url, &r);
	ok(!ret && r.status == 405, "DELETE /metrics: 405 (%ld)",
	   r.status);

	__atomic_store_n(&s.fail, 1, __ATOMIC_SEQ_CST);
	ret = request(c, "GET", url, &r);
	ok(!ret && r.status == 500, "the body cannot be made: 500 (%ld)",
	   r.status);
	__atomic_store_n(&s.fail, 0, __ATOMIC_SEQ_CST);

	/* a client that sends half a request and waits: the loop goes on */
	a.sin_port = htons(port);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	ret = fd >= 0 && !connect(fd, (struct sockaddr *)&a, sizeof(a)) &&
	      write(fd, "GET /metr", 9) == 9;
	curl_easy_cleanup(c);
	c = curl_easy_init();	/* a new connection */
	ret = ret && !request(c, "GET", url, &r);
	ok(ret && r.status == 200,
	   "a client stuck in the middle of its request blocks no scrape (%ld)", r.status);
	if (fd >= 0)
		close(fd);

	snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
	ret = hbmd_metrics_open(addr, body_fn, &s, &m2, err, sizeof(err));
	ok(ret == -EADDRINUSE && strstr(err, "in use"), "the same port again: %d (%s)", ret, err);
	if (!ret)
		hbmd_metrics_close(m2);
	ret = hbmd_metrics_open("localhost:9477", body_fn, &s, &m2, err, sizeof(err));
	ok(ret == -EINVAL && strstr(err, "localhost:9477"), "a host name: %d (%s)", ret, err);
	if (!ret)
		hbmd_metrics_close(m2);

	server_stop(&s);
	ret = request(c, "GET", url, &r);
	ok(ret == CURLE_COULDNT_CONNECT, "closed: nothing listens any more (curl %d)", ret);
	ret = hbmd_metrics_open(addr, body_fn, &s, &m2, err, sizeof(err));
	ok(!ret, "... and the port can be taken again at once (%s)", ret ? err : "ok");
	if (!ret)
		hbmd_metrics_close(m2);

	ret = server_start(&s6, "[::1]:0", err, sizeof(err));
	if (ret == -EADDRNOTAVAIL || ret == -EAFNOSUPPORT) {
		ok(1, "# SKIP no IPv6 loopback here: %s", err);
	} else {
		snprintf(url, sizeof(url), "http://[::1]:%u/metrics",
			 ret ? 0 : hbmd_metrics_port(s6.m));
		if (!ret)
			ret = request(c, "GET", url, &r);
		ok(!ret && r.status == 200 &&
		   !strcmp(r.body, body), "[::1]: GET /metrics: 200 (%s, %ld)",
		   ret ? err : "ok", r.status);
		if (!ret)
			server_stop(&s6);
	}
	curl_easy_cleanup(c);
}

/* ---- the config ---- */

static void test_config(void)
{
	static const char *const bad[] = {
		"localhost:9477", "127.0.0.1", "127.0.0.1:0", "[::1]:70000", "::1:9477",
	};
	char dir[] = "/tmp/metrics_unit.XXXXXX", conf[64], key[64], why[256];
	struct hbm_config cf;
	unsigned int i, refused = 0;
	char *errors;
	FILE *f;
	int ret;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	snprintf(key, sizeof(key), "%s/k", dir);
	snprintf(conf, sizeof(conf), "%s/c", dir);
	f = fopen(key, "w");
	if (f) {
		fputs("0123456789abcdef", f);
		fclose(f);
	}
	for (i = 0; i <= sizeof(bad) / sizeof(bad[0]); i++) {
		f = fopen(conf, "w");
		if (!f)
			break;
		fprintf(f, "[domain]\nname = d\nkey_file = %s\n[node]\nid = 1\naddress = 127.0.0.1\n"
			"segment_size = 1M\n[etcd]\nendpoints = http://127.0.0.1:2379\n"
			"[metrics]\nlisten = %s\n", key,
			i < sizeof(bad) / sizeof(bad[0]) ? bad[i] : "127.0.0.1:9100");
		fclose(f);
		ret = hbm_config_load(conf, &cf, &errors);
		if (i < sizeof(bad) / sizeof(bad[0])) {
			snprintf(why, sizeof(why), ":11: [metrics] listen: \"%s\": must be", bad[i]);
			refused += ret == -EINVAL && errors && strstr(errors, why);
		} else {
			ok(!ret && cf.metrics_listen && !strcmp(cf.metrics_listen, "127.0.0.1:9100"),
			   "the config takes [metrics] listen = 127.0.0.1:9100 (%d)", ret);
		}
		free(errors);
		if (!ret)
			hbm_config_free(&cf);
	}
	ok(refused == sizeof(bad) / sizeof(bad[0]),
	   "the config refuses %u bad [metrics] listen values of %zu, naming line and key",
	   refused, sizeof(bad) / sizeof(bad[0]));
	unlink(conf);
	unlink(key);
	rmdir(dir);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	test_checker();
	test_render();
	test_serve();
	test_config();
	curl_global_cleanup();
	return tap_finish();
}
