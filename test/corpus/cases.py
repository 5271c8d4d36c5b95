"""The corpus: kernel x config, compiled at test time with the installed Triton, and what the proof must say.

`CASES[name] = (kernel, signature, constexprs, capability, expect)`; expect None: proven (no violation, no
"cannot prove"); else (property, text the counterexample must contain). `python test/corpus/cases.py`
prints the table (verdict, cannot-prove count, proof time and its P7 part) that README "The safety proof" shows.
"""
from __future__ import annotations

import os
import re
import statistics
import sys
import time

import triton
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon._runtime import GluonASTSource
from tlx_alias import _triton as compat

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels as K  # noqa: E402

_I = {"x_ptr": "*fp32", "n_tiles": "i32", "k_steps": "i32"}
CASES = {
    "ring N=3 (persistent nest)": (K.ring_kernel, _I, {"N": 3, "WRAP": 3, "B": 32}, 90, None),
    "ring N=4 wraps at 5": (K.ring_kernel, _I, {"N": 4, "WRAP": 5, "B": 32}, 90,
                            ("P5", "must be in [0, 4)) on a run with")),
    "toggle idx ^= 1": (K.toggle_kernel, {"x_ptr": "*fp32", "k_steps": "i32"}, {"STEP": 0, "B": 32}, 90, None),
    "toggle writes idx + 1": (K.toggle_kernel, {"x_ptr": "*fp32", "k_steps": "i32"}, {"STEP": 1, "B": 32}, 90,
                              ("P5", "must be in [0, 2)) on a run with")),
    "flip 1 - which at the ring's reset": (K.flip_kernel, {"x_ptr": "*fp32", "k_steps": "i32"},
                                           {"N": 3, "FLIP": 1, "B": 32}, 90, None),
    "flip 2 - which": (K.flip_kernel, {"x_ptr": "*fp32", "k_steps": "i32"}, {"N": 3, "FLIP": 2, "B": 32}, 90,
                       ("P5", "must be in [0, 2)) on a run with")),
    "rollover ws N=3": (K.rollover_ws_kernel, _I, {"N": 3, "ROLL": 3, "B": 32}, 100, None),
    "rollover ws N=4": (K.rollover_ws_kernel, _I, {"N": 4, "ROLL": 4, "B": 32}, 100, None),
    "rollover ws N=3 wraps at 4": (K.rollover_ws_kernel, _I, {"N": 3, "ROLL": 4, "B": 32}, 100,
                                   ("P5", "must be in [0, 3)) on a run with")),
    "pred (i-1)%2 under i>=1": (K.pred_kernel, {"x_ptr": "*fp32", "n": "i32"},
                                {"N": 2, "LAG": 1, "FROM": 1, "B": 32}, 90, None),
    "pred arrives at i>=0": (K.pred_kernel, {"x_ptr": "*fp32", "n": "i32"}, {"N": 2, "LAG": 1, "FROM": 0, "B": 32},
                             90, ("P5", "= -1")),
    "while ring N=3": (K.while_kernel, {"x_ptr": "*fp32", "tile_ids": "*i32", "n": "i32"},
                       {"N": 3, "ROLL": 3, "B": 32}, 90, None),
    "while ring wraps at 4": (K.while_kernel, {"x_ptr": "*fp32", "tile_ids": "*i32", "n": "i32"},
                              {"N": 3, "ROLL": 4, "B": 32}, 90, ("P5", "must be in [0, 3)) on a run with")),
    "borrow P/alpha/m/l": (K.borrow_kernel, {"x_ptr": "*fp32", "n_iter": "i32"},
                           {"BM": 128, "BN": 128, "ALPHA": 64, "M_COL": 65, "L_COL": 66}, 100, None),
    "borrow alpha inside P": (K.borrow_kernel, {"x_ptr": "*fp32", "n_iter": "i32"},
                              {"BM": 128, "BN": 128, "ALPHA": 63, "M_COL": 65, "L_COL": 66}, 100,
                              ("P8", "alpha cols [63, 64)")),
    "borrow l on m's column": (K.borrow_kernel, {"x_ptr": "*fp32", "n_iter": "i32"},
                               {"BM": 128, "BN": 128, "ALPHA": 64, "M_COL": 65, "L_COL": 65}, 100,
                               ("P8", "cols [65, 67)")),
    "slice 1-D reinterpret": (K.slice_kernel, {"x_ptr": "*i32"}, {"OFF": 1024, "WIDTH": 1024, "VIEW": 256}, 90, None),
    "slice read past its end": (K.slice_kernel, {"x_ptr": "*i32"}, {"OFF": 1536, "WIDTH": 512, "VIEW": 256}, 90,
                                ("P1", "bytes [1536, 2560)")),
    "steal: last buffer's tile past the end": (K.steal_kernel, {"x_ptr": "*fp32", "n": "i32"},
                                                {"NB": 5, "MOD": 5, "B": 32}, 90,
                                                ("P1", "of ring[4], but a buffer of ring has 4096 bytes: it reaches "
                                                 "bytes [16384, 24576) of ring, past its end (20480 bytes)")),
    "steal: tile into the next buffer": (K.steal_kernel, {"x_ptr": "*fp32", "n": "i32"},
                                         {"NB": 5, "MOD": 4, "B": 32}, 90, ("P1", "into the next buffer")),
    "double step N=2 (O channel)": (K.double_step_kernel, _I, {"N": 2, "WRAP": 2, "B": 32}, 90, None),
    "double step N=2 wraps at 3": (K.double_step_kernel, _I, {"N": 2, "WRAP": 3, "B": 32}, 90,
                                   ("P5", "must be in [0, 2)) on a run with")),
    "tlx tree-less, one index each": (K.tlx_treeless_kernel, {"x_ptr": "*fp32", "n": "i32"},
                                      {"QI": 0, "OI": 0, "RUNTIME": False, "B": 32}, 90, None),
    "tlx tree-less, q at i % 2": (K.tlx_treeless_kernel, {"x_ptr": "*fp32", "n": "i32"},
                                  {"QI": 0, "OI": 0, "RUNTIME": True, "B": 32}, 90, ("P3", "different stages")),
}

# Triton releases that refuse a kernel themselves: {name: {(major, minor): text of their diagnostic}}.
# 3.8 reinterprets only a whole allocation (not a subview, and at its exact size); 3.9 refuses a view larger
# than its source.
_SUBVIEW_38 = "source and result must not be subviews"
REJECTED = {
    "borrow P/alpha/m/l": {(3, 8): _SUBVIEW_38},
    "borrow alpha inside P": {(3, 8): _SUBVIEW_38},
    "borrow l on m's column": {(3, 8): _SUBVIEW_38},
    "slice 1-D reinterpret": {(3, 8): _SUBVIEW_38},
    "slice read past its end": {(3, 8): _SUBVIEW_38, (3, 9): "not owned by the source subview"},
    "steal: last buffer's tile past the end": {(3, 8): "must have the same logical storage size",
                                               (3, 9): "exceeds the source view"},
    "steal: tile into the next buffer": {(3, 8): "must have the same logical storage size",
                                         (3, 9): "exceeds the source view"},
}


def rejected_by_this_triton(name):
    """The diagnostic the installed Triton gives for kernel `name`, or None if it compiles it."""
    return REJECTED.get(name, {}).get(compat.VERSION[:2])


def compile_ttgir(name) -> str:
    """The kernel's ttgir (TLX kernels lowered by the plugin with its proof off: the test proves it)."""
    fn, sig, constexprs, cap, _ = CASES[name]
    src = GluonASTSource(fn, sig, constexprs)
    saved = os.environ.get("TLX_ALIAS_PROOF")
    os.environ["TLX_ALIAS_PROOF"] = "off"
    try:
        text = triton.compile(src, target=GPUTarget("cuda", cap, 32)).asm["ttgir"]
    finally:
        if saved is None:
            os.environ.pop("TLX_ALIAS_PROOF")
        else:
            os.environ["TLX_ALIAS_PROOF"] = saved
    return re.sub(r'"[^"]*/test/corpus/', '"', text)


def prove(name, text=None):
    from tlx_alias.verify import prove_module
    from tlx_alias.verify.source import load_triton
    loaded = load_triton(text or compile_ttgir(name), re.sub(r"\W+", "_", name) + ".ttgir")
    with loaded.context:
        return prove_module(loaded.module, None, loaded.aliases, loaded.path)


def table(runs: int = 5) -> str:
    rows = ["| kernel x config | target | expected | verdict | cannot prove | proof ms (median) | of it P7 ms |",
            "|---|---|---|---|---|---|---|"]
    for name, (_, _, _, cap, expect) in CASES.items():
        why = rejected_by_this_triton(name)
        if why:
            rows.append(f"| {name} | sm_{cap}a | {expect[0] if expect else 'safe'} | rejected by Triton ({why}) | | | |")
            continue
        text = compile_ttgir(name)
        times, p7, report = [], [], None
        for _ in range(runs):
            t0 = time.perf_counter()
            report = prove(name, text)
            times.append((time.perf_counter() - t0) * 1e3)
            p7.append(report.p7_ms)
        verdict = "VIOLATION " + ",".join(sorted({v.prop for v in report.violations})) if report.violations else (
            "CANNOT PROVE" if report.unknowns else "SAFE")
        rows.append(f"| {name} | sm_{cap}a | {expect[0] if expect else 'safe'} | {verdict} | {len(report.unknowns)} | "
                    f"{statistics.median(times):.0f} | {statistics.median(p7):.0f} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(f"triton {triton.__version__}")
    print(table())
