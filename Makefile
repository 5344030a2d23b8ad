# tcalc — build, test and check.
#   make            build build/tcalc (installing Debian dependencies if missing)
#   make run        build and start the REPL
#   make test       build and run every test suite
#   make check      the same suites under ASan + UBSan (in build/san)
#   make bench      time tcalc against NumPy on the same work (scripts/bench)
#   make accuracy   every f32/f64 math function against mpmath (full sweep)
#   make CUDA=1     also build the CUDA engine (the default when nvcc is found;
#                   CUDA=0 builds the complete CPU-only program)
#   make test-cuda  CPU-vs-CUDA parity suite (prints "skipped: ..." without a GPU)
#   make carry      prebuilt binaries for a bare GPU machine (scripts/cuda-device-check.sh)
#   make fuzz FUZZ_SECONDS=N   run each libFuzzer harness N seconds (clang)
#   make valgrind   the golden and unit suites under valgrind memcheck
#   make soak       peak memory over 100 000 statements stays flat
#   make install    PREFIX=/usr/local (default) DESTDIR=: bin/tcalc, the CUDA
#                   plugin in lib/tcalc/, the man page, bash and zsh completion
#   make uninstall  removes what make install put there (same PREFIX, DESTDIR)

# Builds use every CPU unless -j is given (make -j1: one file at a time).
# (A make started by another shares its jobs: MAKELEVEL > 0.)
ifeq ($(filter -j% --jobserver%,$(MAKEFLAGS))$(filter-out 0,$(MAKELEVEL)),)
  MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif

BUILD   ?= build
SAN     ?=
CC      ?= cc
NVCC    ?= $(shell command -v nvcc 2>/dev/null || { test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc; })
CUDA    ?= $(if $(NVCC),1,0)
OPT     ?= -O2
# Kernels (backend/) are built with full loop vectorisation: GCC's -O2
# vectorises only loops whose trip count is known. No kernel reads the
# floating-point exception flags, so selects may compute both sides.
KOPT    ?= -O3 -fno-trapping-math

WARN    := -std=c17 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
           -Wmissing-prototypes -Wcast-qual -Wundef -Wwrite-strings -Werror
PKGS    := libedit libcjson cairo fontconfig
CPPFLAGS += -D_DEFAULT_SOURCE -Isrc -Ibackend -Irepl
CFLAGS  += $(OPT) -g -fno-math-errno -pthread $(WARN) -MMD -MP
# SLEEF (libsleef-dev): the CPU engine's vectorised math functions.
# zlib (zlib1g-dev): inflating and CRC-32 of .npz members (src/npz.c).
# cairo (libcairo2-dev, which brings fontconfig's): plots written as PNG, SVG
# and PDF (src/plot_cairo.c);
# expanded at link time, after the dependencies are installed.
CAIRO_LIBS = $(shell pkg-config --libs cairo fontconfig)
LDLIBS  += -lsleef -lz -lm -pthread -ldl $(CAIRO_LIBS)
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

# Every engine directory's C files (backend/<engine>/*.c) but CUDA's, which
# are built only with CUDA=1 (below).
SRC_C     := $(wildcard src/*.c) $(filter-out backend/cuda/%,$(wildcard backend/*/*.c))
CUDA_O    :=
CUDA_LIB  :=
CHECK_C   :=

# The CUDA engine: its vtable, backend/cuda/*.c, is compiled into tcalc
# (the C flags above); its kernels and runtime glue, backend/cuda/*.cu
# (nvcc), are a plugin, libtcalc-cuda.so, with the CUDA runtime linked into
# it statically, that tcalc loads with dlopen the first time the engine is
# asked for. So a start that never uses the engine does not pay for the
# runtime's constructors or the kernels' 20 MB, and the one tcalc binary
# runs where there is no GPU, driver or plugin (engine_unavailable says
# why). It exports one symbol (tcu_api_v1, see tcu.h). sm_90 (H100, H200)
# as machine code, plus compute_90 PTX that newer GPUs JIT-compile.
ifeq ($(CUDA),1)
  ifeq ($(NVCC),)
    $(error CUDA=1 but nvcc was not found; set NVCC=/path/to/nvcc or use CUDA=0)
  endif
  CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
  CUDA_ARCH ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
  NVCCFLAGS := -std=c++17 -O2 $(CUDA_ARCH) -Werror all-warnings -DTCU_CUDA_HOME=\"$(CUDA_HOME)\" \
               -Xcompiler -fPIC,-fvisibility=hidden \
               -Xcompiler -Wall,-Wextra,-Wshadow,-Werror,-fno-exceptions,-fno-rtti,-fno-threadsafe-statics
  SRC_C     += $(wildcard backend/cuda/*.c)
  CUDA_O    := $(patsubst %.cu,$(BUILD)/%.o,$(wildcard backend/cuda/*.cu))
  CUDA_LIB  := $(BUILD)/libtcalc-cuda.so
  CHECK_C   := $(wildcard tests/cuda/*.c)
  CPPFLAGS  += -DTC_HAVE_CUDA
endif
REPL_C    := $(filter-out repl/main.c,$(wildcard repl/*.c))
UNIT_C    := $(wildcard tests/unit/*.c)
LIB_O     := $(SRC_C:%.c=$(BUILD)/%.o)
CHECK_O   := $(CHECK_C:%.c=$(BUILD)/%.o)
REPL_O    := $(REPL_C:%.c=$(BUILD)/%.o)
MAIN_O    := $(BUILD)/repl/main.o
UNIT_O    := $(UNIT_C:%.c=$(BUILD)/%.o)

.PHONY: all run test test-cuda carry check bench deps clean install uninstall FORCE
all: $(BUILD)/tcalc $(CUDA_LIB)

deps: $(DEPS_STAMP)
$(DEPS_STAMP): scripts/install-deps.sh
	@scripts/install-deps.sh
	@mkdir -p $(dir $@) && touch $@

# Rebuild everything when the flags change. Expanded here, once (:=), so
# that a target-specific CFLAGS (the kernels' KOPT) does not leak into it
# and make the stamp differ with the target that first asks for it.
FLAGS_LINE := $(CC) $(CPPFLAGS) $(CFLAGS) $(KOPT) $(LDFLAGS) CUDA=$(CUDA) $(NVCCFLAGS)
$(BUILD)/.flags: FORCE
	@mkdir -p $(BUILD)
	@echo '$(FLAGS_LINE)' | cmp -s - $@ || echo '$(FLAGS_LINE)' > $@

$(BUILD)/%.o: %.c $(BUILD)/.flags | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(UNSEEN),$(CPPFLAGS)) $(CFLAGS) $(shell pkg-config --cflags $(PKGS) 2>/dev/null) -c $< -o $@

# The core (src/) sees only its own headers and tables: the engines
# (backend/) and the language (repl/) build on it, never the other way.
$(BUILD)/src/%.o: UNSEEN := -Ibackend -Irepl

$(BUILD)/backend/%.o: CFLAGS += $(KOPT)
# The elementwise kernels again for AVX2 (backend/cpu/ew_avx2.c), which
# backend/cpu/ew.c uses on a CPU that has it: same bits, wider loops.
ifeq ($(shell uname -m),x86_64)
$(BUILD)/backend/cpu/ew_avx2.o: CFLAGS += -mavx2
endif

# Test sources use Criterion's macros, which trip -Wpedantic's rules on
# variadic macros; they keep every other warning.
$(BUILD)/tests/%.o: tests/%.c $(BUILD)/.flags | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(filter-out -Wpedantic,$(CFLAGS)) $(shell pkg-config --cflags $(PKGS) criterion) -c $< -o $@

# cuda-check (the parity suite and the device benchmark) is a plain program
# (libc, and the plugin next to it) so that it runs on a bare GPU machine.
$(BUILD)/tests/cuda/%.o: tests/cuda/%.c $(BUILD)/.flags | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/backend/cuda/%.o: backend/cuda/%.cu $(BUILD)/.flags
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -MMD -MP -c $< -o $@

# The plugin: nothing but tcu_api_v1 exported (-fvisibility=hidden, and the
# runtime's own symbols kept inside), every reference resolved (-z defs).
$(CUDA_LIB): $(CUDA_O)
	$(CC) -shared -o $@ $^ -Wl,-soname,libtcalc-cuda.so -Wl,--exclude-libs,ALL -Wl,-z,defs -Wl,-O1 \
	  -L$(CUDA_HOME)/lib64 -lcudart_static -lm -ldl -lrt -pthread

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

$(BUILD)/cuda-check: $(CHECK_O) $(BUILD)/libtcalc.a | $(CUDA_LIB)
	$(CC) $(LDFLAGS) -o $@ $(CHECK_O) $(BUILD)/libtcalc.a $(LDLIBS)

run: $(BUILD)/tcalc
	@$(BUILD)/tcalc

# The suites of make test, NAME=COMMAND each, run side by side by
# scripts/run-suites (TEST_JOBS at a time; each one's output in
# $(BUILD)/logs/NAME.log, printed when it fails; their wall times at the
# end). A suite whose log holds a LeakSanitizer report fails (Criterion
# counts a test whose worker LeakSanitizer then reports as passing).
# Long exhaustive and randomised runs run here at a sample size; make
# test-full runs them whole.
TEST_JOBS ?=
SUITES = \
  'unit=$(BUILD)/unit-tests --jobs 2' \
  'golden=scripts/run-golden.sh $(BUILD)/tcalc' \
  'print=tests/print/run.sh $(BUILD)/tcalc' \
  'npy-interop=scripts/npy-interop.sh $(BUILD)/tcalc' \
  'npy-interop-needs-numpy=! CI=true PYTHON=/bin/false scripts/npy-interop.sh $(BUILD)/tcalc' \
  'linalg-numpy=scripts/linalg-numpy.sh $(BUILD)/tcalc' \
  'fn-numpy=scripts/fn-numpy.sh $(BUILD)/tcalc' \
  'index-numpy=scripts/index-numpy.sh $(BUILD)/tcalc $(if $(FULL_FLAG),100000,10000)' \
  'semantics-numpy=scripts/semantics-numpy.sh $(BUILD)/tcalc $(if $(FULL_FLAG),20000,2000)' \
  'semantics-tables=$${PYTHON:-/usr/bin/python3} scripts/gen-semantics-tables.py --check' \
  'semantics-torch=scripts/semantics-torch.sh $(BUILD)/tcalc $(if $(FULL_FLAG),20000,2000)' \
  'json-roundtrip=scripts/json-roundtrip.sh $(BUILD)/tcalc' \
  'cli=tests/cli/run.sh $(BUILD)/tcalc' \
  'json-strict=python3 tests/json/strict.py $(BUILD)/tcalc' \
  'spellings=$${PYTHON:-/usr/bin/python3} tests/cli/spellings.py $(BUILD)/tcalc' \
  'repl=tests/repl/run.sh $(BUILD)/tcalc' \
  'plots=tests/plot/run.sh $(BUILD)/tcalc' \
  'progress=tests/repl/progress.sh $(BUILD)/tcalc' \
  'reader=tests/reader/fresh.py $(BUILD)/tcalc $(FULL_FLAG)' \
  'man=scripts/check-man.sh $(BUILD)/tcalc' \
  'install=tests/cli/install-cycle.sh $(CUDA) $(MAKE) --no-print-directory -s CC="$(CC)" BUILD=$(BUILD) SAN=$(SAN) OPT="$(OPT)" KOPT="$(KOPT)" CUDA=$(CUDA)' \
  'accuracy=tests/accuracy/ulp.py $(BUILD)/tcalc $(FULL_FLAG)' \
  'scalar-paths=tests/scalar/paths.py $(BUILD)/tcalc $(if $(FULL_FLAG),,--quick)' \
  'hostile=tests/reliability/hostile.sh $(BUILD)/tcalc' \
  'signals=tests/reliability/signals.sh $(BUILD)/tcalc' \
  'soak=tests/reliability/soak.sh $(BUILD)/tcalc' \
  'history=tests/reliability/history.sh $(BUILD)/tcalc' \
  'saves=tests/reliability/saves.sh $(BUILD)/tcalc' \
  $(if $(FAILMALLOC),'failmalloc=tests/reliability/failmalloc.sh $(BUILD)/tcalc $(FAILMALLOC)') \
  $(if $(CHECK_C),'cuda-emulate=$(BUILD)/cuda-check parity --emulate --quick --brief --allow-missing' \
    'cuda-emulate-needs-plugin=! CI=true TCALC_CUDA_LIB=/nonexistent/libtcalc-cuda.so $(BUILD)/cuda-check parity --emulate --quick --brief')
FULL_FLAG =

test: $(BUILD)/tcalc $(BUILD)/unit-tests $(CUDA_LIB) $(if $(CHECK_C),$(BUILD)/cuda-check) \
      $(BUILD)/completion/tcalc $(BUILD)/completion/_tcalc
	@scripts/run-suites $(if $(TEST_JOBS),-j $(TEST_JOBS)) --logs $(BUILD)/logs $(SUITES)

# make test with the sampled suites at their full size (the accuracy
# sweep, the scalar paths, the reader's random lines): some minutes more
.PHONY: test-full
test-full:
	$(MAKE) test FULL_FLAG=--full

# Every row the CPU claims, CPU vs CUDA, verified or not (see
# backend/cuda/verified.def); exits 0 with "skipped: ..." without a device.
ifeq ($(CUDA),1)
test-cuda: $(BUILD)/cuda-check
	TCALC_CUDA_UNVERIFIED=1 $(BUILD)/cuda-check parity
else
test-cuda:
	@echo "skipped: no CUDA engine in this build (nvcc not found; make CUDA=1 test-cuda)"
endif

carry:
	scripts/cuda-device-check.sh --prepare

# The allocation-failure shim is preloaded, which a sanitizer's allocator
# does not allow: it runs in `make test` only, and is built without $(SAN).
ifeq ($(SAN),)
FAILMALLOC := $(BUILD)/failmalloc.so
test: $(FAILMALLOC)
endif
$(BUILD)/failmalloc.so: tests/reliability/failmalloc.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -shared -fPIC -Wall -Wextra -Werror -o $@ $< -ldl

check:
	$(MAKE) SAN=address,undefined BUILD=build/san OPT=-O1 KOPT=-O1 test

bench: $(BUILD)/tcalc
	scripts/bench $(BUILD)/tcalc

# the README's picture: build/docs/plot.png, drawn by save_plot (not committed)
.PHONY: docs
docs: $(BUILD)/tcalc
	@mkdir -p build/docs
	$(BUILD)/tcalc -e 'x = linspace(0, 12.56, 400)' \
	  -e 'save_plot("build/docs/plot.png", plot(x, [sin(x), cos(x) * 0.5], title="sin(x) and cos(x) / 2", xlabel="x"))'
	@echo "wrote build/docs/plot.png"

# every f32/f64 math function against mpmath, about 50 times the sample
# make test runs (some minutes)
.PHONY: accuracy
accuracy: $(BUILD)/tcalc
	tests/accuracy/ulp.py $(BUILD)/tcalc --full

clean:
	rm -rf build

# ---- installation ----
# The binary finds its CUDA plugin in ../lib/tcalc/ from itself (see
# backend/cuda/cuda.c), so the tree can be moved as a whole. Completions are
# generated by the binary from its option table and function registry.
PREFIX  ?= /usr/local
DESTDIR ?=
INST_BIN  = $(DESTDIR)$(PREFIX)/bin
INST_LIB  = $(DESTDIR)$(PREFIX)/lib/tcalc
INST_MAN  = $(DESTDIR)$(PREFIX)/share/man/man1
INST_BASH = $(DESTDIR)$(PREFIX)/share/bash-completion/completions
INST_ZSH  = $(DESTDIR)$(PREFIX)/share/zsh/site-functions

$(BUILD)/completion/tcalc $(BUILD)/completion/_tcalc: $(BUILD)/tcalc
	@mkdir -p $(dir $@)
	$(BUILD)/tcalc --completion bash > $(BUILD)/completion/tcalc
	$(BUILD)/tcalc --completion zsh > $(BUILD)/completion/_tcalc

install: $(BUILD)/tcalc $(CUDA_LIB) $(BUILD)/completion/tcalc $(BUILD)/completion/_tcalc
	install -d $(INST_BIN) $(INST_MAN) $(INST_BASH) $(INST_ZSH)
	install -m 755 $(BUILD)/tcalc $(INST_BIN)/tcalc
	install -m 644 man/tcalc.1 $(INST_MAN)/tcalc.1
	install -m 644 $(BUILD)/completion/tcalc $(INST_BASH)/tcalc
	install -m 644 $(BUILD)/completion/_tcalc $(INST_ZSH)/_tcalc
	$(if $(CUDA_LIB),install -d $(INST_LIB) && install -m 755 $(CUDA_LIB) $(INST_LIB)/libtcalc-cuda.so)

uninstall:
	rm -f $(INST_BIN)/tcalc $(INST_MAN)/tcalc.1 $(INST_BASH)/tcalc $(INST_ZSH)/_tcalc $(INST_LIB)/libtcalc-cuda.so
	rmdir $(INST_LIB) 2>/dev/null || true

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
FUZZ_NAMES   := fuzz_parse fuzz_stmt fuzz_json fuzz_npz
.PHONY: fuzz fuzz-build

$(BUILD)/fuzz_%: $(BUILD)/tests/fuzz/fuzz_%.o $(BUILD)/librepl.a $(BUILD)/libtcalc.a
	$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(shell pkg-config --libs $(PKGS)) $(LDLIBS)

$(BUILD)/gen-dict: $(BUILD)/tests/fuzz/gen_dict.o $(BUILD)/librepl.a $(BUILD)/libtcalc.a
	$(CC) $(LDFLAGS) -o $@ $^ $(TCALC_LIBS) $(LDLIBS)

# The harnesses run the CPU engine only (CUDA=0): its code is the same on
# every machine, and libFuzzer's coverage needs clang to compile all of it.
fuzz-build:
	$(MAKE) BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) CUDA=0 OPT=-O1 KOPT=-O1 SAN=address,undefined,fuzzer-no-link \
	  $(FUZZ_NAMES:%=$(FUZZ_BUILD)/%)

fuzz: fuzz-build $(BUILD)/gen-dict
	scripts/fuzz.sh $(FUZZ_BUILD) $(BUILD)/gen-dict $(FUZZ_SECONDS) $(FUZZ_NAMES)

-include $(LIB_O:.o=.d) $(CUDA_O:.o=.d) $(REPL_O:.o=.d) $(MAIN_O:.o=.d) $(UNIT_O:.o=.d) $(CHECK_O:.o=.d) $(wildcard $(BUILD)/tests/fuzz/*.d)
