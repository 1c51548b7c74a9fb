#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of replica_test.sh: an application that keeps using a region
# while the host kills, cuts or freezes its copies' VMs.  Runs in a VM of
# the multi-VM rig (started by "multi-ctl.sh spawn"), never on the host.
#
# usage: replica_loop.sh MODE NAME SEED TAG
#   MODE wv: every round writes the region with a new seed (SEED+1, +2...)
#            (regionio write: every page, then REGION_SYNC) and verifies it
#            (regionio verify, random order): the writer and its checker;
#   MODE v:  every round verifies the region against SEED (written before).
# A round that begins while $RIG_SYNC/TAG.dead exists is "after=1" (it ran
# after the fault), while $RIG_SYNC/TAG.done exists "after=2"; the loop
# ends after the first after=2 round, so that at least one whole round runs
# after the host said the fault is over (or 200 rounds: "too many rounds").
# Each round prints "begin I after=A", regionio's summary lines and then
#   "round I seed S after=A rc=RC"   (RC: regionio's exit status, 0 = exact)
# Environment: RIO (the regionio binary), RIG_SYNC.
set -u
mode=$1 name=$2 s=$3 tag=$4
i=0
while :; do
	a=0
	[ -e "$RIG_SYNC/$tag.dead" ] && a=1
	[ -e "$RIG_SYNC/$tag.done" ] && a=2
	echo "begin $i after=$a"
	rc=0
	if [ "$mode" = wv ]; then
		s=$((s + 1))
		timeout -k 5 300 "$RIO" write --name "$name" --seed $s || rc=$?
		[ $rc = 0 ] && { timeout -k 5 300 "$RIO" verify --name "$name" --seed $s --order rand || rc=$?; }
	else
		timeout -k 5 300 "$RIO" verify --name "$name" --seed "$s" --order rand || rc=$?
	fi
	echo "round $i seed $s after=$a rc=$rc"
	i=$((i + 1))
	[ $a = 2 ] && break
	if [ $i -ge 200 ]; then
		echo "too many rounds"
		break
	fi
done
