# SPDX-License-Identifier: GPL-2.0
#
# Spindle top-level build.
#
#   make            module (kmod/spindle.ko), userspace, selftests
#   make check      everything, then host unit tests and guest selftests
#   make module     just the kernel module (KDIR=... for another kernel)
#   make unit       host unit tests of the protocol core (ASan + UBSan)
#
# The kernel module builds against KDIR, by default the headers of the kernel
# that scripts/kver picks (the running one if its headers are installed,
# else the newest installed Debian kernel: the QEMU test bed's).

KVER ?= $(shell scripts/kver)
KDIR ?= /lib/modules/$(KVER)/build
O_BUILD := build

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
UNIT_BINS := $(patsubst selftests/unit/%.c,$(UNIT)/%,$(UNIT_SRCS))
PROTO_HDRS := $(wildcard kmod/proto/*.h)
PROTO_SRCS := $(wildcard kmod/proto/*.c)

ST_SRCS := $(wildcard selftests/guest/*.c)
ST_BINS := $(patsubst selftests/guest/%.c,$(ST)/%,$(ST_SRCS))

LIB := $(O_BUILD)/lib
LIBSPINDLE_SRCS := userspace/lib/libspindle.c
LIBSPINDLE_OBJ := $(LIB)/libspindle.o
LIBSPINDLE_PIC := $(LIB)/libspindle.pic.o
BENCH_COMMON := userspace/bench/common.c userspace/bench/common.h
TOOLS := $(BIN)/spindlectl $(BIN)/spindle-bw $(BIN)/spindle-lat

.PHONY: all module userspace selftests unit check clean help print-kdir lint bench

all: module userspace selftests

help:
	@sed -n '3,13p' Makefile

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 SPINDLE_WERROR=$(or $(SPINDLE_WERROR),1) modules

userspace: $(TOOLS) $(LIB)/libspindle.a $(LIB)/libspindle.so

$(LIBSPINDLE_OBJ): $(LIBSPINDLE_SRCS) userspace/lib/libspindle.h uapi/linux/spindle.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -c -o $@ $<

$(LIBSPINDLE_PIC): $(LIBSPINDLE_SRCS) userspace/lib/libspindle.h uapi/linux/spindle.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -fPIC -c -o $@ $<

$(LIB)/libspindle.a: $(LIBSPINDLE_OBJ)
	$(AR) rcs $@ $^

$(LIB)/libspindle.so: $(LIBSPINDLE_PIC)
	$(CC) -shared -Wl,-soname,libspindle.so.1 -o $@ $^

$(BIN)/spindlectl: userspace/tools/spindlectl.c $(LIB)/libspindle.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -o $@ $< $(LIB)/libspindle.a

$(BIN)/spindle-%: userspace/bench/spindle-%.c $(BENCH_COMMON) $(LIB)/libspindle.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -o $@ $< userspace/bench/common.c $(LIB)/libspindle.a -lpthread

selftests: $(ST_BINS)

$(ST)/%: selftests/guest/%.c selftests/ktap.h uapi/linux/spindle.h $(LIB)/libspindle.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -o $@ $< $(LIB)/libspindle.a -lpthread

unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "# $$t"; $$t; done

$(UNIT)/%: selftests/unit/%.c selftests/unit/*.h selftests/ktap.h $(PROTO_HDRS) $(PROTO_SRCS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(SAN_FLAGS) -Iselftests/unit -o $@ $< $(PROTO_SRCS)

check: all
	scripts/check

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -rf $(O_BUILD)

print-kdir:
	@echo $(KDIR)

bench:
	scripts/bench
