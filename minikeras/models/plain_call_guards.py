"""What a replayed subclassed call was checked against, and whether it still holds.

`models.plain_calls` accepts a subclassed model's `call` from its bytecode,
resolving the module-level names and module attributes it reads on the way.
A replay stands for what the call did when it was checked; `call_guards`
keeps what that was (each subclassed model's class, call function, code,
defaults and resolved names, nested models included), and `guards_hold`
says, before a replay, whether it is still so. When it is not (a default
replaced, `act = ops.tanh` rebound, the method replaced), the caller
records again.
"""

from minikeras.layers import tracking
from minikeras.models.plain_calls import checked
from minikeras.models.replayability import has_own_call

__all__ = ["call_guards", "guards_hold"]

_MISSING = object()


def call_guards(model):
    """What the accepted calls of `model` and of the models it holds were checked against.

    Args:
        model: a model whose call (and its layers') `not_replayable` accepted.

    Returns:
        For each subclassed model among `model` and the layers it tracks
        (nested ones too), its class, call function, code, defaults, and each
        module-level name and module attribute the call resolved with its
        object: a tuple for `guards_hold`; None when there is no such model.

    Example:
        >>> class Plain(mk.Model):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.out = mk.layers.Dense(2)
        ...     def call(self, x):
        ...         return self.out(mk.ops.relu(x))
        >>> from minikeras.models import plain_call_guards
        >>> (guards,) = plain_call_guards.call_guards(Plain())
        >>> [name for _, name, _ in guards[-1]]
        ['mk', 'ops', 'relu']
    """
    from minikeras.models.model import Model

    found = []
    for layer in (model, *tracking.tracked_layers(model)):
        if isinstance(layer, Model) and has_own_call(layer):
            reason, guards = checked(layer)
            if reason is None:
                found.append((type(layer), *guards))
    return tuple(found) or None


def guards_hold(guards):
    """Whether what `call_guards` found still holds: the same calls, defaults and names.

    Args:
        guards: what `call_guards` returned.

    Returns:
        A bool; False when a replay could differ from what the calls now do.

    Example:
        >>> class Plain(mk.Model):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.out = mk.layers.Dense(2)
        ...     def call(self, x, scale=2.0):
        ...         return self.out(x * scale)
        >>> from minikeras.models import plain_call_guards
        >>> guards = plain_call_guards.call_guards(Plain())
        >>> plain_call_guards.guards_hold(guards)
        True
        >>> Plain.call.__defaults__ = (3.0,)
        >>> plain_call_guards.guards_hold(guards)
        False
    """
    for cls, function, code, defaults, keyword_defaults, names in guards:
        if cls.call is not function or function.__code__ is not code:
            return False
        if function.__defaults__ is not defaults or function.__kwdefaults__ is not keyword_defaults:
            return False
        if not all(namespace.get(name, _MISSING) is found for namespace, name, found in names):
            return False
    return True
