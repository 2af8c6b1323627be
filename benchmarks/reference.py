"""Hand-written numpy, the practical limit for a numpy framework, and the GEMM floor.

What a careful numpy programmer writes for an MLP's training step: float32
throughout with Python-float scalars (never `np.float64` ones), bias add and
relu in place, the relu mask as `grad *= hidden > 0` (boolean indexing is
about ten times slower), the softmax gradient built in the softmax's own
buffer, and Keras's Adam in place with `out=`. The benchmark scripts and the
suite time minikeras against these, and check first that both compute the
same numbers.

`GemmFloor` replays only a step's matrix products, with the same operand
layouts, into preallocated outputs: no implementation of the step can beat it.
"""

import math
import time

import numpy as np

BETA_1, BETA_2, EPSILON = 0.9, 0.999, 1e-7  # Keras's (and minikeras's) Adam defaults


def dense_weights(layer_sizes, rng):
    """Glorot-uniform kernels and small non-zero biases, drawn layer by layer (float32)."""
    weights = []
    for fan_in, fan_out in zip(layer_sizes[:-1], layer_sizes[1:]):
        limit = math.sqrt(6.0 / (fan_in + fan_out))
        weights.append(rng.uniform(-limit, limit, (fan_in, fan_out)).astype(np.float32))
        weights.append(rng.uniform(-0.1, 0.1, fan_out).astype(np.float32))
    return weights


class NumpyMLP:
    """An MLP (relu hidden layers, linear output) with softmax cross-entropy, by hand.

    `params` alternates kernels `(in, out)` and biases `(out,)`; they are this
    object's own copies, updated in place by an optimizer.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> mlp = NumpyMLP(dense_weights((4, 3, 2), rng))
        >>> loss, saved = mlp.forward(np.ones((5, 4), np.float32), np.zeros(5, int))
        >>> [g.shape for g in mlp.backward(saved)]
        [(4, 3), (3,), (3, 2), (2,)]
    """

    def __init__(self, weights):
        self.params = [np.array(value, copy=True) for value in weights]
        self._rows = {}

    def forward(self, x, labels):
        """Forward pass and mean loss; returns `(loss, saved)` for `backward`."""
        params = self.params
        batch = x.shape[0]
        rows = self._rows.get(batch)
        if rows is None:
            rows = self._rows[batch] = np.arange(batch)
        inputs = [x]
        hidden = x
        for index in range(0, len(params) - 2, 2):
            hidden = hidden @ params[index]
            hidden += params[index + 1]
            np.maximum(hidden, 0, out=hidden)
            inputs.append(hidden)
        logits = hidden @ params[-2]
        logits += params[-1]
        # Softmax cross-entropy, shifted in place for stability.
        logits -= logits.max(axis=1, keepdims=True)
        probs = np.exp(logits)
        sums = probs.sum(axis=1, keepdims=True)
        loss = np.mean(np.log(sums[:, 0]) - logits[rows, labels])
        return loss, (inputs, labels, rows, probs, sums)

    def backward(self, saved):
        """The gradients of the mean loss, in the order of `params`."""
        inputs, labels, rows, probs, sums = saved
        # d(mean loss)/d(logits) = (softmax - one_hot) / batch, built in `probs`.
        probs /= sums
        probs[rows, labels] -= 1.0
        probs *= 1.0 / inputs[0].shape[0]
        grad = probs
        grads = [None] * len(self.params)
        for layer in reversed(range(len(inputs))):
            grads[2 * layer] = inputs[layer].T @ grad
            grads[2 * layer + 1] = grad.sum(axis=0)
            if layer:
                grad = grad @ self.params[2 * layer].T
                grad *= inputs[layer] > 0
        return grads

    def forward_backward(self, x, labels):
        loss, saved = self.forward(x, labels)
        return loss, self.backward(saved)

    def predict(self, x):
        """Logits, without keeping anything for a backward pass.

        One new array per layer (its matrix product), bias and relu added in
        place in it: what a careful numpy programmer writes, and a fresh
        output at every call, as a framework's.
        """
        params = self.params
        hidden = x
        for index in range(0, len(params) - 2, 2):
            hidden = hidden @ params[index]
            hidden += params[index + 1]
            np.maximum(hidden, 0, out=hidden)
        logits = hidden @ params[-2]
        logits += params[-1]
        return logits


class ClosureTapeMLP:
    """The least Python a tape step can do: `NumpyMLP`'s arithmetic, recorded as closures.

    Each op of the forward pass appends its VJP (a closure over what it
    needs) to a list; the backward pass calls them in reverse. No Tensors,
    no checks, no layers, no graph beyond that list: what any eager
    framework's tape must at least do. The step's gradients are the
    caller's (as a framework's are the user's), so SGD does not scale them
    in place: `w -= learning_rate * g`, with its temporary. Timing it beside
    minikeras says how much of minikeras's overhead over hand-written numpy
    is the price of an eager tape, and how much is minikeras's own.

    Args:
        weights: `(kernel, bias)` pairs flattened, as `NumpyMLP` takes them.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> weights = dense_weights((4, 3, 2), rng)
        >>> x, labels = np.ones((5, 4), np.float32), np.zeros(5, int)
        >>> tape_loss, tape_grads = ClosureTapeMLP(weights).forward_backward(x, labels)
        >>> np_loss, np_grads = NumpyMLP(weights).forward_backward(x, labels)
        >>> bool(np.isclose(tape_loss, np_loss)), [g.shape for g in tape_grads]
        (True, [(4, 3), (3,), (3, 2), (2,)])
    """

    def __init__(self, weights):
        self.params = [np.array(value, copy=True) for value in weights]
        self._rows = {}

    def forward(self, x, labels):
        """The mean loss, and the tape (a list of VJPs) to pull it back through."""
        params, tape = self.params, []
        batch = x.shape[0]
        rows = self._rows.get(batch)
        if rows is None:
            rows = self._rows[batch] = np.arange(batch)
        hidden = x
        last = len(params) - 2
        for index in range(0, len(params), 2):
            hidden = _recorded_dense(tape, hidden, params[index], params[index + 1], index, last)
        return _recorded_loss(tape, hidden, labels, rows), tape

    def gradients(self, tape):
        """The gradients of the loss, in the order of `params`, from the tape."""
        grads = [None] * len(self.params)
        grad = None
        for vjp in reversed(tape):
            grad = vjp(grad, grads)
        return grads

    def forward_backward(self, x, labels):
        loss, tape = self.forward(x, labels)
        return loss, self.gradients(tape)

    def update(self, grads, learning_rate):
        """SGD on the params, leaving the gradients as they were."""
        for param, grad in zip(self.params, grads):
            param -= learning_rate * grad


def _recorded_dense(tape, x, kernel, bias, index, last):
    """`relu(x @ kernel + bias)` (no relu for the last layer), its VJP on the tape."""
    out = x @ kernel
    out += bias
    relu = index < last
    if relu:
        np.maximum(out, 0, out=out)

    def vjp(grad, grads):
        if relu:
            grad *= out > 0  # (the tape's own buffer: nobody else holds it)
        grads[index], grads[index + 1] = x.T @ grad, grad.sum(axis=0)
        return grad @ kernel.T if index else None

    tape.append(vjp)
    return out


def _recorded_loss(tape, logits, labels, rows):
    """The mean softmax cross-entropy from logits, its VJP on the tape."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    probs = np.exp(shifted)
    sums = probs.sum(axis=1, keepdims=True)
    loss = np.mean(np.log(sums[:, 0]) - shifted[rows, labels])

    def vjp(grad, grads):  # (softmax - one_hot) / batch, in the softmax's own buffer
        np.divide(probs, sums, out=probs)
        probs[rows, labels] -= 1.0
        return np.multiply(probs, 1.0 / len(rows), out=probs)

    tape.append(vjp)
    return loss


def sgd_in_place(params, grads, learning_rate):
    """`w -= learning_rate * g`, scaling the gradients (ours to overwrite) in place."""
    for param, grad in zip(params, grads):
        grad *= learning_rate
        param -= grad


class Adam:
    """Keras's Adam by hand, in place, in the order of operations of minikeras's `Adam`.

    Per weight, with t the step (1 on the first) and Python-float scalars:
        m += (g - m) * (1 - beta_1)
        v += (g * g - v) * (1 - beta_2)
        w -= m / (sqrt(v) + epsilon) * lr * sqrt(1 - beta_2^t) / (1 - beta_1^t)

    Every intermediate goes to one scratch buffer per weight, which stays in
    cache: building `alpha * m` in a second buffer (even the gradient's own)
    makes the update ~13% slower. The gradients are not modified.

    Args:
        params: the float32 arrays to update in place.
        learning_rate: float.

    Example:
        >>> param = np.ones(2, np.float32)
        >>> Adam([param], learning_rate=0.1).apply([np.ones(2, np.float32)])
        >>> param
        array([0.9, 0.9], dtype=float32)
    """

    def __init__(self, params, learning_rate=1e-3):
        self.params = params
        self.learning_rate = learning_rate
        self.momentums = [np.zeros_like(value) for value in params]
        self.velocities = [np.zeros_like(value) for value in params]
        self.scratch = [np.empty_like(value) for value in params]
        self.iterations = 0

    def apply(self, grads):
        self.iterations += 1
        step = self.iterations
        alpha = self.learning_rate * math.sqrt(1.0 - BETA_2**step) / (1.0 - BETA_1**step)
        keep_1, keep_2 = 1.0 - BETA_1, 1.0 - BETA_2
        for param, grad, momentum, velocity, scratch in zip(
            self.params, grads, self.momentums, self.velocities, self.scratch
        ):
            np.subtract(grad, momentum, out=scratch)
            scratch *= keep_1
            momentum += scratch
            np.square(grad, out=scratch)
            scratch -= velocity
            scratch *= keep_2
            velocity += scratch
            np.sqrt(velocity, out=scratch)
            scratch += EPSILON
            np.divide(momentum, scratch, out=scratch)
            scratch *= alpha
            param -= scratch


class GemmFloor:
    """A step's matrix products alone, replayed into preallocated outputs.

    Args:
        forward: list of `(left, right)` operands of the forward products,
            with the step's own layouts (a transposed view stays a view).
        backward: likewise for the backward products.

    Example:
        >>> a = np.ones((8, 4), np.float32)
        >>> floor = GemmFloor([(a, a.T)], [(a.T, a)])
        >>> floor.flops, sorted(floor.timed_step())
        (768, ['backward', 'forward', 'step'])
    """

    def __init__(self, forward, backward=()):
        def with_outputs(products):
            return [
                (left, right, np.empty((left.shape[0], right.shape[1]), left.dtype))
                for left, right in products
            ]

        self.forward = with_outputs(forward)
        self.backward = with_outputs(backward)
        self.flops = sum(
            2 * left.shape[0] * left.shape[1] * right.shape[1]
            for left, right, _ in self.forward + self.backward
        )

    def run_forward(self):
        for left, right, out in self.forward:
            np.matmul(left, right, out=out)

    def run_backward(self):
        for left, right, out in self.backward:
            np.matmul(left, right, out=out)

    def timed_step(self, *unused, clock=time.perf_counter):
        """All products once; returns the seconds they took, forward and backward apart."""
        t0 = clock()
        self.run_forward()
        t1 = clock()
        self.run_backward()
        t2 = clock()
        return {"forward": t1 - t0, "backward": t2 - t1, "step": t2 - t0}

    def run(self, steps):
        """`steps` replays; returns the seconds they took."""
        start = time.perf_counter()
        for _ in range(steps):
            self.run_forward()
            self.run_backward()
        return time.perf_counter() - start


def mlp_floor(params, x, backward=True):
    """The GEMM floor of `NumpyMLP`'s step on a batch `x`: the same products and layouts.

    With `backward=False`, the forward pass's products alone (the floor of `predict`).
    """
    mlp = NumpyMLP(params)
    _, (inputs, *_) = mlp.forward(x, np.zeros(len(x), np.int64))
    kernels = mlp.params[0::2]
    forward = list(zip(inputs, kernels))
    if not backward:
        return GemmFloor(forward)
    backward = []
    grad = np.ones((len(x), kernels[-1].shape[1]), np.float32)
    for layer in reversed(range(len(kernels))):
        backward.append((inputs[layer].T, grad))
        if layer:
            backward.append((grad, kernels[layer].T))
            grad = np.ones_like(inputs[layer])
    return GemmFloor(forward, backward)


def assert_same(named_pairs, rtol=1e-4, atol_scale=1e-6, what=""):
    """Asserts each `(name, ours, reference)` agrees, float32 both, to a tolerance.

    The absolute tolerance is `atol_scale` times the reference's largest magnitude.
    """
    for name, ours, reference in named_pairs:
        ours, reference = np.asarray(ours), np.asarray(reference)
        label = f"{what} {name}".strip()
        assert ours.dtype == np.float32, f"{label}: ours is {ours.dtype}, expected float32"
        assert reference.dtype == np.float32, f"{label}: reference is {reference.dtype}"
        scale = float(np.abs(reference).max()) if reference.size else 0.0
        np.testing.assert_allclose(
            ours, reference, rtol=rtol, atol=atol_scale * scale, err_msg=label
        )
