"""Ships `plugin/tlx_alias.pth` at the root of site-packages, which no setuptools option can do.

The start-up file lets `TRITON_PASS_PLUGIN=tlx_alias` switch the plugin on without touching user code.
It goes next to the packages in a wheel, and into the editable wheel (setuptools points `install_lib`
there) in an editable install.
"""
import os

from setuptools import setup
from setuptools.command.build_py import build_py

PTH = os.path.join("plugin", "tlx_alias.pth")


class build_py_with_pth(build_py):
    def run(self):
        super().run()
        root = self.get_finalized_command("install").install_lib if self.editable_mode else self.build_lib
        self.copy_file(PTH, os.path.join(root, "tlx_alias.pth"), preserve_mode=False)

    def get_outputs(self, include_bytecode=True):
        return super().get_outputs(include_bytecode) + [os.path.join(self.build_lib, "tlx_alias.pth")]


setup(cmdclass={"build_py": build_py_with_pth})
