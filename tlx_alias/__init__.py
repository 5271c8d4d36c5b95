"""tlx-alias: TLX-style storage aliasing (storage_alias_spec / reuse_group) for Gluon on stock Triton."""

__version__ = "0.2.0"   # the package's version (pyproject.toml reads it here)
