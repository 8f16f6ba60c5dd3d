# Makefile: hlocheck, one plain GNU makefile (STYLE.md section 9).
#   make            library and command-line tools into build/
#   make test       install deps, build, unit tests, corpus round trips, golden tests
#   make demo       install deps, build, then the main job on a corpus module
#   make asan       make test again in build-asan/ with -fsanitize=address,undefined
#                   (make test itself runs the unit tests and the hlo-fuzz slice so: asan-subset)
#   make bench      speed against limits measured in the same run (scripts/bench.sh)
#   make fuzz-passes hlo-fuzz on every pass and mode at 1, 2, 4, 8 ranks (scripts/fuzz_passes.sh)
#   make fuzz-coverage hlo-fuzz's reach into src/passes/, by gcov (scripts/fuzz_coverage.sh)
#   make fuzz-guided hlo-fuzz with coverage feedback against without (scripts/fuzz_guided.sh)
#   make fuzz       libFuzzer on the parser, the pipeline and .npy reading (scripts/libfuzz.sh)
#   make precision  the #102 precision sweep, drawn with gnuplot (scripts/precision-sweep.sh)
#   make xla-test   set up XLA:CPU (jax/jaxlib from PyPI, build/xla-venv), then the XLA cases of make test
#   make xla-diff   every module hlo-run runs, against XLA:CPU on the same inputs (scripts/xla_diff.sh)
#   make zoo        JAX programs partitioned by XLA for 2, 4, 8 devices (scripts/zoo/zoo.py)
#   make zoo-check  the zoo through hlo-run against XLA and through the passes (scripts/zoo/zoo_check.py)
#   make clean      remove build/ and build-asan/
#
# Sources are found by wildcard: src/{ir,interp,collectives,passes,check,cli,fuzz}/*.c go
# into $(BUILD)/libhlocheck.a, src/tools/hlo_NAME.c becomes $(BUILD)/hlo-NAME, and
# tests/DIR/test_NAME.c becomes $(BUILD)/tests/DIR_test_NAME (cmocka).

CC       = mpicc
BUILD   ?= build
XLA_VENV ?= $(CURDIR)/build/xla-venv
MODULES  = ir interp collectives passes check cli fuzz

CPPFLAGS = -D_POSIX_C_SOURCE=200809L $(addprefix -Isrc/,$(MODULES))
CFLAGS   = -std=c11 -g -O2 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
           -Wmissing-prototypes -Wswitch-enum -Wvla -Wformat=2 -MMD -MP
# The element-wise kernels' sqrt then vectorises: with errno kept, a loop of
# sqrtf has a branch to the library per element.  Nothing reads errno after
# a math function; no result changes (only exact operations become inline).
CFLAGS  += -fno-math-errno
# The reduce folds' NaN-keeping steps (a != a ? a + a : a + b) compute both
# sides, which gcc does only when no floating-point exception flag is
# watched; none is, anywhere (no fenv.h).
$(BUILD)/obj/src/interp/eval_reduce.o: CFLAGS += -fno-trapping-math
# CI treats warnings as errors; local builds don't have to.
ifneq ($(filter-out false 0,$(CI)),)
CFLAGS  += -Werror
endif
CFLAGS  += $(SANITIZE)
LDFLAGS += $(SANITIZE)
LDLIBS   = -lopenblas -lprotobuf-c -lm
# COVERAGE=1 (make fuzz-coverage, in build-cov/): src/passes/ with gcov
# counters, at -O0 so that its branches are the source's; the rest as usual.
ifneq ($(COVERAGE),)
$(BUILD)/obj/src/passes/%.o: CFLAGS += --coverage -O0
CPPFLAGS += -DHLOCHECK_COVERAGE
LDFLAGS  += --coverage
endif
# GUIDED=1 (make fuzz-guided, in build-guided/): every basic block of
# src/passes/ calls the hook hlo-fuzz --guided reads (src/fuzz/guided.c).
ifneq ($(GUIDED),)
$(BUILD)/obj/src/passes/%.o: CFLAGS += -fsanitize-coverage=trace-pc
CPPFLAGS += -DHLOCHECK_GUIDED
endif
TEST_LDLIBS = -lcmocka

LIB_SRCS  = $(foreach m,$(MODULES),$(wildcard src/$(m)/*.c))
LIB       = $(BUILD)/libhlocheck.a
TOOL_SRCS = $(wildcard src/tools/hlo_*.c)
TOOLS     = $(patsubst src/tools/hlo_%.c,$(BUILD)/hlo-%,$(TOOL_SRCS))
TEST_SRCS = $(sort $(shell find tests -name 'test_*.c' 2>/dev/null))
test_bin  = $(BUILD)/tests/$(subst /,_,$(patsubst tests/%.c,%,$(1)))
TEST_BINS = $(foreach t,$(TEST_SRCS),$(call test_bin,$(t)))
obj       = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
ALL_OBJS  = $(call obj,$(LIB_SRCS) $(TOOL_SRCS) $(TEST_SRCS))

ASAN_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
DEMO_HLO   = corpus/demo/transformer_step_4dev.hlo

.PHONY: all unit-tests test demo zoo zoo-check asan asan-subset bench clean validate fuzz-passes fuzz-coverage fuzz-guided fuzz precision xla-test xla-diff \
        xla-cases sections layers
.DEFAULT_GOAL := all

all: $(LIB) $(TOOLS)

unit-tests: $(TEST_BINS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# src/ir/hlo.proto becomes C with protoc-c (protobuf-c-compiler) in
# $(BUILD)/gen; only src/ir/proto.c (reading) and src/ir/proto_write.c
# (writing) include it.  The generated file is
# protoc-c's, so it is built without the project's warnings.
PROTO_C = $(BUILD)/gen/hlo.pb-c.c
PROTO_O = $(BUILD)/obj/gen/hlo.pb-c.o
$(PROTO_C): src/ir/hlo.proto
	@mkdir -p $(@D)
	protoc-c --c_out=$(@D) -Isrc/ir src/ir/hlo.proto
$(BUILD)/gen/hlo.pb-c.h: $(PROTO_C)
$(PROTO_O): $(PROTO_C)
	@mkdir -p $(@D)
	$(CC) -std=c11 -g -O2 -w $(SANITIZE) -I$(BUILD)/gen -c -o $@ $<
$(call obj,src/ir/proto.c): $(BUILD)/gen/hlo.pb-c.h
$(call obj,src/ir/proto.c): CPPFLAGS += -I$(BUILD)/gen
$(call obj,src/ir/proto_write.c): $(BUILD)/gen/hlo.pb-c.h
$(call obj,src/ir/proto_write.c): CPPFLAGS += -I$(BUILD)/gen

$(LIB): $(call obj,$(LIB_SRCS)) $(PROTO_O)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(TOOLS): $(BUILD)/hlo-%: $(BUILD)/obj/src/tools/hlo_%.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# One link rule per test: tests/ir/test_parse.c -> $(BUILD)/tests/ir_test_parse.
define test_link
$(call test_bin,$(1)): $(call obj,$(1)) $(LIB)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS) -o $$@ $$< $(LIB) $(TEST_LDLIBS) $(LDLIBS)
endef
$(foreach t,$(TEST_SRCS),$(eval $(call test_link,$(t))))

# Every check runs even when an earlier one fails; the status is nonzero if
# any failed.  Each script appends "passed failed [NOTE]" to the tally file,
# which gives the closing total and, after it, each NOTE (a part skipped and
# why: the XLA cases when PyPI could not be reached to set them up).
test:
	@scripts/install-deps.sh
	@scripts/install-deps.sh xla || true
	@$(MAKE) --no-print-directory -j$$(nproc) all unit-tests
	@tally=$(CURDIR)/$(BUILD)/tally.txt; : >$$tally; st=0; \
	times=$(CURDIR)/$(BUILD)/step-times.txt; : >$$times; step="scripts/step_time.sh $$times"; \
	TALLY=$$tally $$step scripts/run_unit.sh $(BUILD)/tests || st=1; \
	TALLY=$$tally $$step scripts/check_sections.py src || st=1; \
	TALLY=$$tally $$step scripts/check_layers.py src || st=1; \
	TALLY=$$tally $$step scripts/roundtrip.sh $(BUILD)/hlo-opt || st=1; \
	TALLY=$$tally $$step scripts/run_golden.sh $(BUILD)/hlo-opt || st=1; \
	TALLY=$$tally $$step scripts/test_proto.sh $(BUILD) || st=1; \
	TALLY=$$tally $$step scripts/test_hlo_run.sh $(BUILD)/hlo-run || st=1; \
	TALLY=$$tally $$step scripts/test_hostile.sh $(BUILD) || st=1; \
	TALLY=$$tally $$step scripts/run_interp_corpus.sh $(BUILD)/hlo-run || st=1; \
	TALLY=$$tally $$step scripts/test_threads.sh $(BUILD) || st=1; \
	TALLY=$$tally $$step scripts/test_nodes.sh --quick $(BUILD) || st=1; \
	TALLY=$$tally $$step scripts/run_peer_e2e.sh $(BUILD)/hlo-run || st=1; \
	TALLY=$$tally $$step scripts/run_real_dumps.sh $(BUILD) || st=1; \
	TALLY=$$tally $$step scripts/validate.sh --prove $(BUILD) || st=1; \
	TALLY=$$tally $$step scripts/test_hlo_check.sh $(BUILD) || st=1; \
	TALLY=$$tally $$step scripts/test_graph.sh --quick $(BUILD) || st=1; \
	TALLY=$$tally $$step scripts/test_prove.sh $(BUILD) || st=1; \
	TALLY=$$tally $$step scripts/test_validate.sh $(BUILD) || st=1; \
	TALLY=$$tally $$step scripts/test_hlo_fuzz.sh $(BUILD) || st=1; \
	TALLY=$$tally $$step $(MAKE) --no-print-directory xla-cases || st=1; \
	if [ -z "$(SANITIZE)" ]; then TALLY=$$tally $$step $(MAKE) --no-print-directory asan-subset || st=1; fi; \
	echo "time per step (the longest first):"; sort -rn $$times | sed 's/^/  /'; \
	awk '{ p += $$1; f += $$2 } NF > 2 { $$1 = $$2 = ""; notes = notes "\n" substr($$0, 3) } \
	     END { printf "total: %d passed, %d failed%s\n", p, f, notes }' $$tally; \
	exit $$st

# The XLA cases of make test (about 4 minutes on 2 cores): hlo-run against
# XLA:CPU on the interpreter corpus, the pass corpus before and after the
# default pipeline (one device count each), the demo, XLA's own test
# modules and a few hlo-fuzz modules; every module read by XLA's parser and
# by hlocheck, the same instruction by instruction; a fixed slice of the
# generated single ops (60 modules of 8) and collectives (18 at 2, 4 and 8
# devices).  Without the XLA environment each says so in the tally and
# skips.
XLA_QUICK = --quick --quiet --sets interp,passes,demo,peer,fuzz --fuzz-count 12
XLA_OPS = --seed 7 --count 60 --devices 1 --out $(BUILD)/gen-ops-1
XLA_COLLECTIVES = --seed 7 --count 18 --devices 2,4,8 --out $(BUILD)/gen-ops-n
ZOO_QUICK = --generate --quiet --zoo $(BUILD)/zoo-quick --programs $(ZOO_QUICK_PROGRAMS) --sizes small --devices 2,4
ZOO_QUICK_PROGRAMS = mlp_fsdp,transformer_tp
xla-cases: all
	@st=0; scripts/xla_diff.sh --tally-name xla-diff $(XLA_QUICK) --build $(BUILD) || st=1; \
	scripts/xla_diff.sh --tally-name xla-syntax --syntax --quiet --build $(BUILD) || st=1; \
	scripts/xla_diff.sh --tally-name gen-ops --ops $(XLA_OPS) --build $(BUILD) || st=1; \
	scripts/xla_diff.sh --tally-name gen-collectives --ops $(XLA_COLLECTIVES) --build $(BUILD) || st=1; \
	scripts/xla_diff.sh --tally-name zoo --zoo $(ZOO_QUICK) --build $(BUILD) || st=1; \
	scripts/xla_diff.sh --tally-name snapshots --snapshots --every 16 --build $(BUILD) || st=1; exit $$st

# Set-up first (fails with one line when PyPI cannot be reached), then the
# XLA cases of make test.
xla-test:
	@scripts/install-deps.sh
	@scripts/install-deps.sh xla
	@$(MAKE) --no-print-directory all
	@st=0; scripts/xla_diff.sh $(XLA_QUICK) --build $(BUILD) || st=1; \
	scripts/xla_diff.sh --syntax --quiet --build $(BUILD) || st=1; \
	scripts/xla_diff.sh --ops $(XLA_OPS) --build $(BUILD) || st=1; \
	scripts/xla_diff.sh --ops $(XLA_COLLECTIVES) --build $(BUILD) || st=1; \
	scripts/xla_diff.sh --zoo $(ZOO_QUICK) --build $(BUILD) || st=1; \
	scripts/xla_diff.sh --snapshots --every 16 --build $(BUILD) || st=1; exit $$st

# Every module hlo-run runs, at every device count its corpus lists (up to
# 8), against XLA:CPU: tens of minutes.  scripts/xla_diff.sh --help lists
# the flags (XLA_DIFF_FLAGS passes more, e.g. --json FILE).
xla-diff: all
	@scripts/install-deps.sh xla
	@scripts/xla_diff.sh --build $(BUILD) $(XLA_DIFF_FLAGS)

# The zoo (scripts/zoo/): JAX programs partitioned by XLA's SPMD partitioner
# for 2, 4 and 8 devices at two sizes, written to $(BUILD)/zoo/ with the
# arguments XLA ran on and its results; zoo-check runs hlo-run on both
# dumps against XLA's results and hlo-check --passes=default --prove in both
# pass modes, and writes the table $(BUILD)/zoo/table.md.  ZOO_FLAGS narrows
# them (e.g. --programs mlp_dp --devices 2).
zoo:
	@scripts/install-deps.sh xla
	@$(XLA_VENV)/bin/python scripts/zoo/zoo.py --out $(BUILD)/zoo $(ZOO_FLAGS)

zoo-check: all
	@scripts/install-deps.sh xla
	@scripts/xla_diff.sh --zoo --zoo $(BUILD)/zoo --table $(BUILD)/zoo/table.md --json $(BUILD)/zoo/table.json \
	  --build $(BUILD) $(ZOO_FLAGS)

# The main job: hlo-check under mpirun -np 4 on the transformer training step,
# rewritten by the default pipeline (flips, then combiners); it prints the
# report, including the accumulation change of flip-reduce-convert-add.
demo:
	@scripts/install-deps.sh
	@$(MAKE) --no-print-directory all
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 4 \
	  $(BUILD)/hlo-check --passes=default $(DEMO_HLO)

# The validation suite: hlo-check --passes=default --prove over corpus/ at 1,
# 2, 4 and 8 ranks against each module's expectation, validate.sh and
# ci-gate.sh on a directory of one's own modules, hlo-check's own cases
# (--per-pass --shrink on every unsound corpus case among them; all three
# also part of test), then every real dump run and checked, the MaxText steps
# with --local (tens of minutes: not part of test), and every case across
# hosts of our own (test_nodes.sh; its --quick part is in test).
validate: all unit-tests
	scripts/validate.sh --prove $(BUILD)
	scripts/proto_validate.sh --prove $(BUILD)
	scripts/test_validate.sh $(BUILD)
	scripts/test_hlo_check.sh $(BUILD)
	scripts/test_graph.sh $(BUILD)
	scripts/run_real_dumps.sh --local $(BUILD)
	scripts/test_nodes.sh $(BUILD)
	$(MAKE) --no-print-directory zoo zoo-check

# Open MPI keeps memory at exit that LeakSanitizer cannot attribute (its
# plugins are unloaded by then), so the tools, which all start MPI, run with
# leak checking off; the unit tests that never start MPI keep it on
# (scripts/run_unit.sh).
asan:
	@ASAN_OPTIONS=detect_leaks=0 $(MAKE) --no-print-directory test BUILD=build-asan SANITIZE="$(ASAN_FLAGS)"

# The part of make asan that make test (and so CI) runs too, about 3 minutes
# on 2 cores: every cmocka test (leak checking on where no MPI runs), the
# hlo-fuzz slice (10 modules per pass and rank count instead of 30) with its
# planted bugs, and the proto reader's cases, built with ASan and UBSan.
asan-subset:
	@$(MAKE) --no-print-directory -j$$(nproc) all unit-tests BUILD=build-asan SANITIZE="$(ASAN_FLAGS)"
	@st=0; UNIT_ONE_VARIANT=1 scripts/run_unit.sh build-asan/tests || st=1; \
	ASAN_OPTIONS=detect_leaks=0 HLO_FUZZ_SLICE=10 scripts/test_hlo_fuzz.sh build-asan || st=1; \
	ASAN_OPTIONS=detect_leaks=0 PROTO_QUICK=1 scripts/test_proto.sh build-asan || st=1; exit $$st

# Benchmarks: each speed as a ratio to a limit measured in the same run
# (memcpy, raw OpenBLAS, raw MPI) or a fixed budget; reported, never asserted.
bench:
	@scripts/install-deps.sh
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) scripts/bench.sh

# The #102 precision study: the transformer step at 2, 4, 8 and 16 ranks for
# three input distributions, bf16 against f32 accumulation, drawn by gnuplot
# into $(BUILD)/precision/precision.{svg,png} (scripts/precision-sweep.sh).
precision:
	@scripts/install-deps.sh gnuplot-nox
	@$(MAKE) --no-print-directory all
	@scripts/precision-sweep.sh $(BUILD)

# Generated modules against every pass, FUZZ_SECONDS (15) per pass and rank
# count: about 9 minutes; make test runs a fixed-seed slice of it.
# Every prototype a header lists under a section naming a file is defined
# in that file (scripts/check_sections.py; in make test too).
sections:
	@scripts/check_sections.py src

# The modules include each other one way only (scripts/check_layers.py; in
# make test too): tools -> check, fuzz, cli -> collectives -> interp,
# passes -> ir.
layers:
	@scripts/check_layers.py src

fuzz-passes: all
	@scripts/fuzz_passes.sh $(BUILD)

# hlo-fuzz on every pass, both modes, 1/2/4/8 ranks, FUZZ_SECONDS (10) each,
# with src/passes/ counted by gcov: line and branch coverage per file and
# function, and every branch never taken (gcovr; build-cov/coverage/).
fuzz-coverage:
	@scripts/install-deps.sh gcovr
	@scripts/fuzz_coverage.sh

# hlo-fuzz with and without --guided on every pass, both modes, 4 ranks,
# FUZZ_SECONDS (30) each, in build-guided/ (GUIDED=1): the blocks of the
# passes each reaches (scripts/fuzz_guided.sh).
fuzz-guided:
	@scripts/fuzz_guided.sh

# libFuzzer (clang) on parse + verify + print, parse + the default pipeline,
# and .npy reading, FUZZ_TIME (60) seconds each, the corpus as seeds.
fuzz:
	@scripts/install-deps.sh clang libclang-rt-dev
	@scripts/libfuzz.sh

clean:
	rm -rf build build-asan build-fuzz build-cov build-guided

-include $(ALL_OBJS:.o=.d)
