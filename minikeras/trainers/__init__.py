"""Training: the bodies of `compile`, `fit`, `evaluate`, `predict` and the steps.

`Model`'s training methods (`minikeras.models.model_training`,
`model_loops`, `model_steps`) are its public API; each hands over to a
function of the model here:

- `compiling`: `compile`'s body, and what the loops ask of a compiled model;
- `steps`: the default `train_step` / `test_step` / `predict_step` and
  `compute_loss`; `compiled_step` replays a recorded training step;
- `compile_utils`, `compile_metrics`, `compile_outputs`: losses and metrics per
  output, and their log names;
- `fit_loop`, `evaluation`, `batch_methods`: the loops over batches, with
  callbacks, and the one-batch methods;
- `data_adapters`, `array_data`: arrays, iterables and `utils.PyDataset`s,
  checked and batched;
- `training_state`: what `fit` finds once, restores, and reports;
- `interrupt`: Ctrl-C stops `fit` cleanly.
"""

from minikeras.trainers import (
    batch_methods,
    compile_utils,
    compiling,
    evaluation,
    fit_loop,
    steps,
)

__all__ = ["batch_methods", "compile_utils", "compiling", "evaluation", "fit_loop", "steps"]
