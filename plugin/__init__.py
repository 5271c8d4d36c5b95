"""The Triton side of tlx-alias: `hook` (stages hook, activation, cache key).

Kept import-free: `tlx_alias.pth` imports `tlx_alias.plugin.hook` at interpreter start-up.
"""
