"""Soak test: a 20,000-step fit on the bundled digits, with callbacks, keeps memory flat.

Reports the peak resident memory (RSS) after step 1,000 and after step
20,000; they should differ by under 5%. Not collected by pytest:

    OPENBLAS_NUM_THREADS=1 python benchmarks/soak_fit.py [--steps 20000]
"""

import argparse
import os
import resource
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import minikeras as mk  # noqa: E402


def _rss_mib():
    """The current resident memory, from /proc (Linux), in MiB."""
    with open("/proc/self/statm") as stream:
        pages = int(stream.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


class Probe(mk.callbacks.Callback):
    """Records resident and peak memory at chosen global steps, and stops after the last."""

    def __init__(self, marks, last):
        super().__init__()
        self.marks, self.last, self.step, self.found = set(marks), last, 0, {}

    def on_train_batch_end(self, batch, logs=None):
        self.step += 1
        if self.step in self.marks:
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            self.found[self.step] = (_rss_mib(), peak)
        if self.step >= self.last:
            self.model.stop_training = True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000)
    args = parser.parse_args(argv)
    (x, y), (x_val, y_val) = mk.datasets.digits.load_data()
    x, x_val = x.astype("float32") / 16, x_val.astype("float32") / 16
    mk.utils.set_random_seed(0)
    hidden = mk.layers.Dense(64, activation="relu")
    model = mk.Sequential([mk.Input((8, 8)), mk.layers.Flatten(), hidden, mk.layers.Dense(10)])
    model.compile("adam", mk.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])  # fmt: skip
    first = min(1000, args.steps)
    probe = Probe({first, args.steps}, args.steps)
    callbacks = [probe, mk.callbacks.History(), mk.callbacks.ReduceLROnPlateau(patience=50)]
    start = time.perf_counter()
    model.fit(x, y, batch_size=32, epochs=10**6, validation_data=(x_val, y_val),
              callbacks=callbacks, verbose=0)  # fmt: skip
    seconds = time.perf_counter() - start
    (rss_a, peak_a), (rss_b, peak_b) = probe.found[first], probe.found[args.steps]
    print(f"{args.steps} steps in {seconds:.1f} s")
    print(f"step {first:>6}: RSS {rss_a:.1f} MiB, peak {peak_a:.1f} MiB")
    print(f"step {args.steps:>6}: RSS {rss_b:.1f} MiB, peak {peak_b:.1f} MiB")
    growth = (peak_b - peak_a) / peak_a
    print(f"peak growth {growth:+.2%} (target under 5%): {'met' if growth < 0.05 else 'NOT met'}")
    return 0 if growth < 0.05 else 1


if __name__ == "__main__":
    raise SystemExit(main())
