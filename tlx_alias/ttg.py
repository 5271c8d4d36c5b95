"""Facts about Triton GPU IR in generic form (Triton ops unregistered), shared by the passes and the verifier.

`passes_to` says where scf and `ttg.warp_specialize` hand a value on (a loop's next iteration and result, an
if's result, a partition's argument): the lowering follows a view's descriptor along it, the verifier a
loop-carried integer.

`ttg.warp_specialize` keeps its partitions' regions on a nested `ttg.warp_specialize.partitions` op; block
argument k of every partition region is capture k. Triton 3.6 takes the captures as operands of
`ttg.warp_specialize`, 3.7 and later as operands of `ttg.warp_specialize.partitions`: both are read here.
"""

WS = "ttg.warp_specialize"
WS_PARTITIONS = "ttg.warp_specialize.partitions"
# Ops that touch their memory operands only when their `pred` operand (an i1) is true.
PREDICATED_OPS = {"ttng.arrive_barrier", "ttng.barrier_expect", "ttng.wait_barrier",
                  "ttng.async_tma_copy_global_to_local", "ttng.async_tma_copy_local_to_global",
                  "ttng.async_tma_gather", "ttng.async_tma_scatter", "ttng.tmem_store"}


def _op(x):
    return getattr(x, "operation", x)


def predicates(op) -> list:
    """The i1 operands of an op, in order (a predicated op's `pred` is its only one)."""
    return [a for a in _op(op).operands if str(a.type) == "i1"]


def pred_operand(op):
    """The `pred` of a predicated op: its only i1 operand, or None (no i1 operand, or several)."""
    flags = predicates(op)
    return flags[0] if len(flags) == 1 else None


def partitions_op(ws):
    """The `ttg.warp_specialize.partitions` op of a `ttg.warp_specialize` (None if it has none)."""
    for region in _op(ws).regions:
        for block in region.blocks:
            for op in block.operations:
                if _op(op).name == WS_PARTITIONS:
                    return _op(op)
    return None


def captures(ws_or_partitions) -> list:
    """The captured values, in block-argument order, from either op."""
    op = _op(ws_or_partitions)
    if op.name == WS:
        parts = partitions_op(op)
        return list(op.operands) if len(op.operands) else list(parts.operands if parts is not None else [])
    if op.name == WS_PARTITIONS:
        return list(op.operands) if len(op.operands) else list(_op(op.parent).operands)
    raise ValueError(f"{op.name} is not a warp_specialize op")


def capture_of(block_argument):
    """The value a partition's block argument captures, or None if it is not a partition argument."""
    parent = _op(block_argument.owner.region.owner)
    if parent.name != WS_PARTITIONS:
        return None
    return captures(parent)[block_argument.arg_number]


def partition_args(ws_or_partitions, k: int) -> list:
    """Block argument k of every partition region (what capture k becomes inside each partition)."""
    op = _op(ws_or_partitions)
    parts = partitions_op(op) if op.name == WS else op
    return [region.blocks[0].arguments[k] for region in parts.regions] if parts is not None else []


def passes_to(owner, pos: int):
    """The block arguments and results that operand `pos` of `owner` (an scf op, a yield or condition, a
    warp_specialize) hands its value on to; None where the op consumes the value instead (a loop bound, an if
    or while condition, any other op)."""
    owner = _op(owner)
    name = owner.name
    if name == "scf.for" and pos >= 3:
        return [owner.regions[0].blocks[0].arguments[pos - 2], owner.results[pos - 3]]
    if name == "scf.while":
        return [owner.regions[0].blocks[0].arguments[pos]]
    if name == "scf.condition" and pos >= 1:
        parent = _op(owner.parent)
        return [parent.regions[1].blocks[0].arguments[pos - 1], parent.results[pos - 1]]
    if name == "scf.yield":
        parent = _op(owner.parent)
        if parent.name == "scf.for":
            return [parent.results[pos], parent.regions[0].blocks[0].arguments[pos + 1]]
        if parent.name == "scf.while":  # the `after` region's yield feeds the next iteration's `before` region
            return [parent.regions[0].blocks[0].arguments[pos]]
        if parent.name in ("scf.if", "scf.execute_region", "scf.index_switch"):
            return [parent.results[pos]]
        return None
    if name in (WS, WS_PARTITIONS):
        return partition_args(owner, pos)
    return None
