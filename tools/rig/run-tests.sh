#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the hbmpool selftests in one rig VM and judge the run.
#
# usage: run-tests.sh [-t SECS] [-i ID] [-j VMS] [TEST...]
#   TEST: a line of the test list, or its executable's name (default: all)
#   -t SECS: timeout per test (default $RIG_TEST_TIMEOUT, else the
#            "timeout=SECS" line of the test directory's kselftest settings
#            file, selftests/hbmpool/settings: the one place for it)
#   -i ID: VM id (default tests): output in $RIG_BUILD/out-ID/
#   -j VMS: run the tests in VMS VMs at once (default $RIG_TEST_VMS, else 1),
#           ids ID-1 .. ID-VMS, each with its own module, kernel log and
#           kmemleak scan.  VM 1 has $RIG_SMP CPUs (vm.sh: 2); the others
#           one, and take only the tests that tests.seconds (beside the
#           list: "TEST SECONDS [1cpu]" lines) marks 1cpu: those with no
#           concurrency of their own.  Most tests keep one CPU busy, and
#           vCPUs beyond the host's CPUs stall each other (a vCPU waits
#           for one the host does not run: a 2-CPU VM beside another 2-CPU
#           VM on 2 host CPUs ran gup_test 5 times slower).  The tests are
#           dealt out by their usual time (a test not in tests.seconds
#           counts 5 s): those for VM 1 first, then the 1cpu ones, longest
#           first, each to the VM with the least so far; each VM runs its
#           share in list order.  Each VM's output is printed when all are
#           done; the last line sums them.
#
# The test list is selftests/hbmpool/tests.list if it exists: one test per
# line, an executable relative to selftests/hbmpool/ and optional arguments;
# blank lines and '#' comments are ignored.  Without it: every executable
# selftests/hbmpool/*_test and *.sh, in name order.
#
# In the VM (guest-tests.sh): insmod kmod/hbmpool.ko $HBMPOOL_PARAMS, each
# test under timeout(1) printing TAP to the console, rmmod, dmesg.
# Output in $RIG_BUILD/out-ID/ (see vm.sh): tests/NN.log, tests/NN.rc,
# results.tap, dmesg.txt, console.log.
#
# The run fails (exit 1) if a test case fails, a test binary exits non-zero,
# crashes or times out, insmod or rmmod fails, the VM crashes or times out,
# or the guest kernel log shows a bug (klog-check.sh, with the allow list
# selftests/hbmpool/kernel-log.allow if it exists).  Test cases are counted
# from each binary's kselftest "# Totals:" line, else from its own TAP
# ok / not ok lines, else as one case from its exit status (4 = skip).
# The last line is "N passed, N failed[, N skipped]".
#
# Environment: HBMPOOL_PARAMS, HBMPOOL_KO (default kmod/hbmpool.ko),
# RIG_SELFTESTS (default selftests/hbmpool), RIG_TEST_TIMEOUT,
# RIG_TIMEOUT (whole VM, default 1500), KVER, RIG_BUILD.
# Debug kernels: RIG_KERNEL (lib.sh) boots a bzImage of our own; RIG_KMEMLEAK=1
# scans for leaks after the tests and the rmmod (init.sh) and fails the run if
# a leaked object's backtrace is in hbmpool: a "[hbmpool]" frame, or a bare
# module-area address (the module is gone by then; every other driver of such
# a kernel is built in).  Reports in kmemleak.txt, kmemleak-hbmpool.txt.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

per_test=${RIG_TEST_TIMEOUT:-}
id=tests
vms=${RIG_TEST_VMS:-1}
while [ $# -gt 0 ]; do
	case "$1" in
	-t) per_test=$2; shift 2 ;;
	-i) id=$2; shift 2 ;;
	-j) vms=$2; shift 2 ;;
	-h|--help) sed -n '3,48p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	--) shift; break ;;
	-*) echo "usage: $0 [-t SECS] [-i ID] [-j VMS] [TEST...]" >&2; exit 2 ;;
	*) break ;;
	esac
done

ko=$(realpath -m "${HBMPOOL_KO:-$REPO/kmod/hbmpool.ko}")
tdir=$(realpath -m "${RIG_SELFTESTS:-$REPO/selftests/hbmpool}")
allow=$tdir/kernel-log.allow
[ -r "$ko" ] || rig_die "$ko not built (make module)"
[ -d "$tdir" ] || rig_die "no test directory $tdir"
if [ -z "$per_test" ]; then
	# kselftest's settings file: "timeout=SECS" (run_kselftest.sh reads it too)
	[ -r "$tdir/settings" ] || rig_die "no $tdir/settings (timeout=SECS) and no -t"
	per_test=$(sed -n 's/^timeout=\([0-9]*\)$/\1/p' "$tdir/settings" | tail -n 1)
	[ -n "$per_test" ] || rig_die "$tdir/settings has no line timeout=SECS"
fi
[[ "$per_test" =~ ^[1-9][0-9]*$ ]] || rig_die "bad per-test timeout '$per_test'"
[[ "$vms" =~ ^[1-9][0-9]?$ ]] || rig_die "bad number of VMs '$vms' (-j, RIG_TEST_VMS: 1 to 99)"

# "SECONDS ONE" for test line $1 (tests.seconds): its usual seconds in the
# rig (else 5) and 1 if it may run in a 1-CPU VM (else 0).
test_seconds() {
	local f=$tdir/tests.seconds
	[ -r "$f" ] && awk -v t="${1%% *}" '
		/^[ \t]*(#|$)/ { next }
		$1 == t && $2 ~ /^[0-9]+$/ { print $2, ($3 == "1cpu"); found = 1; exit }
		END { if (!found) print 5, 0 }' "$f" || echo 5 0
}

# -j: deal the tests out to $vms VMs (longest first, to the least loaded),
# run this script once per VM at once, print each VM's output, sum them.
run_shards() {
	local i k best order sum one p f s rc=0 line
	local -a load share pids
	for ((k = 1; k <= vms; k++)); do load[k]=0; done
	mapfile -t order < <(for i in "${!tests[@]}"; do
		echo "$(test_seconds "${tests[i]}") $i"; done | sort -k2,2n -k1,1nr -k3,3n)
	for line in "${order[@]}"; do
		read -r sum one i <<<"$line"
		best=1
		for ((k = 2; k <= vms && one; k++)); do
			[ "${load[k]}" -lt "${load[best]}" ] && best=$k
		done
		share[i]=$best
		load[best]=$((load[best] + sum))
	done
	mkdir -p "$RIG_BUILD"
	for ((k = 1; k <= vms; k++)); do
		local -a mine=()
		for i in "${!tests[@]}"; do
			[ "${share[i]}" = "$k" ] && mine+=("${tests[i]}")
		done
		local smp=${RIG_SMP:-2}
		[ "$k" -gt 1 ] && smp=1
		echo "rig: VM $id-$k ($smp CPU): ${#mine[@]} tests, about ${load[k]} s: ${mine[*]}"
		if [ ${#mine[@]} = 0 ]; then
			echo "0 passed, 0 failed" >"$RIG_BUILD/run-tests-$id-$k.log"
			pids[k]=
			continue
		fi
		RIG_SMP=$smp "$0" -t "$per_test" -i "$id-$k" -j 1 "${mine[@]}" \
			>"$RIG_BUILD/run-tests-$id-$k.log" 2>&1 &
		pids[k]=$!
	done
	p=0 f=0 s=0
	for ((k = 1; k <= vms; k++)); do
		[ -z "${pids[k]}" ] || wait "${pids[k]}" || rc=1
	done
	for ((k = 1; k <= vms; k++)); do
		echo
		echo "==== VM $id-$k ($RIG_BUILD/run-tests-$id-$k.log) ===="
		cat "$RIG_BUILD/run-tests-$id-$k.log"
		line=$(tail -n 1 "$RIG_BUILD/run-tests-$id-$k.log")
		if [[ "$line" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed(,\ ([0-9]+)\ skipped)?$ ]]; then
			p=$((p + BASH_REMATCH[1]))
			f=$((f + BASH_REMATCH[2]))
			s=$((s + ${BASH_REMATCH[4]:-0}))
		else
			echo "FAIL  rig: VM $id-$k gave no summary"
			f=$((f + 1))
		fi
	done
	[ "$f" -gt 0 ] && rc=1
	echo
	line="$p passed, $f failed"
	[ "$s" -gt 0 ] && line="$line, $s skipped"
	echo "==== hbmpool selftests in $vms VMs: $([ $rc = 0 ] && echo passed || echo FAILED) ===="
	echo "$line"
	return $rc
}

all=()
if [ -r "$tdir/tests.list" ]; then
	while read -r line; do
		line=${line%%#*}
		read -r -a w <<<"$line"
		[ ${#w[@]} -gt 0 ] && all+=("${w[*]}")
	done <"$tdir/tests.list"
else
	for f in "$tdir"/*_test "$tdir"/*.sh; do
		[ -f "$f" ] && [ -x "$f" ] && all+=("$(basename "$f")")
	done
fi
tests=()
if [ $# -eq 0 ]; then
	tests=("${all[@]+"${all[@]}"}")
else
	for want in "$@"; do
		found=0
		for t in "${all[@]+"${all[@]}"}"; do
			exe=${t%% *}
			if [ "$t" = "$want" ] || [ "$exe" = "$want" ] || [ "$(basename "$exe")" = "$want" ]; then
				tests+=("$t")
				found=1
			fi
		done
		[ $found = 1 ] || rig_die "no test '$want' in the list (${all[*]+"${all[*]}"})"
	done
fi
for t in "${tests[@]+"${tests[@]}"}"; do
	exe=${t%% *}
	[ -x "$tdir/$exe" ] || rig_die "test $tdir/$exe is missing or not executable (make selftests)"
done
# No test at all is a failure, not an empty pass: 'make check' must not pass
# with the tests deleted.
[ ${#tests[@]} -gt 0 ] || rig_die "no tests found in $tdir (make selftests)"

[ "$vms" -gt ${#tests[@]} ] && vms=${#tests[@]}
if [ "$vms" -gt 1 ]; then
	run_shards
	exit $?
fi

out=$RIG_BUILD/out-$id
kml_args=()	# RIG_KMEMLEAK=1: see the kmemleak section below
[ "${RIG_KMEMLEAK:-0}" = 1 ] && kml_args=(-a rig.kmemleak=1)
vmrc=0
"$RIG_DIR/vm.sh" -i "$id" -t "${RIG_TIMEOUT:-1500}" -b "$(dirname "$ko")" -b "$tdir" \
	"${kml_args[@]+"${kml_args[@]}"}" \
	-e "HBMPOOL_KO=$ko" -e "HBMPOOL_PARAMS=${HBMPOOL_PARAMS:-}" \
	-e "RIG_TESTDIR=$tdir" -e "RIG_TEST_TIMEOUT=$per_test" \
	-e "RIG_TESTS=$(printf '%s\n' "${tests[@]+"${tests[@]}"}")" \
	-- "$RIG_DIR/guest-tests.sh" || vmrc=$?
if [ ! -e "$out/console.log" ]; then
	echo "rig: the VM did not start"
	echo "0 passed, 1 failed"
	exit 1
fi

echo
echo "==== hbmpool selftests: results (details in $out) ===="
passed=0
failed=0
skipped=0
fail() { printf 'FAIL  %s\n' "$*"; failed=$((failed + 1)); }

case $vmrc in
124) fail "rig: the VM timed out" ;;
125) fail "rig: the VM crashed (kernel panic?) - see console.log" ;;
126) fail "rig: the VM could not run the tests" ;;
esac
if [ ! -s "$out/insmod.rc" ]; then
	fail "rig: insmod did not run"
elif [ "$(cat "$out/insmod.rc")" != 0 ]; then
	fail "rig: insmod $ko ${HBMPOOL_PARAMS:-} failed"
fi

n=0
for t in "${tests[@]+"${tests[@]}"}"; do
	n=$((n + 1))
	log=$out/tests/$(printf '%02d' $n).log
	rcf=$out/tests/$(printf '%02d' $n).rc
	if [ ! -s "$rcf" ]; then
		fail "$t: did not finish (VM died?)"
		continue
	fi
	rc=$(cat "$rcf")
	p=0 f=0 s=0
	totals=$(tr -d '\r' <"$log" | grep -E '^# Totals: ' | tail -n 1 || true)
	if [ -n "$totals" ]; then
		# kselftest harness: pass:N fail:N xfail:N xpass:N skip:N error:N
		v() { local x; x=$(sed -n "s/.* $1:\([0-9]*\).*/\1/p" <<<"$totals"); echo "${x:-0}"; }
		p=$(( $(v pass) + $(v xfail) ))
		f=$(( $(v fail) + $(v xpass) + $(v error) ))
		s=$(v skip)
	else
		s=$(tr -d '\r' <"$log" | grep -ciE '^ok [0-9]+.*# *skip' || true)
		p=$(tr -d '\r' <"$log" | grep -cE '^ok [0-9]+' || true)
		p=$((p - s))
		f=$(tr -d '\r' <"$log" | grep -cE '^not ok [0-9]+' || true)
		if [ $((p + f + s)) = 0 ]; then
			case $rc in 0) p=1 ;; 4) s=1 ;; esac
		fi
	fi
	why=""
	case $rc in
	0|4) ;;
	124|137) why="timed out after ${per_test}s" ;;
	*) if [ "$rc" -gt 128 ]; then why="killed by signal $((rc - 128))"; else why="exit status $rc"; fi ;;
	esac
	# A binary that failed counts as at least one failed case.
	[ -n "$why" ] && [ "$f" = 0 ] && f=1
	passed=$((passed + p))
	skipped=$((skipped + s))
	failed=$((failed + f))
	if [ -n "$why" ] || [ "$f" -gt 0 ]; then
		printf 'FAIL  %s: %s%d passed, %d failed, %d skipped\n' "$t" "${why:+$why; }" "$p" "$f" "$s"
	else
		printf 'ok    %s: %d passed, %d skipped\n' "$t" "$p" "$s"
	fi
done

if [ -s "$out/insmod.rc" ] && [ "$(cat "$out/insmod.rc")" = 0 ] && [ $vmrc -lt 124 ]; then
	if [ ! -s "$out/rmmod.rc" ]; then
		printf 'note  rig: module not loaded at the end, rmmod skipped\n'
	elif [ "$(cat "$out/rmmod.rc")" != 0 ]; then
		fail "rig: rmmod failed (module still in use?)"
	fi
fi
logs=()
for f in "$out/dmesg.txt" "$out/console.log"; do
	[ -s "$f" ] && logs+=("$f")
done
if [ ${#logs[@]} = 0 ]; then
	fail "rig: no kernel log"
elif ! badlines=$("$RIG_DIR/klog-check.sh" -a "$allow" "${logs[@]}"); then
	fail "rig: guest kernel log shows a bug:"
	printf '%s\n' "$badlines" | head -n 40 | sed 's/^/      /'
fi

# --- RIG_KMEMLEAK=1: leaks attributable to the module ---
if [ "${RIG_KMEMLEAK:-0}" = 1 ] && [ $vmrc -lt 124 ]; then
	if [ ! -s "$out/kmemleak.status" ]; then
		fail "rig: no kmemleak scan ran"
	elif [ "$(cat "$out/kmemleak.status")" != ok ]; then
		fail "rig: kmemleak scan: $(cat "$out/kmemleak.status")"
	else
		awk '
		function flush() { if (rec != "" && hit) { printf "%s", rec; n++ } rec = ""; hit = 0 }
		/^unreferenced object / { flush() }
		{ rec = rec $0 "\n" }
		/\[hbmpool\]/ || /^ *\[<[^>]*>\] 0xffffffff[c-f][0-9a-f]*$/ { hit = 1 }
		END { flush(); exit n > 0 }
		' "$out/kmemleak.txt" >"$out/kmemleak-hbmpool.txt" && rc=0 || rc=$?
		total=$(grep -c '^unreferenced object ' "$out/kmemleak.txt" || true)
		leaks=$(grep -c '^unreferenced object ' "$out/kmemleak-hbmpool.txt" || true)
		if [ "$rc" != 0 ]; then
			fail "rig: kmemleak: $leaks leaked object(s) from hbmpool (of $total):"
			head -n 40 "$out/kmemleak-hbmpool.txt" | sed 's/^/      /'
		else
			printf 'ok    rig: kmemleak: no leak from hbmpool (%d other suspect(s) in kmemleak.txt)\n' "$total"
		fi
	fi
fi

summary="$passed passed, $failed failed"
[ $skipped -gt 0 ] && summary="$summary, $skipped skipped"
echo "$summary"
[ $failed = 0 ]
