#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Mirror the module's sources (Kbuild, kmod/, uapi/) into DEST, where Kbuild
# builds them for one kernel: an out-of-tree build writes its objects next
# to the sources, so each kernel gets its own copy (build/kmod/KVER/).
# Unchanged files keep their time stamps: make rebuilds only what changed.
#
#   scripts/lib/sync-tree.sh DEST
set -eu
[ $# = 1 ] || { echo "usage: $0 DEST" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/../.." && pwd -P)
dest=$1
mkdir -p "$dest"
cd "$repo"
list=$(find Kbuild kmod uapi -type f \( -name '*.[ch]' -o -name Kbuild -o -name Makefile \) \
	! -name '*.mod.c' | sort)
for f in $list; do
	if ! cmp -s "$f" "$dest/$f"; then
		mkdir -p "$dest/$(dirname "$f")"
		cp -p "$f" "$dest/$f"
	fi
done
# sources that are gone from the tree go from the copy too
(cd "$dest" && find Kbuild kmod uapi -type f \( -name '*.[ch]' -o -name Kbuild -o -name Makefile \) \
	! -name '*.mod.c' 2>/dev/null | sort) | while read -r f; do
	[ -e "$f" ] || rm -f "$dest/$f"
done
