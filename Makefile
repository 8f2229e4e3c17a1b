# TurboSpark Vision Inspector. `make run` opens the app on the embedded demo; `make test`
# runs every test (the smoke test starts the real window under Xvfb).
GO      ?= go
BIN     := bin/inspector

.PHONY: build run demo-cli test test-standin test-arm64 bench fuzz vet fmt clean bin/static/inspector

build:
	$(GO) build -o $(BIN) ./app

# The inspector without its window, as one static binary (no cgo): for a headless Linux server,
# or a Linux machine with no Go to carry it to (scripts/bench.sh says how). `make test` builds it
# too on Linux. Not on macOS: the Metal backend there goes through darwinkit, which needs cgo.
bin/static/inspector:
	CGO_ENABLED=0 $(GO) build -tags nogui -o $@ ./app

run: build
	./$(BIN)

demo-cli: build
	./$(BIN) run --checkpoint assets/demo --image assets/sample.png

# make test runs, in this order (on 2 cores, warm: about 9 minutes, measured phase by phase
# with the machine lightly shared: 0.3 + 5.3 + 0.7 + 2.9; it says which part runs):
#   vet           gofmt, go vet of every package, and of app/ and selftest/ with the tests' hooks;
#   static build  (Linux) the headless binary without cgo (bin/static/inspector) still builds;
#   native        every package natively with the tests' hooks (-tags inspectortest): every
#                 test there is, about 5 minutes. The longest packages are named first
#                 (NATIVE_FIRST: go test starts them in the order named), so metal/, which
#                 alone takes 3-3.5 minutes, runs beside the others instead of after them;
#   test-standin  (Linux) the tests a Mac's GPU changes, again with the stand-in GPU;
#   test-arm64    (linux/amd64) the packages whose arithmetic is pinned, as arm64 under qemu.
# On a Mac the native pass is all of it (Metal is the real GPU there, and the code arm64).
NATIVE_FIRST = ./metal/ ./app/ ./selftest/ ./ui/
test: vet
	@if [ "$$(uname -s)" = Linux ]; then echo "CGO_ENABLED=0 $(GO) build -tags nogui ./app"; \
	  CGO_ENABLED=0 $(GO) build -tags nogui -o /dev/null ./app; fi
	@echo "make test: every package, natively, with the tests' hooks (about 5 minutes on 2 cores, warm)"
	@# -timeout: metal/ alone takes 3-3.5 minutes on 2 idle cores and about 9 with both busy
	@# (go test's default of 10 minutes a package was reached under load).
	$(GO) test -count=1 -timeout 25m -tags inspectortest $(NATIVE_FIRST) ./...
	@if [ "$$(uname -s)" = Linux ]; then $(MAKE) --no-print-directory test-standin; fi
	@if [ "$$(uname -s)/$$(uname -m)" = Linux/x86_64 ]; then $(MAKE) --no-print-directory test-arm64; fi

# The tests' hooks (a stand-in GPU, injected faults in the Metal children: selftest/testhooks.go)
# are in a build with the tag inspectortest only; the release binary (make build, make run) has
# none.
#
# test-standin: again with the tests' stand-in GPU (the CPU engine plays Metal), so the paths a
# Mac takes run here: Metal as the default backend (auto, the window's backends), the start-up
# probe child and selftest's Metal section started from the test binary (app/main_test.go's and
# selftest/helpers_test.go's TestMain answer as the program). Only the tests that take such a
# path from the environment they inherit run again (-standin-only): app/standin_test.go and
# selftest/standin_test.go list every test of their package as GPU-path or GPU-free, and a
# test checks that each one is in exactly one list; the GPU-free ones give their children their
# own INSPECTOR_TEST_GPU or name the CPU, and the native pass holds them. On a Mac the native
# pass takes these paths with the real GPU. Under a minute on 2 cores.
STANDIN_PKGS = ./app/ ./selftest/
test-standin:
	@echo "make test: the GPU-path tests of $(STANDIN_PKGS) with the stand-in GPU (INSPECTOR_TEST_GPU=cpu-standin), the paths a Mac takes"
	INSPECTOR_TEST_GPU=cpu-standin $(GO) test -count=1 -tags inspectortest $(STANDIN_PKGS) -args -standin-only

# test-arm64: the packages whose arithmetic is pinned (engine/... and internal/...: every
# kernel, probe, preprocessing step and the residency) as linux/arm64 binaries under qemu-user
# with Apple silicon's 16 KiB pages (TS_EXPECT_PAGESIZE makes engine's TestResidencyPageSize
# fail if they did not get them), i.e. a Mac's code generation (Go on arm64 fuses a*b+c into
# one rounding; amd64's default GOAMD64=v1 never does) and page size. `make test` runs it on
# linux/amd64; on a Mac or linux/arm64 the tests are arm64 code already. First the arm64
# assembly of the same packages must hold no fused float32 multiply-add (FMADDS and kin) and
# engine/imageproc none at all (Pillow rounds every product): write the product as
# float32(a*b) or float64(a*b), see engine/internal/kernel/kernel.go. The other packages pin
# no arithmetic of their own: app/ (its GL window needs cgo, which a CGO_ENABLED=0 arm64 build
# cannot have), ui/ (drawing; the numbers it shows come from engine/probe), metal/ and shaders/
# (the kernels' harness runs the host's g++ and clang-19 whatever GOARCH is, and their
# reference is the CPU engine, tested here; metal's libffi call layer runs as arm64 under qemu
# from the native pass). Of metal/, the tests of binding weights in place, which depend on the
# page size, run here too (METAL_PAGE_TESTS). Of the pinned packages, the tests that pin neither
# arithmetic nor the page size are left to the native pass (ARM64_SKIP, run there on the same
# Go code): a check's own power — a broken or stray op caught by the conformance table (whose
# cases on the CPU backend run here in engine/cpu's TestOpParity), a broken demo head caught by
# its check (the demo's outputs run here) — and how soon a cancel lands or a pause is left out
# of the times (waits, not values); they were 40% of this pass. Emulated code runs ~10x slower:
# TS_EMULATED widens the tests' waits, and the package timeout is 30 minutes, not go test's 10.
# About 3 minutes on 2 cores.
QEMU_ARM64 ?= qemu-aarch64-static
ARM64_PKGS = ./engine/... ./internal/...
ARM64_SKIP = ^(TestBrokenOpsFail|TestStrayWritesAndNonFiniteOutputsFail|TestDemoMutations|TestCancelInsideABlock|TestCancelWhileThePatchSourceRuns|TestPausesAreNotTimed|TestRolloutTableCancel)$$
METAL_PAGE_TESTS = ^(TestWeightPlacement|TestRefilledSlotIsRead)$$
ARM64_TEST = TS_EXPECT_PAGESIZE=16384 TS_EMULATED=1 GOARCH=arm64 CGO_ENABLED=0 $(GO) test -count=1 -timeout 30m -exec '$(QEMU_ARM64) -p 16384'

test-arm64:
	@command -v $(QEMU_ARM64) >/dev/null 2>&1 || { \
	  echo "test-arm64: $(QEMU_ARM64) not found; install Debian's qemu-user-static (apt-get install qemu-user-static)" >&2; exit 1; }
	@echo "make test: the fused multiply-add scan of the arm64 build, then $(ARM64_PKGS) as linux/arm64 under qemu (about 3 minutes on 2 cores)"
	@asm=$$(mktemp); \
	  if ! GOARCH=arm64 CGO_ENABLED=0 $(GO) build -gcflags="$$($(GO) list -m)/...=-S" $(ARM64_PKGS) 2>$$asm; then \
	    rm -f $$asm; GOARCH=arm64 CGO_ENABLED=0 $(GO) build $(ARM64_PKGS); exit 1; fi; \
	  fused=$$(grep -E '\bFN?M(ADD|SUB)S\b|/engine/imageproc/[^ ]*\.go:[0-9]+\)[[:space:]]+FN?M(ADD|SUB)D\b' $$asm); rm -f $$asm; \
	  if [ -n "$$fused" ]; then echo "test-arm64: fused multiply-adds where the engine's rounding is pinned:" >&2; \
	    echo "$$fused" >&2; exit 1; fi
	$(ARM64_TEST) -skip '$(ARM64_SKIP)' $(ARM64_PKGS)
	$(ARM64_TEST) -run '$(METAL_PAGE_TESTS)' ./metal

vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags inspectortest ./app ./selftest

# bench: the kernels' benchmarks (GFLOP/s per kernel: generic, AVX2, AVX-512), then the tower
# per block beside PyTorch CPU and OpenBLAS sgemm on the same checkpoint (scripts/bench.sh).
bench: build
	$(GO) test -run '^$$' -bench . -benchtime 3x ./engine/...
	scripts/bench.sh

# Bad input never panics: fuzz the parsers a while (their seeds run in `make test`).
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParse$$ -fuzztime 30s ./engine/safetensors
	$(GO) test -run '^$$' -fuzz FuzzParseConfig -fuzztime 30s ./engine
	$(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime 30s ./engine/imageproc
	$(GO) test -run '^$$' -fuzz FuzzPagePlan -fuzztime 30s ./engine/imageproc

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin out
