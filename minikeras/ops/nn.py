"""Keras's namespace `keras.ops.nn`: the neural-network ops, as `minikeras.ops.nn`.

The same functions as at the top of `minikeras.ops` (`mk.ops.nn.relu6 is
mk.ops.relu6`), under the names Keras's `ops.nn` gives them, so that code
written `keras.ops.nn.relu6(x)` runs unchanged. They are defined in the
other modules of `minikeras.ops` (activations, pooling, convolutions,
normalization, losses, ...).

The names are attached at the end of `minikeras/ops/__init__.py`, after the
package has made each function record graph nodes on symbolic tensors: this
module cannot import `minikeras.ops` (a cycle) and the defining modules hold
the functions before that step, which are other objects.

    >>> mk.ops.nn.relu6(np.array([-1.0, 3.0, 9.0])).numpy().tolist()
    [0.0, 3.0, 6.0]
"""

# Keras's names, as Keras 3.15 lists them; ops/__init__.py binds each to its op.
__all__ = [
    "adaptive_average_pool", "adaptive_max_pool", "average_pool", "batch_normalization",
    "binary_crossentropy", "categorical_crossentropy", "celu", "conv", "conv_transpose",
    "ctc_decode", "ctc_loss", "depth_to_space", "depthwise_conv", "dot_product_attention",
    "elu", "fold", "gelu", "glu", "hard_shrink", "hard_sigmoid", "hard_silu", "hard_swish",
    "hard_tanh", "layer_normalization", "leaky_relu", "log_sigmoid", "log_softmax",
    "max_pool", "moments", "multi_hot", "normalize", "one_hot", "polar", "psnr", "relu",
    "relu6", "rms_normalization", "selu", "separable_conv", "sigmoid", "silu", "soft_shrink",
    "softmax", "softplus", "softsign", "space_to_depth", "sparse_categorical_crossentropy",
    "sparse_plus", "sparse_sigmoid", "sparsemax", "squareplus", "swish", "tanh_shrink",
    "threshold", "unfold",
]  # fmt: skip
