// SPDX-License-Identifier: GPL-2.0
/*
 * hbmctl monitor: the events of the multicast group "monitor", one line
 * each, as they come: "EVENT key value ...", or with -j one JSON object
 * per line, {"event": "node-add-ntf", "seq": N, ...every attribute}.
 * Events lost to an overrun of the socket show as a line of their own
 * ({"event": "lost"}) and as a gap in seq.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hbmctl.h"
#include "nl.h"
#include "output.h"

static void usage(FILE *f)
{
	fprintf(f, "  monitor\n");
}

static int on_event(uint8_t cmd, struct nlattr *attrs, int len, void *arg)
{
	const char *name = ctl_cmd_name(cmd);
	json_object *ev, *a;
	char unknown[32];

	(void)arg;
	if (!name) {
		snprintf(unknown, sizeof(unknown), "cmd-%u", cmd);
		name = unknown;
	}
	a = ctl_attrs_json(ctl_cmd_set(cmd), attrs, len);
	if (!a)
		return -ENOMEM;
	if (ctl.json) {
		ev = json_object_new_object();
		if (!ev) {
			json_object_put(a);
			return -ENOMEM;
		}
		json_object_object_add(ev, "event", json_object_new_string(name));
		json_object_object_foreach(a, key, v)
			json_object_object_add(ev, key, json_object_get(v));
		out_json(ev);
		json_object_put(ev);
	} else {
		out_line(name, a);
	}
	json_object_put(a);
	fflush(stdout);
	return 0;
}

static int run(int argc, char **argv)
{
	struct hbm_nl *nl;
	int ret;

	if (argc > 0)
		return ctl_bad(&ctl_obj_monitor, "monitor takes no argument ('%s')", argv[0]);
	nl = ctl_nl();
	if (!nl)
		return CTL_EXIT_FAIL;
	ret = hbm_nl_subscribe(nl, HBMPOOL_MCGRP_MONITOR);
	if (ret) {
		fprintf(stderr, "hbmctl: cannot join the group \"%s\": %s\n",
			HBMPOOL_MCGRP_MONITOR, strerror(-ret));
		return CTL_EXIT_FAIL;
	}
	/*
	 * An overrun loses events: say so where they would have been (the
	 * gap shows in "seq" too), and go on; a reader dumps again.
	 */
	ctl.pretty = false;	/* one event, one line */
	while ((ret = hbm_nl_listen(nl, on_event, NULL)) == -ENOBUFS) {
		json_object *lost = json_object_new_object();

		if (ctl.json && lost) {
			json_object_object_add(lost, "event", json_object_new_string("lost"));
			out_json(lost);
		} else
			printf("lost events: the socket overran; dump again for the state\n");
		json_object_put(lost);
		fflush(stdout);
	}
	fprintf(stderr, "hbmctl: monitor: %s\n", strerror(-ret));
	return CTL_EXIT_FAIL;
}

const struct ctl_obj ctl_obj_monitor = { "monitor", NULL, run, usage };
