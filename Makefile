# idebridge: build, lint and test. `make test` is everything CI checks.

GO            ?= go
GOPLS_VERSION := v0.23.0
STATICCHECK_VERSION := v0.8.2
GOBIN         := $(shell $(GO) env GOPATH)/bin
STATICCHECK   := $(GOBIN)/staticcheck
GOPLS         := $(GOBIN)/gopls
FUZZTIME      ?= 10s
# Packages holding fuzz targets: every package of this module with a
# `func Fuzz...` in a test file. ./fuzz has those over exported API; a
# target that needs unexported code lives in its own package, and is found
# here without a list to keep up to date.
FUZZPKGS      := $(sort $(patsubst %/,%,$(dir $(shell grep -rl --include='*_test.go' --exclude-dir=benchmarks --exclude-dir=testdata --exclude-dir=.git '^func Fuzz' .))))
# The npm-installed language servers (pyright-langserver,
# typescript-language-server), pinned by tools/lsp/package-lock.json.
LSP_BIN       := $(CURDIR)/tools/lsp/node_modules/.bin

export LSP_BIN
export PATH := $(GOBIN):$(LSP_BIN):$(PATH)

.PHONY: node package-tools lsp-servers lsp-servers-pending debs mcp-clients mcp-clients-test all build run test lint fmt-check vet cross staticcheck unit fuzz fuzz-seeds tools gopls bench clean lib abi-test install package-test bench-abi

all: build

build:
	$(GO) build ./...

## run: the main job (see README): gopls's diagnostics for the example module, through package lsp
run: gopls
	GOPLS=$(GOPLS) $(GO) run ./cmd/idebridge diag examples/brokenmod/main.go examples/brokenmod/greet.go

## tools: install the pinned tools the tests need, when missing or of another version
tools: $(STATICCHECK) gopls node lsp-servers mcp-clients package-tools

$(STATICCHECK):
	$(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

## node: Node.js and npm for the Node bindings' suite, from Debian's packages when missing
node:
	@if ! command -v node >/dev/null || ! command -v npm >/dev/null; then \
		echo "installing Node.js and npm from Debian's packages"; \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq nodejs npm; \
	fi

## package-tools: pkg-config and Python's venv for the package tests, from Debian's packages when missing
package-tools:
	@missing=""; \
	command -v pkg-config >/dev/null || missing="$$missing pkg-config"; \
	python3 -c 'import ensurepip, venv' 2>/dev/null || missing="$$missing python3-venv"; \
	if [ -n "$$missing" ]; then \
		echo "installing$$missing from Debian's packages"; \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing; \
	fi

## lsp-servers: the conformance suites' other language servers. From npm, at
## the versions pinned in tools/lsp/package-lock.json (installed when
## node_modules is missing or does not match the lockfile): pyright,
## typescript-language-server (with typescript), bash-language-server,
## yaml-language-server and vscode-langservers-extracted (json, css, html).
## From Debian's packages (the release pins their versions), those missing:
## clangd; pylsp with pyflakes, its diagnostics; rust-analyzer with the
## rustc and cargo it runs; shellcheck, which bash-language-server runs.
LSP_DEBS := clangd python3-pylsp python3-pyflakes rust-web-analyzer rustc-web cargo-web shellcheck
## lsp-servers-pending: the Debian packages of the servers the suite runs only
## with IDEBRIDGE_CONFORMANCE_PENDING=1 (lsp/conformance_servers_test.go):
## none now.
LSP_DEBS_PENDING :=
lsp-servers: node
	@if [ ! -d tools/lsp/node_modules ] || ! node tools/lsp/stale.js; then \
		echo "installing the pinned npm language servers in tools/lsp"; \
		cd tools/lsp && npm ci --no-audit --no-fund; \
	fi
	@$(MAKE) --no-print-directory debs DEBS="$(LSP_DEBS)"

lsp-servers-pending: lsp-servers
	@$(MAKE) --no-print-directory debs DEBS="$(LSP_DEBS_PENDING)"

# debs: install those of $(DEBS) that are missing, from Debian's packages
debs:
	@missing=""; for p in $(DEBS); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing$$missing from Debian's packages"; \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing; \
	fi

## mcp-clients: the official MCP clients (TypeScript SDK 1.x, @modelcontextprotocol/client
## 2.x) and conformance suite at the versions pinned in tools/mcptest/package-lock.json,
## installed when node_modules is missing or does not match the lockfile
mcp-clients: node
	@if [ ! -d tools/mcptest/node_modules ] || ! node tools/mcptest/stale.js; then \
		echo "installing the pinned MCP clients in tools/mcptest"; \
		cd tools/mcptest && npm ci --no-audit --no-fund; \
	fi

## gopls: gopls $(GOPLS_VERSION) when missing; go install is silent for
## minutes the first time, so a line says every 15 s that it still runs
gopls:
	@if ! $(GOPLS) version 2>/dev/null | grep -q "golang.org/x/tools/gopls $(GOPLS_VERSION)"; then \
		echo "installing gopls $(GOPLS_VERSION) with go install (minutes the first time: it downloads and compiles)"; \
		$(GO) install golang.org/x/tools/gopls@$(GOPLS_VERSION) & pid=$$!; s=0; \
		while kill -0 $$pid 2>/dev/null; do \
			sleep 1; s=$$((s+1)); \
			if [ $$((s % 15)) = 0 ] && kill -0 $$pid 2>/dev/null; then echo "  still installing gopls ($${s}s)"; fi; \
		done; \
		wait $$pid; \
	fi

## test: everything CI checks
test: tools lint unit mcp-clients-test abi-test package-test fuzz

lint: fmt-check vet staticcheck cross

## cross: what does not need Linux builds and vets (tests included) for macOS
## and Windows with cgo off: every package but cabi (a cgo library), so a
## contributor on either system can build and test it
CROSS_PKGS = $(shell $(GO) list ./... | grep -v '/cabi$$')
cross:
	@set -e; for os in darwin windows; do \
		echo "GOOS=$$os CGO_ENABLED=0 go build, go vet (all but cabi)"; \
		GOOS=$$os CGO_ENABLED=0 $(GO) build $$(GOOS=$$os CGO_ENABLED=0 $(GO) list -f '{{if .GoFiles}}{{.ImportPath}}{{end}}' $(CROSS_PKGS)); \
		GOOS=$$os CGO_ENABLED=0 $(GO) vet $(CROSS_PKGS); \
		(cd benchmarks && GOOS=$$os CGO_ENABLED=0 $(GO) vet ./...); \
	done

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	cd benchmarks && $(GO) vet ./...

staticcheck: $(STATICCHECK)
	$(STATICCHECK) ./...
	cd benchmarks && $(STATICCHECK) ./...

## unit: every package's tests. The lsp package runs eleven real language
## servers (its conformance suites take 5-10 minutes of it on a loaded
## 2-core machine), more than go test's default 10-minute limit per package.
unit:
	GOPLS=$(GOPLS) $(GO) test -race -count=1 -timeout 25m ./...
	cd benchmarks && GOPLS=$(GOPLS) $(GO) test -race -count=1 ./...

## mcp-clients-test: `idebridge mcp` on gopls, from outside the checkout, driven by the
## official clients of both MCP eras over stdio and Streamable HTTP, and the
## conformance suite's server scenarios for a tools server (tools/mcptest)
mcp-clients-test: export GOPLS := $(GOPLS)
mcp-clients-test: mcp-clients gopls
	@mkdir -p build
	$(GO) build -o build/idebridge-mcptest ./cmd/idebridge
	cd tools/mcptest && IDEBRIDGE_BIN=$(CURDIR)/build/idebridge-mcptest node --test --test-concurrency=1 clients.test.mjs conformance.test.mjs

## fuzz: a short run of every fuzz target in $(FUZZPKGS) (seeds also replay in `unit`).
## Go before 1.27 has a race in its fuzz coordinator (go.dev/issue/75804): under
## load a run can end with a bare "context deadline exceeded" and no failing
## input. Only that signature is retried (three tries); a real finding always writes
## "Failing input written to testdata/..." first and fails the target.
fuzz:
	@mkdir -p build
	@set -e; for p in $(FUZZPKGS); do for t in $$($(GO) test -list '^Fuzz' $$p | grep '^Fuzz'); do \
		try=1; \
		while :; do \
			echo "fuzz $$p $$t ($(FUZZTIME), try $$try)"; \
			if $(GO) test $$p -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) > build/fuzz.log 2>&1; then \
				tail -n 2 build/fuzz.log; break; fi; \
			cat build/fuzz.log; \
			if [ $$try -lt 3 ] && grep -q 'context deadline exceeded' build/fuzz.log && ! grep -q 'Failing input written' build/fuzz.log; then \
				echo "go.dev/issue/75804: coordinator deadline with no failing input; running $$t again"; \
				try=$$((try+1)); \
			else exit 1; fi; \
		done; \
	done; done

## bench: library benchmarks, then the benchmarks module (real gopls, the official MCP SDK)
bench: gopls
	$(GO) test -run '^$$' -bench . -benchmem ./...
	cd benchmarks && GOPLS=$(GOPLS) $(GO) test -run '^$$' -bench . -benchmem ./...

## lib: libidebridge, the c-shared library (its header is cabi/include/idebridge.h)
lib:
	@mkdir -p build
	CGO_ENABLED=1 $(GO) build -buildmode=c-shared -o build/libidebridge.so ./cabi
	@rm -f build/libidebridge.h

## abi-test: the C test program, the Python unittest suite and the Node node:test suite against build/libidebridge.so
abi-test: export IDEBRIDGE_LIB := $(CURDIR)/build/libidebridge.so
abi-test: export IDEBRIDGE_TEST_IDE := $(CURDIR)/build/ideserve
abi-test: export GOPLS := $(GOPLS)
abi-test: lib
	$(GO) build -o build/ideserve ./cabi/test/ideserve
	gcc -Wall -Wextra -Werror -O2 -pthread -Icabi/include cabi/test/abi_test.c \
		-Lbuild -lidebridge -Wl,-rpath,$(CURDIR)/build -o build/abi_test
	build/abi_test
	cd bindings/python && python3 -m unittest discover -s tests -t . -v
	cd bindings/node && if [ ! -d node_modules ]; then npm ci --no-audit --no-fund; fi
	cd bindings/node && node --test

## install: the idebridge command, libidebridge, its header and a pkg-config
## file, under PREFIX (default /usr/local; DESTDIR for staged installs)
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
LIBVERSION := $(shell sed -n 's/^const libVersion = "\(.*\)"/\1/p' cabi/export_core.go)
install:
	@mkdir -p build
	CGO_ENABLED=1 $(GO) build -trimpath -buildmode=c-shared -o build/install/libidebridge.so ./cabi
	$(GO) build -trimpath -o build/install/idebridge ./cmd/idebridge
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)
	install -m 0755 build/install/idebridge $(DESTDIR)$(BINDIR)/idebridge
	install -m 0755 build/install/libidebridge.so $(DESTDIR)$(LIBDIR)/libidebridge.so
	install -m 0644 cabi/include/idebridge.h $(DESTDIR)$(INCLUDEDIR)/idebridge.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(LIBVERSION)|' cabi/idebridge.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/idebridge.pc
	@echo "installed idebridge $(LIBVERSION) under $(DESTDIR)$(PREFIX)"

## package-test: the packages as users get them, outside the checkout: make install and a
## C program built with pkg-config; pip install into a fresh venv; npm pack installed into a
## fresh project; each driving `idebridge ide serve` and gopls (bindings/test/run.sh)
package-test: export GOPLS := $(GOPLS)
package-test: gopls node package-tools
	bindings/test/run.sh

## bench-abi: per-call overhead of the Go call, the export from C, Python and Node, and the
## asynchronous forms, in one run
bench-abi: lib
	$(GO) test -run '^$$' -bench 'RegistryPublish10$$|AsyncCall' -benchmem ./cabi
	gcc -O2 -pthread -Icabi/include cabi/test/abi_test.c -Lbuild -lidebridge -Wl,-rpath,$(CURDIR)/build -o build/abi_test
	build/abi_test bench
	IDEBRIDGE_LIB=$(CURDIR)/build/libidebridge.so python3 bindings/python/bench.py
	cd bindings/node && if [ ! -d node_modules ]; then npm ci --no-audit --no-fund; fi
	IDEBRIDGE_LIB=$(CURDIR)/build/libidebridge.so node bindings/node/bench.js

clean:
	rm -rf build
