"""Keras's neural-network, linear-algebra, Fourier and image operation classes.

The part of `layers.operation_table` for the ops outside Keras's array
families: each `minikeras.ops` function (`ops.celu`, `ops.linalg.svd`,
`ops.image.resize`, ...) mapped to `(Keras module, config)` as there, where
`config` maps each key of the Keras class's config to our parameter of that
name. `operation_table.KERAS_OPERATION_SPECS` holds these entries too, and
is what the rest of minikeras reads.
"""

__all__ = ["NN_OPERATION_SPECS"]

_NUMPY, _NN, _MATH, _LINALG, _IMAGE = (
    f"keras.src.ops.{name}" for name in ("numpy", "nn", "math", "linalg", "image")
)

# minikeras.ops function -> (Keras module, {Keras config key: our parameter}).
NN_OPERATION_SPECS = {
    # Neural-network ops.
    **{
        name: (_NN, {})
        for name in (
            "relu6",
            "selu",
            "hard_sigmoid",
            "hard_silu",
            "hard_tanh",
            "log_sigmoid",
            "softsign",
            "tanh_shrink",
            "sparse_plus",
            "sparse_sigmoid",
        )
    },  # fmt: skip
    "celu": (_NN, {"alpha": "alpha"}),
    "glu": (_NN, {"axis": "axis"}),
    "hard_shrink": (_NN, {"threshold": "threshold"}),
    "soft_shrink": (_NN, {"threshold": "threshold"}),
    "squareplus": (_NN, {"b": "b"}),
    "threshold": (_NN, {"threshold": "threshold", "default_value": "default_value"}),
    "sparsemax": (_NN, {"axis": "axis"}),
    "normalize": (_NN, {"axis": "axis", "order": "order", "epsilon": "epsilon"}),
    "moments": (_NN, {"axes": "axes", "keepdims": "keepdims", "synchronized": "synchronized"}),
    "batch_normalization": (_NN, {"axis": "axis", "epsilon": "epsilon"}),
    "layer_normalization": (
        _NN,
        {"axis": "axis", "epsilon": "epsilon", "rms_scaling": "rms_scaling"},
    ),  # fmt: skip
    "rms_normalization": (_NN, {"axis": "axis", "epsilon": "epsilon"}),
    "psnr": (_NN, {"max_val": "max_val"}),
    "multi_hot": (
        _NN,
        {"num_classes": "num_classes", "axis": "axis", "dtype": "dtype", "sparse": "sparse"},
    ),  # fmt: skip
    **{
        name: (_NN, {"block_size": "block_size", "data_format": "data_format"})
        for name in ("depth_to_space", "space_to_depth")
    },
    **{
        name: (_NN, {"output_size": "output_size", "data_format": "data_format"})
        for name in ("adaptive_average_pool", "adaptive_max_pool")
    },
    "ctc_loss": (_NN, {"mask_index": "mask_index"}),
    "ctc_decode": (
        _NN,
        {
            name: name
            for name in ("strategy", "beam_width", "top_paths", "merge_repeated", "mask_index")
        },
    ),
    "dot_product_attention": (
        _NN,
        {
            "is_causal": "is_causal",
            "flash_attention": "flash_attention",
            "attn_logits_soft_cap": "attn_logits_soft_cap",
        },
    ),
    # Linear algebra, Fourier and complex ops.
    **{name: (_LINALG, {}) for name in ("inv", "det", "solve", "eig", "eigh", "lu_factor")},
    "cholesky": (_LINALG, {"upper": "upper"}),
    "cholesky_inverse": (_LINALG, {"upper": "upper"}),
    "solve_triangular": (_LINALG, {"lower": "lower"}),
    "svd": (_LINALG, {"full_matrices": "full_matrices", "compute_uv": "compute_uv"}),
    "qr": (_LINALG, {"mode": "mode"}),
    "lstsq": (_LINALG, {"rcond": "rcond"}),
    "pinv": (_LINALG, {"rcond": "rcond"}),
    "matrix_rank": (_LINALG, {"tol": "tol"}),
    "norm": (_LINALG, {"ord": "ord", "axis": "axis", "keepdims": "keepdims"}),
    "logdet": (_MATH, {}),
    "slogdet": (_NUMPY, {}),
    **{name: (_MATH, {}) for name in ("fft", "fft2", "ifft2")},
    "rfft": (_MATH, {"fft_length": "fft_length"}),
    "irfft": (_MATH, {"fft_length": "fft_length"}),
    **{name: (_MATH, {}) for name in ("view_as_complex", "view_as_real")},
    "polar": (_NN, {}),
    "extract_sequences": (_MATH, {k: k for k in ("sequence_length", "sequence_stride")}),
    "stft": (
        _MATH,
        {k: k for k in ("sequence_length", "sequence_stride", "fft_length", "window", "center")},
    ),
    "istft": (
        _MATH,
        {
            k: k
            for k in (
                "sequence_length",
                "sequence_stride",
                "fft_length",
                "length",
                "window",
                "center",
            )
        },
    ),
    # Keras's ops.image (the four minikeras has).
    **{
        name: (
            _IMAGE,
            {f"{side}_{what}": f"{side}_{what}" for side in ("top", "left", "bottom", "right")}
            | {k: k for k in ("target_height", "target_width", "data_format")},
        )
        for name, what in (("pad_images", "padding"), ("crop_images", "cropping"))
    },
    "extract_patches": (
        _IMAGE,
        {k: k for k in ("size", "strides", "dilation_rate", "padding", "data_format")},
    ),
    "resize": (
        _IMAGE,
        {
            k: k
            for k in (
                "size",
                "interpolation",
                "antialias",
                "crop_to_aspect_ratio",
                "pad_to_aspect_ratio",
                "fill_mode",
                "fill_value",
                "data_format",
            )
        },
    ),
    # Keras's ops.image: colour, filter and transform ops (image_color, image_filters, ...).
    **{
        name: (_IMAGE, {"data_format": "data_format"})
        for name in ("rgb_to_grayscale", "rgb_to_hsv", "hsv_to_rgb")
    },
    "gaussian_blur": (_IMAGE, {k: k for k in ("kernel_size", "sigma", "data_format")}),
    "sobel_edges": (_IMAGE, {"data_format": "data_format"}),
    "scale_and_translate": (_IMAGE, {k: k for k in ("spatial_dims", "method", "antialias")}),
    "ssim": (
        _IMAGE,
        {k: k for k in ("max_val", "filter_size", "filter_sigma", "k1", "k2", "data_format")},
    ),
    "map_coordinates": (_IMAGE, {k: k for k in ("order", "fill_mode", "fill_value")}),
    "affine_transform": (
        _IMAGE,
        {k: k for k in ("interpolation", "fill_mode", "fill_value", "data_format")},
    ),
    "perspective_transform": (
        _IMAGE,
        {k: k for k in ("interpolation", "fill_value", "data_format")},
    ),
    "elastic_transform": (
        _IMAGE,
        {
            k: k
            for k in (
                "alpha",
                "sigma",
                "interpolation",
                "fill_mode",
                "fill_value",
                "seed",
                "data_format",
            )
        },
    ),
}
