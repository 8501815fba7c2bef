"""Loss and gradient of a small MultilayerPerceptronClassifier network, with
PyTorch's autograd in float64: the numbers TestLossGradAgainstTorch pins.

Run once with Debian's python3-torch:  /usr/bin/python3 peer_torch.py

The network: layers [3, 4, 2, 3] (two sigmoid hidden layers, a softmax
output), weights in Spark ML's layout (per layer the in x out matrix W
row-major, then the out biases), weight i = 0.5*sin(i+1); 6 samples,
x[r][f] = cos(1.3*r + 0.7*f), label r % 3. The objective is fathom's:
the mean cross-entropy plus regParam/2 * (sum of the squared W entries,
biases not included), regParam = 0.1.
"""
import math

import torch

torch.set_default_dtype(torch.float64)
layers = [3, 4, 2, 3]
n = 6
reg = 0.1
size = sum(layers[l] * layers[l + 1] + layers[l + 1] for l in range(len(layers) - 1))
w = torch.tensor([0.5 * math.sin(i + 1) for i in range(size)], requires_grad=True)
x = torch.tensor([[math.cos(1.3 * r + 0.7 * f) for f in range(layers[0])] for r in range(n)])
y = torch.tensor([r % 3 for r in range(n)])

off = 0
a = x
penalty = 0
for l in range(len(layers) - 1):
    i, o = layers[l], layers[l + 1]
    W = w[off:off + i * o].reshape(i, o)
    off += i * o
    b = w[off:off + o]
    off += o
    a = a @ W + b
    penalty = penalty + (W * W).sum()
    if l < len(layers) - 2:
        a = torch.sigmoid(a)
ce = torch.nn.functional.cross_entropy(a, y)  # mean over the samples
loss = ce + reg / 2 * penalty
loss.backward()
print("size", size)
print("ce %.17g" % ce.item())
print("loss %.17g" % loss.item())
print("grad", ", ".join("%.17g" % v for v in w.grad.tolist()))
