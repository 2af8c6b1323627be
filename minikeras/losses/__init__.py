"""Losses: how far predictions are from targets, as a differentiable number.

A loss function (`mean_squared_error`, ...) maps `(y_true, y_pred)` to one
loss per sample. A `Loss` object wraps one, and adds `sample_weight` and a
reduction to a scalar. Everything is written in `minikeras.ops`, so
`GradientTape` differentiates it; float32 predictions give float32 losses and
gradients (integer labels are cast to the prediction's dtype).

Shapes follow Keras: `y_true` and `y_pred` have the same shape, except that one
may carry an extra trailing axis of size 1 ((32,) against (32, 1)); anything
else is a ValueError naming the loss and both shapes, where Keras would often
broadcast silently.

One deliberate difference from Keras: given 1-D targets and predictions of
shape (batch,), the element-wise `Loss` objects (mean squared, absolute,
absolute percentage and squared logarithmic error, Huber, log-cosh, Poisson,
hinge, squared hinge, binary cross-entropy and binary focal cross-entropy)
see one value per sample. Keras averages them into a single number before
weighting, which makes `sample_weight` and `reduction="none"` meaningless.
The loss functions themselves follow Keras (mean over the last axis).
"""

from minikeras import (
    object_registry,
    ops,  # noqa: F401 (minikeras.losses.ops, as before the split)
    serialization_lib,
)
from minikeras.losses.base import (
    Loss,
    LossFunctionWrapper,
)
from minikeras.losses.circle import Circle, circle
from minikeras.losses.classes import (
    BinaryCrossentropy,
    CategoricalCrossentropy,
    Huber,
    KLDivergence,
    MeanAbsoluteError,
    MeanSquaredError,
    SparseCategoricalCrossentropy,
)
from minikeras.losses.ctc import CTC, ctc
from minikeras.losses.focal import (
    BinaryFocalCrossentropy,
    CategoricalFocalCrossentropy,
    binary_focal_crossentropy,
    categorical_focal_crossentropy,
)
from minikeras.losses.functions import (
    BCE,
    KLD,
    MAE,
    MSE,
    bce,
    binary_crossentropy,
    categorical_crossentropy,
    huber,
    kl_divergence,
    kld,
    mae,
    mean_absolute_error,
    mean_squared_error,
    mse,
    sparse_categorical_crossentropy,
)
from minikeras.losses.generalized import (
    CategoricalGeneralizedCrossEntropy,
    categorical_generalized_cross_entropy,
)
from minikeras.losses.hinge_losses import (
    CategoricalHinge,
    Hinge,
    SquaredHinge,
    categorical_hinge,
    hinge,
    squared_hinge,
)
from minikeras.losses.overlap import Dice, Tversky, dice, tversky
from minikeras.losses.pairs import squeeze_or_expand_to_same_rank
from minikeras.losses.reduction import (
    apply_mask,
    reduce_weighted_values,
    standardize_reduction,
)
from minikeras.losses.regression import (
    MAPE,
    MSLE,
    CosineSimilarity,
    LogCosh,
    MeanAbsolutePercentageError,
    MeanSquaredLogarithmicError,
    Poisson,
    cosine_similarity,
    log_cosh,
    mape,
    mean_absolute_percentage_error,
    mean_squared_logarithmic_error,
    msle,
    poisson,
)

# In the order of the API reference.
__all__ = [
    "standardize_reduction",
    "squeeze_or_expand_to_same_rank",
    "mean_squared_error",
    "mean_absolute_error",
    "huber",
    "kl_divergence",
    "binary_crossentropy",
    "categorical_crossentropy",
    "sparse_categorical_crossentropy",
    "mean_absolute_percentage_error",
    "mean_squared_logarithmic_error",
    "cosine_similarity",
    "log_cosh",
    "poisson",
    "hinge",
    "squared_hinge",
    "categorical_hinge",
    "binary_focal_crossentropy",
    "categorical_focal_crossentropy",
    "dice",
    "tversky",
    "circle",
    "categorical_generalized_cross_entropy",
    "ctc",
    "mse",
    "MSE",
    "mae",
    "MAE",
    "kld",
    "KLD",
    "bce",
    "BCE",
    "mape",
    "MAPE",
    "msle",
    "MSLE",
    "reduce_weighted_values",
    "apply_mask",
    "Loss",
    "LossFunctionWrapper",
    "MeanSquaredError",
    "MeanAbsoluteError",
    "Huber",
    "KLDivergence",
    "BinaryCrossentropy",
    "CategoricalCrossentropy",
    "SparseCategoricalCrossentropy",
    "MeanAbsolutePercentageError",
    "MeanSquaredLogarithmicError",
    "CosineSimilarity",
    "LogCosh",
    "Poisson",
    "Hinge",
    "SquaredHinge",
    "CategoricalHinge",
    "BinaryFocalCrossentropy",
    "CategoricalFocalCrossentropy",
    "Dice",
    "Tversky",
    "Circle",
    "CategoricalGeneralizedCrossEntropy",
    "CTC",
    "get",
    "serialize",
    "deserialize",
]


# ------------------------------------------------------------ lookup by name

_CLASSES = {
    cls.__name__: cls
    for cls in (
        Loss,
        LossFunctionWrapper,
        MeanSquaredError,
        MeanAbsoluteError,
        Huber,
        KLDivergence,
        BinaryCrossentropy,
        CategoricalCrossentropy,
        SparseCategoricalCrossentropy,
        MeanAbsolutePercentageError,
        MeanSquaredLogarithmicError,
        CosineSimilarity,
        LogCosh,
        Poisson,
        Hinge,
        SquaredHinge,
        CategoricalHinge,
        BinaryFocalCrossentropy,
        CategoricalFocalCrossentropy,
        Dice,
        Tversky,
        Circle,
        CategoricalGeneralizedCrossEntropy,
        CTC,
    )
}
_FUNCTIONS = {
    fn.__name__: fn
    for fn in (
        mean_squared_error,
        mean_absolute_error,
        huber,
        kl_divergence,
        binary_crossentropy,
        categorical_crossentropy,
        sparse_categorical_crossentropy,
        mean_absolute_percentage_error,
        mean_squared_logarithmic_error,
        cosine_similarity,
        log_cosh,
        poisson,
        hinge,
        squared_hinge,
        categorical_hinge,
        binary_focal_crossentropy,
        categorical_focal_crossentropy,
        dice,
        tversky,
        circle,
        ctc,
    )  # (not categorical_generalized_cross_entropy: its `q` has no default, and Keras's
}  # `get` does not know the name either; compile with the class, which has q=0.5)
_ALIASES = {"mse": mse, "MSE": mse, "mae": mae, "MAE": mae, "kld": kld, "KLD": kld}
_ALIASES.update({"bce": bce, "BCE": bce, "mape": mape, "MAPE": mape, "msle": msle, "MSLE": msle})
_ALL = {**_CLASSES, **_FUNCTIONS, **_ALIASES}


def get(identifier):
    """Returns the loss `identifier` stands for.

    Args:
        identifier: None; a name: a function's (`"mse"`,
            `"categorical_crossentropy"`, which give the function) or a
            class's (`"SparseCategoricalCrossentropy"`, which gives an
            instance with default arguments); a `serialize` dict; a `Loss`
            class or instance; or any callable `fn(y_true, y_pred)`.

    Returns:
        A callable: a loss function or a `Loss` instance (None for None).

    Raises:
        ValueError: for an unknown name or anything that is not a loss.

    Example:
        >>> (
        ...     mk.losses.get("mse") is mk.losses.mse,
        ...     type(mk.losses.get("BinaryCrossentropy")).__name__,
        ... )
        (True, 'BinaryCrossentropy')
    """
    if identifier is None:
        return None
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier)
    if isinstance(identifier, type) and issubclass(identifier, Loss):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(
        "losses.get: expected a loss name, config dict, Loss or callable, "
        f"got {identifier!r} of type {type(identifier).__name__}"
    )


def serialize(loss):
    """Returns what `deserialize` turns back into `loss`.

    Args:
        loss: a `Loss` instance, or a named loss function.

    Returns:
        Keras 3's entry (`module`, `class_name`, `config`,
        `registered_name`) for a `Loss`; the name for a function.

    Raises:
        ValueError: for a lambda or another callable without a usable name.

    Example:
        >>> (
        ...     mk.losses.serialize(mk.losses.mse),
        ...     mk.losses.serialize(mk.losses.Huber(delta=2.0))["config"]["delta"],
        ... )
        ('mean_squared_error', 2.0)
    """
    if isinstance(loss, Loss):
        return serialization_lib.family_entry(loss)
    name = getattr(loss, "__name__", None)
    if not callable(loss) or name is None or name == "<lambda>":
        raise ValueError(
            f"losses.serialize: cannot name {loss!r}; use a Loss or a def-function with a name"
        )
    return name


def deserialize(name, custom_objects=None):
    """Returns the loss that `serialize` described.

    Args:
        name: a name (see `get`) or a `{"class_name": ..., "config": ...}` dict
            (Keras calls the argument `name` for both).
        custom_objects: optional dict of name -> function or `Loss` class,
            searched first.

    Returns:
        A loss function or a `Loss` instance.

    Raises:
        ValueError: if the name is unknown or the dict malformed.

    Example:
        >>> mk.losses.deserialize({"class_name": "Huber", "config": {"delta": 2.0}}).delta
        2.0
    """
    config = name
    known = {**_ALL, **object_registry.scoped_objects(custom_objects)}
    if isinstance(config, dict):
        if "class_name" not in config:
            raise ValueError(
                "losses.deserialize: expected a dict with 'class_name' and 'config', "
                f"got {config!r}"
            )
        name = config.get("registered_name") or config["class_name"]
        cls = serialization_lib.entry_class(config, custom_objects, "loss class", _CLASSES.get)
        cls = cls or serialization_lib.get_registered_object(name, custom_objects, known)
        if not (isinstance(cls, type) and issubclass(cls, Loss)):
            raise ValueError(
                f"Unknown loss class {config['class_name']!r}"
                + serialization_lib.unknown_custom_hint(name)
            )
        arguments = dict(config.get("config", {}))
        if isinstance(arguments.get("fn"), str) and arguments["fn"] in known:
            arguments["fn"] = known[arguments["fn"]]  # a wrapped custom function
        return cls.from_config(arguments)
    found = serialization_lib.get_registered_object(config, custom_objects, known)
    if isinstance(config, str) and found is not None:
        return found() if isinstance(found, type) else found
    raise ValueError(
        f"Unknown loss {config!r}; known losses: {', '.join(sorted(_ALL))}"
        + serialization_lib.unknown_custom_hint(config)
    )
