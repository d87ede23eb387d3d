"""Type-checks the Python package's annotations as an agent uses them
(bindings/test/run.sh runs pyright on it against the installed package);
never run."""

import asyncio
from typing import List, Optional

import idebridge
from idebridge import aio


def sync_use() -> None:
    with idebridge.IDEClient.connect(timeout=1.5, call_timeout=2.0) as ide:
        res: idebridge.EditResult = ide.propose_edit("a", "b", base=idebridge.file_state("a"))
        st: idebridge.EditStatus = res.status
        snap: idebridge.DiagnosticsSnapshot = ide.snapshot_diagnostics("a")
        news: idebridge.NewDiagnostics = ide.new_diagnostics(snap, project_dir=".")
        files: List[idebridge.FileDiagnostics] = ide.get_diagnostics()
        sev: idebridge.Severity = files[0].diagnostics[0].severity
        n: int = ide.cancel_all_edits()
        note: Optional[idebridge.Notification] = ide.next_notification(0.1)
        print(st, news.rendered, sev, n, note)
    with idebridge.LSPManager({}, ".", quiet_period=0.3, safe_mode=True) as mgr:
        r: idebridge.SettleResult = mgr.settle("x")
        att: Optional[idebridge.Attachment] = mgr.drain()
        problems: List[str] = mgr.reload({})
        print(r.elapsed + 1.0, r.freshness.fresh, att.render() if att else "", problems)
        refs: idebridge.NavLocations = mgr.references(path="x", line=1, symbol="f", include_declaration=True)
        first: idebridge.NavLocation = refs.locations[0]
        hov: idebridge.NavHover = mgr.hover(path="x", line=1, column=2)
        syms: idebridge.NavSymbols = mgr.document_symbols(path="x")
        calls: idebridge.NavCallHierarchy = mgr.incoming_calls(path="x", line=1, symbol="f")
        sub: idebridge.NavTypeHierarchy = mgr.subtypes(path="x", line=1, symbol="T")
        sub_first: idebridge.NavTypeItem = sub.types[0]
        page: idebridge.NavLocations = mgr.references(path="x", line=1, symbol="f", offset=100, limit=100)
        print(sub_first.name, sub_first.location.line, page.total, page.offset)
        proposal: idebridge.NavRenameProposal = mgr.rename(path="x", line=1, symbol="f", new_name="g")
        applied: idebridge.NavRenameApplied = mgr.apply_rename(proposal)
        print(first.line, first.end_column, refs.incomplete, hov.markdown, len(syms.symbols),
              calls.calls[0].item.name, applied.files[0].status, proposal.files[0].new_text)
        with mgr.edit_set() as es:
            staged: List[str] = es.stage([{"file": "x", "old_string": "a", "new_string": "b"}], timeout=60)
            check: idebridge.EditCheck = es.check()
            cf: idebridge.EditCheckFile = check.files[0]
            diff: str = es.diff()
            done: idebridge.EditApplied = es.apply()
            print(staged, cf.introduced[0].message, diff, done.check.introduced if done.check else done.check_error)
        acts: idebridge.CodeActions = mgr.code_actions(path="x", line=3)
        act: idebridge.CodeAction = acts.actions[0]
        src: idebridge.SymbolSource = mgr.symbol_source(path="x", symbol="main")
        print(act.title, src.end_line)
    try:
        pass
    except idebridge.ToolError as e:
        print(e.code)
    except idebridge.ConflictError as e:
        print(e.result.text)


async def async_use() -> None:
    async with await aio.IDEClient.connect(timeout=1) as ide:
        res: idebridge.EditResult = await ide.propose_edit("a", "b")
        cands: List[idebridge.Candidate] = await aio.discover()
        print(res, cands, ide.info().server_info.name)
    async with aio.LSPManager({}, ".") as mgr:
        await mgr.open("x")
        defs: idebridge.NavLocations = await mgr.definition(path="x", line=1, symbol="f")
        print(defs.text)
        async with mgr.edit_set() as aes:
            await aes.stage([{"file": "x", "new_text": ""}])
            achk: idebridge.EditCheck = await aes.check()
            print(achk.text)
            await aes.free(timeout=1)
        await mgr.shutdown(timeout=1)
    ide2 = await aio.IDEClient.connect(timeout=1)
    await ide2.close()
