# TurboSpark Vision Inspector. `make run` opens the app on the embedded demo; `make test`
# runs every test (the smoke test starts the real window under Xvfb).
GO      ?= go
BIN     := bin/inspector

.PHONY: build run demo-cli test bench fuzz vet fmt clean

build:
	$(GO) build -o $(BIN) ./app

run: build
	./$(BIN)

demo-cli: build
	./$(BIN) run --checkpoint assets/demo --image assets/sample.png

test: vet
	$(GO) test -count=1 ./...

vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...

bench:
	$(GO) test -run '^$$' -bench . -benchtime 3x ./engine/...

# Bad input never panics: fuzz the parsers a while (their seeds run in `make test`).
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParse$$ -fuzztime 30s ./engine/safetensors
	$(GO) test -run '^$$' -fuzz FuzzParseConfig -fuzztime 30s ./engine
	$(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime 30s ./engine/imageproc

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin out
