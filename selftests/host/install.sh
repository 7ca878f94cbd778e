#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Packaging (runs on the host, after `make`): make install into a staging
# DESTDIR writes exactly the expected files; a program that includes
# <linux/spindle.h> and <spindle/libspindle.h> builds with pkg-config,
# linked shared and static, and runs; the man pages render without
# warnings; one `dkms install` builds and installs the module from a copy
# of the tree (for one kernel, or every installed one), and removes it
# again; make uninstall removes every file it installed.  Everything it writes is under
# one temporary directory, removed on exit: DKMS runs with its source,
# build and install trees there, not in /usr/src, /var/lib/dkms and
# /lib/modules.
# shellcheck disable=SC2317 # functions run through ktap_check
set -u
cd "$(dirname "$0")/../.." || exit 1
. selftests/lib/ktap.sh

VERSION=$(cat VERSION) || exit 1
KVER=$(scripts/kver) || exit 1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/spindle-install.XXXXXX") || exit 1
DEST=$TMP/dest
MOK=/var/lib/dkms/mok.key
mok_before=$([ -e "$MOK" ] && echo yes)

cleanup() {
	[ ! -d "$TMP/dkms/spindle" ] ||
		dkms remove "spindle/$VERSION" --all --sourcetree "$TMP/src" \
			--dkmstree "$TMP/dkms" --installtree "$TMP/mods" >/dev/null 2>&1
	# dkms ignored mok_signing_key and made its own key: take it away
	[ -n "$mok_before" ] || [ ! -e "$MOK" ] || rm -f "$MOK" /var/lib/dkms/mok.pub
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

# diag_tail FILE: the end of a log, as diagnostics
diag_tail() {
	tail -n "${2:-15}" "$1" 2>/dev/null | sed 's/^/# /'
}

ktap_plan 12

# ---- install ----
make install DESTDIR="$DEST" PREFIX=/usr >"$TMP/install.log" 2>&1
rc=$?
[ $rc = 0 ] || diag_tail "$TMP/install.log"
ktap_check "install" test $rc = 0

cat >"$TMP/expected" <<EOF
lib/modules/$KVER/extra/spindle.ko
lib/modules/$KVER/extra/spindle_blk.ko
lib/udev/rules.d/60-spindle.rules
usr/bin/spindle-bw
usr/bin/spindle-lat
usr/include/linux/spindle.h
usr/include/spindle/barrier.h
usr/include/spindle/libspindle.h
usr/lib/libspindle.a
usr/lib/libspindle.so
usr/lib/libspindle.so.1
usr/lib/pkgconfig/libspindle.pc
usr/sbin/spindlectl
usr/share/man/man3/libspindle.3
usr/share/man/man4/spindle.4
usr/share/man/man8/spindlectl.8
EOF
(cd "$DEST" 2>/dev/null && find . ! -type d | sed 's|^\./||' | LC_ALL=C sort) >"$TMP/installed"
diff -u "$TMP/expected" "$TMP/installed" | sed -n 's/^\([-+][^-+]\)/# \1/p'
ktap_check "install_files" cmp -s "$TMP/expected" "$TMP/installed"

metadata_ok() {
	local f

	[ "$(readlink "$DEST/usr/lib/libspindle.so")" = libspindle.so.1 ] ||
		{ ktap_diag "libspindle.so is not a link to libspindle.so.1"; return 1; }
	readelf -d "$DEST/usr/lib/libspindle.so.1" | grep -q 'SONAME.*\[libspindle\.so\.1\]' ||
		{ ktap_diag "libspindle.so.1 has no SONAME libspindle.so.1"; return 1; }
	for f in usr/sbin/spindlectl usr/bin/spindle-bw usr/bin/spindle-lat; do
		[ -x "$DEST/$f" ] || { ktap_diag "$f is not executable"; return 1; }
	done
	case "$(modinfo -F vermagic "$DEST/lib/modules/$KVER/extra/spindle.ko")" in
	"$KVER "*) ;;
	*) ktap_diag "spindle.ko is not built for $KVER"; return 1 ;;
	esac
}
ktap_check "install_metadata" metadata_ok

# ---- pkg-config, and a program built against the installed files ----
export PKG_CONFIG_PATH="$DEST/usr/lib/pkgconfig"
export PKG_CONFIG_LIBDIR="$DEST/usr/lib/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$DEST"
cflags=$(pkg-config --cflags libspindle | sed 's/ *$//')
libs=$(pkg-config --libs libspindle | sed 's/ *$//')
static_libs=$(pkg-config --static --libs libspindle | sed 's/ *$//')
ktap_diag "pkg-config: version $(pkg-config --modversion libspindle); $cflags $libs"
pkgconfig_ok() {
	[ "$(pkg-config --modversion libspindle)" = "$VERSION" ] &&
		[ "$cflags" = "-I$DEST/usr/include" ] &&
		[ "$libs" = "-L$DEST/usr/lib -lspindle" ]
}
ktap_check "pkgconfig" pkgconfig_ok

cat >"$TMP/example.c" <<'EOF'
#include <stdio.h>
#include <linux/spindle.h>
#include <spindle/libspindle.h>

int main(void)
{
	static const char text[] =
		"group 7\nmember 0 10.0.0.1\nmember 1 10.0.0.2:7000\n"
		"subgroup 0 members all senders 1 window 16 max_msg 256 mode unordered\n";
	struct spindle_cfg cfg;
	char err[256];

	if (spindle_cfg_parse_text(text, &cfg, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	printf("magic %#x group %u members %u port %u window %u senders %u crc %08x\n",
	       SPINDLE_IOC_MAGIC, cfg.group_id, cfg.nmembers, cfg.members[1].port,
	       cfg.subgroups[0].window, cfg.subgroups[0].nsenders,
	       spindle_crc32c(0, "123456789", 9));
	return 0;
}
EOF
expect="magic 0xd5 group 7 members 2 port 7000 window 16 senders 1 crc e3069283"
CC=${CC:-cc}

# run_example CMD...: the example ran and printed what it should
run_example() {
	local out

	out=$("$@" 2>&1)
	[ "$out" = "$expect" ] || { ktap_diag "printed: $out"; return 1; }
}

shared_ok() {
	# shellcheck disable=SC2086
	$CC -std=gnu11 -Wall -Wextra -Werror -o "$TMP/ex-shared" "$TMP/example.c" \
		$cflags $libs >"$TMP/cc.log" 2>&1 || { diag_tail "$TMP/cc.log"; return 1; }
	LD_LIBRARY_PATH="$DEST/usr/lib" ldd "$TMP/ex-shared" |
		grep -q "libspindle\.so\.1 => $DEST/usr/lib/libspindle\.so\.1" ||
		{ ktap_diag "ex-shared does not use the installed libspindle.so.1"; return 1; }
	run_example env LD_LIBRARY_PATH="$DEST/usr/lib" "$TMP/ex-shared"
}
ktap_check "link_shared" shared_ok

static_ok() {
	# shellcheck disable=SC2086
	$CC -std=gnu11 -Wall -Wextra -Werror -static -o "$TMP/ex-static" \
		"$TMP/example.c" $cflags $static_libs >"$TMP/cc.log" 2>&1 ||
		{ diag_tail "$TMP/cc.log"; return 1; }
	! readelf -d "$TMP/ex-static" 2>/dev/null | grep -q NEEDED ||
		{ ktap_diag "ex-static needs shared libraries"; return 1; }
	run_example "$TMP/ex-static"
}
ktap_check "link_static" static_ok

unset PKG_CONFIG_PATH PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR

# ---- man pages, found where they were installed ----
# man_ok SECTION PAGE: renders, with no warning
man_ok() {
	local rc

	MANWIDTH=80 man -M "$DEST/usr/share/man" --warnings "$1" "$2" \
		>"$TMP/man.out" 2>"$TMP/man.err"
	rc=$?
	[ "$rc" = 0 ] && [ ! -s "$TMP/man.err" ] && grep -q '^NAME' "$TMP/man.out" && return 0
	ktap_diag "man $1 $2: exit $rc"
	diag_tail "$TMP/man.err" 5
	return 1
}
for page in libspindle:3 spindle:4 spindlectl:8; do
	ktap_check "man_${page%:*}_${page#*:}" man_ok "${page#*:}" "${page%:*}"
done

# ---- DKMS, from a copy of the tree as dkms.conf says ----
# One `dkms install` builds and installs spindle.ko and spindle_blk.ko for
# the kernel scripts/kver names, or with SPINDLE_DKMS_ALL=1 (scripts/check
# --all) for every kernel with headers on this machine (Debian 12's 6.1,
# 6.12 and 6.12-rt when scripts/setup ran), as it does for a kernel
# installed later.  (Each kernel's build is checked by scripts/check's
# build stage; DKMS takes 40 s a kernel.)
dkms_kernels() {
	if [ "${SPINDLE_DKMS_ALL:-0}" = 1 ]; then
		ls -d /lib/modules/*/build 2>/dev/null | sort -V
	else
		ls -d "/lib/modules/$KVER/build" 2>/dev/null
	fi
}

dkms_ok() {
	local d=(--sourcetree "$TMP/src" --dkmstree "$TMP/dkms" --installtree "$TMP/mods")
	local src="$TMP/src/spindle-$VERSION"
	local k ks=() kargs=() ko rc

	for k in $(dkms_kernels); do
		k=${k#/lib/modules/}
		k=${k%/build}
		ks+=("$k")
		kargs+=(-k "$k")
		mkdir -p "$TMP/mods/$k"	# the install tree's /lib/modules/$k
	done
	ktap_diag "dkms: kernels ${ks[*]}"
	[ ${#ks[@]} -gt 0 ] || { ktap_diag "no kernel headers installed"; return 1; }
	mkdir -p "$src" "$TMP/dkms" "$TMP/mods" &&
		cp -r Kbuild VERSION dkms.conf kmod uapi "$src/" || return 1
	export mok_signing_key="$TMP/mok.key" mok_certificate="$TMP/mok.pub"
	dkms add "spindle/$VERSION" "${d[@]}" >"$TMP/dkms.log" 2>&1 &&
		dkms install "spindle/$VERSION" "${kargs[@]}" "${d[@]}" >>"$TMP/dkms.log" 2>&1
	rc=$?
	dkms status "${d[@]}" 2>&1 | grep -v readelf | sed 's/^/# dkms status: /'
	if [ "$rc" != 0 ]; then
		diag_tail "$TMP/dkms.log" 5
		for k in "${ks[@]}"; do
			diag_tail "$TMP/dkms/spindle/$VERSION/build/make.log"
		done
		return 1
	fi
	for k in "${ks[@]}"; do
		for m in spindle spindle_blk; do
			ko=$(find "$TMP/mods/$k" -name "$m.ko*" 2>/dev/null | head -n 1)
			case "$(modinfo -F vermagic "$ko" 2>/dev/null)" in
			"$k "*) ktap_diag "installed for $k: ${ko#"$TMP/mods/"}" ;;
			*) ktap_diag "no $m.ko installed for $k"; return 1 ;;
			esac
		done
		ko=$(find "$TMP/mods/$k" -name 'spindle.ko*' | head -n 1)
		# what users load has no test hooks (kmod/Kbuild, SPINDLE_TESTING)
		if modinfo -p "$ko" | grep -q '^fault_'; then
			ktap_diag "the module installed for $k has the test hooks"
			return 1
		fi
	done
	dkms remove "spindle/$VERSION" --all "${d[@]}" >>"$TMP/dkms.log" 2>&1 ||
		{ diag_tail "$TMP/dkms.log" 5; return 1; }
	[ ! -e "$TMP/dkms/spindle" ] || { ktap_diag "dkms remove left files"; return 1; }
	[ -z "$(find "$TMP/mods" -name 'spindle*.ko*')" ] ||
		{ ktap_diag "dkms remove left modules installed"; return 1; }
}
if ! command -v dkms >/dev/null; then
	ktap_result skip "dkms" "dkms is not installed"
elif [ "$(id -u)" != 0 ]; then
	ktap_result skip "dkms" "dkms needs root"
else
	ktap_check "dkms_install" dkms_ok
fi

# ---- uninstall ----
make uninstall DESTDIR="$DEST" PREFIX=/usr >"$TMP/uninstall.log" 2>&1
rc=$?
[ $rc = 0 ] || diag_tail "$TMP/uninstall.log"
ktap_check "uninstall" test $rc = 0
left=$(find "$DEST" ! -type d 2>&1)
for f in $left; do ktap_diag "left: $f"; done
ktap_check "uninstall_removes_all" test -z "$left"

ktap_finish
