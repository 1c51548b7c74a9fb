#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hbmpool over the shared-memory transport "shm" across 3 VMs: the TCP
# transport's multi-VM test (selftests/multi/tcp_test.sh) with
# TCP_TEST_TRANSPORT=shm, whose header says what runs (scenarios 1, 2, 3,
# 5, the shm checks S, and 9; ivshmem of 128 MiB per node).  The TAP is in
# $RIG_BUILD/multi-shmtest/host.log, the VMs' logs in
# $RIG_BUILD/out-shmtest-K/; the last line is "N passed, N failed".
#
#   make module tools && selftests/multi/shm_test.sh
exec env TCP_TEST_TRANSPORT=shm "$(dirname "$0")/tcp_test.sh" "$@"
