"""Mutation harness for P7: one synchronization bug at a time in the lowered IR of real kernels, judged by
an independent oracle (test/tools/p7_oracle.py), counted against what P7 reports.

    python test/tools/p7_mutate.py [KERNEL...] [--ops OP,...] [-v] [--dump DIR] [--mixed]

Input: each kernel's ttgir compiled on the CPU (the kernels of `kernels/` through the plugin; the correct
variants of test/tools/p7_seeded.py). A mutant is one edit of one synchronization op's line, the bug a
kernel author makes (one function per class in `OPERATORS`):

  weaken_wgmma_wait   `warpgroup_mma_wait(n)` -> n + 1: one more wgmma still reads its operands
  weaken_store_wait   `tma.store_wait(n)` -> n + 1: one more TMA store still reads its source
  drop_wait           an `mbarrier.wait` deleted
  flip_parity         an `mbarrier.wait(bar, phase)` waits on `phase ^ 1`
  wait_later          an `mbarrier.wait` / `tma.store_wait` moved below the next memory access of its block
                      (the access now runs before the wait: P before the S-MMA's wait, a TMA load before
                      store_wait)
  arrive_early        an `mbarrier.arrive` / `tcgen05_commit` moved above the previous memory access of its
                      block (a consumer releases a buffer before its last read)
  drop_mma_signal     a `tcgen05_commit` deleted, or an MMA's last `mbarriers=` entry dropped

Oracle: `p7_oracle.judge`, every interleaving and async completion order of the kernel unrolled with every
integer argument = each of `VALUES` that the unmutated kernel runs to completion with (a value at which
the correct kernel hangs is outside its domain). Verdicts per mutant:

  caught      the oracle finds a hazard and P7 reports a violation
  missed      the oracle finds a hazard in P7's scope (between two views, or within one view of an
              allocation that is shared: a spec's backing, or accessed through two views) and P7 does not
              (`cannot prove` counted apart)
  outside     the oracle finds hazards only within the one view of an allocation nothing else shares
  equivalent  no hazard in any interleaving (the mutant may hang: column `hang`); P7 flagging one: false alarm
  unsupported the oracle cannot build the model (reported, expected 0)

`--mixed`: P7 runs every integer argument at one value; a hazard only some M, N, K apart show is outside its
runs. For the kernels in `MIXED` each mutant P7 proves is judged again by the oracle at every assignment of
the values `MIXED` lists to the kernel's roles (M, N, K; n_tiles, k_tiles) with two roles apart, where the
unmutated kernel is a small model that completes: a hazard in P7's scope there is a mutant P7 misses by its
runs' design.
"""
from __future__ import annotations

import argparse
import itertools
import os
import re
import sys
import time
from dataclasses import dataclass, field

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import p7_oracle  # noqa: E402

VALUES = (3, 7, 128, 192, 256, 384)  # every integer argument takes each value in turn (kept: small models, see domain);
                                     # P7's own runs: verify/temporal.py RUNS
_GEMM = {"a_desc.shape.0": "M", "a_desc.shape.1": "K", "b_desc.shape.0": "K", "b_desc.shape.1": "N",
         "c_desc.shape.0": "M", "c_desc.shape.1": "N", "M": "M", "N": "N", "K": "K"}
MIXED = {  # kernel: ({argument name: role}, the values each role takes)
    "hopper_gemm": (_GEMM, (64, 128, 192, 256, 320, 384)),
    "blackwell_gemm": (_GEMM, (64, 128, 192, 256, 320, 384)),
    "ring_epilogue": ({"n_tiles": "tiles", "k_tiles": "k"}, (1, 2, 3, 4, 5, 6, 7, 8)),
}
MIXED_OTHERS = 128   # every other integer argument (strides)
ACCESS = ("ttg.local_load", "ttg.local_store", "ttng.tmem_load", "ttng.tmem_store", "ttng.warp_group_dot ",
          "ttng.tc_gen5_mma", "ttng.async_tma_copy_global_to_local", "ttng.async_tma_copy_local_to_global")
NAME = r"%[\w$.-]+(?:#\d+)?"


def _lines(text):
    return text.split("\n")


def _is(line, op):
    return re.search(rf"(^|= ){re.escape(op)}\b", line.strip()) is not None


def _boundary(line) -> bool:
    s = line.strip()
    return s.startswith("}") or s.endswith("{") or not s


def _access(line) -> bool:
    s = line.strip()
    return any(re.search(rf"(^|= ){re.escape(a.strip())}[ ,]", s) for a in ACCESS)


def _where(lines, n) -> str:
    m = re.search(r'^\s*(?:(' + NAME + r') = )?([\w.]+)', lines[n])
    return f"line {n + 1} ({m.group(2) if m else '?'})"


# ---------------------------------------------------------------------------------------------- operators

def _weaken(text, op):
    lines = _lines(text)
    for n, line in enumerate(lines):
        m = _is(line, op) and re.search(r"pendings = (\d+)", line)
        if m:
            k = int(m.group(1))
            out = lines[:n] + [line[:m.start()] + f"pendings = {k + 1}" + line[m.end():]] + lines[n + 1:]
            yield f"{_where(lines, n)} pendings {k} -> {k + 1}", "\n".join(out)


def weaken_wgmma_wait(text):
    """`warpgroup_mma_wait(n)` leaves one more wgmma group reading its SMEM operands."""
    yield from _weaken(text, "ttng.warp_group_dot_wait")


def weaken_store_wait(text):
    """`tma.store_wait(n)` leaves one more TMA store reading its source."""
    yield from _weaken(text, "ttng.async_tma_store_wait")


def drop_wait(text):
    """An `mbarrier.wait` deleted: the thread goes on without the phase it waited for."""
    lines = _lines(text)
    for n, line in enumerate(lines):
        if _is(line, "ttng.wait_barrier"):
            yield _where(lines, n), "\n".join(lines[:n] + lines[n + 1:])


def flip_parity(text):
    """`mbarrier.wait(bar, phase)` -> `mbarrier.wait(bar, phase ^ 1)`: returns on the previous phase."""
    lines = _lines(text)
    for n, line in enumerate(lines):
        m = _is(line, "ttng.wait_barrier") and re.search(rf"ttng\.wait_barrier ({NAME}), ({NAME})", line)
        if m:
            pad = line[:len(line) - len(line.lstrip())]
            new = [f"{pad}%p7m_one = arith.constant 1 : i32",
                   f"{pad}%p7m_flip = arith.xori {m.group(2)}, %p7m_one : i32",
                   line[:m.start(2)] + "%p7m_flip" + line[m.end(2):]]
            yield _where(lines, n), "\n".join(lines[:n] + new + lines[n + 1:])


def wait_later(text):
    """A wait moved below the next memory access of its block: that access now runs unprotected."""
    lines = _lines(text)
    for n, line in enumerate(lines):
        if not (_is(line, "ttng.wait_barrier") or _is(line, "ttng.async_tma_store_wait")):
            continue
        for k in range(n + 1, len(lines)):
            if _boundary(lines[k]):
                break
            if _access(lines[k]):
                out = lines[:n] + lines[n + 1:k + 1] + [line] + lines[k + 1:]
                yield f"{_where(lines, n)} below {_where(lines, k)}", "\n".join(out)
                break


def arrive_early(text):
    """An arrive / tcgen05_commit moved above the previous memory access of its block (not above the
    definitions of its operands): the buffer is released before that access."""
    lines = _lines(text)
    for n, line in enumerate(lines):
        if not (_is(line, "ttng.arrive_barrier") or _is(line, "ttng.tc_gen5_commit")):
            continue
        uses = set(re.findall(NAME, line.split(":")[0]))
        for k in range(n - 1, -1, -1):
            if _boundary(lines[k]):
                break
            defs = set(re.findall(rf"^\s*({NAME})(?::\d+)? = ", lines[k]))
            if defs & uses:
                break
            if _access(lines[k]):
                out = lines[:k] + [line] + lines[k:n] + lines[n + 1:]
                yield f"{_where(lines, n)} above {_where(lines, k)}", "\n".join(out)
                break


def drop_mma_signal(text):
    """A `tcgen05_commit` deleted, or the last `mbarriers=` entry of a tcgen05 MMA dropped: the barrier its
    waiters expect is no longer signalled by that MMA."""
    lines = _lines(text)
    for n, line in enumerate(lines):
        if _is(line, "ttng.tc_gen5_commit"):
            yield _where(lines, n), "\n".join(lines[:n] + lines[n + 1:])
        elif _is(line, "ttng.tc_gen5_mma"):
            m = re.search(rf", ({NAME})\[({NAME})\] (\{{[^}}]*\}} )?:", line)
            t = list(re.finditer(r", !ttg\.memdesc<1xi64[^>]*>", line))
            if m and t:
                cut = line[:m.start()] + " " + (m.group(3) or "") + ":" + line[m.end():]
                t = list(re.finditer(r", !ttg\.memdesc<1xi64[^>]*>", cut))[-1]
                yield f"{_where(lines, n)} without {m.group(1)}", "\n".join(
                    lines[:n] + [cut[:t.start()] + cut[t.end():]] + lines[n + 1:])


OPERATORS = {
    "weaken_wgmma_wait": weaken_wgmma_wait,
    "weaken_store_wait": weaken_store_wait,
    "drop_wait": drop_wait,
    "flip_parity": flip_parity,
    "wait_later": wait_later,
    "arrive_early": arrive_early,
    "drop_mma_signal": drop_mma_signal,
}


# ---------------------------------------------------------------------------------------------- kernels

def _seeded(kernel):
    import p7_seeded
    return lambda: p7_seeded.compile_ttgir(kernel, "none")


def _kernel(name):
    from tlx_alias.kernels import (blackwell_attention, blackwell_gemm, hopper_attention, hopper_attention_ws,
                                   hopper_gemm)
    return {
        "hopper_gemm": hopper_gemm.compile_gemm,
        "hopper_attention": hopper_attention.compile_attention,
        "hopper_attention_ws": hopper_attention_ws.compile_attention,
        "blackwell_attention": blackwell_attention.compile_attention,
        "blackwell_gemm": blackwell_gemm.compile_matmul,
        "ring_epilogue": _seeded("ring_epilogue"),
        "s_p_alias": _seeded("s_p_alias"),
        "s_p_ws": _seeded("s_p_ws"),
    }[name]


KERNELS = ("hopper_gemm", "hopper_attention", "hopper_attention_ws", "blackwell_attention", "blackwell_gemm",
           "ring_epilogue", "s_p_alias", "s_p_ws")


def ttgir(name: str) -> str:
    c = _kernel(name)()
    return c if isinstance(c, str) else (c.ttgir if hasattr(c, "ttgir") else c.asm["ttgir"])


# ---------------------------------------------------------------------------------------------- harness

def p7(text, path="mutant.ttgir"):
    """P7's verdicts on ttgir text (as `tlx-verify` reads a dump); InputError if Triton rejects the text."""
    from tlx_alias.verify import prove_module
    from tlx_alias.verify.source import load_triton
    loaded = load_triton(text, path)
    with loaded.context:
        return [v for v in prove_module(loaded.module, None, loaded.aliases, path).verdicts if v.prop == "P7"]


def domain(text) -> tuple:
    """The values of VALUES at which the unmutated kernel is a small model (loops of a few trips: at most
    `p7_oracle.MAX_EVENTS` events) that runs to completion in every interleaving (a value at which the
    correct kernel hangs, e.g. fewer key blocks than its prologue assumes, is outside its domain)."""
    out = []
    for v in VALUES:
        try:
            j = p7_oracle.judge(text, (v,))
        except p7_oracle.TooBig:
            continue
        if not j.hang:
            out.append(v)
    if not out:
        raise p7_oracle.Unsupported(f"no value of {VALUES} gives a small model that completes")
    return tuple(out)


@dataclass
class Outcome:
    kernel: str
    op: str
    target: str
    verdict: str                # caught | missed | outside | equivalent | unsupported | invalid
    p7: str                     # violation | proven | unknown | none
    oracle: object = None       # p7_oracle.Verdict
    found: list = field(default_factory=list)     # P7's violations: (first line, second line)
    pair_ok: bool = False       # one of P7's violations is a pair (of lines) the oracle also found
    details: list = field(default_factory=list)   # P7's violation texts
    note: str = ""
    text: str = ""

    @property
    def false_alarm(self) -> bool:
        return self.p7 == "violation" and self.verdict == "equivalent"


def _line_no(src: str) -> str:
    return src.rsplit(":", 1)[-1] if src else "?"


def judge(kernel, op, target, text, values) -> Outcome:
    from tlx_alias.verify.source import InputError
    try:
        verdicts = p7(text)
    except InputError as exc:
        return Outcome(kernel, op, target, "invalid", "none", note=str(exc).splitlines()[0], text=text)
    bad = [v for v in verdicts if v.status == "violation"]
    status = "violation" if bad else ("unknown" if any(v.status != "proven" for v in verdicts) else
                                      ("proven" if verdicts else "none"))
    try:
        o = p7_oracle.judge(text, values)
    except p7_oracle.Unsupported as exc:
        return Outcome(kernel, op, target, "unsupported", status, note=str(exc), text=text)
    found = [tuple(v.data["lines"]) for v in bad]
    pairs = {(h.first[1], h.second[1]) for h in o.hazards}
    pairs |= {(b, a) for a, b in pairs}
    pair_ok = bool(found) and any((a.rsplit("/", 1)[-1], b.rsplit("/", 1)[-1]) in pairs for a, b in found)
    if o.unsafe and bad:
        verdict = "caught"
    elif o.scoped:
        verdict = "missed"
    elif o.unsafe:
        verdict = "outside"
    else:
        verdict = "equivalent"
    note = "" if o.complete else "oracle incomplete"
    return Outcome(kernel, op, target, verdict, status, o, found, pair_ok, [v.detail for v in bad], note, text)


def mixed_runs(kernel) -> list:
    """{argument name: value, None: the others'} for every assignment of the kernel's roles with two apart."""
    roles, values = MIXED[kernel]
    names = sorted(set(roles.values()))
    out = []
    for pick in itertools.product(values, repeat=len(names)):
        if len(set(pick)) > 1:
            by_role = dict(zip(names, pick))
            out.append({**{arg: by_role[r] for arg, r in roles.items()}, None: MIXED_OTHERS})
    return out


def mixed(kernel, text, outcomes) -> list:
    """The mutants P7 proves that the oracle finds a hazard of P7's scope in at mixed arguments: (outcome, run)."""
    runs = []
    for r in mixed_runs(kernel):
        try:
            j = p7_oracle.judge(text, (r,))
        except p7_oracle.TooBig:
            continue
        if not j.hang and not j.unsafe:
            runs.append(r)
    found = []
    for o in outcomes:
        if o.p7 != "proven":
            continue
        for r in runs:
            try:
                if p7_oracle.judge(o.text, (r,)).scoped:
                    found.append((o, r))
                    break
            except p7_oracle.Unsupported:
                continue
    print(f"{kernel}: mixed arguments: {len(runs)} runs; {sum(o.p7 == 'proven' for o in outcomes)} mutants P7 "
          f"proves, {len(found)} with a hazard in P7's scope at mixed arguments", file=sys.stderr)
    return found


def run(kernel, text, ops=None, values=None) -> list:
    values = values or domain(text)
    out = []
    for name in ops or OPERATORS:
        for target, mutant in OPERATORS[name](text):
            out.append(judge(kernel, name, target, mutant, values))
    return out


COLS = ("mutants", "unsafe", "in P7 scope", "caught", "pair ok", "missed", "(unproven)", "outside", "equivalent",
        "hang", "false alarm", "cannot prove", "incomplete")


def counts(outcomes) -> dict:
    n = lambda f: sum(1 for o in outcomes if f(o))  # noqa: E731
    return {
        "mutants": len(outcomes),
        "unsafe": n(lambda o: o.verdict in ("caught", "missed", "outside")),
        "in P7 scope": n(lambda o: o.verdict in ("caught", "missed")),
        "caught": n(lambda o: o.verdict == "caught"),
        "pair ok": n(lambda o: o.verdict == "caught" and o.pair_ok),
        "missed": n(lambda o: o.verdict == "missed"),
        "(unproven)": n(lambda o: o.verdict == "missed" and o.p7 == "unknown"),
        "outside": n(lambda o: o.verdict == "outside"),
        "equivalent": n(lambda o: o.verdict == "equivalent"),
        "hang": n(lambda o: o.verdict == "equivalent" and o.oracle is not None and o.oracle.hang),
        "false alarm": n(lambda o: o.false_alarm),
        "cannot prove": n(lambda o: o.p7 == "unknown"),
        "incomplete": n(lambda o: o.oracle is not None and not o.oracle.complete),
    }


def table(outcomes, key) -> str:
    groups = list(dict.fromkeys(key(o) for o in outcomes))
    w = max([len(g) for g in groups] + [6])
    head = f"{'':{w}} " + " ".join(f"{c:>{max(len(c), 5)}}" for c in COLS)
    out = [head, "-" * len(head)]
    for g in groups + ["total"]:
        c = counts([o for o in outcomes if g == "total" or key(o) == g])
        out.append(f"{g:{w}} " + " ".join(f"{c[k]:>{max(len(k), 5)}}" for k in COLS))
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kernels", nargs="*", metavar="KERNEL", help=f"default: all of {', '.join(KERNELS)}")
    ap.add_argument("--ops", help=f"comma-separated subset of {', '.join(OPERATORS)}")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every mutant")
    ap.add_argument("--dump", metavar="DIR", help="write each missed / false-alarm mutant's ttgir there")
    ap.add_argument("--mixed", action="store_true", help=f"judge the mutants P7 proves again at mixed arguments "
                    f"({', '.join(MIXED)})")
    args = ap.parse_args(argv)
    ops = args.ops.split(",") if args.ops else None
    for bad in [k for k in args.kernels if k not in KERNELS] + [o for o in ops or [] if o not in OPERATORS]:
        ap.error(f"unknown kernel or operator {bad!r}")
    outcomes, base_ok, missed_mixed = [], True, []
    import p7_seeded
    for name in args.kernels or KERNELS:
        refused = p7_seeded.refused_by_this_triton(name) if name in p7_seeded.KERNELS else None
        if refused:
            print(f"{name}: skipped, the installed Triton refuses it itself ({refused})", file=sys.stderr)
            continue
        t0 = time.perf_counter()
        text = ttgir(name)
        values = domain(text)
        base = p7(text, name + ".ttgir")
        ok = all(v.status == "proven" for v in base) and not p7_oracle.judge(text, values).unsafe
        base_ok &= ok
        got = run(name, text, ops, values)
        outcomes += got
        if args.mixed and name in MIXED:
            missed_mixed += mixed(name, text, got)
        print(f"{name}: unmutated {'proven by P7 and safe by the oracle' if ok else 'NOT OK'}; {len(got)} mutants, "
              f"oracle arguments {values}, {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    print(table(outcomes, lambda o: o.op))
    print()
    print(table(outcomes, lambda o: o.kernel))
    for o, r in missed_mixed:
        print(f"\nMISSED AT MIXED ARGUMENTS {o.kernel} {o.op}: {o.target}  [P7: proven]\n    oracle at "
              f"{ {k: v for k, v in r.items() if k} }: {p7_oracle.judge(o.text, (r,)).summary()}")
    for k, o in enumerate(outcomes):
        shown = args.verbose or o.verdict in ("missed", "unsupported", "invalid") or o.false_alarm or o.note or (
            o.verdict == "caught" and not o.pair_ok)
        if not shown:
            continue
        print(f"\n{o.verdict.upper()}{' (P7 false alarm)' if o.false_alarm else ''} {o.kernel} {o.op}: {o.target}"
              f"  [P7: {o.p7}{'; ' + o.note if o.note else ''}]")
        if o.oracle is not None:
            print(f"    oracle: {o.oracle.summary()}")
        for a, b in o.found[:2]:
            print(f"    P7: {a} -> {b}")
        if args.dump and (o.verdict == "missed" or o.false_alarm):
            os.makedirs(args.dump, exist_ok=True)
            path = os.path.join(args.dump, f"{o.kernel}.{o.op}.{k}.ttgir")
            with open(path, "w") as f:
                f.write(o.text)
            print(f"    -> {path}")
    missed = any(o.verdict in ("missed", "unsupported", "invalid") for o in outcomes)
    return 1 if not base_ok or missed or missed_mixed else 0


if __name__ == "__main__":
    sys.exit(main())
