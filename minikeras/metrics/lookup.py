"""Metrics by name: `get`, `serialize` and `deserialize`, and the names they know.

`get("accuracy", loss=...)` picks the accuracy that fits the loss, as Keras
does; a name such as `"mse"` makes a metric named after it; a class name makes
that class with its defaults.
"""

from minikeras import object_registry, serialization_lib
from minikeras.losses import (  # loss functions Keras also exports as metrics
    categorical_hinge,
    hinge,
    log_cosh,
    mean_absolute_percentage_error,
    mean_squared_logarithmic_error,
    poisson,
    squared_hinge,
)
from minikeras.metrics.accuracies import (
    Accuracy,
    BinaryAccuracy,
    CategoricalAccuracy,
    SparseCategoricalAccuracy,
    SparseTopKCategoricalAccuracy,
    TopKCategoricalAccuracy,
    accuracy,
    binary_accuracy,
    categorical_accuracy,
    sparse_categorical_accuracy,
    sparse_top_k_categorical_accuracy,
    top_k_categorical_accuracy,
)
from minikeras.metrics.auto_accuracy import _accuracy_for_loss, _AutoAccuracy
from minikeras.metrics.base import Metric
from minikeras.metrics.condition_counts import (
    FalseNegatives,
    FalsePositives,
    TrueNegatives,
    TruePositives,
)
from minikeras.metrics.confusion import AUC
from minikeras.metrics.correlation import (
    ConcordanceCorrelation,
    PearsonCorrelation,
    concordance_correlation,
    pearson_correlation,
)
from minikeras.metrics.f_score import F1Score, FBetaScore
from minikeras.metrics.hinge_metrics import CategoricalHinge, Hinge, SquaredHinge
from minikeras.metrics.iou import IoU, MeanIoU
from minikeras.metrics.iou_variants import BinaryIoU, OneHotIoU, OneHotMeanIoU
from minikeras.metrics.mean import Mean, MeanMetricWrapper
from minikeras.metrics.precision_recall import Precision, Recall
from minikeras.metrics.probabilistic import (
    BinaryCrossentropy,
    CategoricalCrossentropy,
    KLDivergence,
    SparseCategoricalCrossentropy,
)
from minikeras.metrics.r2_score import R2Score
from minikeras.metrics.reduction import Sum
from minikeras.metrics.regression import (
    CosineSimilarity,
    LogCoshError,
    MeanAbsoluteError,
    MeanAbsolutePercentageError,
    MeanSquaredError,
    MeanSquaredLogarithmicError,
    Poisson,
    RootMeanSquaredError,
)
from minikeras.metrics.sensitivity_specificity import (
    PrecisionAtRecall,
    RecallAtPrecision,
    SensitivityAtSpecificity,
    SpecificityAtSensitivity,
)

__all__ = ["deserialize", "get", "serialize"]


_CLASSES = {
    cls.__name__: cls
    for cls in (
        Mean,
        MeanMetricWrapper,
        Accuracy,
        BinaryAccuracy,
        CategoricalAccuracy,
        SparseCategoricalAccuracy,
        TopKCategoricalAccuracy,
        SparseTopKCategoricalAccuracy,
        MeanSquaredError,
        MeanAbsoluteError,
        Precision,
        Recall,
        AUC,
        _AutoAccuracy,
        Sum,
        RootMeanSquaredError,
        MeanAbsolutePercentageError,
        MeanSquaredLogarithmicError,
        CosineSimilarity,
        LogCoshError,
        R2Score,
        Poisson,
        Hinge,
        SquaredHinge,
        CategoricalHinge,
        F1Score,
        FBetaScore,
        IoU,
        MeanIoU,
        BinaryIoU,
        OneHotIoU,
        OneHotMeanIoU,
        PrecisionAtRecall,
        RecallAtPrecision,
        SensitivityAtSpecificity,
        SpecificityAtSensitivity,
        KLDivergence,
        BinaryCrossentropy,
        CategoricalCrossentropy,
        SparseCategoricalCrossentropy,
        TruePositives,
        FalsePositives,
        TrueNegatives,
        FalseNegatives,
        PearsonCorrelation,
        ConcordanceCorrelation,
    )
}
_FUNCTIONS = {
    fn.__name__: fn
    for fn in (
        accuracy,
        binary_accuracy,
        categorical_accuracy,
        sparse_categorical_accuracy,
        top_k_categorical_accuracy,
        sparse_top_k_categorical_accuracy,
        mean_absolute_percentage_error,
        mean_squared_logarithmic_error,
        log_cosh,
        poisson,
        hinge,
        squared_hinge,
        categorical_hinge,
        pearson_correlation,
        concordance_correlation,
    )
}
# Names that make a metric instance named after them.
_NAMES = {
    "mse": MeanSquaredError,
    "MSE": MeanSquaredError,
    "mean_squared_error": MeanSquaredError,
    "mae": MeanAbsoluteError,
    "MAE": MeanAbsoluteError,
    "mean_absolute_error": MeanAbsoluteError,
    "binary_accuracy": BinaryAccuracy,
    "categorical_accuracy": CategoricalAccuracy,
    "sparse_categorical_accuracy": SparseCategoricalAccuracy,
    "top_k_categorical_accuracy": TopKCategoricalAccuracy,
    "sparse_top_k_categorical_accuracy": SparseTopKCategoricalAccuracy,
    "auc": AUC,
    "precision": Precision,
    "recall": Recall,
    "mean": Mean,
    "sum": Sum,
    "root_mean_squared_error": RootMeanSquaredError,
    "mape": MeanAbsolutePercentageError,
    "MAPE": MeanAbsolutePercentageError,
    "mean_absolute_percentage_error": MeanAbsolutePercentageError,
    "msle": MeanSquaredLogarithmicError,
    "MSLE": MeanSquaredLogarithmicError,
    "mean_squared_logarithmic_error": MeanSquaredLogarithmicError,
    "cosine_similarity": CosineSimilarity,
    "logcosh": LogCoshError,
    "log_cosh_error": LogCoshError,
    "r2_score": R2Score,
    "poisson": Poisson,
    "hinge": Hinge,
    "squared_hinge": SquaredHinge,
    "categorical_hinge": CategoricalHinge,
    "f1_score": F1Score,
    "f_beta_score": FBetaScore,
    "binary_crossentropy": BinaryCrossentropy,
    "bce": BinaryCrossentropy,
    "BCE": BinaryCrossentropy,
    "categorical_crossentropy": CategoricalCrossentropy,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
    "kl_divergence": KLDivergence,
    "binary_io_u": BinaryIoU,
    "true_positives": TruePositives,
    "false_positives": FalsePositives,
    "true_negatives": TrueNegatives,
    "false_negatives": FalseNegatives,
    "pearson_correlation": PearsonCorrelation,
    "concordance_correlation": ConcordanceCorrelation,  # Keras's snake case of the class name
}


def get(identifier, loss=None):
    """Returns the metric `identifier` stands for, as a fresh stateful `Metric`.

    `"accuracy"` and `"acc"` (any case) pick the accuracy that fits `loss`:
    sparse categorical cross-entropy (and generalized cross-entropy) gives
    `SparseCategoricalAccuracy`, categorical cross-entropy (focal or not)
    `CategoricalAccuracy`, binary cross-entropy (focal or not)
    `BinaryAccuracy` (threshold 0 when it takes logits). Without a loss, or
    with any other, the choice is made from the shapes of the first batch
    (see `_AutoAccuracy`).

    Args:
        identifier: None; a name (`"accuracy"`, `"mse"`, `"mae"`, `"auc"`,
            `"precision"`, `"recall"`, `"binary_accuracy"`, `"binary_crossentropy"`,
            `"kl_divergence"`, ..., or a class
            name such as `"AUC"`); a `serialize` dict; a `Metric` class or
            instance (returned as is); or a function `fn(y_true, y_pred)` of
            per-sample values, wrapped in `MeanMetricWrapper`.
        loss: the loss the model is compiled with (a name, function or `Loss`),
            for `"accuracy"`.

    Returns:
        A `Metric` (None for None), named after a name identifier.

    Raises:
        ValueError: for an unknown name or anything that is not a metric.

    Example:
        >>> type(mk.metrics.get("accuracy", loss="sparse_categorical_crossentropy")).__name__
        'SparseCategoricalAccuracy'
        >>> mk.metrics.get("mse").name
        'mse'
    """
    if identifier is None or isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        if identifier.lower() in ("accuracy", "acc"):
            return _accuracy_for_loss(loss, name=identifier)
        if identifier in _NAMES:
            return _NAMES[identifier](name=identifier)
        if identifier in _CLASSES:
            return _CLASSES[identifier]()
        known = ", ".join(sorted({"accuracy", "acc", *_NAMES, *_CLASSES} - {"_AutoAccuracy"}))
        raise ValueError(
            f"Unknown metric {identifier!r}; known metrics: {known}"
            + serialization_lib.unknown_custom_hint(identifier)
        )
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    if callable(identifier):
        return MeanMetricWrapper(identifier, name=getattr(identifier, "__name__", None))
    raise ValueError(
        "metrics.get: expected a metric name, config dict, Metric or function, "
        f"got {identifier!r} of type {type(identifier).__name__}"
    )


def serialize(metric):
    """Returns the dict that `deserialize` turns back into `metric` (without its state).

    Args:
        metric: a `Metric`.

    Returns:
        `{"class_name": ..., "config": ...}`.

    Raises:
        ValueError: if `metric` is not a `Metric`.

    Example:
        >>> mk.metrics.serialize(mk.metrics.AUC(curve="PR"))["config"]["curve"]
        'PR'
    """
    if not isinstance(metric, Metric):
        raise ValueError(f"metrics.serialize: expected a Metric, got {type(metric).__name__}")
    return serialization_lib.family_entry(metric)


def deserialize(config, custom_objects=None):
    """Returns a fresh metric from `serialize`'s dict (or a name, see `get`).

    Args:
        config: a `{"class_name": ..., "config": ...}` dict, or a name.
        custom_objects: optional dict of name -> `Metric` class, searched first.

    Returns:
        A `Metric`.

    Raises:
        ValueError: if the class is unknown or the dict malformed.

    Example:
        >>> mk.metrics.deserialize(
        ...     mk.metrics.serialize(mk.metrics.Precision(thresholds=0.3))
        ... ).thresholds
        [0.3]
    """
    if isinstance(config, str):
        if custom_objects and config in custom_objects:
            return get(custom_objects[config])
        return get(config)
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(
            f"metrics.deserialize: expected a dict with 'class_name' and 'config', got {config!r}"
        )
    known = {**_CLASSES, **object_registry.scoped_objects(custom_objects)}
    name = config.get("registered_name") or config["class_name"]
    cls = serialization_lib.entry_class(config, custom_objects, "metric class", _CLASSES.get)
    cls = cls or serialization_lib.get_registered_object(name, custom_objects, known)
    if not (isinstance(cls, type) and issubclass(cls, Metric)):
        raise ValueError(
            f"Unknown metric class {config['class_name']!r}"
            + serialization_lib.unknown_custom_hint(name)
        )
    arguments = {key: _plain(value) for key, value in config.get("config", {}).items()}
    if custom_objects and arguments.get("fn") in custom_objects:
        arguments["fn"] = custom_objects[arguments["fn"]]  # a wrapped custom function
    return cls.from_config(arguments)


def _plain(value):
    """A config value, with Keras's serialized arrays ("__tensor__", "__numpy__") as lists.

    Keras writes a tensor argument such as `AUC(label_weights=...)` that way in
    `.keras` files.
    """
    if isinstance(value, dict) and value.get("class_name") in ("__tensor__", "__numpy__"):
        return value["config"]["value"]
    return value
