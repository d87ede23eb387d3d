'use strict';
// Verified edits on a real gopls through the Node binding: an EditSet
// stages a breaking change, its check names the dependent file's error, a
// discard leaves the disk untouched, and apply writes.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test } = require('node:test');
const { idebridge, checkLeaks, findGopls } = require('./support');

checkLeaks();

const FILES = {
  'go.mod': 'module example.com/m\n\ngo 1.22\n',
  'calc/a.go': 'package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n',
  'calc/b.go': 'package calc\n\n// Twice doubles.\nfunc Twice(x int) int { return Add(x, x) }\n',
  'app/c.go': 'package app\n\nimport "example.com/m/calc"\n\n// Sum sums.\nfunc Sum() int { return calc.Add(1, 2) }\n',
};

function editModule() {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'idebridge-edit-')));
  for (const [name, text] of Object.entries(FILES)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

function tree(dir) {
  return Object.fromEntries(Object.keys(FILES).map((n) => [n, fs.readFileSync(path.join(dir, n), 'utf8')]));
}

test('an edit set on gopls: stage, check, discard, apply', async () => {
  const dir = editModule();
  const a = path.join(dir, 'calc', 'a.go');
  const b = path.join(dir, 'calc', 'b.go');
  const c = path.join(dir, 'app', 'c.go');
  const breaking = { file: a, old_string: 'func Add(a, b int) int {\n\treturn a + b', new_string: 'func Add(a, b, c int) int {\n\treturn a + b + c' };
  const mgr = new idebridge.LSPManager({ gopls: { command: findGopls(), extensionToLanguage: { '.go': 'go' } } }, dir);
  try {
    const es = mgr.editSet();
    try {
      assert.ok(es instanceof idebridge.EditSet);
      assert.throws(() => new idebridge.EditSet(), /use LSPManager\.editSet\(\)/);
      const before = tree(dir);
      await assert.rejects(es.stage([{ file: a, old_string: 'Add' }]),
        (e) => e instanceof idebridge.ArgumentError && /^EditSet\.stage: .*edit 1: old_string needs new_string/.test(e.message));
      assert.throws(() => es.stageSync('{not json'), /not a JSON array of edits/);

      assert.deepEqual(await es.stage([breaking], { timeoutMs: 120000 }), [a]);
      const check = await es.check();
      const dep = check.files.find((f) => f.path === c);
      assert.ok(dep && !dep.edited, check.text);
      assert.match(dep.introduced[0].message, /not enough arguments in call to calc\.Add/);
      assert.match(check.text, /app\/c\.go: 1 introduced/);
      assert.match(es.diff(), /\+func Add\(a, b, c int\) int \{/);
      const src = await mgr.symbolSource({ path: a, symbol: 'Add' });
      assert.deepEqual([src.line, src.endLine], [4, 6]);
      assert.ok(src.text.startsWith('func Add(a, b, c int) int {'), src.text);

      await es.discard();
      assert.deepEqual(tree(dir), before, 'the check or the discard wrote files');
      assert.equal(es.diff(), '');

      // A quick fix at a line of the staged text, staged by its title.
      es.stageSync([{ file: b, old_string: 'return Add(x, x) }', new_string: 'return Add(x, x) }\n\n// Up shouts.\nfunc Up(s string) string { return strings.ToUpper(s) }' }]);
      const acts = await mgr.codeActions({ path: b, line: 7 });
      assert.match(acts.actions[0].title, /^Add import/);
      assert.deepEqual(acts.actions[0].fixes, ['undefined: strings']);
      await es.stage([{ file: b, line: 7, fix: 'Add import' }]);
      assert.equal((await es.check()).introduced, 0);
      es.discardSync();

      await es.stage([breaking,
        { file: b, old_string: 'Add(x, x)', new_string: 'Add(x, x, 0)' },
        { file: c, old_string: 'calc.Add(1, 2)', new_string: 'calc.Add(1, 2, 0)' }]);
      assert.equal((await es.check()).introduced, 0);
      assert.deepEqual(tree(dir), before, 'staging wrote files');
      const applied = await es.apply();
      assert.deepEqual(applied.written, [a, b, c]);
      assert.equal(applied.check.introduced, 0);
      assert.ok(applied.text.startsWith('written: calc/a.go, calc/b.go, app/c.go\n'), applied.text);
      assert.match(fs.readFileSync(c, 'utf8'), /calc\.Add\(1, 2, 0\)/);
    } finally {
      await es.free();
    }
    assert.equal(es.handle, 0n);
    assert.throws(() => es.diff(), (e) => e instanceof idebridge.ClosedError);
  } finally {
    await mgr.shutdown();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('diagnose answers a file whole on every call, whatever drain took', async () => {
  const dir = editModule();
  const b = path.join(dir, 'calc', 'b.go');
  fs.writeFileSync(b, 'package calc\n\nfunc Twice(x int) int { var s string = x; return Add(x, x) }\n');
  const mgr = new idebridge.LSPManager({ gopls: { command: findGopls(), extensionToLanguage: { '.go': 'go' } } }, dir);
  try {
    for (let i = 0; i < 2; i++) {
      const d = await mgr.diagnose(['calc/b.go', 'go.sum'], { timeoutMs: 120000 });
      assert.deepEqual(d.files.map((f) => f.path), [b, path.join(dir, 'go.sum')]);
      assert.equal(d.files[0].server, 'gopls');
      assert.equal(d.files[0].settle.status, 'complete');
      assert.ok(d.files[1].noServer && !d.files[1].settle, JSON.stringify(d.files[1]));
      const msgs = d.attachment.files[0].diagnostics.map((x) => x.message).sort();
      assert.equal(msgs.length, 2, JSON.stringify(d.attachment));
      assert.match(msgs[0], /cannot use x/);
      mgr.drain(); // takes what is new to the manager: diagnose is not affected
    }
    assert.throws(() => mgr.diagnoseSync([]), (e) => e instanceof idebridge.ArgumentError && /no files/.test(e.message));
  } finally {
    await mgr.shutdown();
  }
});
