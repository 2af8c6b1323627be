"""Tensor's operators (`+ - * / // % ** @`, comparisons, `[]`, `.T`), delegated to ops.

The engine cannot import `minikeras.ops`, which is built on it: `minikeras.ops`
binds itself here on import (`bind_operators`), so imports flow one way,
engine <- ops.
"""

__all__ = ["Operators", "bind_operators"]

# The ops the operators call (see `bind_operators`).
_ops = None


def bind_operators(ops):
    """Makes Tensor's operators (`+`, `@`, `[]`, `.T`, ...) call the functions of `ops`.

    `minikeras.ops` calls it once, on import: the engine cannot import ops,
    which are built on it.

    Args:
        ops: a module (or object) with `add`, `subtract`, `multiply`,
            `divide`, `floor_divide`, `mod`, `power`, `matmul`, `negative`,
            `abs`, the comparisons, `getitem`, `transpose`, `reshape` and
            `cast`.

    Returns:
        None.

    Example:
        >>> from minikeras import ops
        >>> mk.engine.operators.bind_operators(ops)  # what importing minikeras.ops did already
        >>> (mk.Tensor([1.0]) + 1).numpy()
        array([2.], dtype=float32)
    """
    global _ops
    _ops = ops


class Operators:
    """The operator methods of `Tensor`, each calling the op of the same meaning.

    Example:
        >>> (mk.Tensor([1.0, 2.0]) * 3 - 1).numpy()
        array([2., 5.], dtype=float32)
    """

    __slots__ = ()

    def __add__(self, other):
        return _ops.add(self, other)

    def __radd__(self, other):
        return _ops.add(other, self)

    def __sub__(self, other):
        return _ops.subtract(self, other)

    def __rsub__(self, other):
        return _ops.subtract(other, self)

    def __mul__(self, other):
        return _ops.multiply(self, other)

    def __rmul__(self, other):
        return _ops.multiply(other, self)

    def __truediv__(self, other):
        return _ops.divide(self, other)

    def __rtruediv__(self, other):
        return _ops.divide(other, self)

    def __floordiv__(self, other):
        return _ops.floor_divide(self, other)

    def __rfloordiv__(self, other):
        return _ops.floor_divide(other, self)

    def __mod__(self, other):
        return _ops.mod(self, other)

    def __rmod__(self, other):
        return _ops.mod(other, self)

    def __pow__(self, other):
        return _ops.power(self, other)

    def __rpow__(self, other):
        return _ops.power(other, self)

    def __matmul__(self, other):
        return _ops.matmul(self, other)

    def __rmatmul__(self, other):
        return _ops.matmul(other, self)

    def __neg__(self):
        return _ops.negative(self)

    def __abs__(self):
        return _ops.abs(self)

    def __eq__(self, other):
        return _ops.equal(self, other)

    def __ne__(self, other):
        return _ops.not_equal(self, other)

    def __lt__(self, other):
        return _ops.less(self, other)

    def __le__(self, other):
        return _ops.less_equal(self, other)

    def __gt__(self, other):
        return _ops.greater(self, other)

    def __ge__(self, other):
        return _ops.greater_equal(self, other)

    # Truth values, as Keras's KerasTensor takes `& | ^ ~` (logical, also for integers).
    def __and__(self, other):
        return _ops.logical_and(self, other)

    def __rand__(self, other):
        return _ops.logical_and(other, self)

    def __or__(self, other):
        return _ops.logical_or(self, other)

    def __ror__(self, other):
        return _ops.logical_or(other, self)

    def __xor__(self, other):
        return _ops.logical_xor(self, other)

    def __rxor__(self, other):
        return _ops.logical_xor(other, self)

    def __invert__(self):
        return _ops.logical_not(self)

    def __getitem__(self, index):
        return _ops.getitem(self, index)

    @property
    def T(self):  # noqa: N802 (numpy's name)
        """The transpose (axes reversed)."""
        return _ops.transpose(self)

    def reshape(self, *shape):
        """Same as `ops.reshape(self, shape)`.

        Args:
            *shape: the new shape, as one tuple or as separate ints; one entry
                may be -1.

        Returns:
            A Tensor with the same values in the new shape.

        Example:
            >>> t = mk.Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
            >>> t.reshape(3, 2).shape, t.reshape((-1,)).shape
            ((3, 2), (6,))
        """
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        return _ops.reshape(self, shape)

    def astype(self, dtype):
        """Same as `ops.cast(self, dtype)`.

        Args:
            dtype: the new dtype, such as `"int32"` or `np.float64`.

        Returns:
            A Tensor of the values cast to `dtype`.

        Example:
            >>> mk.Tensor([1.5, 2.5]).astype("int32").numpy()
            array([1, 2], dtype=int32)
        """
        return _ops.cast(self, dtype)
