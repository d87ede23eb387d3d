// Exit 0 when node_modules matches package-lock.json, 1 when `npm ci` is due.
// npm writes node_modules/.package-lock.json (its "hidden lockfile") after
// an install; it lists what is installed, without the root entry and without
// optional packages skipped for this platform. So: every installed entry must
// be the locked one (version and integrity), and every non-optional locked
// entry must be installed.
'use strict';
const fs = require('fs');
const path = require('path');
const read = (f) => JSON.parse(fs.readFileSync(path.join(__dirname, f), 'utf8')).packages || {};
let want, have;
try {
  want = read('package-lock.json');
  have = read('node_modules/.package-lock.json');
} catch (e) {
  process.exit(1);
}
for (const [k, v] of Object.entries(have)) {
  const w = want[k];
  if (!w || w.version !== v.version || w.integrity !== v.integrity) process.exit(1);
  if (!fs.existsSync(path.join(__dirname, k, 'package.json'))) process.exit(1);
}
for (const [k, w] of Object.entries(want)) {
  if (k !== '' && !w.optional && !have[k]) process.exit(1);
}
process.exit(0);
