"""Every numeric option of every constructor, fed -1, 0, 2**63-1 and 1.5 through the ABI.

The options and their documentation come from the generated binding (so
from cabi/abispec): a numeric option added there is covered here without
an edit, and one this file cannot exercise fails the test. The rule
checked (see the README's reliability section):

- 0 means the documented default: the object is made and works;
- a negative value is either documented ("negative" in the option's own
  documentation) and then accepted and working, or rejected at
  construction with ArgumentError naming the option;
- the largest int64 is accepted and works, or is rejected with
  ArgumentError naming the option;
- a fraction is rejected with ArgumentError naming the option, except for
  a duration (in seconds, a float: 1.5 is 1500 milliseconds), which must
  work;
- nothing crashes the host, hangs, or ends in InternalError (a panic the
  library recovered).

Each case runs in its own Python process, so that a crash (a Go panic on
a thread the library does not guard, an abort) is one failed case with its
output, not the end of the suite.
"""

import concurrent.futures
import inspect
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

from tests.support import REPO, HeadlessIDE, find_gopls, idebridge

VALUES = [-1, 0, 2**63 - 1, 1.5]
CASE_TIMEOUT = 120  # seconds: a case that takes longer hangs


def camel(py_name: str) -> str:
    head, *rest = py_name.split("_")
    return head + "".join(w.capitalize() for w in rest)


def creators():
    """Yields (qualified name, callable) for every function and constructor
    of the binding that takes options: module functions, classes'
    __init__ and their classmethod constructors."""
    for name in idebridge.__all__:
        obj = getattr(idebridge, name)
        if inspect.isfunction(obj):
            yield name, obj
        elif inspect.isclass(obj) and hasattr(obj, "handle"):
            if "raise TypeError" not in inspect.getsource(obj.__init__):
                yield name + ".__init__", obj.__init__
            for mname, m in inspect.getmembers(obj, inspect.ismethod):
                if m.__self__ is obj:  # a classmethod: a constructor
                    yield name + "." + mname, m


def numeric_options(fn):
    """Returns [(python name, JSON name, doc, seconds)] of fn's numeric
    options; seconds marks a duration the binding converts to milliseconds."""
    src = inspect.getsource(fn)
    doc = inspect.getdoc(fn) or ""
    out = []
    for p in inspect.signature(fn).parameters.values():
        ann = str(p.annotation)
        if p.name == "timeout" or not re.search(r"\b(int|float)\b", ann):
            continue
        m = re.search(r'"(\w+)": (?:\(.*? else )?(_ms_opt\()?%s\b' % re.escape(p.name), src)
        if not m:
            raise AssertionError("%s: cannot find the JSON name of %s" % (fn.__qualname__, p.name))
        js, seconds = m.group(1), m.group(2) is not None
        d = re.search(r"^\s*%s: (.*?)(?=^\s*\w+:|^\S|\Z)" % re.escape(p.name), doc, re.S | re.M)
        out.append((p.name, js, " ".join(d.group(1).split()) if d else "", seconds))
    return out


# ---- the child: one case ----


def run_case(case: dict) -> dict:
    """Makes the object with one option set, exercises it, and reports."""
    report = {"made": False, "error": None, "problems": []}

    def problem(what: str) -> None:
        report["problems"].append(what)

    try:
        kind, kwargs = case["creator"], {case["option"]: case["value"]}
        if kind == "Registry.__init__":
            with idebridge.Registry(**kwargs) as reg:
                report["made"] = True
                for f in range(2):
                    ds = [{"range": {"start": {"line": i, "character": 0}, "end": {"line": i, "character": 1}},
                           "severity": 1 + i % 4, "message": "m%d" % i} for i in range(12)]
                    reg.publish("srv", {"uri": "file:///p/f%d.go" % f, "version": 1, "diagnostics": ds})
                reg.set_version("file:///p/f0.go", 1)
                att = reg.drain()
                shown = sum(len(f.diagnostics) for f in att.files) if att else 0
                cut = att.cut if att else 0
                if shown + cut != 24 and not (case["option"] == "min_severity" and shown + cut < 24):
                    problem("drain shows %d and cuts %d of 24 new diagnostics" % (shown, cut))
                reg.stats()
                reg.reset()
        elif kind == "render_attachment":
            att = {"servers": ["s"], "files": [{"uri": "file:///p/a.go", "path": "/p/a.go", "cut": 0, "diagnostics": [
                {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "severity": 1, "message": "m"}]}],
                "cut": 0}
            text = idebridge.render_attachment(att, **kwargs)
            report["made"] = True
            if "<new-diagnostics>" not in text or "m\n" not in text:
                problem("rendered %r" % text)
        elif kind == "LSPManager.__init__":
            d = case["project"]
            main_go = os.path.join(d, "main.go")
            config = {"gopls": {"command": case["gopls"], "extensionToLanguage": {".go": "go"}}}
            mgr = idebridge.LSPManager(config, d, **kwargs)
            report["made"] = True
            try:
                mgr.open(main_go, timeout=60)
                res = mgr.settle(main_go)
                settle = case["value"] if case["option"] == "settle_timeout" and case["value"] > 0 else 10
                if res.freshness == idebridge.Freshness.TIMED_OUT and settle >= 1 and res.elapsed < 0.5:
                    problem("settle gave up after %.3f s though its timeout is %s s" % (res.elapsed, settle))
                mgr.drain()
                mgr.close_file(main_go, timeout=30)
            finally:
                mgr.shutdown(timeout=30)
        elif kind == "wait_for_ide":
            ide = case["ide"]
            found = idebridge.wait_for_ide(cwd=ide["workspace"], env=ide["env"], timeout=10, **kwargs)
            report["made"] = True
            if found.candidate.url != ide["url"]:
                problem("found %s, not the IDE at %s" % (found.candidate.url, ide["url"]))
        elif kind == "IDEClient.connect":
            ide = case["ide"]
            opts = {"url": ide["url"], "auth_token": ide["authToken"], "env": ide["env"]}
            if case["option"] == "timeout_ms":
                h = idebridge._idb_ide_connect(json.dumps({"url": ide["url"], "authToken": ide["authToken"]}), case["value"])
                client = idebridge.IDEClient.__new__(idebridge.IDEClient)
                client._lock, client._h = idebridge.threading.Lock(), h
            else:
                client = idebridge.IDEClient.connect(**opts, **kwargs, timeout=30)
            report["made"] = True
            try:
                client.tools()  # the client's own call timeout
                client.call("getWorkspaceFolders", timeout=10)
                client.next_notification(timeout=0)
            finally:
                client.close()
        else:
            problem("no recipe to exercise %s: add one to run_case" % kind)
    except idebridge.IdebridgeError as e:
        report["error"] = {"type": type(e).__name__, "status": e.status, "message": str(e)}
    except Exception as e:  # noqa: BLE001 - reported to the parent
        report["error"] = {"type": type(e).__name__, "status": -1, "message": str(e)}
    return report


# ---- the parent ----


def names_option(message: str, js: str) -> bool:
    m = message.lower()
    return js.lower() in m or (js.endswith("Ms") and js[:-2].lower() in m)


class NumericOptionsTest(unittest.TestCase):
    def test_every_numeric_option(self) -> None:
        cases = []
        for cname, fn in creators():
            opts = numeric_options(fn)
            if cname == "IDEClient.connect":
                opts.append(("timeout_ms", "timeout_ms", "negative waits without limit", False))  # the export's argument
            for py, js, doc, seconds in opts:
                for v in VALUES:
                    if py == "timeout_ms" and isinstance(v, float):
                        continue  # an int64 argument: no fraction can cross
                    cases.append({"creator": cname, "option": py, "json": js, "doc": doc, "value": v, "seconds": seconds})
        creators_seen = {c["creator"] for c in cases}
        for want in ("Registry.__init__", "LSPManager.__init__", "IDEClient.connect", "render_attachment"):
            self.assertIn(want, creators_seen, "no numeric option found for %s" % want)

        with tempfile.TemporaryDirectory(prefix="idebridge-options-") as tmp, HeadlessIDE() as ide:
            project = os.path.join(os.path.realpath(tmp), "proj")
            os.mkdir(project)
            with open(os.path.join(project, "go.mod"), "w") as f:
                f.write("module example.com/m\n\ngo 1.22\n")
            with open(os.path.join(project, "main.go"), "w") as f:
                f.write("package main\n\nfunc main() {\n\tundefinedThing()\n}\n")
            env = dict(os.environ, GOPLSCACHE=os.path.join(tmp, "goplscache"))
            shared = {"project": project, "gopls": find_gopls(),
                      "ide": {"url": ide.url, "authToken": ide.auth_token, "env": ide.env(), "workspace": ide.workspace}}

            def run(case: dict):
                arg = json.dumps(dict(case, **shared))
                try:
                    p = subprocess.run([sys.executable, "-m", "tests.test_options", arg], cwd=os.path.join(REPO, "bindings", "python"),
                                       env=env, capture_output=True, text=True, timeout=CASE_TIMEOUT)
                except subprocess.TimeoutExpired:
                    return case, None, "hung for %d s" % CASE_TIMEOUT
                return case, p, ""

            with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
                results = list(pool.map(run, cases))

        for case, p, hung in results:
            label = "%s(%s=%r)" % (case["creator"], case["option"], case["value"])
            with self.subTest(label):
                self.assertEqual(hung, "", label + " " + hung)
                last = p.stdout.strip().splitlines()[-1:] if p.stdout.strip() else []
                self.assertEqual(p.returncode, 0, "%s crashed the host (exit %d):\n%s" % (label, p.returncode, p.stderr[-3000:]))
                self.assertTrue(last, "%s printed no report; stderr:\n%s" % (label, p.stderr[-2000:]))
                rep = json.loads(last[0])
                err, js, v = rep["error"], case["json"], case["value"]
                if err is not None and err["type"] == "InternalError":
                    self.fail("%s: a panic reached the ABI: %s" % (label, err["message"][:2000]))
                documented_negative = "negative" in case["doc"].lower()
                must_work = v == 0 or (v == -1 and documented_negative) or (isinstance(v, float) and case["seconds"])
                must_reject = (isinstance(v, float) and not case["seconds"]) or (v == -1 and not documented_negative)
                if must_work:
                    self.assertIsNone(err, "%s must be accepted (doc: %r)" % (label, case["doc"]))
                    self.assertEqual(rep["problems"], [], label)
                elif must_reject:
                    self.assertIsNotNone(err, "%s was accepted, but %s is not documented to take it (doc: %r)" % (label, js, case["doc"]))
                    self.assertFalse(rep["made"], "%s failed after construction, not at it: %s" % (label, err))
                    self.assertEqual(err["type"], "ArgumentError", "%s: %s" % (label, err))
                    self.assertTrue(names_option(err["message"], js), "%s: the error does not name %s: %s" % (label, js, err["message"]))
                elif err is not None:  # the largest int64: rejected clearly, or working
                    self.assertFalse(rep["made"], "%s was accepted but does not work: %s" % (label, err))
                    self.assertEqual(err["type"], "ArgumentError", "%s: %s" % (label, err))
                    self.assertTrue(names_option(err["message"], js), "%s: the error does not name %s: %s" % (label, js, err["message"]))
                else:
                    self.assertEqual(rep["problems"], [], label)


if __name__ == "__main__" and len(sys.argv) == 2:
    print(json.dumps(run_case(json.loads(sys.argv[1]))))
