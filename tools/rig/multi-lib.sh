# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Coordination helpers of the multi-VM rig (multi.sh), for guest scripts and
# host-side scripts alike.  Sourced, never run:
#
#   . "$RIG_REPO/tools/rig/multi-lib.sh"      # in a guest
#   . tools/rig/multi-lib.sh                  # on the host (multi.sh -c)
#
# Everything goes through $RIG_SYNC, a directory every VM and the host share
# writable (a 9p share without caching in the guests, mounted at the host's
# path): a marker is a file there, created atomically.  Names are
# [A-Za-z0-9._-]+.  multi.sh empties the directory when a run starts.
#
#   rig_mark NAME [TEXT]          create marker NAME (content TEXT, default the
#                                 node id or "host")
#   rig_wait [-t SECS] NAME...    wait until every marker exists; 1 on timeout
#                                 (default $RIG_WAIT_TIMEOUT or 300 s), 2 when
#                                 the run was aborted ($RIG_SYNC/abort: a VM or
#                                 the host command failed), with a message
#   rig_barrier [-t SECS] NAME [NODE...]
#                                 mark NAME.$RIG_NODE, then wait for NAME.K of
#                                 every NODE (default 1..$RIG_NODES)
#   rig_shm K                     (guest) the sysfs file to mmap for node K's
#                                 shared-memory segment (ivshmem BAR2)
#   rig_shm_dev K                 the PCI name of node K's ivshmem device, as
#                                 hbmctl's "device" takes it (0000:00:1K.0)
#
# Guests also see (multi-guest.sh): RIG_NODE (1..N), RIG_NODES, RIG_BOOT (1,
# then 2, 3... after the host restarted the VM), RIG_RUN, RIG_IP (this node's
# address), RIG_SHM_SIZE (bytes per segment, 0 if none), RIG_SYNC.

: "${RIG_SYNC:?RIG_SYNC is not set (not in a multi.sh run?)}"

rig_mark() {
	local name=$1 text=${2:-${RIG_NODE:-host}}
	[[ "$name" =~ ^[A-Za-z0-9._-]+$ ]] || { echo "rig_mark: bad name '$name'" >&2; return 2; }
	printf '%s\n' "$text" >"$RIG_SYNC/.$name.$$" && mv -f "$RIG_SYNC/.$name.$$" "$RIG_SYNC/$name"
}

rig_wait() {
	local t=${RIG_WAIT_TIMEOUT:-300} m missing
	if [ "${1:-}" = -t ]; then
		t=$2
		shift 2
	fi
	local end=$((SECONDS + t))
	while :; do
		missing=""
		for m in "$@"; do
			[ -e "$RIG_SYNC/$m" ] || missing="$missing $m"
		done
		[ -z "$missing" ] && return 0
		if [ -e "$RIG_SYNC/abort" ]; then
			echo "rig_wait:$missing: run aborted ($(cat "$RIG_SYNC/abort" 2>/dev/null))" >&2
			return 2
		fi
		if [ $SECONDS -ge $end ]; then
			echo "rig_wait:$missing: not there after ${t}s" >&2
			return 1
		fi
		sleep 0.2
	done
}

rig_barrier() {
	local targs=() name k nodes=()
	if [ "${1:-}" = -t ]; then
		targs=(-t "$2")
		shift 2
	fi
	name=$1
	shift
	if [ $# -gt 0 ]; then
		nodes=("$@")
	else
		for ((k = 1; k <= ${RIG_NODES:?}; k++)); do nodes+=("$k"); done
	fi
	rig_mark "$name.${RIG_NODE:?rig_barrier runs in a guest}" || return
	local want=()
	for k in "${nodes[@]}"; do want+=("$name.$k"); done
	rig_wait "${targs[@]+"${targs[@]}"}" "${want[@]}"
}

# ivshmem-plain of node K sits in PCI slot 0x10+K (multi.sh).
rig_shm_dev() {
	printf '0000:00:%02x.0\n' $((0x10 + $1))
}
rig_shm() {
	printf '/sys/bus/pci/devices/%s/resource2\n' "$(rig_shm_dev "$1")"
}
