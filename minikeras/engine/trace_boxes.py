"""Autograd boxes nested by trace id: find, insert and remove one tape's box.

A value that several tapes watch is boxed once per tape, the boxes nested by
trace id (the highest outermost), as autograd expects of nested traces. A
tape finds its node in such a value (`_node_in`), slips its box in beneath
the boxes of later tapes (`_box_at_level`), and takes its box out leaving
the others (`_unbox_level`).
"""

from autograd.numpy.numpy_boxes import ArrayBox
from autograd.tracer import isbox, new_box

__all__ = []


def _node_in(value, trace_id):
    """The node of `value` in trace `trace_id`, looking through nested boxes."""
    if type(value) is ArrayBox and value._trace == trace_id:
        return value._node  # the usual case: the innermost box is this tape's
    while isbox(value):
        if value._trace == trace_id:
            return value._node
        value = value._value
    return None


def _box_at_level(value, trace_id, node):
    """Boxes `value` for trace `trace_id` beneath the boxes of later (inner) tapes.

    autograd needs the boxes of a value nested by trace id, highest outermost;
    an outer tape watching a Tensor that an inner tape already watches must
    slip its box underneath.
    """
    if isbox(value) and value._trace > trace_id:
        return new_box(_box_at_level(value._value, trace_id, node), value._trace, value._node)
    return new_box(value, trace_id, node)


def _unbox_level(value, trace_id):
    """`value` without its box of trace `trace_id` (other tapes' boxes stay)."""
    if isbox(value) and value._trace >= trace_id:
        if value._trace == trace_id:
            return value._value
        return new_box(_unbox_level(value._value, trace_id), value._trace, value._node)
    return value
