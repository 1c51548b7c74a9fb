# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Common definitions for the host-side rig scripts.  Sourced, not run.
#
# Environment understood by every rig script:
#   KDIR       kernel headers to build against (default: see kernel.sh)
#   KVER       kernel release to boot (default: the release of KDIR)
#   RIG_BUILD  where the rig keeps its files (default: <repo>/build/rig)
#   RIG_KERNEL boot this bzImage instead of /boot/vmlinuz-$KVER (see below)

RIG_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$RIG_DIR/../.." && pwd)
RIG_BUILD=${RIG_BUILD:-$REPO/build/rig}

rig_log() { printf 'rig: %s\n' "$*" >&2; }
rig_die() { printf 'rig: error: %s\n' "$*" >&2; exit 126; }

# Sets KVER (exported) and RIG_KIMAGE, the kernel image to boot, or dies.
rig_kver() {
	if [ -n "${RIG_KERNEL:-}" ]; then
		rig_kver_image
		return
	fi
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
	RIG_KIMAGE=/boot/vmlinuz-$KVER
	export RIG_KIMAGE
}

# --- RIG_KERNEL: a kernel of our own (the debug kernel, debug-kernel.sh) ---
# RIG_KERNEL=path/to/bzImage boots that image.  Its virtio, 9p and virtio-net
# drivers must be built in: the initramfs then carries no modules, and
# /lib/modules is not consulted.  KVER is always the image's own release.
rig_kver_image() {
	[ -r "$RIG_KERNEL" ] || rig_die "RIG_KERNEL=$RIG_KERNEL: no such kernel image"
	RIG_KIMAGE=$(realpath "$RIG_KERNEL")
	KVER=$("$RIG_DIR/kernel.sh" imgver "$RIG_KIMAGE")
	[ -n "$KVER" ] || rig_die "RIG_KERNEL=$RIG_KERNEL: cannot read its kernel release"
	export KVER RIG_KIMAGE
}
