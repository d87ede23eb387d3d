"""The typed results of idebridge: dataclasses and enums.

Each is made from the JSON the library returns (the same JSON the
idebridge command line prints with --json); ``raw`` keeps that JSON, and
objects the library takes back (an attachment to render, a file state as
an edit's base, a diagnostics snapshot) are sent back exactly as they came.
Durations are in seconds, as floats.
"""

import enum
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from . import IdebridgeError

__all__ = [
    "AutoConnectDecision",
    "Attachment",
    "Candidate",
    "CodeAction",
    "CodeActions",
    "ConflictError",
    "Content",
    "DiagnosedFile",
    "Diagnosis",
    "Diagnostic",
    "DiagnosticsSnapshot",
    "EditApplied",
    "EditCheck",
    "EditCheckFile",
    "EditConflict",
    "EditResult",
    "EditStatus",
    "FileDiagnostics",
    "FileState",
    "Freshness",
    "IDEInfo",
    "IDEWaitResult",
    "LSPServerStatus",
    "Lockfile",
    "NavAnswer",
    "NavCall",
    "NavCallHierarchy",
    "NavCallItem",
    "NavHover",
    "NavLocation",
    "NavLocations",
    "NavRenameApplied",
    "NavRenameFile",
    "NavRenameFileOutcome",
    "NavRenameProposal",
    "NavSymbol",
    "NavSymbols",
    "NavTypeHierarchy",
    "NavTypeItem",
    "NewDiagnostics",
    "Notification",
    "Position",
    "Range",
    "ServerInfo",
    "SettleResult",
    "Severity",
    "SymbolSource",
    "Tool",
    "ToolResult",
]


class _OpenStrEnum(str, enum.Enum):
    """A string enum that keeps a value it does not know (a newer library,
    a newer IDE) as a pseudo-member instead of failing."""

    @classmethod
    def _missing_(cls, value: object) -> Any:
        if not isinstance(value, str):
            return None
        member = str.__new__(cls, value)
        member._name_ = value.upper().replace("-", "_")
        member._value_ = value
        return member

    def __str__(self) -> str:
        return str(self.value)


class Severity(enum.IntEnum):
    """A diagnostic's severity, as LSP numbers it."""

    ERROR = 1
    WARNING = 2
    INFORMATION = 3
    HINT = 4


class EditStatus(_OpenStrEnum):
    """What became of an edit."""

    #: The user accepted (FILE_SAVED); the IDE's final text was written.
    ACCEPTED = "accepted"
    #: The user closed the diff tab (TAB_CLOSED); the proposal was written.
    TAB_CLOSED = "tab_closed"
    #: The user rejected the edit (DIFF_REJECTED), or it was cancelled.
    REJECTED = "rejected"
    #: The IDE answered something else; the file is untouched.
    NOT_ACCEPTED = "not_accepted"
    #: apply_edit wrote it without an IDE.
    APPLIED = "applied"


class Freshness(_OpenStrEnum):
    """How a settle knew the diagnostics are current, or that it did not."""

    UNKNOWN = "unknown"
    PUBLISHED = "published"
    PROGRESS_ENDED = "progress-ended"
    QUIET = "quiet"
    TIMED_OUT = "timed-out"
    PULLED = "pulled"

    @property
    def fresh(self) -> bool:
        """True when the diagnostics are known to be current."""
        return self in (Freshness.PUBLISHED, Freshness.PROGRESS_ENDED, Freshness.QUIET, Freshness.PULLED)


def _raw() -> Any:
    return field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class Position:
    """A zero-based LSP position (character in UTF-16 units)."""

    line: int
    character: int

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "Position":
        return cls(int(v.get("line", 0)), int(v.get("character", 0)))


@dataclass(frozen=True)
class Range:
    """An LSP range, end exclusive."""

    start: Position
    end: Position

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "Range":
        return cls(Position._from(v.get("start") or {}), Position._from(v.get("end") or {}))


@dataclass
class Diagnostic:
    """One diagnostic: LSP's shape, its code always text."""

    range: Range
    severity: Severity
    message: str
    code: Optional[str] = None
    source: Optional[str] = None
    code_description: Optional[str] = None
    tags: List[int] = field(default_factory=list)
    related_information: List[Dict[str, Any]] = field(default_factory=list)
    raw: Any = _raw()

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "Diagnostic":
        sev = v.get("severity") or 1
        return cls(
            range=Range._from(v.get("range") or {}),
            severity=Severity(sev) if sev in (1, 2, 3, 4) else Severity.ERROR,
            message=v.get("message", ""),
            code=v.get("code"),
            source=v.get("source"),
            code_description=v.get("codeDescription"),
            tags=list(v.get("tags") or []),
            related_information=list(v.get("relatedInformation") or []),
            raw=v,
        )

    def _to_json(self) -> Any:
        return self.raw


@dataclass
class FileDiagnostics:
    """The diagnostics of one document."""

    uri: str
    path: Optional[str]
    diagnostics: List[Diagnostic]
    #: Diagnostics of this file left out by the limits (attachments).
    cut: int = 0
    raw: Any = _raw()

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "FileDiagnostics":
        return cls(
            uri=v.get("uri", ""),
            path=v.get("path") or None,
            diagnostics=[Diagnostic._from(d) for d in v.get("diagnostics") or []],
            cut=int(v.get("cut") or 0),
            raw=v,
        )


@dataclass
class Attachment:
    """What a drain hands out: the new diagnostics, deduplicated, sorted and
    bounded. render() gives the model-facing block."""

    servers: List[str]
    files: List[FileDiagnostics]
    #: All new diagnostics left out by the limits.
    cut: int
    notes: List[str]
    raw: Any = _raw()

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "Attachment":
        return cls(
            servers=list(v.get("servers") or []),
            files=[FileDiagnostics._from(f) for f in v.get("files") or []],
            cut=int(v.get("cut") or 0),
            notes=list(v.get("notes") or []),
            raw=v,
        )

    def _to_json(self) -> Any:
        return self.raw

    def count(self) -> int:
        """The number of diagnostics in the attachment."""
        return sum(len(f.diagnostics) for f in self.files)

    def render(self, project_dir: Optional[str] = None, tag: Optional[str] = None, max_chars: Optional[int] = None) -> str:
        """The <new-diagnostics> block (see idebridge.render_attachment)."""
        from . import render_attachment

        return render_attachment(self, project_dir=project_dir, tag=tag, max_chars=max_chars)


@dataclass
class Lockfile:
    """A parsed IDE lockfile."""

    port: int
    workspace_folders: List[str]
    transport: str
    pid: int = 0
    ide_name: str = ""
    running_in_windows: bool = False
    auth_token: str = ""
    legacy: bool = False
    path: str = ""
    raw: Any = _raw()

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "Lockfile":
        return cls(
            port=int(v.get("port", 0)),
            workspace_folders=list(v.get("workspaceFolders") or []),
            transport=v.get("transport", ""),
            pid=int(v.get("pid") or 0),
            ide_name=v.get("ideName", ""),
            running_in_windows=bool(v.get("runningInWindows")),
            auth_token=v.get("authToken", ""),
            legacy=bool(v.get("legacy")),
            path=v.get("path", ""),
            raw=v,
        )


@dataclass
class Candidate:
    """One lockfile found by discovery, usable or not, with the reasons."""

    port: int
    ide_name: str
    transport: str
    workspace_folders: List[str]
    pid: int
    #: Where to connect: ws://host:port/ or http://host:port/sse.
    url: str
    #: True when every check passed.
    valid: bool
    #: Machine-readable reasons why it is not usable ("workspace_mismatch", ...).
    reasons: List[str]
    #: One human sentence: why it is or is not usable.
    message: str
    path: str
    running_in_windows: bool = False
    raw: Any = _raw()

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "Candidate":
        return cls(
            port=int(v.get("port", 0)),
            ide_name=v.get("ideName", ""),
            transport=v.get("transport", ""),
            workspace_folders=list(v.get("workspaceFolders") or []),
            pid=int(v.get("pid") or 0),
            url=v.get("url", ""),
            valid=bool(v.get("valid")),
            reasons=list(v.get("reasons") or []),
            message=v.get("message", ""),
            path=v.get("path", ""),
            running_in_windows=bool(v.get("runningInWindows")),
            raw=v,
        )


@dataclass
class ServerInfo:
    """The IDE's serverInfo."""

    name: str
    version: str
    title: Optional[str] = None


@dataclass
class IDEInfo:
    """What the IDE said about itself in the MCP handshake."""

    server_info: ServerInfo
    protocol_version: str
    instructions: Optional[str] = None
    capabilities: Dict[str, Any] = field(default_factory=dict)
    raw: Any = _raw()

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "IDEInfo":
        si = v.get("serverInfo") or {}
        return cls(
            server_info=ServerInfo(si.get("name", ""), si.get("version", ""), si.get("title")),
            protocol_version=v.get("protocolVersion", ""),
            instructions=v.get("instructions"),
            capabilities=dict(v.get("capabilities") or {}),
            raw=v,
        )


@dataclass
class Tool:
    """One tool the IDE offers."""

    name: str
    title: Optional[str] = None
    description: Optional[str] = None
    input_schema: Optional[Dict[str, Any]] = None
    output_schema: Optional[Dict[str, Any]] = None
    annotations: Optional[Dict[str, Any]] = None
    raw: Any = _raw()

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "Tool":
        return cls(
            name=v.get("name", ""),
            title=v.get("title"),
            description=v.get("description"),
            input_schema=v.get("inputSchema"),
            output_schema=v.get("outputSchema"),
            annotations=v.get("annotations"),
            raw=v,
        )


@dataclass
class Content:
    """One content block of a tool result."""

    type: str
    text: Optional[str] = None
    raw: Any = _raw()


@dataclass
class ToolResult:
    """A tools/call result. texts are its text blocks."""

    content: List[Content]
    structured_content: Any = None
    is_error: bool = False
    raw: Any = _raw()

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "ToolResult":
        return cls(
            content=[Content(c.get("type", ""), c.get("text"), c) for c in v.get("content") or []],
            structured_content=v.get("structuredContent"),
            is_error=bool(v.get("isError")),
            raw=v,
        )

    @property
    def texts(self) -> List[str]:
        """The texts of the text blocks, in order."""
        return [c.text for c in self.content if c.type == "text" and c.text is not None]


@dataclass
class Notification:
    """A notification from the IDE (selection_changed, at_mentioned, ...)."""

    method: str
    params: Any = None


@dataclass
class SettleResult:
    """The outcome of a settle: how the diagnostics are known to be current."""

    path: str
    uri: str
    server: str
    version: int
    freshness: Freshness
    #: The diagnostics are known to be current.
    fresh: bool
    #: Seconds the settle took.
    elapsed: float
    #: How the settle knew, or why it could not, in words.
    reason: str = ""
    #: "complete", "partial" (the server was still at work; reason says
    #: on what), "unknown" (nothing reported in time) or "server-down".
    #: Only "complete" means "no diagnostics" when there are none.
    status: str = ""
    raw: Any = _raw()

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "SettleResult":
        return cls(
            path=v.get("path", ""),
            uri=v.get("uri", ""),
            server=v.get("server", ""),
            version=int(v.get("version") or 0),
            freshness=Freshness(v.get("freshness", "unknown")),
            fresh=bool(v.get("fresh")),
            elapsed=int(v.get("elapsedNs") or 0) / 1e9,
            reason=v.get("reason", ""),
            status=v.get("status", ""),
            raw=v,
        )


@dataclass
class DiagnosedFile:
    """One file of LSPManager.diagnose: its server and settle, or why it
    could not be diagnosed."""

    path: str
    server: str = ""
    #: None when the file could not be opened or settled (see error).
    settle: Optional[SettleResult] = None
    error: str = ""
    #: The error is that no configured server serves the file.
    no_server: bool = False

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "DiagnosedFile":
        s = v.get("settle")
        return cls(
            path=v.get("path", ""),
            server=v.get("server", ""),
            settle=None if s is None else SettleResult._from(s),
            error=v.get("error", ""),
            no_server=bool(v.get("noServer")),
        )


@dataclass
class Diagnosis:
    """What LSPManager.diagnose answers: every diagnostic of the files that
    stands (None when there are none), and each file's outcome in the
    call's order. Say "no diagnostics" of a file only when its settle's
    status is "complete"."""

    attachment: Optional[Attachment]
    files: List[DiagnosedFile]
    raw: Any = _raw()

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "Diagnosis":
        a = v.get("attachment")
        return cls(
            attachment=None if a is None else Attachment._from(a),
            files=[DiagnosedFile._from(f) for f in v.get("files") or []],
            raw=v,
        )


@dataclass
class LSPServerStatus:
    """A snapshot of one configured language server."""

    name: str
    state: str
    restarts: int
    extensions: List[str]
    pid: int = 0
    position_encoding: Optional[str] = None

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "LSPServerStatus":
        return cls(
            name=v.get("name", ""),
            state=v.get("state", ""),
            restarts=int(v.get("restarts") or 0),
            extensions=list(v.get("extensions") or []),
            pid=int(v.get("pid") or 0),
            position_encoding=v.get("positionEncoding"),
        )


@dataclass
class FileState:
    """What a file looked like at one moment; pass it as an edit's base."""

    path: str
    exists: bool
    size: int
    #: RFC 3339.
    mod_time: str
    mode: int
    sha256: Optional[str] = None
    #: The file's identity (device and inode), opaque.
    id: Optional[str] = None
    raw: Any = _raw()

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "FileState":
        return cls(
            path=v.get("path", ""),
            exists=bool(v.get("exists")),
            size=int(v.get("size") or 0),
            mod_time=v.get("modTime", ""),
            mode=int(v.get("mode") or 0),
            sha256=v.get("sha256"),
            id=v.get("id"),
            raw=v,
        )

    def _to_json(self) -> Any:
        return self.raw


@dataclass
class EditConflict:
    """Why an edit was not written: the file changed on disk since its base."""

    message: str
    expected: FileState
    actual: FileState


@dataclass
class EditResult:
    """The outcome of an edit."""

    path: str
    status: EditStatus
    #: True when the file now holds text.
    written: bool
    #: What was written (or would have been, when a conflict stopped it).
    text: str
    bytes: int
    #: The user edited the proposal in the diff view before accepting it.
    user_modified: bool = False
    created: bool = False
    #: Ended by cancel_all_edits (status is then REJECTED).
    cancelled: bool = False
    via_ide: bool = False
    tab_name: Optional[str] = None
    #: The IDE's answer, for NOT_ACCEPTED.
    ide_answer: Optional[str] = None
    close_tab_error: Optional[str] = None
    conflict: Optional[EditConflict] = None
    raw: Any = _raw()

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "EditResult":
        c = v.get("conflict")
        return cls(
            path=v.get("path", ""),
            status=EditStatus(v.get("status", "")),
            written=bool(v.get("written")),
            text=v.get("text", ""),
            bytes=int(v.get("bytes") or 0),
            user_modified=bool(v.get("userModified")),
            created=bool(v.get("created")),
            cancelled=bool(v.get("cancelled")),
            via_ide=bool(v.get("viaIDE")),
            tab_name=v.get("tabName"),
            ide_answer=v.get("ideAnswer"),
            close_tab_error=v.get("closeTabError"),
            conflict=None
            if not c
            else EditConflict(c.get("message", ""), FileState._from(c.get("expected") or {}), FileState._from(c.get("actual") or {})),
            raw=v,
        )


class ConflictError(IdebridgeError):
    """An edit was not written because the file changed on disk since its
    base. result is the outcome (result.text is what would have been
    written); conflict says what changed."""

    def __init__(self, result: EditResult) -> None:
        assert result.conflict is not None
        super().__init__(result.conflict.message)
        self.result = result
        self.conflict = result.conflict


@dataclass
class DiagnosticsSnapshot:
    """A file's IDE diagnostics before an edit, with its text; give it back
    to IDEClient.new_diagnostics after the edit."""

    path: str
    uri: str
    text: str
    diagnostics: List[Diagnostic]
    #: RFC 3339.
    taken: str
    raw: Any = _raw()

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "DiagnosticsSnapshot":
        return cls(
            path=v.get("path", ""),
            uri=v.get("uri", ""),
            text=v.get("text", ""),
            diagnostics=[Diagnostic._from(d) for d in v.get("diagnostics") or []],
            taken=v.get("taken", ""),
            raw=v,
        )

    def _to_json(self) -> Any:
        return self.raw


@dataclass
class NewDiagnostics:
    """The diagnostics an edit introduced into one file."""

    path: str
    uri: str
    #: Most severe first, then by position.
    diagnostics: List[Diagnostic]
    #: Diagnostics that only moved with the lines around them.
    moved: int
    #: The <new-diagnostics> block; "" when nothing is new.
    rendered: str

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "NewDiagnostics":
        return cls(
            path=v.get("path", ""),
            uri=v.get("uri", ""),
            diagnostics=[Diagnostic._from(d) for d in v.get("diagnostics") or []],
            moved=int(v.get("moved") or 0),
            rendered=v.get("rendered", ""),
        )


@dataclass
class AutoConnectDecision:
    """Whether to connect to an IDE without being asked; true in a boolean
    context when so."""

    auto_connect: bool
    why: str

    def __bool__(self) -> bool:
        return self.auto_connect


@dataclass
class IDEWaitResult:
    """The only usable IDE, and every lockfile of the last look."""

    candidate: Candidate
    candidates: List[Candidate]


# Converters named by the export table (PyConv): decoded JSON in, typed out.


def _lockfile(v: Any) -> Lockfile:
    return Lockfile._from(v)


def _candidates(v: Any) -> List[Candidate]:
    return [Candidate._from(c) for c in v or []]


def _ide_info(v: Any) -> IDEInfo:
    return IDEInfo._from(v)


def _tools(v: Any) -> List[Tool]:
    return [Tool._from(t) for t in v or []]


def _tool_result(v: Any) -> ToolResult:
    return ToolResult._from(v)


def _notification(v: Any) -> Optional[Notification]:
    return None if v is None else Notification(v.get("method", ""), v.get("params"))


def _attachment(v: Any) -> Optional[Attachment]:
    return None if v is None else Attachment._from(v)


def _settle_result(v: Any) -> SettleResult:
    return SettleResult._from(v)


def _diagnosis(v: Any) -> Diagnosis:
    return Diagnosis._from(v)


def _server_statuses(v: Any) -> List[LSPServerStatus]:
    return [LSPServerStatus._from(s) for s in v or []]


def _edit_outcome(v: Any) -> EditResult:
    res = EditResult._from(v)
    if res.conflict is not None:
        raise ConflictError(res)
    return res


def _cancelled_count(v: Any) -> int:
    return int(v.get("cancelled") or 0)


def _file_state(v: Any) -> FileState:
    return FileState._from(v)


def _snapshot(v: Any) -> DiagnosticsSnapshot:
    return DiagnosticsSnapshot._from(v)


def _new_diagnostics(v: Any) -> NewDiagnostics:
    return NewDiagnostics._from(v)


def _file_diagnostics_list(v: Any) -> List[FileDiagnostics]:
    return [FileDiagnostics._from(f) for f in v or []]


def _auto_connect_decision(v: Any) -> AutoConnectDecision:
    return AutoConnectDecision(bool(v.get("autoConnect")), v.get("why", ""))


def _wait_result(v: Any) -> IDEWaitResult:
    return IDEWaitResult(Candidate._from(v.get("candidate") or {}), _candidates(v.get("candidates")))


def _removed(v: Any) -> List[str]:
    return list(v.get("removed") or [])


def _problems(v: Any) -> List[str]:
    return list(v.get("problems") or [])


# Navigation results (LSPManager.definition ... rename): dataclasses like
# every other result; lines and columns are 1-based, columns counted in
# characters. raw keeps the JSON (the same as idebridge lsp ... --json).


def _opt_location(v: Any) -> "Optional[NavLocation]":
    return None if not v else NavLocation._from(v)


@dataclass
class NavLocation:
    """A place a server answered with (Go: lsp.Location), the end exclusive."""

    #: The file's absolute path; "" for a URI that is not a file.
    path: str = ""
    uri: str = ""
    line: int = 0
    column: int = 0
    end_line: int = 0
    end_column: int = 0
    #: The source line at line, without its line break.
    text: str = ""

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "NavLocation":
        return cls(
            path=v.get("path", ""),
            uri=v.get("uri", ""),
            line=int(v.get("line") or 0),
            column=int(v.get("column") or 0),
            end_line=int(v.get("endLine") or 0),
            end_column=int(v.get("endColumn") or 0),
            text=v.get("text", ""),
        )


@dataclass
class NavAnswer:
    """What every navigation result says about how it was answered (Go:
    lsp.Answer). incomplete is true when the server had not finished
    loading the workspace: the result may be missing entries, and reason
    says why."""

    op: str = ""
    server: str = ""
    #: The result as a model reads it.
    text: str = ""
    #: The place asked about.
    at: Optional[NavLocation] = None
    incomplete: bool = False
    reason: str = ""
    #: "complete", or "partial" when incomplete.
    status: str = ""
    raw: Any = _raw()

    def _answer(self, v: Dict[str, Any]) -> None:
        self.op = v.get("op", "")
        self.server = v.get("server", "")
        self.text = v.get("text", "")
        self.at = _opt_location(v.get("at"))
        self.incomplete = bool(v.get("incomplete"))
        self.reason = v.get("reason", "")
        self.status = v.get("status", "")
        self.raw = v


@dataclass
class NavLocations(NavAnswer):
    """The result of definition, declaration, type_definition,
    implementation and references (Go: lsp.Locations): every location, or
    the page of them asked for with offset and limit."""

    locations: List[NavLocation] = field(default_factory=list)
    #: How many locations the whole answer has, exact even for a page.
    total: int = 0
    #: The 0-based index of locations[0] in the whole answer.
    offset: int = 0

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "NavLocations":
        locs = [NavLocation._from(x) for x in v.get("locations") or []]
        r = cls(locations=locs, total=int(v.get("total") or len(locs)), offset=int(v.get("offset") or 0))
        r._answer(v)
        return r


@dataclass
class NavHover(NavAnswer):
    """The result of hover (Go: lsp.Hover): markdown, and the range hovered
    when the server gave one."""

    markdown: str = ""
    range: Optional[NavLocation] = None

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "NavHover":
        r = cls(markdown=v.get("markdown", ""), range=_opt_location(v.get("range")))
        r._answer(v)
        return r


@dataclass
class NavSymbol:
    """A symbol (Go: lsp.Symbol); document symbols nest in children."""

    name: str = ""
    #: LSP's SymbolKind number.
    kind: int = 0
    location: NavLocation = field(default_factory=NavLocation)
    detail: str = ""
    container: str = ""
    end_line: int = 0
    children: List["NavSymbol"] = field(default_factory=list)

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "NavSymbol":
        return cls(
            name=v.get("name", ""),
            kind=int(v.get("kind") or 0),
            location=NavLocation._from(v.get("location") or {}),
            detail=v.get("detail", ""),
            container=v.get("container", ""),
            end_line=int(v.get("endLine") or 0),
            children=[NavSymbol._from(c) for c in v.get("children") or []],
        )


@dataclass
class NavSymbols(NavAnswer):
    """The result of document_symbols and workspace_symbols (Go: lsp.Symbols)."""

    path: str = ""
    query: str = ""
    symbols: List[NavSymbol] = field(default_factory=list)
    #: How many top-level symbols (workspace matches) the whole answer
    #: has, exact even for a page.
    total: int = 0
    #: The 0-based index of symbols[0] in the whole answer.
    offset: int = 0

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "NavSymbols":
        syms = [NavSymbol._from(x) for x in v.get("symbols") or []]
        r = cls(path=v.get("path", ""), query=v.get("query", ""), symbols=syms, total=int(v.get("total") or len(syms)), offset=int(v.get("offset") or 0))
        r._answer(v)
        return r


@dataclass
class NavCallItem:
    """A function or method of a call hierarchy (Go: lsp.CallItem)."""

    name: str = ""
    kind: int = 0
    location: NavLocation = field(default_factory=NavLocation)
    detail: str = ""

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "NavCallItem":
        return cls(
            name=v.get("name", ""),
            kind=int(v.get("kind") or 0),
            location=NavLocation._from(v.get("location") or {}),
            detail=v.get("detail", ""),
        )


@dataclass
class NavCall:
    """One caller or callee, with the call sites."""

    item: NavCallItem = field(default_factory=NavCallItem)
    sites: List[NavLocation] = field(default_factory=list)

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "NavCall":
        return cls(item=NavCallItem._from(v.get("item") or {}), sites=[NavLocation._from(x) for x in v.get("sites") or []])


@dataclass
class NavCallHierarchy(NavAnswer):
    """The result of prepare_call_hierarchy, incoming_calls and
    outgoing_calls (Go: lsp.CallHierarchy)."""

    items: List[NavCallItem] = field(default_factory=list)
    calls: List[NavCall] = field(default_factory=list)
    #: How many calls the whole answer has, exact even for a page.
    total: int = 0
    #: The 0-based index of calls[0] in the whole answer.
    offset: int = 0

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "NavCallHierarchy":
        calls = [NavCall._from(x) for x in v.get("calls") or []]
        r = cls(items=[NavCallItem._from(x) for x in v.get("items") or []], calls=calls, total=int(v.get("total") or len(calls)), offset=int(v.get("offset") or 0))
        r._answer(v)
        return r


@dataclass
class NavTypeItem:
    """A type of a type hierarchy (Go: lsp.TypeItem): a class, struct,
    interface or other type; kind is LSP's SymbolKind number."""

    name: str = ""
    kind: int = 0
    location: NavLocation = field(default_factory=NavLocation)
    detail: str = ""

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "NavTypeItem":
        return cls(
            name=v.get("name", ""),
            kind=int(v.get("kind") or 0),
            location=NavLocation._from(v.get("location") or {}),
            detail=v.get("detail", ""),
        )


@dataclass
class NavTypeHierarchy(NavAnswer):
    """The result of prepare_type_hierarchy, supertypes and subtypes (Go:
    lsp.TypeHierarchy): the type at the place (items) and its direct
    supertypes or subtypes (types)."""

    items: List[NavTypeItem] = field(default_factory=list)
    types: List[NavTypeItem] = field(default_factory=list)
    #: How many types the whole answer has, exact even for a page.
    total: int = 0
    #: The 0-based index of types[0] in the whole answer.
    offset: int = 0

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "NavTypeHierarchy":
        types = [NavTypeItem._from(x) for x in v.get("types") or []]
        r = cls(items=[NavTypeItem._from(x) for x in v.get("items") or []], types=types, total=int(v.get("total") or len(types)), offset=int(v.get("offset") or 0))
        r._answer(v)
        return r


@dataclass
class NavRenameFile:
    """One file of a rename proposal: its text now and as proposed, the
    number of edits, its unified diff, and the base the write checks."""

    path: str = ""
    edits: int = 0
    old_text: str = ""
    new_text: str = ""
    diff: str = ""
    base: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "NavRenameFile":
        return cls(
            path=v.get("path", ""),
            edits=int(v.get("edits") or 0),
            old_text=v.get("oldText", ""),
            new_text=v.get("newText", ""),
            diff=v.get("diff", ""),
            base=dict(v.get("base") or {}),
        )


@dataclass
class NavRenameProposal(NavAnswer):
    """The result of rename (Go: lsp.RenameProposal): nothing is written
    until it is passed to apply_rename, which sends it back as it came."""

    new_name: str = ""
    files: List[NavRenameFile] = field(default_factory=list)
    diff: str = ""

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "NavRenameProposal":
        r = cls(new_name=v.get("newName", ""), files=[NavRenameFile._from(x) for x in v.get("files") or []], diff=v.get("diff", ""))
        r._answer(v)
        return r

    def _to_json(self) -> Any:
        return self.raw


@dataclass
class NavRenameFileOutcome:
    """What apply_rename did with one file."""

    path: str = ""
    #: "written", "conflict" or "failed".
    status: str = ""
    error: str = ""

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "NavRenameFileOutcome":
        return cls(path=v.get("path", ""), status=v.get("status", ""), error=v.get("error", ""))


@dataclass
class NavRenameApplied:
    """The outcome of apply_rename (Go: lsp.RenameApplied)."""

    files: List[NavRenameFileOutcome] = field(default_factory=list)
    written: int = 0
    text: str = ""
    raw: Any = _raw()

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "NavRenameApplied":
        return cls(
            files=[NavRenameFileOutcome._from(x) for x in v.get("files") or []],
            written=int(v.get("written") or 0),
            text=v.get("text", ""),
            raw=v,
        )


def _nav_locations(v: Any) -> NavLocations:
    return NavLocations._from(v)


def _nav_hover(v: Any) -> NavHover:
    return NavHover._from(v)


def _nav_symbols(v: Any) -> NavSymbols:
    return NavSymbols._from(v)


def _nav_call_hierarchy(v: Any) -> NavCallHierarchy:
    return NavCallHierarchy._from(v)


def _nav_type_hierarchy(v: Any) -> NavTypeHierarchy:
    return NavTypeHierarchy._from(v)


def _nav_rename_proposal(v: Any) -> NavRenameProposal:
    return NavRenameProposal._from(v)


def _nav_rename_applied(v: Any) -> NavRenameApplied:
    return NavRenameApplied._from(v)


# Verified edits (EditSet, LSPManager.code_actions and symbol_source).
# Paths are absolute; raw keeps the JSON (the same as idebridge edit
# check --json, with text added).


@dataclass
class EditCheckFile:
    """What staged edits change in one file's diagnostics (Go:
    lsp.FileCheck): introduced diagnostics have the staged text's
    positions, resolved ones the disk's."""

    path: str = ""
    #: False for a file that depends on the edited ones.
    edited: bool = False
    #: The server that serves it; "" when none does.
    server: str = ""
    introduced: List[Diagnostic] = field(default_factory=list)
    resolved: List[Diagnostic] = field(default_factory=list)
    #: "complete", "partial", "unknown" or "server-down": how far the
    #: file's diagnostics, before and after, can be trusted.
    status: str = ""
    reason: str = ""

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "EditCheckFile":
        return cls(
            path=v.get("path", ""),
            edited=bool(v.get("edited")),
            server=v.get("server", ""),
            introduced=[Diagnostic._from(d) for d in v.get("introduced") or []],
            resolved=[Diagnostic._from(d) for d in v.get("resolved") or []],
            status=v.get("status", ""),
            reason=v.get("reason", ""),
        )


@dataclass
class EditCheck:
    """The check of an edit set (Go: lsp.EditCheck): per file, the
    diagnostics the staged edits introduce and resolve, the edited files
    first, then their dependents."""

    files: List[EditCheckFile] = field(default_factory=list)
    introduced: int = 0
    resolved: int = 0
    #: Dependents left out by the bound of 50 files checked.
    unchecked: int = 0
    #: The least trustworthy status of the files.
    status: str = ""
    #: The unified diff of the edits.
    diff: str = ""
    #: The check as a model reads it.
    text: str = ""
    raw: Any = _raw()

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "EditCheck":
        return cls(
            files=[EditCheckFile._from(f) for f in v.get("files") or []],
            introduced=int(v.get("introduced") or 0),
            resolved=int(v.get("resolved") or 0),
            unchecked=int(v.get("unchecked") or 0),
            status=v.get("status", ""),
            diff=v.get("diff", ""),
            text=v.get("text", ""),
            raw=v,
        )


@dataclass
class EditApplied:
    """What EditSet.apply wrote (Go: lsp.EditApplied)."""

    #: The files written, in the order first staged.
    written: List[str] = field(default_factory=list)
    #: What the write changed in the diagnostics; None when that check
    #: failed (check_error says why; the files are written all the same).
    check: Optional[EditCheck] = None
    check_error: str = ""
    #: The outcome as a model reads it.
    text: str = ""
    raw: Any = _raw()

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "EditApplied":
        chk = v.get("check")
        return cls(
            written=list(v.get("written") or []),
            check=EditCheck._from(chk) if chk else None,
            check_error=v.get("checkError", ""),
            text=v.get("text", ""),
            raw=v,
        )


@dataclass
class CodeAction:
    """A change a server offers at a place (Go: lsp.CodeAction): stage it
    as {"file": path, "line": line, "fix": title}."""

    title: str = ""
    #: "quickfix", "refactor.extract", "source.organizeImports", ...
    kind: str = ""
    #: The fix the server recommends.
    preferred: bool = False
    #: The messages of the diagnostics it fixes.
    fixes: List[str] = field(default_factory=list)
    #: Why the server offers it but cannot apply it here.
    disabled: str = ""

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "CodeAction":
        return cls(
            title=v.get("title", ""),
            kind=v.get("kind", ""),
            preferred=bool(v.get("preferred")),
            fixes=list(v.get("fixes") or []),
            disabled=v.get("disabled", ""),
        )


@dataclass
class CodeActions:
    """The result of LSPManager.code_actions (Go: lsp.CodeActions)."""

    server: str = ""
    path: str = ""
    #: The 1-based line asked about.
    line: int = 0
    actions: List[CodeAction] = field(default_factory=list)
    #: The server had not finished loading the workspace: actions may be
    #: missing; reason says why.
    incomplete: bool = False
    reason: str = ""
    #: "complete", or "partial" when incomplete.
    status: str = ""
    raw: Any = _raw()

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "CodeActions":
        return cls(
            server=v.get("server", ""),
            path=v.get("path", ""),
            line=int(v.get("line") or 0),
            actions=[CodeAction._from(a) for a in v.get("actions") or []],
            incomplete=bool(v.get("incomplete")),
            reason=v.get("reason", ""),
            status=v.get("status", ""),
            raw=v,
        )


@dataclass
class SymbolSource:
    """The result of LSPManager.symbol_source (Go: lsp.SymbolSource)."""

    path: str = ""
    #: The name path as found ("Square.Area").
    symbol: str = ""
    #: The declaration's first and last lines, 1-based.
    line: int = 0
    end_line: int = 0
    #: The declaration's text, from the start of its first line.
    text: str = ""

    @classmethod
    def _from(cls, v: Dict[str, Any]) -> "SymbolSource":
        return cls(
            path=v.get("path", ""),
            symbol=v.get("symbol", ""),
            line=int(v.get("line") or 0),
            end_line=int(v.get("endLine") or 0),
            text=v.get("text", ""),
        )


def _edit_check(v: Any) -> EditCheck:
    return EditCheck._from(v)


def _edit_applied(v: Any) -> EditApplied:
    return EditApplied._from(v)


def _code_actions(v: Any) -> CodeActions:
    return CodeActions._from(v)


def _symbol_source(v: Any) -> SymbolSource:
    return SymbolSource._from(v)
