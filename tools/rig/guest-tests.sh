#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of run-tests.sh: runs inside the rig VM, never on the host.
#
# Loads the module, runs each test with a timeout, prints TAP (kselftest
# runner style: each test's output prefixed with "# ", then one ok / not ok
# line per test), unloads the module and saves dmesg.
#
# Environment (set by run-tests.sh):
#   HBMPOOL_KO         module to load (required)
#   HBMPOOL_PARAMS     module parameters for insmod (optional)
#   RIG_TESTDIR        directory the test lines are relative to
#   RIG_TESTS          one test per line: executable [args...]
#   RIG_TEST_TIMEOUT   seconds per test
# Results in /out: insmod.rc, rmmod.rc, tests/NN.log, tests/NN.rc, results.tap
set -u

out=${RIG_OUT:-/out}
res=$out/tests
mkdir -p "$res"
tap() { echo "$*" | tee -a "$out/results.tap"; }

mapfile -t tests <<<"$RIG_TESTS"
[ -n "${tests[0]:-}" ] || tests=()
modname=$(basename "$HBMPOOL_KO" .ko)
modname=${modname//-/_}

echo "# rig: $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ { print $2 / 1024 " MiB" }' /proc/meminfo)"
# shellcheck disable=SC2086 # HBMPOOL_PARAMS is a list of words
insmod "$HBMPOOL_KO" ${HBMPOOL_PARAMS:-}
rc=$?
echo $rc >"$out/insmod.rc"
if [ $rc != 0 ]; then
	echo "# rig: insmod $HBMPOOL_KO ${HBMPOOL_PARAMS:-} failed with status $rc"
fi

tap "TAP version 13"
tap "1..${#tests[@]}"
fails=0
n=0
for t in "${tests[@]}"; do
	n=$((n + 1))
	id=$(printf '%02d' $n)
	read -r -a argv <<<"$t"
	name="selftests: hbmpool: $t"
	echo "# $name"
	start=$SECONDS
	(
		cd "$RIG_TESTDIR" &&
			timeout -k 5 "$RIG_TEST_TIMEOUT" "./${argv[0]}" "${argv[@]:1}" </dev/null 2>&1
		echo $? >"$res/$id.rc"
	) | tee "$res/$id.log" | sed -u 's/^/# /'
	rc=$(cat "$res/$id.rc" 2>/dev/null || echo 126)
	took="$((SECONDS - start))s"
	case $rc in
	0) tap "ok $n $name # $took" ;;
	4) tap "ok $n $name # SKIP" ;;
	124|137) tap "not ok $n $name # TIMEOUT ${RIG_TEST_TIMEOUT}s"; fails=$((fails + 1)) ;;
	*) tap "not ok $n $name # exit=$rc"; fails=$((fails + 1)) ;;
	esac
done

if [ -d "/sys/module/$modname" ]; then
	rmmod "$modname"
	rc=$?
	echo $rc >"$out/rmmod.rc"
	[ $rc = 0 ] || echo "# rig: rmmod $modname failed with status $rc"
else
	echo "# rig: $modname not loaded at the end: rmmod skipped"
fi
dmesg >"$out/dmesg.txt"
[ $fails = 0 ]
