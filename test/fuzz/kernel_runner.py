"""Compile one generated Gluon kernel through the tlx-alias plugin in a forked child, and report what happened.

Used by fuzz_trees.py and fuzz_misuse.py. The parent imports Triton and the plugin once; each case forks, the
child writes the kernel source to a file, imports it, compiles it for sm_90a / sm_100a on the CPU and writes a
JSON outcome. A native abort or a hang kills only the child and is reported as such. The child's TMPDIR and
Triton cache are a fresh directory, so a file the compile leaves behind is seen.

The outcome (`Outcome`): status "ok" (with the lowered views' addresses and the backing sizes read from the ttgir
through `tlx.view`, and the warnings raised), "tlx-error" (a TlxAliasError: its where/problem/fix/src),
"exception" (anything else: type, message, traceback), "killed" (signal), "hung", or "no-result".
"""
from __future__ import annotations

import faulthandler
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import traceback
import warnings
from dataclasses import dataclass, field

from forked import run_forked

TIMEOUT_S = 300      # a case that runs longer than this is a hang (proofs are bounded by resource limits)


@dataclass
class Outcome:
    status: str                  # ok | tlx-error | exception | killed | hung | no-result
    path: str                    # the kernel source file (removed after the case)
    error: dict = field(default_factory=dict)       # where, problem, fix, src, type, message, traceback
    views: dict = field(default_factory=dict)       # view name -> [address of buffer i (units)]
    backings: list = field(default_factory=list)    # [(storage, units)]
    warnings: list = field(default_factory=list)    # [(message, "file:line")]
    left: list = field(default_factory=list)        # files left in the case's temporary directory
    stderr: str = ""


def prepare():
    """Imports paid once in the parent (the plugin is installed by importing the frontend)."""
    import tlx_alias.language  # noqa: F401
    import tlx_alias.kernels.demo  # noqa: F401
    import tlx_alias.verify  # noqa: F401


def _tlx_error(exc):
    from tlx_alias.errors import TlxAliasError
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, TlxAliasError):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


_BACKING = re.compile(r'(ttg\.local_alloc|ttng\.tmem_alloc) \{[^}]*tlx\.backing[^}]*\} : \(\) -> '
                      r'!ttg\.memdesc<((?:\d+x)+)(?:i8|i32)')


def _read_ttgir(ttgir: str):
    """(views {name: [addresses]}, backings [(storage, units)]) of the lowered ttgir."""
    from tlx_alias.kernels.demo import lowered_views
    views = {name: [view.address(i) for i in range(view.num)] for name, view, _ in lowered_views(ttgir)}
    backings = []
    for op, dims in _BACKING.findall(ttgir):
        n = 1
        for d in dims.rstrip("x").split("x"):
            n *= int(d)
        backings.append(("tmem", n // 128) if op == "ttng.tmem_alloc" else ("smem", n))
    return views, backings


def _child(source: str, path: str, signature: dict, arch: int, work: str):
    os.environ["TMPDIR"] = tempfile.tempdir = os.path.join(work, "tmp")
    # The oracles predict layouts and the layout warnings; the under-use hint (a judgement on the whole
    # kernel's budget, tested in test/pytest/test_underuse.py) is not part of what they model.
    os.environ["TLX_ALIAS_UNDERUSE"] = "off"
    err = os.open(os.path.join(work, "stderr"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(err, 2)
    os.dup2(err, 1)
    sys.stdout, sys.stderr = open(1, "w", closefd=False), open(2, "w", closefd=False)
    faulthandler.enable(sys.stderr)
    out = {"status": "no-result"}
    try:
        import importlib.util

        import triton
        from triton.backends.compiler import GPUTarget
        from triton.experimental.gluon._runtime import GluonASTSource
        triton.knobs.cache.dir = os.path.join(work, "cache")
        with open(path, "w") as f:
            f.write(source)
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                k = triton.compile(GluonASTSource(module.kernel, signature, {}), target=GPUTarget("cuda", arch, 32))
                views, backings = _read_ttgir(k.asm["ttgir"])
                out = {"status": "ok", "views": views, "backings": backings}
            except Exception as exc:  # noqa: BLE001 - classified below
                tlx = _tlx_error(exc)
                if tlx is not None:
                    out = {"status": "tlx-error", "error": {"where": tlx.where, "problem": str(tlx.problem),
                                                            "fix": tlx.fix, "src": tlx.src, "message": str(tlx)}}
                else:
                    out = {"status": "exception", "error": {"type": type(exc).__name__, "message": str(exc)[-2000:],
                                                            "traceback": traceback.format_exc()[-4000:]}}
        out["warnings"] = [(str(w.message), f"{w.filename}:{w.lineno}") for w in caught
                           if w.category.__name__ == "TlxAliasWarning"]
    except BaseException as exc:  # noqa: BLE001 - the source did not even import
        out = {"status": "exception", "error": {"type": type(exc).__name__, "message": str(exc)[-2000:],
                                                "traceback": traceback.format_exc()[-4000:]}}
    with open(os.path.join(work, "result.json"), "w") as f:
        json.dump(out, f)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def run(source: str, signature: dict, arch: int, name: str = "kernel_case") -> Outcome:
    """Compile `source` (a module defining `kernel`) for sm_<arch>a in a forked child."""
    work = tempfile.mkdtemp(prefix="tlx-fuzz-kernel-")
    try:
        os.mkdir(os.path.join(work, "tmp"))
        os.mkdir(os.path.join(work, "src"))
        path = os.path.join(work, "src", f"{name}.py")
        status, hung = run_forked(lambda: _child(source, path, signature, arch, work), TIMEOUT_S)
        stderr = open(os.path.join(work, "stderr"), errors="replace").read() if os.path.exists(
            os.path.join(work, "stderr")) else ""
        left = sorted(os.listdir(os.path.join(work, "tmp")))
        if hung:
            return Outcome("hung", path, stderr=stderr[-4000:], left=left)
        if os.WIFSIGNALED(status):
            return Outcome("killed", path, error={"signal": signal.Signals(os.WTERMSIG(status)).name},
                           stderr=stderr[-4000:], left=left)
        try:
            with open(os.path.join(work, "result.json")) as f:
                res = json.load(f)
        except (OSError, ValueError):
            return Outcome("no-result", path, stderr=stderr[-4000:], left=left)
        return Outcome(res["status"], path, res.get("error", {}), res.get("views", {}),
                       [tuple(b) for b in res.get("backings", [])], [tuple(w) for w in res.get("warnings", [])],
                       left, stderr[-4000:])
    finally:
        shutil.rmtree(work, ignore_errors=True)


def line_of(source: str, marker: str) -> int:
    """1-based line of the only source line that ends with `marker` (a comment such as `# @spec`)."""
    hits = [i + 1 for i, text in enumerate(source.split("\n")) if text.rstrip().endswith(marker)]
    if len(hits) != 1:
        raise ValueError(f"marker {marker!r} on lines {hits}")
    return hits[0]
