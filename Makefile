# engine — JSON tile configs to verified GPU GEMM kernels at run time.
#   make            build build/engine
#   make test       everything that needs no GPU (unit tests, invalid configs, compile matrix)
#   make sanitize   the same with ASan (leaks too) and UBSan, built in build-san (not the wisdom entries)
#   make tsan       the library's threads tests under ThreadSanitizer, built in build-tsan
#   make fuzz       each libFuzzer harness of tests/fuzz for FUZZ_SECONDS (default 60), built in build-fuzz
#   make test-gpu   verification, cross-check, error paths, crash isolation, tune and sanitizers on the GPU
#                   (prebuilt binaries)
#   make test-slurm tools/slurm against a real Slurm on localhost (installs slurm-wlm and munge as root)
#   make bench      build, then benchmark the default walk at 2048^3 on the GPU found
#   make walk       re-measure the published tables on the GPU found (bench/walk.sh writes bench/data/<gpu>-*.jsonl),
#                   then render the README's tables from the data (bench/tables.py)
#   make probes     build the FP64 issue-rate probes with nvcc (optional; bench/probes/run.sh runs them)
#   make examples   examples/sgemm (libengine against cuBLAS; needs a GPU to run, not to build)
#   make install PREFIX=/usr/local   (DESTDIR honoured): the command, its data, engine.h, libengine.a/.so, engine.pc
#   make help       this list
CUDA_HOME ?= /usr/local/cuda
PREFIX    ?= /usr/local
CC        ?= cc
CFLAGS    ?= -O2 -g
CUDA_LIB  := $(firstword $(wildcard $(CUDA_HOME)/lib64) $(CUDA_HOME)/lib)
# -fPIC: the same objects make the command and libengine.so; -fvisibility=hidden: the library
# exports only what include/engine.h marks ENGINE_API.
override CFLAGS  += -std=c11 -Wall -Wextra -Wpedantic -Werror -I$(CUDA_HOME)/include -MMD -MP -fPIC -fvisibility=hidden
override LDFLAGS += -L$(CUDA_LIB) -Wl,-rpath,$(CUDA_LIB)
# No -lcublas: the command loads it when it first needs it (engine/lab/blas.c), not at every start.
LIBS      := -lnvrtc -ljansson -ldl -lm -lpthread

# The library's version (include/engine.h): its SONAME carries the major (libengine.so.MAJOR).
SO_MAJOR := $(shell sed -n 's/^\#define ENGINE_VERSION_MAJOR \([0-9]*\)/\1/p' include/engine.h)
SO_MINOR := $(shell sed -n 's/^\#define ENGINE_VERSION_MINOR \([0-9]*\)/\1/p' include/engine.h)
# B is the build directory: `make sanitize` builds the same tree into build-san with ASan and UBSan.
B         ?= build
# The code in three floors, each seeing only the headers of its own and those below it:
#   engine/core  what the library needs (libengine: no printing, no exit, no cuBLAS link)
#   engine/lab   what experiments need (timing, verification against cuBLAS, workers, tuning data)
#   engine/cli   the command
# A core file that includes a lab or cli header does not compile (tests/layers.sh checks that it fails).
CORE_SRC  := $(wildcard engine/core/*.c)
LAB_SRC   := $(wildcard engine/lab/*.c)
CLI_SRC   := $(wildcard engine/cli/*.c)
SRC       := $(CORE_SRC) $(LAB_SRC) $(CLI_SRC)
OBJ       := $(SRC:engine/%.c=$(B)/obj/%.o)
LIB_OBJ   := $(filter-out $(B)/obj/cli/main.o,$(OBJ))
INC_core  := -Iengine/core
INC_lab   := $(INC_core) -Iengine/lab
INC_cli   := $(INC_lab) -Iengine/cli
# libengine: the core floor only (no cuBLAS, no worker processes, no command line).
CORE_OBJ  := $(CORE_SRC:engine/%.c=$(B)/obj/%.o)
CORE_LIBS := -lnvrtc -ljansson -ldl -lm -lpthread
TESTS     := $(patsubst tests/unit/%.c,$(B)/tests/%,$(wildcard tests/unit/test_*.c))
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# Fuzzers (libFuzzer, clang) over the parsers: every engine module but main, in build-fuzz (the floors
# are checked by the normal build; these see every header).
FUZZ_CC   ?= clang
FUZZ_SECONDS ?=
FUZZ_RUNS ?=
FUZZ_JOBS ?= 1
FUZZ_ONLY ?=
FUZZ_FLAGS := -g -O1 -std=c11 -Wall -Wextra -Werror -I$(CUDA_HOME)/include -fno-sanitize-recover=all
FUZZ_OBJ  := $(filter-out build-fuzz/obj/cli/main.o,$(SRC:engine/%.c=build-fuzz/obj/%.o))
FUZZERS   := $(patsubst tests/fuzz/%.c,build-fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))

.PHONY: all test test-gpu test-slurm bench walk probes install clean deps sanitize fuzz examples tsan help
all: $(B)/engine $(B)/libengine.a $(B)/libengine.so $(B)/libengine.so.$(SO_MAJOR) examples $(B)/gpu_lib $(B)/lib_gpu.sh

# One probe line per dependency; installs what is missing when run as root (tools/deps.sh).
$(B)/.deps:
	@mkdir -p $(B) && echo "dependencies:" && bash tools/deps.sh $(CUDA_HOME) && touch $@
$(B)/.deps-test: $(B)/.deps
	@bash tools/deps.sh $(CUDA_HOME) --with-tests && touch $@

# Objects depend on the Makefile too: a change of flags (-fPIC for the library) rebuilds them.
$(B)/obj/core/%.o: engine/core/%.c Makefile | $(B)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC_core) -c $< -o $@
$(B)/obj/lab/%.o: engine/lab/%.c Makefile | $(B)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC_lab) -c $< -o $@
$(B)/obj/cli/%.o: engine/cli/%.c Makefile | $(B)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC_cli) -c $< -o $@

# The command links no library entry points (api*.c): it is the library's peer, not its user.
$(B)/engine: $(filter-out $(B)/obj/core/api%.o,$(OBJ))
	$(CC) $(LDFLAGS) $^ -o $@ $(LIBS)

$(B)/libengine.a: $(CORE_OBJ)
	rm -f $@ && ar rcs $@ $^

# --no-undefined: a core module that calls into the command's modules fails here, not in a user's link.
# The SONAME carries the major version (engine.h's ENGINE_VERSION_MAJOR): a program linked against
# this library asks for libengine.so.MAJOR, which a library of another major does not answer.
# libengine.so.MAJOR is a copy, not a link: build/ is carried to the GPU machine, where links may not go.
$(B)/libengine.so: $(CORE_OBJ) include/engine.h
	$(CC) -shared -Wl,--no-undefined -Wl,-soname,libengine.so.$(SO_MAJOR) $(LDFLAGS) $(CORE_OBJ) -o $@ $(CORE_LIBS)
$(B)/libengine.so.$(SO_MAJOR): $(B)/libengine.so
	cp $< $@

# The example and the GPU test driver are built as a user would build them: engine.h and the library,
# cuBLAS and the runtime as the reference (no GPU needed to build them).
USER_CFLAGS := -O2 -g -std=c11 -Wall -Wextra -Werror -Iinclude -I$(CUDA_HOME)/include
# The library is found beside the program, or one folder up (build/examples), wherever build/ is copied.
USER_LIBS   := -L$(B) -Wl,-rpath,'$$ORIGIN' -Wl,-rpath,'$$ORIGIN/..' -Wl,-rpath,$(abspath $(B)) -lengine -L$(CUDA_LIB) -Wl,-rpath,$(CUDA_LIB) -lcublas -lcudart -lpthread -lm
examples: $(B)/examples/sgemm
$(B)/examples/%: examples/%.c include/engine.h $(B)/libengine.so $(B)/libengine.so.$(SO_MAJOR)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $< -o $@ $(USER_LIBS)
# The library's GPU script, where the lead's device calls find it (build/ travels to the GPU machine).
$(B)/lib_gpu.sh: tests/lib_gpu.sh
	@mkdir -p $(B) && cp $< $@
$(B)/gpu_lib: tests/gpu_lib.c include/engine.h $(B)/libengine.so $(B)/libengine.so.$(SO_MAJOR)
	$(CC) $(USER_CFLAGS) $< -o $@ $(USER_LIBS)

$(B)/tests/%: tests/unit/%.c $(LIB_OBJ) | $(B)/.deps-test
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC_cli) $< $(LIB_OBJ) -o $@ $(LDFLAGS) $(LIBS) -lcmocka

test: all $(TESTS)
	@BUILD=$(B) bash tests/run.sh

# make test on binaries built with AddressSanitizer (leaks included) and UndefinedBehaviorSanitizer;
# the first report fails the run. All of it (unit tests, config and CLI parsers, lists, tune logs
# and workers, bench, scripts, every shipped config loaded, pasted, planned and compiled for each
# arch) but compile_matrix's 1,144 wisdom entries (counted as skipped): one process and one NVRTC
# compile each (NVRTC is not instrumented) running host code the rest already runs, they cost about
# 9.5 min of CPU under ASan (0.5 s an entry), more than the rest of make sanitize together (7 min).
sanitize:
	@MATRIX_WISDOM=0 $(MAKE) --no-print-directory B=build-san CFLAGS="-O1 -g $(SAN_FLAGS)" LDFLAGS="$(SAN_FLAGS)" test

# The library's thread contract under ThreadSanitizer (built in build-tsan): many contexts and
# threads at once (test_threads), two threads on one plan cache (test_api), the disk cache replaced
# under readers (test_jit), the compile pool (test_pool). The first race reported fails it, but
# for those inside uninstrumented NVRTC (tests/tsan.supp says why).
TSAN_TESTS := test_threads test_api test_jit test_pool
tsan:
	@$(MAKE) -s --no-print-directory B=build-tsan CFLAGS="-O1 -g -fsanitize=thread" LDFLAGS="-fsanitize=thread" \
		$(TSAN_TESTS:%=build-tsan/tests/%)
	@for t in $(TSAN_TESTS); do TSAN_OPTIONS="halt_on_error=1 exitcode=66 suppressions=$(CURDIR)/tests/tsan.supp" build-tsan/tests/$$t >build-tsan/$$t.log 2>&1; \
		rc=$$?; printf '  %-14s %s\n' $$t "$$(tail -n 1 build-tsan/$$t.log)"; \
		[ $$rc = 0 ] || { grep -A12 'ThreadSanitizer' build-tsan/$$t.log | head -40; exit 1; }; done; echo "tsan: no race in $(TSAN_TESTS)"

# Each fuzzer for FUZZ_SECONDS (default 60), or FUZZ_RUNS executions over FUZZ_JOBS processes;
# corpora seeded from the repository (tests/fuzz/run.sh).
fuzz: $(FUZZERS) $(B)/engine
	@FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_RUNS=$(FUZZ_RUNS) FUZZ_JOBS=$(FUZZ_JOBS) FUZZ_ONLY="$(FUZZ_ONLY)" bash tests/fuzz/run.sh
.SECONDARY: $(FUZZ_OBJ)
build-fuzz/.deps:
	@mkdir -p build-fuzz && bash tools/deps.sh $(CUDA_HOME) --with-fuzz && touch $@
build-fuzz/obj/%.o: engine/%.c | build-fuzz/.deps
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(INC_cli) -fsanitize=fuzzer-no-link,address,undefined -c $< -o $@
build-fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJ)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer,address,undefined $(INC_cli) $< $(FUZZ_OBJ) -o $@ $(LDFLAGS) $(LIBS)

# No rebuild here: on the GPU machine the binaries come prebuilt (it has no jansson headers).
test-gpu:
	@bash tests/gpu.sh

# submit.sh and tune.sbatch under munged, slurmctld and slurmd started on localhost, the fake worker
# standing in for the GPU (tests/slurm.sh); one SKIP line where Slurm and MUNGE cannot be installed.
test-slurm: $(B)/engine
	@BUILD=$(B) CUDA_HOME=$(CUDA_HOME) bash tests/slurm.sh

bench: $(B)/engine
	$(B)/engine bench --size 2048

walk: $(B)/engine
	@bash bench/walk.sh
	python3 bench/tables.py --write README.md

# Probes are plain CUDA programs (runtime API, nvcc), not engine templates: they measure the machine.
PROBE_ARCH ?= sm_90
probes: build/probes/fp64_core
build/probes/%: bench/probes/%.cu
	@mkdir -p $(dir $@)
	$(CUDA_HOME)/bin/nvcc -O3 -std=c++17 -arch=$(PROBE_ARCH) -o $@ $<

install: $(B)/engine $(B)/libengine.a $(B)/libengine.so $(B)/libengine.so.$(SO_MAJOR)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/engine/kernels_src $(DESTDIR)$(PREFIX)/share/engine/configs \
		$(DESTDIR)$(PREFIX)/share/engine/tune $(DESTDIR)$(PREFIX)/share/engine/wisdom
	install -m 755 $(B)/engine $(DESTDIR)$(PREFIX)/bin/engine
	install -m 644 kernels_src/*.cu kernels_src/*.cuh kernels_src/*.json $(DESTDIR)$(PREFIX)/share/engine/kernels_src/
	install -m 644 configs/*.json configs/*.list $(DESTDIR)$(PREFIX)/share/engine/configs/
	install -m 644 tune/*.json $(DESTDIR)$(PREFIX)/share/engine/tune/
	install -m 644 wisdom/*.json $(DESTDIR)$(PREFIX)/share/engine/wisdom/
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 include/engine.h $(DESTDIR)$(PREFIX)/include/engine.h
	install -m 644 $(B)/libengine.a $(DESTDIR)$(PREFIX)/lib/libengine.a
	install -m 755 $(B)/libengine.so $(DESTDIR)$(PREFIX)/lib/libengine.so.$(SO_MAJOR).$(SO_MINOR)
	ln -sf libengine.so.$(SO_MAJOR).$(SO_MINOR) $(DESTDIR)$(PREFIX)/lib/libengine.so.$(SO_MAJOR)
	ln -sf libengine.so.$(SO_MAJOR) $(DESTDIR)$(PREFIX)/lib/libengine.so
	for pc in engine engine-shared; do sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@CUDA_LIB@|$(CUDA_LIB)|g' tools/$$pc.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/$$pc.pc; done

clean:
	rm -rf build build-san build-fuzz build-tsan

-include $(OBJ:.o=.d)

# make help: the opening comment of this file, which lists the targets (kept there, read here).
help:
	@sed -n '/^[^#]/q; s/^# \{0,1\}//p' $(firstword $(MAKEFILE_LIST))

# make print-VAR: a variable's value, for the tests that check how the floors are built (tests/layers.sh).
print-%:
	@echo '$($*)'
