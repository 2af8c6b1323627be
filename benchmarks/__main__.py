"""`python -m benchmarks`: the whole suite, or the workloads and peers the flags select.

Threads are pinned here, from the flags, before anything imports numpy: the
thread-count variables of BLAS, OpenMP and XLA, and the CPU affinity of this
process and of the workers it starts.
"""

import argparse
import os
import sys

WORKLOADS = ("ops", "mlp", "inference", "cnn", "lstm", "accuracy", "memory")
PEERS = ("autograd", "torch", "keras-jax", "keras-torch")


def names(choices):
    def parse(text):
        if text == "none":
            return []
        chosen = [name.strip() for name in text.split(",") if name.strip()]
        unknown = [name for name in chosen if name not in choices]
        if unknown:
            raise argparse.ArgumentTypeError(
                f"unknown {', '.join(unknown)}; expected some of {', '.join(choices)} or 'none'"
            )
        return chosen

    return parse


def positive_ints(text):
    values = [int(value) for value in text.split(",")]
    if any(value < 1 for value in values):
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="minikeras against hand-written numpy, the GEMM floor and installed peers.",
    )
    parser.add_argument(
        "--workloads",
        type=names(WORKLOADS),
        default=list(WORKLOADS),
        help=f"comma-separated, of {','.join(WORKLOADS)} (default all)",
    )
    parser.add_argument(
        "--peers",
        type=names(PEERS),
        default=list(PEERS),
        help=f"comma-separated, of {','.join(PEERS)}, or 'none' (default all)",
    )
    parser.add_argument(
        "--batch-sizes",
        type=positive_ints,
        default=None,
        help="batch sizes, comma-separated (default: mlp 32,128,512, inference 1,32,128)",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=None,
        help="timed repeats of each contender (default 9; quick 5)",
    )
    parser.add_argument(
        "--warmup",
        type=int,
        default=1,
        help="untimed interleaved rounds after calibration (default 1)",
    )
    parser.add_argument(
        "--block-seconds",
        type=float,
        default=None,
        help="seconds one repeat of one contender lasts (default 0.2; quick 0.03)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="threads for BLAS, OpenMP, XLA and torch, and CPUs in the affinity mask (default 1)",
    )
    parser.add_argument(
        "--seeds",
        type=int,
        default=None,
        help="seeds of the accuracy workload (default 3; quick 1)",
    )
    parser.add_argument(
        "--epochs",
        type=int,
        default=None,
        help="epochs of the accuracy workload (default 10; quick 2)",
    )
    parser.add_argument(
        "--mnist",
        metavar="DIR",
        default=None,
        help="folder of MNIST's IDX files, for the MNIST accuracy case",
    )
    parser.add_argument(
        "--output",
        metavar="DIR",
        default=os.path.join("benchmarks", "results"),
        help="where benchmarks.json and benchmarks.png go (default benchmarks/results)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="the smallest sizes and fewest repeats: under a minute"
    )
    args = parser.parse_args(argv)
    for flag in ("repeats", "seeds", "epochs", "threads"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            parser.error(f"--{flag} must be a positive integer, got {value}")
    if args.warmup < 0:
        parser.error(f"--warmup must be non-negative, got {args.warmup}")
    args.argv = list(argv)
    return args


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    from benchmarks.common import pin_cpus, pin_threads

    if not pin_threads(args.threads):
        print("warning: numpy was imported before the threads were pinned", file=sys.stderr)
    pin_cpus(args.threads)  # inherited by the peers' worker processes
    from benchmarks import suite  # imports numpy: only now

    return suite.main(args)


if __name__ == "__main__":
    raise SystemExit(main())
