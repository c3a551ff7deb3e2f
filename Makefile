# kforge — hand-written Makefile. See README.md for the two user commands.
#   make                 build ./kforge
#   make test            CPU test suite (installs missing Debian packages first)
#   make test-long       every case the sampled tests pick from (slower)
#   make test-gpu        GPU tests (skips clearly without a GPU)
#   make dataset PROBLEMS=level1   search -> verify -> pack -> site
#   make DEVELOPER=1     warnings are errors;  make SANITIZE=address,undefined
#   make V=1             show commands;  make install PREFIX=/usr/local DESTDIR=

PREFIX ?= /usr/local
DESTDIR ?=
CC ?= cc
CUDA_HOME ?= $(if $(wildcard /usr/local/cuda/include/cuda.h),/usr/local/cuda,)
PKG_CONFIG ?= pkg-config
PKGS := sqlite3 libarchive libcmark libcurl jansson libcrypto libgit2
TEST_PKGS := cmocka

ifeq ($(V),1)
Q :=
else
Q := @
endif

BUILD := build$(if $(SANITIZE),-san)
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo unknown)

CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Wshadow -Wpointer-arith -Wstrict-prototypes \
	-Wmissing-prototypes -Wformat=2 -Wundef -Wno-unused-parameter \
	-Wno-missing-field-initializers
ifeq ($(DEVELOPER),1)
WARN += -Werror -Wcast-align -Wvla -Wwrite-strings -Wold-style-definition \
	-Wimplicit-fallthrough
endif
ALL_CFLAGS := -std=gnu11 $(WARN) $(CFLAGS) -MMD -MP -I. -I$(BUILD) -D_GNU_SOURCE \
	$(if $(CUDA_HOME),-I$(CUDA_HOME)/include -DKF_CUDA_HOME='"$(CUDA_HOME)"',) \
	$(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
LDLIBS := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null) -ldl -lm -lpthread
ifneq ($(SANITIZE),)
ALL_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SANITIZE)
endif

# The library's folders, lowest layer first (docs/architecture.md; tests/t0021
# checks that no file includes from a higher one).
LIB_DIRS := core problem oracle store engine kernels kernels/emit kernels/graph collector \
	verifier dataset site
LIB_SRC := $(sort $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c)))
CLI_SRC := $(sort $(wildcard cli/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
# Device code shared with NVRTC: every *.cuh becomes a C string in
# $(BUILD)/gen/NAME_cuh.h (static const char NAME_cuh[]), included as "gen/NAME_cuh.h".
CUH_SRC := $(sort $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.cuh $(d)/cuda/*.cuh)))
GEN_HDRS := $(patsubst %.cuh,$(BUILD)/gen/%_cuh.h,$(notdir $(CUH_SRC)))
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
TEST_HELPER_SRC := $(sort $(wildcard tests/helpers/*.c))
TEST_HELPER_BIN := $(TEST_HELPER_SRC:tests/helpers/%.c=$(BUILD)/tests/%)

.PHONY: all deps deps-test test test-long test-gpu check-cuda install uninstall clean dataset dataset-slurm site bench valgrind FORCE
.DEFAULT_GOAL := all

all: kforge

ifeq ($(BUILD),build)
kforge: $(BUILD)/kforge
	$(Q)ln -sf $(BUILD)/kforge kforge
else
kforge: $(BUILD)/kforge
endif

$(BUILD)/kforge: $(CLI_OBJ) $(BUILD)/libkforge.a
	@echo "  LINK    $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libkforge.a $(LDLIBS)

$(BUILD)/libkforge.a: $(LIB_OBJ)
	@echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIB_OBJ) $(CLI_OBJ): | $(GEN_HDRS)
vpath %.cuh $(sort $(dir $(CUH_SRC)))
$(BUILD)/gen/%_cuh.h: %.cuh scripts/cuh2c.sh
	@mkdir -p $(dir $@)
	$(Q)scripts/cuh2c.sh $< $*_cuh > $@.tmp && mv $@.tmp $@

# CUPTI's profiler host header includes C++'s <string>: an empty stand-in.
$(BUILD)/engine/worker_prof.o: ALL_CFLAGS += -Iengine/cupti_c

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

# The version is baked in; the header changes only when `git describe` does.
$(BUILD)/kf_version_gen.h: FORCE
	@mkdir -p $(BUILD)
	@echo '#define KFORGE_VERSION "$(VERSION)"' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(BUILD)/core/version.o: $(BUILD)/kf_version_gen.h

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libkforge.a
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) $(shell $(PKG_CONFIG) --cflags $(TEST_PKGS)) $(LDFLAGS) -o $@ $< \
		$(BUILD)/libkforge.a $(shell $(PKG_CONFIG) --libs $(TEST_PKGS)) $(LDLIBS)

# kfcompile's kept results name the sources of the compile code they came from
KFC_ID_SRC := $(sort $(wildcard engine/compile*.[ch] engine/nvrtc.[ch] engine/candidate.[ch] engine/srcscan.c))
$(BUILD)/gen/kfcompile_id.h: $(KFC_ID_SRC)
	@mkdir -p $(dir $@)
	$(Q)printf '#define KF_COMPILE_SRC_ID "%s"\n' "$$(cat $^ | sha256sum | cut -c1-64)" >$@.tmp && mv $@.tmp $@
$(BUILD)/tests/kfcompile: $(BUILD)/gen/kfcompile_id.h

$(BUILD)/tests/%: tests/helpers/%.c $(BUILD)/libkforge.a
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libkforge.a $(LDLIBS)

deps:
	$(Q)scripts/deps.sh

deps-test:
	$(Q)scripts/deps.sh --test

# the build on every core unless -j was given
TEST_J = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1))
test: deps-test
	$(Q)$(MAKE) --no-print-directory $(TEST_J) DEVELOPER=$(or $(DEVELOPER),1) SANITIZE=$(SANITIZE) test-build
	$(Q)BUILD=$(BUILD) tests/run-tests.sh

.PHONY: test-build
test-build: kforge $(UNIT_BIN) $(TEST_HELPER_BIN)

# every case the sampling tests pick from (tests/lib.sh every_nth): several times make test's time
test-long: deps-test
	$(Q)$(MAKE) --no-print-directory $(TEST_J) DEVELOPER=$(or $(DEVELOPER),1) SANITIZE=$(SANITIZE) test-build
	$(Q)KF_TEST_LONG=1 BUILD=$(BUILD) tests/run-tests.sh

test-gpu: deps
	$(Q)$(MAKE) --no-print-directory SANITIZE=$(SANITIZE) test-build
	$(Q)BUILD=$(BUILD) tests/run-tests.sh --gpu

bench: test-build
	$(Q)BUILD=$(BUILD) tests/bench.sh

valgrind: test-build
	$(Q)BUILD=$(BUILD) KF_VALGRIND=1 tests/run-tests.sh --unit-only

PROBLEMS ?= level1
dataset: deps
	$(Q)$(MAKE) --no-print-directory kforge
	$(Q)scripts/dataset.sh "$(PROBLEMS)"

# problems/level1-3 from their generators (problems/gen/); KERNELBENCH=DIR:
# KernelBench's files (level1.tsv, level2/, level3/), else the committed
# reference.py files are the source; CHECK=1 only compares, naming what differs.
.PHONY: problems
problems:
	$(Q)problems/gen/problems.sh $(if $(CHECK),--check) $(if $(KERNELBENCH),--kernelbench "$(KERNELBENCH)")

# The static site from the store (KFORGE_DB or ./kforge.db) into public/.
site: kforge
	$(Q)./kforge site -o public $(if $(DIST),--dist $(DIST))

# The same pipeline on a Slurm cluster (docs/cluster.md): sharded search,
# merge, verify per PARTITION listed in VERIFY, pack, site.
dataset-slurm: deps
	$(Q)$(MAKE) --no-print-directory kforge
	$(Q)./kforge slurm submit --problems "$(PROBLEMS)" $(if $(SHARDS),--shards $(SHARDS)) \
		$(if $(PARTITION),--partition $(PARTITION)) $(if $(VERIFY),--verify $(VERIFY)) \
		$(if $(ACCOUNT),--account $(ACCOUNT)) $(if $(WORKDIR),--workdir $(WORKDIR)) \
		$(if $(DRY_RUN),--dry-run)

install: kforge
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/kforge
	install -m 0755 $(BUILD)/kforge $(DESTDIR)$(PREFIX)/bin/kforge
	cp -R templates problems $(DESTDIR)$(PREFIX)/share/kforge/

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/kforge
	rm -rf $(DESTDIR)$(PREFIX)/share/kforge

clean:
	rm -rf build build-san kforge

FORCE:

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(UNIT_BIN:=.d)
