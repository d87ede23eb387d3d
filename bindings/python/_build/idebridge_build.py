"""The PEP 517 build backend of the idebridge Python package.

It builds libidebridge with the local Go toolchain (go build
-buildmode=c-shared, which needs cgo: Go 1.24 or later and a C compiler)
and writes the wheel itself with zipfile, so that building needs nothing
from a package index, even with build isolation (pyproject.toml declares
no build requirements). The wheel holds the library next to the Python
code, so ``import idebridge`` works from anywhere.

Where the Go source comes from, in order:
  - $IDEBRIDGE_GO_SRC, a checkout of the idebridge module;
  - _go/ beside this package's pyproject.toml (an sdist carries it);
  - the repository this package lives in (bindings/python in a clone).

$IDEBRIDGE_PREBUILT_LIB names an already built library to put in the
wheel instead of building one (for packagers that build it separately).
"""

import base64
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "idebridge"
MODULE = "github.com/idebridge/idebridge"
LIB_NAMES = {"darwin": "libidebridge.dylib", "win32": "idebridge.dll"}
# Everything of the Go module an sdist needs to build the library: the
# packages cabi imports, not the tests, benchmarks or examples.
GO_SKIP_DIRS = {".git", "benchmarks", "bindings", "build", "examples", "fuzz", "testdata", "node_modules", "test"}


def _project() -> Dict[str, str]:
    """Reads name, version, description and requires-python from
    pyproject.toml's [project] table (simple string values only)."""
    with open(os.path.join(HERE, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    try:
        import tomllib  # Python 3.11+

        proj = tomllib.loads(text)["project"]
        return {k: str(v) for k, v in proj.items() if isinstance(v, str)}
    except ImportError:
        pass
    out: Dict[str, str] = {}
    section = ""
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line
            continue
        m = re.match(r'^([A-Za-z0-9_-]+)\s*=\s*"([^"]*)"\s*$', line)
        if section == "[project]" and m:
            out[m.group(1)] = m.group(2)
    return out


def _lib_name() -> str:
    return LIB_NAMES.get(sys.platform, "libidebridge.so")


def _platform_tag() -> str:
    return re.sub(r"[^A-Za-z0-9]", "_", sysconfig.get_platform())


def _dist_name(project: Dict[str, str]) -> str:
    return re.sub(r"[-_.]+", "_", project["name"]).lower()


def _go_source() -> str:
    """Returns the root of the idebridge Go module to build from."""
    tried = []
    for root in (os.environ.get("IDEBRIDGE_GO_SRC"), os.path.join(HERE, "_go"), os.path.normpath(os.path.join(HERE, "..", ".."))):
        if not root:
            continue
        tried.append(root)
        gomod = os.path.join(root, "go.mod")
        if os.path.isfile(gomod):
            with open(gomod, encoding="utf-8") as f:
                if re.search(r"^module\s+" + re.escape(MODULE) + r"\s*$", f.read(), re.M):
                    return root
    raise RuntimeError(
        "building idebridge: the Go source of %s is not here (looked at %s); "
        "build from a clone (pip install ./bindings/python), from an sdist, or set IDEBRIDGE_GO_SRC" % (MODULE, ", ".join(tried))
    )


def _build_library(out_dir: str) -> str:
    """Builds (or copies) libidebridge into out_dir and returns its path."""
    dest = os.path.join(out_dir, _lib_name())
    prebuilt = os.environ.get("IDEBRIDGE_PREBUILT_LIB")
    if prebuilt:
        shutil.copyfile(prebuilt, dest)
        return dest
    go = shutil.which("go")
    if go is None:
        raise RuntimeError(
            "building idebridge needs the Go toolchain (go 1.24 or later, on PATH) and a C compiler for cgo; "
            "or set IDEBRIDGE_PREBUILT_LIB to a built libidebridge"
        )
    root = _go_source()
    env = dict(os.environ, CGO_ENABLED="1")
    cmd = [go, "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w", "-o", dest, "./cabi"]
    print("idebridge: %s (in %s)" % (" ".join(cmd), root), file=sys.stderr)
    r = subprocess.run(cmd, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise RuntimeError("building libidebridge failed:\n%s" % r.stdout)
    header = os.path.splitext(dest)[0] + ".h"
    if os.path.exists(header):
        os.remove(header)  # cgo's header; the package needs none
    return dest


def _metadata(project: Dict[str, str]) -> str:
    lines = [
        "Metadata-Version: 2.1",
        "Name: " + project["name"],
        "Version: " + project["version"],
    ]
    if project.get("description"):
        lines.append("Summary: " + project["description"])
    if project.get("requires-python"):
        lines.append("Requires-Python: " + project["requires-python"])
    lines.append("License: Apache-2.0")
    readme = os.path.join(HERE, "README.md")
    body = ""
    if os.path.exists(readme):
        lines.append("Description-Content-Type: text/markdown")
        with open(readme, encoding="utf-8") as f:
            body = f.read()
    return "\n".join(lines) + "\n\n" + body


def _package_files() -> List[Tuple[str, str]]:
    """(path on disk, path in the wheel) of the package's Python files."""
    out = []
    pkg = os.path.join(HERE, PACKAGE)
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py") or name == "py.typed":
            out.append((os.path.join(pkg, name), PACKAGE + "/" + name))
    return out


def _record_line(arcname: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
    return "%s,sha256=%s,%d" % (arcname, digest, len(data))


def _write_wheel(wheel_directory: str, files: List[Tuple[str, bytes]], project: Dict[str, str], tag: str) -> str:
    dist = _dist_name(project)
    info = "%s-%s.dist-info" % (dist, project["version"])
    wheel_name = "%s-%s-%s.whl" % (dist, project["version"], tag)
    meta = [
        (info + "/METADATA", _metadata(project).encode("utf-8")),
        (info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: idebridge_build\nRoot-Is-Purelib: false\nTag: %s\n" % tag).encode("utf-8")),
        (info + "/top_level.txt", (PACKAGE + "\n").encode("utf-8")),
    ]
    record = []
    path = os.path.join(wheel_directory, wheel_name)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for arcname, data in files + meta:
            zi = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = (0o755 if arcname.endswith((".so", ".dylib", ".dll")) else 0o644) << 16
            zf.writestr(zi, data)
            record.append(_record_line(arcname, data))
        record.append(info + "/RECORD,,")
        zf.writestr(zipfile.ZipInfo(info + "/RECORD", date_time=(2020, 1, 1, 0, 0, 0)), "\n".join(record) + "\n")
    return wheel_name


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


# The PEP 517 and PEP 660 hooks.


def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[dict] = None) -> List[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Optional[dict] = None) -> str:
    project = _project()
    info = "%s-%s.dist-info" % (_dist_name(project), project["version"])
    os.makedirs(os.path.join(metadata_directory, info), exist_ok=True)
    with open(os.path.join(metadata_directory, info, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata(project))
    with open(os.path.join(metadata_directory, info, "WHEEL"), "w", encoding="utf-8") as f:
        f.write("Wheel-Version: 1.0\nGenerator: idebridge_build\nRoot-Is-Purelib: false\nTag: py3-none-%s\n" % _platform_tag())
    return info


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None) -> str:
    """A wheel with the Python code and the library built for this platform."""
    project = _project()
    with tempfile.TemporaryDirectory(prefix="idebridge-build-") as tmp:
        lib = _build_library(tmp)
        files = [(arc, _read(p)) for p, arc in _package_files()]
        files.append((PACKAGE + "/" + os.path.basename(lib), _read(lib)))
        return _write_wheel(wheel_directory, files, project, "py3-none-" + _platform_tag())


def build_editable(wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None) -> str:
    """An editable install: the library is built into the source package,
    and a .pth file puts this directory on sys.path."""
    project = _project()
    _build_library(os.path.join(HERE, PACKAGE))
    pth = [("_idebridge_editable.pth", (HERE + "\n").encode("utf-8"))]
    return _write_wheel(wheel_directory, pth, project, "py3-none-" + _platform_tag())


def build_sdist(sdist_directory: str, config_settings: Optional[dict] = None) -> str:
    """The Python package with the Go module under _go/, from which a wheel
    builds anywhere the Go toolchain is."""
    project = _project()
    base = "%s-%s" % (_dist_name(project), project["version"])
    name = base + ".tar.gz"
    root = _go_source()
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tf:

        def add(path: str, arcname: str) -> None:
            ti = tf.gettarinfo(path, arcname)
            ti.uid = ti.gid = 0
            ti.uname = ti.gname = ""
            ti.mtime = 1577836800
            with open(path, "rb") as f:
                tf.addfile(ti, f)

        for rel in ("pyproject.toml", "README.md", "_build/idebridge_build.py"):
            if os.path.exists(os.path.join(HERE, rel)):
                add(os.path.join(HERE, rel), base + "/" + rel)
        for path, arc in _package_files():
            add(path, base + "/" + arc)
        for dirpath, dirnames, filenames in os.walk(root):
            rel_dir = os.path.relpath(dirpath, root)
            dirnames[:] = sorted(d for d in dirnames if d not in GO_SKIP_DIRS and not d.startswith("."))
            for fn in sorted(filenames):
                keep = (fn.endswith((".go", ".h", ".c")) and not fn.endswith("_test.go")) or (rel_dir == "." and fn in ("go.mod", "go.sum", "LICENSE"))
                if keep:
                    rel = os.path.normpath(os.path.join(rel_dir, fn))
                    add(os.path.join(dirpath, fn), base + "/_go/" + rel)
        pkg_info = _metadata(project).encode("utf-8")
        ti = tarfile.TarInfo(base + "/PKG-INFO")
        ti.size = len(pkg_info)
        ti.mtime = 1577836800
        tf.addfile(ti, io.BytesIO(pkg_info))
    return name
