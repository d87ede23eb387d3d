// Tool-call latency of `idebridge mcp` on gopls, stdio against Streamable
// HTTP, through the official TypeScript SDK 1.x client: warm hover and
// definition, median and p90 of N calls each. Not part of `make test`:
//   IDEBRIDGE_BIN=build/idebridge-mcptest node tools/mcptest/bench.mjs [N]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const bin = process.env.IDEBRIDGE_BIN;
const n = Number(process.argv[2] || 300);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idb-bench-'));
fs.writeFileSync(path.join(dir, 'go.mod'), 'module example.com/m\n\ngo 1.22\n');
fs.writeFileSync(path.join(dir, 'greet.go'), 'package main\n\n// greet says hello.\nfunc greet(name string) string { return "hi " + name }\n');
fs.writeFileSync(path.join(dir, 'main.go'), 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println(greet("a"), greet("b"))\n}\n');
const env = { PATH: process.env.PATH, HOME: dir, CLAUDE_CONFIG_DIR: path.join(dir, 'c'), GOPLSCACHE: path.join(dir, 'gc'), GOPROXY: 'off' };

async function measure(client) {
  const out = {};
  for (const [name, args] of [['hover', { file: 'main.go', line: 6, symbol: 'greet', occurrence: 1 }],
    ['definition', { file: 'main.go', line: 6, symbol: 'greet', occurrence: 2 }]]) {
    for (let i = 0; i < 20; i++) await client.callTool({ name, arguments: args }); // warm
    const t = [];
    for (let i = 0; i < n; i++) {
      const t0 = process.hrtime.bigint();
      await client.callTool({ name, arguments: args });
      t.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    t.sort((a, b) => a - b);
    out[name] = { p50: t[Math.floor(n / 2)].toFixed(3), p90: t[Math.floor(n * 0.9)].toFixed(3) };
  }
  return out;
}

const c1 = new Client({ name: 'bench', version: '1' });
await c1.connect(new StdioClientTransport({ command: bin, args: ['mcp', '--no-ide', '--project', dir], env, stderr: 'ignore' }));
const stdio = await measure(c1);
await c1.close();

const tokenFile = path.join(dir, 'ep.json');
const child = spawn(bin, ['mcp', '--no-ide', '--project', dir, '--http', '127.0.0.1:0', '--token-file', tokenFile], { env, stdio: 'ignore' });
while (!fs.existsSync(tokenFile)) await new Promise((r) => setTimeout(r, 50));
const ep = JSON.parse(fs.readFileSync(tokenFile, 'utf8'));
const c2 = new Client({ name: 'bench', version: '1' });
await c2.connect(new StreamableHTTPClientTransport(new URL(ep.url), { requestInit: { headers: { Authorization: `Bearer ${ep.authToken}` } } }));
const http = await measure(c2);
await c2.close();
child.kill('SIGTERM');
for (const k of Object.keys(stdio)) {
  console.log(`${k}: stdio p50 ${stdio[k].p50} ms p90 ${stdio[k].p90} ms; HTTP p50 ${http[k].p50} ms p90 ${http[k].p90} ms; HTTP/stdio p50 ${(http[k].p50 / stdio[k].p50).toFixed(2)}x`);
}
