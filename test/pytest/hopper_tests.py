"""What the Hopper kernel tests share: the GPU marker, the bytes Triton adds beside a spec, a Triton cache per
test module, the lowered views by name."""
import os

import pytest
import torch

from tlx_alias.kernels.demo import lowered_views

GPU = pytest.mark.skipif(not (torch.cuda.is_available() and torch.cuda.get_device_capability()[0] == 9),
                         reason="needs a Hopper (sm_90) GPU")
MBARRIER = 8                    # bytes per mbarrier; they are allocated outside the spec
CAPTURE_SLACK = 512             # bytes Triton adds beside the buffers and mbarriers (warp_specialize captures)


@pytest.fixture(scope="module", autouse=True)
def private_cache(tmp_path_factory):
    """A Triton cache of the importing test module's own, unless WS_TEST_SHARED_CACHE=1 (`scripts/gpu_run.sh ws`
    and `gemm-ws` set it: the benchmark that follows then finds the kernels the tests compiled)."""
    with pytest.MonkeyPatch.context() as mp:
        if os.environ.get("WS_TEST_SHARED_CACHE") != "1":
            mp.setenv("TRITON_CACHE_DIR", str(tmp_path_factory.mktemp("triton-cache")))
        yield


def views(ttgir):
    """{name: the view's placement and type} of every lowered view in `ttgir`."""
    return {name: dict(vars(view), type=ty) for name, view, ty in lowered_views(ttgir)}
