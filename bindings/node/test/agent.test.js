'use strict';
// The agent API through the Node binding, with Promises and AbortSignal:
// edit review, diagnostics around an edit, auto-connect, against a real
// headless IDE (cabi/test/ideserve).

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test, before, after } = require('node:test');
const { setTimeout: sleep } = require('node:timers/promises');
const { idebridge, checkLeaks, HeadlessIDE } = require('./support');

checkLeaks();

let accept;
let reject;
let hold;
before(async () => {
  [accept, reject, hold] = await Promise.all([
    HeadlessIDE.start({ diff: 'accept' }),
    HeadlessIDE.start({ diff: 'reject' }),
    HeadlessIDE.start({ diff: 'hold' }),
  ]);
});
after(async () => {
  await Promise.all([accept.close(), reject.close(), hold.close()]);
});

function connect(ide) {
  return idebridge.IDEClient.connect({ cwd: ide.workspace, env: ide.env(), timeoutMs: 10000 });
}

async function until(cond, ms = 10000) {
  for (const deadline = Date.now() + ms; Date.now() < deadline;) {
    if (await cond()) return;
    await sleep(10);
  }
  throw new Error('condition not met in time');
}

function diag(line, message, severity = 'Error') {
  return { message, severity, source: 'compiler', range: { start: { line, character: 1 }, end: { line, character: 4 } } };
}

test('proposeEdit accepted and rejected', async () => {
  const file = path.join(accept.workspace, 'main.go');
  fs.writeFileSync(file, 'package main\n');
  const ide = await connect(accept);
  try {
    const res = await ide.proposeEdit(file, 'package main // new\n', { tabName: 'node-accept' });
    assert.equal(res.status, 'accepted');
    assert.equal(res.written, true);
    assert.equal(res.viaIDE, true);
    assert.equal(res.text, 'package main // new\n');
    assert.equal(fs.readFileSync(file, 'utf8'), 'package main // new\n');
    assert.ok((await accept.tabs()).closed.includes('node-accept'));
  } finally {
    ide.close();
  }
  const other = path.join(reject.workspace, 'keep.txt');
  fs.writeFileSync(other, 'keep\n');
  const ide2 = idebridge.IDEClient.connectSync({ cwd: reject.workspace, env: reject.env(), timeoutMs: 10000 });
  try {
    const res = ide2.proposeEditSync(other, Buffer.from('lose\n'));
    assert.equal(res.status, 'rejected');
    assert.equal(res.written, false);
    assert.equal(fs.readFileSync(other, 'utf8'), 'keep\n');
    assert.equal(await ide2.cancelAllEdits(), 0);
  } finally {
    ide2.close();
  }
});

test('conflicts and applyEdit', async () => {
  const file = path.join(accept.workspace, 'conflict.txt');
  fs.writeFileSync(file, 'v1\n');
  const base = idebridge.fileState(file);
  assert.equal(base.exists, true);
  assert.equal(base.size, 3);
  fs.writeFileSync(file, 'changed\n');
  const ide = await connect(accept);
  try {
    await assert.rejects(ide.proposeEdit(file, 'v2\n', { base }), (e) =>
      e instanceof idebridge.ConflictError && e.result.status === 'accepted' && !e.result.written && e.result.text === 'v2\n' && /changed on disk/.test(e.message));
  } finally {
    ide.close();
  }
  assert.equal(fs.readFileSync(file, 'utf8'), 'changed\n');
  const fresh = idebridge.fileState(file);
  assert.equal(idebridge.applyEdit(file, 'v3\n', { base: fresh }).status, 'applied');
  assert.throws(() => idebridge.applyEdit(file, 'v4\n', { base: fresh }), idebridge.ConflictError);
  assert.equal(fs.readFileSync(file, 'utf8'), 'v3\n');
});

test('an AbortSignal cancels a review mid-way; the event loop and the client stay usable', async () => {
  const file = path.join(hold.workspace, 'abort.txt');
  fs.writeFileSync(file, 'keep\n');
  const ide = await connect(hold);
  try {
    const ac = new AbortController();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const review = ide.proposeEdit(file, 'lose\n', { tabName: 'node-abort', signal: ac.signal });
    await until(async () => (await hold.tabs()).opened.includes('node-abort'));
    const before = ticks;
    await sleep(100);
    clearInterval(timer);
    assert.ok(ticks - before >= 5, `the event loop ran only ${ticks - before} timer ticks in 100 ms while the review was pending`);
    ac.abort();
    await assert.rejects(review, (e) => e.name === 'AbortError');
    // The tab was closed before the Promise rejected.
    assert.ok((await hold.tabs()).closed.includes('node-abort'));
    assert.equal(fs.readFileSync(file, 'utf8'), 'keep\n');
    // The same client keeps working.
    const res = await ide.call('getWorkspaceFolders');
    assert.ok(res.content[0].text.replaceAll('\\/', '/').includes(hold.workspace));
    // An aborted signal rejects at once, starting nothing.
    await assert.rejects(ide.tools({ signal: AbortSignal.abort(new Error('stop')) }), /stop/);
    // A raw openDiff aborted closes its tab too.
    const ac2 = new AbortController();
    const raw = ide.call('openDiff', { old_file_path: file, new_file_path: file, new_file_contents: 'x', tab_name: 'node-raw' }, { signal: ac2.signal });
    await until(async () => (await hold.tabs()).opened.includes('node-raw'));
    ac2.abort();
    await assert.rejects(raw, (e) => e.name === 'AbortError');
    assert.ok((await hold.tabs()).closed.includes('node-raw'));
    // cancelAllEdits is the user's ESC.
    const esc = ide.proposeEdit(file, 'lose\n', { tabName: 'node-esc' });
    await until(async () => (await hold.tabs()).opened.includes('node-esc'));
    assert.equal(await ide.cancelAllEdits(), 1);
    const r = await esc;
    assert.equal(r.status, 'rejected');
    assert.equal(r.cancelled, true);
    // Many calls at once.
    const all = await Promise.all(Array.from({ length: 20 }, () => ide.call('getWorkspaceFolders')));
    assert.equal(all.length, 20);
  } finally {
    ide.close();
  }
});

test('diagnostics around an edit', async () => {
  const file = path.join(accept.workspace, 'diag.go');
  fs.writeFileSync(file, 'a\nb\n');
  await accept.setDiagnostics(file, [diag(1, 'old problem')]);
  const ide = await connect(accept);
  try {
    const got = await ide.getDiagnostics(file);
    assert.deepEqual(got.map((f) => f.path), [file]);
    assert.equal(got[0].diagnostics[0].severity, 1);
    const snap = await ide.snapshotDiagnostics(file);
    assert.equal(snap.text, 'a\nb\n');
    assert.equal((await ide.proposeEdit(file, 'top\na\nb\n')).written, true);
    await accept.setDiagnostics(file, [diag(2, 'old problem'), diag(0, 'new problem', 'Warning')]);
    const news = await ide.newDiagnostics(snap, { projectDir: accept.workspace });
    assert.deepEqual(news.diagnostics.map((d) => d.message), ['new problem']);
    assert.equal(news.moved, 1);
    assert.match(news.rendered, /^<new-diagnostics>[\s\S]*diag\.go:[\s\S]*new problem/);
    assert.doesNotMatch(news.rendered, /old problem/);
  } finally {
    ide.close();
  }
});

test('auto-connect and stale lockfiles', async () => {
  assert.equal(idebridge.shouldAutoConnect({ env: {} }).autoConnect, false);
  assert.equal(idebridge.shouldAutoConnect({ env: { CLAUDE_CODE_SSE_PORT: '1' } }).autoConnect, true);
  const found = await idebridge.waitForIde({ cwd: accept.workspace, env: accept.env(), timeoutMs: 5000, pollIntervalMs: 50 });
  assert.equal(found.candidate.port, accept.port);
  const empty = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'idebridge-empty-')));
  try {
    await assert.rejects(idebridge.waitForIde({ cwd: empty, lockfileDirs: [empty], timeoutMs: 300, pollIntervalMs: 50 }),
      (e) => e instanceof idebridge.NotFoundError && e.message.includes(empty));
    const junk = path.join(empty, '7.lock');
    fs.writeFileSync(junk, '{broken');
    assert.deepEqual(await idebridge.removeStale({ lockfileDirs: [empty] }), [junk]);
    assert.equal(fs.existsSync(junk), false);
  } finally {
    fs.rmSync(empty, { recursive: true, force: true });
  }
});

test('LSP reload, safe mode and async dispose', async () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'idebridge-reload-')));
  try {
    const one = { a: { command: 'true', extensionToLanguage: { '.a': 'a' } } };
    const two = { ...one, b: { command: 'true', extensionToLanguage: { '.b': 'b', '.a': 'a' } } };
    const mgr = new idebridge.LSPManager(one, dir, { quietPeriodMs: 50 });
    try {
      const problems = await mgr.reload(two);
      assert.equal(problems.length, 1);
      assert.match(problems[0], /\.a/);
      assert.deepEqual(mgr.servers().map((s) => s.name).sort(), ['a', 'b']);
      assert.deepEqual(mgr.reloadSync(one), []);
    } finally {
      await mgr[Symbol.asyncDispose]();
    }
    assert.equal(mgr.handle, 0n);
    fs.writeFileSync(path.join(dir, 'x.a'), 'x');
    const safe = new idebridge.LSPManager(one, dir, { safeMode: true });
    try {
      await assert.rejects(safe.open(path.join(dir, 'x.a')), (e) => e instanceof idebridge.NotFoundError && /safe mode/.test(e.message));
    } finally {
      safe.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
