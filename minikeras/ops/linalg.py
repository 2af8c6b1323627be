"""Keras's namespace `keras.ops.linalg`: the linear-algebra ops, as `minikeras.ops.linalg`.

The same functions as at the top of `minikeras.ops` (`mk.ops.linalg.qr is
mk.ops.qr`), under the names Keras's `ops.linalg` gives them, so that code
written `keras.ops.linalg.qr(x)` runs unchanged. They are defined in
`ops.decompositions`, `ops.determinants`, `ops.linear_algebra`,
`ops.norms` and `ops.forward_mode`; `matmul` and its kin are in `keras.ops.numpy`, as in Keras.

The names are attached at the end of `minikeras/ops/__init__.py`, after the
package has made each function record graph nodes on symbolic tensors (see
`minikeras.ops.nn` for why).

    >>> q, r = mk.ops.linalg.qr(np.array([[3.0, 0.0], [4.0, 5.0]]))
    >>> np.round(mk.ops.matmul(q, r).numpy(), 4).tolist()
    [[3.0, 0.0], [4.0, 5.0]]
"""

# Keras's names, as Keras 3.15 lists them; ops/__init__.py binds each to its op.
__all__ = [
    "cholesky", "cholesky_inverse", "det", "eig", "eigh", "inv", "jvp", "lstsq", "lu_factor",
    "matrix_rank", "norm", "pinv", "qr", "solve", "solve_triangular", "svd",
]  # fmt: skip
