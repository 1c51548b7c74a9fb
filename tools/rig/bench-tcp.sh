#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hbmbench over the TCP transport against iperf3 between the same two VMs, in
# the same run ('make bench-tcp').  Run on the host: it boots 2 VMs with
# tools/rig/multi.sh (run name tcpbench), each running multi-agent.sh, and
# drives them from the host side (this script again, with --host).
#
# Setup: hbmpool.ko in both VMs, one domain (a random key in $RIG_SYNC), VM K
# is node K at 10.77.0.K:7070 with a 256M segment; each adds the other as a
# tcp node (scaleout).  VM1 waits until its link to node 2 is live.
#
# Then per scenario -- "lan" (the rig's network as it is), "netem50us" and
# "netem2ms" (tc netem delay on eth0 of BOTH VMs: a stand-in for scale-out
# and scale-across links; skipped with the reason printed when the guest
# kernel has no sch_netem) -- PASSES passes, alternating the order:
#   odd passes:  iperf3, then hbmbench;  even passes: hbmbench, then iperf3
#   iperf3   VM1: iperf3 -c 10.77.0.2 -t 5 -R -J (VM2 runs iperf3 -s): one
#            TCP stream from VM2 to VM1, the direction the page reads go
#   hbmbench VM1: tools/hbmbench --node 2 --size SIZE --iterations ITER
#            --evict --passes 1 (this script alternates the order itself):
#            regions homed on VM2 (hbmbench raises the cache budget
#            above the region for the non-evict phases)
#   ping     VM1: 10 pings of VM2 before the passes (the round trip)
# and reports seq_fault MB/s / iperf3 MB/s per pass, and seq_fault_huge (the
# same through a read-only MADV_HUGEPAGE mapping: pieces fetched whole and
# gathered) against seq_fault, both from the same hbmbench run.
#
# Output: a summary table and key=value lines (tcp.SCENARIO.passN.KEY=V) on
# stdout and in $RIG_BUILD/bench-tcp.txt; the raw outputs (iperf3 JSON,
# hbmbench, dmesg of both VMs) in $RIG_BUILD/bench-tcp/.  Numbers only:
# nothing here asserts on timing.  Exit status non-zero when a step failed
# or a guest kernel log shows a bug (multi.sh).
#
# Environment: BENCH_TCP_SIZE (region size, default 16M), BENCH_TCP_WAN_SIZE
# (the 2 ms scenario, default 2M), BENCH_TCP_ITER (hbmbench iterations,
# default 1), BENCH_TCP_PASSES (passes per scenario, default 2),
# BENCH_TCP_SCENARIOS (default "lan netem50us netem2ms"), BENCH_TCP_READAHEAD
# (VM1's readahead-max-pages, default: the module's), MULTI_TIMEOUT (the
# whole run, default 1800 s), RIG_BUILD, RIG_PREALLOC (default 1).
set -u
# guest memory backed on the host before boot (vm.sh --prealloc)
export RIG_PREALLOC=${RIG_PREALLOC:-1}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
rig=$repo/tools/rig
build=${RIG_BUILD:-$repo/build/rig}

if [ "${1:-}" != --host ]; then
	for f in kmod/hbmpool.ko tools/hbmbench tools/hbmctl/hbmctl; do
		[ -e "$repo/$f" ] || { echo "bench-tcp: $f is not built (make module all)" >&2; exit 1; }
	done
	command -v iperf3 >/dev/null || { echo "bench-tcp: no iperf3 (make deps)" >&2; exit 1; }
	rc=0
	"$rig/multi.sh" -r tcpbench -n 2 -t "${MULTI_TIMEOUT:-1800}" -c "$here/bench-tcp.sh --host" \
		-- "$rig/multi-agent.sh" || rc=$?
	log=$build/multi-tcpbench/host.log
	if [ "$rc" != 0 ]; then
		echo "bench-tcp: the run failed (exit $rc); host side: $log" >&2
		tail -20 "$log" >&2
	fi
	exit $rc
fi

# --- host side, run by multi.sh -c
cd "$repo" || exit 1
ctl() { "$rig/multi-ctl.sh" "$@"; }
die() { echo "bench-tcp: $*" >&2; ctl stop; exit 1; }
raw=$build/bench-tcp
summary=$build/bench-tcp.txt
rm -rf "$raw"
mkdir -p "$raw"
size=${BENCH_TCP_SIZE:-16M}
wan_size=${BENCH_TCP_WAN_SIZE:-2M}
iters=${BENCH_TCP_ITER:-1}
passes=${BENCH_TCP_PASSES:-2}
scenarios=${BENCH_TCP_SCENARIOS:-lan netem50us netem2ms}
kv=$raw/kv.txt
: >"$kv"
put() { echo "$1=$2" >>"$kv"; }

ctl agents -t 400 1 2 || die "the VMs' agents did not come up"
head -c 32 /dev/urandom >"$RIG_SYNC/key"
for k in 1 2; do
	o=$((3 - k))
	ctl exec -t 120 $k "insmod kmod/hbmpool.ko && H=tools/hbmctl/hbmctl &&
		\$H domain set name rig self $k key-file $RIG_SYNC/key &&
		\$H node set $k addr 10.77.0.$k port 7070 && \$H segment add 256M &&
		\$H node add $o capacity 256M distance 20 transport tcp link scaleout addr 10.77.0.$o port 7070" ||
		die "VM$k: the hbmpool setup failed"
done
live=0
for ((i = 0; i < 120; i++)); do
	if ctl exec 1 'tools/hbmctl/hbmctl -j link show 2' 2>/dev/null | grep -q '"health": *"live"'; then
		live=1
		break
	fi
	sleep 1
done
[ $live = 1 ] || die "VM1's link to node 2 is not live after 120 s: $(ctl exec 1 'tools/hbmctl/hbmctl link show 2' 2>&1)"
echo "bench-tcp: link 1 -> 2 live"
if [ -n "${BENCH_TCP_READAHEAD:-}" ]; then
	ctl exec 1 "tools/hbmctl/hbmctl params set readahead-max-pages $BENCH_TCP_READAHEAD" ||
		die "VM1: readahead-max-pages $BENCH_TCP_READAHEAD refused"
fi
ra=$(ctl exec 1 'cat /sys/kernel/hbmpool/readahead_max_pages' 2>/dev/null)
put readahead_max_pages "${ra:-?}"
ctl exec 1 'tools/hbmctl/hbmctl link show 2; tools/hbmctl/hbmctl node show' >"$raw/setup.txt" 2>&1

ctl exec 2 'setsid iperf3 -s -p 5201 >/tmp/iperf3-s.log 2>&1 </dev/null &' >/dev/null ||
	die "VM2: iperf3 -s did not start"
sleep 1

netem_ok=1
netem_why=""
for k in 1 2; do
	if ! out=$(ctl exec $k 'modprobe sch_netem && tc qdisc add dev eth0 root netem delay 1us && tc qdisc del dev eth0 root' 2>&1); then
		netem_ok=0
		netem_why="VM$k: $(tr '\n' ' ' <<<"$out")"
	fi
done
put netem "$([ $netem_ok = 1 ] && echo ok || echo skipped)"

# iperf3 MB/s (10^6 bytes/s) received, from its JSON; empty if none.
iperf_mbps() {
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print("%.1f" % (d["end"]["sum_received"]["bits_per_second"] / 8e6))' "$1" 2>/dev/null
}
# A key of hbmbench's key=value output.
hb() { sed -n "s/^$2=//p" "$1" | head -1; }
# MB/s of a phase from hbmbench's table (pages/s x 4 KiB): mbps.PHASE has one
# decimal, too coarse below 10 MB/s.
hb_mbps() { awk -v ph="$2" '$1 == ph && $2 ~ /^[0-9]+$/ { printf "%.3f", $2 * 4096 / 1e6; exit }' "$1"; }

run_iperf() {	# $1: output file
	ctl exec -t 90 1 'iperf3 -c 10.77.0.2 -p 5201 -t 5 -R -J' >"$1" 2>&1
}
run_hbmbench() {	# $1: output file, $2: size
	ctl exec -t 1200 1 "tools/hbmbench --node 2 --size $2 --iterations $iters --evict --passes 1" >"$1" 2>&1
}
set_netem() {	# $1: delay, or "" for none
	local k
	for k in 1 2; do
		ctl exec $k 'tc qdisc del dev eth0 root 2>/dev/null; true' >/dev/null 2>&1
		if [ -n "$1" ]; then
			ctl exec $k "tc qdisc add dev eth0 root netem delay $1" || return 1
		fi
	done
}

failed=0
rows=()
for sc in $scenarios; do
	case $sc in
	lan) delay="" sz=$size ;;
	netem50us) delay=50us sz=$size ;;
	netem2ms) delay=2ms sz=$wan_size ;;
	*) die "unknown scenario $sc" ;;
	esac
	if [ -n "$delay" ] && [ $netem_ok = 0 ]; then
		echo "bench-tcp: $sc skipped: no netem in the guest ($netem_why)"
		put "tcp.$sc.skipped" "no-netem"
		continue
	fi
	set_netem "$delay" || die "$sc: tc netem failed"
	put "tcp.$sc.netem_delay" "${delay:-none}"
	put "tcp.$sc.size" "$sz"
	ctl exec 1 'busybox ping -c 10 -q 10.77.0.2' >"$raw/$sc.ping" 2>&1
	rtt=$(sed -n 's|.*min/avg/max = \([0-9.]*\)/.*|\1|p' "$raw/$sc.ping")
	put "tcp.$sc.ping_min_ms" "${rtt:-?}"
	put "tcp.$sc.ping_avg_ms" "$(sed -n 's|.*min/avg/max = [0-9.]*/\([0-9.]*\)/.*|\1|p' "$raw/$sc.ping")"
	for ((p = 1; p <= passes; p++)); do
		ip=$raw/$sc.pass$p.iperf3.json
		hf=$raw/$sc.pass$p.hbmbench.txt
		echo "bench-tcp: $sc pass $p ($([ $((p % 2)) = 1 ] && echo "iperf3 first" || echo "hbmbench first"))"
		if [ $((p % 2)) = 1 ]; then
			order=iperf3-first
			run_iperf "$ip" || failed=1
			run_hbmbench "$hf" "$sz" || failed=1
		else
			order=hbmbench-first
			run_hbmbench "$hf" "$sz" || failed=1
			run_iperf "$ip" || failed=1
		fi
		im=$(iperf_mbps "$ip")
		sm=$(hb_mbps "$hf" seq_fault)
		[ -n "$im" ] || { echo "bench-tcp: $sc pass $p: no iperf3 result:"; tail -5 "$ip"; failed=1; }
		[ -n "$sm" ] || { echo "bench-tcp: $sc pass $p: no hbmbench result:"; tail -5 "$hf"; failed=1; }
		ratio=$(awk -v a="$sm" -v b="$im" 'BEGIN { if (a != "" && b > 0) printf "%.3f", a / b; else print "?" }')
		pre=tcp.$sc.pass$p
		put "$pre.order" "$order"
		put "$pre.iperf3_mbps" "${im:-?}"
		for ph in seq_fault rand_fault seq_fault_evict memcpy_warm seq_fault_huge; do
			put "$pre.mbps.$ph" "$(hb_mbps "$hf" $ph)"
		done
		put "$pre.ratio_seq_fault_huge_vs_seq_fault" "$(hb "$hf" ratio.seq_fault_huge_vs_seq_fault)"
		for key in lat.seq_fault_huge.p50_ns lat.seq_fault_huge.p99_ns lat.seq_fault_huge.p999_ns; do
			put "$pre.$key" "$(hb "$hf" "$key")"
		done
		for key in lat.seq_fault.p50_ns lat.seq_fault.p99_ns lat.seq_fault.p999_ns \
			lat.rand_fault.p50_ns lat.rand_fault.p99_ns lat.rand_fault.p999_ns \
			lat.seq_fault_evict.p50_ns lat.seq_fault_evict.p99_ns lat.seq_fault_evict.p999_ns; do
			put "$pre.$key" "$(hb "$hf" "$key")"
		done
		put "$pre.ratio_seq_fault_vs_iperf3" "$ratio"
		rows+=("$(printf '%-10s %4s %-14s %6s %9s %9s %7s %9s %9s %9s %9s %9s' "$sc" "$p" "$order" \
			"${rtt:-?}" "${im:-?}" "${sm:-?}" "$ratio" "$(hb_mbps "$hf" rand_fault)" \
			"$(hb "$hf" lat.rand_fault.p50_ns)" "$(hb "$hf" lat.rand_fault.p99_ns)" \
			"$(hb "$hf" lat.rand_fault.p999_ns)" "$(hb_mbps "$hf" seq_fault_evict)")")
	done
	set_netem "" || true
done

# The kernel's view: counters and messages of both VMs.
for k in 1 2; do
	ctl exec $k 'tools/hbmctl/hbmctl link show; cat /sys/kernel/debug/hbmpool/tcp_home 2>/dev/null; dmesg' \
		>"$raw/vm$k.dmesg.txt" 2>&1
done
for k in 1 2; do
	ctl exec -t 120 $k 'tools/hbmctl/hbmctl node del '$((3 - k))'; rmmod hbmpool' \
		>"$raw/vm$k.rmmod.txt" 2>&1 || { echo "bench-tcp: VM$k: node del / rmmod failed: $(cat "$raw/vm$k.rmmod.txt")"; failed=1; }
done

{
	echo "bench-tcp: $(date -u +%Y-%m-%dT%H:%MZ), kernel $(ctl exec 1 'uname -r' 2>/dev/null), 2 VMs (TCG, 1 vCPU each, memory preallocated: $RIG_PREALLOC)"
	echo "hbmbench --node 2 --size $size (netem2ms: $wan_size) --iterations $iters --evict; iperf3 -t 5 -R; readahead-max-pages ${ra:-?}"
	printf '%-10s %4s %-14s %6s %9s %9s %7s %9s %9s %9s %9s %9s\n' scenario pass order ping_min \
		iperf3 seq_fault ratio rand_flt rand_p50 rand_p99 rand_p999 seq_evict
	printf '%-10s %4s %-14s %6s %9s %9s %7s %9s %9s %9s %9s %9s\n' "" "" "" ms MB/s MB/s "" MB/s ns ns ns MB/s
	printf '%s\n' "${rows[@]}"
	echo
	cat "$kv"
} | tee "$summary"
echo "bench-tcp: summary in $summary, raw outputs in $raw/"
ctl stop
exit $failed
