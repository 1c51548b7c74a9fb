# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Common definitions for the host-side rig scripts.  Sourced, not run.
#
# Environment understood by every rig script:
#   KDIR       kernel headers to build against (default: see kernel.sh)
#   KVER       kernel release to boot (default: the release of KDIR)
#   RIG_BUILD  where the rig keeps its files (default: <repo>/build/rig)

RIG_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$RIG_DIR/../.." && pwd)
RIG_BUILD=${RIG_BUILD:-$REPO/build/rig}

rig_log() { printf 'rig: %s\n' "$*" >&2; }
rig_die() { printf 'rig: error: %s\n' "$*" >&2; exit 126; }

# Sets KVER (exported) or dies with a hint.
rig_kver() {
	if [ -z "${KVER:-}" ]; then
		local kdir
		kdir=$("$RIG_DIR/kernel.sh" kdir)
		[ -n "$kdir" ] || rig_die "no kernel headers found; run 'make deps'"
		KVER=$("$RIG_DIR/kernel.sh" kver "$kdir")
	fi
	export KVER
	[ -r "/boot/vmlinuz-$KVER" ] ||
		rig_die "/boot/vmlinuz-$KVER missing: install linux-image-$KVER (make deps)"
	[ -r "/lib/modules/$KVER/modules.dep" ] ||
		rig_die "/lib/modules/$KVER/modules.dep missing: install linux-image-$KVER (make deps)"
}
