"""lit configuration: FileCheck comes from the triton wheel, tools from the project's venv."""
import os
import shutil
import sys

import lit.formats
import triton

config.name = "tlx-alias"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py", "lit.local.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)

# FileCheck ships inside the triton wheel (LLVM 22); no system LLVM needed.
filecheck = os.path.join(os.path.dirname(triton.__file__), "FileCheck")
config.substitutions.append(("FileCheck", f"{filecheck} --enable-var-scope"))
config.substitutions.append(("%PYTHON", sys.executable))
# tlx-opt / tlx-verify are console scripts of the venv running lit.
bindir = os.path.dirname(sys.executable)
config.environment["PATH"] = bindir + os.pathsep + config.environment.get("PATH", os.environ.get("PATH", ""))
# `REQUIRES: triton-3.6` etc.: the installed Triton release, for inputs only some releases compile.
config.available_features.add("triton-%s.%s" % tuple(triton.__version__.split(".")[:2]))
# Keep tests hermetic: no plugin or cache state leaking in from the caller.
for var in ("TRITON_PASS_PLUGIN", "TRITON_CACHE_DIR", "TRITON_KERNEL_DUMP"):
    config.environment.pop(var, None)
