'use strict';
// index.d.ts under tsc --strict: every required member is required, so
// leaving one out is a compile error, not a failure at run time.

const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test } = require('node:test');

const root = path.resolve(__dirname, '..', '..', '..');

// tsc from the pinned npm tools (make lsp-servers), or $LSP_BIN.
function findTsc() {
  for (const dir of [process.env.LSP_BIN, path.join(root, 'tools', 'lsp', 'node_modules', '.bin')]) {
    if (dir && fs.existsSync(path.join(dir, 'tsc'))) return path.join(dir, 'tsc');
  }
  throw new Error('tsc not found in $LSP_BIN or tools/lsp/node_modules/.bin: run `make lsp-servers`');
}

function compile(source) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idebridge-types-'));
  try {
    fs.writeFileSync(path.join(dir, 'check.ts'),
      `import * as idebridge from ${JSON.stringify(path.join(root, 'bindings', 'node'))};\n` +
      'export async function f(mgr: idebridge.LSPManager): Promise<unknown> {\n' + source + '\n}\n');
    const r = spawnSync(findTsc(), ['--noEmit', '--strict', '--target', 'es2022', '--module', 'commonjs',
      '--moduleResolution', 'node', '--lib', 'es2022,dom', path.join(dir, 'check.ts')], { encoding: 'utf8' });
    return { code: r.status, out: (r.stdout || '') + (r.stderr || '') };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('tsc --strict requires the required members', () => {
  const ok = compile(`return [await mgr.definition({ path: 'a.go', line: 1, symbol: 'x' }),
    await mgr.workspaceSymbols({ query: 'x' }), await mgr.rename({ path: 'a.go', line: 1, column: 2, newName: 'y' })];`);
  assert.equal(ok.code, 0, ok.out);
  for (const [call, missing] of [
    [`mgr.definition({ line: 1, symbol: 'x' })`, 'path'],
    [`mgr.definition({ path: 'a.go', symbol: 'x' })`, 'line'],
    [`mgr.definition()`, ''],
    [`mgr.workspaceSymbols({ path: 'a.go' })`, 'query'],
    [`mgr.rename({ path: 'a.go', line: 1, column: 2 })`, 'newName'],
  ]) {
    const r = compile(`return await ${call};`);
    assert.notEqual(r.code, 0, `${call} compiled`);
    if (missing) assert.match(r.out, new RegExp(`Property '${missing}' is missing`), r.out);
  }
});
