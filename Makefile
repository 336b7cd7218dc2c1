# engine — JSON tile configs to verified GPU GEMM kernels at run time.
#   make            build build/engine
#   make test       everything that needs no GPU (unit tests, invalid configs, compile matrix)
#   make test-gpu   verification, cross-check, error paths, crash isolation, tune and sanitizers on the GPU
#                   (prebuilt binaries)
#   make bench      build, then benchmark the default walk at 2048^3 on the GPU found
#   make walk       regenerate the three published tables on the GPU found (bench/walk.sh)
#   make probes     build the FP64 issue-rate probes with nvcc (optional; bench/probes/run.sh runs them)
#   make install PREFIX=/usr/local
CUDA_HOME ?= /usr/local/cuda
PREFIX    ?= /usr/local
CC        ?= cc
CFLAGS    ?= -O2 -g
CUDA_LIB  := $(firstword $(wildcard $(CUDA_HOME)/lib64) $(CUDA_HOME)/lib)
override CFLAGS  += -std=c11 -Wall -Wextra -Wpedantic -Werror -I$(CUDA_HOME)/include -MMD -MP
override LDFLAGS += -L$(CUDA_LIB) -Wl,-rpath,$(CUDA_LIB)
LIBS      := -lnvrtc -lcublas -ljansson -ldl -lm -lpthread

SRC       := $(wildcard engine/*.c)
OBJ       := $(SRC:engine/%.c=build/obj/%.o)
LIB_OBJ   := $(filter-out build/obj/main.o,$(OBJ))
TESTS     := $(patsubst tests/unit/%.c,build/tests/%,$(wildcard tests/unit/test_*.c))

.PHONY: all test test-gpu bench walk probes install clean deps
all: build/engine

# One probe line per dependency; installs what is missing when run as root (tools/deps.sh).
build/.deps:
	@mkdir -p build && echo "dependencies:" && bash tools/deps.sh $(CUDA_HOME) && touch $@
build/.deps-test: build/.deps
	@bash tools/deps.sh $(CUDA_HOME) --with-tests && touch $@

build/obj/%.o: engine/%.c | build/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

build/engine: $(OBJ)
	$(CC) $(LDFLAGS) $^ -o $@ $(LIBS)

build/tests/%: tests/unit/%.c $(LIB_OBJ) | build/.deps-test
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Iengine $< $(LIB_OBJ) -o $@ $(LDFLAGS) $(LIBS) -lcmocka

test: build/engine $(TESTS)
	@bash tests/run.sh

# No rebuild here: on the GPU machine the binaries come prebuilt (it has no jansson headers).
test-gpu:
	@bash tests/gpu.sh

bench: build/engine
	build/engine bench --size 2048

walk: build/engine
	@bash bench/walk.sh

# Probes are plain CUDA programs (runtime API, nvcc), not engine templates: they measure the machine.
PROBE_ARCH ?= sm_90
probes: build/probes/fp64_core
build/probes/%: bench/probes/%.cu
	@mkdir -p $(dir $@)
	$(CUDA_HOME)/bin/nvcc -O3 -std=c++17 -arch=$(PROBE_ARCH) -o $@ $<

install: build/engine
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/engine/kernels_src $(DESTDIR)$(PREFIX)/share/engine/configs \
		$(DESTDIR)$(PREFIX)/share/engine/tune
	install -m 755 build/engine $(DESTDIR)$(PREFIX)/bin/engine
	install -m 644 kernels_src/*.cu kernels_src/*.cuh $(DESTDIR)$(PREFIX)/share/engine/kernels_src/
	install -m 644 configs/*.json configs/*.list $(DESTDIR)$(PREFIX)/share/engine/configs/
	install -m 644 tune/*.json $(DESTDIR)$(PREFIX)/share/engine/tune/

clean:
	rm -rf build

-include $(OBJ:.o=.d)
