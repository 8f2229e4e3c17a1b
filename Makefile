# TurboSpark Vision Inspector. `make run` opens the app (until the window lands: runs the CLI
# on a generated tiny checkpoint and the sample image); `make test` runs every test.
GO      ?= go
BIN     := bin/inspector
DEMO    := out/demo-tiny

.PHONY: build run test bench vet fmt clean

build:
	$(GO) build -o $(BIN) ./app

run: build
	@test -f $(DEMO)/config.json || ./$(BIN) gen --preset tiny --dtype f32 --out $(DEMO)
	./$(BIN) run --checkpoint $(DEMO) --image assets/sample.png

test: vet
	$(GO) test -count=1 ./...

vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...

bench:
	$(GO) test -run '^$$' -bench . -benchtime 3x ./engine/...

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin out
