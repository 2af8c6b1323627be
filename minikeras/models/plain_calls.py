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
- calls of the layers the model holds as its own attributes
  (`self.dense(x, training=training)`), which `not_replayable` then checks
  as it checks a Sequential's layers;
- the math ops of `replayability.REPLAYABLE_OPERATIONS` from `minikeras.ops`
  or `minikeras.activations` (`ops.relu(x)`, `mk.ops.concatenate([a, b])`,
  or the function imported by name), and Python's operators and indexing
  (`x + y`, `x * 0.5`, `x[:, :8]`), which Tensors turn into ops;
- a tensor's `shape`, `ndim`, `dtype` and `T`, and the model's own Python
  numbers, strings and tuples of them (`self.scale`), which `Layer.__setattr__`
  counts when they are set anew (a new recording);
- keyword arguments, tuples, lists, dicts and slices built from the above.

Refused: anything else, among them a read of a value in Python (`float(x)`,
`x.numpy()`, `if ops.any(x)`), a call of any other function or method
(`print`, `self.helper(x)`, `np.exp`), a store to an attribute or a global,
a builtin, a weight read directly (`self.dense.kernel`), a layer held in a
list. The names `call` reads from its module (`ops`, `mk`) are resolved
when it is checked, as a compiled (traced) step resolves them once.

The bytecode is CPython 3.11's; on another version every subclassed model
stays eager (`plain_call_reason` says so).
"""

import builtins
import dis
import sys
import types

from minikeras import activations, ops
from minikeras.layers import tracking
from minikeras.layers.layer import Layer
from minikeras.models.replayability import REPLAYABLE_OPERATIONS

__all__ = ["BYTECODE_VERSIONS", "plain_call_reason"]

BYTECODE_VERSIONS = ((3, 11),)  # the CPython versions whose bytecode is read

# What an item on the simulated stack is: a tuple (a string is a reason to refuse).
_VALUE, _SELF, _NULL = ("value",), ("self",), ("null",)  # (and a layer, module, function)

_TENSOR_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "T"})
_SCALARS = (bool, int, float, str, type(None))
_ALLOWED_MODULES = ("minikeras", "minikeras.ops", "minikeras.activations")
_FUNCTION_SOURCES = (ops, activations)

# Opcodes with no effect on the simulated stack, and those that pop n values and push one.
_NEUTRAL = frozenset({"RESUME", "NOP", "CACHE", "PRECALL", "KW_NAMES", "EXTENDED_ARG"})
_COMBINING = {"BINARY_OP": 2, "BINARY_SUBSCR": 2, "UNARY_NEGATIVE": 1, "UNARY_POSITIVE": 1}
_BUILDING = frozenset({"BUILD_TUPLE", "BUILD_LIST", "BUILD_SLICE"})
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
    call = type(model).call
    owner = f"{type(model).__name__}.call"
    if sys.version_info[:2] not in BYTECODE_VERSIONS:
        return f"{owner} is read as CPython 3.11's bytecode, and this is {sys.version.split()[0]}"
    if type(call) is not types.FunctionType:
        return f"{owner} is not a Python function"
    code = call.__code__
    for name, flag in _CODE_FLAGS:
        if code.co_flags & flag:
            return f"{owner} takes {name}" if "*" in name else f"{owner} is a {name}"
    if "__class__" in code.co_freevars:  # (what `super()` reads)
        return f"{owner} calls super()"
    if code.co_freevars or code.co_cellvars:
        return f"{owner} uses a closure"
    if code.co_exceptiontable:
        return f"{owner} handles exceptions or uses `with`"
    if code.co_argcount < 2:
        return f"{owner} takes no inputs"
    return _Checker(model, call, owner).run(code)


class _Checker:
    """Runs `call`'s bytecode on a stack of kinds (see the module); `run` says why not, or None."""

    def __init__(self, model, call, owner):
        self.model, self.call, self.owner = model, call, owner
        self.layers = {id(layer) for layer in tracking.tracked_layers(model)}
        self.stack = []
        self.locals = {name: _VALUE for name in call.__code__.co_varnames}
        self.locals[call.__code__.co_varnames[0]] = _SELF

    def run(self, code):
        try:
            for instruction in dis.get_instructions(code):
                reason = self.step(instruction.opname, instruction)
                if reason is not None:
                    return reason
        except (IndexError, KeyError) as error:  # (code this reading does not follow)
            return f"{self.owner} could not be read ({type(error).__name__}: {error})"
        return None

    def step(self, name, instruction):
        stack = self.stack
        if name in _NEUTRAL:
            return None
        if name == "LOAD_FAST":
            stack.append(self.locals[instruction.argval])
        elif name == "STORE_FAST":
            if self.locals[instruction.argval] == _SELF:
                return f"{self.owner} assigns to {instruction.argval!r}"
            self.locals[instruction.argval] = stack.pop()
        elif name == "LOAD_CONST":
            stack.append(_VALUE)
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
            arguments = [stack.pop() for _ in range(instruction.arg)]
            callee = stack.pop()
            stack.pop()  # the NULL (or method) below it
            if callee[0] not in ("layer", "function"):
                return f"{self.owner} calls something other than a layer of the model or a math op"
            if any(argument != _VALUE for argument in arguments):
                return f"{self.owner} passes a layer, module or `self` to {callee[2]!r}"
            stack.append(_VALUE)
        elif name in _COMBINING or name in _BUILDING:
            count = _COMBINING.get(name) or instruction.arg
            operands = [stack.pop() for _ in range(count)]
            if any(operand != _VALUE for operand in operands):
                return f"{self.owner} computes with a layer, module or `self` ({name})"
            stack.append(_VALUE)
        elif name == "BUILD_MAP":
            return self.combine(2 * instruction.arg, name)
        elif name == "BUILD_CONST_KEY_MAP":
            return self.combine(instruction.arg + 1, name)
        elif name == "LIST_EXTEND":
            if stack.pop() != _VALUE:
                return f"{self.owner} computes with a layer, module or `self` ({name})"
        elif name == "POP_TOP":
            stack.pop()
        elif name == "COPY":
            stack.append(stack[-instruction.arg])
        elif name == "SWAP":
            stack[-1], stack[-instruction.arg] = stack[-instruction.arg], stack[-1]
        elif name == "RETURN_VALUE":
            if stack.pop() != _VALUE:
                return f"{self.owner} returns a layer, module or `self`"
        else:
            return f"{self.owner} has a {name} (only straight-line calls of layers and ops replay)"
        return None

    def combine(self, count, name):
        operands = [self.stack.pop() for _ in range(count)]
        if any(operand != _VALUE for operand in operands):
            return f"{self.owner} computes with a layer, module or `self` ({name})"
        self.stack.append(_VALUE)
        return None

    def global_named(self, name):
        namespace = self.call.__globals__
        if name not in namespace:
            if hasattr(builtins, name):
                return f"{self.owner} uses the builtin {name!r}"
            return f"{self.owner} reads {name!r}, which its module does not define"
        return _callable_or_module(namespace[name], name, self.owner)

    def attribute(self, receiver, name, method):
        if receiver == _SELF:
            return self.own_attribute(name)
        if receiver == _VALUE:
            if name in _TENSOR_ATTRIBUTES and not method:
                return _VALUE
            return f"{self.owner} reads {name!r} of a tensor (only shape, ndim, dtype and T)"
        if receiver[0] == "module":
            module = receiver[1]
            if not hasattr(module, name):
                return f"{self.owner} reads {module.__name__}.{name}, which does not exist"
            return _callable_or_module(
                getattr(module, name), f"{module.__name__}.{name}", self.owner
            )
        return f"{self.owner} reads {name!r} of a layer or function"

    def own_attribute(self, name):
        """An attribute of the model: one of its layers, or a Python number or string."""
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
        if _is_constant(value):
            return _VALUE
        return f"{self.owner} reads self.{name}, a {type(value).__name__} (not a layer or number)"


def _callable_or_module(value, name, owner):
    """A minikeras module, or a math op of `ops` or `activations`, as a stack item; else why not."""
    if isinstance(value, types.ModuleType):
        if value.__name__ in _ALLOWED_MODULES:
            return ("module", value, name)
        return f"{owner} reads the module {value.__name__!r}, not minikeras, its ops or activations"
    function_name = getattr(value, "__name__", None)
    for module in _FUNCTION_SOURCES:
        if vars(module).get(function_name) is value and function_name in REPLAYABLE_OPERATIONS:
            return ("function", value, name)
    return f"{owner} reads {name!r}, not a minikeras module or math op"


def _is_constant(value):
    if type(value) in _SCALARS:
        return True
    return type(value) is tuple and all(_is_constant(item) for item in value)
