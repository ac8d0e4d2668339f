"""Export the real model that `exports.residual_mlp` imitates, with torch (not run by CI).

    python benchmarks/torch_residual_mlp.py OUT.onnx [--blocks 3000] [--width 16]

A stack of residual blocks of tiny operators, exported by ``torch.onnx.export`` with the
TorchScript exporter at opset 17: what a user's small MLP, normalised by hand, looks
like once exported.  Each block is 25 nodes -- LayerNormalization, two Linear layers
(MatMul + Add), GELU written out with erf, an RMS normalisation written out (Pow,
ReduceMean, Add, Sqrt, Div), a learned scale and shift, a residual scaled by 0.5 -- of
which 6 are ``Constant`` scalars, and 8 initializers.  `exports.py` builds the same graph
without torch; ``python benchmarks/exports.py compare REAL.onnx GENERATED.onnx`` says how
close the two are (op histogram, name lengths, bytes per node).  Needs torch and onnx:
``pip install torch onnx``.
"""

from __future__ import annotations

import argparse
import math


def main() -> None:
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self, d: int):
            super().__init__()
            self.ln = nn.LayerNorm(d)
            self.fc1 = nn.Linear(d, 2 * d)
            self.fc2 = nn.Linear(2 * d, d)
            self.scale = nn.Parameter(torch.ones(d))
            self.shift = nn.Parameter(torch.zeros(d))

        def forward(self, x):
            h = self.fc1(self.ln(x))
            h = h * 0.5 * (1.0 + torch.erf(h / math.sqrt(2.0)))
            h = self.fc2(h)
            h = h / torch.sqrt(h.pow(2.0).mean(-1, keepdim=True) + 1e-6)
            h = h * self.scale + self.shift
            return x + h * 0.5

    class Model(nn.Module):
        def __init__(self, blocks: int, d: int):
            super().__init__()
            self.blocks = nn.ModuleList(Block(d) for _ in range(blocks))

        def forward(self, x):
            for block in self.blocks:
                x = block(x)
            return x

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--blocks", type=int, default=3000)
    p.add_argument("--width", type=int, default=16)
    args = p.parse_args()
    torch.manual_seed(0)
    model = Model(args.blocks, args.width).eval()
    with torch.no_grad():  # distinct values: the exporter shares equal initializers through Identity nodes
        for parameter in model.parameters():
            parameter.normal_(0.0, 0.02)
    x = torch.randn(2, 4, args.width)
    torch.onnx.export(model, (x,), args.out, opset_version=17, dynamo=False, input_names=["x"],
                      output_names=["y"], dynamic_axes={"x": {0: "batch", 1: "seq"}})


if __name__ == "__main__":
    main()
