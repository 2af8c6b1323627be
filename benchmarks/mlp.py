"""Workload: one training step of an MLP with Adam, minikeras against numpy and the peers.

784-256-128-10 and 784-512-512-10 (relu, relu, linear), float32, batches of
32, 128 and 512: forward, sparse softmax cross-entropy from logits averaged
over the batch, the gradients, and Adam (learning rate 1e-3).

minikeras runs it as a user writes a custom training step: a `Sequential`
of `Dense` layers, the loss object and the optimizer, `GradientTape`. The
same model through `train_on_batch` (what `fit` runs per batch, with its
input checks; its step compiled as by default, and eager with
`jit_compile=False`) is a second row, and the custom step on a subclassed `Model`
holding the three `Dense` layers as attributes a third. Before timing, minikeras and numpy take one
step from the same weights and must agree on the loss and the updated weights.
"""

from benchmarks import problems
from benchmarks.reference import Adam, NumpyMLP, assert_same, mlp_floor

ARCHITECTURES = {"784-256-128-10": (784, 256, 128, 10), "784-512-512-10": (784, 512, 512, 10)}
BATCH_SIZES = (32, 128, 512)
TARGET = ("784-256-128-10", 128, 1.15)  # architecture, batch, minikeras / numpy at most

CONTENDERS = {
    "gemm floor": "benchmarks.mlp:FloorStep",
    "numpy": "benchmarks.mlp:NumpyStep",
    "minikeras": "benchmarks.mlp:MinikerasStep",
    "minikeras train_on_batch": "benchmarks.mlp:MinikerasTrainOnBatch",
    "minikeras train_on_batch eager": "benchmarks.mlp:MinikerasEagerTrainOnBatch",
    "minikeras subclassed Model": "benchmarks.mlp:MinikerasSubclassedStep",
    "autograd": "benchmarks.peer_autograd:MLPStep",
    "torch": "benchmarks.peer_torch:MLPStep",
    "keras-jax": "benchmarks.peer_keras:MLPStep",
    "keras-torch": "benchmarks.peer_keras:MLPStep",
}


class NumpyStep:
    """The step by hand: `reference.NumpyMLP` and Keras's Adam in place."""

    def __init__(self, layers, batch, seed=0):
        batches, weights = problems.mlp_problem(layers, batch, seed)
        self.batches = problems.BatchCycle(batches)
        self.mlp = NumpyMLP(weights)
        self.optimizer = Adam(self.mlp.params, problems.LEARNING_RATE)
        self.first_loss = float(self.mlp.forward(*batches[0])[0])

    def step(self, x, labels):
        loss, grads = self.mlp.forward_backward(x, labels)
        self.optimizer.apply(grads)
        return loss

    def run(self, steps):
        return self.batches.time(self.step, steps)


class FloorStep:
    """The step's matrix products alone (the floor), on the first batch's shapes."""

    def __init__(self, layers, batch, seed=0):
        batches, weights = problems.mlp_problem(layers, batch, seed)
        self.floor = mlp_floor(weights, batches[0][0])
        self.first_loss = None
        self.flops = self.floor.flops

    def run(self, steps):
        return self.floor.run(steps)


def minikeras_model(weights):
    from minikeras import Sequential, layers

    sizes = [weights[0].shape[0]] + [kernel.shape[1] for kernel in weights[0::2]]
    model = Sequential(
        [
            layers.Input((sizes[0],)),
            *[layers.Dense(units, activation="relu") for units in sizes[1:-1]],
            layers.Dense(sizes[-1]),
        ]
    )
    model.set_weights(weights)
    return model


class MinikerasStep:
    """A custom training step: `GradientTape`, the loss object, `Adam.apply`."""

    def __init__(self, layers, batch, seed=0):
        from minikeras import losses, optimizers

        batches, weights = problems.mlp_problem(layers, batch, seed)
        self.batches = problems.BatchCycle(batches)
        self.model = minikeras_model(weights)
        self.loss = losses.SparseCategoricalCrossentropy(from_logits=True)
        self.optimizer = optimizers.Adam(learning_rate=problems.LEARNING_RATE)
        self.variables = self.model.trainable_weights
        x0, y0 = batches[0]
        self.first_loss = float(self.loss(y0, self.model(x0)))

    def step(self, x, labels):
        from minikeras import GradientTape

        with GradientTape() as tape:
            loss = self.loss(labels, self.model(x, training=True))
        self.optimizer.apply(tape.gradient(loss, self.variables), self.variables)
        return loss

    def run(self, steps):
        return self.batches.time(self.step, steps)


class MinikerasTrainOnBatch(MinikerasStep):
    """The same model compiled, stepped by `train_on_batch` (fit's step and its checks)."""

    def __init__(self, layers, batch, seed=0):
        super().__init__(layers, batch, seed)
        self.model.compile(optimizer=self.optimizer, loss=self.loss)

    def step(self, x, labels):
        return self.model.train_on_batch(x, labels)


class MinikerasEagerTrainOnBatch(MinikerasStep):
    """`train_on_batch` with `jit_compile=False`: every step eager, nothing replayed."""

    def __init__(self, layers, batch, seed=0):
        super().__init__(layers, batch, seed)
        self.model.compile(optimizer=self.optimizer, loss=self.loss, jit_compile=False)

    def step(self, x, labels):
        return self.model.train_on_batch(x, labels)


def subclassed_model(weights):
    """The MLP as a subclassed `Model` holding its three `Dense` layers as attributes."""
    from minikeras import Model, layers

    class MLP(Model):
        def __init__(self, units):
            super().__init__()
            self.hidden_1 = layers.Dense(units[0], activation="relu")
            self.hidden_2 = layers.Dense(units[1], activation="relu")
            self.logits = layers.Dense(units[2])

        def call(self, inputs):
            return self.logits(self.hidden_2(self.hidden_1(inputs)))

    units = [kernel.shape[1] for kernel in weights[0::2]]
    if len(units) != 3:
        raise ValueError(f"the subclassed MLP has 3 Dense layers, got {len(units)} kernels")
    model = MLP(units)
    model.build((None, weights[0].shape[0]))
    model.set_weights(weights)
    return model


class MinikerasSubclassedStep(MinikerasStep):
    """The custom step of `MinikerasStep` on a subclassed `Model` holding 3 `Dense` layers."""

    def __init__(self, layers, batch, seed=0):
        from minikeras import losses, optimizers

        batches, weights = problems.mlp_problem(layers, batch, seed)
        self.batches = problems.BatchCycle(batches)
        self.model = subclassed_model(weights)
        self.loss = losses.SparseCategoricalCrossentropy(from_logits=True)
        self.optimizer = optimizers.Adam(learning_rate=problems.LEARNING_RATE)
        self.variables = self.model.trainable_weights
        x0, y0 = batches[0]
        self.first_loss = float(self.loss(y0, self.model(x0)))


def check_minikeras_matches_numpy(layers, batch):
    """One step from the same weights: same loss, same weights after Adam (rtol 1e-4)."""
    ours, reference = MinikerasStep(layers, batch), NumpyStep(layers, batch)
    batch_0 = ours.batches.batches[0]
    loss = ours.step(*batch_0)
    reference_loss = reference.step(*batch_0)
    pairs = [("loss", loss.numpy(), reference_loss)]
    for index, (variable, param) in enumerate(zip(ours.variables, reference.mlp.params)):
        pairs.append((f"weight {index} after Adam", variable.numpy(), param))
    assert_same(pairs, rtol=1e-4, atol_scale=1e-6, what="minikeras vs numpy:")
    return {"loss": float(reference_loss), "same_loss_and_update": True}


def run(suite):
    """Times every (architecture, batch) case the suite's flags select."""
    architectures = ["784-256-128-10"] if suite.quick else list(ARCHITECTURES)
    batch_sizes = suite.batch_sizes or ([128] if suite.quick else list(BATCH_SIZES))
    cases = []
    for name in architectures:
        layers = ARCHITECTURES[name]
        for batch in batch_sizes:
            config = {"layers": list(layers), "batch": batch}
            target = TARGET[2] if (name, batch) == TARGET[:2] else None
            cases.append(
                suite.time_case(
                    f"{name}, batch {batch}",
                    config,
                    CONTENDERS,
                    targets={"minikeras": target} if target else {},
                    check=lambda layers=layers, batch=batch: check_minikeras_matches_numpy(
                        layers, batch
                    ),
                )
            )
    return {
        "title": "MLP training step with Adam, float32",
        "unit": "µs per step",
        "cases": cases,
    }
