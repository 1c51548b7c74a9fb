#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A guest command for multi.sh that runs what the host asks: the host side
# (multi-ctl.sh exec / spawn) drops scripts into $RIG_SYNC/cmd/NODE.BOOT/new/ and
# reads their output and exit status back from there.  Never run on the host.
#
#   tools/rig/multi.sh -c HOST-SCRIPT -- tools/rig/multi-agent.sh
#
# Each JOB.sh that appears in new/ is moved up into the command directory
# and run once there, in the background (jobs run concurrently; ordering is
# the host's business), through bash, cwd = the repo, stdin /dev/null; its
# stdout and stderr go to JOB.out, then its exit status to JOB.rc (written
# last, atomically).  new/ holds only the jobs not yet started, so a poll
# reads a directory of a few names, not every job the test has sent (bash
# matching hundreds of names costs a TCG guest milliseconds, 20 times a
# second).  The agent marks
# "agent.NODE.BOOT" when it is polling, and exits 0 when $RIG_SYNC/stop or
# $RIG_SYNC/abort appears (multi.sh writes stop when the host command ends);
# the VM then powers off.  A VM restarted by the host gets a new, empty
# command directory (its BOOT is one more).
set -u
# shellcheck source-path=SCRIPTDIR source=multi-lib.sh
. "$(dirname "$0")/multi-lib.sh"

dir=$RIG_SYNC/cmd/$RIG_NODE.$RIG_BOOT
mkdir -p "$dir/new"
# The pause between polls without a process: a read that times out on a
# FIFO nobody writes to (sleep(1) would be a fork and an exec twenty times a
# second in every VM, which TCG makes dear when many VMs share few cores).
# A test waits on every command it sends: a poll every 50 ms, and the stop
# and abort files looked for every 10th poll only (one 9p lookup a poll).
pause_fifo=$(mktemp -u /tmp/multi-agent.XXXXXX)
if mkfifo "$pause_fifo" && exec {pause_fd}<>"$pause_fifo"; then
	rm -f "$pause_fifo"
	pause() { read -r -t 0.05 -u "$pause_fd" _ || true; }
else
	pause() { sleep 0.05; }
fi
rig_mark "agent.$RIG_NODE.$RIG_BOOT"
polls=0
while [ $((polls++ % 10)) != 0 ] ||
	{ [ ! -e "$RIG_SYNC/stop" ] && [ ! -e "$RIG_SYNC/abort" ]; }; do
	for f in "$dir"/new/*.sh; do
		[ -e "$f" ] || continue
		j=$dir/${f##*/}
		j=${j%.sh}
		mv -f "$f" "$j.sh" || continue
		(
			bash "$j.sh" >"$j.out" 2>&1 </dev/null
			echo $? >"$j.rc.tmp"
			mv -f "$j.rc.tmp" "$j.rc"
		) &
	done
	pause
done
why=stop
[ -e "$RIG_SYNC/abort" ] && why="abort: $(cat "$RIG_SYNC/abort")"
echo "multi-agent: node $RIG_NODE: $why"
exit 0
