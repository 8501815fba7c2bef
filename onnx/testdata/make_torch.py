"""Exports a small MLP and a small CNN from PyTorch to ONNX and prints their
outputs on fixed inputs (JSON); onnx/import_test.go compares fathom's
outputs on the imported files with them. The MLP is exported at opset 17
(LayerNormalization), the CNN at opset 13 (PyTorch's default).

Run from this directory with /usr/bin/python3 (python3-torch):
    /usr/bin/python3 make_torch.py > torch_expected.json
"""
import json

import torch
import torch.nn as nn

torch.manual_seed(7)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(4, 16), nn.BatchNorm1d(16), nn.ReLU(),
            nn.Linear(16, 8), nn.LayerNorm(8), nn.SiLU(),
            nn.Dropout(0.1),
            nn.Linear(8, 8, bias=False), nn.Tanh(),
            nn.Linear(8, 3))

    def forward(self, x):
        return self.net(x)


class Block(nn.Module):
    """A residual block: x + conv(relu(conv(x)))."""

    def __init__(self, c):
        super().__init__()
        self.a = nn.Conv2d(c, c, 3, padding=1)
        self.b = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        return x + self.b(torch.relu(self.a(x)))


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
            nn.MaxPool2d(2), Block(4),
            nn.Conv2d(4, 6, 3, stride=1, padding=1, bias=False), nn.Sigmoid(),
            nn.AvgPool2d(2))
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(6 * 2 * 2, 5), nn.GELU(), nn.Linear(5, 3))

    def forward(self, x):
        return self.head(self.features(x))


def export(model, x, name, opset):
    model.eval()
    torch.onnx.export(model, x, name, input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
                      opset_version=opset, do_constant_folding=True)
    with torch.no_grad():
        y = model(x)
    return {"input_shape": list(x.shape), "input": x.flatten().tolist(),
            "output_shape": list(y.shape), "output": y.flatten().tolist()}


mlp = MLP()
cnn = CNN()
# Non-trivial batch-norm statistics, as after training.
with torch.no_grad():
    for bn in (cnn.features[1], mlp.net[1]):
        n = bn.num_features
        bn.running_mean.copy_(torch.randn(n) * 0.1)
        bn.running_var.copy_(torch.rand(n) + 0.5)
        bn.weight.copy_(torch.rand(n) + 0.5)
        bn.bias.copy_(torch.randn(n) * 0.1)

out = {
    "mlp": export(mlp, torch.randn(5, 4), "torch_mlp.onnx", 17),
    "cnn": export(cnn, torch.randn(3, 1, 8, 8), "torch_cnn.onnx", 13),
}
print(json.dumps(out, indent=1))
