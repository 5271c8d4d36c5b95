"""The package as users install it: sdist -> wheel (`python -m build`) -> a fresh virtual environment.

The wheel must hold the whole product (frontend, plugin, passes, proof), the `tlx_alias.pth` start-up file,
and no top-level `plugin` / `verify` / `kernels` / `python_passes`. A kernel that shares two views must
compile to one allocation there, proven, with the plugin switched on by the import or by the variable.
"""
import os
import shutil
import site
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

USER_SCRIPT = '''
import importlib.util, sys
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
{import_line}

BLOCKED: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])


@gluon.jit
def two_views(out_ptr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    f32 = tlx.local_alloc((64, 64), gl.float32, 2, tlx.storage_kind.smem, reuse=spec)
    b16 = tlx.local_alloc((64, 64), gl.bfloat16, 4, tlx.storage_kind.smem, reuse=spec)
    offs = gl.arange(0, 64, layout=gl.SliceLayout(1, BLOCKED))
    for i in range(4):
        x = b16.index(i).load(BLOCKED).to(gl.float32) + f32.index(i % 2).load(BLOCKED)
        gl.store(out_ptr + i * 64 + offs, gl.sum(x, axis=1))


k = triton.compile(GluonASTSource(two_views, {{"out_ptr": "*fp32"}}, {{}}), target=GPUTarget("cuda", 90, 32))
import tlx_alias
print("shared", k.metadata.shared)
print("package", tlx_alias.__file__)
print("top-level", [m for m in ("plugin", "verify", "kernels", "python_passes") if importlib.util.find_spec(m)])
import importlib.metadata
from tlx_alias.plugin import hook
print("version", importlib.metadata.version("tlx-alias"), tlx_alias.__version__)
print("keyed", sorted({{name.rsplit(".", 1)[0] for name, _ in hook.keyed_sources()}}))
'''


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory):
    """A new venv with only the wheel built from the sdist; its dependencies come from this environment."""
    tmp = tmp_path_factory.mktemp("pkg")
    dist = tmp / "dist"
    # build from a copy: setuptools writes build/ and *.egg-info next to the sources it builds
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".git", ".venv*", "build", "dist", "*.egg-info",
                                                             "__pycache__", "Output", ".hypothesis", "docs"))
    proc = subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist), str(src)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    wheels = [f for f in os.listdir(dist) if f.endswith(".whl")]
    assert len(wheels) == 1 and any(f.endswith(".tar.gz") for f in os.listdir(dist))
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    # triton, z3, the MLIR bindings: this environment's site-packages as a plain path entry, so its own
    # .pth files (an editable install of this checkout) are not processed in the fresh venv
    with open(os.path.join(purelib, "deps.pth"), "w") as f:
        f.write("\n".join(site.getsitepackages()) + "\n")
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(dist / wheels[0])],
                   check=True, capture_output=True, text=True, timeout=300)
    return tmp, py, purelib


def _run(fresh_venv, import_line, env_plugin=None):
    tmp, py, _ = fresh_venv
    script = tmp / f"user_{abs(hash((import_line, env_plugin)))}.py"
    script.write_text(textwrap.dedent(USER_SCRIPT.format(import_line=import_line)))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TRITON_PASS_PLUGIN")}
    env["TRITON_CACHE_DIR"] = str(tmp / "cache")
    if env_plugin:
        env["TRITON_PASS_PLUGIN"] = env_plugin
    proc = subprocess.run([str(py), str(script)], capture_output=True, text=True, timeout=600, cwd=str(tmp), env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return dict(line.split(" ", 1) for line in proc.stdout.splitlines() if " " in line)


def test_wheel_from_sdist_holds_the_whole_product(fresh_venv):
    _, _, purelib = fresh_venv
    pkg = os.path.join(purelib, "tlx_alias")
    for sub in ("plugin/hook.py", "bridge.py", "python_passes/pipeline.py", "verify/props.py",
                "kernels/demo.py"):
        assert os.path.exists(os.path.join(pkg, sub)), sub
    assert os.path.exists(os.path.join(purelib, "tlx_alias.pth"))
    assert not any(os.path.exists(os.path.join(purelib, top)) for top in ("plugin", "verify", "kernels",
                                                                          "python_passes"))


def test_sharing_kernel_compiles_to_one_allocation_in_the_fresh_venv(fresh_venv):
    out = _run(fresh_venv, "import tlx_alias.language as tlx")
    assert out["shared"] == "32768"                      # two views of one 32 KiB backing, not 65536
    assert out["package"].startswith(str(fresh_venv[2]))  # the wheel's copy, not this checkout
    assert out["top-level"] == "[]"


def test_start_up_file_arms_the_plugin_in_the_fresh_venv(fresh_venv):
    tmp, py, _ = fresh_venv
    code = "import sys, triton; from tlx_alias.plugin import hook; print(hook.is_installed())"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TRITON_PASS_PLUGIN")}
    runs = {value: subprocess.run([str(py), "-c", code], capture_output=True, text=True, cwd=str(tmp), timeout=300,
                                  env=dict(env, **({"TRITON_PASS_PLUGIN": value} if value else {})))
            for value in ("tlx_alias", None)}
    assert [runs[v].stdout.strip() for v in ("tlx_alias", None)] == ["True", "False"], runs["tlx_alias"].stderr


def test_the_wheel_has_one_version_and_keys_its_cache_on_every_product_package(fresh_venv):
    """The distribution's version is the package's own (pyproject reads tlx_alias.__version__), and in the
    wheel's layout (subpackages inside tlx_alias) the cache key still hashes the plugin, passes and proof."""
    out = _run(fresh_venv, "import tlx_alias.language as tlx")
    dist_version, package_version = out["version"].split()
    assert dist_version == package_version
    assert out["keyed"] == str(["tlx_alias", "tlx_alias.plugin", "tlx_alias.python_passes", "tlx_alias.verify"])
