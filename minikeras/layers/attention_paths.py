"""Which attention Keras computes: its fused kernel, or the explicit one with scores.

Keras's `MultiHeadAttention` and `GroupQueryAttention` call the backend's
fused `dot_product_attention` when they can (no dropout rate, no scores to
return, one steps axis), and otherwise compute the scores themselves with a
masked `Softmax`. The two agree except on a query step that may attend to no
key step (a padded query step, say): the explicit softmax gives it all-zero
weights, the fused kernel (JAX's, on which Keras's numbers here are checked)
a uniform average over every key step. Flash attention, asked for, refuses
dropout and returning the scores. There is no fused kernel here: these
helpers only pick which of the two results to give, and raise what Keras
raises.
"""

__all__ = ["check_flash_attention", "takes_fused_path"]


def check_flash_attention(where, flash_attention, dropout=0.0, return_attention_scores=False):
    """Refuses what Keras's flash attention refuses: dropout, and returning the scores.

    There is no fused kernel here: `flash_attention=True` computes the same
    attention, and only these checks tell it apart (the dropout rate at
    construction, the scores at a call, as Keras checks them).

    Args:
        where: the layer, for the message (`"MultiHeadAttention 'mha'"`).
        flash_attention: the layer's `flash_attention`, as a bool.
        dropout: its dropout rate.
        return_attention_scores: the call's argument.

    Returns:
        None.

    Raises:
        ValueError: for flash attention with a dropout rate above 0 or with
            `return_attention_scores=True`.

    Example:
        >>> mk.layers.attention.check_flash_attention("MultiHeadAttention", True, 0.0)
    """
    if not flash_attention:
        return
    if dropout > 0:
        raise ValueError(
            f"{where}: dropout ({dropout}) is not supported with flash_attention=True (as in "
            "Keras); set dropout to 0.0, or flash_attention to None"
        )
    if return_attention_scores:
        raise ValueError(
            f"{where}: return_attention_scores=True is not supported with "
            "flash_attention=True (as in Keras); pass flash_attention=None to get the scores"
        )


def takes_fused_path(dropout, return_attention_scores, steps_axes=1):
    """Whether Keras would call its fused attention kernel for this call.

    It does when the layer's dropout rate is 0 (whether training or not),
    the scores are not returned, and the query has one steps axis. On that
    path a query step with every key step masked averages the values
    uniformly; on the other its weights are all zero.

    Args:
        dropout: the layer's dropout rate.
        return_attention_scores: the call's argument.
        steps_axes: how many steps axes the query has (`T1, T2, ...`).

    Returns:
        A bool.

    Example:
        >>> from minikeras.layers.attention_paths import takes_fused_path
        >>> takes_fused_path(0.0, False), takes_fused_path(0.1, False), takes_fused_path(0.0, True)
        (True, False, False)
    """
    return dropout == 0 and not return_attention_scores and steps_axes == 1
