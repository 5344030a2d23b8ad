# tcalc — build, test and check.
#   make            build build/tcalc (installing Debian dependencies if missing)
#   make run        build and start the REPL
#   make test       build and run every test suite
#   make check      the same suites under ASan + UBSan (in build/san)
#   make bench      time tcalc against NumPy on the same work (scripts/bench)
#   make CUDA=1     also build the CUDA engine (automatic when nvcc is found)

BUILD   ?= build
SAN     ?=
CC      ?= cc
NVCC    ?= $(shell command -v nvcc 2>/dev/null || { test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc; })
CUDA    ?= 0
OPT     ?= -O2
# Kernels (backend/) are built with full loop vectorisation: GCC's -O2
# vectorises only loops whose trip count is known. No kernel reads the
# floating-point exception flags, so selects may compute both sides.
KOPT    ?= -O3 -fno-trapping-math

WARN    := -std=c17 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
           -Wmissing-prototypes -Wcast-qual -Wundef -Wwrite-strings -Werror
PKGS    := libedit libcjson
CPPFLAGS += -D_DEFAULT_SOURCE -Isrc -Ibackend -Irepl
CFLAGS  += $(OPT) -g -fno-math-errno -pthread $(WARN) -MMD -MP
LDLIBS  += -lm -pthread -ldl
ifneq ($(SAN),)
  CFLAGS  += -fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all
  LDFLAGS += -fsanitize=$(SAN)
endif

DEPS_STAMP := build/.deps-ok

# libedit and the libraries it needs are linked into tcalc statically when
# their archives are installed: four fewer shared objects to load at every
# start (about 1 ms of a 5 ms start here). Expanded at link time, after the
# dependencies are installed.
comma := ,
EDIT_A = $(shell d=$$(pkg-config --variable=libdir libedit 2>/dev/null); \
           for l in edit tinfo bsd md; do test -f "$$d/lib$$l.a" || exit 0; done; echo yes)
TCALC_LIBS = $(if $(EDIT_A),-Wl$(comma)-Bstatic -ledit -ltinfo -lbsd -lmd -Wl$(comma)-Bdynamic \
               $(shell pkg-config --libs libcjson),$(shell pkg-config --libs $(PKGS)))

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

.PHONY: all run test check bench deps clean FORCE
all: $(BUILD)/tcalc

deps: $(DEPS_STAMP)
$(DEPS_STAMP): scripts/install-deps.sh
	@scripts/install-deps.sh
	@mkdir -p $(dir $@) && touch $@

# Rebuild everything when the flags change.
$(BUILD)/.flags: FORCE
	@mkdir -p $(BUILD)
	@echo '$(CC) $(CPPFLAGS) $(CFLAGS) $(KOPT) $(LDFLAGS) CUDA=$(CUDA)' | cmp -s - $@ || \
	  echo '$(CC) $(CPPFLAGS) $(CFLAGS) $(KOPT) $(LDFLAGS) CUDA=$(CUDA)' > $@

$(BUILD)/%.o: %.c $(BUILD)/.flags | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(shell pkg-config --cflags $(PKGS) 2>/dev/null) -c $< -o $@

$(BUILD)/backend/%.o: CFLAGS += $(KOPT)

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
	$(CC) $(LDFLAGS) -o $@ $^ $(TCALC_LIBS) $(LDLIBS)

$(BUILD)/unit-tests: $(UNIT_O) $(BUILD)/librepl.a $(BUILD)/libtcalc.a
	$(CC) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs $(PKGS) criterion) $(LDLIBS)

run: $(BUILD)/tcalc
	@$(BUILD)/tcalc

test: $(BUILD)/tcalc $(BUILD)/unit-tests
	$(BUILD)/unit-tests --jobs 2
	scripts/run-golden.sh $(BUILD)/tcalc
	scripts/npy-interop.sh $(BUILD)/tcalc

check:
	$(MAKE) SAN=address,undefined BUILD=build/san OPT=-O1 KOPT=-O1 test

bench: $(BUILD)/tcalc
	scripts/bench $(BUILD)/tcalc

clean:
	rm -rf build

-include $(LIB_O:.o=.d) $(REPL_O:.o=.d) $(MAIN_O:.o=.d) $(UNIT_O:.o=.d)
