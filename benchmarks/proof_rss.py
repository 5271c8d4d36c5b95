"""Memory over many proofs in one process, as a table (a benchmark, not a test): `python benchmarks/proof_rss.py`.

An autotuning sweep proves hundreds of configurations in one process, so memory must not grow with the
number of proofs (issue 11: a module-level cache once kept every proof's Z3 context alive, 3.4 GB after
200 proofs). This proves `--proofs` modules in turn (round robin over seed 000's layout, the hand-aliased
kernels and the lowered IR of real kernels, as `proof_timing.py` obtains them) with no explicit
`gc.collect()` (as a compile would), and prints the resident set size (VmRSS) every `--every` proofs and
the growth from the first row to the last.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import proof_timing  # noqa: E402

from tlx_alias.verify import prove_module  # noqa: E402
from tlx_alias.verify.source import load_generic  # noqa: E402


def rss_mib(field: str = "VmRSS") -> float:
    """This process's resident set size (VmRSS) or its peak (VmHWM), MiB, from /proc/self/status."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def modules(kernels: bool = True) -> list:
    """[(name, prove)] where prove() runs one whole proof of that module."""
    out = []
    seed = load_generic(proof_timing.synth.module_text(proof_timing.synth.seed000_fa()), "seed000.mlir")
    out.append(("seed 000 FA TMEM layout", seed))
    out += list(proof_timing._hand_kernels())
    provers = []
    for name, loaded in out:
        provers.append((name, lambda ld=loaded: _in_context(ld)))
    if kernels:
        for name, (module, target, aliases) in proof_timing._lowered_kernels():
            provers.append((name, lambda m=module, t=target, a=aliases: prove_module(m, t, a)))
    return provers


def _in_context(loaded):
    with loaded.context:
        return prove_module(loaded.module, None, loaded.aliases)


def measure(proofs: int, every: int, kernels: bool = True):
    """[(proofs done, RSS MiB, peak MiB, ms per proof over the last `every`)] plus the module names."""
    provers = modules(kernels)
    for _, prove in provers:        # warm up: imports, first-use caches of the bindings and of Z3
        prove()
    rows, t0 = [], time.perf_counter()
    for n in range(1, proofs + 1):
        report = provers[(n - 1) % len(provers)][1]()
        assert report.violations == [], f"{provers[(n - 1) % len(provers)][0]}: {report.text()}"
        if n % every == 0:
            now = time.perf_counter()
            rows.append((n, rss_mib(), rss_mib("VmHWM"), (now - t0) * 1e3 / every))
            t0 = now
    return rows, [name for name, _ in provers]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python benchmarks/proof_rss.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--proofs", type=int, default=1000)
    p.add_argument("--every", type=int, default=100)
    p.add_argument("--no-kernels", action="store_true", help="skip compiling the kernels of tlx_alias.kernels")
    args = p.parse_args(argv)
    rows, names = measure(args.proofs, args.every, kernels=not args.no_kernels)
    print(f"{len(names)} modules, round robin: {', '.join(names)}")
    print(f"{'proofs':>7} {'RSS MiB':>9} {'peak MiB':>9} {'ms/proof':>9}")
    for n, rss, peak, ms in rows:
        print(f"{n:>7} {rss:>9.1f} {peak:>9.1f} {ms:>9.1f}")
    (n0, r0, _, _), (n1, r1, _, _) = rows[0], rows[-1]
    print(f"\nRSS growth from proof {n0} to proof {n1}: {r1 - r0:+.1f} MiB ({(r1 - r0) * 1024 / max(1, n1 - n0):+.1f} KiB per proof)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
