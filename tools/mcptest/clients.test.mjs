// The official MCP clients against `idebridge mcp` on a real gopls, from
// outside the checkout: the TypeScript SDK 1.x client (legacy era,
// initialize) and @modelcontextprotocol/client 2.x negotiating the
// 2026-07-28 era, each over stdio and over Streamable HTTP.
//
// IDEBRIDGE_BIN is the built command; gopls must be on PATH.
// Run: node --test tools/mcptest/ (the Makefile's mcp-clients-test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as Stdio1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as HTTP1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as Client2, StreamableHTTPClientTransport as HTTP2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as Stdio2 } from '@modelcontextprotocol/client/stdio';

const bin = process.env.IDEBRIDGE_BIN;
if (!bin) throw new Error('IDEBRIDGE_BIN must name the built idebridge command');

// A Go module: main.go has an unused variable and calls greet twice.
function module() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idb-mcptest-'));
  fs.writeFileSync(path.join(dir, 'go.mod'), 'module example.com/m\n\ngo 1.22\n');
  fs.writeFileSync(path.join(dir, 'greet.go'), 'package main\n\n// greet says hello.\nfunc greet(name string) string { return "hi " + name }\n');
  fs.writeFileSync(path.join(dir, 'main.go'), 'package main\n\nimport "fmt"\n\nfunc main() {\n\tunused := 1\n\tfmt.Println(greet("a"), greet("b"))\n}\n');
  return dir;
}

function env(home) {
  return {
    PATH: process.env.PATH,
    HOME: home,
    CLAUDE_CONFIG_DIR: path.join(home, 'claude'),
    GOPLSCACHE: path.join(home, 'goplscache'),
    GOCACHE: process.env.GOCACHE || path.join(os.tmpdir(), 'idebridge-test-gocache'),
    GOPATH: process.env.GOPATH || path.join(os.homedir(), 'go'),
    GOPROXY: 'off',
    GOFLAGS: '-mod=mod',
    // idebridge mcp over stdio serves through the shared runtime: one of
    // the test's own, stopped at its end.
    IDEBRIDGE_RUNTIME_DIR: path.join(home, 'runtime'),
  };
}

// stopRuntime stops the test's runtime, which must have served it.
function stopRuntime(home) {
  const r = spawnSync(bin, ['runtime', 'stop'], { env: env(home), encoding: 'utf8', timeout: 60000 });
  assert.equal(r.status, 0, `idebridge runtime stop: ${r.stdout}${r.stderr}`);
}

// startHTTP runs `idebridge mcp --http` and returns its URL, token and a
// stop function, once the token file exists.
async function startHTTP(dir, home) {
  const tokenFile = path.join(home, 'endpoint.json');
  const child = spawn(bin, ['mcp', '--no-ide', '--project', dir, '--http', '127.0.0.1:0', '--token-file', tokenFile],
    { env: env(home), stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (b) => { stderr += b; });
  for (let i = 0; i < 600 && !(fs.existsSync(tokenFile) && stderr.includes('\n')); i++) {
    if (child.exitCode !== null) throw new Error(`idebridge mcp exited ${child.exitCode}: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const ep = JSON.parse(fs.readFileSync(tokenFile, 'utf8'));
  assert.equal(fs.statSync(tokenFile).mode & 0o777, 0o600);
  assert.match(stderr.split('\n')[0], new RegExp(`bearer token in ${tokenFile}`));
  return {
    url: new URL(ep.url), token: ep.authToken,
    stop: () => new Promise((resolve) => { child.on('exit', resolve); child.kill('SIGTERM'); }),
  };
}

const text = (res) => res.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');

// exercise lists the tools and calls diagnostics, hover and definition.
async function exercise(client) {
  // Every client asks diagnostics for progress: the first wait on gopls
  // reports it (over stdio as a notification, over HTTP on an event stream).
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const n of ['diagnostics', 'hover', 'definition', 'references']) assert.ok(names.includes(n), `tools/list lacks ${n}: ${names}`);
  const again = await client.listTools();
  assert.deepEqual(again.tools.map((t) => t.name), names, 'tools/list is deterministic');

  const progress = [];
  const params = { name: 'diagnostics', arguments: { files: ['main.go', 'greet.go'] } };
  const opts = { onprogress: (p) => progress.push(p) };
  // 1.x takes a result schema before the options; 2.x the options alone.
  const call = () => (progress.length = 0, client instanceof Client1 ? client.callTool(params, undefined, opts) : client.callTool(params, opts));
  let diag = await call();
  const first = [...progress]; // the first call's waits reported progress
  // A cold gopls on a loaded machine may not publish within the tool's
  // bound; the answer says so ("no publish ... within"), and asking again
  // is what a client does with an answer it is told is incomplete.
  for (let i = 0; i < 3 && /no publish for it from gopls within/.test(text(diag)); i++) diag = await call();
  assert.ok(!diag.isError, text(diag));
  assert.match(text(diag), /main\.go:\n {2}✘ \[Line 6:2\] declared and not used: unused/);
  assert.match(text(diag), /No diagnostics in greet\.go\./);
  assert.ok(first.length > 0, 'diagnostics reported no progress');
  for (let i = 1; i < progress.length; i++) assert.ok(progress[i].progress > progress[i - 1].progress, 'progress increases');

  const hover = await client.callTool({ name: 'hover', arguments: { file: 'main.go', line: 7, symbol: 'greet', occurrence: 1 } });
  assert.ok(!hover.isError, text(hover));
  assert.match(text(hover), /func greet\(name string\) string/);
  assert.match(text(hover), /greet says hello/);

  const def = await client.callTool({ name: 'definition', arguments: { file: 'main.go', line: 7, symbol: 'greet', occurrence: 2 } });
  assert.ok(!def.isError, text(def));
  assert.match(text(def), /greet\.go:4:6: func greet\(name string\) string/);
}

const info = { name: 'idebridge-mcptest', version: '1.0.0' };

test('SDK 1.x client, stdio (legacy era)', async () => {
  const dir = module();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'idb-home-'));
  const client = new Client1(info);
  await client.connect(new Stdio1({ command: bin, args: ['mcp', '--no-ide', '--project', dir], env: env(home), stderr: 'ignore' }));
  assert.equal(client.getServerVersion().name, 'idebridge');
  await exercise(client);
  await client.close();
  stopRuntime(home);
});

test('SDK 1.x client, Streamable HTTP (legacy era, a session)', async () => {
  const dir = module();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'idb-home-'));
  const srv = await startHTTP(dir, home);
  try {
    const transport = new HTTP1(srv.url, { requestInit: { headers: { Authorization: `Bearer ${srv.token}` } } });
    const client = new Client1(info);
    await client.connect(transport);
    assert.ok(transport.sessionId, 'the server gave a session id');
    await exercise(client);
    await transport.terminateSession();
    await client.close();
  } finally {
    await srv.stop();
  }
});

test('2.x client, stdio (2026-07-28 era, negotiated)', async () => {
  const dir = module();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'idb-home-'));
  const client = new Client2(info, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new Stdio2({ command: bin, args: ['mcp', '--no-ide', '--project', dir], env: env(home), stderr: 'ignore' }));
  assert.equal(client.getProtocolEra(), 'modern');
  assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
  await exercise(client);
  await client.close();
  stopRuntime(home);
});

test('2.x client, Streamable HTTP (2026-07-28 era, negotiated)', async () => {
  const dir = module();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'idb-home-'));
  const srv = await startHTTP(dir, home);
  try {
    const client = new Client2(info, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new HTTP2(srv.url, { requestInit: { headers: { Authorization: `Bearer ${srv.token}` } } }));
    assert.equal(client.getProtocolEra(), 'modern');
    assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
    await exercise(client);
    await client.close();
  } finally {
    await srv.stop();
  }
});

// startRuntimeHTTP runs the shared runtime with a loopback TCP endpoint
// (`idebridge runtime serve --http`) and returns the project's URL and the
// token `idebridge runtime http --json` gives, and a stop function.
async function startRuntimeHTTP(dir, home) {
  const child = spawn(bin, ['runtime', 'serve', '--http', '127.0.0.1:0'], { env: env(home), stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (b) => { stderr += b; });
  let ep;
  for (let i = 0; i < 600 && !ep; i++) {
    if (child.exitCode !== null) throw new Error(`idebridge runtime serve exited ${child.exitCode}: ${stderr}`);
    const r = spawnSync(bin, ['runtime', 'http', '--json', '--project', dir], { env: env(home), encoding: 'utf8' });
    if (r.status === 0) ep = JSON.parse(r.stdout);
    else await new Promise((res) => setTimeout(res, 50));
  }
  assert.ok(ep && ep.url && ep.token, `no HTTP endpoint: ${stderr}`);
  return {
    url: new URL(ep.url), token: ep.token,
    status: () => JSON.parse(spawnSync(bin, ['runtime', 'status', '--json'], { env: env(home), encoding: 'utf8' }).stdout),
    stop: () => new Promise((resolve) => { child.on('exit', resolve); child.kill('SIGTERM'); }),
  };
}

test('SDK 1.x client, Streamable HTTP straight to the shared runtime (legacy era)', async () => {
  const dir = module();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'idb-home-'));
  const rt = await startRuntimeHTTP(dir, home);
  try {
    const transport = new HTTP1(rt.url, { requestInit: { headers: { Authorization: `Bearer ${rt.token}` } } });
    const client = new Client1(info);
    await client.connect(transport);
    assert.ok(transport.sessionId, 'the runtime gave a session id');
    await exercise(client);
    const st = rt.status();
    assert.equal(st.sessions, 1, JSON.stringify(st));
    assert.equal(st.projects[0].sessions[0].client, `${info.name} ${info.version}`);
    await transport.terminateSession();
    assert.equal(rt.status().sessions, 0, 'DELETE ends the runtime session');
    await client.close();
  } finally {
    await rt.stop();
  }
});

test('2.x client, Streamable HTTP straight to the shared runtime (2026-07-28 era)', async () => {
  const dir = module();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'idb-home-'));
  const rt = await startRuntimeHTTP(dir, home);
  try {
    const client = new Client2(info, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new HTTP2(rt.url, { requestInit: { headers: { Authorization: `Bearer ${rt.token}` } } }));
    assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
    await exercise(client);
    await client.close();
  } finally {
    await rt.stop();
  }
});
