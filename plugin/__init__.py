"""The Triton side of tlx-alias: `hook` (the stages hook, cache key) and `activation` (TRITON_PASS_PLUGIN).

Kept import-free: `tlx_alias.pth` imports `tlx_alias.plugin.activation` at interpreter start-up.
"""
