// Type-checks the Node package's index.d.ts as a TypeScript agent uses it
// (bindings/test/run.sh compiles it with tsc --noEmit --strict).
import * as idebridge from 'idebridge';

async function agentTurn(signal: AbortSignal): Promise<string> {
  const cands: idebridge.Candidate[] = await idebridge.discover({ timeoutMs: 1000, signal });
  const decision: idebridge.AutoConnectDecision = idebridge.shouldAutoConnect({ requested: true });
  const found: idebridge.IDEWaitResult = await idebridge.waitForIde({ pollIntervalMs: 100, timeoutMs: 1000 });
  const ide: idebridge.IDEClient = await idebridge.IDEClient.connect({ port: found.candidate.port, callTimeoutMs: 5000, signal });
  try {
    const cancelled: number = await ide.cancelAllEdits({ signal });
    const before: idebridge.DiagnosticsSnapshot = await ide.snapshotDiagnostics('main.go');
    const res: idebridge.EditResult = await ide.proposeEdit('main.go', 'package main\n', { tabName: 't', signal });
    const status: idebridge.EditStatus = res.status;
    const news: idebridge.NewDiagnostics = await ide.newDiagnostics(before, { projectDir: '.' });
    const tools: idebridge.Tool[] = ide.toolsSync(1000);
    const result: idebridge.ToolResult = await ide.call('getDiagnostics', {}, { timeoutMs: 1000, signal });
    const note: idebridge.Notification | null = await ide.nextNotification({ timeoutMs: 10 });
    const files: idebridge.FileDiagnostics[] = await ide.getDiagnostics();
    return [cands.length, decision.why, cancelled, status, news.rendered, tools.length, result.content.length, note?.method, files.length].join(' ');
  } catch (e) {
    if (e instanceof idebridge.ConflictError) return e.result.text + e.conflict.message;
    if (e instanceof idebridge.ToolError) return String(e.code);
    throw e;
  } finally {
    ide.close();
  }
}

async function language(): Promise<idebridge.Attachment | null> {
  const mgr = new idebridge.LSPManager({ gopls: { command: 'gopls', extensionToLanguage: { '.go': 'go' } } }, '.', { quietPeriodMs: 300, safeMode: false });
  await mgr.open('main.go');
  const settled: idebridge.SettleResult = await mgr.settle('main.go', { timeoutMs: 5000 });
  const problems: string[] = await mgr.reload({});
  const att = mgr.drain();
  if (att) console.log(idebridge.renderAttachment(att, { maxChars: 4000 }), settled.freshness, problems);
  const es: idebridge.EditSet = mgr.editSet();
  const items: idebridge.EditItem[] = [{ file: 'main.go', old_string: 'a', new_string: 'b' }, { file: 'main.go', symbol: 'main', action: 'delete', force: true }];
  const staged: string[] = await es.stage(items, { timeoutMs: 60000 });
  const check: idebridge.EditCheck = await es.check();
  const file: idebridge.EditCheckFile = check.files[0];
  const diff: string = es.diff();
  const applied: idebridge.EditApplied = es.applySync();
  const acts: idebridge.CodeActions = await mgr.codeActions({ path: 'main.go', line: 3 });
  const first: idebridge.CodeAction = acts.actions[0];
  const src: idebridge.SymbolSource = mgr.symbolSourceSync({ path: 'main.go', symbol: 'main' });
  console.log(staged, file.introduced[0].message, diff, applied.check?.introduced, applied.checkError, first.title, src.endLine);
  await es.free({ timeoutMs: 1000 });
  await mgr[Symbol.asyncDispose]();
  return att;
}

const reg = new idebridge.Registry({ maxPerFile: 10 });
reg.publish('gopls', { uri: 'file:///p/main.go', diagnostics: [] });
const edit: idebridge.EditResult = idebridge.applyEdit('x.go', 'package x\n', { base: idebridge.fileState('x.go') });
reg.close();
void agentTurn(AbortSignal.timeout(1000));
void language();
void edit;
