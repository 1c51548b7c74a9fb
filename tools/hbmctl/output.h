/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hbmctl's output: JSON (-j, -p pretty: exact numbers, enums by name) or,
 * by default, aligned tables like "ip -br" with human-readable sizes.
 */
#ifndef HBMCTL_OUTPUT_H
#define HBMCTL_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

enum out_fmt {
	F_STR,		/* the value as it is; arrays comma-separated */
	F_SIZE,		/* bytes, human-readable (64M, 1.5G) */
	F_PAGES,	/* pages, as bytes, human-readable */
	F_FUNC,		/* fn makes the cell */
};

struct out_col {
	const char *head;
	const char *key;
	enum out_fmt fmt;
	/* Writes the cell of row to buf, returns it (or "-"). */
	const char *(*fn)(json_object *row, char *buf, size_t len);
};

/* Print o as JSON, one line or pretty with -p. */
void out_json(json_object *o);
/* rows (objects) as a table: a header line, one line per row. */
void out_table(json_object *rows, const struct out_col *cols, int ncols);
/* One object as "label  value" lines. */
void out_kv(json_object *obj, const struct out_col *cols, int ncols);
/* One line of "key value" pairs of every member (monitor). */
void out_line(const char *first, json_object *obj);

/* 4096 -> "4K", 1610612736 -> "1.5G", 100 -> "100B". */
const char *out_size(uint64_t v, char *buf, size_t len);
/* A member as text ("-" if absent). */
const char *out_cell(json_object *row, const char *key, enum out_fmt fmt,
		     char *buf, size_t len);



/*
 * The do request cmd (no attributes), its reply as JSON or as out_kv();
 * returns the exit status.
 */
int out_show_kv(uint8_t cmd, const struct out_col *cols, int ncols);
#endif /* HBMCTL_OUTPUT_H */
