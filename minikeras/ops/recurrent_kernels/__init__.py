"""The fused recurrent loops: each cell's whole-sequence forward pass, and its BPTT below it.

Plain numpy, called by the primitives of `minikeras.ops.recurrent`. Each
forward function runs every time step and returns what its backward function
needs; the backward function walks the steps in reverse (backpropagation
through time) and returns the gradients of the gate pre-activations, from
which one matrix product each gives the kernel, bias and input gradients.

Conventions:
- Arrays are time-major, `(time, batch, features)`, in processing order
  (reversed when `go_backwards`): every step reads contiguous rows.
- Gate layouts are Keras's, so weights are interchangeable with Keras:
  LSTM `i, f, c, o` in `(input_dim, 4 * units)`; GRU `z, r, h` in
  `(input_dim, 3 * units)`, with a `(2, 3 * units)` bias (input, recurrent)
  when `reset_after`.
- `keep` is the mask, `(time, batch, 1)` booleans or None: a masked step
  (False) keeps the previous state, so its gradient passes straight through.
- All gate products of a step are one matrix product, and the input
  projection of every step is one product before the loop.

One module per cell (`simple_rnn`, `lstm`, `gru`); the pieces every cell
shares (in-place activations, the time-major layout, the input projection and
its gradient) are in `ops.recurrent_layout`.
"""

from minikeras.ops.recurrent_kernels.gru import gru_backward, gru_forward
from minikeras.ops.recurrent_kernels.lstm import lstm_backward, lstm_forward
from minikeras.ops.recurrent_kernels.simple_rnn import simple_rnn_backward, simple_rnn_forward

__all__ = [
    "gru_backward",
    "gru_forward",
    "lstm_backward",
    "lstm_forward",
    "simple_rnn_backward",
    "simple_rnn_forward",
]
