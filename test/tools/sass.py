"""SASS of a compiled kernel, read per warp-specialized partition (CPU tests and the GPU smoke run).

    from sass import disassemble, partitions, ptxas_report, softmax_float_ops, softmax_overlap
    text = disassemble(compiled.asm["cubin"])      # None when no nvdisasm is found

`partitions(text)` cuts the SASS at the `USETMAXREG` instructions Triton emits when a `gl.warp_specialize`
partition starts (each partition sets its register budget first) and counts per piece: HGMMA (wgmma), UTMALDG /
UTMASTG (TMA loads / stores), MUFU.EX2 (exp2). `softmax_overlap(text)` counts, for every
`WARPGROUP.DEPBAR.LE gsb0, 0x1` (a wgmma wait leaving one group in flight), the MUFU.EX2 issued before the next
`WARPGROUP.DEPBAR.LE gsb0, 0x0`: the exp2s that run while that group (P V in the attention kernels) is still on
the tensor cores; `softmax_float_ops(text)` counts the FP32 FMUL / FFMA / FADD in the same windows.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile

_SETMAXREG = re.compile(r"USETMAXREG\.(TRY_ALLOC|DEALLOC)\.CTAPOOL (?:U?P\d+, )?(0x[0-9a-f]+)")


def _tool(name: str) -> str | None:
    """A CUDA binary: the one bundled with Triton's NVIDIA backend, else one on PATH or under /usr/local/cuda*."""
    try:
        import triton.backends.nvidia as nv
        bundled = os.path.join(os.path.dirname(nv.__file__), "bin", name)
        if os.access(bundled, os.X_OK):
            return bundled
    except ImportError:
        pass
    found = shutil.which(name)
    if found:
        return found
    for root in sorted(os.listdir("/usr/local")) if os.path.isdir("/usr/local") else []:
        path = os.path.join("/usr/local", root, "bin", name)
        if root.startswith("cuda") and os.access(path, os.X_OK):
            return path
    return None


def disassembler() -> str | None:
    return _tool("nvdisasm")


def ptxas(arch: int = 90) -> str | None:
    """The ptxas Triton itself runs for `arch` (3.9 uses its newer `ptxas-blackwell` from sm_90 on)."""
    try:
        from triton.backends.nvidia.compiler import get_ptxas
        return get_ptxas(arch).path
    except Exception:  # no NVIDIA backend, or a tool Triton cannot find
        return _tool("ptxas")


def ptxas_report(ptx: str, arch: str = "sm_90a") -> str | None:
    """ptxas -v's messages for a PTX module (registers, spills, 'wgmma ... serialized' warnings), or None."""
    tool = ptxas(int(re.match(r"sm_(\d+)", arch).group(1)))
    if tool is None:
        return None
    res = subprocess.run([tool, f"-arch={arch}", "-v", "-o", os.devnull, "-"], input=ptx, capture_output=True,
                         text=True, check=True)
    return res.stderr


def disassemble(cubin: bytes) -> str | None:
    tool = disassembler()
    if tool is None:
        return None
    with tempfile.TemporaryDirectory(prefix="tlx-sass-") as tmp:
        path = os.path.join(tmp, "kernel.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        return subprocess.run([tool, "-c", path], capture_output=True, text=True, check=True).stdout


def _instructions(text: str) -> list:
    return [re.sub(r"/\*[0-9a-f]+\*/", "", line).strip() for line in text.splitlines()
            if re.match(r"\s+/\*[0-9a-f]{4,}\*/", line)]


def partitions(text: str) -> list:
    """[{regs, entry, hgmma, tma_loads, tma_stores, ex2}] for each piece of code between USETMAXREG instructions,
    in code order (the first piece, before any USETMAXREG, has regs None)."""
    pieces = [{"regs": None, "entry": "kernel", "code": []}]
    for ins in _instructions(text):
        m = _SETMAXREG.search(ins)
        if m:
            pieces.append({"regs": int(m.group(2), 16), "entry": m.group(1).lower(), "code": []})
        pieces[-1]["code"].append(ins)
    out = []
    for p in pieces:
        code = p.pop("code")
        p.update(hgmma=sum(i.startswith("HGMMA") for i in code),
                 tma_loads=sum("UTMALDG" in i for i in code), tma_stores=sum("UTMASTG" in i for i in code),
                 ex2=sum("MUFU.EX2" in i for i in code))
        out.append(p)
    return out


def _softmax_windows(text: str) -> list:
    """The instructions between each `DEPBAR.LE gsb0, 0x1` and the next `DEPBAR.LE gsb0, 0x0`, in code order."""
    code = _instructions(text)
    out, i = [], 0
    while i < len(code):
        if "WARPGROUP.DEPBAR.LE gsb0, 0x1" in code[i]:
            j = next((k for k in range(i + 1, len(code)) if "WARPGROUP.DEPBAR.LE gsb0, 0x0" in code[k]), len(code))
            out.append(code[i:j])
            i = j
        i += 1
    return out


def _opcode(ins: str) -> str:
    return re.sub(r"^@!?U?P[T\d]+\s+", "", ins).split(" ", 1)[0].split(".", 1)[0]


def softmax_overlap(text: str) -> list:
    """MUFU.EX2 count between each `DEPBAR.LE gsb0, 0x1` and the next `DEPBAR.LE gsb0, 0x0`, in code order."""
    return [sum("MUFU.EX2" in c for c in window) for window in _softmax_windows(text)]


def softmax_float_ops(text: str) -> list:
    """{opcode: count} of the FP32 arithmetic (FMUL, FFMA, FADD) in each window of `softmax_overlap`."""
    return [{op: sum(_opcode(c) == op for c in window) for op in ("FMUL", "FFMA", "FADD")}
            for window in _softmax_windows(text)]


def summary(text: str) -> str:
    """One line per partition piece that does something (for logs)."""
    rows = [p for p in partitions(text) if p["hgmma"] or p["tma_loads"] or p["tma_stores"]]
    return "; ".join(f"{p['regs']} regs ({p['entry']}): HGMMA {p['hgmma']}, TMA loads {p['tma_loads']}, "
                     f"TMA stores {p['tma_stores']}, EX2 {p['ex2']}" for p in rows)
