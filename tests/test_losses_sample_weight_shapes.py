"""Sample weights of every shape on per-step losses (batch, steps), against
Keras 3 where it is installed and by hand otherwise.

Keras and minikeras agree for "sum", "sum_over_batch_size" and "none", and for
"mean_with_sample_weight" when the weights have the losses' shape or a mask is
given. Without a mask, Keras divides "mean_with_sample_weight" by the sum of
the weights as given, unbroadcast: (batch, 1) weights on (batch, steps)
losses give `steps` times the weighted mean, a scalar weight gives the plain
sum. minikeras divides by the weights broadcast to the losses: the weighted
mean Keras's own metrics and its masked losses give. (batch,) weights are an
error in Keras there; minikeras lets each cover its sample's steps.
"""

import numpy as np
import pytest

import minikeras as mk

B, T, D = 3, 4, 2
RNG = np.random.default_rng(0)
Y_TRUE = RNG.random((B, T, D)).astype("float32")
Y_PRED = RNG.random((B, T, D)).astype("float32")
PER_STEP = ((Y_TRUE - Y_PRED) ** 2).mean(axis=-1)  # mean squared error, (B, T)
WEIGHTS = {
    "(B,)": np.array([1.0, 2.0, 0.5], "float32"),
    "(B,1)": np.array([[1.0], [2.0], [0.5]], "float32"),
    "(B,T)": RNG.random((B, T)).astype("float32"),
    "(B,T,1)": RNG.random((B, T, 1)).astype("float32"),
    "(1,)": np.array([2.0], "float32"),
    "scalar": np.float32(2.0),
}
KERAS_ERRS = {"(B,)"}  # Keras cannot broadcast (B,) against (B, T)
MASK = RNG.random((B, T)) > 0.4


def broadcast(weights):
    """The weights as minikeras reads them: a trailing 1 dropped, (B,) per sample."""
    w = np.asarray(weights, "float64")
    if w.ndim == 3:
        w = w[..., 0]
    if w.ndim == 1 and w.size == B:
        w = w[:, None]
    return np.broadcast_to(w, (B, T))


def by_hand(weights, reduction):
    w = broadcast(weights)
    weighted = PER_STEP * w
    if reduction == "sum":
        return weighted.sum()
    if reduction == "mean_with_sample_weight":
        return weighted.sum() / w.sum()
    return weighted.sum() / weighted.size


def mse(reduction, weights, library=mk):
    loss = library.losses.MeanSquaredError(reduction=reduction)
    return float(np.asarray(loss(Y_TRUE, Y_PRED, sample_weight=weights)))


@pytest.mark.parametrize("shape", sorted(WEIGHTS))
@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "sum", "mean_with_sample_weight"])
def test_weights_of_every_shape_match_the_hand_computed_reduction(reduction, shape):
    assert mse(reduction, WEIGHTS[shape]) == pytest.approx(by_hand(WEIGHTS[shape], reduction))


def test_per_sample_weights_of_rank_one_and_two_weigh_alike():
    for reduction in ("sum_over_batch_size", "sum", "mean_with_sample_weight", "none"):
        a = mk.losses.MeanSquaredError(reduction=reduction)(Y_TRUE, Y_PRED, WEIGHTS["(B,)"])
        b = mk.losses.MeanSquaredError(reduction=reduction)(Y_TRUE, Y_PRED, WEIGHTS["(B,1)"])
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("shape", sorted(set(WEIGHTS) - KERAS_ERRS))
@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "sum", "none"])
def test_sum_and_mean_reductions_match_keras(reduction, shape):
    keras = pytest.importorskip("keras")
    ours = mk.losses.MeanSquaredError(reduction=reduction)(Y_TRUE, Y_PRED, WEIGHTS[shape])
    theirs = keras.losses.MeanSquaredError(reduction=reduction)(Y_TRUE, Y_PRED, WEIGHTS[shape])
    np.testing.assert_allclose(ours.numpy(), np.asarray(theirs), rtol=1e-5)


def test_mean_with_sample_weight_matches_keras_where_keras_is_consistent():
    keras = pytest.importorskip("keras")
    for shape in ("(B,T)", "(B,T,1)"):
        theirs = mse("mean_with_sample_weight", WEIGHTS[shape], keras)
        assert mse("mean_with_sample_weight", WEIGHTS[shape]) == pytest.approx(theirs, rel=1e-5)
    for shape in ("(B,1)", "(1,)", "scalar"):
        ours = mse("mean_with_sample_weight", WEIGHTS[shape])
        # The same weights broadcast by hand to the losses' shape ...
        full = broadcast(WEIGHTS[shape]).astype("float32")
        assert ours == pytest.approx(mse("mean_with_sample_weight", full, keras), rel=1e-5)
        # ... and Keras's metric of the same name, the weighted mean it was made to match.
        metric = keras.metrics.MeanSquaredError()
        metric.update_state(Y_TRUE, Y_PRED, sample_weight=WEIGHTS[shape])
        assert ours == pytest.approx(float(metric.result()), rel=1e-5)
        # Keras's loss divides by the weights as given: steps times more for (B, 1).
        count = np.asarray(WEIGHTS[shape]).size
        unbroadcast = mse("mean_with_sample_weight", WEIGHTS[shape], keras)
        assert unbroadcast == pytest.approx(ours * full.size / count, rel=1e-5)


@pytest.mark.parametrize("shape", [None, "(B,1)", "(B,T)", "scalar"])
@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "sum", "mean_with_sample_weight"])
def test_masked_reductions_match_keras(reduction, shape):
    keras = pytest.importorskip("keras")
    from keras.src.losses.loss import reduce_weighted_values as keras_reduce

    if keras.backend.backend() == "torch" and shape in ("(B,1)", "scalar"):
        pytest.skip(
            "Keras's torch backend multiplies the mask into such weights in place: an error"
        )

    weights = None if shape is None else WEIGHTS[shape]
    values = PER_STEP.astype("float32")
    theirs = float(np.asarray(keras_reduce(values, weights, MASK, reduction)))
    masked = mk.losses.apply_mask(weights, MASK, "float32", reduction)
    ours = float(
        mk.losses.reduce_weighted_values(mk.ops.convert_to_tensor(values), masked, reduction)
    )
    assert ours == pytest.approx(theirs, rel=1e-5)


@pytest.mark.parametrize("shape", ["(B,)", "(B,1)", "(B,T)", "scalar"])
@pytest.mark.parametrize("kind", ["Mean", "Sum", "MeanSquaredError"])
def test_metric_sample_weights_match_keras(kind, shape):
    keras = pytest.importorskip("keras")
    results = []
    for library in (mk, keras):
        metric = getattr(library.metrics, kind)()
        args = (PER_STEP,) if kind in ("Mean", "Sum") else (Y_TRUE, Y_PRED)
        metric.update_state(*args, sample_weight=WEIGHTS[shape])
        results.append(float(np.asarray(metric.result())))
    assert results[0] == pytest.approx(results[1], rel=1e-5)


def test_metric_mean_of_per_step_values_is_the_hand_weighted_mean():
    for shape in ("(B,)", "(B,1)", "(B,T)"):
        metric = mk.metrics.Mean()
        metric.update_state(PER_STEP, sample_weight=WEIGHTS[shape])
        w = broadcast(WEIGHTS[shape])
        assert float(metric.result()) == pytest.approx((PER_STEP * w).sum() / w.sum(), rel=1e-6)
