"""Which subclassed models' `call` a replay can stand for: straight-line calls of their layers.

A Sequential or functional model's call is minikeras's own code, which
`replayed_call` and `trainers.compiled_step` record once and replay. A
subclassed model's `call` is the user's Python, and a replay runs none of
it: the replay gives the eager call's numbers only when that Python does
nothing but pass tensors between layers and ops. `plain_call_reason`
proves that from the bytecode of `call` before anything is recorded, and
refuses (the call stays eager, as written) anything else. What it accepts:

- straight-line code: no `if`, loop, `try`, `with`, comprehension,
  `lambda` or closure (nothing can take another path on another call);
- calls of the layers the model holds as its own attributes, on one
  tensor (or a list of them), with at most `training=` (the call's own
  `training`, or a constant): `self.dense(x, training=training)`, which
  `not_replayable` then checks as it checks a Sequential's layers;
- the math ops of `replayability.REPLAYABLE_OPERATIONS` from `minikeras.ops`
  or `minikeras.activations` (`ops.relu(x)`, `mk.ops.concatenate([a, b])`,
  or the function imported by name), tensors in their operand places and
  Python values in the others (an axis), and Python's operators and
  indexing on tensors with Python numbers (`x + y`, `x * 0.5`, `x[:, :8]`),
  which Tensors turn into ops;
- a tensor's `shape`, `ndim`, `dtype` and `T`, constants, the call's
  arguments with constant defaults, and the model's own public Python
  numbers, strings and tuples of them (`self.scale`), which
  `Layer.__setattr__` counts when they are set anew (a new recording);
- tuples, lists, dicts and slices built from the above.

Every value is followed as a tensor, or a Python value that depends on no
tensor's value: a tensor never reaches Python's own operations (`"%d" % x`,
`"ab" * x`, `table[x]`), a layer's `training`, or an op's non-operand
arguments, any of which would read its value.

Refused: anything else, among them a read of a value in Python (`float(x)`,
`x.numpy()`, `if ops.any(x)`), a call of any other function or method
(`print`, `self.helper(x)`, `np.exp`), a store to an attribute or a global,
a builtin, a weight read directly (`self.dense.kernel`), a layer held in a
list, an argument whose default is not a constant, a model class with its
own `__getattribute__` or with a graph (a Sequential or functional
subclass) besides its own `call`. What the check relied on (the function,
its code and defaults, each module-level name and module attribute it
resolved) is kept (`plain_call_guards.call_guards`); a replay checks it still holds, and
records again otherwise.

The bytecode is CPython 3.11's; on another version every subclassed model
stays eager (`plain_call_reason` says so).
"""

import builtins
import dis
import sys
import types

from minikeras.layers import tracking
from minikeras.layers.layer import Layer
from minikeras.models.plain_call_kinds import (
    TENSOR,
    TENSOR_ATTRIBUTES,
    TENSORS,
    built,
    callable_or_module,
    indexed,
    is_constant,
    is_static,
    operated,
)

__all__ = ["BYTECODE_VERSIONS", "checked", "plain_call_reason"]

BYTECODE_VERSIONS = ((3, 11),)  # the CPython versions whose bytecode is read

# Stack items besides `plain_call_kinds`' (a string is a reason to refuse, not an item).
_SELF, _NULL, _TRAINING = ("self",), ("null",), ("training",)
# Ops taking two tensor operands; the others take one (a list, for these two).
_BINARY_OPS = frozenset({"add", "divide", "matmul", "maximum", "minimum", "multiply",
                         "power", "subtract", "true_divide"})  # fmt: skip
_LIST_OPS = frozenset({"concatenate", "stack"})

_NEUTRAL = frozenset({"RESUME", "NOP", "CACHE", "PRECALL", "EXTENDED_ARG"})
_CODE_FLAGS = (
    ("generator", 0x20),
    ("coroutine", 0x80),
    ("async generator", 0x200),
    ("*args", 0x04),
    ("**kwargs", 0x08),
)


def plain_call_reason(model):
    """Why `type(model).call` is not plain dataflow a replay can stand for, or None.

    Args:
        model: a built subclassed model (its attributes are read).

    Returns:
        A reason (a string), or None when the call only passes tensors
        between the model's layers and math ops (see the module).

    Example:
        >>> class Plain(mk.Model):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.hidden = mk.layers.Dense(4, activation="relu")
        ...         self.out = mk.layers.Dense(2)
        ...     def call(self, x):
        ...         return self.out(self.hidden(x) * 0.5)
        >>> class Printing(Plain):
        ...     def call(self, x):
        ...         print("called")
        ...         return self.out(x)
        >>> from minikeras.models.plain_calls import plain_call_reason
        >>> plain_call_reason(Plain()) is None
        True
        >>> plain_call_reason(Printing())
        "Printing.call uses the builtin 'print'"
    """
    return checked(model)[0]


def checked(model):
    """`(reason or None, guards)` for `type(model).call` (see `plain_call_guards`).

    Args:
        model: a subclassed model.

    Returns:
        The reason `plain_call_reason` gives, and what the check relied on:
        the call function, its code, defaults and keyword defaults, and the
        `(namespace, name, object)` of each name it resolved.

    Example:
        >>> class Plain(mk.Model):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.out = mk.layers.Dense(2)
        ...     def call(self, x):
        ...         return self.out(x)
        >>> reason, guards = mk.models.plain_calls.checked(Plain())
        >>> reason, guards[-1]
        (None, ())
    """
    cls = type(model)
    call = cls.call
    owner = f"{cls.__name__}.call"
    if sys.version_info[:2] not in BYTECODE_VERSIONS:
        return (
            f"{owner} is read as CPython 3.11's bytecode, and this is {sys.version.split()[0]}",
            None,
        )
    if type(call) is not types.FunctionType:
        return f"{owner} is not a Python function", None
    if cls.__getattribute__ is not object.__getattribute__:
        return f"{cls.__name__} has a __getattribute__ of its own", None
    code = call.__code__
    for name, flag in _CODE_FLAGS:
        if code.co_flags & flag:
            return (f"{owner} takes {name}" if "*" in name else f"{owner} is a {name}"), None
    if "__class__" in code.co_freevars:  # (what `super()` reads)
        return f"{owner} calls super()", None
    if code.co_freevars or code.co_cellvars:
        return f"{owner} uses a closure", None
    if code.co_exceptiontable:
        return f"{owner} handles exceptions or uses `with`", None
    if code.co_argcount < 2:
        return f"{owner} takes no inputs", None
    checker = _Checker(model, call, owner)
    try:
        reason = checker.arguments() or checker.run(code)
    except Exception as error:  # (code or objects this reading does not follow)
        reason = f"{owner} could not be read ({type(error).__name__}: {error})"
    guards = (call, code, call.__defaults__, call.__kwdefaults__, tuple(checker.names))
    return reason, guards


class _Checker:
    """Runs `call`'s bytecode on a stack of kinds (see the module); `run` says why not, or None."""

    def __init__(self, model, call, owner):
        self.model, self.call, self.owner = model, call, owner
        self.layers = {id(layer) for layer in tracking.tracked_layers(model)}
        self.stack, self.locals, self.names, self.keywords = [], {}, [], ()

    def arguments(self):
        """The kinds of `call`'s arguments: self, the input, `training`, constant defaults."""
        code, call = self.call.__code__, self.call
        count = code.co_argcount + code.co_kwonlyargcount
        names = code.co_varnames[:count]
        defaults = dict(zip(names[code.co_argcount - len(call.__defaults__ or ()) :],
                            call.__defaults__ or ()))  # fmt: skip
        defaults.update(call.__kwdefaults__ or {})
        self.locals = {names[0]: _SELF, names[1]: TENSOR}
        for name in names[2:]:
            if name == "training":
                self.locals[name] = _TRAINING
            elif name not in defaults:
                return f"{self.owner} takes {name!r}, an argument a replay cannot give"
            elif not is_constant(defaults[name]):
                kind = type(defaults[name]).__name__
                return f"{self.owner} has a default for {name!r} that is not a constant ({kind})"
            else:
                self.locals[name] = ("static", type(defaults[name]))
        return None

    def run(self, code):
        for instruction in dis.get_instructions(code):
            reason = self.step(instruction.opname, instruction)
            if reason is not None:
                return reason
        return None

    def step(self, name, instruction):
        stack = self.stack
        if name in _NEUTRAL:
            return None
        if name == "KW_NAMES":
            self.keywords = self.call.__code__.co_consts[instruction.arg]
        elif name == "LOAD_FAST":
            stack.append(self.locals.get(instruction.argval, ("static", None)))
        elif name == "STORE_FAST":
            if self.locals.get(instruction.argval) == _SELF:
                return f"{self.owner} assigns to {instruction.argval!r}"
            self.locals[instruction.argval] = stack.pop()
        elif name == "LOAD_CONST":
            stack.append(("static", type(instruction.argval)))
        elif name == "PUSH_NULL":
            stack.append(_NULL)
        elif name == "LOAD_GLOBAL":
            found = self.global_named(instruction.argval)
            if isinstance(found, str):
                return found
            if instruction.arg & 1:  # (3.11: NULL + global, for a call)
                stack.append(_NULL)
            stack.append(found)
        elif name in ("LOAD_ATTR", "LOAD_METHOD"):
            found = self.attribute(stack.pop(), instruction.argval, name == "LOAD_METHOD")
            if isinstance(found, str):
                return found
            if name == "LOAD_METHOD":
                stack.append(_NULL)  # (what the call pops below the callable)
            stack.append(found)
        elif name == "CALL":
            return self.called(instruction.arg)
        elif name == "BINARY_OP":
            right, left = stack.pop(), stack.pop()
            return self.push(
                operated(left, right),
                f"computes {instruction.argrepr} on a tensor"
                " and a value that is not a Python number",
            )
        elif name == "BINARY_SUBSCR":
            key, container = stack.pop(), stack.pop()
            return self.push(indexed(container, key), "indexes with a tensor, or a layer")
        elif name in ("UNARY_NEGATIVE", "UNARY_POSITIVE"):
            operand = stack.pop()
            kind = operand if operand == TENSOR or is_static(operand) else None
            return self.push(kind, "negates a layer, module or `self`")
        elif name in ("BUILD_TUPLE", "BUILD_LIST", "BUILD_SLICE"):
            items = [stack.pop() for _ in range(instruction.arg)]
            kind = {"BUILD_TUPLE": tuple, "BUILD_LIST": list, "BUILD_SLICE": slice}[name]
            made = built(items, kind, name != "BUILD_SLICE")
            return self.push(made, f"builds a {kind.__name__} of layers, modules or `self`")
        elif name in ("BUILD_MAP", "BUILD_CONST_KEY_MAP"):
            count = 2 * instruction.arg if name == "BUILD_MAP" else instruction.arg + 1
            items = [stack.pop() for _ in range(count)]
            made = ("static", dict) if all(map(is_static, items)) else None
            return self.push(made, "builds a dict of something other than Python values")
        elif name == "LIST_EXTEND":
            if not is_static(stack.pop()) or not is_static(stack[-instruction.arg]):
                return f"{self.owner} extends a list with something other than Python values"
        elif name == "POP_TOP":
            stack.pop()
        elif name == "COPY":
            stack.append(stack[-instruction.arg])
        elif name == "SWAP":
            stack[-1], stack[-instruction.arg] = stack[-instruction.arg], stack[-1]
        elif name == "RETURN_VALUE":
            if stack.pop() != TENSOR:
                return f"{self.owner} returns something other than one tensor"
        else:
            return f"{self.owner} has a {name} (only straight-line calls of layers and ops replay)"
        return None

    def push(self, kind, reason):
        if kind is None:
            return f"{self.owner} {reason}"
        self.stack.append(kind)
        return None

    def called(self, count):
        """A call of a layer or math op, its arguments checked (see the module)."""
        stack, keywords = self.stack, self.keywords
        self.keywords = ()
        arguments = [stack.pop() for _ in range(count)][::-1]
        callee = stack.pop()
        stack.pop()  # the NULL (or method) below it
        positional = arguments[: count - len(keywords)]
        named = dict(zip(keywords, arguments[count - len(keywords) :]))
        if callee[0] == "layer":
            label = callee[2]
            if len(positional) != 1 or positional[0] not in (TENSOR, TENSORS):
                return f"{self.owner} calls {label} on something other than one tensor or list"
            for keyword, kind in named.items():
                if keyword != "training":
                    return f"{self.owner} passes {keyword}= to {label} (only training=)"
                if kind != _TRAINING and kind not in (("static", bool), ("static", type(None))):
                    return f"{self.owner} passes {label} a training= that is not call's own"
        elif callee[0] == "function":
            label, function = callee[2], callee[1].__name__
            operands = 2 if function in _BINARY_OPS else 1
            for position, kind in enumerate(positional):
                allowed = position < operands and (
                    kind == TENSOR or (kind == TENSORS and function in _LIST_OPS)
                )
                if not allowed and not is_static(kind):
                    return f"{self.owner} passes {label} a tensor where it takes a Python value"
            if not all(is_static(kind) for kind in named.values()):
                return f"{self.owner} passes {label} a tensor by keyword"
        else:
            return f"{self.owner} calls something other than a layer of the model or a math op"
        stack.append(TENSOR)
        return None

    def global_named(self, name):
        namespace = self.call.__globals__
        if name not in namespace:
            if hasattr(builtins, name):
                return f"{self.owner} uses the builtin {name!r}"
            return f"{self.owner} reads {name!r}, which its module does not define"
        self.names.append((namespace, name, namespace[name]))
        return callable_or_module(namespace[name], name, self.owner)

    def attribute(self, receiver, name, method):
        if receiver == _SELF:
            return self.own_attribute(name)
        if receiver == TENSOR:
            if method or name not in TENSOR_ATTRIBUTES:
                return f"{self.owner} reads {name!r} of a tensor (only shape, ndim, dtype and T)"
            return TENSOR_ATTRIBUTES[name]
        if receiver[0] == "module":
            module = receiver[1]
            namespace = vars(module)
            if name not in namespace:
                return f"{self.owner} reads {module.__name__}.{name}, which is not a module name"
            self.names.append((namespace, name, namespace[name]))
            return callable_or_module(namespace[name], f"{module.__name__}.{name}", self.owner)
        return f"{self.owner} reads {name!r} of a layer, function or Python value"

    def own_attribute(self, name):
        """An attribute of the model: one of its layers, or a public Python number or string."""
        model = self.model
        if any(name in vars(cls) for cls in type(model).__mro__):
            return f"{self.owner} reads self.{name}, a class attribute, method or property"
        if name not in vars(model):
            return f"{self.owner} reads self.{name}, which the model does not hold"
        value = vars(model)[name]
        if isinstance(value, Layer):
            if id(value) not in self.layers:  # (its own call is then checked as the others)
                return f"{self.owner} calls self.{name}, a layer the model does not track"
            return ("layer", value, f"self.{name}")
        if name.startswith("_") or name in model._untracked_attributes:
            # (bookkeeping: it changes without a set a replay would see)
            return f"{self.owner} reads self.{name}, the model's bookkeeping"
        if is_constant(value):
            return ("static", type(value))
        return f"{self.owner} reads self.{name}, a {type(value).__name__} (not a layer or number)"
