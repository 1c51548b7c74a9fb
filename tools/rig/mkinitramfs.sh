#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the rig's initramfs: busybox-static, /init (init.sh) and the virtio,
# 9p and virtio-net modules of kernel KVER, copied from /lib/modules/KVER and
# decompressed if Debian ships them compressed.
#
# usage: mkinitramfs.sh            print the path of the (cached) initramfs
#        mkinitramfs.sh -f         rebuild it even if it is up to date
#
# Output: $RIG_BUILD/initramfs-$KVER.cpio.gz, rebuilt when init.sh, this script
# or busybox is newer.  Safe to run from several VMs at once (flock).
# With RIG_KERNEL (lib.sh) the kernel has those drivers built in: no modules.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Load order matters (RIG-NOTES.md): base, then 9p, then networking.
BASE_MODS="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci"
FS_MODS="9pnet 9pnet_virtio netfs fscache 9p"
NET_MODS="failover net_failover virtio_net"

force=0
[ "${1:-}" = "-f" ] && force=1

rig_kver
mkdir -p "$RIG_BUILD"
out="$RIG_BUILD/initramfs-$KVER.cpio.gz"
busybox=$(command -v busybox || true)
[ -n "$busybox" ] || rig_die "busybox not found: apt-get install busybox-static"

uptodate() {
	[ -s "$out" ] || return 1
	local f
	local deps=("$RIG_DIR/init.sh" "$RIG_DIR/mkinitramfs.sh" "$busybox")
	[ -n "${RIG_KERNEL:-}" ] || deps+=("/lib/modules/$KVER/modules.dep")
	for f in "${deps[@]}"; do
		[ "$out" -nt "$f" ] || return 1
	done
}

exec 9>"$RIG_BUILD/.initramfs.lock"
flock 9
if [ $force = 0 ] && uptodate; then
	echo "$out"
	exit 0
fi

# busybox must be static: it runs before any library is reachable.
if ldd "$busybox" >/dev/null 2>&1; then
	rig_die "$busybox is dynamically linked: apt-get install busybox-static"
fi

stage=$(mktemp -d "$RIG_BUILD/.initramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,dev,proc,sys,host,newroot,etc,lib/modules/rig}
cp "$busybox" "$stage/bin/busybox"
ln -s busybox "$stage/bin/sh"
cp "$RIG_DIR/init.sh" "$stage/init"
chmod 0755 "$stage/init"
# The kernel opens /dev/console before /init runs; devtmpfs is not mounted
# yet, so the node must be in the archive (needs root; /init copes without).
mknod -m 600 "$stage/dev/console" c 5 1 2>/dev/null || true
mknod -m 666 "$stage/dev/null" c 1 3 2>/dev/null || true

moddir=/lib/modules/$KVER
add_mod() {
	local m=$1 rel src dst
	rel=$(awk -F: -v m="$m" '{ n = $1; sub(/.*\//, "", n); sub(/\.ko(\.xz|\.zst|\.gz)?$/, "", n);
		gsub(/-/, "_", n); if (n == m) { print $1; exit } }' "$moddir/modules.dep")
	if [ -z "$rel" ]; then
		if grep -qE "/$m\.ko$" "$moddir/modules.builtin" 2>/dev/null; then
			return 0	# built in: nothing to load
		fi
		rig_die "module $m not found in $moddir"
	fi
	src=$moddir/$rel
	dst=$stage/lib/modules/rig/$m.ko
	case "$src" in
	*.ko.xz) xz -dc "$src" >"$dst" ;;
	*.ko.zst) zstd -qdc "$src" >"$dst" ;;
	*.ko.gz) gzip -dc "$src" >"$dst" ;;
	*) cp "$src" "$dst" ;;
	esac
	echo "$m" >>"$stage/lib/modules/rig/$2"
}
: >"$stage/lib/modules/rig/base"
: >"$stage/lib/modules/rig/net"
if [ -z "${RIG_KERNEL:-}" ]; then	# RIG_KERNEL: all built in, lists stay empty
	for m in $BASE_MODS $FS_MODS; do add_mod "$m" base; done
	for m in $NET_MODS; do add_mod "$m" net; done
fi

(cd "$stage" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --quiet --owner=0:0) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
rig_log "built $out"
echo "$out"
