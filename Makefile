# tcalc — build, test and check.
#   make            build build/tcalc (installing Debian dependencies if missing)
#   make run        build and start the REPL
#   make test       build and run every test suite
#   make check      the same suites under ASan + UBSan (in build/san)
#   make CUDA=1     also build the CUDA engine (automatic when nvcc is found)
#   make fuzz FUZZ_SECONDS=N   run each libFuzzer harness N seconds (clang)
#   make valgrind   the golden and unit suites under valgrind memcheck
#   make soak       long-running memory and statement soak tests

BUILD   ?= build
SAN     ?=
CC      ?= cc
NVCC    ?= $(shell command -v nvcc 2>/dev/null || { test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc; })
CUDA    ?= 0
OPT     ?= -O2

WARN    := -std=c17 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
           -Wmissing-prototypes -Wcast-qual -Wundef -Wwrite-strings -Werror
PKGS    := libedit libcjson
CPPFLAGS += -D_DEFAULT_SOURCE -Isrc -Ibackend -Irepl
CFLAGS  += $(OPT) -g -fno-math-errno -pthread $(WARN) -MMD -MP
LDLIBS  += -lm -pthread
ifneq ($(SAN),)
  CFLAGS  += -fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all
  LDFLAGS += -fsanitize=$(SAN)
endif

DEPS_STAMP := build/.deps-ok

SRC_C     := $(wildcard src/*.c) $(wildcard backend/cpu/*.c)
REPL_C    := $(filter-out repl/main.c,$(wildcard repl/*.c))
UNIT_C    := $(wildcard tests/unit/*.c)
LIB_O     := $(SRC_C:%.c=$(BUILD)/%.o)
REPL_O    := $(REPL_C:%.c=$(BUILD)/%.o)
MAIN_O    := $(BUILD)/repl/main.o
UNIT_O    := $(UNIT_C:%.c=$(BUILD)/%.o)

ifeq ($(CUDA),1)
  CPPFLAGS += -DTC_HAVE_CUDA
endif

.PHONY: all run test check deps clean FORCE
all: $(BUILD)/tcalc

deps: $(DEPS_STAMP)
$(DEPS_STAMP): scripts/install-deps.sh
	@scripts/install-deps.sh
	@mkdir -p $(dir $@) && touch $@

# Rebuild everything when the flags change.
$(BUILD)/.flags: FORCE
	@mkdir -p $(BUILD)
	@echo '$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) CUDA=$(CUDA)' | cmp -s - $@ || \
	  echo '$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) CUDA=$(CUDA)' > $@

$(BUILD)/%.o: %.c $(BUILD)/.flags | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(shell pkg-config --cflags $(PKGS) 2>/dev/null) -c $< -o $@

# Test sources use Criterion's macros, which trip -Wpedantic's rules on
# variadic macros; they keep every other warning.
$(BUILD)/tests/%.o: tests/%.c $(BUILD)/.flags | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(filter-out -Wpedantic,$(CFLAGS)) $(shell pkg-config --cflags $(PKGS) criterion) -c $< -o $@

$(BUILD)/libtcalc.a: $(LIB_O)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/librepl.a: $(REPL_O)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/tcalc: $(MAIN_O) $(BUILD)/librepl.a $(BUILD)/libtcalc.a
	$(CC) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs $(PKGS)) $(LDLIBS)

$(BUILD)/unit-tests: $(UNIT_O) $(BUILD)/librepl.a $(BUILD)/libtcalc.a
	$(CC) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs $(PKGS) criterion) $(LDLIBS)

run: $(BUILD)/tcalc
	@$(BUILD)/tcalc

RELIABILITY := tests/reliability/hostile.sh tests/reliability/signals.sh

# Criterion counts a test whose worker LeakSanitizer then reports as
# passing: the log is searched, so that a leak fails `make check`.
test: $(BUILD)/tcalc $(BUILD)/unit-tests
	@$(BUILD)/unit-tests --jobs 2 2> $(BUILD)/unit-tests.log; rc=$$?; cat $(BUILD)/unit-tests.log >&2; \
	  if grep -q 'ERROR: LeakSanitizer' $(BUILD)/unit-tests.log; then echo "unit tests: memory leaks (see above)" >&2; exit 1; fi; \
	  exit $$rc
	scripts/run-golden.sh $(BUILD)/tcalc
	scripts/npy-interop.sh $(BUILD)/tcalc
	tests/cli/run.sh $(BUILD)/tcalc
	python3 tests/json/strict.py $(BUILD)/tcalc
	tests/repl/run.sh $(BUILD)/tcalc
	scripts/check-man.sh $(BUILD)/tcalc
	@for t in $(RELIABILITY); do $$t $(BUILD)/tcalc || exit 1; done
	$(if $(FAILMALLOC),tests/reliability/failmalloc.sh $(BUILD)/tcalc $(FAILMALLOC))

# The allocation-failure shim is preloaded, which a sanitizer's allocator
# does not allow: it runs in `make test` only, and is built without $(SAN).
ifeq ($(SAN),)
FAILMALLOC := $(BUILD)/failmalloc.so
test: $(FAILMALLOC)
endif
$(BUILD)/failmalloc.so: tests/reliability/failmalloc.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -shared -fPIC -Wall -Wextra -Werror -o $@ $<

check:
	$(MAKE) SAN=address,undefined BUILD=build/san OPT=-O1 test

clean:
	rm -rf build

# ---- soak: peak memory stays flat over 100 000 statements ----
.PHONY: soak
soak: $(BUILD)/tcalc
	tests/reliability/soak.sh $(BUILD)/tcalc

# ---- valgrind memcheck over the golden suite and the unit tests ----
.PHONY: valgrind
valgrind: $(BUILD)/tcalc $(BUILD)/unit-tests
	scripts/valgrind.sh $(BUILD)

# ---- fuzzing: libFuzzer harnesses in tests/fuzz/, built with clang ----
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_BUILD   := build/fuzz
FUZZ_NAMES   := fuzz_parse fuzz_stmt
.PHONY: fuzz fuzz-build

$(BUILD)/fuzz_%: $(BUILD)/tests/fuzz/fuzz_%.o $(BUILD)/librepl.a $(BUILD)/libtcalc.a
	$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(shell pkg-config --libs $(PKGS)) $(LDLIBS)

$(BUILD)/gen-dict: $(BUILD)/tests/fuzz/gen_dict.o $(BUILD)/librepl.a $(BUILD)/libtcalc.a
	$(CC) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs $(PKGS)) $(LDLIBS)

fuzz-build:
	$(MAKE) BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) OPT=-O1 SAN=address,undefined,fuzzer-no-link \
	  $(FUZZ_NAMES:%=$(FUZZ_BUILD)/%)

fuzz: fuzz-build $(BUILD)/gen-dict
	scripts/fuzz.sh $(FUZZ_BUILD) $(BUILD)/gen-dict $(FUZZ_SECONDS) $(FUZZ_NAMES)

-include $(LIB_O:.o=.d) $(REPL_O:.o=.d) $(MAIN_O:.o=.d) $(UNIT_O:.o=.d) $(wildcard $(BUILD)/tests/fuzz/*.d)
