"""Names every doctest may use, as a user's script would import them."""

import os

# One BLAS thread, set before numpy loads: on a shared 2-core machine a busy
# second core makes multi-threaded small matrix products 10-100x slower.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import minikeras  # noqa: E402
from minikeras import GradientTape, Tensor, Variable, ops  # noqa: E402


@pytest.fixture(autouse=True)
def _doctest_names(doctest_namespace):
    doctest_namespace.update(
        np=np, minikeras=minikeras, mk=minikeras, ops=ops,
        Tensor=Tensor, Variable=Variable, GradientTape=GradientTape,
    )  # fmt: skip
