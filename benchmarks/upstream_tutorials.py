"""tlx-verify on upstream's own Gluon tutorials and examples, as a table (a benchmark, not a test).

    python benchmarks/upstream_tutorials.py --src DIR [--runs 3] [--keep DIR] [--only TEXT]

DIR is laid out like triton's `python/` tree at a release (DIR/tutorials/gluon/*.py, DIR/examples/gluon/*.py);
no upstream file is in this repository. Each kernel below is compiled with the installed Triton, in a few
configurations written here the way upstream's own tests and benchmarks launch it, for its target on the CPU
(plugin proof off: the table is the offline verifier's); its ttgir goes to a temporary folder, removed at the
end, and is proven as `tlx-verify FILE` proves it (`load` + `prove_module`). Proof ms: the median of `--runs`
proofs after one warm-up, load included. Files are found by name without their number (numbering changes
between releases). A kernel the release cannot import or compile is a row with Triton's reason. The files ask
for the GPU when imported (pytest marks call `is_hopper()`): they are imported against a stub device (_NoGpu),
unchanged. Exit status 0.
"""
from __future__ import annotations

import argparse
import glob
import importlib.util
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
import traceback

import triton
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource

from tlx_alias.verify import prove_module
from tlx_alias.verify.source import load

HOPPER, BLACKWELL = 90, 100


def desc(dtype, block_shape) -> str:
    """Signature of a TensorDescriptor argument with the default NVMMA layout, as the JIT derives it."""
    layout = gl.NVMMASharedLayout.get_default_for(block_shape, dtype)
    name = {"fp16": "fp16", "bf16": "bf16", "fp32": "fp32", "fp8e5": "fp8e5"}[str(dtype)]
    return f"tensordesc<{name}[{','.join(map(str, block_shape))}],{layout!r}>"


# ---- the kernels and their configurations ----------------------------------------------------------------
# KERNELS: (file name without its number, kernel, target, configs); a config is (label, make) with
# make(module) -> (signature, constexprs, options), built when it runs: layouts come from the installed Triton,
# and constexpr classes (MMAImpl, SchedulerImpl) from the upstream module. The values are those of the file's
# own tests (pytest.mark.parametrize) and benchmarks.

F16, F32 = gl.float16, gl.float32
_STRIDES = ("xstride_a", "ystride_a", "xstride_b", "ystride_b", "xstride_c", "ystride_c")


def _cpasync(**cx):
    def make(mod):
        sig = dict({n: "*fp32" for n in ("a_ptr", "b_ptr", "c_ptr")}, xnumel="i32", ynumel="i32",
                   **{n: "i32" for n in _STRIDES})
        layout = gl.SwizzledSharedLayout(vec=1, per_phase=1, max_phase=1, order=[1, 0])
        return sig, dict(cx, smem_layout=layout), {"num_warps": 4}
    return make


def _tma_add(xb, yb, nb, ws=None, num_warps=4):
    def make(mod):
        sig = {n: desc(F32, [xb, yb]) for n in ("a_desc", "b_desc", "c_desc")}
        sig.update(xnumel="i32", ynumel="i32")
        if ws is None:
            return sig, {"XBLOCK": xb, "YBLOCK": yb, "num_buffers": nb}, {"num_warps": num_warps}
        cx = {"XBLOCK": xb, "YBLOCK": yb, "num_load_buffers": nb, "num_store_buffers": ws, "num_warps": num_warps}
        return sig, cx, {"num_warps": num_warps, "maxnreg": 128}
    return make


def _wgmma(bm, bk, num_warps, transpose_b=None):
    """05-wgmma's blocked_matmul[_pipelined]_kernel, fp16 in and out."""
    def make(mod):
        b_block = [bm, bk] if transpose_b else [bk, bm]
        sig = {"a_desc": desc(F16, [bm, bk]), "b_desc": desc(F16, b_block), "c_desc": desc(F16, [bm, bm])}
        cx = {"num_warps": num_warps} if transpose_b is None else {"TRANSPOSE_B": transpose_b, "num_warps": num_warps}
        return sig, cx, {"num_warps": num_warps}
    return make


def _gemm(kind, nb, scheduler=None, stealb=None, subtile=None, bm=128, bn=256, bk=64, num_warps=4):
    """06-tcgen05 / 07-persistence / 08-warp-specialization matmuls, fp16, by default BLOCK_{M,N,K} =
    (128, 256, 64), tcgen05 (07: MMAv5)."""
    def make(mod):
        # 08's C descriptor: one subtile, or (older files, whose host code says so) the whole tile
        whole = "c_desc = TensorDescriptor.from_tensor(C, [BLOCK_M, BLOCK_N], c_layout)" in _source(mod)
        c_block = [bm, bn // subtile] if subtile and not whole else [bm, bn]
        sig = {"a_desc": desc(F16, [bm, bk]), "b_desc": desc(F16, [bk, bn]), "c_desc": desc(F16, c_block)}
        cx = {"num_buffers": nb, "num_warps": num_warps}
        if kind in ("pipe", "persistent"):
            cx["MMAImpl"] = mod.MMAv5
        if scheduler is not None:
            cx["SchedulerImpl"] = (mod.t7 if kind == "ws" else mod).schedulers[scheduler]
        if stealb is not None:
            cx["STEALB"] = stealb
        if subtile:
            cx["SUBTILE_FACTOR"] = subtile
        return sig, cx, {"num_warps": num_warps}
    return make


def _source(mod) -> str:
    with open(mod.__file__) as f:
        return f.read()


def _attention(head_dim, dtype, causal, kv_buffers, split_exp, turnstile=False):
    def make(mod):
        dt = {"fp16": gl.float16, "fp8e5": gl.float8e5}[dtype]
        block_m, block_n = 256, 128
        sig = {"sm_scale": "fp32", "M": "*fp32", "Z": "i32", "H": "i32", "N_CTX": "i32",
               "desc_q": desc(dt, [block_m // 2, head_dim]), "desc_k": desc(dt, [block_n, head_dim]),
               "desc_v": desc(dt, [block_n, head_dim]), "desc_o": desc(dt, [block_m // 2, head_dim])}
        cx = {"BLOCK_M": block_m, "BLOCK_N": block_n, "HEAD_DIM": head_dim, "GROUP_SIZE_N": 4 if causal else 1,
              "NUM_SMS": 148, "STAGE": 3 if causal else 1, "SPLIT_EXP_FACTOR": split_exp, "dtype": dt,
              "num_warps": 4, "use_tmem_red": False, "NUM_KV_BUFFERS": kv_buffers,
              "USE_EXP2_TURNSTILE": turnstile, "CGA_LAYOUT": ()}
        return sig, cx, {"num_warps": 4, "maxnreg": 128}
    return make


KERNELS = [
    ("async-copy", "elementwise_add_cpasync_kernel", HOPPER,
     [(f"{b}x{b}", _cpasync(XBLOCK=b, YBLOCK=b)) for b in (32, 128)]),
    ("async-copy", "elementwise_add_pipelined_kernel", HOPPER,
     [(f"32x64 {n} buf", _cpasync(XBLOCK=32, YBLOCK=64, num_buffers=n)) for n in (1, 2, 3)]),
    ("tma", "elementwise_add_tma_kernel", HOPPER,
     [(f"32x64 {n} buf", _tma_add(32, 64, n)) for n in (1, 2, 3)] + [("64x128 3 buf", _tma_add(64, 128, 3))]),
    ("wgmma", "blocked_matmul_kernel", HOPPER,
     [(f"{b} T={t:d} {w}w", _wgmma(b, b, w, transpose_b=t)) for b, t, w in ((64, False, 4), (128, True, 8))]),
    ("wgmma", "blocked_matmul_pipelined_kernel", HOPPER,
     [(f"{b} {w}w", _wgmma(b, b, w)) for b, w in ((64, 4), (128, 8))]),
    ("tcgen05", "blocked_matmul_kernel", BLACKWELL,
     [(f"{b} T={t:d} {w}w", _wgmma(b, b, w, transpose_b=t)) for b, t, w in ((64, False, 4), (128, True, 8))]),
    ("tcgen05", "blocked_matmul_pipelined_kernel", BLACKWELL,
     [(f"128x128x{k} {w}w", _gemm("tcgen05", None, bn=128, bk=k, num_warps=w)) for k, w in ((64, 4), (128, 8))]),
    ("persistence", "matmul_pipelined_kernel", BLACKWELL, [(f"{n} buf", _gemm("pipe", n)) for n in (2, 3, 4)]),
    ("persistence", "persistent_matmul_kernel", BLACKWELL,
     [(f"{n} buf sched {s}", _gemm("persistent", n, scheduler=s)) for n, s in ((3, 0), (4, 2))]),
    ("persistence", "persistent_matmul_pipelined_kernel", BLACKWELL,
     [(f"{n} buf STEALB={t}", _gemm("persistent", n, scheduler=2, stealb=t)) for n, t in ((3, False), (4, True))]),
    ("warp-specialization", "elementwise_add_warp_specialized_kernel", HOPPER,
     [(f"32x64 {n}/{n} buf {w}w", _tma_add(32, 64, n, ws=n, num_warps=w)) for n, w in ((1, 4), (2, 4), (2, 8))]),
    ("warp-specialization", "matmul_warp_specialized_kernel", BLACKWELL,
     [(f"{n} buf sched {s}", _gemm("ws", n, scheduler=s, subtile=4)) for n, s in ((2, 0), (3, 1), (4, 2))]),
    ("attention-forward", "attention_kernel", BLACKWELL, [
        ("D=64 fp16 6 kv bufs", _attention(64, "fp16", False, 6, 4, turnstile=True)),
        ("D=128 fp16 3 kv bufs", _attention(128, "fp16", False, 3, 4)),
        ("D=128 fp16 causal", _attention(128, "fp16", True, 3, 4)),
        ("D=64 fp8 causal 2 kv bufs", _attention(64, "fp8e5", True, 2, 4)),
    ]),
]


# ---- compile, prove, tabulate -----------------------------------------------------------------------------

def find(src, stem):
    """The one file DIR/{tutorials,examples}/gluon/NN-<stem>.py, or None."""
    hits = sorted(glob.glob(os.path.join(src, "*", "gluon", f"[0-9][0-9]-{stem}.py")))
    return hits[-1] if hits else None


class _NoGpu:
    """What the files' top level may ask of the device (pytest skip marks call `is_hopper()` and the like on
    import): a CUDA target and a capability; their answers only mark upstream's own tests."""
    def get_current_target(self):
        return GPUTarget("cuda", BLACKWELL, 32)

    def __enter__(self):
        import torch
        self.saved = triton.runtime.driver._active, torch.cuda.get_device_capability
        triton.runtime.driver.set_active(self)
        torch.cuda.get_device_capability = lambda *_: (BLACKWELL // 10, 0)

    def __exit__(self, *exc):
        import torch
        triton.runtime.driver._active, torch.cuda.get_device_capability = self.saved


_MODULES = {}


def import_file(path):
    """The module at `path`, its folder on sys.path as when upstream runs it (its tutorials import each other),
    imported under _NoGpu; raises what its top level raises."""
    if path in _MODULES:
        return _MODULES[path]
    sys.path.insert(0, os.path.dirname(path))
    name = "upstream_" + os.path.basename(path)[:-3].replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    with _NoGpu():
        spec.loader.exec_module(module)
    _MODULES[path] = module
    return module


def first_line(exc) -> str:
    """The root cause of a failure, in one table cell (Triton wraps it in CompilationErrors that quote code)."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    lines = [s.strip() for s in str(exc).splitlines() if s.strip() and set(s.strip()) != {"^"}]
    text = f"{type(exc).__name__}: {lines[-1] if lines else ''}"
    text = text.replace("|", "/").replace(os.path.dirname(triton.__file__), "triton")
    return text if len(text) <= 160 else text[:157] + "..."


def compile_ttgir(module, kernel, make, capability) -> str:
    fn = getattr(module, kernel, None)
    if fn is None:
        raise LookupError(f"this version of the file has no {kernel} (another version's kernel)")
    sig, constexprs, options = make(module)
    constexprs = {k: v for k, v in constexprs.items() if k in fn.arg_names}   # this version's parameters only
    sig = dict(sig, **{k: "constexpr" for k in constexprs})
    kernel = triton.compile(GluonASTSource(fn, sig, constexprs), target=GPUTarget("cuda", capability, 32),
                            options=options)
    return kernel.asm["ttgir"]


def prove(path, runs):
    """(report, median ms, largest ms) of proving `path` as tlx-verify does, after one warm-up proof."""
    times, report = [], None
    for i in range(runs + 1):
        t0 = time.perf_counter()
        loaded = load(path)
        with loaded.context:
            report = prove_module(loaded.module, None, loaded.aliases, path)
        if i:
            times.append((time.perf_counter() - t0) * 1e3)
    return report, statistics.median(times), max(times)


def run(src, runs, keep, only):
    rows, tmp = [], tempfile.mkdtemp(prefix="upstream-ttgir-")
    try:
        for stem, kernel, cap, configs in KERNELS:
            path = find(src, stem)
            file = os.path.relpath(path, src) if path else f"*-{stem}.py"
            for label, make in configs:
                if only and only not in f"{file} {kernel} {label}":
                    continue
                row = {"file": file, "kernel": kernel, "config": label, "target": f"sm_{cap}a"}
                rows.append(row)
                try:
                    if path is None:
                        raise FileNotFoundError(f"no file *-{stem}.py in this release")
                    text = compile_ttgir(import_file(path), kernel, make, cap)
                except Exception as exc:
                    row["error"] = f"not compiled: {first_line(exc)}"
                    continue
                out = os.path.join(tmp, re.sub(r"[^\w.=-]+", "_", f"{stem}__{kernel}__{label}") + ".ttgir")
                with open(out, "w") as f:
                    f.write(text)
                try:
                    report, row["ms"], row["max_ms"] = prove(out, runs)
                except Exception as exc:
                    row["error"] = f"the proof failed (a tlx-verify bug): {first_line(exc)}"
                    traceback.print_exc()
                    continue
                row["verdict"] = ("VIOLATION " + ",".join(sorted({v.prop for v in report.violations}))
                                  if report.violations else "CANNOT PROVE" if report.unknowns else "SAFE")
                why = (f"{v.prop} {v.alloc}: {v.detail}" for v in report.violations + report.unknowns)
                row["why"] = list(dict.fromkeys(re.sub(r"/[^\s:()]*/(?=[\w.-]+\.py)", "", w) for w in why))
                row["unknowns"] = len(report.unknowns)
                if keep:
                    os.makedirs(keep, exist_ok=True)
                    shutil.copy(out, keep)
    finally:
        shutil.rmtree(tmp)
    return rows


def table(rows, release) -> str:
    out = [f"triton {release}", "",
           "| release | file | kernel | config | target | verdict | #cannot prove | proof ms (median / max) |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        head = f"| {release} | {r['file']} | {r['kernel']} | {r['config']} | {r['target']} |"
        if "error" in r:
            out.append(f"{head} {r['error']} | | |")
        else:
            out.append(f"{head} {r['verdict']} | {r['unknowns']} | {r['ms']:.0f} / {r['max_ms']:.0f} |")
    out += ["", "| release | file | configs | SAFE | VIOLATION | cannot prove | not compiled (or the proof failed) "
            "| proof ms median / max |",
            "|---|---|---|---|---|---|---|---|"]
    for file in dict.fromkeys(r["file"] for r in rows):
        mine = [r for r in rows if r["file"] == file]
        done = [r for r in mine if "error" not in r]
        ms = f"{statistics.median(r['ms'] for r in done):.0f} / {max(r['max_ms'] for r in done):.0f}" if done else ""
        count = lambda p: sum(r.get("verdict", "").startswith(p) for r in mine)  # noqa: E731
        out.append(f"| {release} | {file} | {len(mine)} | {count('SAFE')} | {count('VIOLATION')} | "
                   f"{count('CANNOT')} | {len(mine) - len(done)} | {ms} |")
    reasons = {}                          # reason, its counterexample values left out -> the configs with it
    for r in rows:
        for w in r.get("why", []):
            w = re.sub(r"= -?\d+", "= N", w) if w.startswith("P5 ") else w
            configs = reasons.setdefault(f"{r['file']} {r['kernel']}: {w}", [])
            configs += [r["config"]] if r["config"] not in configs else []
    notes = [f"- {w} [{'; '.join(configs)}]" for w, configs in reasons.items()]
    return "\n".join(out + (["", "Not proven (reason, then the configs):"] + notes if notes else []))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--src", required=True, help="triton's python/ tree at a release (tutorials/, examples/)")
    p.add_argument("--runs", type=int, default=3, help="timed proofs per kernel after one warm-up (default 3)")
    p.add_argument("--keep", metavar="DIR", help="copy every compiled kernel's ttgir here")
    p.add_argument("--only", metavar="TEXT", help="only the configs whose file, kernel or label contain TEXT")
    args = p.parse_args(argv)
    os.environ["TLX_ALIAS_PROOF"] = "off"     # compile without the plugin's proof: the table is tlx-verify's
    print(table(run(os.path.abspath(args.src), args.runs, args.keep, args.only), triton.__version__))
    return 0


if __name__ == "__main__":
    sys.exit(main())
