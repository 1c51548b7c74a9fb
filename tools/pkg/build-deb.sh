#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the Debian packages (debian/) from this checkout and check them with
# lintian ('make deb').
#
# The checkout's files (tracked and untracked, not ignored: git ls-files) are
# copied to DEB_OUT/hbmpool-VERSION, so that neither the build nor its
# clean touches the working tree; dpkg-buildpackage -b builds there and the
# .deb files land in DEB_OUT.  debian/changelog's version must be VERSION's.
# lintian: any error, warning or info tag fails ('lintian clean'); the
# exceptions are in debian/*.lintian-overrides, each with its reason.
#
#   DEB_OUT=build/deb tools/pkg/build-deb.sh
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${DEB_OUT:-$repo/build/deb}

die() { echo "deb: $*" >&2; exit 1; }

for t in dpkg-buildpackage dh dh_dkms lintian git; do
	command -v "$t" >/dev/null || die "$t is missing (make deps installs it)"
done
version=$(cat "$repo/VERSION")
clv=$(cd "$repo" && dpkg-parsechangelog -S Version)
[ "$clv" = "$version" ] ||
	die "debian/changelog says $clv, VERSION says $version: add a changelog entry (dch -v $version)"

src=$out/hbmpool-$version
rm -rf "$out"
mkdir -p "$src"
# Files git knows but the working tree deleted are left out.
(cd "$repo" && git ls-files -z --cached --others --exclude-standard --deduplicate |
	while IFS= read -r -d '' f; do
		[ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"
	done | tar --null -T - -cf -) | tar -xf - -C "$src" ||
	die "copying the checkout to $src failed"

log=$out/build.log
echo "  DEB     dpkg-buildpackage -b in $src (log: $log)"
if ! (cd "$src" && dpkg-buildpackage -b -us -uc --no-sign) >"$log" 2>&1; then
	tail -n 40 "$log" >&2
	die "dpkg-buildpackage failed (full log: $log)"
fi
ls "$out"/*.deb >/dev/null 2>&1 || die "no .deb in $out"
changes=$(ls "$out"/hbmpool_"${version}"_*.changes)

echo "  LINTIAN $(basename "$changes")"
lint=$out/lintian.txt
rc=0
lintian --info --display-info --display-experimental \
	--fail-on error,warning,info "$changes" >"$lint" 2>&1 || rc=$?
if [ $rc != 0 ] || grep -qE '^[EWI]: ' "$lint"; then
	cat "$lint" >&2
	die "lintian failed or found problems (exit $rc; $lint)"
fi
for d in "$out"/*.deb; do
	echo "  $(basename "$d")"
done
