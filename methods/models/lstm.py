"""Two-layer character LSTM (LEAF Shakespeare) as a width-sliceable family."""
from __future__ import annotations

from collections.abc import Mapping

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from methods.models.slicing import Axis, SliceableFamily, default_init_
from methods.models.stacked import StackedModel

# fedclaims behaviour version: 1


class CharLSTM(nn.Module):
    """Embedding -> nn.LSTM -> Linear on the last time step: logits of the next character."""

    def __init__(self, vocab_size: int, embed_dim: int, hidden: int, num_layers: int) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim)
        self.lstm = nn.LSTM(embed_dim, hidden, num_layers, batch_first=True)
        self.head = nn.Linear(hidden, vocab_size)

    def forward(self, x: Tensor) -> Tensor:
        """x: int64 [B, T] -> logits [B, vocab]."""
        out, _ = self.lstm(self.embedding(x))
        return self.head(out[:, -1])

    def stepwise_forward(self, x: Tensor) -> Tensor:
        """``forward`` unrolled in time with F.linear cell arithmetic (countable by FlopCounterMode)."""
        seq = self.embedding(x)
        batch, steps = x.shape
        hidden = self.lstm.hidden_size
        for layer in range(self.lstm.num_layers):
            w_ih = getattr(self.lstm, f"weight_ih_l{layer}")
            w_hh = getattr(self.lstm, f"weight_hh_l{layer}")
            b_ih = getattr(self.lstm, f"bias_ih_l{layer}")
            b_hh = getattr(self.lstm, f"bias_hh_l{layer}")
            h = seq.new_zeros(batch, hidden)
            c = seq.new_zeros(batch, hidden)
            outputs = []
            for t in range(steps):
                gates = F.linear(seq[:, t], w_ih, b_ih) + F.linear(h, w_hh, b_hh)
                i, f, g, o = gates.chunk(4, dim=1)  # PyTorch's gate order
                c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
                h = torch.sigmoid(o) * torch.tanh(c)
                outputs.append(h)
            seq = torch.stack(outputs, dim=1)
        return self.head(seq[:, -1])


class CharLSTMFamily(SliceableFamily):
    """Width-sliceable char LSTM; groups "layer0".."layerL-1" are each layer's hidden units.

    Hidden units are sliced inside each of the four gate blocks; the embedding and the
    output bias are shared in full, the output layer's input columns are sliced. All
    layers share one nn.LSTM, so every layer must keep the same number of units.
    """

    output_layer = ("head.weight", "head.bias")

    def __init__(self, vocab_size: int = 95, embed_dim: int = 8, hidden: int = 256,
                 num_layers: int = 2) -> None:
        self.vocab_size = vocab_size
        self.embed_dim = embed_dim
        self.hidden = hidden
        self.num_layers = num_layers
        self.groups = {f"layer{k}": hidden for k in range(num_layers)}

    def build(self, sizes: Mapping[str, int] | None = None, *,
              generator: torch.Generator | None = None) -> nn.Module:
        model = CharLSTM(self.vocab_size, self.embed_dim, self._units(sizes), self.num_layers)
        if generator is not None:
            default_init_(model, generator)
        return model

    def stacked(self, sizes: Mapping[str, int]) -> StackedCharLSTM:
        self._units(sizes)
        return StackedCharLSTM(self.num_layers)

    def _units(self, sizes: Mapping[str, int] | None) -> int:
        """The hidden units every layer keeps."""
        widths = set(self.check_sizes(sizes).values())
        if len(widths) != 1:
            raise ValueError(f"all LSTM layers must keep the same number of units, got {sizes}")
        return widths.pop()

    def param_axes(self) -> dict[str, tuple[Axis | None, ...]]:
        axes: dict[str, tuple[Axis | None, ...]] = {"embedding.weight": (None, None)}
        for k in range(self.num_layers):
            gates = Axis(f"layer{k}", blocks=4)
            below = Axis(f"layer{k - 1}") if k > 0 else None
            axes[f"lstm.weight_ih_l{k}"] = (gates, below)
            axes[f"lstm.weight_hh_l{k}"] = (gates, Axis(f"layer{k}"))
            axes[f"lstm.bias_ih_l{k}"] = (gates,)
            axes[f"lstm.bias_hh_l{k}"] = (gates,)
        axes["head.weight"] = (None, Axis(f"layer{self.num_layers - 1}"))
        axes["head.bias"] = (None,)
        return axes


class StackedCharLSTM(StackedModel):
    """Same-size char LSTMs trained together: each client's sequences go through the fused
    kernel nn.LSTM calls (oneDNN on CPU) with its own weights, one client at a time, and the
    clients share the optimizer step. (Recurrences written as batched matrix products over the
    clients measured slower than the fused kernel on a 2-core CPU.)
    """

    def __init__(self, num_layers: int) -> None:
        self.num_layers = num_layers

    def client_logits(self, params: Mapping[str, Tensor], x: Tensor) -> Tensor:
        """``CharLSTM.forward`` with ``params``: the same call nn.LSTM makes, zero initial state."""
        sequence = F.embedding(x, params["embedding.weight"])
        weights = [params[f"lstm.{kind}_l{k}"] for k in range(self.num_layers)
                   for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        hidden = params["lstm.weight_hh_l0"].shape[1]
        zeros = sequence.new_zeros(self.num_layers, len(x), hidden)
        out = torch.lstm(sequence, (zeros, zeros), weights, True, self.num_layers, 0.0, True,
                         False, True)[0]
        return F.linear(out[:, -1], params["head.weight"], params["head.bias"])
