"""Architectures built the same way in Keras 3 and in minikeras, to compare weight orders.

Each builder takes the framework module `lib` (`keras` or `minikeras`) and returns a
built model; the code is the same for both, as a user would write it. The
custom layers follow patterns Keras users write: sub-layers made in
`__init__` in one order and called in another, own weights beside
sub-layers, own weights made in `build` after the sub-layers are built,
BatchNormalization deep inside, the keras-io translation Transformer.
"""

import numpy as np

__all__ = ["ARCHITECTURES", "sample_inputs"]


def dense_stack(lib):
    return lib.Sequential(
        [
            lib.Input((5,)),
            lib.layers.Dense(4, activation="relu"),
            lib.layers.Dense(3),
            lib.layers.Dense(2),
        ]
    )


def _custom_layers(lib):
    class Block(lib.layers.Layer):
        """Sub-layers made in one order and called in the other; an own weight made in
        build after them; a non-trainable own weight made before a trainable one."""

        def __init__(self, units, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.second = lib.layers.Dense(units, name="second")
            self.first = lib.layers.Dense(units, name="first")
            self.norm = lib.layers.BatchNormalization(name="norm")

        def build(self, input_shape):
            self.first.build(input_shape)
            self.second.build((*input_shape[:-1], self.units))
            self.norm.build((*input_shape[:-1], self.units))
            self.count = self.add_weight(
                shape=(), initializer="zeros", trainable=False, name="count"
            )
            self.scale = self.add_weight(shape=(self.units,), initializer="ones", name="scale")

        def call(self, inputs, training=None):
            hidden = self.second(self.first(inputs))
            return self.norm(hidden, training=training) * self.scale

    class Outer(lib.layers.Layer):
        """An own weight made in __init__, then two Blocks in a list, then a Dense."""

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.offset = self.add_weight(shape=(3,), initializer="zeros", name="offset")
            self.blocks = [Block(3, name="block_a"), Block(3, name="block_b")]
            self.head = lib.layers.Dense(3, name="head")

        def build(self, input_shape):
            for block in self.blocks:
                block.build(input_shape[:-1] + (3,))
            self.head.build(input_shape)

        def call(self, inputs, training=None):
            hidden = self.head(inputs) + self.offset
            for block in self.blocks:
                hidden = block(hidden, training=training)
            return hidden

    return Block, Outer


def nested_custom(lib):
    _, Outer = _custom_layers(lib)
    inputs = lib.Input((3,))
    return lib.Model(inputs, Outer(name="outer")(inputs))


def frozen_inside(lib):
    Block, _ = _custom_layers(lib)
    inputs = lib.Input((3,))
    block = Block(3, name="block")
    outputs = lib.layers.Dense(2)(block(inputs))
    model = lib.Model(inputs, outputs)
    block.first.trainable = False
    return model


def bidirectional_lstm(lib):
    return lib.Sequential(
        [
            lib.Input((6, 4)),
            lib.layers.Bidirectional(lib.layers.LSTM(3, return_sequences=True)),
            lib.layers.Bidirectional(lib.layers.GRU(2)),
            lib.layers.Dense(1),
        ]
    )


def attention(lib):
    query, value = lib.Input((5, 4)), lib.Input((7, 6))
    attended = lib.layers.MultiHeadAttention(num_heads=2, key_dim=3)(query, value)
    outputs = lib.layers.LayerNormalization()(lib.layers.Dense(4)(attended) + query)
    return lib.Model([query, value], outputs)


def _translation_layers(lib):
    """The keras-io English-to-Spanish translation Transformer's custom layers."""
    ops = lib.ops

    class TransformerEncoder(lib.layers.Layer):
        def __init__(self, embed_dim, dense_dim, num_heads, **kwargs):
            super().__init__(**kwargs)
            self.embed_dim, self.dense_dim, self.num_heads = embed_dim, dense_dim, num_heads
            self.attention = lib.layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
            self.dense_proj = lib.Sequential(
                [lib.layers.Dense(dense_dim, activation="relu"), lib.layers.Dense(embed_dim)]
            )
            self.layernorm_1 = lib.layers.LayerNormalization()
            self.layernorm_2 = lib.layers.LayerNormalization()
            self.supports_masking = True

        def call(self, inputs):
            attention_output = self.attention(query=inputs, value=inputs, key=inputs)
            proj_input = self.layernorm_1(inputs + attention_output)
            return self.layernorm_2(proj_input + self.dense_proj(proj_input))

    class PositionalEmbedding(lib.layers.Layer):
        def __init__(self, sequence_length, vocab_size, embed_dim, **kwargs):
            super().__init__(**kwargs)
            self.token_embeddings = lib.layers.Embedding(vocab_size, embed_dim)
            self.position_embeddings = lib.layers.Embedding(sequence_length, embed_dim)
            self.sequence_length = sequence_length

        def call(self, inputs):
            positions = ops.arange(0, ops.shape(inputs)[-1], 1)
            return self.token_embeddings(inputs) + self.position_embeddings(positions)

    class TransformerDecoder(lib.layers.Layer):
        def __init__(self, embed_dim, latent_dim, num_heads, **kwargs):
            super().__init__(**kwargs)
            self.attention_1 = lib.layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
            self.attention_2 = lib.layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
            self.dense_proj = lib.Sequential(
                [lib.layers.Dense(latent_dim, activation="relu"), lib.layers.Dense(embed_dim)]
            )
            self.layernorm_1 = lib.layers.LayerNormalization()
            self.layernorm_2 = lib.layers.LayerNormalization()
            self.layernorm_3 = lib.layers.LayerNormalization()

        def call(self, inputs, encoder_outputs):
            attention_output_1 = self.attention_1(
                query=inputs, value=inputs, key=inputs, use_causal_mask=True
            )
            out_1 = self.layernorm_1(inputs + attention_output_1)
            attention_output_2 = self.attention_2(
                query=out_1, value=encoder_outputs, key=encoder_outputs
            )
            out_2 = self.layernorm_2(out_1 + attention_output_2)
            return self.layernorm_3(out_2 + self.dense_proj(out_2))

    return TransformerEncoder, PositionalEmbedding, TransformerDecoder


def translation_transformer(lib):
    encoder_layer, embedding_layer, decoder_layer = _translation_layers(lib)
    sequence_length, vocab_size, embed_dim, latent_dim, num_heads = 6, 11, 8, 16, 2
    encoder_inputs = lib.Input(shape=(sequence_length,), dtype="int32", name="encoder_inputs")
    x = embedding_layer(sequence_length, vocab_size, embed_dim)(encoder_inputs)
    encoder_outputs = encoder_layer(embed_dim, latent_dim, num_heads)(x)
    decoder_inputs = lib.Input(shape=(sequence_length,), dtype="int32", name="decoder_inputs")
    y = embedding_layer(sequence_length, vocab_size, embed_dim)(decoder_inputs)
    y = decoder_layer(embed_dim, latent_dim, num_heads)(y, encoder_outputs)
    outputs = lib.layers.Dense(vocab_size, activation="softmax")(y)
    return lib.Model([encoder_inputs, decoder_inputs], outputs)


def shared_layer(lib):
    left, right = lib.Input((4,)), lib.Input((4,))
    shared = lib.layers.Dense(3)
    merged = lib.layers.Concatenate()([shared(left), shared(right)])
    return lib.Model([left, right], lib.layers.Dense(1)(merged))


def sequential_in_functional(lib):
    inner = lib.Sequential([lib.Input((4,)), lib.layers.Dense(3), lib.layers.BatchNormalization()])
    inputs = lib.Input((4,))
    hidden = lib.layers.Dense(4)(inputs)
    return lib.Model(inputs, lib.layers.Dense(2)(inner(hidden)))


def branches_built_out_of_order(lib):
    """A short branch built first, a deep one second: Keras lists layers by depth."""
    a, b = lib.Input((2,)), lib.Input((3,))
    short = lib.layers.Dense(4, name="short")(a)
    deep = lib.layers.Dense(4, name="deep_2")(lib.layers.Dense(5, name="deep_1")(b))
    added = lib.layers.Add()([short, deep])
    return lib.Model(
        [a, b], lib.layers.Dense(1, name="head")(lib.layers.BatchNormalization()(added))
    )


def subclassed_model(lib):
    class Net(lib.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.out = lib.layers.Dense(2)
            self.hidden = lib.layers.Dense(5)
            self.norm = lib.layers.BatchNormalization()

        def call(self, inputs, training=None):
            return self.out(self.norm(self.hidden(inputs), training=training))

    model = Net()
    model(np.zeros((2, 3), "float32"))
    return model


def conv_bn(lib):
    return lib.Sequential(
        [
            lib.Input((8, 8, 2)),
            lib.layers.Conv2D(3, 3),
            lib.layers.BatchNormalization(),
            lib.layers.DepthwiseConv2D(3),
            lib.layers.GlobalAveragePooling2D(),
            lib.layers.Dense(2),
        ]
    )


ARCHITECTURES = {
    "dense_stack": dense_stack,
    "nested_custom": nested_custom,
    "frozen_inside": frozen_inside,
    "bidirectional_lstm": bidirectional_lstm,
    "attention": attention,
    "translation_transformer": translation_transformer,
    "shared_layer": shared_layer,
    "sequential_in_functional": sequential_in_functional,
    "branches_built_out_of_order": branches_built_out_of_order,
    "subclassed_model": subclassed_model,
    "conv_bn": conv_bn,
}


def sample_inputs(model, seed=0):
    """Random inputs for `model` (functional or built subclassed), float32 or int32 tokens."""
    rng = np.random.default_rng(seed)
    inputs = getattr(model, "inputs", None)
    if not inputs:
        return rng.normal(size=(2, 3)).astype("float32")
    arrays = []
    for tensor in inputs:
        shape = (2, *tensor.shape[1:])
        if "int" in str(tensor.dtype):
            arrays.append(rng.integers(0, 6, size=shape).astype("int32"))
        else:
            arrays.append(rng.normal(size=shape).astype("float32"))
    return arrays if len(arrays) > 1 else arrays[0]
