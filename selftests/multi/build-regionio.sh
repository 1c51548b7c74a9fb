#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build selftests/multi/regionio (the data checker of tcp_test.sh and
# regionio_sim.sh) without make: cc against uapi/ and tools/lib/hbmlib.c.
#
# usage: build-regionio.sh OUTPUT        (rebuilt only when a source is newer)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:?usage: $0 OUTPUT}
src=("$here/regionio.c" "$repo/tools/lib/hbmlib.c")
deps=("${src[@]}" "$repo/tools/lib/hbmlib.h" "$repo/uapi/linux/hbmpool.h")
fresh=1
[ -x "$out" ] || fresh=0
for f in "${deps[@]}"; do [ "$f" -nt "$out" ] && fresh=0; done
[ $fresh = 1 ] && exit 0
mkdir -p "$(dirname "$out")"
${CC:-cc} -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE \
	-I "$repo/uapi" -I "$repo/tools/lib" -o "$out.tmp" "${src[@]}" -lpthread
mv -f "$out.tmp" "$out"
