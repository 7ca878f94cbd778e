# SPDX-License-Identifier: GPL-2.0
#
# Spindle top-level build.
#
#   make            module, userspace, selftests
#   make check      everything, then host unit tests and the guest selftests:
#                   in full on the oldest and newest supported kernels, a
#                   smoke suite on the others (scripts/check; what CI runs)
#   make check-all  the same with every kernel in full and every view
#                   scenario on each (release checks)
#   make check-debug the guest selftests on debug kernels (KASAN, lockdep,
#                   kmemleak; scripts/debug-kernel)
#   make check-views every view scenario on every kernel (CI runs each
#                   but the extended ones on one full kernel)
#   make module     just the kernel module, for KVER
#   make modules    the module for every supported kernel that is installed
#   make unit       host unit tests of the protocol core (ASan + UBSan;
#                   the view-change fuzz: Documentation/testing.rst)
#   make stress-views  rounds of the hostile view changes (ROUNDS=20)
#   make fuzz-views  the simulated view changes under random compound
#                   failures, at length (SCHEDULES=100000, FUZZ_SEED=1)
#   make siw        soft-iWARP for KVER, which Debian does not ship (the
#                   guests check that an iWARP device is refused)
#
# The module builds for KVER (make KVER=... or SPINDLE_KVER=...), by default
# the kernel scripts/kver picks and names: the running kernel if its headers
# are installed, else the newest installed generic Debian kernel.  KDIR=
# builds against another tree.  Objects go to build/kmod/KVER/kmod/, one
# folder per kernel, so that builds for several kernels never mix.

ifeq ($(origin KVER),undefined)
ifneq ($(origin KDIR),undefined)
KVER := $(shell cat $(KDIR)/include/config/kernel.release 2>/dev/null)
else
KVER := $(shell scripts/kver)
endif
endif
KDIR ?= /lib/modules/$(KVER)/build
O_BUILD := build
KOBJ := $(O_BUILD)/kmod/$(KVER)
KO := $(KOBJ)/kmod/spindle.ko

CC ?= gcc
CFLAGS_COMMON := -O2 -g -std=gnu11 -Wall -Wextra -Werror -Wshadow \
	-Wstrict-prototypes -Wmissing-prototypes -Wno-missing-field-initializers \
	-D_GNU_SOURCE -Iuapi
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer

BIN := $(O_BUILD)/bin
UNIT := $(O_BUILD)/unit
ST := $(O_BUILD)/selftests

UNIT_SRCS := $(wildcard selftests/unit/test_*.c)
UNIT_BINS := $(patsubst selftests/unit/%.c,$(UNIT)/%,$(UNIT_SRCS)) $(UNIT)/test_vc_fuzz_asan
PROTO_HDRS := $(wildcard kmod/proto/*.h)
PROTO_SRCS := $(wildcard kmod/proto/*.c)

ST_SRCS := $(wildcard selftests/guest/*.c)
ST_BINS := $(patsubst selftests/guest/%.c,$(ST)/%,$(ST_SRCS))

LIB := $(O_BUILD)/lib
# libspindle: config.c (the file format), control.c (/dev/spindle_ctl),
# data.c (a subgroup's device), crc32c.c; fast paths inline in libspindle.h
LIBSPINDLE_SRCS := $(wildcard userspace/lib/*.c)
LIBSPINDLE_HDRS := $(wildcard userspace/lib/*.h) uapi/linux/spindle.h kmod/proto/cfg_err.h
LIBSPINDLE_OBJ := $(patsubst userspace/lib/%.c,$(LIB)/%.o,$(LIBSPINDLE_SRCS))
LIBSPINDLE_PIC := $(patsubst userspace/lib/%.c,$(LIB)/%.pic.o,$(LIBSPINDLE_SRCS))
BENCH_COMMON := userspace/bench/common.c userspace/bench/common.h
TOOLS := $(BIN)/spindlectl $(BIN)/spindle-bw $(BIN)/spindle-lat $(BIN)/spindle-counter

.PHONY: all module modules userspace selftests unit check check-all check-debug check-views check-loss sim-scale clean help print-kdir \
	print-ko lint bench install uninstall stress-views fuzz-views unit-bins siw

all: module userspace selftests

help:
	@sed -n '3,22p' Makefile

module:
	@test -n '$(KVER)' || { echo 'make: no kernel to build for (scripts/setup)'; exit 1; }
	@echo "  MODULE  spindle.ko for $(KVER) in $(KOBJ)"
	@scripts/lib/sync-tree.sh $(KOBJ)
	$(MAKE) -C $(KDIR) M=$(CURDIR)/$(KOBJ) W=1 SPINDLE_WERROR=$(or $(SPINDLE_WERROR),1) modules

modules:
	@set -e; scripts/kver --lanes | while read -r lane kver; do \
		if [ "$$kver" = - ]; then echo "  MODULE  $$lane: not installed (scripts/setup)"; \
		else $(MAKE) --no-print-directory module KVER=$$kver; fi; done

userspace: $(TOOLS) $(LIB)/libspindle.a $(LIB)/libspindle.so

$(LIB)/%.o: userspace/lib/%.c $(LIBSPINDLE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -c -o $@ $<

$(LIB)/%.pic.o: userspace/lib/%.c $(LIBSPINDLE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -fPIC -c -o $@ $<

$(LIB)/libspindle.a: $(LIBSPINDLE_OBJ)
	$(AR) rcs $@ $^

$(LIB)/libspindle.so: $(LIBSPINDLE_PIC)
	$(CC) -shared -Wl,-soname,libspindle.so.1 -o $@ $^

$(BIN)/spindlectl: userspace/tools/spindlectl.c $(LIB)/libspindle.a VERSION
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -DSPINDLE_VERSION='"$(SPINDLE_VERSION)"' -o $@ $< $(LIB)/libspindle.a

# the demo's replicated counter (scripts/demo); not installed
$(BIN)/spindle-counter: userspace/tools/spindle-counter.c $(BENCH_COMMON) $(LIB)/libspindle.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -o $@ $< userspace/bench/common.c $(LIB)/libspindle.a -lpthread

$(BIN)/spindle-%: userspace/bench/spindle-%.c $(BENCH_COMMON) $(LIB)/libspindle.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -o $@ $< userspace/bench/common.c $(LIB)/libspindle.a -lpthread

selftests: $(ST_BINS)

$(ST)/%: selftests/guest/%.c selftests/guest/guest.h selftests/ktap.h uapi/linux/spindle.h $(LIB)/libspindle.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -o $@ $< $(LIB)/libspindle.a -lpthread

unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "# $$t"; $$t; done

unit-bins: $(UNIT_BINS) $(UNIT)/sim_scale

# The protocol core, compiled once for every unit test that links it (not
# once a test): under ASan and UBSan, under UBSan alone for the fuzz, and
# plain for sim_scale
UBSAN_FLAGS := -fsanitize=undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
PROTO_DEPS := $(PROTO_HDRS) selftests/unit/kcompat.h uapi/linux/spindle.h
PROTO_SAN := $(patsubst kmod/proto/%.c,$(UNIT)/proto-san/%.o,$(PROTO_SRCS))
PROTO_UBSAN := $(patsubst kmod/proto/%.c,$(UNIT)/proto-ubsan/%.o,$(PROTO_SRCS))
PROTO_PLAIN := $(patsubst kmod/proto/%.c,$(UNIT)/proto-plain/%.o,$(PROTO_SRCS))
PROTO_CC = @mkdir -p $(dir $@); $(CC) $(CFLAGS_COMMON) -Iselftests/unit -c -o $@ $<

$(UNIT)/proto-san/%.o: kmod/proto/%.c $(PROTO_DEPS)
	$(PROTO_CC) $(SAN_FLAGS)
$(UNIT)/proto-ubsan/%.o: kmod/proto/%.c $(PROTO_DEPS)
	$(PROTO_CC) $(UBSAN_FLAGS)
$(UNIT)/proto-plain/%.o: kmod/proto/%.c $(PROTO_DEPS)
	$(PROTO_CC)

# a unit test against the protocol core: $< (its source) to $@
UNIT_CC = $(CC) $(CFLAGS_COMMON) $(SAN_FLAGS) -Iselftests/unit -o $@ $< $(PROTO_SAN)

$(UNIT)/%: selftests/unit/%.c selftests/unit/*.h selftests/ktap.h $(PROTO_HDRS) $(PROTO_SAN)
	@mkdir -p $(dir $@)
	$(UNIT_CC)

# The view-change fuzz: its schedules under UBSan alone (ASan makes each
# 3.5 times slower), and a fifth as many further ones under ASan and UBSan
# (selftests/unit/test_vc_fuzz.c)
$(UNIT)/test_vc_fuzz: selftests/unit/test_vc_fuzz.c selftests/unit/*.h selftests/ktap.h $(PROTO_HDRS) $(PROTO_UBSAN)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(UBSAN_FLAGS) -Iselftests/unit -o $@ $< $(PROTO_UBSAN)

$(UNIT)/test_vc_fuzz_asan: selftests/unit/test_vc_fuzz.c selftests/unit/*.h selftests/ktap.h $(PROTO_HDRS) $(PROTO_SAN)
	@mkdir -p $(dir $@)
	$(UNIT_CC) -DFUZZ_ASAN

# spindle_blk's message check is plain C too
$(UNIT)/test_blk: kmod/blk/wire.h

# what a delivered message costs against the group size (2-32 members), in
# the simulation: a benchmark that prints its counts, not a test
$(UNIT)/sim_scale: selftests/unit/sim_scale.c selftests/unit/*.h $(PROTO_HDRS) $(PROTO_PLAIN)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -Iselftests/unit -o $@ $< $(PROTO_PLAIN)

sim-scale: $(UNIT)/sim_scale
	$(UNIT)/sim_scale $(MESSAGES) $(SEEDS)

# libspindle over memory: the library's sources, not the core's
$(UNIT)/test_libspindle: selftests/unit/test_libspindle.c selftests/ktap.h $(LIBSPINDLE_SRCS) $(LIBSPINDLE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(SAN_FLAGS) -Iuserspace/lib -o $@ $< $(LIBSPINDLE_SRCS) -lpthread

check: all
	scripts/check

# every lane in full, with every view scenario on each (release checks)
check-all: all
	scripts/check --all

# every view scenario on every kernel: about 45 minutes on 2 cores
check-views: all
	scripts/check --views-all

# the guest stages again on KASAN + lockdep + kmemleak kernels built from
# Debian's linux-source-6.1 and -6.12 (scripts/debug-kernel; hours on 2 cores)
check-debug: all
	scripts/check --debug

# a stream through a lossy network (selftests/mc_loss.sh, 3 guests) on each
# lane: not in `make check` yet, for what it still finds
# (Documentation/testing.rst)
check-loss: all
	rc=0; for l in 6.1 6.12 6.12-rt; do \
		SPINDLE_KVER=$$(scripts/kver $$l) scripts/vmcluster -n 3 --out build/check-loss/$$l \
			-- selftests/run-guest -t mc_loss.sh || rc=1; \
	done; exit $$rc

clean:
	rm -rf $(O_BUILD)

# tens of rounds of the hostile view changes, splats looked for in every
# guest (ROUNDS=, STRESS_SEED=; SPINDLE_VM_KERNEL= for a debug kernel)
stress-views: all
	selftests/host/stress-views.sh $(or $(ROUNDS),20)

# the unit stage runs 10^4 schedules; this runs more, with no time limit
fuzz-views: $(UNIT)/test_vc_fuzz
	KTAP_TIMEOUT_S=0 FUZZ_SCHEDULES=$(or $(SCHEDULES),100000) $(UNIT)/test_vc_fuzz

siw:
	@test -n '$(KVER)' || { echo 'make: no kernel to build for (scripts/setup)'; exit 1; }
	scripts/siw-module $(KVER)

print-kdir:
	@echo $(KDIR)

print-ko:
	@echo $(KO)

bench:
	scripts/bench

# ---- make install, make uninstall ----
#
#   make install [DESTDIR=/staging] [PREFIX=/usr/local] [KVER=...]
#   make uninstall (with the same variables)
#
# install copies what `make` built; uninstall removes exactly what install
# wrote (INSTALL_LIST).  Under $(DESTDIR)$(PREFIX): include/linux/spindle.h,
# include/spindle/{libspindle,barrier}.h, lib/libspindle.{a,so.1,so},
# lib/pkgconfig/libspindle.pc, sbin/spindlectl, bin/spindle-{bw,lat} and
# share/man/man{3,4,8}.  The modules (spindle.ko, spindle_blk.ko) and the
# udev rule go where the kernel
# and udev look, whatever PREFIX is: $(DESTDIR)/lib/modules/$(KVER)/extra
# and $(DESTDIR)/lib/udev/rules.d.  With no DESTDIR, depmod and ldconfig run.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
MODDIR ?= /lib/modules/$(KVER)/extra
UDEVDIR ?= /lib/udev/rules.d
SPINDLE_VERSION := $(shell cat VERSION)

# SOURCE:DESTINATION:HOW, where HOW is a mode, "link" (SOURCE is the link's
# target) or "pc" (SOURCE is a template, filled in).
INSTALL_LIST := \
	$(KO):$(MODDIR)/spindle.ko:644 \
	$(KOBJ)/kmod/blk/spindle_blk.ko:$(MODDIR)/spindle_blk.ko:644 \
	scripts/udev/60-spindle.rules:$(UDEVDIR)/60-spindle.rules:644 \
	uapi/linux/spindle.h:$(INCLUDEDIR)/linux/spindle.h:644 \
	userspace/lib/libspindle.h:$(INCLUDEDIR)/spindle/libspindle.h:644 \
	userspace/lib/barrier.h:$(INCLUDEDIR)/spindle/barrier.h:644 \
	$(LIB)/libspindle.a:$(LIBDIR)/libspindle.a:644 \
	$(LIB)/libspindle.so:$(LIBDIR)/libspindle.so.1:755 \
	libspindle.so.1:$(LIBDIR)/libspindle.so:link \
	userspace/lib/libspindle.pc.in:$(LIBDIR)/pkgconfig/libspindle.pc:pc \
	$(BIN)/spindlectl:$(SBINDIR)/spindlectl:755 \
	$(BIN)/spindle-bw:$(BINDIR)/spindle-bw:755 \
	$(BIN)/spindle-lat:$(BINDIR)/spindle-lat:755 \
	man/libspindle.3:$(MANDIR)/man3/libspindle.3:644 \
	man/spindle.4:$(MANDIR)/man4/spindle.4:644 \
	man/spindlectl.8:$(MANDIR)/man8/spindlectl.8:644

# after install and uninstall, on the live system only
POST_INSTALL := if [ -z '$(DESTDIR)' ]; then \
		if [ -d /lib/modules/$(KVER) ]; then \
			echo "  DEPMOD  $(KVER)"; depmod -a $(KVER); fi; \
		echo "  LDCONFIG"; ldconfig; fi

install: all
	@set -e; for f in $(INSTALL_LIST); do \
		src=$${f%%:*}; how=$${f##*:}; dst=$${f#*:}; \
		dst='$(DESTDIR)'$${dst%:*}; \
		echo "  INSTALL $$dst"; \
		case $$how in \
		link)	mkdir -p "$${dst%/*}"; ln -sfn "$$src" "$$dst" ;; \
		pc)	mkdir -p "$${dst%/*}"; \
			sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
			    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
			    -e 's|@VERSION@|$(SPINDLE_VERSION)|' "$$src" >"$$dst"; \
			chmod 644 "$$dst" ;; \
		*)	install -D -m "$$how" "$$src" "$$dst" ;; \
		esac; \
	done
	@$(POST_INSTALL)

uninstall:
	@for f in $(INSTALL_LIST); do \
		dst=$${f#*:}; dst='$(DESTDIR)'$${dst%:*}; \
		if [ -e "$$dst" ] || [ -L "$$dst" ]; then \
			echo "  RM      $$dst"; rm -f "$$dst"; fi; \
	done
	@d='$(DESTDIR)$(INCLUDEDIR)/spindle'; [ ! -d "$$d" ] || rmdir --ignore-fail-on-non-empty "$$d"
	@$(POST_INSTALL)
