/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hbmpoold's exit statuses, all of them (hbmpoold(8), EXIT STATUS; the
 * unit's RestartPreventExitStatus= names those a restart cannot mend).
 */
#ifndef HBMPOOLD_EXIT_STATUS_H
#define HBMPOOLD_EXIT_STATUS_H

#include <sysexits.h>

/* Stopped by SIGTERM or SIGINT (or -h). */
#define HBMD_EXIT_OK		0
/*
 * Could not join for another reason than those below (the kernel module
 * missing, etcd unreachable, this node's id held by another live lease,
 * the metrics address taken), or failed once joined (the control socket,
 * the event loop).  The unit restarts it.
 */
#define HBMD_EXIT_FAILURE	1
/*
 * The node is fenced (hbmd_agent_start() returned -ESTALE): its kernel
 * was fenced, or its segment was a member whose lease ran out while no
 * daemon renewed it.  It rejoins only with a new segment (hbmctl segment
 * del), so a restart without one is of no use: not restarted.
 */
#define HBMD_EXIT_FENCED	3
/* A bad option or argument (EX_USAGE). */
#define HBMD_EXIT_USAGE		EX_USAGE	/* 64 */
/*
 * The config file: unreadable, or any error in it, every one printed
 * (EX_CONFIG).  Not restarted: the file must be fixed first.
 */
#define HBMD_EXIT_CONFIG	EX_CONFIG	/* 78 */

#endif /* HBMPOOLD_EXIT_STATUS_H */
