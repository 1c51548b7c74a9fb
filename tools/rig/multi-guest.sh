#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of multi.sh: runs first in every VM of a multi-VM run, then
# execs the caller's command.  Never run on the host.
#
# usage (by multi.sh, through vm.sh): multi-guest.sh COMMAND [ARGS...]
#
# Mounts the run's shared directory (9p tag rigsync, no caching: every write
# is seen at once by the host and the other VMs) at $RIG_SYNC, the host's
# path; enables the ivshmem-plain devices (one per node, PCI slot 0x10+K, see
# rig_shm in multi-lib.sh) so that their BAR2 can be mmapped through sysfs;
# marks "up.NODE.BOOT" in $RIG_SYNC (content: the kernel's boot_id) and execs
# COMMAND (cwd: the repo, as vm.sh runs it).
#
# Environment (from multi.sh): RIG_SYNC, RIG_NODE, RIG_NODES, RIG_BOOT,
# RIG_RUN, RIG_IP, RIG_SHM_SIZE.
set -u

mkdir -p "$RIG_SYNC" 2>/dev/null
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=none rigsync "$RIG_SYNC"; then
	echo "multi-guest: cannot mount the shared directory (9p tag rigsync) at $RIG_SYNC" >&2
	exit 126
fi

if [ "${RIG_SHM_SIZE:-0}" -gt 0 ]; then
	for ((k = 1; k <= RIG_NODES; k++)); do
		d=/sys/bus/pci/devices/0000:00:$(printf %02x $((0x10 + k))).0
		if [ "$(cat "$d/vendor" 2>/dev/null):$(cat "$d/device" 2>/dev/null)" != 0x1af4:0x1110 ]; then
			echo "multi-guest: no ivshmem device for node $k at $d" >&2
			continue
		fi
		# No driver binds ivshmem-plain: turn memory decoding on ourselves.
		echo 1 >"$d/enable" 2>/dev/null || echo "multi-guest: cannot enable $d" >&2
	done
fi

# The control NIC of multi.sh --ctlnet (MAC 52:54:00:78:00:K), if any.
for d in /sys/class/net/*; do
	[ "$(cat "$d/address" 2>/dev/null)" = "$(printf '52:54:00:78:00:%02x' "$RIG_NODE")" ] || continue
	ip addr add "10.78.0.$((10 + RIG_NODE))/24" dev "${d##*/}" && ip link set "${d##*/}" up ||
		echo "multi-guest: cannot configure the control NIC ${d##*/}" >&2
done

# shellcheck source-path=SCRIPTDIR source=multi-lib.sh
. "$(dirname "$0")/multi-lib.sh"
rig_mark "up.$RIG_NODE.$RIG_BOOT" "$(cat /proc/sys/kernel/random/boot_id)"
echo "multi-guest: node $RIG_NODE of $RIG_NODES, boot $RIG_BOOT, $RIG_IP, $(uname -r)"
exec "$@"
