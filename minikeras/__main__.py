"""The main job: `python -m minikeras` (or the `minikeras` command)."""

import argparse

import numpy as np

from minikeras import GradientTape, Variable, ops


def main(argv=None):
    """Runs a short demonstration of gradients (training comes with `fit`).

    Args:
        argv: command-line arguments (defaults to `sys.argv[1:]`).

    Returns:
        The exit code, 0.

    Example:
        >>> main(["--steps", "2"])  # doctest: +ELLIPSIS
        step 1 ...
        0
    """
    parser = argparse.ArgumentParser(prog="minikeras", description=main.__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20, help="gradient-descent steps")
    parser.add_argument("--seed", type=int, default=0, help="random seed")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    x = rng.normal(size=(64, 3)).astype("float32")
    y = x @ np.array([1.0, -2.0, 0.5], dtype="float32") + 0.3
    w, b = Variable(np.zeros(3), name="w"), Variable(0.0, name="b")
    for step in range(1, args.steps + 1):
        with GradientTape() as tape:
            loss = ops.mean(ops.square(ops.matmul(x, w) + b - y))
        grad_w, grad_b = tape.gradient(loss, [w, b])
        w.assign_sub(0.1 * grad_w)
        b.assign_sub(0.1 * grad_b)
        print(f"step {step:3d}  loss {float(loss):.5f}")
    print(f"learned w={np.round(w.numpy(), 3)} b={float(b.numpy()):.3f} (true: [1, -2, 0.5], 0.3)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
