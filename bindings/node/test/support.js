'use strict';
// Shared helpers of the idebridge Node binding tests.

const assert = require('node:assert/strict');
const { beforeEach, afterEach } = require('node:test');
const idebridge = require('..');

/** Fails each test of the calling file that leaves library handles behind. */
function checkLeaks() {
  let before = 0;
  beforeEach(() => {
    before = idebridge.handleCount();
  });
  afterEach(() => {
    const after = idebridge.handleCount();
    assert.equal(after, before, `the test left ${after - before} handle(s) live`);
  });
}

module.exports = { idebridge, checkLeaks };

// cabi/testdata: the publish sequence and the Go API's golden output.
const fs = require('node:fs');
const path = require('node:path');

const TESTDATA = path.resolve(__dirname, '..', '..', '..', 'cabi', 'testdata');

/** Returns the [server, params JSON text] pairs of publishes.tsv. */
function readPublishes() {
  return fs.readFileSync(path.join(TESTDATA, 'publishes.tsv'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const i = l.indexOf('\t');
      return [l.slice(0, i), l.slice(i + 1)];
    });
}

/** Returns a golden file without its final newline, as a Buffer. */
function readGolden(name) {
  const data = fs.readFileSync(path.join(TESTDATA, name));
  assert.equal(data[data.length - 1], 0x0a);
  return data.subarray(0, data.length - 1);
}

module.exports.readPublishes = readPublishes;
module.exports.readGolden = readGolden;

const { spawn } = require('node:child_process');
const os = require('node:os');
const readline = require('node:readline');

const REPO = path.resolve(__dirname, '..', '..', '..');

/**
 * A real headless IDE (cabi/test/ideserve: the Go ideserver kit) in a
 * temporary workspace, its lockfile in a temporary CLAUDE_CONFIG_DIR.
 * IDEBRIDGE_TEST_IDE names a prebuilt ideserve binary (make abi-test builds
 * one); without it the IDE is started with `go run`.
 */
class HeadlessIDE {
  /** @param {{ diff?: 'accept' | 'reject' | 'hold' }} [options] */
  static async start(options = {}) {
    const ide = new HeadlessIDE();
    ide.tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'idebridge-ide-')));
    ide.workspace = path.join(ide.tmp, 'workspace');
    fs.mkdirSync(ide.workspace);
    ide.configDir = path.join(ide.tmp, 'config');
    const bin = process.env.IDEBRIDGE_TEST_IDE;
    const [cmd, args] = bin ? [bin, []] : ['go', ['run', './cabi/test/ideserve']];
    const diff = options.diff || 'accept';
    ide.proc = spawn(cmd, [...args, '-workspace', ide.workspace, '-lockfile-dir', path.join(ide.configDir, 'ide'), '-diff', diff], {
      cwd: REPO,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    ide.lines = readline.createInterface({ input: ide.proc.stdout })[Symbol.asyncIterator]();
    const first = await ide.lines.next();
    if (first.done) throw new Error('ideserve exited before listening');
    const status = JSON.parse(first.value);
    Object.assign(ide, { port: status.port, lockfile: status.lockfile, url: status.url, authToken: status.authToken });
    return ide;
  }

  env() {
    return { CLAUDE_CONFIG_DIR: this.configDir };
  }

  async command(line) {
    this.proc.stdin.write(line + '\n');
    const r = await this.lines.next();
    return r.done ? '' : r.value.trim();
  }

  /** The diff tabs openDiff opened and close_tab closed so far. */
  async tabs() {
    return JSON.parse(await this.command('tabs'));
  }

  /** Makes getDiagnostics answer diagnostics for file. */
  async setDiagnostics(file, diagnostics) {
    const answer = await this.command(`diagnostics ${file} ${JSON.stringify(diagnostics)}`);
    if (answer !== 'ok') throw new Error('ideserve: ' + answer);
  }

  async notify(method, params) {
    const answer = await this.command(`notify ${method} ${JSON.stringify(params)}`);
    if (answer !== 'ok') throw new Error('ideserve: ' + answer);
  }

  async close() {
    if (this.proc.exitCode === null) {
      const exited = new Promise((resolve) => this.proc.once('exit', resolve));
      this.proc.stdin.end();
      await exited;
    }
    fs.rmSync(this.tmp, { recursive: true, force: true });
  }
}

module.exports.HeadlessIDE = HeadlessIDE;

/** Returns gopls: $GOPLS (make sets it), PATH, or $(go env GOPATH)/bin. */
function findGopls() {
  const { execFileSync } = require('node:child_process');
  if (process.env.GOPLS) return process.env.GOPLS;
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    const p = path.join(dir, 'gopls');
    if (dir && fs.existsSync(p)) return p;
  }
  const gopath = execFileSync('go', ['env', 'GOPATH'], { encoding: 'utf8' }).trim();
  const p = path.join(gopath, 'bin', 'gopls');
  if (fs.existsSync(p)) return p;
  throw new Error('gopls not found: run `make tools` or set GOPLS');
}

module.exports.findGopls = findGopls;
