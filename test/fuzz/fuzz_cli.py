"""Fuzz `tlx-verify` with bad inputs and check the contract every input must keep.

    python test/fuzz/fuzz_cli.py --minutes 10 [--seed N] [--ttgir] [--save DIR]      # exit 1 on a failure

Inputs (hypothesis): raw bytes, MLIR-token soup, and 1-3 mutations of valid inputs (truncation, deleted
lines, flipped bytes, inserted bytes, duplicated or swapped lines, a splice of two files); the valid ones are
test/lit/verify/tlx-fa-seed000.mlir and the generic test/lit/verify/bugs/*.mlir, plus with --ttgir Triton's
custom-form dumps of the hand-aliased kernels (compiled at start by test/lit/verify/Inputs/make_inputs.py).
Each case runs `tlx-verify FILE` in a forked child of this process (the imports are paid once; a crash of
the parser or the solver kills only the child) and must:

- exit 0, 1, 2 or 3 (not killed by a signal, not hung);
- print no Python traceback;
- not exit 0 when the input has no kernel (no `tt.func` in its bytes);
- name the input: in its error (exit 2) or in its report (0, 1, 3);
- leave no file behind in its temporary directory;
- not crash the proof (exit 2 "the proof failed on this input ... a tlx-verify bug"): IR that parses but
  that its dialects reject is "malformed IR" at its line:col.

Prints a table: cases, cases per second, exit statuses, failures by class, how many exit-2 cases were IR
that parsed but that its dialects reject ("malformed IR" at its line:col, `verify/wellformed.py`), and "the
proof failed on this input" errors (exit 2, reported as tlx-verify bugs) by exception.
test/pytest/test_fuzz_cli.py runs a short derandomized version in CI.
"""
from __future__ import annotations

import argparse
import collections
import faulthandler
import glob
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass

from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis import strategies as st

from forked import run_forked

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VERIFY = os.path.join(ROOT, "test", "lit", "verify")
VALID = [os.path.join(VERIFY, "tlx-fa-seed000.mlir")] + sorted(glob.glob(os.path.join(VERIFY, "bugs", "*.mlir")))
TIMEOUT_S = 120      # a case that runs longer than this is a hang (proofs are bounded by resource limits)


def corpus(ttgir_dir: str | None = None) -> dict:
    """{name: bytes} of valid inputs: the generic .mlir files that hold a kernel (+ the .ttgir files of a dir)."""
    files = [p for p in VALID if b'"tt.func"' in open(p, "rb").read()]
    files += sorted(glob.glob(os.path.join(ttgir_dir, "*.ttgir"))) if ttgir_dir else []
    return {os.path.basename(p): open(p, "rb").read() for p in files}


# ---------------------------------------------------------------------------------------------- inputs

@dataclass
class Case:
    data: bytes
    suffix: str
    how: str


def _lines(data):
    return data.split(b"\n")


@st.composite
def _mutation(draw, data: bytes, other: bytes):
    n = max(len(data), 1)
    lines = _lines(data)
    kind = draw(st.sampled_from(["truncate", "delete-lines", "flip", "insert", "duplicate-line", "swap-lines",
                                 "splice"]))
    if kind == "truncate":
        return kind, data[:draw(st.integers(0, n))]
    if kind == "delete-lines":
        i = draw(st.integers(0, len(lines) - 1))
        j = draw(st.integers(i + 1, min(i + 4, len(lines))))
        return kind, b"\n".join(lines[:i] + lines[j:])
    if kind == "flip":
        out = bytearray(data or b"\0")
        for _ in range(draw(st.integers(1, 4))):
            out[draw(st.integers(0, len(out) - 1))] ^= draw(st.integers(1, 255))
        return kind, bytes(out)
    if kind == "insert":
        at = draw(st.integers(0, len(data)))
        return kind, data[:at] + draw(st.binary(min_size=1, max_size=4)) + data[at:]
    if kind == "duplicate-line":
        i = draw(st.integers(0, len(lines) - 1))
        return kind, b"\n".join(lines[:i + 1] + lines[i:])
    if kind == "swap-lines":
        i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
        lines[i], lines[j] = lines[j], lines[i]
        return kind, b"\n".join(lines)
    return kind, data[:draw(st.integers(0, n))] + other[draw(st.integers(0, len(other))):]


def bad_inputs(valid: dict):
    """Strategy of Cases from the valid inputs `valid` ({name: bytes})."""
    names = sorted(valid)
    tokens = sorted({t for d in valid.values() for t in re.split(rb"(\s+)", d) if t})

    @st.composite
    def mutated(draw):
        name = draw(st.sampled_from(names))
        data, hows = valid[name], []
        for _ in range(draw(st.integers(1, 3))):
            how, data = draw(_mutation(data, valid[draw(st.sampled_from(names))]))
            hows.append(how)
        return Case(data, draw(st.sampled_from([".mlir", ".ttgir"])), f"{'+'.join(hows)} of {name}")

    raw = st.builds(lambda b, s: Case(b, s, "bytes"), st.binary(max_size=4096), st.sampled_from([".mlir", ".ttgir"]))
    soup = st.builds(lambda ts, s: Case(b"".join(ts), s, "token soup"), st.lists(st.sampled_from(tokens), max_size=200),
                     st.sampled_from([".mlir", ".ttgir"]))
    return st.one_of(mutated(), mutated(), mutated(), raw, soup)


# ---------------------------------------------------------------------------------------------- one case

@dataclass
class Outcome:
    code: int | None        # exit status, None when killed
    signal: int | None
    stdout: str
    stderr: str
    left: list               # files left in the case's temporary directory
    hung: bool = False


def _child(argv, work):
    """In the forked child: tlx-verify ARGV as its console script runs it, output to files in `work`."""
    from tlx_alias.verify import cli
    tmp = os.path.join(work, "tmp")
    os.environ["TMPDIR"] = tempfile.tempdir = tmp
    for fd, name in ((1, "stdout"), (2, "stderr")):
        f = os.open(os.path.join(work, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(f, fd)
        os.close(f)
    sys.stdout, sys.stderr = open(1, "w", closefd=False), open(2, "w", closefd=False)
    faulthandler.enable(sys.stderr)    # a crash's Python stack goes with the case, not to the parent's stderr
    try:
        code = cli.main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # what the console script would show: a traceback, exit 1
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code if isinstance(code, int) and 0 <= code < 256 else 1)


def run_case(case: Case) -> tuple[str, Outcome]:
    """(input path, what tlx-verify did with it) in a fresh directory, removed afterwards."""
    work = tempfile.mkdtemp(prefix="tlx-fuzz-")
    try:
        os.mkdir(os.path.join(work, "tmp"))
        path = os.path.join(work, "input" + case.suffix)
        with open(path, "wb") as f:
            f.write(case.data)
        status, hung = run_forked(lambda: _child([path], work), TIMEOUT_S)
        read = lambda name: open(os.path.join(work, name), errors="replace").read()   # noqa: E731
        outcome = Outcome(os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                          os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
                          read("stdout"), read("stderr"), sorted(os.listdir(os.path.join(work, "tmp"))), hung)
        return path, outcome
    finally:
        shutil.rmtree(work)


def failures(case: Case, path: str, o: Outcome) -> list:
    """The contract's broken clauses, by class (empty: the case is fine)."""
    out = []
    if o.hung:
        out.append(f"hung (> {TIMEOUT_S} s)")
    elif o.signal is not None:
        out.append(f"killed by {signal.Signals(o.signal).name}")
    elif o.code not in (0, 1, 2, 3):
        out.append(f"exit status {o.code}")
    if "Traceback (most recent call last)" in o.stderr:
        out.append("Python traceback")
    if o.code == 0 and b"tt.func" not in case.data:
        out.append("exit 0 without a kernel")
    if o.code == 2 and path not in o.stderr or o.code in (0, 1, 3) and path not in o.stdout:
        out.append("input not named")
    if o.left:
        out.append("file left behind")
    if internal_error(o):
        out.append("proof crash")
    return out


def internal_error(o: Outcome) -> str | None:
    """The exception type of a "the proof failed on this input" error (a bug tlx-verify reports), or None."""
    m = re.search(r"the proof failed on this input: (\w+)", o.stderr)
    return m.group(1) if m else None


def malformed(o: Outcome) -> str | None:
    """"malformed IR" / "unsupported IR" when tlx-verify refused IR that parsed (exit 2, at the op's line:col)."""
    m = re.search(r"^tlx-verify: error: .*?:\d+:\d+: (malformed IR|unsupported IR): ", o.stderr, re.M)
    return m.group(1) if m else None


def check(case: Case) -> list:
    """The failure classes of one case (what the CI test asserts empty)."""
    path, o = run_case(case)
    return failures(case, path, o)


# ---------------------------------------------------------------------------------------------- long run

class _TimeUp(BaseException):
    """Ends hypothesis's generation loop (not an Exception, so it is not taken for a failing example)."""


def fuzz(minutes: float, valid: dict, rng_seed: int, save: str | None) -> dict:
    stats = {"cases": 0, "codes": collections.Counter(), "failures": collections.Counter(),
             "internal": collections.Counter(), "malformed": collections.Counter(), "examples": {}}
    end = time.monotonic() + minutes * 60

    @settings(max_examples=10 ** 9, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet, derandomize=False)
    @given(bad_inputs(valid))
    def one(case):
        if time.monotonic() > end:
            raise _TimeUp
        path, o = run_case(case)
        stats["cases"] += 1
        stats["codes"]["signal" if o.code is None else o.code] += 1
        found = failures(case, path, o)
        kind = internal_error(o)
        for cls in found:
            stats["failures"][cls] += 1
            stats["examples"].setdefault(cls, (case.how, o.stderr.strip()[-300:]))
        bad_ir = malformed(o)
        if bad_ir:
            stats["malformed"][bad_ir] += 1
        if kind:
            stats["internal"][kind] += 1
            stats["examples"].setdefault(f"internal {kind}", (case.how, o.stderr.strip()[-300:]))
        if save and (found or kind):
            os.makedirs(save, exist_ok=True)
            with open(os.path.join(save, f"{stats['cases']:06d}{case.suffix}"), "wb") as f:
                f.write(case.data)

    one = seed(rng_seed)(one)
    t0 = time.monotonic()
    try:
        one()
    except _TimeUp:
        pass
    stats["seconds"] = time.monotonic() - t0
    return stats


def table(stats: dict) -> str:
    n, s = stats["cases"], stats["seconds"]
    rows = [("cases", f"{n}"), ("seconds", f"{s:.0f}"), ("cases per second", f"{n / s:.1f}")]
    rows += [(f"exit {k}", f"{v}") for k, v in sorted(stats["codes"].items(), key=str)]
    rows += [(f"failure: {k}", f"{v}") for k, v in sorted(stats["failures"].items())] or [("failures", "0")]
    rows += [(f"of exit 2: {k} at its line:col", f"{v}") for k, v in sorted(stats["malformed"].items())]
    rows += [(f"'the proof failed' (exit 2): {k}", f"{v}") for k, v in sorted(stats["internal"].items())]
    width = max(len(r[0]) for r in rows)
    return "\n".join([f"| {'':<{width}} | count |", f"|{'-' * (width + 2)}|-------|"] +
                     [f"| {a:<{width}} | {b} |" for a, b in rows])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--seed", type=int, help="hypothesis seed (default: random)")
    ap.add_argument("--ttgir", action="store_true", help="also mutate Triton custom-form dumps (compiled at start)")
    ap.add_argument("--save", metavar="DIR", help="write every failing input (and every proof crash) there")
    args = ap.parse_args(argv)
    import tlx_alias.bridge  # noqa: F401  (imported once here, not in every child)
    import tlx_alias.verify.cli  # noqa: F401
    import tlx_alias.verify.source  # noqa: F401
    with tempfile.TemporaryDirectory(prefix="tlx-fuzz-ttgir-") as ttgir:
        if args.ttgir:
            sys.path.insert(0, os.path.join(VERIFY, "Inputs"))
            import make_inputs
            for name in make_inputs.KERNELS:
                if not make_inputs.rejected_by_this_triton(name):
                    with open(os.path.join(ttgir, name + ".ttgir"), "w") as f:
                        f.write(make_inputs.compile_ttgir(name))
        valid = corpus(ttgir if args.ttgir else None)
        rng_seed = random.SystemRandom().randrange(2 ** 32) if args.seed is None else args.seed
        print(f"fuzzing tlx-verify for {args.minutes:g} min, --seed {rng_seed}, on {len(valid)} valid inputs: "
              f"{', '.join(sorted(valid))}", flush=True)
        stats = fuzz(args.minutes, valid, rng_seed, args.save)
    print(table(stats))
    for cls, (how, err) in sorted(stats["examples"].items()):
        print(f"\nfirst {cls}: {how}\n  {err}")
    return 1 if stats["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
