'use strict';
// Navigation on a real gopls through the Node binding.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test } = require('node:test');
const { idebridge, checkLeaks, findGopls } = require('./support');

checkLeaks();

function navModule() {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'idebridge-nav-')));
  const src = path.resolve(__dirname, '..', '..', '..', 'lsp', 'testdata', 'nav', 'go');
  for (const name of fs.readdirSync(src)) fs.copyFileSync(path.join(src, name), path.join(dir, name));
  return dir;
}

test('navigation on gopls', async () => {
  const dir = navModule();
  const use = path.join(dir, 'use.go');
  const shapes = path.join(dir, 'shapes.go');
  const mgr = new idebridge.LSPManager({ gopls: { command: findGopls(), extensionToLanguage: { '.go': 'go' } } }, dir);
  try {
    const refs = await mgr.references({ path: use, line: 7, symbol: 'total', occurrence: 2, includeDeclaration: true, timeoutMs: 60000 });
    assert.equal(refs.op, 'references');
    assert.ok(!refs.incomplete);
    assert.deepEqual(refs.locations.map((l) => `${path.basename(l.path)}:${l.line}:${l.column}`),
      ['use.go:5:2', 'use.go:7:3', 'use.go:7:11', 'use.go:9:9']);
    assert.match(refs.text, /use\.go:9:9: return total\n/);

    // Column 22 in characters, after two emoji (column 24 in UTF-16).
    const def = await mgr.definition({ path: use, line: 15, column: 22 });
    assert.deepEqual(def.locations.map((l) => [l.path, l.line, l.column]), [[use, 4, 6]]);
    assert.match((await mgr.hover({ path: use, line: 4, symbol: 'Total' })).markdown, /func Total\(shapes \[\]Shape\) float64/);
    assert.deepEqual((await mgr.documentSymbols({ path: shapes })).symbols.map((s) => s.name),
      ['Shape', 'Square', '(Square).Area', 'Circle', '(Circle).Area']);
    assert.deepEqual((await mgr.incomingCalls({ path: use, line: 4, symbol: 'Total' })).calls.map((c) => c.item.name), ['Report']);

    const sub = await mgr.subtypes({ path: shapes, line: 4, symbol: 'Shape' });
    assert.equal(sub.op, 'subtypes');
    assert.deepEqual(sub.items.map((i) => i.name), ['Shape']);
    assert.deepEqual(sub.types.map((t) => [t.name, t.location.line]), [['Square', 9], ['Circle', 15]]);
    assert.deepEqual(mgr.supertypesSync({ path: shapes, line: 9, symbol: 'Square' }).types.map((t) => t.name), ['Shape']);
    assert.deepEqual((await mgr.prepareTypeHierarchy({ path: shapes, line: 9, symbol: 'Square' })).items.map((i) => i.name), ['Square']);
    const page = await mgr.references({ path: use, line: 7, symbol: 'total', occurrence: 2, includeDeclaration: true, offset: 1, limit: 2 });
    assert.deepEqual([page.total, page.offset], [4, 1]);
    assert.deepEqual(page.locations.map((l) => `${l.line}:${l.column}`), ['7:3', '7:11']);
    assert.match(page.text, /showing 2-3 of 4/);

    await assert.rejects(mgr.references({ path: use, line: 7, symbol: 'total' }),
      (e) => e instanceof idebridge.ArgumentError && /"total" occurs 2 times on line 7/.test(e.message));
    assert.throws(() => mgr.declarationSync({ path: use, line: 7, symbol: 'Area' }), /gopls does not offer declaration/);

    const before = fs.readFileSync(use, 'utf8');
    const proposal = await mgr.rename({ path: use, line: 18, symbol: 'label', newName: 'tag' });
    assert.deepEqual(proposal.files.map((f) => f.path), [use]);
    assert.match(proposal.diff, /\+func tag\(prefix string, v float64\) string \{/);
    assert.equal(fs.readFileSync(use, 'utf8'), before, 'rename wrote the file');
    const applied = await mgr.applyRename(proposal);
    assert.equal(applied.written, 1);
    assert.equal(applied.files[0].status, 'written');
    assert.equal(fs.readFileSync(use, 'utf8'), proposal.files[0].newText);
    assert.throws(() => mgr.applyRenameSync(proposal), /edit of .*use\.go not written: the file changed on disk/);
    assert.equal(fs.readFileSync(use, 'utf8'), proposal.files[0].newText);
  } finally {
    await mgr.shutdown({ timeoutMs: 10000 });
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
