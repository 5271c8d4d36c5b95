"""Real Gluon kernels written with the API: Hopper GEMM and attention, Blackwell attention and GEMM."""
