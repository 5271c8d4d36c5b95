"""Facts about Triton GPU IR in generic form (Triton ops unregistered), shared by the passes and the verifier.

`ttg.warp_specialize` keeps its partitions' regions on a nested `ttg.warp_specialize.partitions` op; block
argument k of every partition region is capture k. Triton 3.6 takes the captures as operands of
`ttg.warp_specialize`, 3.7 and later as operands of `ttg.warp_specialize.partitions`: both are read here.
"""

WS = "ttg.warp_specialize"
WS_PARTITIONS = "ttg.warp_specialize.partitions"


def _op(x):
    return getattr(x, "operation", x)


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
