"""tlx-alias: TLX-style storage aliasing (storage_alias_spec / reuse_group) for Gluon on stock Triton."""

__version__ = "0.1.0"
