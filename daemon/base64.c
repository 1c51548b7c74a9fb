// SPDX-License-Identifier: GPL-2.0
/* Base64 (RFC 4648) for etcd's JSON gateway: see base64.h. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *hbm_b64_encode(const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t i, o = 0;
	uint32_t v;
	char *out;

	out = malloc((len + 2) / 3 * 4 + 1);
	if (!out)
		return NULL;
	for (i = 0; i + 2 < len; i += 3) {
		v = p[i] << 16 | p[i + 1] << 8 | p[i + 2];
		out[o++] = b64[v >> 18];
		out[o++] = b64[(v >> 12) & 63];
		out[o++] = b64[(v >> 6) & 63];
		out[o++] = b64[v & 63];
	}
	if (i < len) {
		v = p[i] << 16 | (i + 1 < len ? p[i + 1] << 8 : 0);
		out[o++] = b64[v >> 18];
		out[o++] = b64[(v >> 12) & 63];
		out[o++] = i + 1 < len ? b64[(v >> 6) & 63] : '=';
		out[o++] = '=';
	}
	out[o] = '\0';
	return out;
}

static int val(char c)
{
	const char *p = c ? strchr(b64, c) : NULL;

	return p ? p - b64 : -1;
}

int hbm_b64_decode(const char *s, char **out, size_t *len)
{
	size_t n = strlen(s), i, o = 0, pad = 0;
	uint32_t v;
	char *buf;
	int d[4], j;

	if (n % 4)
		return -EINVAL;
	if (n && s[n - 1] == '=')
		pad = n >= 2 && s[n - 2] == '=' ? 2 : 1;
	buf = malloc(n / 4 * 3 + 1);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < n; i += 4) {
		for (j = 0; j < 4; j++) {
			/* '=' only as the last one or two characters */
			if (s[i + j] == '=' && i + 4 == n && j >= 4 - (int)pad) {
				d[j] = 0;
				continue;
			}
			d[j] = val(s[i + j]);
			if (d[j] < 0)
				goto bad;
		}
		v = d[0] << 18 | d[1] << 12 | d[2] << 6 | d[3];
		buf[o++] = v >> 16;
		if (i + 4 < n || pad < 2)
			buf[o++] = (v >> 8) & 0xff;
		if (i + 4 < n || pad < 1)
			buf[o++] = v & 0xff;
	}
	buf[o] = '\0';
	*out = buf;
	*len = o;
	return 0;
bad:
	free(buf);
	return -EINVAL;
}
