"""Rescaling, Normalization, Discretization, CategoryEncoding and Hashing: values worked
out by hand, adapt on arrays and on iterables of batches, shapes, configs, errors."""

import numpy as np
import pytest

import minikeras as mk
from minikeras.layers import (
    CategoryEncoding,
    Discretization,
    Hashing,
    Normalization,
    Rescaling,
)

# ------------------------------------------------------------------ Rescaling


def test_rescaling_scales_then_offsets_and_makes_integers_float():
    out = Rescaling(1 / 127.5, offset=-1)(np.array([[0, 255]], dtype="uint8"))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.numpy(), [[-1.0, 1.0]], atol=1e-6)


def test_rescaling_per_channel_scale_broadcasts_and_round_trips():
    layer = Rescaling([1.0, 10.0], offset=[0.5, 0.0])
    np.testing.assert_allclose(layer(np.ones((2, 2))).numpy(), [[1.5, 10.0], [1.5, 10.0]])
    clone = Rescaling.from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()
    assert layer.compute_output_shape((None, 2)) == (None, 2)


def test_rescaling_refuses_a_string_scale():
    with pytest.raises(TypeError, match="Rescaling: `scale`"):
        Rescaling("two")


def test_rescaling_is_differentiable():
    x = mk.Tensor(np.array([1.0, 2.0], dtype="float32"))
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = mk.ops.sum(Rescaling(3.0, offset=1.0)(x))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [3.0, 3.0])


# -------------------------------------------------------------- Normalization


def test_normalization_adapts_per_feature_by_hand():
    layer = Normalization()
    layer.adapt(np.array([[1.0, 10.0], [3.0, 10.0], [5.0, 10.0]]))
    # feature 0: mean 3, variance 8/3; feature 1: mean 10, variance 0 (divisor 1e-7).
    np.testing.assert_allclose(layer.adapt_mean.numpy(), [3.0, 10.0])
    np.testing.assert_allclose(layer.adapt_variance.numpy(), [8 / 3, 0.0], atol=1e-6)
    out = layer(np.array([[5.0, 10.0]])).numpy()
    np.testing.assert_allclose(out, [[2 / np.sqrt(8 / 3), 0.0]], rtol=1e-6)


def test_normalization_adapt_on_batches_equals_adapt_on_the_whole():
    data = np.random.default_rng(0).normal(3.0, 2.0, (50, 3)).astype("float32")
    whole, pieces = Normalization(), Normalization()
    whole.adapt(data)
    pieces.adapt(iter([data[:7], data[7:30], data[30:]]))  # a generator of uneven batches
    np.testing.assert_allclose(pieces.adapt_mean.numpy(), data.mean(0), rtol=1e-5)
    np.testing.assert_allclose(pieces.adapt_variance.numpy(), data.var(0), rtol=1e-5)
    np.testing.assert_allclose(whole.adapt_variance.numpy(), data.var(0), rtol=1e-5)


def test_normalization_axis_none_and_several_axes():
    layer = Normalization(axis=None)
    layer.adapt([np.array([1.0, 3.0]), np.array([5.0, 7.0])])  # mean 4, variance 5
    np.testing.assert_allclose(layer(np.array([9.0])).numpy(), [5 / np.sqrt(5)], rtol=1e-6)
    images = np.arange(24.0).reshape(2, 3, 2, 2)
    per_row_channel = Normalization(axis=(1, 3))
    per_row_channel.adapt(images)
    assert per_row_channel.adapt_mean.shape == (3, 2)
    np.testing.assert_allclose(per_row_channel.adapt_mean.numpy(), images.mean(axis=(0, 2)))


def test_normalization_given_statistics_and_invert_by_hand():
    layer = Normalization(mean=[1.0, 2.0], variance=[4.0, 9.0])
    np.testing.assert_allclose(layer(np.array([[5.0, 8.0]])).numpy(), [[2.0, 2.0]])
    inverse = Normalization(mean=[1.0, 2.0], variance=[4.0, 9.0], invert=True)
    np.testing.assert_allclose(inverse(np.array([[2.0, 2.0]])).numpy(), [[5.0, 8.0]])
    assert layer.weights == []
    clone = Normalization.from_config(layer.get_config())
    np.testing.assert_allclose(clone(np.array([[5.0, 8.0]])).numpy(), [[2.0, 2.0]])
    assert clone.get_config() == layer.get_config()


def test_normalization_adapted_state_survives_saving(tmp_path):
    layer = Normalization()
    layer.adapt(np.array([[0.0], [4.0]]))
    model = mk.Sequential([mk.Input((1,)), layer])
    model.save(tmp_path / "m.keras")
    loaded = mk.saving.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(loaded.predict(np.array([[4.0]]), verbose=0), [[1.0]])


def test_normalization_errors_name_the_layer_and_argument():
    with pytest.raises(ValueError, match="Normalization: give both `mean` and `variance`"):
        Normalization(mean=1.0)
    with pytest.raises(ValueError, match="same shape"):
        Normalization(mean=[1.0, 2.0], variance=[1.0])
    with pytest.raises(ValueError, match="cannot adapt"):
        Normalization(mean=1.0, variance=1.0).adapt(np.ones((2, 1)))
    layer = Normalization()
    layer.adapt(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"Normalization 'normalization\w*' was built"):
        layer.adapt(np.ones((2, 4)))
    with pytest.raises(TypeError, match="iterable of batches"):
        Normalization().adapt(3.0)


# ------------------------------------------------------------- Discretization


def test_discretization_buckets_by_hand_and_encodes():
    layer = Discretization(bin_boundaries=[0.0, 1.0, 2.0])
    out = layer(np.array([[-1.5, 0.0, 0.5, 1.0, 2.0, 7.0]]))
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out.numpy(), [[0, 1, 1, 2, 3, 3]])
    counts = Discretization(bin_boundaries=[0.0, 1.0], output_mode="count")
    np.testing.assert_array_equal(counts(np.array([[-1.0, 0.5, 0.7]])).numpy(), [[1, 2, 0]])
    assert counts.compute_output_shape((None, 3)) == (None, 3)
    one_hot = Discretization(bin_boundaries=[0.0], output_mode="one_hot")
    assert one_hot.compute_output_shape((None, 4)) == (None, 4, 2)


def test_discretization_adapt_learns_quantiles():
    layer = Discretization(num_bins=4)
    layer.adapt(np.arange(100.0))
    # Quartiles of 0..99 by cumulative weight: the values at 25%, 50% and 75%.
    np.testing.assert_allclose(layer.bin_boundaries, [24.0, 49.0, 74.0])
    batches = Discretization(num_bins=4)
    batches.adapt([np.arange(50.0), np.arange(50.0, 100.0)])
    np.testing.assert_allclose(batches.bin_boundaries, [24.0, 49.0, 74.0], atol=0.6)
    clone = Discretization.from_config(layer.get_config())
    assert clone.bin_boundaries == layer.bin_boundaries and clone.num_bins == 4


def test_discretization_errors():
    with pytest.raises(ValueError, match="exactly one of `bin_boundaries` and `num_bins`"):
        Discretization()
    with pytest.raises(ValueError, match="`output_mode` must be one of"):
        Discretization(bin_boundaries=[0.0], output_mode="tf_idf")
    with pytest.raises(ValueError, match="must be sorted"):
        Discretization(bin_boundaries=[1.0, 0.0])
    with pytest.raises(ValueError, match="call adapt"):
        Discretization(num_bins=3)(np.ones(2))
    with pytest.raises(ValueError, match="made with `bin_boundaries`"):
        Discretization(bin_boundaries=[0.0]).adapt(np.ones(3))


# ----------------------------------------------------------- CategoryEncoding


def test_category_encoding_modes_by_hand():
    ids = np.array([[0, 1, 1], [3, 3, 2]])
    multi = CategoryEncoding(4)(ids).numpy()
    np.testing.assert_array_equal(multi, [[1, 1, 0, 0], [0, 0, 1, 1]])
    count = CategoryEncoding(4, output_mode="count")(ids).numpy()
    np.testing.assert_array_equal(count, [[1, 2, 0, 0], [0, 0, 1, 2]])
    one_hot = CategoryEncoding(4, output_mode="one_hot")
    expected = [[0, 0, 1, 0], [1, 0, 0, 0]]
    np.testing.assert_array_equal(one_hot(np.array([[2], [0]])).numpy(), expected)
    assert one_hot(ids).shape == (2, 3, 4)
    assert one_hot.compute_output_shape((None, 1)) == (None, 4)
    assert one_hot.compute_output_shape((None, 3)) == (None, 3, 4)
    assert CategoryEncoding(4).compute_output_shape((None, 3)) == (None, 4)
    np.testing.assert_array_equal(CategoryEncoding(3)(np.array([0, 2])).numpy(), [1, 0, 1])


def test_category_encoding_count_weights():
    layer = CategoryEncoding(3, output_mode="count")
    out = layer(np.array([[0, 2, 2]]), count_weights=np.array([[0.5, 1.0, 2.0]]))
    np.testing.assert_allclose(out.numpy(), [[0.5, 0.0, 3.0]])


def test_category_encoding_errors_and_config():
    layer = CategoryEncoding(3)
    with pytest.raises(ValueError, match=r"inputs must be in \[0, num_tokens=3\)"):
        layer(np.array([[0, 3]]))
    with pytest.raises(ValueError, match="`num_tokens` must be an int >= 1"):
        CategoryEncoding(None)
    with pytest.raises(ValueError, match="count_weights"):
        layer(np.array([[0]]), count_weights=np.array([[1.0]]))
    assert CategoryEncoding.from_config(layer.get_config()).get_config() == layer.get_config()


# -------------------------------------------------------------------- Hashing


def test_hashing_is_deterministic_and_in_range():
    words = np.array([["cat", "dog"], ["cat", "emu"]], dtype=object)
    out = Hashing(7)(words).numpy()
    assert out.dtype == np.int64 and out.min() >= 0 and out.max() < 7
    assert out[0, 0] == out[1, 0]
    np.testing.assert_array_equal(Hashing(7)(words).numpy(), out)  # a new layer, the same bins
    # Integers hash as their decimal text, as in Keras.
    np.testing.assert_array_equal(
        Hashing(7)(np.array([12, 5])).numpy(), Hashing(7)(np.array(["12", "5"])).numpy()
    )


def test_hashing_spreads_evenly_and_masks_to_zero():
    words = np.array([f"word{i}" for i in range(4000)])
    counts = np.bincount(Hashing(4)(words).numpy(), minlength=4)
    assert counts.min() > 900  # about 1000 each
    masked = Hashing(3, mask_value="")(np.array(["", "a", "b", ""])).numpy()
    assert masked[0] == masked[3] == 0 and masked[1] in (1, 2) and masked[2] in (1, 2)


def test_hashing_salt_changes_bins_and_output_modes():
    words = np.array([f"w{i}" for i in range(50)])
    assert not np.array_equal(Hashing(100)(words).numpy(), Hashing(100, salt=7)(words).numpy())
    ids = Hashing(5)(np.array([["a", "b"]])).numpy()
    multi = Hashing(5, output_mode="multi_hot")(np.array([["a", "b"]])).numpy()
    expected = np.zeros((1, 5), "float32")
    expected[0, ids[0]] = 1
    np.testing.assert_array_equal(multi, expected)
    layer = Hashing(5, salt=[1, 2], mask_value="x")
    assert Hashing.from_config(layer.get_config()).get_config() == layer.get_config()


def test_hashing_equals_keras_documented_bins():
    # The examples of Keras's Hashing docstring (FarmHash64, mask, SipHash with two and one salt).
    words = np.array([["A"], ["B"], ["C"], ["D"], ["E"]])
    np.testing.assert_array_equal(Hashing(3)(words).numpy().ravel(), [1, 0, 1, 1, 2])
    masked = Hashing(3, mask_value="")(np.array([["A"], ["B"], [""], ["C"], ["D"]]))
    np.testing.assert_array_equal(masked.numpy().ravel(), [1, 1, 0, 2, 2])
    salted = Hashing(3, salt=[133, 137])(words).numpy().ravel()
    np.testing.assert_array_equal(salted, [1, 2, 1, 0, 2])
    np.testing.assert_array_equal(Hashing(3, salt=133)(words).numpy().ravel(), [0, 0, 2, 1, 0])


def test_fingerprints_match_reference_values():
    from minikeras.layers.preprocessing.fingerprints import fingerprint64, siphash24

    # TensorFlow's frozen Fingerprint64 values, and SipHash-2-4's published vectors.
    assert fingerprint64(b"Hello") == 15404698994557526151
    assert fingerprint64(b"World") == 18308117990299812472
    key = (0x0706050403020100, 0x0F0E0D0C0B0A0908)
    assert siphash24(b"", *key) == 0x726FDB47DD0E0E31
    assert siphash24(bytes(range(15)), *key) == 0xA129CA6149BE45E5
    assert siphash24(bytes(range(63)), *key) == 0x958A324CEB064572
    # Every length branch (0-16, 17-32, 33-64, longer) gives a 64-bit value.
    for n in (0, 3, 7, 12, 20, 40, 64, 65, 200):
        assert 0 <= fingerprint64(bytes(range(n))) < 2**64


def test_hashing_errors():
    with pytest.raises(ValueError, match="Hashing: `num_bins` must be an int >= 1"):
        Hashing(0)
    with pytest.raises(TypeError, match=r"Hashing 'hashing\w*' takes strings or integers"):
        Hashing(3)(np.array([1.5]))
    with pytest.raises(ValueError, match="`output_mode` must be one of"):
        Hashing(3, output_mode="tf_idf")


def test_normalization_gradient_matches_finite_differences():
    from layer_gradients import assert_gradients_match, projection_loss

    layer = Normalization(mean=[1.0, 2.0, 3.0], variance=[4.0, 0.25, 1.0], dtype="float64")
    x = np.random.default_rng(2).standard_normal((4, 3))
    (grad,) = assert_gradients_match(lambda t: projection_loss(layer(t)), [x])
    assert grad.shape == (4, 3)
