# SPDX-License-Identifier: GPL-2.0
# KTAP output for shell selftests (sourced).  Usage:
#   ktap_plan 3; ktap_result ok "name"; ...; ktap_finish
# ktap_check NAME CMD...  runs CMD and records ok/not ok under NAME.
KT_N=0
KT_PASS=0
KT_FAIL=0
KT_SKIP=0

ktap_plan() {
	echo "KTAP version 1"
	echo "1..$1"
}

ktap_diag() {
	echo "# $*"
}

# ktap_result ok|fail|skip NAME [REASON]
ktap_result() {
	KT_N=$((KT_N + 1))
	case "$1" in
	ok)	echo "ok $KT_N $2"; KT_PASS=$((KT_PASS + 1)) ;;
	skip)	echo "ok $KT_N $2 # SKIP ${3:-}"; KT_SKIP=$((KT_SKIP + 1)) ;;
	*)	echo "not ok $KT_N $2"; KT_FAIL=$((KT_FAIL + 1)) ;;
	esac
}

ktap_check() {
	_name=$1
	shift
	if "$@"; then
		ktap_result ok "$_name"
	else
		ktap_diag "$_name: '$*' failed"
		ktap_result fail "$_name"
	fi
}

ktap_finish() {
	echo "# Totals: pass:$KT_PASS fail:$KT_FAIL xfail:0 xpass:0 skip:$KT_SKIP error:0"
	[ "$KT_FAIL" -eq 0 ]
	exit $?
}
