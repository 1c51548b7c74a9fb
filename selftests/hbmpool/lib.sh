# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# TAP helpers of the hbmpool shell selftests.  Sourced, never run (not
# executable, so run-tests.sh never takes it for a test):
#
#   here=$(cd "$(dirname "$0")" && pwd)
#   . "$here/lib.sh"
#
# It prints "TAP version 13" and sets n (results so far) and fails (failed
# results so far).  A test then prints its plan "1..N", reports with ok,
# nok or check, and ends with [ "$fails" -eq 0 ]: exit 0 pass, 1 fail;
# skip_all exits 4 (KSFT_SKIP).

n=0
fails=0
echo "TAP version 13"

# skip_all REASON...: nothing can run here.
skip_all() { echo "1..0 # SKIP $*"; exit 4; }
# ok DESCRIPTION / nok DESCRIPTION: one passed / failed result.
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); echo "not ok $n - $*"; fails=$((fails + 1)); }
# check DESCRIPTION COMMAND...: ok if COMMAND succeeds, else nok.
check() {
	local d=$1
	shift
	if "$@"; then ok "$d"; else nok "$d"; fi
}
