"""Names every doctest may use, as a user's script would import them."""

import numpy as np
import pytest

import minikeras
from minikeras import GradientTape, Tensor, Variable, ops


@pytest.fixture(autouse=True)
def _doctest_names(doctest_namespace):
    doctest_namespace.update(
        np=np, minikeras=minikeras, mk=minikeras, ops=ops,
        Tensor=Tensor, Variable=Variable, GradientTape=GradientTape,
    )  # fmt: skip
