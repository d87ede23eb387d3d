// Node 20 (Debian's) lacks fs.globSync, which the conformance runner
// imports (Node 22 has it). This hook gives the runner a minimal globSync,
// so the pinned runner runs on the Node the machine has. Used only by
// conformance.test.mjs, as `node --import ./node20.mjs`.
import { register } from 'node:module';

register('data:text/javascript,' + encodeURIComponent(`
export async function load(url, context, next) {
  const r = await next(url, context);
  if (url.includes('@modelcontextprotocol/conformance/dist/') && r.source) {
    const src = String(r.source);
    if (src.includes('globSync as ')) {
      const m = src.match(/globSync as ([A-Za-z_$][\\w$]*),?/);
      const out = src.replace(m[0], '').replace(/import\\{,/, 'import{') +
        '\\nfunction ' + m[1] + '(pattern, opts = {}) { return __idbGlob(pattern, opts); }\\n' +
        'import { __idbGlob } from ' + JSON.stringify(${JSON.stringify(new URL('./globsync.mjs', import.meta.url).href)}) + ';\\n';
      return { ...r, source: out };
    }
  }
  return r;
}
`));
