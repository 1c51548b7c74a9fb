#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The goals of issue 12 over the shared-memory transport "shm" and, in the
# same run, on a simulated node with zero latency ('make bench-shm').  Run on
# the host: it boots 2 VMs with tools/rig/multi.sh (run name shmbench, one
# ivshmem-plain device per node), each running multi-agent.sh, and drives
# them from the host side (this script again, with --host), as
# tools/rig/bench-tcp.sh does.  Needs the VM lock like any VM run:
# flock /tmp/hbmpool-vm.lock tools/rig/bench-shm.sh
#
# Setup: hbmpool.ko in both VMs, one domain (a random key in $RIG_SYNC), as
# selftests/multi/shm_test.sh has it: VM K is node K at 10.77.0.K:7070, its
# segment provider shm on its own ivshmem device (rig_shm_dev K; VM2's of
# size SEG, VM1's 64M), and each adds the other with transport shm and the
# other's device (a home serves members only).  VM1's node 2 is the one
# measured: page data moves by CPU copies out of VM2's device, only control
# over TCP.  VM1 also adds node 3, simulated
# (the default transport: its "HBM" is VM1's RAM; hbmbench sets its latency
# to 0 and lifts its bandwidth cap).  Both nodes: distance 12, link scaleup.
# VM1 waits until its link to node 2 is live.
#
# Then PASSES runs, the order of the two nodes alternating (odd: shm, then
# sim; even: sim, then shm), each of them
#   VM1: tools/hbmbench --node N --size SIZE --iterations ITER --passes
#        HBPASSES --evict
# which measures every pair of issue 12's goals that needs one thread
# (seq_fault / memcpy_warm, rand_fault / anon_fault p50 and p99,
# seq_fault_evict / seq_fault), each pair in every one of its passes, the
# odd passes phase first, the even ones baseline first; on the sim node also
# its sim-only pairs (seq_fault_retry, pread_hbm).  Around every shm run the
# script reads VM1's debugfs nodeN/shm (copies made and refused) and the
# link's bytes: the run fails unless copies were made, none was refused, and
# the link moved at least the bytes that the runs' first touches need
# (5 x SIZE x ITER per hbmbench pass: seq_fault twice, rand_fault,
# seq_fault_evict, and memcpy_warm's warm-up), and unless hbmbench saw node
# 2's transport as shm.
#
# Output: a summary (one row per hbmbench pass: the four ratios and their
# terms; per node and goal the range, median and passes that met it; the
# shm node's seq_fault MB/s against the sim node's, per run) and the
# key=value lines (shm.runR.KEY=V, sim.runR.KEY=V: every key=value line of
# hbmbench, plus the script's own) on stdout and in $RIG_BUILD/bench-shm.txt;
# the raw outputs (hbmbench, setup, counters, dmesg of both VMs) in
# $RIG_BUILD/bench-shm/.  Numbers only: nothing here asserts on timing.
# Exit status non-zero when a step failed, the copies check failed, or a
# guest kernel log shows a bug (multi.sh).
#
# Environment: BENCH_SHM_SIZE (region size, default 16M), BENCH_SHM_ITER
# (hbmbench --iterations, default 2), BENCH_SHM_HBPASSES (hbmbench --passes,
# default 2), BENCH_SHM_PASSES (runs per node, default 2), BENCH_SHM_MB
# (ivshmem per node, MiB, a power of two, default 256), BENCH_SHM_SEG (VM2's
# segment, default 192M), BENCH_SHM_SMP (vCPUs per VM, default 1, or
# VM1's,VM2's: with "2,1" the measured VM has a vCPU for the background
# evictor and a second thread, as in 'make bench', and VM2, the home, which
# only serves control while VM1 measures, keeps one), BENCH_SHM_ARGS (more hbmbench
# arguments, e.g. "--workload --threads 2": the summary then adds work_2x
# and the thread goals), MULTI_TIMEOUT (the whole run, default 900 s),
# RIG_BUILD, RIG_PREALLOC (default 1), RIG_APPEND (default tsc=reliable).
set -u
# guest memory backed on the host before boot (vm.sh --prealloc)
export RIG_PREALLOC=${RIG_PREALLOC:-1}
# a cheap clock in a VM of 2 vCPUs too (the Makefile's bench target says why)
export RIG_APPEND=${RIG_APPEND-tsc=reliable}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
rig=$repo/tools/rig
build=${RIG_BUILD:-$repo/build/rig}

if [ "${1:-}" != --host ]; then
	missing=$(cd "$repo" && ls kmod/hbmpool.ko tools/hbmbench tools/hbmctl/hbmctl 2>&1 >/dev/null)
	[ -z "$missing" ] || { echo "bench-shm: not built (make module tools): $missing" >&2; exit 1; }
	rc=0
	"$rig/multi.sh" -r shmbench -n 2 --shm "${BENCH_SHM_MB:-256}" -t "${MULTI_TIMEOUT:-900}" \
		--smp "${BENCH_SHM_SMP:-1}" \
		-c "$here/bench-shm.sh --host" -- "$rig/multi-agent.sh" || rc=$?
	[ $rc = 0 ] || { echo "bench-shm: exit $rc; host side:" >&2; tail -20 "$build/multi-shmbench/host.log" >&2; }
	exit $rc
fi

# --- host side, run by multi.sh -c
cd "$repo" || exit 1
# shellcheck source-path=SCRIPTDIR source=multi-lib.sh
. "$rig/multi-lib.sh"
ctl() { "$rig/multi-ctl.sh" "$@"; }
die() { echo "bench-shm: $*" >&2; ctl stop; exit 1; }
say() { echo "bench-shm: [$((SECONDS))s] $*"; }
H=tools/hbmctl/hbmctl
raw=$build/bench-shm
summary=$build/bench-shm.txt
rm -rf "$raw"
mkdir -p "$raw"
size=${BENCH_SHM_SIZE:-16M}
iters=${BENCH_SHM_ITER:-2}
hbpasses=${BENCH_SHM_HBPASSES:-2}
runs=${BENCH_SHM_PASSES:-2}
seg=${BENCH_SHM_SEG:-192M}
smp=${BENCH_SHM_SMP:-1}
extra=${BENCH_SHM_ARGS:-}
dev1=$(rig_shm_dev 1) dev2=$(rig_shm_dev 2)
declare -A node=([shm]=2 [sim]=3)
kv=$raw/kv.txt
: >"$kv"
put() { echo "$1=$2" >>"$kv"; }
# v KEY: the value of KEY in the key=value lines so far.
v() { sed -n "s/^$1=//p" "$kv" | head -1; }
failed=0

ctl agents -t 400 1 2 || die "the VMs' agents did not come up"
head -c 32 /dev/urandom >"$RIG_SYNC/key"
join="insmod kmod/hbmpool.ko && $H domain set name rig self"
ctl exec -t 120 2 "$join 2 key-file $RIG_SYNC/key && $H node set 2 addr 10.77.0.2 port 7070 &&
	$H segment add $seg provider shm device $dev2 &&
	$H node add 1 capacity 64M distance 12 transport shm link scaleup addr 10.77.0.1 port 7070 device $dev1" \
	>"$raw/setup.vm2.txt" 2>&1 ||
	die "VM2: the hbmpool setup failed: $(cat "$raw/setup.vm2.txt")"
ctl exec -t 200 1 "$join 1 key-file $RIG_SYNC/key && $H node set 1 addr 10.77.0.1 port 7070 &&
	$H segment add 64M provider shm device $dev1 &&
	$H node add 2 capacity $seg distance 12 transport shm link scaleup addr 10.77.0.2 port 7070 device $dev2 &&
	$H node add 3 capacity 256M distance 12 link scaleup &&
	for i in \$(seq 120); do $H -j link show 2 | grep -q '\"health\": *\"live\"' && exit 0; sleep 1; done
	echo 'the link to node 2 is not live after 120 s'; $H link show 2; exit 1" >"$raw/setup.vm1.txt" 2>&1 ||
	die "VM1: the hbmpool setup failed: $(cat "$raw/setup.vm1.txt")"
say "VM1's link to node 2 (shm) live"
ctl exec 1 "$H node show; $H link show 2; $H params show" >>"$raw/setup.vm1.txt" 2>&1
put readahead_max_pages "$(ctl exec 1 'cat /sys/kernel/hbmpool/readahead_max_pages' 2>/dev/null)"

# shm_counters: VM1's "COPIES REFUSED BYTES" for node 2 (BYTES -1 if link show
# has none), or nothing.
shm_counters() {
	ctl exec 1 "cat /sys/kernel/debug/hbmpool/node2/shm && $H -j link show 2" 2>/dev/null |
		awk '$1 == "copies" { c = $2 } $1 == "refused" { r = $2 }
		     match($0, /"bytes": *[0-9]+/) { b = substr($0, RSTART, RLENGTH); sub(/.*: */, "", b) }
		     END { if (c != "" && r != "") print c, r, (b == "" ? -1 : b) }'
}
[ -n "$(shm_counters)" ] || die "VM1 has no shm counters for node 2 (debugfs nodeN/shm)"

# The bytes the first touches of one hbmbench run need at least.
size_b=$(numfmt --from=iec "${size%B}")
need_b=$((5 * size_b * iters * hbpasses))

# bench T R: hbmbench on node T's node, run R; its key=value lines as T.runR.*.
bench() {
	local t=$1 r=$2 out=$raw/$1.run$2.hbmbench.txt c0 c1
	local -a a b
	[ "$t" = shm ] && read -r -a a <<<"$(shm_counters)"
	say "run $r: $t (node ${node[$t]})"
	ctl exec -t 900 1 "tools/hbmbench --node ${node[$t]} --size $size --iterations $iters --passes $hbpasses --evict $extra" \
		>"$out" 2>&1 || { echo "bench-shm: hbmbench on $t failed:"; tail -5 "$out"; failed=1; }
	sed -n "s/^\([a-z][a-z0-9_.]*=\)/$t.run$r.\1/p" "$out" >>"$kv"
	[ "$t" = shm ] || return 0
	read -r -a b <<<"$(shm_counters)"
	c0=${a[0]:-} c1=${b[0]:-}
	local copies=$((${c1:-0} - ${c0:-0})) refused=$((${b[1]:-0} - ${a[1]:-0})) bytes=$((${b[2]:-0} - ${a[2]:-0}))
	put "shm.run$r.shm_copies" "$copies"
	put "shm.run$r.shm_refused" "$refused"
	if [ "${a[2]:--1}" = -1 ] || [ "${b[2]:--1}" = -1 ]; then
		put "shm.run$r.link_bytes" "?"	# not in link show: not checked
		bytes=$need_b
	else
		put "shm.run$r.link_bytes" "$bytes"
	fi
	put "shm.run$r.link_bytes_needed" "$need_b"
	if [ -z "$c0" ] || [ -z "$c1" ] || [ "$copies" -le 0 ] || [ "$refused" != 0 ] || [ "$bytes" -lt "$need_b" ]; then
		echo "bench-shm: run $r: the fetches were not all shm copies: copies $copies, refused $refused," \
			"bytes $bytes (the first touches need $need_b)"
		put "shm.run$r.copies_check" failed
		failed=1
	else
		put "shm.run$r.copies_check" ok
	fi
	[ "$(v "shm.run$r.transport.node2")" = shm ] ||
		{ echo "bench-shm: run $r: hbmbench saw node 2 as '$(v "shm.run$r.transport.node2")', not shm"; failed=1; }
}

for ((r = 1; r <= runs; r++)); do
	if [ $((r % 2)) = 1 ]; then order="shm sim"; else order="sim shm"; fi
	for t in $order; do
		put "$t.run$r.order" "${order// /-then-}"
		bench "$t" "$r"
	done
	put "shm_vs_sim.run$r.seq_fault_mbps" "$(awk -v a="$(v "shm.run$r.mbps.seq_fault")" \
		-v b="$(v "sim.run$r.mbps.seq_fault")" 'BEGIN { if (a != "" && b > 0) printf "%.3f", a / b; else print "?" }')"
done

# The kernel's view, then teardown.
for k in 1 2; do
	ctl exec $k "$H link show; $H segment show; cat /sys/kernel/debug/hbmpool/node2/shm 2>/dev/null; dmesg" \
		>"$raw/vm$k.dmesg.txt" 2>&1
done
for k in 1 2; do
	ctl exec -t 120 $k "if [ $k = 1 ]; then $H node del 2 && $H node del 3; else $H node del 1; fi && rmmod hbmpool" \
		>"$raw/vm$k.rmmod.txt" 2>&1 || { echo "bench-shm: VM$k: node del / rmmod failed: $(cat "$raw/vm$k.rmmod.txt")"; failed=1; }
done

goals="seq_fault_vs_memcpy_warm:>=0.6 rand_fault_vs_anon_fault_p50:<=1.25 rand_fault_vs_anon_fault_p99:<=1.2 seq_fault_evict_vs_seq_fault:>=0.6"
# those of BENCH_SHM_ARGS' phases, where hbmbench measured them
for g in work_2x_vs_local_2x_time:'<=2' seq_fault_mt_vs_seq_fault:'>=1.8' rand_fault_mt_vs_rand_fault:'>=1.8'; do
	grep -q "^[a-z]*\.run[0-9]*\.goal\.${g%:*}\.pass" "$kv" && goals="$goals $g"
done
# stats T GOAL OP TARGET: "min max median met/n" of GOAL's ratios over every
# pass of every run on T; also as T.GOAL.{min,max,median,met} lines.
stats() {
	local s
	s=$(sed -n "s/^$1\.run[0-9]*\.goal\.$2\.pass[0-9]*=//p" "$kv" | sort -g |
		awk -v op="$3" -v t="$4" '{ x[++n] = $1; m += (op == ">=" ? $1 >= t : $1 <= t) }
		END { if (!n) { print "? ? ? 0/0"; exit }
		      med = n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
		      printf "%.2f %.2f %.2f %d/%d\n", x[1], x[n], med, m, n }')
	read -r mn mx md met <<<"$s"
	put "$1.$2.min" "$mn"
	put "$1.$2.max" "$mx"
	put "$1.$2.median" "$md"
	put "$1.$2.met" "$met"
	printf '%s-%s (%s) %s' "$mn" "$mx" "$md" "$met"
}
rowfmt='%-4s %3s %4s %-16s %9s %9s %9s %9s %9s %9s %9s %9s\n'
{
	echo "bench-shm: $(date -u +%Y-%m-%dT%H:%MZ), kernel $(ctl exec 1 'uname -r' 2>/dev/null), 2 VMs (TCG, vCPUs $smp, memory preallocated: $RIG_PREALLOC), commit $(git -C "$repo" describe --always --dirty 2>/dev/null)"
	echo "VM1: tools/hbmbench --node N --size $size --iterations $iters --passes $hbpasses --evict${extra:+ $extra};" \
		"shm: node 2, VM2's segment $seg on ivshmem $dev2; sim: node 3 in VM1, latency 0; readahead-max-pages $(v readahead_max_pages)"
	# shellcheck disable=SC2059 # the format is a variable
	printf "$rowfmt" node run pass order seq/mcpy p50/anon p99/anon evict/seq seq_MB/s mcpy_MB/s rand_p50 anon_p50
	for ((r = 1; r <= runs; r++)); do
		for t in shm sim; do
			for ((p = 1; p <= hbpasses; p++)); do
				g=$t.run$r.goal
				# shellcheck disable=SC2059
				printf "$rowfmt" $t $r $p "$(v "$t.run$r.order")" \
					"$(v "$g.seq_fault_vs_memcpy_warm.pass$p")" "$(v "$g.rand_fault_vs_anon_fault_p50.pass$p")" \
					"$(v "$g.rand_fault_vs_anon_fault_p99.pass$p")" "$(v "$g.seq_fault_evict_vs_seq_fault.pass$p")" \
					"$(v "$g.seq_fault_vs_memcpy_warm.pass$p.phase")" "$(v "$g.seq_fault_vs_memcpy_warm.pass$p.baseline")" \
					"$(v "$g.rand_fault_vs_anon_fault_p50.pass$p.phase")" "$(v "$g.rand_fault_vs_anon_fault_p50.pass$p.baseline")"
			done
		done
	done
	echo
	printf '%-30s %-7s %-24s %-24s\n' goal target "shm: min-max (median) met" "sim: min-max (median) met"
	for g in $goals; do
		key=${g%:*} tg=${g#*:}
		printf '%-30s %-7s %-24s %-24s\n' "$key" "$tg" "$(stats shm "$key" "${tg:0:2}" "${tg:2}")" \
			"$(stats sim "$key" "${tg:0:2}" "${tg:2}")"
	done
	echo
	for ((r = 1; r <= runs; r++)); do
		echo "run $r: shm seq_fault $(v "shm.run$r.mbps.seq_fault") MB/s, sim $(v "sim.run$r.mbps.seq_fault") MB/s:" \
			"shm/sim $(v "shm_vs_sim.run$r.seq_fault_mbps"); shm copies $(v "shm.run$r.shm_copies")," \
			"refused $(v "shm.run$r.shm_refused"), link bytes $(v "shm.run$r.link_bytes") (first touches: $need_b):" \
			"$(v "shm.run$r.copies_check")"
	done
	echo
	cat "$kv"
} >"$raw/summary.tmp"
tee "$summary" <"$raw/summary.tmp"
rm -f "$raw/summary.tmp"
echo "bench-shm: summary in $summary, raw outputs in $raw/"
ctl stop
exit $failed
