"""minikeras's benchmark suite: `python -m benchmarks` (see benchmarks/README.md).

minikeras against hand-written numpy (the practical limit for a numpy
framework), the GEMM floor, and the peers that are installed, side by side in
one run. This package imports nothing heavy, so that `benchmarks.common` can
pin BLAS threads before numpy's first import.
"""
