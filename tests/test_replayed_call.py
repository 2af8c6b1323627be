"""A model called under a GradientTape, recorded once and replayed as one node.

Every replayed call must give bit for bit what the eager call gives (the
replay switched off): outputs, gradients and the weights a custom training
loop trains. What cannot be replayed, or could differ, must run eagerly.
"""

import numpy as np
import pytest

import minikeras as mk
from minikeras.engine.replay import Program
from minikeras.layers import Add, Concatenate, Conv2D, Dense, Dropout, Flatten, Input
from minikeras.models import recorded_calls, replayed_call

RNG = np.random.default_rng(0)
X = RNG.normal(size=(16, 6)).astype(np.float32)
LABELS = RNG.integers(0, 3, size=16)
IMAGES = RNG.normal(size=(8, 6, 6, 2)).astype(np.float32)


def mlp():
    return mk.Sequential([Input((6,)), Dense(8, activation="relu"), Dropout(0.3), Dense(3)])


def functional():
    inputs = Input((6,))
    shared = Dense(5, activation="tanh")  # used twice: its gradients are sums
    a, b = Dense(5)(inputs), Dense(5)(inputs)
    merged = Concatenate()([Add()([shared(a), b, shared(b)]), a])
    return mk.Model(inputs, Dense(3)(merged))


def cnn():
    return mk.Sequential([Input((6, 6, 2)), Conv2D(3, 3, activation="relu"), Flatten(), Dense(3)])


def eager(monkeypatch):
    monkeypatch.setattr(replayed_call, "tape_call", lambda model, inputs, kwargs: None)
    monkeypatch.setattr(replayed_call, "inference_call", lambda model, inputs, kwargs: None)


def train(make, x, steps=5, seed=0, penalty=False, prepare=None):
    """A custom loop with Adam: the losses, outputs, gradients and final weights."""
    mk.utils.set_random_seed(seed)
    model = make()
    if prepare is not None:
        prepare(model)
    loss_fn = mk.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = mk.optimizers.Adam(0.01)
    seen = []
    for _ in range(steps):
        with mk.GradientTape() as tape:
            outputs = model(x, training=True)
            loss = loss_fn(LABELS[: len(x)], outputs)
            if penalty:  # the loss reads a weight outside the model too
                loss = loss + 0.1 * mk.ops.sum(model.trainable_weights[0] ** 2)
        grads = tape.gradient(loss, model.trainable_weights)
        optimizer.apply(grads, model.trainable_weights)
        seen.append((loss.numpy(), outputs.numpy(), [g.numpy() for g in grads]))
    return model, seen, [w.numpy() for w in model.weights]


def assert_same(first, second):
    (_, seen_a, weights_a), (_, seen_b, weights_b) = first, second
    for (loss_a, out_a, grads_a), (loss_b, out_b, grads_b) in zip(seen_a, seen_b):
        np.testing.assert_array_equal(loss_a, loss_b)
        np.testing.assert_array_equal(out_a, out_b)
        for grad_a, grad_b in zip(grads_a, grads_b):
            np.testing.assert_array_equal(grad_a, grad_b)
    for weight_a, weight_b in zip(weights_a, weights_b):
        np.testing.assert_array_equal(weight_a, weight_b)


def programs(model):
    calls = model.__dict__.get("_replayed_calls")
    return {} if calls is None else calls.programs


def assert_loop_replays_as_eager(loop, monkeypatch, kept=(Program,)):
    """Runs `loop()` (-> model, [arrays per step]) replayed, then eagerly: the same bits."""
    model, replayed = loop()
    assert [type(p) for p in programs(model).values()] == list(kept)
    eager(monkeypatch)
    for got, want in zip(replayed, loop()[1], strict=True):
        for a, b in zip(got, want, strict=True):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)
    return model


@pytest.mark.parametrize(
    "make, x", [(mlp, X), (functional, X), (cnn, IMAGES)], ids=["mlp", "functional", "cnn"]
)
def test_replayed_calls_train_bit_for_bit_as_eager_calls(make, x, monkeypatch):
    replayed = train(make, x)
    assert any(type(p) is Program for p in programs(replayed[0]).values())
    eager(monkeypatch)
    assert_same(replayed, train(make, x))


def test_a_replayed_call_is_one_node_whose_parents_are_the_weights():
    model = mlp()
    for _ in range(3):
        with mk.GradientTape() as tape:
            outputs = model(X, training=False)
    node = outputs._value._node
    assert len(node.parents) == len(model.trainable_weights)
    assert node.parents == tuple(tape._nodes[id(w)] for w in model.trainable_weights)
    assert set(programs(model)) == {(X.shape, X.dtype, False, False)}


def test_a_penalty_on_a_weight_outside_the_model_adds_up_as_eagerly(monkeypatch):
    replayed = train(mlp, X, penalty=True)
    eager(monkeypatch)
    assert_same(replayed, train(mlp, X, penalty=True))


def test_an_attribute_set_on_a_layer_records_the_call_again(monkeypatch):
    def change_rate_and_activation(model, step):
        model.layers[1].rate = 0.1 * step
        if step == 3:
            model.layers[0].activation = mk.activations.get("tanh")

    def loop(model):
        results = []
        for step in range(6):
            change_rate_and_activation(model, step)
            with mk.GradientTape() as tape:
                outputs = model(X, training=True)
                total = mk.ops.sum(outputs)
            results.append((outputs.numpy(), tape.gradient(total, model.weights)))
        return results

    mk.utils.set_random_seed(1)
    replayed = loop(mlp())
    eager(monkeypatch)
    mk.utils.set_random_seed(1)
    for (out_a, grads_a), (out_b, grads_b) in zip(replayed, loop(mlp())):
        np.testing.assert_array_equal(out_a, out_b)
        for grad_a, grad_b in zip(grads_a, grads_b):
            np.testing.assert_array_equal(grad_a.numpy(), grad_b.numpy())


def test_a_frozen_layer_is_replayed_reading_its_weights_and_gets_no_gradient(monkeypatch):
    # (its weights reach the ops as plain arrays, which each replay reads afresh)
    def freeze_first(model):
        model.layers[0].trainable = False

    replayed = train(mlp, X, prepare=freeze_first)
    assert [type(p) for p in programs(replayed[0]).values()] == [Program]
    eager(monkeypatch)
    assert_same(replayed, train(mlp, X, prepare=freeze_first))


def test_a_model_recorded_again_too_often_is_called_eagerly():
    model = mlp()
    for step in range(recorded_calls.MOST_RECORDINGS + 4):
        model.layers[1].rate = 0.01 * (step % 3)
        with mk.GradientTape():
            model(X, training=True)
    assert model._replayed_calls.reason == "recorded too often"


def test_calls_that_must_stay_eager_record_nothing():
    model = mlp()
    model(X)
    x = mk.Tensor(X)
    for _ in range(3):
        with mk.GradientTape(persistent=True):
            model(X)
        with mk.GradientTape(watch_accessed_variables=False):
            model(X)
        with mk.GradientTape() as outer, mk.GradientTape():
            model(X)
        with mk.GradientTape() as outer:
            outer.watch(x)
            with mk.GradientTape():
                total = mk.ops.sum(model(x))  # (x traced by the outer tape only)
        with mk.GradientTape():
            model(X, mask=None)
    assert programs(model) == {}
    assert outer.gradient(total, x).shape == X.shape  # the eager one


def test_an_input_of_another_float_dtype_is_cast_as_the_eager_call_casts_it(monkeypatch):
    wide = X.astype(np.float64)
    replayed = train(mlp, wide)
    assert set(programs(replayed[0])) == {(X.shape, np.dtype(np.float32), True, False)}
    eager(monkeypatch)
    assert_same(replayed, train(mlp, wide))


def test_models_that_cannot_be_replayed_say_why():
    class Net(mk.Model):
        def __init__(self):
            super().__init__()
            self.dense = Dense(2)
            self.calls = 0

        def call(self, inputs):
            self.calls += 1  # Python a replay would skip: the call stays eager
            return self.dense(inputs)

    nested = mk.Sequential([Input((6,)), Net()])
    noisy = mk.Sequential([Input((6,)), mk.layers.GaussianNoise(0.1), Dense(2)])
    alone = Net()
    for model in (nested, noisy, alone):
        for _ in range(3):
            with mk.GradientTape():
                model(X)
        assert programs(model) == {}
    assert alone.calls == 3  # each call ran it
    assert "STORE_ATTR" in alone._replayed_calls.reason
    assert "layer 'net" in nested._replayed_calls.reason
    assert "STORE_ATTR" in nested._replayed_calls.reason
    assert "GaussianNoise" in noisy._replayed_calls.reason


def test_a_variable_assigned_during_the_recording_refuses_it(monkeypatch):
    model = mlp()
    model(X)
    original = Dense.call

    def assigning_call(self, inputs):
        self.bias.assign_add(np.zeros(self.units, np.float32))
        return original(self, inputs)

    monkeypatch.setattr(Dense, "call", assigning_call)
    with mk.GradientTape():
        model(X)
    assert programs(model) == {
        (X.shape, X.dtype, None, False): "a Variable was assigned during the call"
    }


def test_two_threads_training_their_own_models_match_running_one_after_the_other():
    import threading

    expected = [train(mlp, X, seed=seed)[2] for seed in (0, 1)]
    results = {}

    def worker(seed):
        results[seed] = train(mlp, X, seed=seed)[2]

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for seed in (0, 1):
        for got, want in zip(results[seed], expected[seed]):
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("flag", [{"run_eagerly": True}, {"jit_compile": False}])
def test_a_model_compiled_for_eager_steps_is_called_eagerly_in_a_tape(flag):
    model = mlp()
    model.compile("adam", "mse", **flag)
    for _ in range(3):
        with mk.GradientTape():
            model(X)
    assert programs(model) == {}


def weighted_mean_loss():
    return mk.losses.SparseCategoricalCrossentropy(
        from_logits=True, reduction="mean_with_sample_weight"
    )


def test_fit_steps_that_run_eagerly_replay_the_model_call_and_train_alike():
    # Sample weights under the "mean_with_sample_weight" reduction keep fit's own step
    # eager (trainers.compiled_step); the model's call in it is replayed.
    histories, weights = {}, {}
    for jit_compile in ("auto", False):
        mk.utils.set_random_seed(0)
        model = mlp()
        model.compile("adam", weighted_mean_loss(), jit_compile=jit_compile)
        history = model.fit(X, LABELS, sample_weight=np.linspace(0.5, 1.5, 16), batch_size=4,
                            epochs=3, verbose=0, shuffle=False)  # fmt: skip
        histories[jit_compile], weights[jit_compile] = history.history, model.get_weights()
        if jit_compile == "auto":
            assert [type(p) for p in programs(model).values()] == [Program]
    assert histories["auto"] == histories[False]
    for got, want in zip(weights["auto"], weights[False]):
        np.testing.assert_array_equal(got, want)


def test_a_loss_added_before_a_replayed_call_is_past_as_after_an_eager_one(monkeypatch):
    def counted(model):
        seen = []
        for _ in range(4):
            model.layers[0].add_loss(mk.ops.sum(model.layers[0].kernel))
            with mk.GradientTape():
                model(X)
            seen.append(len(model.losses))
        return seen

    replayed = counted(mlp())
    eager(monkeypatch)
    assert replayed == counted(mlp()) == [0, 0, 0, 0]


def test_inputs_of_ever_new_shapes_stop_the_recordings(monkeypatch):
    # Each batch size is a new kind of input: past the limit the calls are eager and
    # the programs kept so far are let go (they would otherwise pile up, one a shape).
    def loop():
        mk.utils.set_random_seed(0)
        model = mlp()
        seen = []
        for size in range(1, recorded_calls.MOST_RECORDINGS + 8):
            with mk.GradientTape() as tape:
                outputs = model(np.resize(X, (size, 6)), training=True)
                total = mk.ops.sum(outputs * outputs)
            seen.append(
                [outputs.numpy()] + [g.numpy() for g in tape.gradient(total, model.weights)]
            )
        return model, seen

    model = assert_loop_replays_as_eager(loop, monkeypatch, kept=())
    assert model._replayed_calls.reason == "recorded too often"
    assert model._replayed_recordings == recorded_calls.MOST_RECORDINGS


def test_a_loss_added_to_a_layer_before_a_replayed_call_is_past_and_let_go(monkeypatch):
    # The eager call is a new outermost call of every layer, which forgets (and frees)
    # the Tensors given to its add_loss before it: the replayed call must too.
    def counted(model):
        layer = model.layers[0]
        seen = []
        for _ in range(5):
            with mk.GradientTape():
                layer.add_loss(mk.ops.sum(layer.kernel))
                model(X)
            seen.append((len(layer.losses), len(layer._losses), len(model.losses)))
        return seen

    replayed = counted(mlp())
    eager(monkeypatch)
    assert replayed == counted(mlp()) == [(0, 0, 0)] * 5


def test_a_float64_loss_with_a_penalty_sums_before_the_cast_as_eagerly(monkeypatch):
    # A float64 factor makes the gradient reaching the model float64: the tape sums the
    # weight's gradients (the model's and the penalty's) in float64, then casts the sum
    # to float32; the replayed node must not cast its part first.
    factor = np.random.default_rng(1).normal(size=(16, 3))

    def loop():
        mk.utils.set_random_seed(0)
        model = mlp()
        seen = []
        for _ in range(4):
            with mk.GradientTape() as tape:
                outputs = model(X, training=True)
                bias = model.trainable_weights[3]
                loss = mk.ops.sum(outputs * factor) + mk.ops.sum(bias * factor[0])
            seen.append([g.numpy() for g in tape.gradient(loss, model.trainable_weights)])
        return model, seen

    model = assert_loop_replays_as_eager(loop, monkeypatch)
    assert all(weight.dtype == np.float32 for weight in model.weights)


def test_a_replayed_model_is_freed_as_soon_as_nothing_holds_it():
    # What a model keeps for its replays must not refer back to it (a cycle would wait
    # for the garbage collector, with the weights and whatever the model holds).
    import gc
    import weakref

    model = mlp()
    for _ in range(3):
        with mk.GradientTape() as tape:
            total = mk.ops.sum(model(X, training=True))
        tape.gradient(total, model.trainable_weights)
    assert [type(p) for p in programs(model).values()] == [Program]
    held = weakref.ref(model)
    gc.disable()
    try:
        del model, tape, total
        assert held() is None
    finally:
        gc.enable()


def test_fit_called_epoch_by_epoch_keeps_its_recordings_and_trains_alike():
    # fit attaches its bookkeeping to the model (history, stop_training...), which is
    # not part of the network: it must not record the model's call again at each fit,
    # past the most recordings (all calls eager from then on).
    weights = {}
    for jit_compile in ("auto", False):
        mk.utils.set_random_seed(0)
        model = mlp()
        model.compile("adam", weighted_mean_loss(), jit_compile=jit_compile)  # (fit: eager)
        for _ in range(recorded_calls.MOST_RECORDINGS):
            model.fit(X, LABELS, sample_weight=np.linspace(0.5, 1.5, 16), batch_size=6,
                      epochs=1, verbose=0, shuffle=False)  # fmt: skip
        weights[jit_compile] = model.get_weights()
        if jit_compile == "auto":
            assert model._replayed_calls.reason is None  # batches of 6 and of 4, replayed
            assert [type(p) for p in programs(model).values()] == [Program, Program]
    for got, want in zip(weights["auto"], weights[False]):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("penalty_first", [True, False])
def test_a_penalty_on_a_shared_weight_adds_up_bit_for_bit(penalty_first, monkeypatch):
    # A weight the model reads twice gets two gradients from the model; the tape adds
    # them to the penalty's one by one, in its order: the replayed node must hand them
    # over one by one too, not summed (the sum's association would differ).
    def shared_mlp():
        inputs = Input((6,))
        shared = Dense(6, activation="tanh")
        return mk.Model(inputs, Dense(3)(shared(shared(inputs))))

    def loop():
        mk.utils.set_random_seed(0)
        model = shared_mlp()
        optimizer = mk.optimizers.Adam(0.01)
        loss_fn = mk.losses.SparseCategoricalCrossentropy(from_logits=True)
        seen = []
        for _ in range(6):
            with mk.GradientTape() as tape:
                outputs = model(X, training=True)
                data = loss_fn(LABELS, outputs)
                penalty = 0.01 * mk.ops.sum(model.trainable_weights[0] ** 2)
                loss = penalty + data if penalty_first else data + penalty
            grads = tape.gradient(loss, model.trainable_weights)
            optimizer.apply(grads, model.trainable_weights)
            seen.append([g.numpy() for g in grads])
        return model, seen

    assert_loop_replays_as_eager(loop, monkeypatch)


def test_a_traced_input_gets_its_gradient_from_the_node_as_eagerly(monkeypatch):
    # A GAN's step: the generator's output, computed on the tape, feeds the
    # discriminator; and an input watched for its own gradient (an adversarial step).
    def gan(seed=0, steps=5):
        mk.utils.set_random_seed(seed)
        generator = mk.Sequential([Input((4,)), Dense(8, activation="relu"), Dense(6)])
        critic = functional()
        optimizer = mk.optimizers.Adam(0.01)
        noise = np.random.default_rng(1).normal(size=(16, 4)).astype(np.float32)
        x = mk.Tensor(X)
        seen = []
        for _ in range(steps):
            with mk.GradientTape() as tape:
                tape.watch(x)
                fake = generator(noise, training=True)
                # (ops between the models: inner nodes above the critic's input)
                squashed = mk.ops.tanh(fake * 2.0 + 1.0)
                score = mk.ops.mean(critic(squashed)) + mk.ops.mean(critic(x) ** 2)
                score = score + mk.ops.sum(fake * fake) * 0.01  # fake's gradient also from here
            weights = generator.trainable_weights + critic.trainable_weights
            grads = tape.gradient(score, [*weights, x])
            optimizer.apply(grads[:-1], weights)
            seen.append([g.numpy() for g in grads])
        return seen, [programs(generator), programs(critic)]

    replayed, kept = gan()
    assert [p for recorded in kept for p in recorded.values()] and all(
        type(p) is Program for recorded in kept for p in recorded.values()
    )
    assert (X.shape, X.dtype, None, True) in kept[1]  # the critic on traced inputs
    eager(monkeypatch)
    expected, _ = gan()
    for got, want in zip(replayed, expected):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


def test_an_input_read_several_times_and_a_model_fed_its_own_output_match_eager(monkeypatch):
    # The traced input is read by several ops (Add and Concatenate of it with
    # itself, a shared layer on it), is differentiated itself, has a penalty
    # of its own, and the model is fed its own output (model(model(x))).
    def square():
        inputs = Input((6,))
        shared = Dense(6, activation="relu")
        doubled = Add()([inputs, inputs, shared(inputs)])
        merged = Concatenate()([doubled, shared(doubled), inputs])
        return mk.Model(inputs, Dense(6)(merged))

    def loop(steps=5):
        mk.utils.set_random_seed(0)
        model = square()
        optimizer = mk.optimizers.Adam(0.01)
        x = mk.Tensor(X)
        seen = []
        for _ in range(steps):
            with mk.GradientTape() as tape:
                tape.watch(x)
                once = model(x)
                loss = mk.ops.sum(x * x) + mk.ops.mean(model(once) ** 2) + mk.ops.sum(once)
            grads = tape.gradient(loss, [x, *model.trainable_weights])
            optimizer.apply(grads[1:], model.trainable_weights)
            seen.append([loss.numpy()] + [g.numpy() for g in grads])
        return seen, programs(model)

    replayed, kept = loop()
    assert type(kept[(X.shape, X.dtype, None, True)]) is Program
    eager(monkeypatch)
    expected, _ = loop()
    for got, want in zip(replayed, expected):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


def thrice():
    inputs = Input((6,))
    shared = Dense(6, activation="tanh")  # its weights read three times: three gradients each
    first = shared(inputs)
    second = shared(first)
    return mk.Model(inputs, Dense(3)(Add()([first, second, shared(second)])))


@pytest.mark.parametrize("seed", range(4))
def test_a_weight_read_three_times_gets_its_gradients_in_the_eager_order(seed, monkeypatch):
    # Three terms (and a penalty) make the order of the sum show in the last bits.
    replayed = train(thrice, X, steps=4, seed=seed, penalty=True)
    eager(monkeypatch)
    assert_same(replayed, train(thrice, X, steps=4, seed=seed, penalty=True))


def nested():
    base = mk.Sequential([Input((6,)), Dense(8, activation="relu"), Dropout(0.2)], name="base")
    return mk.Sequential([Input((6,)), base, functional_head()])


def functional_head():
    inputs = Input((8,))
    return mk.Model(inputs, Dense(3)(Concatenate()([Dense(4)(inputs), inputs])))


def test_models_used_as_layers_are_replayed_with_the_model_bit_for_bit(monkeypatch):
    # A base model under a new head (transfer learning): one node for the whole.
    replayed = train(nested, X)
    assert [type(p) for p in programs(replayed[0]).values()] == [Program]
    eager(monkeypatch)
    assert_same(replayed, train(nested, X))


def test_recordings_that_pay_off_do_not_count_towards_the_limit(monkeypatch):
    # A change at every epoch (a callback's, a new compile) records again, then replays.
    def loop():
        mk.utils.set_random_seed(0)
        model, seen = mlp(), []
        for epoch in range(recorded_calls.MOST_RECORDINGS + 4):
            model.layers[1].rate = 0.1 + 0.01 * epoch
            for _ in range(3):
                with mk.GradientTape() as tape:
                    total = mk.ops.sum(model(X, training=True))
                seen.append([g.numpy() for g in tape.gradient(total, model.weights)])
        return model, seen

    model = assert_loop_replays_as_eager(loop, monkeypatch)
    assert model._replayed_calls.reason is None


def test_kinds_of_input_past_the_limit_run_eagerly_and_the_first_ones_replay():
    model = mlp()
    model(X)
    for size in [*range(1, recorded_calls.MOST_RECORDINGS + 5), 1, 2]:
        for _ in range(2):  # (each kind replayed once: the recordings pay off)
            with mk.GradientTape():
                model(np.resize(X, (size, 6)))
    assert model._replayed_calls.reason is None
    assert len(programs(model)) == recorded_calls.MOST_RECORDINGS
    assert all(type(p) is Program for p in programs(model).values())


def test_attributes_set_on_another_models_layers_record_nothing_again(monkeypatch):
    # A custom layer noting something at every call (in a GAN's generator, say) must
    # not make a replayable model beside it record its call again at every step.
    class Noting(mk.layers.Layer):
        def call(self, inputs):
            self.seen = inputs.shape  # an attribute set at every call
            return inputs

    recordings = []
    record = replayed_call._record
    monkeypatch.setattr(
        replayed_call, "_record", lambda *args: recordings.append(1) or record(*args)
    )
    other, model = mk.Sequential([Input((6,)), Noting()]), mlp()
    for _ in range(6):
        with mk.GradientTape():
            model(other(X))
    assert len(recordings) == 1  # (the first call is eager; the second records)


def test_a_frozen_weight_the_tape_watches_gets_its_gradient_from_the_eager_call():
    # (saliency or Fisher information on a frozen base, on some steps only)
    def gradients(jit_compile):
        mk.utils.set_random_seed(0)
        model = mlp()
        model.layers[0].trainable = False
        model.compile(jit_compile=jit_compile)
        kernel = model.layers[0].kernel
        for step in range(3):  # (recorded at the second call, replayed from the third)
            with mk.GradientTape() as tape:
                if step == 2:
                    tape.watch(kernel)
                total = mk.ops.sum(model(X, training=True))
        return tape.gradient(total, [kernel, model.layers[2].kernel])

    replayed, eager = gradients("auto"), gradients(False)
    assert replayed[0] is not None
    for got, want in zip(replayed, eager):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_batch_normalization_in_a_custom_loop_replays_its_moving_statistics(monkeypatch):
    def bn_cnn():
        return mk.Sequential([
            Input((6, 6, 2)), Conv2D(3, 3), mk.layers.BatchNormalization(momentum=0.8),
            mk.layers.ReLU(), Flatten(), Dense(3),
        ])  # fmt: skip

    replayed = train(bn_cnn, IMAGES, steps=6)
    assert [type(p) for p in programs(replayed[0]).values()] == [Program]
    moving = replayed[0].layers[1].moving_mean.numpy()
    assert np.abs(moving).sum() > 0  # (the statistics moved at every replayed step too)
    eager(monkeypatch)
    assert_same(replayed, train(bn_cnn, IMAGES, steps=6))
