"""What ops tell a replay about themselves: value checks, random draws, an inference forward.

`engine.replay.Program` replays the numpy calls a recording noted. Most
ops need nothing more; an op whose Python front checks values registers a
`replay_guard`, an op that draws random numbers `replay_draws`, and an op
whose forward does work only a backward pass needs `replay_inference`.
`engine.replay` re-exports the three.
"""

__all__ = ["replay_draws", "replay_guard", "replay_inference"]

_guards = {}  # primitive -> guard(args) -> bool
_drawing = set()  # primitives that draw random numbers (replay_draws)
_inference = {}  # primitive -> its forward in an inference replay (replay_inference)


def replay_guard(op, guard):
    """Registers `guard(args)`, which a replay of `op` runs first; False gives up the replay.

    Args:
        op: a primitive (fused or not).
        guard: a function of the op's positional arguments returning a bool.

    Returns:
        None.

    Example:
        >>> @mk.engine.primitive.fused_primitive
        ... def halve(x):
        ...     return x / 2, None
        >>> mk.engine.replay.replay_guard(halve, lambda args: bool(np.isfinite(args[0]).all()))
    """
    _guards[op] = guard


def replay_draws(op):
    """Registers `op` as drawing random numbers, from a numpy `Generator` argument or the thread's.

    A replay that gives up part-way (a `replay_guard` said no) puts the
    states of the generators such ops draw from back as they were, so that
    the eager step that then runs draws what it would have drawn alone.

    Args:
        op: a primitive (fused or not).

    Returns:
        None.

    Example:
        >>> @mk.engine.primitive.fused_primitive
        ... def noisy(x, generator):
        ...     return x + generator.standard_normal(x.shape), None
        >>> mk.engine.replay.replay_draws(noisy)
    """
    _drawing.add(op)


def replay_inference(op, forward):
    """Registers `forward`, which an inference replay (`Program.infer`) calls in place of `op`.

    For an op whose forward does work only a backward pass needs, decided by
    an argument a recording fixes (max pooling's winners, wanted under a
    tape). `forward` takes the op's arguments and returns what the op
    returns (for a fused op, `(ans, residuals)`), with `ans` bit for bit the op's.

    Args:
        op: a primitive (fused or not).
        forward: the function to call instead.

    Returns:
        None.

    Example:
        >>> @mk.engine.primitive.fused_primitive
        ... def double(x, keep):
        ...     return x * 2, (x if keep else None)
        >>> mk.engine.replay.replay_inference(double, lambda x, keep: (x * 2, None))
    """
    _inference[op] = forward
