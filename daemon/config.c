// SPDX-License-Identifier: GPL-2.0
/*
 * hbmpoold's configuration file: see config.h and
 * Documentation/hbmpoold.conf.rst.
 *
 * inih calls a handler per "key = value" but does not tell it the line
 * (INI_HANDLER_LINENO is a build option of the library, off in Debian's),
 * so the file is fed through ini_parse_stream() with a reader that counts
 * lines: inih handles each line before it reads the next, so the count is
 * the handler's line.  The reader also sees section headers, which is
 * where an unknown (even an empty) section is caught, and lines too long
 * for inih's buffer, which inih would otherwise split in two.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ini.h>

#include "config.h"

enum key_type {
	T_NAME,		/* a name (the domain's), into a char array */
	T_LOC,		/* a location name (topology.h), into a char array */
	T_PATH,		/* an absolute path, strdup'ed */
	T_PREFIX,	/* an etcd key prefix, strdup'ed */
	T_UINT,		/* unsigned int in [min, max] */
	T_PORT,		/* uint16_t in [min, max] */
	T_ADDR,		/* an IPv4 or IPv6 literal, strdup'ed */
	T_SIZE,		/* uint64_t bytes, K/M/G/T suffixes */
	T_ENDPOINTS,	/* comma list of http(s)://host:port */
	T_BOOL,		/* yes/no, true/false, on/off, 1/0 */
	T_LISTEN,	/* ADDR:PORT or [ADDR6]:PORT, strdup'ed; empty or "off": NULL */
	T_PROVIDER,	/* a segment provider, "ram" or "shm", into a char array */
	T_PCI,		/* a PCI name "DDDD:BB:DD.F", into a char array */
};

struct key {
	const char *section;
	const char *name;
	enum key_type type;
	size_t off;
	bool required;
	unsigned long min, max;
	const char *unit;	/* for messages */
};

#define OFF(f)	offsetof(struct hbm_config, f)

/* section, name, type, field, required, min, max, unit */
#define KEY(s, n, t, f, r, lo, hi, u) \
	{ .section = s, .name = n, .type = t, .off = OFF(f), .required = r, \
	  .min = lo, .max = hi, .unit = u }

static const struct key keys[] = {
	KEY("domain", "name", T_NAME, domain, true, 0, 0, NULL),
	KEY("domain", "key_file", T_PATH, key_file, true, 0, 0, NULL),
	KEY("domain", "etcd_prefix", T_PREFIX, etcd_prefix, false, 0, 0, NULL),
	KEY("node", "id", T_UINT, node_id, true, 0, HBM_CONF_MAX_NODES - 1, NULL),
	KEY("node", "address", T_ADDR, address, true, 0, 0, NULL),
	KEY("node", "port", T_PORT, port, false, 1, 65535, NULL),
	KEY("node", "segment_size", T_SIZE, segment_bytes, true, 0, 0, NULL),
	KEY("node", "tray", T_LOC, loc.tray, false, 0, 0, NULL),
	KEY("node", "rack", T_LOC, loc.rack, false, 0, 0, NULL),
	KEY("node", "site", T_LOC, loc.site, false, 0, 0, NULL),
	KEY("node", "failure_domain", T_UINT, failure_domain, false, 0, UINT32_MAX, "(0: none)"),
	KEY("node", "segment_provider", T_PROVIDER, segment_provider, false, 0, 0, NULL),
	KEY("node", "segment_device", T_PCI, segment_device, false, 0, 0, NULL),
	KEY("etcd", "endpoints", T_ENDPOINTS, endpoints, true, 0, 0, NULL),
	KEY("etcd", "ca_file", T_PATH, ca_file, false, 0, 0, NULL),
	KEY("etcd", "cert_file", T_PATH, cert_file, false, 0, 0, NULL),
	KEY("etcd", "key_file", T_PATH, key_file_tls, false, 0, 0, NULL),
	KEY("etcd", "connect_timeout_ms", T_UINT, connect_timeout_ms, false, 100, 60000, "ms"),
	KEY("etcd", "request_timeout_ms", T_UINT, request_timeout_ms, false, 100, 60000, "ms"),
	KEY("etcd", "lease_ttl", T_UINT, lease_ttl_s, false, 2, 60, "seconds"),
	KEY("health", "interval_ms", T_UINT, health_interval_ms, false, 100, 60000, "ms"),
	KEY("health", "degraded_rtt_us", T_UINT, degraded_rtt_us, false, 1, 60000000, "us"),
	KEY("health", "degraded_error_pct", T_UINT, degraded_error_pct, false, 1, 100, "%"),
	KEY("health", "down_error_pct", T_UINT, down_error_pct, false, 1, 100, "%"),
	KEY("health", "error_window_ms", T_UINT, error_window_ms, false, 100, 600000, "ms"),
	KEY("health", "degrade_after", T_UINT, degrade_after, false, 1, 100, "samples"),
	KEY("health", "down_after", T_UINT, down_after, false, 1, 100, "samples"),
	KEY("health", "recover_after", T_UINT, recover_after, false, 1, 1000, "samples"),
	KEY("health", "hold_ms", T_UINT, hold_ms, false, 0, 3600000, "ms"),
	KEY("placement", "avoid_degraded", T_BOOL, avoid_degraded, false, 0, 0, NULL),
	KEY("placement", "full_pct", T_UINT, full_pct, false, 1, 100, "%"),
	/* closest first, as enum hbm_relation: check_all() holds them in order */
	KEY("distance", "same_tray", T_UINT, dist.d[HBM_REL_TRAY], false, HBM_DIST_MIN,
	    HBM_DIST_MAX, NULL),
	KEY("distance", "same_rack", T_UINT, dist.d[HBM_REL_RACK], false, HBM_DIST_MIN,
	    HBM_DIST_MAX, NULL),
	KEY("distance", "same_site", T_UINT, dist.d[HBM_REL_SITE], false, HBM_DIST_MIN,
	    HBM_DIST_MAX, NULL),
	KEY("distance", "other", T_UINT, dist.d[HBM_REL_OTHER], false, HBM_DIST_MIN,
	    HBM_DIST_MAX, NULL),
	KEY("drain", "jobs", T_UINT, drain_jobs, false, 1, 64, NULL),
	KEY("drain", "mbps", T_UINT, drain_mbps, false, 0, 1000000, "MiB/s"),
	KEY("metrics", "listen", T_LISTEN, metrics_listen, false, 0, 0, NULL),
	KEY("control", "socket", T_PATH, control_socket, false, 0, 0, NULL),
	KEY("shm", "discover", T_BOOL, shm_discover, false, 0, 0, NULL),
};

#define NKEYS	(sizeof(keys) / sizeof(keys[0]))
_Static_assert(NKEYS <= HBM_CONF_MAX_KEYS, "struct hbm_config's line[] is too short");

#define SEG_MIN		4096ULL
#define SEG_MAX		(1ULL << 40)	/* the kernel's segment-new limit */
#define PAGE		4096ULL
#define METRICS_LISTEN	"127.0.0.1:9477"	/* [metrics] listen's default */

struct ctx {
	const char *path;
	FILE *f;
	struct hbm_config *conf;
	unsigned int line;		/* of the line inih handles now */
	bool in_unknown;		/* inside a reported unknown section */
	unsigned int seen[NKEYS];	/* line where each key was set, 0 never */
	char *err;			/* the messages, "\n"-terminated */
	size_t err_len;
	int nerr;
	bool nomem;
};

static void err_add(struct ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void err_add(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	char *p;
	int n;

	c->nerr++;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	p = realloc(c->err, c->err_len + n + 2);
	if (!p) {
		c->nomem = true;
		return;
	}
	c->err = p;
	va_start(ap, fmt);
	vsnprintf(c->err + c->err_len, n + 1, fmt, ap);
	va_end(ap);
	c->err_len += n;
	c->err[c->err_len++] = '\n';
	c->err[c->err_len] = '\0';
}

/* "FILE:LINE: [SECTION] KEY: " then the message. */
#define key_err(c, k, line, fmt, ...) \
	err_add(c, "%s:%u: [%s] %s: " fmt, (c)->path, line, (k)->section, (k)->name, \
		##__VA_ARGS__)

static const struct key *key_find(const char *section, const char *name)
{
	size_t i;

	for (i = 0; i < NKEYS; i++)
		if (!strcmp(keys[i].section, section) && !strcmp(keys[i].name, name))
			return &keys[i];
	return NULL;
}

static bool section_known(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < NKEYS; i++)
		if (strlen(keys[i].section) == len && !strncmp(keys[i].section, s, len))
			return true;
	return false;
}

/* Unsigned decimal, digits only: no sign, no space, no 0x. */
static int parse_ulong(const char *s, unsigned long *out)
{
	unsigned long v;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE)
		return -ERANGE;
	*out = v;
	return 0;
}

bool hbm_config_pci_name_valid(const char *s)
{
	static const char form[] = "xxxx:xx:xx.x";	/* x: a lower-case hex digit */
	size_t i;

	if (strlen(s) != sizeof(form) - 1)
		return false;
	for (i = 0; form[i]; i++) {
		if (form[i] != 'x' ? s[i] != form[i] :
		    !isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	}
	/* device 0..0x1f, function 0..7 */
	return strtoul(s + 8, NULL, 16) <= 0x1f && s[11] <= '7';
}

int hbm_config_parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end) {
		const char *u = strchr("KMGT", toupper((unsigned char)*end));

		if (u) {
			shift = 10 * (u - "KMGT" + 1);
			end++;
		}
	}
	if (shift && !strcmp(end, "iB"))
		end += 2;
	else if (*end == 'B')
		end++;
	if (*end)
		return -EINVAL;
	if (shift && v > (~0ULL >> shift))
		return -ERANGE;
	*out = (uint64_t)v << shift;
	return 0;
}

int hbm_config_parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	const char *colon, *h = s;
	unsigned long port;
	char host[INET6_ADDRSTRLEN];
	size_t hl;

	memset(ss, 0, sizeof(*ss));
	if (*s == '[') {
		colon = strchr(s, ']');
		if (!colon || colon[1] != ':')
			return -EINVAL;
		h = s + 1;
		hl = colon - h;
		colon++;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -EINVAL;
		hl = colon - s;
	}
	if (!hl || hl >= sizeof(host) || parse_ulong(colon + 1, &port) || port > 65535)
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	if (*s != '[') {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			return -EINVAL;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		*len = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			return -EINVAL;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		*len = sizeof(*a);
	}
	return 0;
}

static bool valid_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > HBM_CONF_NAME_MAX)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' && *s != '.')
			return false;
	return true;
}

/*
 * One endpoint: http:// or https://, a host (a name, an IPv4 literal or an
 * IPv6 literal in brackets), a port 1..65535, nothing after it but an
 * optional "/".  Returns NULL if good, else what is wrong.
 */
static const char *check_endpoint(const char *ep, bool *https)
{
	const char *h, *p, *colon;
	unsigned long port;
	char host[256], num[8];
	size_t hl;

	if (!strncmp(ep, "http://", 7)) {
		*https = false;
		h = ep + 7;
	} else if (!strncmp(ep, "https://", 8)) {
		*https = true;
		h = ep + 8;
	} else {
		return "must start with http:// or https://";
	}
	if (*h == '[') {
		p = strchr(h, ']');
		if (!p)
			return "an IPv6 address needs its closing ']'";
		hl = p - h - 1;
		if (hl == 0 || hl >= sizeof(host))
			return "bad IPv6 address";
		memcpy(host, h + 1, hl);
		host[hl] = '\0';
		{
			struct in6_addr a6;

			if (inet_pton(AF_INET6, host, &a6) != 1)
				return "bad IPv6 address";
		}
		colon = p + 1;
		if (*colon != ':')
			return "needs a port (host:port)";
	} else {
		colon = strchr(h, ':');
		if (!colon)
			return "needs a port (host:port)";
		hl = colon - h;
		if (hl == 0 || hl >= sizeof(host))
			return "needs a host";
		for (p = h; p < colon; p++)
			if (!isalnum((unsigned char)*p) && *p != '-' && *p != '.')
				return "bad character in host";
	}
	p = colon + 1;
	hl = strcspn(p, "/");
	if (hl == 0 || hl >= sizeof(num))
		return "bad port";
	memcpy(num, p, hl);
	num[hl] = '\0';
	if (parse_ulong(num, &port) || port < 1 || port > 65535)
		return "port must be 1..65535";
	p += hl;
	if (*p && strcmp(p, "/"))
		return "nothing may follow host:port";
	return NULL;
}

static void set_endpoints(struct ctx *c, const struct key *k, const char *value)
{
	struct hbm_config *conf = c->conf;
	char *list, *rest, *tok;
	bool https, any_http = false, any_https = false;
	const char *why;
	size_t n;

	list = strdup(value);
	if (!list) {
		c->nomem = true;
		return;
	}
	rest = list;
	while ((tok = strsep(&rest, ","))) {
		while (isspace((unsigned char)*tok))
			tok++;
		n = strlen(tok);
		while (n && isspace((unsigned char)tok[n - 1]))
			tok[--n] = '\0';
		if (!n) {
			key_err(c, k, c->line, "empty endpoint in the list");
			continue;
		}
		why = check_endpoint(tok, &https);
		if (why) {
			key_err(c, k, c->line, "\"%s\": %s", tok, why);
			continue;
		}
		if (conf->nr_endpoints == HBM_CONF_MAX_ENDPOINTS) {
			key_err(c, k, c->line, "more than %d endpoints", HBM_CONF_MAX_ENDPOINTS);
			break;
		}
		if (n && tok[n - 1] == '/')
			tok[n - 1] = '\0';
		conf->endpoints[conf->nr_endpoints] = strdup(tok);
		if (!conf->endpoints[conf->nr_endpoints]) {
			c->nomem = true;
			break;
		}
		conf->nr_endpoints++;
		any_http |= !https;
		any_https |= https;
	}
	free(list);
	if (any_http && any_https)
		key_err(c, k, c->line, "mixes http:// and https:// endpoints");
	if (!conf->nr_endpoints && !c->nerr)
		key_err(c, k, c->line, "no endpoint");
}

static void set_string(struct ctx *c, const struct key *k, const char *value)
{
	char **dst = (char **)((char *)c->conf + k->off);

	free(*dst);
	*dst = strdup(value);
	if (!*dst)
		c->nomem = true;
}

static void set_key(struct ctx *c, const struct key *k, const char *value)
{
	char *field = (char *)c->conf + k->off;
	unsigned long v;
	uint64_t sz;
	int ret;

	switch (k->type) {
	case T_LOC:
	case T_NAME:
		if (!valid_name(value)) {
			key_err(c, k, c->line,
				"\"%s\": must be 1..%d of A-Z a-z 0-9 . _ -", value,
				HBM_CONF_NAME_MAX);
			return;
		}
		strcpy(field, value);
		return;
	case T_PATH:
		if (value[0] != '/') {
			key_err(c, k, c->line, "\"%s\": must be an absolute path", value);
			return;
		}
		set_string(c, k, value);
		return;
	case T_PREFIX: {
		size_t n = strlen(value);

		if (value[0] != '/' || n < 2 || value[n - 1] == '/' || strstr(value, "//") ||
		    strpbrk(value, " \t")) {
			key_err(c, k, c->line,
				"\"%s\": must start with '/', not end with one, hold no \"//\" and no space",
				value);
			return;
		}
		set_string(c, k, value);
		return;
	}
	case T_UINT:
	case T_PORT:
		ret = parse_ulong(value, &v);
		if (ret || v < k->min || v > k->max) {
			key_err(c, k, c->line, "must be %lu..%lu%s%s, not \"%s\"", k->min, k->max,
				k->unit ? " " : "", k->unit ? k->unit : "", value);
			return;
		}
		if (k->type == T_UINT)
			*(unsigned int *)field = v;
		else
			*(uint16_t *)field = v;
		return;
	case T_ADDR: {
		struct in6_addr a;

		if (inet_pton(AF_INET, value, &a) != 1 && inet_pton(AF_INET6, value, &a) != 1) {
			key_err(c, k, c->line,
				"\"%s\": must be an IPv4 or IPv6 address (not a host name)", value);
			return;
		}
		set_string(c, k, value);
		return;
	}
	case T_SIZE:
		ret = hbm_config_parse_size(value, &sz);
		if (ret) {
			key_err(c, k, c->line,
				"\"%s\": must be a size in bytes, with an optional K, M, G or T",
				value);
			return;
		}
		if (sz < SEG_MIN || sz > SEG_MAX || sz % PAGE) {
			key_err(c, k, c->line,
				"\"%s\": must be a multiple of 4K from 4K to 1T", value);
			return;
		}
		*(uint64_t *)field = sz;
		return;
	case T_ENDPOINTS:
		set_endpoints(c, k, value);
		return;
	case T_BOOL:
		if (!strcmp(value, "yes") || !strcmp(value, "true") || !strcmp(value, "on") ||
		    !strcmp(value, "1"))
			*(bool *)field = true;
		else if (!strcmp(value, "no") || !strcmp(value, "false") ||
			 !strcmp(value, "off") || !strcmp(value, "0"))
			*(bool *)field = false;
		else
			key_err(c, k, c->line, "\"%s\": must be yes or no", value);
		return;
	case T_LISTEN: {
		struct sockaddr_storage ss;
		socklen_t len;

		if (!*value || !strcmp(value, "off")) {
			free(*(char **)field);
			*(char **)field = NULL;
			return;
		}
		if (hbm_config_parse_listen(value, &ss, &len) ||
		    !((struct sockaddr_in *)&ss)->sin_port) {
			key_err(c, k, c->line,
				"\"%s\": must be ADDR:PORT (an IPv4 address, or an IPv6 one in brackets; port 1..65535), or off",
				value);
			return;
		}
		set_string(c, k, value);
		return;
	}
	case T_PROVIDER:
		if (strcmp(value, "ram") && strcmp(value, "shm")) {
			key_err(c, k, c->line, "\"%s\": must be ram or shm", value);
			return;
		}
		strcpy(field, value);
		return;
	case T_PCI:
		if (!hbm_config_pci_name_valid(value)) {
			key_err(c, k, c->line,
				"\"%s\": must be a PCI device's name as sysfs spells it, DDDD:BB:DD.F (lower-case hex, e.g. 0000:00:11.0)",
				value);
			return;
		}
		strcpy(field, value);
		return;
	}
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct ctx *c = user;
	const struct key *k;

	if (c->in_unknown)
		return 1;	/* the section was reported */
	k = key_find(section, name);
	if (!k) {
		err_add(c, "%s:%u: [%s] %s: unknown key", c->path, c->line, section, name);
		return 1;
	}
	if (c->seen[k - keys]) {
		key_err(c, k, c->line, "given twice (first on line %u)", c->seen[k - keys]);
		return 1;
	}
	c->seen[k - keys] = c->line;
	if (!*value && k->type != T_LISTEN) {
		key_err(c, k, c->line, "empty value");
		return 1;
	}
	set_key(c, k, value);
	return 1;
}

/*
 * inih's reader: one line per call.  Counts lines, checks section headers,
 * and reports what inih would get wrong or report only once: a line too
 * long for its buffer (it would split it in two) and every line that is
 * neither a comment, "[section]" nor "key = value" (inih reports only the
 * first).  Such lines reach inih as empty lines.  Leading whitespace is
 * removed, so that an indented key is not taken for the continuation of
 * the previous value (inih's multi-line values).
 */
static char *reader(char *buf, int size, void *stream)
{
	struct ctx *c = stream;
	size_t n, lead;
	int ch;

	if (!fgets(buf, size, c->f))
		return NULL;
	c->line++;
	n = strlen(buf);
	if (n && buf[n - 1] != '\n' && !feof(c->f)) {
		while ((ch = getc(c->f)) != EOF && ch != '\n')
			;
		err_add(c, "%s:%u: line longer than %d characters", c->path, c->line, size - 3);
		strcpy(buf, "\n");
		return buf;
	}
	lead = strspn(buf, " \t");
	if (lead)
		memmove(buf, buf + lead, n - lead + 1);
	if (buf[0] == '[') {
		const char *e = strchr(buf, ']');

		if (!e)
			goto bad;
		c->in_unknown = !section_known(buf + 1, e - buf - 1);
		if (c->in_unknown)
			err_add(c, "%s:%u: [%.*s]: unknown section", c->path, c->line,
				(int)(e - buf - 1), buf + 1);
		return buf;
	}
	if (!strchr(";#\r\n", buf[0]) && !strpbrk(buf, "=:"))
		goto bad;
	return buf;
bad:
	err_add(c, "%s:%u: neither \"[section]\" nor \"key = value\"", c->path, c->line);
	strcpy(buf, "\n");
	return buf;
}

/* The index in keys[] of relation r's [distance] key. */
static size_t dist_key(unsigned int r)
{
	size_t i;

	for (i = 0; i < NKEYS; i++)
		if (keys[i].off == OFF(dist.d[0]) + r * sizeof(unsigned int))
			return i;
	abort();	/* keys[] lacks one: a bug */
}

static void check_file(struct ctx *c, const struct key *k, const char *path)
{
	if (access(path, R_OK))
		key_err(c, k, c->seen[k - keys], "%s: %s", path, strerror(errno));
}

/*
 * Two [health] keys against each other: the message names the first key
 * if it was set, else the second (with its line, 0 if not set either).
 */
static void health_check(struct ctx *c, const char *first, const char *second, bool good,
			 const char *msg)
{
	const struct key *k = key_find("health", first);

	if (good)
		return;
	if (!c->seen[k - keys])
		k = key_find("health", second);
	err_add(c, "%s:%u: [health] %s: %s", c->path, c->seen[k - keys], k->name, msg);
}

/*
 * [distance]: a closer relation is never farther.  Each pair out of order
 * is reported once, naming the farther relation's key if it was set (the
 * one that is too small), else the closer one's (too large).
 */
static void distance_check(struct ctx *c)
{
	const struct hbm_distances *d = &c->conf->dist;
	const struct key *near, *far, *k;
	unsigned int i, j;

	for (i = HBM_REL_TRAY; i < HBM_REL_OTHER; i++) {
		for (j = i + 1; j < HBM_REL_COUNT; j++)
			if (d->d[j] < d->d[i])
				break;
		if (j == HBM_REL_COUNT)
			continue;
		near = &keys[dist_key(i)];
		far = &keys[dist_key(j)];
		k = c->seen[far - keys] ? far : near;
		err_add(c, "%s:%u: [distance] %s: %s (%u) is less than %s (%u): a closer relation must never be farther",
			c->path, c->seen[k - keys], k->name, far->name, d->d[j], near->name, d->d[i]);
		return;		/* one message: the first pair out of order */
	}
}

/*
 * [node] segment_provider and segment_device together: shm needs a
 * device, ram takes none.
 */
static void provider_check(struct ctx *c)
{
	const struct key *prov = key_find("node", "segment_provider");
	const struct key *dev = key_find("node", "segment_device");
	const struct hbm_config *conf = c->conf;
	bool shm = !strcmp(conf->segment_provider, "shm");

	if (shm && !*conf->segment_device)
		key_err(c, prov, c->seen[prov - keys],
			"shm needs [node] segment_device (this node's ivshmem device, DDDD:BB:DD.F)");
	else if (!shm && c->seen[dev - keys])
		key_err(c, dev, c->seen[dev - keys],
			"set, but segment_provider is ram: a device is for provider shm only");
}

/* The checks that need the whole file: required keys, keys together. */
static void check_all(struct ctx *c)
{
	struct hbm_config *conf = c->conf;
	const struct key *k;
	struct stat st;
	char msg[128];
	bool https;
	size_t i;

	for (i = 0; i < NKEYS; i++)
		if (keys[i].required && !c->seen[i])
			err_add(c, "%s: [%s] %s: required key missing", c->path, keys[i].section,
				keys[i].name);

	if (conf->key_file) {
		k = key_find("domain", "key_file");
		if (stat(conf->key_file, &st))
			key_err(c, k, c->seen[k - keys], "%s: %s", conf->key_file, strerror(errno));
		else if (!S_ISREG(st.st_mode) || st.st_size < 16 || st.st_size > 64)
			key_err(c, k, c->seen[k - keys],
				"%s: must be a file of 16 to 64 bytes (it has %lld)",
				conf->key_file, (long long)st.st_size);
		else
			check_file(c, k, conf->key_file);
	}

	https = conf->nr_endpoints && !strncmp(conf->endpoints[0], "https:", 6);
	for (i = 0; i < NKEYS; i++) {
		char *f;

		k = &keys[i];
		if (strcmp(k->section, "etcd") || k->type != T_PATH)
			continue;
		f = *(char **)((char *)conf + k->off);
		if (!f)
			continue;
		if (conf->nr_endpoints && !https)
			key_err(c, k, c->seen[i], "set, but the endpoints are http://, not https://");
		else
			check_file(c, k, f);
	}
	if (!conf->cert_file != !conf->key_file_tls) {
		k = key_find("etcd", conf->cert_file ? "cert_file" : "key_file");
		key_err(c, k, c->seen[k - keys], "needs [etcd] %s too",
			conf->cert_file ? "key_file" : "cert_file");
	}

	/* A keepalive every lease_ttl / 3 must end before the next one. */
	if (conf->request_timeout_ms * 3 >= conf->lease_ttl_s * 1000) {
		k = key_find("etcd", "lease_ttl");
		i = k - keys;
		if (!c->seen[i]) {
			k = key_find("etcd", "request_timeout_ms");
			i = k - keys;
		}
		err_add(c, "%s:%u: [etcd] %s: lease_ttl (%u s) must be over 3 x request_timeout_ms (%u ms): the lease is renewed every third of it",
			c->path, c->seen[i], k->name, conf->lease_ttl_s,
			conf->request_timeout_ms);
	}
	distance_check(c);
	provider_check(c);
	snprintf(msg, sizeof(msg), "down_error_pct (%u) must be over degraded_error_pct (%u)",
		 conf->down_error_pct, conf->degraded_error_pct);
	health_check(c, "down_error_pct", "degraded_error_pct",
		     conf->down_error_pct > conf->degraded_error_pct, msg);
	snprintf(msg, sizeof(msg), "error_window_ms (%u) must be at least interval_ms (%u)",
		 conf->error_window_ms, conf->health_interval_ms);
	health_check(c, "error_window_ms", "interval_ms",
		     conf->error_window_ms >= conf->health_interval_ms, msg);
}

static void defaults(struct hbm_config *conf)
{
	memset(conf, 0, sizeof(*conf));
	conf->port = 7070;
	conf->connect_timeout_ms = 1000;
	conf->request_timeout_ms = 2000;
	conf->lease_ttl_s = 10;
	conf->health_interval_ms = 1000;
	conf->degraded_rtt_us = 200000;
	conf->degraded_error_pct = 5;
	conf->down_error_pct = 50;
	conf->error_window_ms = 10000;
	conf->degrade_after = 3;
	conf->down_after = 3;
	conf->recover_after = 5;
	conf->hold_ms = 10000;
	conf->avoid_degraded = true;
	conf->full_pct = 95;
	conf->drain_mbps = HBM_CONF_UNSET;
	strcpy(conf->segment_provider, "ram");
	conf->shm_discover = true;
	conf->dist.d[HBM_REL_TRAY] = HBM_DIST_TRAY_DEFAULT;
	conf->dist.d[HBM_REL_RACK] = HBM_DIST_RACK_DEFAULT;
	conf->dist.d[HBM_REL_SITE] = HBM_DIST_SITE_DEFAULT;
	conf->dist.d[HBM_REL_OTHER] = HBM_DIST_OTHER_DEFAULT;
}

static int default_strings(struct ctx *c)
{
	struct hbm_config *conf = c->conf;
	const struct key *k = key_find("metrics", "listen");

	if (!conf->etcd_prefix)
		conf->etcd_prefix = strdup("/hbmpool");
	if (!conf->control_socket)
		conf->control_socket = strdup("/run/hbmpool/hbmpoold.sock");
	if (!c->seen[k - keys] && !(conf->metrics_listen = strdup(METRICS_LISTEN)))
		return -ENOMEM;
	return conf->etcd_prefix && conf->control_socket ? 0 : -ENOMEM;
}

int hbm_config_load(const char *path, struct hbm_config *conf, char **errors)
{
	struct ctx c = { .path = path, .conf = conf };
	int ret;

	*errors = NULL;
	defaults(conf);
	c.f = fopen(path, "re");
	if (!c.f) {
		ret = -errno;
		err_add(&c, "%s: %s", path, strerror(-ret));
		*errors = c.err;
		return ret;
	}
	ret = ini_parse_stream(reader, &c, handler, &c);
	fclose(c.f);
	if (ret > 0)	/* a line inih could not parse that the reader let through */
		err_add(&c, "%s:%d: neither \"[section]\" nor \"key = value\"", path, ret);
	else if (ret < 0)
		c.nomem = true;
	if (!c.nomem)
		check_all(&c);
	if (!c.nomem && default_strings(&c))
		c.nomem = true;
	if (c.nomem) {
		free(c.err);
		hbm_config_free(conf);
		return -ENOMEM;
	}
	if (c.nerr) {
		*errors = c.err;
		hbm_config_free(conf);
		return -EINVAL;
	}
	free(c.err);
	memcpy(conf->line, c.seen, sizeof(c.seen));
	return 0;
}

void hbm_config_free(struct hbm_config *conf)
{
	unsigned int i;

	free(conf->key_file);
	free(conf->etcd_prefix);
	free(conf->address);
	for (i = 0; i < conf->nr_endpoints; i++)
		free(conf->endpoints[i]);
	free(conf->ca_file);
	free(conf->cert_file);
	free(conf->key_file_tls);
	free(conf->control_socket);
	free(conf->metrics_listen);
	memset(conf, 0, sizeof(*conf));
}

const char *hbm_config_key(size_t i, const char **section)
{
	if (i >= NKEYS)
		return NULL;
	*section = keys[i].section;
	return keys[i].name;
}

/* ---- reload ---- */

/* A key's value for a message, and for comparing two configs; 0, or -ENOSPC. */
static int key_value(const struct key *k, const struct hbm_config *conf, char *buf,
		     size_t len)
{
	const char *field = (const char *)conf + k->off;
	const char *str;
	size_t used = 0;
	unsigned int i;
	int n = 0;

	switch (k->type) {
	case T_NAME:
	case T_LOC:
	case T_PROVIDER:
	case T_PCI:
		n = snprintf(buf, len, "%s", *field ? field : "(none)");
		break;
	case T_PATH:
	case T_PREFIX:
	case T_ADDR:
	case T_LISTEN:
		str = *(char *const *)field;
		n = snprintf(buf, len, "%s", str ? str : k->type == T_LISTEN ? "off" : "(none)");
		break;
	case T_UINT:
		n = snprintf(buf, len, "%u", *(const unsigned int *)field);
		break;
	case T_PORT:
		n = snprintf(buf, len, "%u", *(const uint16_t *)field);
		break;
	case T_SIZE:
		n = snprintf(buf, len, "%llu", (unsigned long long)*(const uint64_t *)field);
		break;
	case T_ENDPOINTS:
		buf[0] = '\0';
		for (i = 0; i < conf->nr_endpoints; i++) {
			n = snprintf(buf + used, len - used, "%s%s", i ? "," : "",
				     conf->endpoints[i]);
			if (n < 0 || (size_t)n >= len - used)
				return -ENOSPC;
			used += (size_t)n;
		}
		return 0;
	case T_BOOL:
		n = snprintf(buf, len, "%s", *(const bool *)field ? "yes" : "no");
		break;
	}
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

bool hbm_config_key_reloadable(size_t i)
{
	if (i >= NKEYS)
		return false;
	/* only values copied as they are (no string to own), see the copy below */
	if (keys[i].type != T_UINT && keys[i].type != T_BOOL)
		return false;
	return !strcmp(keys[i].section, "health") || !strcmp(keys[i].section, "placement") ||
	       !strcmp(keys[i].section, "distance");
}

/* Append one line to a malloc'ed text; -ENOMEM. */
static int text_add(char **text, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int text_add(char **text, size_t *len, const char *fmt, ...)
{
	va_list ap;
	char *p;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	p = realloc(*text, *len + (size_t)n + 2);
	if (!p)
		return -ENOMEM;
	*text = p;
	va_start(ap, fmt);
	vsnprintf(p + *len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	*len += (size_t)n;
	p[(*len)++] = '\n';
	p[*len] = '\0';
	return 0;
}

int hbm_config_reload(struct hbm_config *cur, const struct hbm_config *next, const char *path,
		      char **applied, char **errors)
{
	char *app = NULL, *err = NULL, old[1024], new[1024], where[32];
	bool change[NKEYS] = { false };
	size_t alen = 0, elen = 0, i;
	int n = 0, ret = 0;

	*applied = NULL;
	*errors = NULL;
	for (i = 0; i < NKEYS && !ret; i++) {
		const struct key *k = &keys[i];
		int r1 = key_value(k, cur, old, sizeof(old)), r2 = key_value(k, next, new, sizeof(new));

		if (!r1 && !r2 && !strcmp(old, new))
			continue;
		if (r1)
			snprintf(old, sizeof(old), "...");
		if (r2)
			snprintf(new, sizeof(new), "...");
		if (next->line[i])
			snprintf(where, sizeof(where), ":%u", next->line[i]);
		else
			where[0] = '\0';
		if (hbm_config_key_reloadable(i)) {
			change[i] = true;
			n++;
			ret = text_add(&app, &alen, "%s%s: [%s] %s: %s -> %s", path, where,
				       k->section, k->name, old, new);
		} else {
			ret = text_add(&err, &elen,
				       "%s%s: [%s] %s: changed (%s -> %s%s), but only a restart applies it; running value kept",
				       path, where, k->section, k->name, old, new,
				       next->line[i] ? "" : ", the default");
		}
	}
	if (ret) {
		free(app);
		free(err);
		return ret;
	}
	/* every message made: now apply, all or nothing */
	for (i = 0; i < NKEYS; i++) {
		const struct key *k = &keys[i];
		size_t size = k->type == T_UINT ? sizeof(unsigned int) : sizeof(bool);

		if (!change[i])
			continue;
		memcpy((char *)cur + k->off, (const char *)next + k->off, size);
		cur->line[i] = next->line[i];
	}
	*applied = app;
	*errors = err;
	return n;
}
