"""Metrics: running summaries of how well a model does, for logs and callbacks.

A metric is stateful: `update_state(y_true, y_pred, sample_weight=None)` adds
a batch, `result()` gives the value so far as a Python float, and
`reset_state()` starts over. Metrics are not differentiated, so they work on
numpy arrays and keep float64 accumulators: the result over many batches does
not depend on how the data was split into batches.

Most metrics are a `Mean` of per-sample values (`MeanMetricWrapper`): values
with more than one axis are averaged to one per sample, then weighted.
`Precision`, `Recall`, `AUC` and the rate-at-rate metrics
(`PrecisionAtRecall`, `SensitivityAtSpecificity`, ...) count weighted
true/false positives/negatives at thresholds instead; `F1Score`/`FBetaScore`,
the IoU family, `R2Score` and `Sum` keep their counts in variables made with `Metric.add_variable`,
as a custom metric does (Keras 3's way; `metric.variables` lists them).
The loss functions Keras also exports here (`mean_squared_error`, `hinge`,
`binary_focal_crossentropy`, ...) are the same functions as in
`minikeras.losses`; `pearson_correlation` and `concordance_correlation` are
metrics only, as in Keras.

`get("accuracy", loss=...)` picks the accuracy that fits the loss, as Keras
does; see `get`.
"""

from minikeras.losses import (  # loss functions Keras also exports as metrics
    binary_crossentropy,
    binary_focal_crossentropy,
    categorical_crossentropy,
    categorical_focal_crossentropy,
    categorical_hinge,
    hinge,
    huber,
    kl_divergence,
    log_cosh,
    mean_absolute_error,
    mean_absolute_percentage_error,
    mean_squared_error,
    mean_squared_logarithmic_error,
    poisson,
    sparse_categorical_crossentropy,
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
from minikeras.metrics.lookup import deserialize, get, serialize
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

# In the order of the API reference.
__all__ = [
    "Metric",
    "Mean",
    "Sum",
    "MeanMetricWrapper",
    "accuracy",
    "binary_accuracy",
    "categorical_accuracy",
    "sparse_categorical_accuracy",
    "top_k_categorical_accuracy",
    "sparse_top_k_categorical_accuracy",
    "mean_squared_error",
    "mean_absolute_error",
    "huber",
    "kl_divergence",
    "binary_crossentropy",
    "categorical_crossentropy",
    "sparse_categorical_crossentropy",
    "binary_focal_crossentropy",
    "categorical_focal_crossentropy",
    "pearson_correlation",
    "concordance_correlation",
    "mean_absolute_percentage_error",
    "mean_squared_logarithmic_error",
    "log_cosh",
    "poisson",
    "hinge",
    "squared_hinge",
    "categorical_hinge",
    "Accuracy",
    "BinaryAccuracy",
    "CategoricalAccuracy",
    "SparseCategoricalAccuracy",
    "TopKCategoricalAccuracy",
    "SparseTopKCategoricalAccuracy",
    "MeanSquaredError",
    "MeanAbsoluteError",
    "RootMeanSquaredError",
    "MeanAbsolutePercentageError",
    "MeanSquaredLogarithmicError",
    "CosineSimilarity",
    "LogCoshError",
    "R2Score",
    "PearsonCorrelation",
    "ConcordanceCorrelation",
    "Poisson",
    "KLDivergence",
    "BinaryCrossentropy",
    "CategoricalCrossentropy",
    "SparseCategoricalCrossentropy",
    "Hinge",
    "SquaredHinge",
    "CategoricalHinge",
    "TruePositives",
    "FalsePositives",
    "TrueNegatives",
    "FalseNegatives",
    "Precision",
    "Recall",
    "AUC",
    "PrecisionAtRecall",
    "RecallAtPrecision",
    "SensitivityAtSpecificity",
    "SpecificityAtSensitivity",
    "F1Score",
    "FBetaScore",
    "IoU",
    "MeanIoU",
    "BinaryIoU",
    "OneHotIoU",
    "OneHotMeanIoU",
    "get",
    "serialize",
    "deserialize",
]
