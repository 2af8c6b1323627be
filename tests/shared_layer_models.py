"""Models in which one layer (or model) is held by several models of the tree, built
with minikeras or Keras alike (`tests/test_saving_graph_sharing.py`,
`tests/test_keras_interop_models.py`)."""

__all__ = ["SHARED_KINDS", "shared_across_models"]

SHARED_KINDS = [
    "model_direct_and_nested",
    "nested_first",
    "sequential_direct_and_nested",
    "layer_in_inner_and_direct",
    "layer_in_two_models",
    "model_in_two_models",
]


def shared_across_models(api, kind):
    """A model in which one layer (or model) is held by two models of its tree; `api` is
    minikeras or Keras. Returns the model and the paths of `get_layer` names that reach
    the shared one from the top."""
    shared = api.layers.Dense(4, name="shared")
    x = api.Input((4,), name="x")

    def model(name, inner, width=4):
        inputs = api.Input((4,), name=f"{name}_in")
        return api.Model(
            inputs, api.layers.Dense(width, name=f"{name}_d")(inner(inputs)), name=name
        )

    def wrap(layer, name):  # a model holding just that layer
        inputs = api.Input((4,), name=f"{name}_in")
        return api.Model(inputs, layer(inputs), name=name)

    if kind in ("model_direct_and_nested", "nested_first"):
        inner = wrap(shared, "inner")
        middle = model("middle", inner)
        if kind == "nested_first":  # (the nested use comes first in the file)
            pre = api.layers.Dense(4, name="pre")(x)
            return api.Model(x, api.layers.Add()([middle(x), inner(pre)]), name="outer"), [
                ["inner"], ["middle", "inner"]]  # fmt: skip
        return api.Model(x, api.layers.Add()([inner(x), middle(x)]), name="outer"), [
            ["inner"], ["middle", "inner"]]  # fmt: skip
    if kind == "sequential_direct_and_nested":
        inner = api.Sequential([api.Input((4,)), shared], name="inner")
        middle = model("middle", inner)
        return api.Model(x, api.layers.Add()([inner(x), middle(x)]), name="outer"), [
            ["inner"], ["middle", "inner"]]  # fmt: skip
    if kind == "layer_in_inner_and_direct":
        inner = wrap(shared, "inner")
        return api.Model(x, api.layers.Add()([inner(x), shared(x)]), name="outer"), [
            ["shared"], ["inner", "shared"]]  # fmt: skip
    if kind == "layer_in_two_models":
        first, second = wrap(shared, "first"), model("second", shared)
        return api.Model(x, api.layers.Add()([first(x), second(x)]), name="outer"), [
            ["first", "shared"], ["second", "shared"]]  # fmt: skip
    inner = wrap(shared, "inner")
    first, second = model("first", inner), model("second", inner)
    return api.Model(x, api.layers.Add()([first(x), second(x)]), name="outer"), [
        ["first", "inner"], ["second", "inner"]]  # fmt: skip
