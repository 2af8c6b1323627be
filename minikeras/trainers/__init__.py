"""Training: `compile`, `fit`, `evaluate`, `predict` and the steps they call.

- `trainer`: `Trainer`, mixed into `Model`: `compile` and the one-batch methods;
- `steps`: the public, overridable `train_step` / `test_step` / `predict_step`,
  `compute_loss`, `compute_metrics`, `metrics`, `reset_metrics`;
- `compile_utils`, `compile_metrics`, `compile_outputs`: losses and metrics per
  output, and their log names;
- `fit_loop`, `evaluation`: the loops over batches, with callbacks;
- `data_adapters`: arrays, iterables and `utils.PyDataset`s, checked and batched;
- `training_state`: what `fit` finds once, restores, and reports;
- `interrupt`: Ctrl-C stops `fit` cleanly.
"""

from minikeras.trainers import compile_utils
from minikeras.trainers.trainer import Trainer

__all__ = ["Trainer", "compile_utils"]
