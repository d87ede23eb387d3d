// A minimal fs.globSync for Node 20: "*" within a path segment, "**" for
// any depth; enough for the conformance runner's file lookups.
import fs from 'node:fs';
import path from 'node:path';

export function __idbGlob(pattern, opts = {}) {
  const cwd = opts.cwd ? String(opts.cwd) : process.cwd();
  const abs = path.isAbsolute(pattern);
  const parts = pattern.split('/').filter((p, i) => p !== '' || i === 0);
  const toRe = (seg) => new RegExp('^' + seg.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]') + '$');
  const out = [];
  const walk = (dir, rel, i) => {
    if (i === parts.length) { out.push(abs ? dir : rel); return; }
    const seg = parts[i];
    if (seg === '**') {
      walk(dir, rel, i + 1);
      let ents = [];
      try { ents = fs.readdirSync(dir, { withFileTypes: true }); } catch { return; }
      for (const e of ents) if (e.isDirectory()) walk(path.join(dir, e.name), rel ? rel + '/' + e.name : e.name, i);
      return;
    }
    if (!/[*?]/.test(seg)) {
      const next = path.join(dir, seg);
      if (fs.existsSync(next)) walk(next, rel ? rel + '/' + seg : seg, i + 1);
      return;
    }
    let ents = [];
    try { ents = fs.readdirSync(dir); } catch { return; }
    const re = toRe(seg);
    for (const name of ents) if (re.test(name)) walk(path.join(dir, name), rel ? rel + '/' + name : name, i + 1);
  };
  walk(abs ? '/' : cwd, '', abs ? 1 : 0);
  return [...new Set(out)];
}
