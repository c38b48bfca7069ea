# collio — build, test, run.
#   make run    the main job: the collperf benchmark on a temporary directory
#   make test   every test tier (unit, MPI at 4 and 3 ranks)

GO      ?= go
NP      ?= 4
BIN     := $(CURDIR)/bin
MPIEXEC := $(CURDIR)/scripts/mpiexec.sh
# Packages whose tests run under mpirun (their TestMain is mpitest.Main).
MPI_PKGS := . ./internal/mpi ./internal/mpitest ./gompiadapt

# mpirun refuses root and more ranks than cores without these.
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

.PHONY: all deps build test test-unit test-mpi run fmt vet clean

all: build

deps:
	@scripts/ensure-deps.sh

build: deps
	$(GO) build ./...
	$(GO) build -o $(BIN)/ ./cmd/...

vet: deps
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet ./...

# Tier 1: everything in one process (MPI packages run as 1-rank singletons).
test-unit: deps
	$(GO) test -count=1 -timeout 10m ./...

# Tier 2: the MPI packages under mpirun, at 4 ranks and at 3 (to catch
# even-split assumptions). -p 1: one mpirun job at a time on small machines.
test-mpi: deps
	MPI_NP=4 $(GO) test -count=1 -p 1 -timeout 5m -exec $(MPIEXEC) $(MPI_PKGS)
	MPI_NP=3 $(GO) test -count=1 -p 1 -timeout 5m -exec $(MPIEXEC) $(MPI_PKGS)

test: vet test-unit test-mpi

run: build
	@dir=$$(mktemp -d); echo "collperf in $$dir on $(NP) ranks"; \
	MPI_NP=$(NP) $(MPIEXEC) $(BIN)/collperf -dir $$dir; rc=$$?; rm -rf $$dir; exit $$rc

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf $(BIN)
