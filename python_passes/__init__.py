"""tlx-alias passes over the upstream MLIR Python bindings, one module per pass.

`get_all_passes()` is the single registry: pass name -> module with `NAME` and `run(module, ctx)`.
"""

import importlib

_MODULES = {
    "tlx-import": "tlx_import",
    "tlx-size-definition": "size_definition",
    "tlx-buffer-offset": "buffer_offset",
    "tlx-storage-alias-allocation": "storage_alias_allocation",
    "tlx-export": "export",
}

# The order the plugin runs them in (seed 000: size -> offsets -> allocation).
PIPELINE = tuple(_MODULES)


def get_all_passes():
    """Registered passes, imported lazily, keyed by their name."""
    return {name: importlib.import_module(f"{__name__}.{mod}") for name, mod in _MODULES.items()}
