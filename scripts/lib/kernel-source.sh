#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Files from a Debian linux-source tarball, unpacked once per tarball into
# a cache that outlives the work tree (each unpacking decompresses all of
# the tarball's 140 MB of xz: about 15 s of one core, paid by every clean
# checkout's test run otherwise):
#
#   scripts/lib/kernel-source.sh TARBALL PATH...
#
# prints the folder that holds PATH... (paths inside the tarball, below
# its top folder), which must be among what the project takes from it
# (UNPACK below: checkpatch for scripts/lint, soft-iWARP for
# scripts/siw-module), all unpacked together.  The cache is
# $SPINDLE_CACHE, by default ${XDG_CACHE_HOME:-~/.cache}/spindle; an entry
# is keyed by the tarball's name, size and time stamp and by UNPACK, so a
# new linux-source package unpacks again.  An entry is made under a
# temporary name and renamed into place, so a run that stops half-way
# leaves nothing that a later one would take for whole.
set -euo pipefail

die() {
	echo "kernel-source: $*" >&2
	exit 1
}

UNPACK="scripts/checkpatch.pl scripts/spelling.txt scripts/const_structs.checkpatch
drivers/infiniband/sw/siw"

[ $# -ge 2 ] || die "usage: $0 TARBALL PATH..."
tarball=$1
shift
[ -r "$tarball" ] || die "$tarball not found (scripts/setup installs linux-source-*)"
top=$(basename "$tarball" | sed 's/\.tar\..*//')
cache=${SPINDLE_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/spindle}
key=$( { stat -c '%n %s %Y' "$tarball"; echo $UNPACK; } | sha256sum | cut -c1-12)
dir=$cache/$top-$key
if [ ! -d "$dir" ]; then
	mkdir -p "$cache"
	tmp=$(mktemp -d "$cache/.$top.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	echo "kernel-source: unpacking $(echo $UNPACK) from $tarball into $dir" >&2
	paths=()
	for p in $UNPACK; do
		paths+=("$top/$p")
	done
	tar -xf "$tarball" -C "$tmp" --strip-components=1 "${paths[@]}" ||
		die "cannot unpack $(echo $UNPACK) from $tarball"
	# another run may have made the same entry meanwhile: keep either
	mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"
fi
for p in "$@"; do
	[ -e "$dir/$p" ] || die "$p is not unpacked from $tarball (UNPACK in $0)"
done
echo "$dir"
