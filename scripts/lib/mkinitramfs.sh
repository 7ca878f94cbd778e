#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the initramfs that scripts/vmcluster boots its guests with:
#
#   scripts/lib/mkinitramfs.sh KVER OUTPUT [MODDIR]
#
# Contents: a static busybox (every applet linked in /bin), the modules
# needed to mount the host's root over virtio-9p (copied from MODDIR,
# default /lib/modules/KVER, loaded in INIT_MODULES order by plain insmod;
# none for a kernel that has them built in), and
# scripts/lib/guest-init.sh as /init.  /dev/console is not needed: the
# kernel's built-in default initramfs already provides it.
# Needs no privileges: cpio records every file as owned by root.
set -euo pipefail

# Dependency order: each module only needs those before it.
INIT_MODULES="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev
virtio_pci netfs fscache 9pnet 9pnet_virtio 9p"
# ...of which a kernel may lack these (Debian's 9p uses them; the debug
# kernel of scripts/debug-kernel has no fscache)
OPTIONAL_MODULES="netfs fscache"

die() {
	echo "mkinitramfs: $*" >&2
	exit 1
}

[ $# = 2 ] || [ $# = 3 ] || die "usage: $0 KVER OUTPUT [MODDIR]"
kver=$1
output=$2
moddir=${3:-/lib/modules/$kver}
here=$(cd "$(dirname "$0")" && pwd -P)
[ -f "$moddir/modules.dep" ] || die "$moddir/modules.dep not found"

busybox=$(command -v busybox) || die "busybox not found (apt-get install busybox-static)"
# The initramfs has no libc: a dynamically linked busybox cannot run there.
if ldd "$busybox" >/dev/null 2>&1; then
	die "$busybox is dynamically linked (apt-get install busybox-static)"
fi

stage=$(mktemp -d)
tmp=$output.tmp.$$
trap 'rm -rf "$stage" "$tmp"' EXIT
mkdir -p "$stage"/{bin,dev,proc,sys,host,out,lib/modules}

cp "$busybox" "$stage/bin/busybox"
for applet in $("$busybox" --list); do
	[ "$applet" = busybox ] || ln -s busybox "$stage/bin/$applet"
done

# modpath NAME: the module's file relative to $moddir, empty if built in.
modpath() {
	awk -F: -v name="$1" '{
		base = $1
		sub(/.*\//, "", base)
		sub(/\.ko(\.(xz|zst|gz))?$/, "", base)
		gsub(/-/, "_", base)
		if (base == name) { print $1; exit }
	}' "$moddir/modules.dep"
}

: >"$stage/lib/modules/order"
for m in $INIT_MODULES; do
	rel=$(modpath "$m")
	if [ -z "$rel" ]; then
		grep -q "/$m\.ko$" "$moddir/modules.builtin" 2>/dev/null && continue
		case " $OPTIONAL_MODULES " in
		*" $m "*) continue ;;
		esac
		die "module $m not found for kernel $kver"
	fi
	dst=$stage/lib/modules/$m.ko
	case "$rel" in
	*.ko) cp "$moddir/$rel" "$dst" ;;
	*.xz) xz -dc "$moddir/$rel" >"$dst" ;;
	*.zst) zstd -qdc "$moddir/$rel" >"$dst" ;;
	*.gz) gzip -dc "$moddir/$rel" >"$dst" ;;
	esac
	echo "$m" >>"$stage/lib/modules/order"
done

install -m 0755 "$here/guest-init.sh" "$stage/init"

(cd "$stage" && find . -print0 | LC_ALL=C sort -z |
	cpio --null --create --format=newc --owner=0:0 --quiet) | gzip -9 >"$tmp"
mv -f "$tmp" "$output"
