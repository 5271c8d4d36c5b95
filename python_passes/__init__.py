"""tlx-alias passes over the upstream MLIR bindings, one pass class per module.

`get_all_passes()` is the single registry: pass name -> pass class (a frozen dataclass whose fields are
its options), imported lazily. `PIPELINE` is the order the plugin runs them in (seed 000: import ->
size -> offsets -> allocation -> export).
"""

import importlib

_CLASSES = {
    "tlx-import": ("tlx_import", "TlxImport"),
    "tlx-size-definition": ("size_definition", "SizeDefinition"),
    "tlx-buffer-offset": ("buffer_offset", "BufferOffset"),
    "tlx-storage-alias-allocation": ("storage_alias_allocation", "StorageAliasAllocation"),
    "tlx-export": ("export", "TlxExport"),
}

PIPELINE = tuple(_CLASSES)


def get_all_passes() -> dict:
    """Registered passes, imported lazily, keyed by their name."""
    return {name: getattr(importlib.import_module(f"{__name__}.{mod}"), cls) for name, (mod, cls) in _CLASSES.items()}
