"""Activation without touching user code: `TRITON_PASS_PLUGIN=tlx_alias`.

The wheel puts `tlx_alias.pth` in site-packages. At interpreter start-up it imports this module (standard
library only, so an unset variable costs nothing) and calls `arm()` when the variable names this plugin
(a comma list such as `foo,tlx_alias` works; other names are ignored). `arm()` installs the stages hook
(`tlx_alias.plugin.hook`) right after `triton` is first imported.
"""

from __future__ import annotations

import sys

ENV = "TRITON_PASS_PLUGIN"
NAME = "tlx_alias"


def arm():
    """Install the hook as soon as `triton` is imported (now, if it already is). Called by tlx_alias.pth."""
    mod = sys.modules.get("triton")
    if mod is not None and getattr(getattr(mod, "__spec__", None), "_initializing", False) is False:
        _install()
        return
    if not any(isinstance(f, _TritonWatcher) for f in sys.meta_path):
        sys.meta_path.insert(0, _TritonWatcher())


def _install():
    try:
        from tlx_alias.plugin import hook
        hook.install()
    except Exception as exc:  # `import triton` must not break; the failure is said, loudly
        import warnings
        from tlx_alias.errors import TlxAliasWarning
        warnings.warn(TlxAliasWarning(f"{ENV}={NAME}: the tlx-alias hook was not installed: {exc!r}; "
                                      "kernels using the tlx API will fail to import it"))


class _TritonWatcher:
    """A one-shot meta-path finder: finds `triton` through the other finders, installs after it executes."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "triton":
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find else None
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _InstallAfter(spec.loader)
                return spec
        return None


class _InstallAfter:
    """Loader wrapper: run the real loader, put it back on the module, then install the hook."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = self.loader
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        _install()
