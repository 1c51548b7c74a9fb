# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
#
# The outer half of a multi-VM test (sourced): boot the VMs with
# tools/rig/multi.sh, run the test's host half beside them, and sum up its
# TAP.
#
# multi_outer RUN NODES SCRIPT [MULTI-OPTIONS...]: runs "SCRIPT --host" as the host command of
# multi.sh run RUN with NODES VMs running tools/rig/multi-agent.sh (whole run
# bounded by MULTI_TIMEOUT, default 1500 s); prints "N passed, N failed" and
# returns 0 only if the run and every check passed.  A VM or rig failure
# that no check caught counts as one failure.
multi_outer() {
	local run=$1 nodes=$2 script=$3 repo log passed failed rc=0
	shift 3
	repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	"$repo/tools/rig/multi.sh" -r "$run" -n "$nodes" -t "${MULTI_TIMEOUT:-1500}" "$@" \
		-c "$script --host" -- "$repo/tools/rig/multi-agent.sh" || rc=$?
	log=${RIG_BUILD:-$repo/build/rig}/multi-$run/host.log
	passed=$(grep -c '^ok ' "$log" 2>/dev/null)
	failed=$(grep -c '^not ok ' "$log" 2>/dev/null)
	[ "$rc" != 0 ] && [ "${failed:-0}" = 0 ] && failed=1
	echo "${passed:-0} passed, ${failed:-0} failed"
	[ "$rc" = 0 ] && [ "${failed:-0}" = 0 ]
}
