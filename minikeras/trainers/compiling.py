"""`compile`'s body, and what the loops ask of a compiled model.

`Model.compile` (in `minikeras.models.model_training`) hands over to
`compile_model`, which checks the losses and metrics it is given before it
sets anything. `build_compiled` resolves them per output once the outputs
are known; `needs_y` says whether the data must hold targets.
"""

from minikeras import optimizers as optimizers_module
from minikeras.engine.variable import TrackingGeneration
from minikeras.models.model_steps import ModelSteps
from minikeras.trainers.compile_metrics import CompileMetrics
from minikeras.trainers.compile_utils import CompileLoss, LossTracker

__all__ = ["build_compiled", "compile_model", "needs_y"]


def compile_model(
    model,
    optimizer="rmsprop",
    loss=None,
    loss_weights=None,
    metrics=None,
    weighted_metrics=None,
    run_eagerly=False,
    steps_per_execution=1,
    jit_compile="auto",
    auto_scale_loss=True,
    report_unchanged=True,
):
    """`Model.compile`'s body (the method's docstring documents it)."""
    if not isinstance(report_unchanged, bool):
        raise TypeError(
            f"compile: report_unchanged must be True or False, got {report_unchanged!r:.60}"
        )
    compile_loss = CompileLoss(loss, loss_weights)  # checks before anything is set
    compile_metrics = CompileMetrics(metrics, weighted_metrics, loss)
    optimizer = optimizers_module.get(optimizer)
    if (
        auto_scale_loss
        and model.dtype_policy.name == "mixed_float16"
        and optimizer is not None
        and not isinstance(optimizer, optimizers_module.LossScaleOptimizer)
    ):
        optimizer = optimizers_module.LossScaleOptimizer(optimizer, name="loss_scale_optimizer")
    model.optimizer = optimizer
    model.loss = compile_loss.single if compile_loss.single is not None else loss
    model._loss_identifier = loss
    model.loss_weights = loss_weights
    model._compile_loss = compile_loss if loss is not None else None
    model._compile_metrics = compile_metrics
    model._loss_tracker = LossTracker("loss")
    model.run_eagerly, model.jit_compile = run_eagerly, jit_compile
    model.steps_per_execution = steps_per_execution
    model.report_unchanged = report_unchanged
    # What compile was given, as Keras keeps it for get_compile_config.
    model._compile_arguments = dict(
        loss=loss, loss_weights=loss_weights, metrics=metrics,
        weighted_metrics=weighted_metrics, run_eagerly=run_eagerly,
        steps_per_execution=steps_per_execution, jit_compile=jit_compile,
    )  # fmt: skip
    model.compiled = True
    model.stop_training = False
    # What compile sets is not tracked, but a compiled step recorded with the old
    # loss must not be found again under a reused id: start a new generation.
    TrackingGeneration.bump()


def build_compiled(model):
    """Resolves the losses and metrics per output before the first step, when the
    outputs are known (a functional or Sequential model), so that a mismatch is an
    error before any weight changes."""
    if not model.compiled or getattr(model, "_inputs", None) is None:
        return
    outputs = model._outputs
    if model._compile_loss is not None and model._compile_loss.names is None:
        model._compile_loss.build(model, outputs)
    if model._compile_metrics.needs_build(outputs):
        model._compile_metrics.build(model, outputs)


def needs_y(model):
    """Whether data must hold targets: a compiled loss read by the default steps."""
    return model._compile_loss is not None and type(model).train_step is ModelSteps.train_step
