const idebridge = require('idebridge');

const NEW = 'package main\n\nfunc main() {\n\tfromNode()\n}\n';

(async () => {
  const ide = await idebridge.IDEClient.connect({ timeoutMs: 10000 }); // the IDE whose workspace holds this directory
  try {
    const before = await ide.snapshotDiagnostics('main.go');
    const res = await ide.proposeEdit('main.go', NEW, { signal: AbortSignal.timeout(600000) });
    console.log(res.status, res.written); // accepted true
    console.log((await ide.newDiagnostics(before)).rendered); // <new-diagnostics> ... undefined: fromNode
  } finally {
    ide.close();
  }
})();
