"""CTC loss for unaligned sequences (speech, handwriting): `ctc` and `CTC`.

Keras's form of `ops.ctc_loss`: every output step counts (`y_pred`'s length),
and a label sequence's length is its number of labels other than the blank 0.
"""

from minikeras import ops
from minikeras.losses.base import LossFunctionWrapper

__all__ = ["CTC", "ctc"]


def ctc(y_true, y_pred):
    """Connectionist temporal classification loss, one value per sample.

    Args:
        y_true: integer labels `(batch, max_length)`; 0 is the blank and
            marks padding: the labels of a sample are its entries other
            than 0. Float labels (a float dataset's) are read as integers,
            as Keras reads them.
        y_pred: logits `(batch, steps, classes)` (not softmaxed), all
            `steps` used.

    Returns:
        A float Tensor `(batch,)`: `ops.ctc_loss` with the lengths above.

    Raises:
        ValueError: if `y_true` is not 2-D or `y_pred` not 3-D.

    Example:
        >>> logits = np.zeros((1, 2, 3), "float32")  # two steps, uniform over 3 classes
        >>> # "1" is read from steps "1 1", "1 0" or "0 1": 3 of the 9 paths
        >>> np.round(mk.losses.ctc([[1, 0]], logits).numpy(), 5)
        array([1.09861], dtype=float32)
    """
    true_shape, pred_shape = ops.shape(y_true), ops.shape(y_pred)
    if len(true_shape) != 2:
        raise ValueError(
            f"ctc: y_true must be integer labels (batch_size, max_length), got shape {true_shape}"
        )
    if len(pred_shape) != 3:
        raise ValueError(
            f"ctc: y_pred must be logits (batch_size, max_length, num_classes), got shape "
            f"{pred_shape}"
        )
    output_length = ops.full((pred_shape[0],), pred_shape[1], dtype="int32")
    y_true = ops.cast(y_true, "int32")
    label_length = ops.sum(ops.cast(ops.not_equal(y_true, 0), "int32"), axis=-1)
    return ops.ctc_loss(y_true, y_pred, label_length, output_length, mask_index=0)


class CTC(LossFunctionWrapper):
    """CTC loss (see `ctc`): `y_true` labels padded with the blank 0, `y_pred` logits.

    Args:
        reduction: as in `Loss`.
        name: the loss's name.
        dtype: as in `Loss`.

    Example:
        >>> logits = np.zeros((2, 2, 3), "float32")
        >>> round(float(mk.losses.CTC()([[1, 0], [1, 2]], logits)), 5)  # -log(3/9), -log(1/9)
        1.64792
    """

    def __init__(self, reduction="sum_over_batch_size", name="ctc", dtype=None):
        super().__init__(ctc, reduction=reduction, name=name, dtype=dtype)

    def get_config(self):
        # Keras's: the name and reduction only (its CTC leaves the dtype out).
        return {"name": self.name, "reduction": self.reduction}
