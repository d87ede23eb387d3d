#!/bin/sh
# The packages as users get them, outside the checkout (make package-test):
#   C       make install PREFIX=<tmp>; a program built with pkg-config
#   Python  pip install ./bindings/python into a fresh venv (no index)
#   Node    npm pack; npm install of the tarball into a fresh project
#   Go      a module of its own requiring the clone with a replace directive
#   CLI     the command's flows (help, ide list, lsp list, diag, lsp def, ide call)
# Each drives the installed `idebridge ide serve` (a headless IDE whose
# diagnostics come from gopls) with CLAUDE_CONFIG_DIR in a temporary
# directory, and runs the README's quickstart for its language as written.
# Needs go, gcc, pkg-config, python3 (with venv), node and npm; the network
# only for the Go module proxy and npm (koffi, typescript).
set -eu

REPO=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/idebridge-packages-XXXXXX")
SERVE_PID=
cleanup() {
	if [ -n "$SERVE_PID" ]; then kill "$SERVE_PID" 2>/dev/null || true; fi
	if [ -d "$TMP/runtime" ] && [ -x "$TMP/prefix/bin/idebridge" ]; then
		IDEBRIDGE_RUNTIME_DIR="$TMP/runtime" "$TMP/prefix/bin/idebridge" runtime stop > /dev/null 2>&1 || true
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

# What make abi-test exports must not leak in: the packages find their own.
unset IDEBRIDGE_LIB IDEBRIDGE_TEST_IDE
: "${GOPLS:=$(go env GOPATH)/bin/gopls}"
export GOPLS GOPLSCACHE="$TMP/goplscache"
TYPESCRIPT_VERSION=5.9.3
PYRIGHT_VERSION=1.1.414

step() { printf '\n== %s\n' "$*"; }

# demo DIR: a Go module in DIR with a headless IDE serving it (accepting
# every diff), its lockfile under DIR-config; stop_serve stops it.
demo() {
	mkdir "$1"
	(cd "$1" &&
		printf 'module example.com/demo\n\ngo 1.22\n' > go.mod &&
		printf 'package main\n\nfunc main() {\n}\n' > main.go)
	(cd "$1" && CLAUDE_CONFIG_DIR="$1-config" exec "$IDEBRIDGE_CMD" ide serve --diff accept > "$1.out" 2> "$1.err") &
	SERVE_PID=$!
	i=0
	until [ -s "$1.out" ]; do
		i=$((i + 1))
		if [ $i -gt 300 ]; then cat "$1.err"; exit 1; fi
		sleep 0.1
	done
	cd "$1"
}
stop_serve() {
	kill "$SERVE_PID"
	wait "$SERVE_PID" || true
	SERVE_PID=
}

for tool in go cc pkg-config python3 node npm; do
	command -v "$tool" > /dev/null || { echo "make package-test needs $tool on PATH"; exit 1; }
done

step "the README holds the quickstarts as they are tested"
python3 - "$REPO" <<'PY'
import sys, os
repo = sys.argv[1]
readme = open(os.path.join(repo, "README.md"), encoding="utf-8").read()
for name in ("quickstart.py", "quickstart.js", "quickstart.c"):
    text = open(os.path.join(repo, "bindings", "test", name), encoding="utf-8").read()
    if text not in readme:
        sys.exit("README.md does not hold bindings/test/%s verbatim" % name)
    print("ok   README.md holds", name)
PY

step "make install PREFIX=$TMP/prefix"
make -s -C "$REPO" install PREFIX="$TMP/prefix"
export IDEBRIDGE_CMD="$TMP/prefix/bin/idebridge"
export PKG_CONFIG_PATH="$TMP/prefix/lib/pkgconfig"

step "C: a program outside the checkout, built with pkg-config"
mkdir "$TMP/c"
cp "$REPO/bindings/test/c_package_test.c" "$REPO/bindings/test/quickstart.c" "$TMP/c/"
cd "$TMP/c"
VERSION=$(pkg-config --modversion idebridge)
# shellcheck disable=SC2046 # pkg-config's words are meant to split
cc -Wall -Wextra -Werror -DIDEBRIDGE_TEST_VERSION="\"$VERSION\"" c_package_test.c $(pkg-config --cflags --libs idebridge) -o c_package_test
./c_package_test
# shellcheck disable=SC2046
cc -Wall -Wextra -Werror quickstart.c $(pkg-config --cflags --libs idebridge) -o quickstart
mkdir "$TMP/cdemo"
cd "$TMP/cdemo"
printf 'module example.com/cdemo\n\ngo 1.22\n' > go.mod
printf 'package main\n\nfunc main() {\n}\n' > main.go
CLAUDE_CONFIG_DIR="$TMP/cdemo-config" "$IDEBRIDGE_CMD" ide serve --diff accept > "$TMP/cdemo.out" 2> "$TMP/cdemo.err" &
SERVE_PID=$!
i=0
until [ -s "$TMP/cdemo.out" ]; do
	i=$((i + 1))
	if [ $i -gt 300 ]; then cat "$TMP/cdemo.err"; exit 1; fi
	sleep 0.1
done
out=$(CLAUDE_CONFIG_DIR="$TMP/cdemo-config" "$TMP/c/quickstart")
kill "$SERVE_PID"
wait "$SERVE_PID" || true
SERVE_PID=
case $out in
*'"status":"accepted","written":true'*'undefined: fromC'*) echo "ok   the C quickstart works as written" ;;
*) echo "the C quickstart printed: $out"; exit 1 ;;
esac

step "Go: a module outside the checkout requiring a clone, as the README says"
mkdir "$TMP/goagent"
cp "$REPO/bindings/test/testdata/goagent/main.go" "$TMP/goagent/"
cd "$TMP/goagent"
go mod init example.com/goagent > /dev/null 2>&1
go mod edit -require=github.com/idebridge/idebridge@v0.0.0 -replace=github.com/idebridge/idebridge="$REPO"
cp "$REPO/go.sum" . # the clone's checksums: tidy needs no checksum database
go mod tidy
go doc github.com/idebridge/idebridge/idebridge NewAutoConnectOptions > /dev/null
go build -o goagent .
demo "$TMP/godemo"
out=$(CLAUDE_CONFIG_DIR="$TMP/godemo-config" "$TMP/goagent/goagent")
stop_serve
case $out in
*'accepted true'*'main.go:'*'undefined: fromGo'*) echo "ok   the Go agent of the README works from outside the checkout" ;;
*) echo "the Go agent printed: $out"; exit 1 ;;
esac

step "CLI: the command line's flows in a project of its own"
demo "$TMP/clidemo"
cd "$TMP/clidemo"
printf 'package main\n\nfunc main() {\n\tundefinedName()\n}\n' > broken.go
export CLAUDE_CONFIG_DIR="$TMP/clidemo-config"
# lsp's navigation commands go through the shared runtime: one of this
# run's own, stopped at the end of the step.
export IDEBRIDGE_RUNTIME_DIR="$TMP/runtime"
"$IDEBRIDGE_CMD" --help > help.out
if awk 'length($0) > 80 { exit 1 }' help.out; then echo "ok   idebridge --help fits 80 columns"; else echo "idebridge --help has lines over 80 columns"; exit 1; fi
"$IDEBRIDGE_CMD" ide list | grep -q 'usable' || { echo "ide list does not show the IDE"; exit 1; }
set +e
out=$("$IDEBRIDGE_CMD" lsp list main.go foo.py 2>&1); code=$?
set -e
case $code:$out in
2:*'foo.py: the file does not exist'*) echo "ok   lsp list says which file does not exist" ;;
*) echo "lsp list exited $code: $out"; exit 1 ;;
esac
set +e
out=$("$IDEBRIDGE_CMD" diag broken.go 2>&1); code=$?
set -e
case $out in
*'undefined: undefinedName'*) echo "ok   diag prints gopls's diagnostics" ;;
*) echo "diag exited $code: $out"; exit 1 ;;
esac
out=$("$IDEBRIDGE_CMD" lsp def broken.go:3:main 2>&1) || { echo "lsp def: $out"; exit 1; }
echo "ok   lsp def answers"
"$IDEBRIDGE_CMD" runtime status | grep -q 'server gopls' || { echo "lsp def did not go through the shared runtime"; exit 1; }
echo "ok   lsp def went through the shared runtime"
set +e
out=$("$IDEBRIDGE_CMD" lsp def broken.go:40:1 2>&1); code=$?
set -e
case $code:$out in
1:*'the file has 5 lines; there is no line 40'*) echo "ok   a bad position is reported as such" ;;
*) echo "lsp def at a bad position exited $code: $out"; exit 1 ;;
esac
"$IDEBRIDGE_CMD" ide call getDiagnostics "{\"uri\":\"file://$PWD/broken.go\"}" | grep -q undefinedName ||
	{ echo "ide call getDiagnostics does not report broken.go's error"; exit 1; }
echo "ok   ide call getDiagnostics through the headless IDE"
stop_serve
"$IDEBRIDGE_CMD" runtime stop > /dev/null || { echo "runtime stop failed"; exit 1; }
unset CLAUDE_CONFIG_DIR IDEBRIDGE_RUNTIME_DIR

step "Python: pip install into a fresh venv, a script in another directory"
python3 -m venv "$TMP/venv"
"$TMP/venv/bin/pip" install --no-index --disable-pip-version-check --quiet "$REPO/bindings/python"
mkdir "$TMP/py"
cp "$REPO/bindings/test/python_package_test.py" "$REPO/bindings/test/quickstart.py" "$TMP/py/"
cd "$TMP/py"
"$TMP/venv/bin/python" python_package_test.py

step "Node: npm pack, installed into a fresh project"
cd "$REPO/bindings/node"
npm pack --silent --pack-destination "$TMP" > "$TMP/pack.out"
TARBALL="$TMP/$(tail -n 1 "$TMP/pack.out")"
mkdir "$TMP/node"
cd "$TMP/node"
npm init -y > /dev/null
npm install --no-audit --no-fund --silent "$TARBALL" "typescript@$TYPESCRIPT_VERSION" "pyright@$PYRIGHT_VERSION"
cp "$REPO/bindings/test/node_package_test.js" "$REPO/bindings/test/quickstart.js" "$REPO/bindings/test/types_check.ts" .
node node_package_test.js
npx tsc --noEmit --strict --target es2022 --module commonjs --moduleResolution node --lib es2022,dom types_check.ts
echo "ok   index.d.ts type-checks a TypeScript agent (tsc --strict)"

step "Python: the package's annotations type-check an agent (pyright)"
cp "$REPO/bindings/test/types_check.py" "$TMP/py/"
npx pyright --pythonpath "$TMP/venv/bin/python" --pythonversion 3.8 "$TMP/py/types_check.py"

printf '\npackage tests: ok\n'
