# idebridge: build, lint and test. `make test` is everything CI checks.

GO            ?= go
GOPLS_VERSION := v0.23.0
STATICCHECK_VERSION := v0.8.2
GOBIN         := $(shell $(GO) env GOPATH)/bin
STATICCHECK   := $(GOBIN)/staticcheck
GOPLS         := $(GOBIN)/gopls
FUZZTIME      ?= 10s

export PATH := $(GOBIN):$(PATH)

.PHONY: all build run test lint fmt-check vet staticcheck unit fuzz fuzz-seeds tools gopls bench clean

all: build

build:
	$(GO) build ./...

## run: the main job (see README)
run:
	$(GO) run ./cmd/idebridge ide list

## tools: install the pinned tools the tests need, when missing or of another version
tools: $(STATICCHECK) gopls

$(STATICCHECK):
	$(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

gopls:
	@if ! $(GOPLS) version 2>/dev/null | grep -q "golang.org/x/tools/gopls $(GOPLS_VERSION)"; then \
		echo "installing gopls $(GOPLS_VERSION)"; \
		$(GO) install golang.org/x/tools/gopls@$(GOPLS_VERSION); \
	fi

## test: everything CI checks
test: tools lint unit fuzz

lint: fmt-check vet staticcheck

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

staticcheck: $(STATICCHECK)
	$(STATICCHECK) ./...

unit:
	GOPLS=$(GOPLS) $(GO) test -race -count=1 ./...

## fuzz: a short run of every fuzz target in ./fuzz (seeds also replay in `unit`)
fuzz:
	@set -e; for t in $$($(GO) test -list '^Fuzz' ./fuzz | grep '^Fuzz'); do \
		echo "fuzz $$t ($(FUZZTIME))"; \
		$(GO) test ./fuzz -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME); \
	done

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf build
