# collio — build, test, run.
#   make run    the main job: the collperf benchmark on a temporary directory
#   make test   every test tier (unit, MPI at 4 and 3 ranks, C, the emulated cluster)
#   make fuzz   every fuzz target for FUZZTIME (default 10s) each
#   make bench  collio vs the host MPI-IO variants on tmpfs and disk: results/bench.md, then make cbench,
#               make ioserverbench and make simbench (QUICK=1: small)
#   make simbench  the scale model's placement table (collio sim): results/sim-placement.md
#   make cbench the same C programs on the host MPI-IO and with libcollio preloaded: results/cbench.md
#               (IOR=/path/to/ior adds IOR; knobs: scripts/cbench.sh -h)

GO      ?= go
NP      ?= 4
BIN     := $(CURDIR)/bin
MPIEXEC := $(CURDIR)/scripts/mpiexec.sh
# Packages whose tests run under mpirun (their TestMain is mpirunner.Main).
MPI_PKGS := ./e2e ./internal/mpi ./internal/mpirunner ./gompiadapt ./examples/quickstart
# Modules of their own inside the tree, so that the library's go.mod does
# not carry their dependencies: the benchmark report's plotting library.
SUBMODS := cmd/benchreport

# mpirun refuses root and more ranks than cores without these.
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

.PHONY: all deps build test test-unit test-nocgo test-mpi run fmt vet clean

all: build

deps:
	@scripts/ensure-deps.sh

build: deps
	$(GO) build ./...
	$(GO) build -o $(BIN)/ ./cmd/...
	@for m in $(SUBMODS); do (cd $$m && $(GO) build -o $(BIN)/ .) || exit 1; done

vet: deps
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet ./...
	CGO_ENABLED=0 $(GO) vet ./...
	@for m in $(SUBMODS); do echo "(cd $$m && $(GO) vet ./...)"; (cd $$m && $(GO) vet ./...) || exit 1; done

# Tier 1: everything in one process (MPI packages run as 1-rank singletons).
test-unit: deps
	$(GO) test -count=1 -timeout 10m ./...
	@for m in $(SUBMODS); do echo "(cd $$m && $(GO) test ./...)"; (cd $$m && $(GO) test -count=1 -timeout 10m ./...) || exit 1; done

# Tier 1 again without cgo: no MPI, and ufs moves runs one call at a time
# instead of in batched C calls; what only builds or behaves right with cgo
# shows here (go vet without cgo only checks that it compiles).
test-nocgo: deps
	CGO_ENABLED=0 $(GO) test -count=1 -timeout 10m ./...

# Tier 2: the MPI packages under mpirun, at 4 ranks and at 3 (to catch
# even-split assumptions). -p 1: one mpirun job at a time on small machines.
test-mpi: deps
	MPI_NP=4 $(GO) test -count=1 -p 1 -timeout 5m -exec $(MPIEXEC) $(MPI_PKGS)
	MPI_NP=3 $(GO) test -count=1 -p 1 -timeout 5m -exec $(MPIEXEC) $(MPI_PKGS)

test: vet test-unit test-nocgo test-mpi

# The long soak test (docs/testing.md): 10,000 collective calls on the
# in-memory communicator with random views, strategies, hints and faults
# (`make test` runs 300). SOAK_CALLS and SOAK_SEED override.
.PHONY: soak
SOAK_CALLS ?= 10000
SOAK_SEED  ?= 1
soak: deps
	COLLIO_SOAK_CALLS=$(SOAK_CALLS) COLLIO_SOAK_SEED=$(SOAK_SEED) $(GO) test -count=1 -timeout 60m -run TestSoak -v ./internal/soak/

# Fuzzing (docs/testing.md): every parser of outside input, each fuzz target
# for FUZZTIME, one after another; a failure is reported at the end and its
# input is left in the package's testdata/fuzz/<FuzzName>/. Not part of
# `make test`: the seed corpora (testdata/fuzz) already run in go test ./... .
#   make fuzz FUZZTIME=10m
FUZZTIME ?= 10s
# package:FuzzName, one per target.
FUZZ_TARGETS := \
	./cache:FuzzParseJournal \
	./layout:FuzzConstructors \
	./layout:FuzzTypeMatchesReference \
	./internal/mpi:FuzzBuildFromContents \
	./hints:FuzzResolve \
	./hints:FuzzParseHintsFile \
	./hints:FuzzDecodeStrings \
	./hints:FuzzCheckSameWire \
	./driver/faulty:FuzzParseRules \
	./driver/faulty:FuzzParseRanks \
	./cmd/libcollio:FuzzDecodeConfig \
	./internal/envvar:FuzzInt \
	./driver/lustre:FuzzDecodeLayout \
	./driver/beegfs:FuzzDecodeStripeInfo \
	./driver/sim:FuzzDecodeParams \
	./internal/coll:FuzzDecodeRequests \
	./internal/coll:FuzzDecodeList \
	./internal/agree:FuzzDecodeErrorRecord
.PHONY: fuzz
fuzz: deps
	@failed=; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "== $$name ($$pkg, $(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg || failed="$$failed $$pkg:$$name"; \
	done; \
	if [ -n "$$failed" ]; then echo "make fuzz: failed:$$failed"; exit 1; fi; \
	echo "make fuzz: all $(words $(FUZZ_TARGETS)) targets ran $(FUZZTIME) each without a failure"

# Tier 3: tests on a real parallel file system, skipped by the other tiers.
#   make test-lustre COLLIO_LUSTRE_DIR=/lustre/scratch/$USER
#   make test-beegfs COLLIO_BEEGFS_DIR=/mnt/beegfs/$USER
.PHONY: test-lustre test-beegfs
test-lustre: deps
	@test -n "$(COLLIO_LUSTRE_DIR)" || { echo "set COLLIO_LUSTRE_DIR to a directory on a Lustre mount"; exit 2; }
	COLLIO_LUSTRE_DIR=$(COLLIO_LUSTRE_DIR) $(GO) test -count=1 -v -timeout 10m ./driver/lustre/

test-beegfs: deps
	@test -n "$(COLLIO_BEEGFS_DIR)" || { echo "set COLLIO_BEEGFS_DIR to a directory on a BeeGFS mount"; exit 2; }
	COLLIO_BEEGFS_DIR=$(COLLIO_BEEGFS_DIR) $(GO) test -count=1 -v -timeout 10m ./driver/beegfs/

# The main job: collio's bandwidth and time breakdown on the Go collperf, then
# the same kind of workload as a C program (bench/c/collperf.c) run plain on
# the host MPI-IO (OMPIO individual, romio321) and with libcollio preloaded,
# where users meet the host (the host's MPI-IO inside a Go process is slower);
# three alternating rounds of 64 calls: a single launch's read phase of a few
# milliseconds moved its ratio by a third.
run: build lib
	@dir=$$(mktemp -d); echo "collperf (Go) in $$dir on $(NP) ranks"; \
	MPI_NP=$(NP) $(MPIEXEC) $(BIN)/collperf -impl collio -dir $$dir && \
	{ echo; echo "the same from C, plain on the host MPI-IO and with libcollio preloaded (bench/c/collperf.c, scripts/cbench.sh):"; \
	  PROGRAMS=collperf SIZES=4m NP=$(NP) DIRS=$$dir ROUNDS=3 DATA=256m VARIANTS="individual romio321 collio" RESULTS=$$dir/results \
	    scripts/cbench.sh 2>&1 | grep '\] r[0-9] ' && sed -n '/^| program/,/^$$/p' $$dir/results/cbench.md; }; \
	rc=$$?; rm -rf $$dir; exit $$rc

# collperf under mpirun for collio and each host MPI-IO component, on /dev/shm and a disk directory,
# then results/bench.md and results/bench.json (settings: see the top of scripts/bench.sh); then cbench.
# cbench: C programs (bench/c, and IOR when IOR=/path/to/ior is set) run plain on the host MPI-IO and
# with bin/libcollio.so preloaded, in alternating launches: results/cbench.md and results/cbench.tsv
# (docs/benchmarks.md). NP is passed to cbench only when set on the command line or in the environment
# (its default is np 2 and 4).
.PHONY: bench cbench e10bench simbench ioserverbench
bench: build lib
	NP=$(NP) scripts/bench.sh
	scripts/cbench.sh
	NP=$(NP) scripts/ioserverbench.sh
	$(MAKE) --no-print-directory simbench

# The scale model (docs/placement.md): bytes crossing nodes and modelled
# two-phase exchange time under byslot, bynode and SetMatch, from the
# application matrix, and SetMatch's own time: results/sim-placement.md.
# SIM_RANKS=1024,4096,16384 gives the table of docs/placement.md (about 10 s).
SIM_RANKS ?= 1024
simbench: build
	@mkdir -p results
	$(BIN)/collio sim -source matrix -strategies twophase -ranks $(SIM_RANKS) -cores-per-node 64 -md results/sim-placement.md >/dev/null
	@echo "results/sim-placement.md"

cbench: lib
	scripts/cbench.sh

# The E10 cache: perceived write bandwidth with and without the cache, and
# the paper's model, over compute times (results/e10/e10.md; about a minute).
e10bench: build
	NP=$(NP) scripts/e10bench.sh

# Dedicated I/O server ranks: the time a checkpointing application waits
# with one server rank, with two-phase and with the E10 cache, and the
# Compactor's counts on rewrites (results/ioserver/ioserver.md; about half a minute).
ioserverbench: build
	NP=$(NP) scripts/ioserverbench.sh

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf $(BIN)

# The C shared library (cmd/libcollio): collio's C API and a drop-in
# replacement of the host MPI's MPI_File_* functions (see docs/c-library.md; how it works: cmd/libcollio/README.md).
#   make lib                          bin/libcollio.so and bin/collio.h
#   make install [PREFIX=/usr/local]  lib/libcollio.so, include/collio.h, lib/pkgconfig/collio.pc under PREFIX
#   make test-c                       C programs on NP ranks: host MPI-IO vs collio linked and preloaded,
#                                     Fortran programs (mpif.h, use mpi, use mpi_f08) likewise on 4 and 3 ranks,
#                                     and the C benchmarks (bench/c) once each, plain and preloaded, on 2 ranks
PREFIX         ?= /usr/local
COLLIO_VERSION ?= 0.1
LIBCOLLIO_SRC  := $(shell find . -path ./bin -prune -o \( -name '*.go' ! -name '*_test.go' -o -path './cmd/libcollio/*.[ch]' \) -print 2>/dev/null) go.mod go.sum
.PHONY: lib install test-c
lib: deps $(BIN)/libcollio.so $(BIN)/collio.h
$(BIN)/libcollio.so: $(LIBCOLLIO_SRC)
	$(GO) build -buildmode=c-shared -o $@ ./cmd/libcollio
$(BIN)/collio.h: cmd/libcollio/collio.h
	@mkdir -p $(BIN) && cp $< $@
install: lib
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include
	install -m 755 $(BIN)/libcollio.so $(DESTDIR)$(PREFIX)/lib/libcollio.so
	install -m 644 cmd/libcollio/collio.h $(DESTDIR)$(PREFIX)/include/collio.h
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(COLLIO_VERSION)|g' collio.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/collio.pc
test-c: lib
	@dir=$$(mktemp -d); $(MAKE) --no-print-directory install PREFIX=$$dir >/dev/null && \
	NP=$(NP) testdata/c/run.sh $$dir $(BIN)/ctest; rc=$$?; \
	testdata/fortran/run.sh $$dir $(BIN)/ftest || rc=1; rm -rf $$dir; \
	testdata/c/benchsmoke.sh $(BIN)/libcollio.so $(BIN)/ctest || rc=1; exit $$rc
test: test-c

# Tier 4: the emulated cluster (docs/cluster.md): 2 nodes of 2 ranks, files
# on GlusterFS and on a shared directory; skipped, with the reason, where
# root, network namespaces or FUSE are missing.
.PHONY: test-cluster
test-cluster: build lib
	scripts/test-cluster.sh $(BIN)
test: test-cluster
