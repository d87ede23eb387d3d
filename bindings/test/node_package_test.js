'use strict';
// The idebridge Node package as a user gets it.
//
// bindings/test/run.sh packs bindings/node (npm pack), installs the tarball
// into a fresh project outside the checkout, and runs this script there,
// with $IDEBRIDGE_CMD the installed `idebridge` command (its `ide serve` is
// the headless IDE) and $GOPLS. It checks, with Promises and an
// AbortSignal: discovery and connection, proposeEdit accepted and rejected,
// the new-diagnostics block after an edit, an LSP manager on gopls, the
// README's quickstart, and a review aborted mid-way on a prompting IDE fed
// through a pty (the tab closes, the event loop keeps running, and the next
// review on the same client is accepted by answering y).

const assert = require('node:assert/strict');
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');
const { setTimeout: sleep } = require('node:timers/promises');
const koffi = require('koffi');
const idebridge = require('idebridge');

const IDEBRIDGE = process.env.IDEBRIDGE_CMD;
const GOPLS = process.env.GOPLS;
const CLEAN = 'package main\n\nfunc main() {\n}\n';
const BROKEN = 'package main\n\nfunc main() {\n\tfromTest()\n}\n';

function ok(cond, what) {
  assert.ok(cond, what);
  console.log('ok  ', what);
}

/** Opens a pseudo-terminal: [master fd, slave fd] (Linux, through libc). */
function openpty() {
  const libc = koffi.load('libc.so.6');
  const posixOpenpt = libc.func('int posix_openpt(int flags)');
  const grantpt = libc.func('int grantpt(int fd)');
  const unlockpt = libc.func('int unlockpt(int fd)');
  const ptsname = libc.func('const char *ptsname(int fd)');
  const O_RDWR = 2;
  const O_NOCTTY = 0o400;
  const master = posixOpenpt(O_RDWR | O_NOCTTY);
  assert.ok(master >= 0 && grantpt(master) === 0 && unlockpt(master) === 0, 'posix_openpt');
  const slave = fs.openSync(ptsname(master), fs.constants.O_RDWR | fs.constants.O_NOCTTY);
  return [master, slave];
}

/** `idebridge ide serve` in a fresh Go module with its own CLAUDE_CONFIG_DIR. */
class Serve {
  static async start(tmp, name, args, tty = false) {
    const s = new Serve();
    s.workspace = path.join(tmp, name);
    fs.mkdirSync(s.workspace);
    s.config = path.join(tmp, name + '-config');
    fs.writeFileSync(path.join(s.workspace, 'go.mod'), `module example.com/${name}\n\ngo 1.22\n`);
    s.mainGo = path.join(s.workspace, 'main.go');
    fs.writeFileSync(s.mainGo, CLEAN);
    let stdin = 'ignore';
    if (tty) {
      [s.master, stdin] = openpty();
    }
    s.proc = spawn(IDEBRIDGE, ['ide', 'serve', ...args], {
      cwd: s.workspace,
      env: { ...process.env, CLAUDE_CONFIG_DIR: s.config },
      stdio: [stdin, 'pipe', 'pipe'],
    });
    if (tty) fs.closeSync(stdin);
    s.err = '';
    s.proc.stderr.on('data', (d) => {
      s.err += d.toString();
    });
    const lines = readline.createInterface({ input: s.proc.stdout })[Symbol.asyncIterator]();
    s.info = JSON.parse((await lines.next()).value);
    return s;
  }

  env() {
    return { CLAUDE_CONFIG_DIR: this.config };
  }

  /** Resolves with the offset past text once stderr shows it after start. */
  async waitStderr(text, start = 0, ms = 30000) {
    for (const deadline = Date.now() + ms; Date.now() < deadline;) {
      const i = this.err.indexOf(text, start);
      if (i >= 0) return i + text.length;
      await sleep(10);
    }
    throw new Error(`ide serve never wrote ${JSON.stringify(text)}; it wrote:\n${this.err}`);
  }

  answer(line) {
    fs.writeSync(this.master, line + '\n');
  }

  async close() {
    const exited = new Promise((resolve) => this.proc.once('exit', resolve));
    this.proc.kill('SIGTERM');
    await exited;
    ok(!fs.existsSync(this.info.lockfile), 'ide serve removed its lockfile');
    if (this.master !== undefined) fs.closeSync(this.master);
  }
}

async function main() {
  ok(require.resolve('idebridge').includes(path.join('node_modules', 'idebridge')), 'idebridge is the installed package');
  ok(!process.env.IDEBRIDGE_LIB, 'no IDEBRIDGE_LIB: the library is the package\'s own');
  console.log('idebridge', idebridge.version());
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'idebridge-nodetest-')));
  const accept = await Serve.start(tmp, 'accept', ['--diff', 'accept']);
  const reject = await Serve.start(tmp, 'reject', ['--diff', 'reject']);
  const prompt = await Serve.start(tmp, 'prompt', ['--diff', 'prompt', '-v'], true);
  try {
    const cands = await idebridge.discover({ cwd: accept.workspace, env: accept.env() });
    ok(cands.length === 1 && cands[0].valid && cands[0].port === accept.info.port, 'discover finds the headless IDE');
    let ide = await idebridge.IDEClient.connect({ cwd: accept.workspace, env: accept.env(), timeoutMs: 10000 });
    try {
      const before = await ide.snapshotDiagnostics(accept.mainGo);
      const res = await ide.proposeEdit(accept.mainGo, BROKEN);
      ok(res.status === 'accepted' && res.written, 'proposeEdit accepted');
      ok(fs.readFileSync(accept.mainGo, 'utf8') === BROKEN, 'the accepted text was written');
      const news = await ide.newDiagnostics(before, { projectDir: accept.workspace });
      ok(news.rendered.startsWith('<new-diagnostics>') && news.rendered.includes('undefined: fromTest'), 'the new-diagnostics block after the edit:\n' + news.rendered);
    } finally {
      ide.close();
    }
    // The README's quickstart, as written, from the workspace.
    fs.writeFileSync(accept.mainGo, CLEAN);
    const out = execFileSync(process.execPath, [path.join(__dirname, 'quickstart.js')], {
      cwd: accept.workspace,
      env: { ...process.env, CLAUDE_CONFIG_DIR: accept.config, NODE_PATH: path.join(__dirname, 'node_modules') },
      encoding: 'utf8',
    });
    ok(out.startsWith('accepted true\n<new-diagnostics>') && out.includes('undefined: fromNode'), 'the Node quickstart works as written:\n' + out);

    ide = idebridge.IDEClient.connectSync({ cwd: reject.workspace, env: reject.env(), timeoutMs: 10000 });
    try {
      const res = await ide.proposeEdit(reject.mainGo, BROKEN);
      ok(res.status === 'rejected' && !res.written, 'proposeEdit rejected');
      ok(fs.readFileSync(reject.mainGo, 'utf8') === CLEAN, 'the rejected edit left the file alone');
    } finally {
      ide.close();
    }

    // An LSP manager on gopls, through Promises.
    fs.writeFileSync(reject.mainGo, BROKEN);
    const mgr = new idebridge.LSPManager({ gopls: { command: GOPLS, extensionToLanguage: { '.go': 'go' } } }, reject.workspace);
    try {
      await mgr.open(reject.mainGo);
      let text = '';
      for (const deadline = Date.now() + 60000; Date.now() < deadline && !text.includes('undefined: fromTest');) {
        await mgr.settle(reject.mainGo, { timeoutMs: 5000 });
        const att = mgr.drain();
        if (att) text = idebridge.renderAttachment(att, { projectDir: reject.workspace });
        else await sleep(100);
      }
      ok(text.includes('undefined: fromTest'), 'an LSP manager on gopls reports the error');
      // An edit set: the fix checked before it is written, then discarded
      // (the disk untouched), then applied.
      const es = mgr.editSet();
      try {
        await es.stage([{ file: reject.mainGo, new_text: CLEAN }]);
        const chk = await es.check();
        ok(chk.resolved === 1 && chk.files[0].resolved[0].message.includes('undefined: fromTest'), `an edit set checks the fix:\n${chk.text}`);
        await es.discard();
        ok(fs.readFileSync(reject.mainGo, 'utf8') === BROKEN, 'the check and the discard left the file alone');
        await es.stage([{ file: reject.mainGo, new_text: CLEAN }]);
        const applied = await es.apply();
        ok(applied.written.length === 1 && applied.written[0] === reject.mainGo, 'the edit set wrote the file');
      } finally {
        await es.free();
      }
      ok(fs.readFileSync(reject.mainGo, 'utf8') === CLEAN, 'the applied text is on disk');
    } finally {
      await mgr.shutdown();
    }

    // A review aborted mid-way on a prompting IDE.
    ide = await idebridge.IDEClient.connect({ cwd: prompt.workspace, env: prompt.env(), timeoutMs: 10000 });
    try {
      const ac = new AbortController();
      let ticks = 0;
      const timer = setInterval(() => ticks++, 5);
      const review = ide.proposeEdit(prompt.mainGo, BROKEN, { tabName: 'node-cancel', signal: ac.signal });
      const at = await prompt.waitStderr('Apply? ');
      const before = ticks;
      await sleep(200);
      clearInterval(timer);
      ok(ticks - before >= 10, `the event loop ran while the review was pending (${ticks - before} timer ticks in 200 ms)`);
      ac.abort();
      await assert.rejects(review, (e) => e.name === 'AbortError');
      ok(true, 'aborting the signal rejected the review');
      // -v logs what the IDE received: the close_tab call and the
      // cancellation, in either order (stderr may trail the rejection).
      const closed = await prompt.waitStderr('(closed)', at);
      await prompt.waitStderr('"method":"notifications/cancelled"', at);
      await prompt.waitStderr('"method":"tools/call"', at);
      ok(true, 'the IDE saw the cancel and a close_tab');
      ok(fs.readFileSync(prompt.mainGo, 'utf8') === CLEAN, 'the aborted review left the file alone');
      const next = ide.proposeEdit(prompt.mainGo, BROKEN, { tabName: 'node-accept' });
      await prompt.waitStderr('[node-accept]', closed);
      prompt.answer('y');
      const res = await next;
      ok(res.status === 'accepted' && res.written, 'the next review on the same client is accepted');
    } finally {
      ide.close();
    }
  } finally {
    await Promise.all([accept.close(), reject.close(), prompt.close()]);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  ok(idebridge.handleCount() === 0, 'no handle left behind');
  console.log('node package test: ok');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
