"""Z3 safety proof of SMEM/TMEM aliasing in lowered Triton GPU IR (P1..P6, P8: `props`; P7, time: `temporal`).

In the pipeline the hook proves the lowered module on a thread of its own (`prove_module`, in
`plugin.hook.PendingProof`) and judges the report before code generation ends (`judge`: raises TlxAliasError
for what stops the compile, warns of the rest). A caller with a module of its own proves and judges in one call:

    from tlx_alias.verify import enforce
    enforce(upstream_module, target="cuda:100", aliases=aliases)   # raises TlxAliasError on a violation

`TLX_ALIAS_PROOF` = `error` (default, fail closed: a violation, and a "cannot prove" on bounds, index
range or overlap, stop the compile with the reason), `warn` (both become TlxAliasWarning), `strict` (also
"cannot prove" on capacity: the sum of a kernel's allocations over the limit), `off` (no proof).
P7 (`temporal`: accesses to shared bytes ordered by the kernel's synchronization, on bounded runs): a
violation stops the compile under `error`; its "cannot prove" is a warning under `error` and stops only
under `strict` (a bounded run is evidence, not a proof for all arguments; `TLX_ALIAS_P7=off` skips it).
Capacity alone stays a warning under `error`: Triton's allocator reuses the memory of allocations whose
lifetimes do not overlap, which this proof does not model, so a sum over the limit is often fine, and
Triton itself fails the compile (or the launch) when the placed kernel really does not fit.

Offline: `prove_module(module, target, aliases) -> Report`, or the `tlx-verify` command (`verify/cli.py`).
"""
from __future__ import annotations

import os
import threading
import time

import z3

from tlx_alias import targets
from tlx_alias.errors import TlxAliasError, env_mode, warn_at

from . import model as _model
from .encode import _attr_int
from . import props as _props
from . import temporal as _temporal
from .report import Report, alloc_maps

__all__ = ["prove_module", "enforce", "judge", "mode_from_env", "Report", "capability_of", "MODES", "ENV"]

ENV = "TLX_ALIAS_PROOF"
MODES = ("off", "warn", "error", "strict")


def capability_of(target, module=None) -> int | None:
    """90 / 100 ... from `target` (see tlx_alias.targets.capability), else the module's `ttg.target`."""
    if target is None and module is not None:
        attrs = module.operation.attributes
        if "ttg.target" in attrs:
            target = str(attrs["ttg.target"]).strip('"')
    return targets.capability(target)


def ctas_of(module) -> int:
    """CTAs per cluster the module is compiled for (`ttg.num-ctas`; 1 where the module does not say)."""
    return _attr_int(module.operation, "ttg.num-ctas") or 1


def cluster_verdicts(kernel, ctas: int) -> list:
    """Nothing about a kernel of several CTAs per cluster is proven: the model places each buffer whole in one
    CTA's memory and runs one CTA, while a CGA layout splits a buffer between the CTAs (each holds part of it)
    and other CTAs write and signal into these bytes (TMA multicast, arrives from other CTAs, two-CTA MMAs):
    a race between CTAs was "proven", a correct two-CTA kernel a violation."""
    detail = (f"the kernel runs {ctas} CTAs per cluster (ttg.num-ctas = {ctas}): the checker models one CTA, "
              "with every buffer whole in its memory, not how a CGA layout splits buffers between the CTAs or "
              "what other CTAs write into them (TMA multicast, arrives from other CTAs, two-CTA MMAs)")
    return [_props.Verdict("P1-P8", a.name, _props.UNKNOWN, "one CTA per cluster", detail, a.src,
                           "tlx-verify proves kernels compiled with num_ctas=1") for a in kernel.allocs]


_z3 = {"spare": None, "spare_ms": 0.0, "maker": None, "lock": threading.Lock()}


def _after_fork_in_child():
    """A child forked while a proof held the lock (or the spare context was being made) would wait for it
    forever at its first proof: that thread does not exist in the child."""
    _z3.update(spare=None, maker=None, lock=threading.Lock())


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _make_spare():
    t0 = time.thread_time()
    _z3["spare"] = z3.Context()
    _z3["spare_ms"] = (time.thread_time() - t0) * 1e3


def _z3_context():
    """A new Z3 context for every proof. A solver's work depends on its context's history (term ids
    order its heuristics): with one context per process the same kernel's proof cost 0.1 to 3 s depending
    on what had been proven before, and could end "cannot prove" at the resource limit. A context costs
    ~10 ms to create, so the next one is made in a background thread after each proof (ctypes releases
    the GIL; the thread is not a daemon, so the interpreter never exits in the middle of it). Returns the
    context and the CPU time another thread spent making it (0 where made here): the proof's work too."""
    if _z3["maker"] is not None:
        _z3["maker"].join()
    ctx, _z3["spare"] = _z3["spare"], None
    made_ms = _z3["spare_ms"] if ctx is not None else 0.0
    _z3["maker"] = threading.Thread(target=_make_spare, name="tlx-verify-z3-context")
    _z3["maker"].start()
    return ctx or z3.Context(), made_ms


def prove_module(upstream_module, target=None, aliases=None, path: str | None = None) -> Report:
    """Prove P1-P8 for every allocation of every kernel in a (generic-form, upstream bindings) module.

    target: "cuda:90" / "cuda:100" / 100 / GPUTarget (default: the module's `ttg.target`);
    aliases: {"#name": definition} of the attribute aliases the module's opaque types still reference
    (what `tlx_alias.bridge.to_upstream` returns); path: shown in messages, names "-" locations.
    """
    with _z3["lock"]:
        return _prove(upstream_module, target, aliases, path)


def _prove(upstream_module, target, aliases, path) -> Report:
    (ctx, made_ms), kernels = _z3_context(), []
    try:
        report = _prove_in(upstream_module, target, aliases, path, ctx, kernels)
        report.context_ms = made_ms
        return report
    finally:
        _release(ctx, kernels)


def _release(ctx, kernels):
    """Break the reference cycles that reach the proof's Z3 context (context -> its caches of templates,
    numerals and the integer sort -> terms, `encode._template`, `encode.num`; allocation <-> views <-> index
    sites holding terms, `model`), so the context and its terms are freed when the proof returns (the Report
    holds no Z3 object), not at the next full garbage collection: until then 15-50 contexts stayed alive,
    1.2-1.6 GB RSS over 1,000 proofs."""
    for key in [k for k in ctx.__dict__ if k.startswith("_tlx_")]:
        del ctx.__dict__[key]
    for k in kernels:
        for a in k.allocs:
            for v in a.views:
                v.sites.clear()
            a.views.clear()
            a.subs.clear()


def _prove_in(upstream_module, target, aliases, path, ctx, kernels) -> Report:
    t0 = time.thread_time()
    cap = capability_of(target, upstream_module)
    kernels += _model.build(upstream_module, aliases, path, ctx)
    verdicts, maps, notes, calls, units, p7_ms = [], [], [], 0, 0, 0.0
    ctas = ctas_of(upstream_module)
    for k in kernels:
        if ctas > 1:
            verdicts += cluster_verdicts(k, ctas)
            continue
        q = _props.Query(k.enc)
        items = []
        for a in k.allocs:
            for check in _props.PER_ALLOC:
                items += check(k, a, q)
        verdicts += _props.settle(items, q) + _props.p6_capacity(k, cap)
        if _temporal.enabled():
            t7 = time.thread_time()
            verdicts += _temporal.p7_temporal(k, path)
            p7_ms += (time.thread_time() - t7) * 1e3
        maps += alloc_maps(k)
        notes += [f"{k.name}: {n}" for n in dict.fromkeys(k.notes)]
        calls += q.calls
        units += q.spent
    return Report(f"sm_{cap}" if cap else "unknown target", cap, [k.name for k in kernels], verdicts, maps, notes,
                  (time.thread_time() - t0) * 1e3, calls, path or "", units, p7_ms)


def mode_from_env() -> str:
    return env_mode(ENV, MODES, "error", "tlx-verify")


def enforce(upstream_module, target=None, aliases=None, mode: str | None = None) -> Report | None:
    """Prove the module, then `judge` the report under `mode` (default: TLX_ALIAS_PROOF); None under `off`."""
    mode = mode or mode_from_env()
    if mode == "off":
        return None
    return judge(prove_module(upstream_module, target, aliases), mode)


def judge(report: Report, mode: str) -> Report:
    """What stops the compile under `mode` (module doc) raises as a TlxAliasError naming the first such verdict;
    the other violations and "cannot prove" verdicts become warnings at their kernel lines."""
    stops = {"error": report.violations + report.blocking, "strict": report.violations + report.unknowns}
    bad = stops.get(mode, [])
    if bad:
        first = bad[0]
        more = f" (and {len(bad) - 1} more: run tlx-verify on the dumped IR for all)" if len(bad) > 1 else ""
        fix = first.fix
        if first.status != "violation":
            fix = (f"{fix}. " if fix else "") + f"To compile anyway with a warning, set {ENV}=warn"
        raise TlxAliasError(f"tlx-verify {first.prop}", f"{first.status}: {first.check}: {first.detail}{more}",
                            fix, first.src or None)
    for v in report.violations + report.unknowns:
        warn_at(v.src, f"[tlx-verify {v.prop}] {v.status}: {v.detail}")
    return report
