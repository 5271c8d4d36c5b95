"""What the Hopper kernel tests share: the GPU marker, the bytes Triton adds beside a spec."""
import pytest
import torch

GPU = pytest.mark.skipif(not (torch.cuda.is_available() and torch.cuda.get_device_capability()[0] == 9),
                         reason="needs a Hopper (sm_90) GPU")
MBARRIER = 8                    # bytes per mbarrier; they are allocated outside the spec
CAPTURE_SLACK = 512             # bytes Triton adds beside the buffers and mbarriers (warp_specialize captures)

