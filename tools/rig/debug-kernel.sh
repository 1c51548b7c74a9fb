#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the rig's debug kernel from Debian's linux-source-6.1: x86_64
# defconfig + kernel/configs/kvm_guest.config + tools/rig/debug.config
# (KASAN, lockdep, kmemleak, DEBUG_VM, hung task / lockup detectors, fault
# injection; virtio, 9p and virtio-net built in, so the rig's initramfs needs
# no modules).  Slow: tens of minutes with -j2 under a shared CPU.
#
# usage: debug-kernel.sh [-f]      print the path of the (cached) bzImage
#   -f   rebuild even if the bzImage is newer than the config inputs
#
# Environment: LINUX_SRC_TAR (default /usr/src/linux-source-6.1.tar.xz),
# RIG_DEBUG_KDIR (default <repo>/build/linux-debug: the source tree, built
# in place, usable as KDIR for M= module builds), RIG_DEBUG_JOBS (default 2).
# Build log: $RIG_DEBUG_KDIR/build.log.  Only the path goes to stdout.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

tarball=${LINUX_SRC_TAR:-/usr/src/linux-source-6.1.tar.xz}
kdir=${RIG_DEBUG_KDIR:-$REPO/build/linux-debug}
jobs=${RIG_DEBUG_JOBS:-2}
frag=$RIG_DIR/debug.config
bz=$kdir/arch/x86/boot/bzImage
force=0
[ "${1:-}" = "-f" ] && force=1

uptodate() {
	[ -s "$bz" ] && [ "$bz" -nt "$frag" ] && [ "$bz" -nt "$RIG_DIR/debug-kernel.sh" ] &&
		[ "$bz" -nt "$kdir/.config" ]
}

mkdir -p "$kdir"
exec 9>"$kdir/../.linux-debug.lock"
flock 9
if [ $force = 0 ] && uptodate; then
	echo "$bz"
	exit 0
fi

if [ ! -f "$kdir/Makefile" ]; then
	[ -r "$tarball" ] || rig_die "$tarball missing: apt-get install linux-source-6.1"
	rig_log "extracting $tarball into $kdir"
	tar -xJf "$tarball" -C "$kdir" --strip-components=1
fi

log=$kdir/build.log
rig_log "configuring $kdir (defconfig + kvm_guest.config + $frag)"
{
	make -C "$kdir" defconfig
	(cd "$kdir" && ./scripts/kconfig/merge_config.sh -m .config \
		kernel/configs/kvm_guest.config "$frag")
	make -C "$kdir" olddefconfig
} >"$log" 2>&1 || { tail -n 30 "$log" >&2; rig_die "configuring the debug kernel failed ($log)"; }

# Every option the rig relies on must have survived olddefconfig.
missing=""
while read -r opt; do
	grep -qx "$opt" "$kdir/.config" || missing="$missing $opt"
done <<'OPTS'
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_NET=y
CONFIG_NET_9P=y
CONFIG_NET_9P_VIRTIO=y
CONFIG_9P_FS=y
CONFIG_DEVTMPFS=y
CONFIG_DEBUG_FS=y
CONFIG_TMPFS=y
CONFIG_MODULES=y
CONFIG_MODULE_UNLOAD=y
CONFIG_BLK_DEV_INITRD=y
CONFIG_SERIAL_8250_CONSOLE=y
CONFIG_UNIX=y
CONFIG_INET=y
CONFIG_KASAN=y
CONFIG_KASAN_GENERIC=y
CONFIG_DEBUG_KMEMLEAK=y
CONFIG_PROVE_LOCKING=y
CONFIG_DEBUG_ATOMIC_SLEEP=y
CONFIG_DEBUG_VM=y
CONFIG_DEBUG_LIST=y
CONFIG_DETECT_HUNG_TASK=y
CONFIG_SOFTLOCKUP_DETECTOR=y
CONFIG_FAULT_INJECTION=y
CONFIG_FAILSLAB=y
CONFIG_MEMORY_FAILURE=y
OPTS
[ -z "$missing" ] || rig_die "debug kernel config lacks:$missing (see $log)"

rig_log "building the debug kernel with -j$jobs (log: $log)"
start=$SECONDS
# modules_prepare: out-of-tree M= builds against this tree need it.
if ! nice -n 10 make -C "$kdir" -j"$jobs" bzImage modules >>"$log" 2>&1 ||
	! nice -n 10 make -C "$kdir" -j"$jobs" modules_prepare >>"$log" 2>&1; then
	tail -n 30 "$log" >&2
	rig_die "building the debug kernel failed ($log)"
fi
touch "$bz"
rig_log "built $bz ($(make -s -C "$kdir" kernelrelease)) in $((SECONDS - start))s"
echo "$bz"
