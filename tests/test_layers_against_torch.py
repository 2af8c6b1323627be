"""The activation, normalization, EinsumDense and attention layers against PyTorch's functions
on the same inputs and weights, in float64; skipped where PyTorch is not installed."""

import numpy as np
import pytest

from minikeras import layers

torch = pytest.importorskip("torch")
F = torch.nn.functional

rng = np.random.default_rng(29)


def t(array):
    return torch.from_numpy(np.ascontiguousarray(array, dtype=np.float64))


def close(ours, theirs):
    np.testing.assert_allclose(np.asarray(ours), theirs.detach().numpy(), rtol=1e-9, atol=1e-12)


def test_relu_variants_leaky_relu_elu_and_softmax():
    x = rng.standard_normal((4, 7)) * 3
    close(layers.ReLU(dtype="float64")(x).numpy(), F.relu(t(x)))
    close(layers.ReLU(max_value=6.0, dtype="float64")(x).numpy(), F.relu6(t(x)))
    close(layers.ReLU(threshold=0.5, dtype="float64")(x).numpy(), F.threshold(t(x), 0.5, 0.0))
    close(layers.LeakyReLU(0.1, dtype="float64")(x).numpy(), F.leaky_relu(t(x), negative_slope=0.1))
    close(layers.ELU(0.7, dtype="float64")(x).numpy(), F.elu(t(x), alpha=0.7))
    close(layers.Softmax(dtype="float64")(x).numpy(), F.softmax(t(x), dim=-1))
    close(layers.Softmax(axis=0, dtype="float64")(x).numpy(), F.softmax(t(x), dim=0))


def test_prelu_per_channel():
    x = rng.standard_normal((3, 4, 6))  # channels first, as torch: (batch, channels, length)
    layer = layers.PReLU(alpha_initializer="random_uniform", shared_axes=[2], dtype="float64")
    ours = layer(x).numpy()
    close(ours, F.prelu(t(x), t(layer.alpha.numpy().ravel())))


@pytest.mark.parametrize("groups", [1, 2, 4])
def test_group_normalization(groups):
    x = rng.standard_normal((2, 4, 5, 3))  # channels first
    layer = layers.GroupNormalization(
        groups,
        axis=1,
        epsilon=1e-5,
        gamma_initializer="random_normal",
        beta_initializer="random_normal",
        dtype="float64",
    )
    ours = layer(x).numpy()
    gamma, beta = t(layer.gamma.numpy()), t(layer.beta.numpy())
    close(ours, F.group_norm(t(x), groups, gamma, beta, eps=1e-5))


def test_unit_normalization():
    x = rng.standard_normal((3, 5))
    close(layers.UnitNormalization(dtype="float64")(x).numpy(), F.normalize(t(x), p=2, dim=-1))


def test_einsum_dense():
    x = rng.standard_normal((2, 3, 4))
    layer = layers.EinsumDense("abc,cde->abde", (None, 2, 5), dtype="float64")
    close(layer(x).numpy(), torch.einsum("abc,cde->abde", t(x), t(layer.kernel.numpy())))


@pytest.mark.parametrize("causal", [False, True])
def test_dot_attention_is_scaled_dot_product_attention(causal):
    query, key = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 4, 3))
    value = rng.standard_normal((2, 4, 5))
    value_mask = np.array([[True, True, False, True], [True, True, True, True]])
    layer = layers.Attention(use_scale=True, dtype="float64")
    layer([query, value, key])
    layer.scale.assign(1 / np.sqrt(3.0))  # torch's default scale
    ours = layer([query, value, key], mask=[None, value_mask], use_causal_mask=causal)
    allowed = np.broadcast_to(value_mask[:, None, :], (2, 4, 4))
    if causal:
        allowed = allowed & np.tril(np.ones((4, 4), bool))
    theirs = F.scaled_dot_product_attention(
        t(query), t(key), t(value), attn_mask=torch.from_numpy(np.ascontiguousarray(allowed))
    )
    close(ours.numpy(), theirs)


def test_group_query_attention_against_torch_attention():
    layer = layers.GroupQueryAttention(3, 4, 2, bias_initializer="random_normal", dtype="float64")
    query, value = rng.standard_normal((2, 5, 6)), rng.standard_normal((2, 4, 6))
    ours = layer(query, value, use_causal_mask=True).numpy()

    def project(x, dense):  # (batch, steps, heads, size) -> (batch, heads, steps, size)
        out = np.einsum("btm,muh->btuh", x, dense.kernel.numpy()) + dense.bias.numpy()
        return t(out).permute(0, 2, 1, 3)

    q = project(query, layer.query_dense)
    k = project(value, layer.key_dense).repeat_interleave(2, dim=1)
    v = project(value, layer.value_dense).repeat_interleave(2, dim=1)
    causal = torch.from_numpy(np.tril(np.ones((5, 4), bool)))
    attended = F.scaled_dot_product_attention(q, k, v, attn_mask=causal).permute(0, 2, 1, 3)
    dense = layer.output_dense
    theirs = torch.einsum("bquh,uhm->bqm", attended, t(dense.kernel.numpy())) + t(
        dense.bias.numpy()
    )
    close(ours, theirs)
