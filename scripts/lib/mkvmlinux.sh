#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Extract the uncompressed ELF kernel from a bzImage:
#
#   scripts/lib/mkvmlinux.sh VMLINUZ OUTPUT
#
# QEMU boots such an ELF straight through its PVH entry point (the kernel
# needs CONFIG_PVH=y), skipping the firmware and the kernel's
# self-decompression: under TCG that saves about 3 s per guest boot.
# Like the kernel's scripts/extract-vmlinux: look for each compressor's magic
# in the bzImage and keep the first offset that decompresses to an ELF.
set -euo pipefail
# bytes, not characters: in a UTF-8 locale bash's read takes a magic's
# 0xfd for the start of a long sequence and swallows the newline after it
# (zstd's magic, 28 b5 2f fd: Debian's 6.12 kernels are zstd-compressed)
export LC_ALL=C

die() {
	echo "mkvmlinux: $*" >&2
	exit 1
}

[ $# = 2 ] || die "usage: $0 VMLINUZ OUTPUT"
image=$1
output=$2
tmp=$output.tmp.$$
trap 'rm -f "$tmp"' EXIT

# try MAGIC DECOMPRESSOR...: decompress from every offset of MAGIC in the
# image until the result is an ELF file.
try() {
	local magic=$1 off
	shift
	command -v "$1" >/dev/null || return 1
	while IFS=: read -r off _; do
		# trailing bytes after the stream make the decompressor complain
		tail -c +$((off + 1)) "$image" | "$@" >"$tmp" 2>/dev/null || true
		if [ "$(head -c 4 "$tmp" | od -An -c | tr -d ' ')" = '177ELF' ]; then
			mv -f "$tmp" "$output"
			return 0
		fi
	done < <(LC_ALL=C grep -abo "$magic" "$image")
	return 1
}

try $'\xfd''7zXZ' xz -dc ||
	try $'\x28\xb5\x2f\xfd' zstd -dc ||
	try $'\x1f\x8b\x08' gzip -dc ||
	die "no compressed ELF kernel found in $image"
