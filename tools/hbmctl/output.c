// SPDX-License-Identifier: GPL-2.0
/*
 * hbmctl's output (see output.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hbmctl.h"
#include "nl.h"
#include "output.h"

#define PAGE_SHIFT 12

void out_json(json_object *o)
{
	int flags = JSON_C_TO_STRING_NOSLASHESCAPE;

	flags |= ctl.pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED :
			      JSON_C_TO_STRING_PLAIN;
	puts(json_object_to_json_string_ext(o, flags));
}

const char *out_size(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "KMGTPE";
	int u = -1;
	uint64_t div = 1;

	while (u < 5 && v >= div * 1024) {
		div *= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%" PRIu64 "B", v);
	else if (v % div == 0)
		snprintf(buf, len, "%" PRIu64 "%c", v / div, units[u]);
	else
		snprintf(buf, len, "%.1f%c", (double)v / (double)div, units[u]);
	return buf;
}

static const char *scalar(json_object *v, enum out_fmt fmt, char *buf, size_t len)
{
	switch (json_object_get_type(v)) {
	case json_type_int:
		if (fmt == F_SIZE)
			return out_size(json_object_get_uint64(v), buf, len);
		if (fmt == F_PAGES)
			return out_size(json_object_get_uint64(v) << PAGE_SHIFT, buf, len);
		snprintf(buf, len, "%" PRIu64, json_object_get_uint64(v));
		return buf;
	case json_type_boolean:
		return json_object_get_boolean(v) ? "yes" : "no";
	case json_type_string:
		snprintf(buf, len, "%s", json_object_get_string(v));
		return buf;
	default:
		snprintf(buf, len, "%s", json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
		return buf;
	}
}

const char *out_cell(json_object *row, const char *key, enum out_fmt fmt,
		     char *buf, size_t len)
{
	json_object *v;
	size_t i, n, off = 0;

	if (!json_object_object_get_ex(row, key, &v))
		return "-";
	if (json_object_get_type(v) != json_type_array)
		return scalar(v, fmt, buf, len);
	n = json_object_array_length(v);
	if (!n)
		return "-";
	buf[0] = '\0';
	for (i = 0; i < n && off < len; i++) {
		char one[64];

		off += snprintf(buf + off, len - off, "%s%s", i ? "," : "",
				scalar(json_object_array_get_idx(v, i), fmt, one, sizeof(one)));
	}
	return buf;
}

static const char *col_cell(json_object *row, const struct out_col *c, char *buf, size_t len)
{
	if (c->fmt == F_FUNC)
		return c->fn(row, buf, len);
	return out_cell(row, c->key, c->fmt, buf, len);
}

void out_table(json_object *rows, const struct out_col *cols, int ncols)
{
	size_t nrows = json_object_array_length(rows), r;
	char **cells = calloc((nrows + 1) * (size_t)ncols, sizeof(*cells));
	int *w = calloc((size_t)ncols, sizeof(*w));
	int c;

	if (!cells || !w) {
		free(cells);
		free(w);
		fprintf(stderr, "hbmctl: out of memory\n");
		return;
	}
	for (c = 0; c < ncols; c++)
		cells[c] = strdup(cols[c].head);
	for (r = 0; r < nrows; r++) {
		for (c = 0; c < ncols; c++) {
			char buf[8192];	/* a list of 1024 node ids fits */

			cells[(r + 1) * ncols + c] =
				strdup(col_cell(json_object_array_get_idx(rows, r), &cols[c],
						buf, sizeof(buf)));
		}
	}
	for (r = 0; r <= nrows; r++)
		for (c = 0; c < ncols; c++) {
			const char *s = cells[r * ncols + c];
			int l = s ? (int)strlen(s) : 0;

			if (l > w[c])
				w[c] = l;
		}
	for (r = 0; r <= nrows; r++) {
		for (c = 0; c < ncols; c++) {
			const char *s = cells[r * ncols + c] ? cells[r * ncols + c] : "?";

			if (c == ncols - 1)
				printf("%s\n", s);
			else
				printf("%-*s  ", w[c], s);
		}
	}
	for (r = 0; r < (nrows + 1) * (size_t)ncols; r++)
		free(cells[r]);
	free(cells);
	free(w);
}

void out_kv(json_object *obj, const struct out_col *cols, int ncols)
{
	int c, w = 0;

	for (c = 0; c < ncols; c++)
		if ((int)strlen(cols[c].head) > w)
			w = (int)strlen(cols[c].head);
	for (c = 0; c < ncols; c++) {
		char buf[8192];

		printf("%-*s  %s\n", w, cols[c].head, col_cell(obj, &cols[c], buf, sizeof(buf)));
	}
}

static void line_obj(json_object *obj)
{
	const char *sep = "";

	json_object_object_foreach(obj, key, v) {
		char buf[8192];

		if (json_object_get_type(v) == json_type_object) {
			printf("%s%s { ", sep, key);
			line_obj(v);
			printf(" }");
		} else {
			printf("%s%s %s", sep, key, out_cell(obj, key, F_STR, buf, sizeof(buf)));
		}
		sep = " ";
	}
}

void out_line(const char *first, json_object *obj)
{
	printf("%s ", first);
	line_obj(obj);
	putchar('\n');
}

int out_show_kv(uint8_t cmd, const struct out_col *cols, int ncols)
{
	json_object *arr = json_object_new_array();
	json_object *o;
	int ret = ctl_request(cmd, false, NULL, NULL, arr, NULL);

	if (!ret) {
		o = json_object_array_get_idx(arr, 0);
		if (!o) {
			fprintf(stderr, "hbmctl: the kernel sent no reply\n");
			ret = CTL_EXIT_FAIL;
		} else if (ctl.json) {
			out_json(o);
		} else {
			out_kv(o, cols, ncols);
		}
	}
	json_object_put(arr);
	return ret;
}
