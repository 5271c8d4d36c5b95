"""Fuzz the API with misuse: kernels that make one mistake each, which must end in a clear error (or warning).

    python test/fuzz/fuzz_misuse.py --minutes 10 [--seed N] [--save DIR]          # exit 1 on a failure
    python test/fuzz/fuzz_misuse.py --seed N --case I --show                      # one case

Case I of seed N draws a misuse kind and its details (shapes, dtypes, buffer counts, storage, where in the
kernel) from `random.Random(f"{N}:{I}")`. Every generated kernel marks the offending line with `# @bad`;
the kernel is compiled through the plugin in a forked child (kernel_runner.py). The contract:

- an error misuse ends in a TlxAliasError whose line is the `# @bad` line (README, Errors: "Every error names
  the kernel source line of the offending call");
- a warning misuse compiles, with a TlxAliasWarning attributed to the `# @bad` line;
- never a native abort, a hang, another exception (a traceback), a silent compile, or a file left behind.

Failure classes: crash, silent compile, missing warning, unclear error (no line, or another line), file left
behind. test/pytest/test_fuzz_misuse.py runs every kind once, with a fixed seed, in CI.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernel_runner  # noqa: E402
from fuzz_trees import ITEMSIZE, module, uses  # noqa: E402

SMEM, TMEM = "tlx.storage_kind.smem", "tlx.storage_kind.tmem"


class Draw:
    """Random details shared by the misuse kinds."""

    def __init__(self, rng: random.Random, storage: str):
        self.rng, self.storage = rng, storage
        self.kind = SMEM if storage == "smem" else TMEM
        self.ring = rng.random() < 0.3
        self.body: list = []
        self.allocs: list = []

    def shape(self):
        r = self.rng
        if self.storage == "smem":
            return (r.choice([16, 32, 64]), r.choice([16, 32, 64])), r.choice(["float16", "float32", "int8"])
        return (128, r.choice([16, 32, 64])), r.choice(["float32", "bfloat16"])

    def spec(self, name="spec", extra="", mark=""):
        self.body.append(f"{name} = tlx.storage_alias_spec(storage={self.kind}{extra}){mark}")

    def alloc(self, name, spec="spec", num=None, shape=None, dtype=None, storage=None, mark="", use=True):
        s, d = self.shape()
        shape, dtype = shape or s, dtype or d
        num = num or self.rng.choice([1, 2, 3, 4])
        kind = storage or self.kind
        self.body.append(f"{name} = tlx.local_alloc({shape}, gl.{dtype}, {num}, {kind}, reuse={spec}){mark}")
        if use:
            self.allocs.append((name, shape, dtype, num))
        return name, shape, dtype, num

    def use_all(self):
        for name, shape, dtype, num in self.allocs:
            self.body += uses(name, shape, dtype, num, self.storage, self.ring)


BAD = "  # @bad"


def _any_storage(rng):
    return rng.choice(["smem", "smem", "tmem"])


# Each kind: rng -> (arch, body, expected "error" | "warning"). The `# @bad` line is the one to be named.

def not_in_tree(rng):
    d = Draw(rng, _any_storage(rng))
    d.spec()
    d.alloc("a")
    d.alloc("b", mark=BAD)
    d.body.append("spec.set_buffer_overlap(tlx.reuse_group(a))")
    d.use_all()
    return d, "error"


def tree_of_another_spec(rng):
    d = Draw(rng, _any_storage(rng))
    d.spec("s0")
    d.spec("s1")
    d.alloc("a", spec="s0")
    d.alloc("b", spec="s1")
    d.body.append("s1.set_buffer_overlap(tlx.reuse_group(b))")
    d.body.append("s0.set_buffer_overlap(tlx.reuse_group(b))" + BAD)
    d.use_all()
    return d, "error"


def group_mixes_specs(rng):
    d = Draw(rng, _any_storage(rng))
    d.spec("s0")
    d.spec("s1")
    d.alloc("a", spec="s0")
    d.alloc("b", spec="s1")
    d.body.append("g = tlx.reuse_group(a, b)" + BAD)
    d.use_all()
    return d, "error"


def leaf_twice(rng):
    d = Draw(rng, _any_storage(rng))
    d.spec()
    d.alloc("a")
    d.body.append(f"g = tlx.reuse_group(a, a, group_type=tlx.reuse_group_type.{rng.choice(['shared', 'distinct'])})"
                  + BAD)
    d.use_all()
    return d, "error"


def too_small_explicit(rng):
    d = Draw(rng, "smem")
    (r, c), dtype = d.shape()
    b = r * c * ITEMSIZE[dtype]
    num = rng.choice([1, 2])
    need = num * (-(-2 * b // 128) * 128)           # distinct(a, b), two buffers of b bytes, per index
    d.spec(extra=f", buffer_size_bytes={rng.randint(1, need - 1)}")
    d.alloc("a", num=num, shape=(r, c), dtype=dtype)
    d.alloc("b", num=num, shape=(r, c), dtype=dtype)
    d.body.append("spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=tlx.reuse_group_type.distinct))" + BAD)
    # the distinct group that overflows is named; its reuse_group is on the set_buffer_overlap line
    d.use_all()
    return d, "error"


def wrong_storage(rng):
    storage = _any_storage(rng)
    d = Draw(rng, storage)
    d.spec()
    other = TMEM if storage == "smem" else SMEM
    shape = (128, 32) if other == TMEM else (32, 32)
    d.alloc("a", storage=other, shape=shape, dtype="float32", mark=BAD, use=False)
    d.arch = 100           # a target with tensor memory: the mismatch is the only mistake
    return d, "error"


def overlap_twice(rng):
    d = Draw(rng, _any_storage(rng))
    d.spec()
    d.alloc("a")
    d.body.append("spec.set_buffer_overlap(tlx.reuse_group(a))")
    d.body.append("spec.set_buffer_overlap(tlx.reuse_group(a))" + BAD)
    d.use_all()
    return d, "error"


def overlap_under_runtime_if(rng):
    d = Draw(rng, _any_storage(rng))
    d.spec()
    d.alloc("a")
    d.body.append("if gl.program_id(0) == 0:")
    d.body.append("    spec.set_buffer_overlap(tlx.reuse_group(a))" + BAD)
    d.use_all()
    return d, "error"


def overlap_under_runtime_for(rng):
    d = Draw(rng, _any_storage(rng))
    d.spec()
    d.alloc("a")
    d.body.append(f"for t in range({rng.randint(1, 3)}):")
    d.body.append("    spec.set_buffer_overlap(tlx.reuse_group(a))" + BAD)
    d.use_all()
    return d, "error"


def constant_index_out_of_range(rng):
    d = Draw(rng, _any_storage(rng))
    d.spec()
    name, shape, dtype, num = d.alloc("a")
    d.use_all()
    d.body.append(f"a.index({num + rng.randint(0, 2)}).store(gl.full({list(shape)}, 0, gl.{dtype}, a_l))" + BAD)
    return d, "error"


def runtime_index_out_of_range(rng):
    d = Draw(rng, _any_storage(rng))
    d.spec()
    name, shape, dtype, num = d.alloc("a")
    d.use_all()
    d.body.append(f"for t in range({num + 1}):")
    d.body.append(f"    gl.store(a_p + t, a.index(t).load(a_l).to(gl.float32))" + BAD)
    return d, "error"


def view_before_index(rng):
    d = Draw(rng, _any_storage(rng))
    d.spec()
    name, (r, c), dtype, num = d.alloc("a")
    d.body.append("spec.set_buffer_overlap(tlx.reuse_group(a))")
    d.use_all()
    if d.storage == "smem":
        call = rng.choice(["a.slice(0, 1, dim=0)", f"a.slice(0, {r // 2}, dim=1)", f"a.slice(0, {c // 2}, dim=2)",
                           "a.permute((0, 2, 1))", f"a.reshape(({num}, {r * c}))",
                           f"compat.reinterpret(a, gl.int8, [{num * r * c * ITEMSIZE[dtype]}], "
                           "gl.SwizzledSharedLayout(1, 1, 1, [0]))"])
    else:
        call = rng.choice([f"a.slice(0, {c // 2})", f"compat.reinterpret(a, gl.{dtype}, [{num}, {r}, {c}], a.layout)"])
    d.body.append(f"v = {call}" + BAD)
    return d, "error"


def tmem_on_hopper(rng):
    d = Draw(rng, "tmem")
    d.spec()
    d.alloc("a", shape=(128, 32), dtype="float32", use=False, mark=BAD)
    d.body.append("a.index(0).store(gl.full([128, 32], 0, gl.float32, "
                  "compat.tmem_reg_layout(gl.float32, [128, 32], a.type.layout, 4)))")
    d.arch = 90
    return d, "error"


def group_size_not_positive(rng):
    d = Draw(rng, _any_storage(rng))
    d.spec()
    d.alloc("a")
    d.body.append(f"g = tlx.reuse_group(a, group_size={rng.choice([0, -1, -4])})" + BAD)
    d.use_all()
    return d, "error"


def smem_cluster_spec(rng):
    d = Draw(rng, "smem")
    d.body.append("spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smemCluster)" + BAD)
    return d, "error"


def bad_buffer_size(rng):
    d = Draw(rng, _any_storage(rng))
    d.spec(extra=f", buffer_size_bytes={rng.choice([0, -1, -4096, 2 ** 31])}", mark=BAD)
    d.alloc("a")
    d.use_all()
    return d, "error"


def over_capacity(rng):
    d = Draw(rng, _any_storage(rng))
    d.spec(mark=BAD)
    if d.storage == "smem":
        d.alloc("a", num=rng.choice([4, 5, 8]), shape=(128, 128), dtype="float32")
    else:
        d.alloc("a", num=rng.choice([3, 4]), shape=(128, 256), dtype="float32")
    d.body.append("spec.set_buffer_overlap(tlx.reuse_group(a))")
    d.use_all()
    return d, "error"


def count_not_divisible(rng):
    d = Draw(rng, _any_storage(rng))
    d.spec()
    k = rng.choice([2, 3, 4])
    d.alloc("a", num=k * rng.randint(1, 2) + rng.randint(1, k - 1), mark=BAD)
    d.body.append(f"spec.set_buffer_overlap(tlx.reuse_group(a, group_size={k}))")
    d.use_all()
    return d, "error"


def tmem_rows(rng):
    d = Draw(rng, "tmem")
    d.spec()
    d.alloc("a", shape=(rng.choice([16, 32, 96]), 32), dtype="float32", mark=BAD, use=False)
    return d, "error"


def non_power_of_two_smem_shape(rng):
    d = Draw(rng, "smem")
    d.spec()
    shape = rng.choice([(48, 64), (64, 48), (24, 32), (96, 64)])
    d.alloc("a", shape=shape, dtype="float16", mark=BAD, use=False)
    d.body.append(f"a.index(0).store(gl.full({list(shape)}, 0, gl.float16, "
                  "gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])))")
    return d, "error"


def reuse_not_a_spec(rng):
    d = Draw(rng, _any_storage(rng))
    d.body.append(f"a = tlx.local_alloc((128, 32), gl.float32, 2, {d.kind}, reuse={rng.choice(['3', 'x_ptr'])})"
                  + BAD)
    return d, "error"


def element_not_an_allocation(rng):
    d = Draw(rng, _any_storage(rng))
    d.spec()
    d.alloc("a")
    d.body.append(f"g = tlx.reuse_group(a.index(0))" + BAD)
    d.use_all()
    return d, "error"


def distinct_group_size(rng):
    d = Draw(rng, _any_storage(rng))
    d.spec()
    name, shape, dtype, num = d.alloc("a", num=2)
    d.alloc("b", num=2, shape=shape, dtype=dtype)
    d.body.append(f"g = tlx.reuse_group(a, b, group_type=tlx.reuse_group_type.distinct, group_size="
                  f"{rng.choice([2, 4])})" + BAD)
    d.body.append("spec.set_buffer_overlap(g)")
    d.use_all()
    return d, "warning"


def unused_spec(rng):
    d = Draw(rng, _any_storage(rng))
    d.spec(mark=BAD)
    d.body.append("gl.store(x_ptr, 1.0)")
    return d, "warning"


def unused_allocation(rng):
    d = Draw(rng, _any_storage(rng))
    d.spec()
    d.alloc("a")
    d.alloc("b", mark=BAD, use=False)
    d.body.append("spec.set_buffer_overlap(tlx.reuse_group(a, b))")
    d.use_all()
    return d, "warning"


def legacy_reuse(rng):
    d = Draw(rng, _any_storage(rng))
    (r, c), dtype = d.shape()
    if d.storage == "smem":
        d.body.append(f"a = gl.allocate_shared_memory(gl.{dtype}, [2, {r}, {c}], "
                      f"gl.NVMMASharedLayout.get_default_for([{r}, {c}], gl.{dtype}))")
    else:
        d.body.append(f"a = tlx.local_alloc(({r}, {c}), gl.{dtype}, 2, {d.kind})")
    d.body.append(f"b = tlx.local_alloc(({r}, {c}), gl.{dtype}, 2, {d.kind}, reuse=a)" + BAD)
    d.allocs += [("a", (r, c), dtype, 2), ("b", (r, c), dtype, 2)]
    d.use_all()
    return d, "warning"


KINDS = [not_in_tree, tree_of_another_spec, group_mixes_specs, leaf_twice, too_small_explicit, wrong_storage,
         overlap_twice, overlap_under_runtime_if, overlap_under_runtime_for, constant_index_out_of_range,
         runtime_index_out_of_range, view_before_index, tmem_on_hopper, group_size_not_positive, smem_cluster_spec,
         bad_buffer_size, over_capacity, count_not_divisible, tmem_rows, non_power_of_two_smem_shape,
         reuse_not_a_spec, element_not_an_allocation, distinct_group_size, unused_spec, unused_allocation,
         legacy_reuse]


def draw(seed: int, index: int, kind=None):
    """(kind name, arch, source, expected "error" | "warning") of case `index` of `seed`."""
    rng = random.Random(f"{seed}:{index}")
    fn = kind or rng.choice(KINDS)
    d, want = fn(rng)
    arch = getattr(d, "arch", 100 if d.storage == "tmem" else rng.choice([90, 100]))
    return fn.__name__, arch, module(d.body, f"test/fuzz/fuzz_misuse.py, case {seed}:{index} ({fn.__name__})"), want


def judge(src: str, want: str, o: kernel_runner.Outcome) -> list:
    out = []
    if o.left:
        out.append(("file left behind", ", ".join(o.left)))
    bad = f"{o.path}:{kernel_runner.line_of(src, '# @bad')}"
    if o.status in ("killed", "hung", "no-result"):
        return out + [("crash", f"{o.status} {o.error} {o.stderr[-800:]}")]
    if o.status == "exception":
        return out + [("crash", f"{o.error.get('type')}: {o.error.get('message', '')[-400:]}\n"
                                f"{o.error.get('traceback', '')[-1500:]}")]
    if want == "error":
        if o.status == "ok":
            return out + [("silent compile", f"compiled; warnings {o.warnings}")]
        if o.error.get("src") != bad:
            out.append(("unclear error", f"names {o.error.get('src')}, not {bad}: {o.error.get('message', '')[:400]}"))
        return out
    if o.status != "ok":
        return out + [("unclear error", f"an error where a warning was expected: {o.error.get('message', '')[:400]}")]
    if bad not in {where for _, where in o.warnings}:
        out.append(("missing warning", f"no warning at {bad}: {o.warnings}"))
    return out


def check(seed: int, index: int, kind=None):
    name, arch, src, want = draw(seed, index, kind)
    o = kernel_runner.run(src, {"x_ptr": "*fp32"}, arch, name=f"misuse_{seed}_{index}")
    return name, src, want, o, judge(src, want, o)


def fuzz(seed, cases, minutes, save, log=print) -> dict:
    stats = {"cases": 0, "kinds": collections.Counter(), "failures": collections.Counter(), "examples": {},
             "by_kind": collections.Counter()}
    end = time.monotonic() + minutes * 60 if minutes else None
    t0, index = time.monotonic(), 0
    while (cases is None or index < cases) and (end is None or time.monotonic() < end):
        name, src, want, o, found = check(seed, index)
        stats["cases"] += 1
        stats["kinds"][name] += 1
        for cls, detail in found:
            stats["failures"][cls] += 1
            stats["by_kind"][f"{cls}: {name}"] += 1
            stats["examples"].setdefault(f"{cls}: {name}", (f"--seed {seed} --case {index}", detail))
        if found:
            log(f"case {index} ({name}): {[c for c, _ in found]}")
            if save:
                os.makedirs(save, exist_ok=True)
                with open(os.path.join(save, f"misuse_{seed}_{index}.py"), "w") as f:
                    f.write(src)
        index += 1
    stats["seconds"] = time.monotonic() - t0
    return stats


def table(stats) -> str:
    n, s = stats["cases"], stats["seconds"]
    rows = [("cases", f"{n}"), ("misuse kinds", f"{len(stats['kinds'])}"), ("seconds", f"{s:.0f}"),
            ("cases per second", f"{n / s:.2f}")]
    rows += [(f"failure: {k}", f"{v}") for k, v in sorted(stats["failures"].items())] or [("failures", "0")]
    rows += [(f"  {k}", f"{v}") for k, v in sorted(stats["by_kind"].items())]
    width = max(len(r[0]) for r in rows)
    return "\n".join([f"| {'misuse kernels':<{width}} | count |", f"|{'-' * (width + 2)}|-------|"] +
                     [f"| {a:<{width}} | {b} |" for a, b in rows])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int)
    ap.add_argument("--cases", type=int)
    ap.add_argument("--minutes", type=float)
    ap.add_argument("--case", type=int)
    ap.add_argument("--kind", choices=[k.__name__ for k in KINDS], help="with --case: force this misuse kind")
    ap.add_argument("--show", action="store_true")
    ap.add_argument("--save", metavar="DIR")
    args = ap.parse_args(argv)
    seed = random.SystemRandom().randrange(2 ** 32) if args.seed is None else args.seed
    kernel_runner.prepare()
    if args.case is not None:
        kind = next((k for k in KINDS if k.__name__ == args.kind), None)
        name, src, want, o, found = check(seed, args.case, kind)
        if args.show:
            print(src)
            print("expected:", want)
            print("outcome:", json.dumps(o.__dict__, indent=1, default=str)[:4000])
        print(name, "failures:", found or "none")
        return 1 if found else 0
    minutes = args.minutes if args.minutes is not None else (None if args.cases else 1.0)
    print(f"fuzzing misuse kernels, --seed {seed}, " + (f"{args.cases} cases" if args.cases else f"{minutes:g} min"),
          flush=True)
    stats = fuzz(seed, args.cases, minutes, args.save, log=lambda m: print(m, flush=True))
    print(table(stats))
    for cls, (where, detail) in sorted(stats["examples"].items()):
        print(f"\nfirst {cls}: {where}\n  {detail[:1500]}")
    return 1 if stats["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
