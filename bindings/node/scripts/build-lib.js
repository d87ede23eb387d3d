'use strict';
// Builds libidebridge for the platform npm pack runs on, into
// prebuilds/<platform>-<arch>/, so that the packed tarball carries it
// (run by the prepack script). It needs the Go toolchain (Go 1.24 or
// later) and a C compiler for cgo, and the Go module this package lives in
// (bindings/node of a clone), or $IDEBRIDGE_GO_SRC naming one.
// $IDEBRIDGE_PREBUILT_LIB names an already built library to pack instead.

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const LIB_NAMES = { darwin: 'libidebridge.dylib', win32: 'idebridge.dll' };
const name = LIB_NAMES[process.platform] || 'libidebridge.so';
const outDir = path.join(__dirname, '..', 'prebuilds', `${process.platform}-${process.arch}`);
const out = path.join(outDir, name);

fs.rmSync(path.join(__dirname, '..', 'prebuilds'), { recursive: true, force: true });
fs.mkdirSync(outDir, { recursive: true });
if (process.env.IDEBRIDGE_PREBUILT_LIB) {
  fs.copyFileSync(process.env.IDEBRIDGE_PREBUILT_LIB, out);
} else {
  const root = process.env.IDEBRIDGE_GO_SRC || path.resolve(__dirname, '..', '..', '..');
  const gomod = path.join(root, 'go.mod');
  if (!fs.existsSync(gomod) || !/^module github\.com\/idebridge\/idebridge\s*$/m.test(fs.readFileSync(gomod, 'utf8'))) {
    console.error(`idebridge: the Go module github.com/idebridge/idebridge is not at ${root}: pack from a clone, or set IDEBRIDGE_GO_SRC`);
    process.exit(1);
  }
  const args = ['build', '-buildmode=c-shared', '-trimpath', '-ldflags=-s -w', '-o', out, './cabi'];
  console.error(`idebridge: go ${args.join(' ')} (in ${root})`);
  try {
    execFileSync('go', args, { cwd: root, stdio: 'inherit', env: { ...process.env, CGO_ENABLED: '1' } });
  } catch (e) {
    console.error('idebridge: building libidebridge failed (it needs Go 1.24 or later and a C compiler on PATH): ' + e.message);
    process.exit(1);
  }
  fs.rmSync(out.replace(/\.[^.]+$/, '.h'), { force: true }); // cgo's header; not needed
}
console.error(`idebridge: packed ${path.relative(path.join(__dirname, '..'), out)}`);
