"""`ops.einsum` of three or more operands: numpy pairs them up (its `optimize`).

Unoptimized, numpy runs one loop over every index of the equation at once: a
resize written as `"hr,brwc,vw->bhvc"` took 23 s for a batch of 256 32x32
images (`layers.Resizing`, `ops.image.resize`), against 0.02 s paired.
"""

import numpy as np

import minikeras as mk
from tests.finite_differences import numeric_gradient


def test_three_operands_are_paired_and_two_are_not(monkeypatch):
    real, seen = np.einsum, []

    def spy(*args, **kwargs):
        seen.append(kwargs.get("optimize", False))
        return real(*args, **kwargs)

    monkeypatch.setattr(np, "einsum", spy)
    a, b, c = (np.full(shape, 0.5, "float32") for shape in [(3, 4), (4, 5), (5, 2)])
    three = mk.ops.einsum("ij,jk,kl->il", a, b, c)
    two = mk.ops.einsum("ij,jk->ik", a, b)
    assert seen == [True, False]
    np.testing.assert_allclose(three.numpy(), a @ b @ c, rtol=1e-6)
    np.testing.assert_allclose(two.numpy(), a @ b, rtol=1e-6)
    assert three.dtype == np.float32


def test_the_gradient_of_a_three_operand_einsum_matches_finite_differences():
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(shape) for shape in [(3, 4), (4, 5), (5, 2)])
    x = mk.Variable(b, dtype="float64")
    with mk.GradientTape() as tape:
        total = mk.ops.sum(mk.ops.einsum("ij,jk,kl->il", a, x, c) ** 2)
    got = tape.gradient(total, x).numpy()
    expected = numeric_gradient(lambda arrays: np.sum((a @ arrays[0] @ c) ** 2), [b], 0)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)
