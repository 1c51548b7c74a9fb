#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side controls of a running multi-VM run (multi.sh): faults, and jobs
# for the guests' multi-agent.sh.
#
# usage: multi-ctl.sh [-r RUN] COMMAND [ARGS...]
#   The run: -r RUN, else $MULTI_RUN (exported to multi.sh -c commands),
#   else "multi".  K is a node id, 1..N.
#
# Faults (through QMP, tools/rig/qmp.py):
#   cut K         link down: set_link nic0 off (the guest sees no carrier;
#                 no frame goes in or out)
#   restore K     link up again
#   freeze K      stop the VM's CPUs (QMP stop): it answers nothing
#   thaw K        cont
#   kill K        QMP quit: the VM is gone at once (no shutdown); waits until
#                 the rig has noticed (state "killed")
#   start K       boot a killed VM again (a new boot: RIG_BOOT one more, new
#                 boot_id, empty memory); waits until its guest command runs
#                 (marker up.K.BOOT), -t SECS (default 300)
#   reboot K      kill, then start
# State:
#   state K       running / killed / done, and the boot number
#   boot K        the current boot number of VM K
#   qmp K CMD [KEY=VALUE...]   any QMP command (qmp.py)
# Jobs (the guests run tools/rig/multi-agent.sh):
#   exec [-t SECS] K CMD...   run CMD (bash -c "CMD...") in VM K, print its
#                 output, exit with its status; 124 after SECS (default 120),
#                 125 if the VM went away, 126 if its agent is not up
#   spawn K CMD...            start CMD in VM K, print a job id at once
#   result [-t SECS] JOB      wait for a spawned job: print its output, exit
#                 with its status (124 on timeout, 125 VM gone)
#   done JOB      exit 0 if the job has finished, 1 if not (does not wait)
#   agents [-t SECS] [K...]   wait until the agents of VMs K (default all)
#                 run their current boot
#   stop          tell the agents to finish (multi.sh does it when -c ends)
# Markers (multi-lib.sh): mark NAME [TEXT], wait [-t SECS] NAME...
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

run=${MULTI_RUN:-multi}
if [ "${1:-}" = -r ]; then
	run=$2
	shift 2
fi
[ $# -gt 0 ] || { sed -n '3,45p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
dir=$RIG_BUILD/multi-$run
ctl=$dir/ctl
[ -r "$ctl/env" ] || rig_die "no multi-VM run '$run' ($ctl/env missing)"
RIG_SYNC=$dir/sync
export RIG_SYNC
# shellcheck source-path=SCRIPTDIR source=multi-lib.sh
. "$RIG_DIR/multi-lib.sh"
nnodes=$(sed -n 's/^MULTI_NODES=//p' "$ctl/env")

node() {
	if ! [[ "${1:-}" =~ ^[0-9]+$ ]] || [ "$1" -lt 1 ] || [ "$1" -gt "$nnodes" ]; then
		rig_die "bad node '${1:-}' (1..$nnodes)"
	fi
}
state() { cat "$ctl/$1.state" 2>/dev/null || echo starting; }
boot() { cat "$ctl/$1.boot" 2>/dev/null || echo 1; }
qmp() {
	local k=$1
	shift
	"$RIG_DIR/qmp.py" "$run-$k" "$@" >/dev/null ||
		{ echo "multi-ctl: VM $k: QMP $* failed" >&2; return 1; }
}
# wait_for SECS CONDITION...: poll CONDITION every 0.2 s.
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.2
	done
}
is_state() { [ "$(state "$1")" = "$2" ]; }

# Job ids: NODE.BOOT/NAME; files in $RIG_SYNC/cmd/NODE.BOOT/NAME.{sh,out,rc}
# (NAME.sh in new/ until the agent starts it).
job_result() {
	local t=$1 job=$2 k=${2%%.*} f=$RIG_SYNC/cmd/$2
	local b=${job#*.} st bt
	b=${b%%/*}
	local end=$((SECONDS + t))
	while [ ! -e "$f.rc" ]; do
		# state and boot without a process: this loop runs 20 times a second
		st=starting bt=1
		read -r st 2>/dev/null <"$ctl/$k.state" || true
		read -r bt 2>/dev/null <"$ctl/$k.boot" || true
		if [ "$st" != running ] || [ "$bt" != "$b" ]; then
			cat "$f.out" 2>/dev/null
			echo "multi-ctl: VM $k (boot $b) went away before job $job ended" >&2
			return 125
		fi
		if [ $SECONDS -ge $end ]; then
			cat "$f.out" 2>/dev/null
			echo "multi-ctl: job $job in VM $k: no result after ${t}s" >&2
			return 124
		fi
		sleep 0.05	# a test waits on each: as often as the agent looks
	done
	cat "$f.out"
	return "$(cat "$f.rc")"
}
job_spawn() {
	local k=$1 b
	shift
	node "$k"
	b=$(boot "$k")
	[ -e "$RIG_SYNC/agent.$k.$b" ] || { echo "multi-ctl: the agent of VM $k (boot $b) is not up" >&2; return 126; }
	local name
	name=$(date +%s%N)-$$-$RANDOM
	local f=$RIG_SYNC/cmd/$k.$b/new/$name
	printf '%s\n' "$*" >"$f.tmp"
	mv "$f.tmp" "$f.sh"
	echo "$k.$b/$name"
}

cmd=$1
shift
case "$cmd" in
cut) node "$1"; qmp "$1" set_link name=nic0 up=false ;;
restore) node "$1"; qmp "$1" set_link name=nic0 up=true ;;
freeze) node "$1"; qmp "$1" stop ;;
thaw) node "$1"; qmp "$1" cont ;;
kill)
	node "$1"
	is_state "$1" running || rig_die "VM $1 is not running ($(state "$1"))"
	touch "$ctl/$1.kill"
	qmp "$1" quit || true
	wait_for 60 is_state "$1" killed || rig_die "VM $1 not down 60 s after quit"
	;;
start|reboot)
	t=300
	if [ "${1:-}" = -t ]; then t=$2; shift 2; fi
	node "$1"
	if [ "$cmd" = reboot ]; then "$0" -r "$run" kill "$1"; fi
	is_state "$1" killed || rig_die "VM $1 is not killed ($(state "$1")): nothing to start"
	b=$(($(boot "$1") + 1))
	touch "$ctl/$1.start"
	rig_wait -t "$t" "up.$1.$b"
	;;
state) node "$1"; echo "$(state "$1") boot $(boot "$1")" ;;
boot) node "$1"; boot "$1" ;;
qmp) node "$1"; k=$1; shift; "$RIG_DIR/qmp.py" "$run-$k" "$@" ;;
exec)
	t=120
	if [ "${1:-}" = -t ]; then t=$2; shift 2; fi
	job=$(job_spawn "$@") || exit $?
	job_result "$t" "$job"
	;;
spawn) job_spawn "$@" ;;
result)
	t=120
	if [ "${1:-}" = -t ]; then t=$2; shift 2; fi
	job_result "$t" "$1"
	;;
done) [ -e "$RIG_SYNC/cmd/$1.rc" ] ;;
agents)
	t=300
	if [ "${1:-}" = -t ]; then t=$2; shift 2; fi
	# shellcheck disable=SC2046 # numbers
	[ $# -gt 0 ] || set -- $(seq 1 "$nnodes")
	want=()
	for k in "$@"; do
		node "$k"
		want+=("agent.$k.$(boot "$k")")
	done
	rig_wait -t "$t" "${want[@]}"
	;;
stop) rig_mark stop ;;
mark) rig_mark "$@" ;;
wait) rig_wait "$@" ;;
*) rig_die "unknown command '$cmd' (see $0 without arguments)" ;;
esac
