# Generates reference.json: forward outputs (and some gradients) of PyTorch
# layers and losses in float64, which nn's tests compare against.
# Run with /usr/bin/python3 (torch installed) from this directory:
#   /usr/bin/python3 gen_reference.py
# The tests read only the JSON; they never need Python.
import json
import torch
import torch.nn as tnn
import torch.nn.functional as F

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)
cases = {}


def T(t):
    t = t.detach()
    if t.dtype == torch.bool:
        return {"shape": list(t.shape), "dtype": "bool", "data": [int(v) for v in t.flatten().tolist()]}
    if not t.is_floating_point():
        return {"shape": list(t.shape), "dtype": "int64", "data": t.flatten().tolist()}
    return {"shape": list(t.shape), "dtype": "float64", "data": t.flatten().tolist()}


def add(name, **tensors):
    cases[name] = {k: T(v) for k, v in tensors.items()}


def state(prefix, m):
    return {prefix + k: v.clone() for k, v in m.state_dict().items()}


# ---- layers ----
x = torch.randn(3, 4)
m = tnn.Linear(4, 5)
add("linear", x=x, y=m(x), **state("p.", m))

x = torch.randn(2, 3, 7, 6)
m = tnn.Conv2d(3, 4, (3, 2), stride=(2, 1), padding=(1, 1), dilation=(1, 2))
add("conv2d", x=x, y=m(x), **state("p.", m))
x = torch.randn(2, 4, 5, 5)
m = tnn.Conv2d(4, 6, 3, padding=1, groups=2, bias=False)
add("conv2d_groups", x=x, y=m(x), **state("p.", m))

x = torch.randn(2, 3, 7, 6)
add("maxpool2d", x=x, y=F.max_pool2d(x, 3, stride=2, padding=1))
add("avgpool2d", x=x, y=F.avg_pool2d(x, 3, stride=2, padding=1), y_nopad=F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False))
add("adaptiveavgpool2d", x=x, y=F.adaptive_avg_pool2d(x, (3, 4)))

for name, mk, shape in [("batchnorm1d", tnn.BatchNorm1d, (6, 4)), ("batchnorm1d_3d", tnn.BatchNorm1d, (5, 4, 3)), ("batchnorm2d", tnn.BatchNorm2d, (3, 4, 4, 5))]:
    m = mk(4, momentum=0.2)
    with torch.no_grad():
        m.weight.uniform_(0.5, 1.5)
        m.bias.uniform_(-0.5, 0.5)
    init = state("p.", m)
    x1, x2 = torch.randn(*shape) * 2 + 1, torch.randn(*shape) * 3 - 1
    m.train()
    y1 = m(x1)
    y2 = m(x2)
    after = {"after." + k: v for k, v in m.state_dict().items()}
    m.eval()
    x3 = torch.randn(*shape)
    add(name, x1=x1, x2=x2, x3=x3, y1=y1, y2=y2, y3=m(x3), **init, **after)

x = torch.randn(2, 3, 4)
m = tnn.LayerNorm(4)
with torch.no_grad():
    m.weight.uniform_(0.5, 1.5)
    m.bias.uniform_(-0.5, 0.5)
add("layernorm", x=x, y=m(x), **state("p.", m))
m = tnn.LayerNorm([3, 4], eps=1e-3)
with torch.no_grad():
    m.weight.uniform_(0.5, 1.5)
    m.bias.uniform_(-0.5, 0.5)
add("layernorm2", x=x, y=m(x), **state("p.", m))

m = tnn.Embedding(6, 3, padding_idx=1)
with torch.no_grad():
    m.weight[1] = torch.tensor([0.5, -0.5, 2.0])  # a non-zero padding row still gets no gradient
idx = torch.tensor([[1, 2, 5], [5, 1, 0]])
y = m(idx)
(y * torch.arange(18.).reshape(2, 3, 3)).sum().backward()
add("embedding", idx=idx, y=y, grad=m.weight.grad, **state("p.", m))

x = torch.linspace(-6, 6, 25).reshape(5, 5)
add("activations", x=x, relu=F.relu(x), leaky=F.leaky_relu(x, 0.2), elu=F.elu(x, 0.7),
    sigmoid=torch.sigmoid(x), tanh=torch.tanh(x), softplus=F.softplus(x, beta=2, threshold=3),
    silu=F.silu(x), gelu=F.gelu(x), gelu_tanh=F.gelu(x, approximate="tanh"),
    softmax=F.softmax(x, dim=1), logsoftmax=F.log_softmax(x, dim=0))

# ---- losses ----
def loss_case(name, fn, inp, *rest, **extra):
    for red in ["mean", "sum", "none"]:
        i = inp.clone().requires_grad_(True)
        out = fn(i, *rest, reduction=red)
        g = {}
        if red != "none":
            out.backward()
            g = {"grad": i.grad}
        add(name + "." + red, input=inp, out=out, **{k: v for k, v in enumerate_targets(rest).items()}, **extra, **g)


def enumerate_targets(rest):
    return {"target": rest[0]}


a, b = torch.randn(4, 3), torch.randn(4, 3)
loss_case("mse", F.mse_loss, a, b)
loss_case("l1", F.l1_loss, a, b)
loss_case("huber", lambda i, t, reduction: F.huber_loss(i, t, reduction=reduction, delta=0.7), a, b)
loss_case("smoothl1", lambda i, t, reduction: F.smooth_l1_loss(i, t, reduction=reduction, beta=0.5), a, b)

logits = torch.randn(6, 5) * 3
target = torch.tensor([0, 4, 2, 2, 1, 3])
wts = torch.tensor([0.5, 1.0, 2.0, 1.5, 0.25])
loss_case("ce", F.cross_entropy, logits, target)
loss_case("ce_w", lambda i, t, reduction: F.cross_entropy(i, t, weight=wts, reduction=reduction), logits, target, weight=wts)
t_ign = torch.tensor([0, -100, 2, 2, -100, 3])
loss_case("ce_ignore", F.cross_entropy, logits, t_ign)
loss_case("ce_smooth", lambda i, t, reduction: F.cross_entropy(i, t, label_smoothing=0.2, reduction=reduction), logits, target)
loss_case("ce_all", lambda i, t, reduction: F.cross_entropy(i, t, weight=wts, label_smoothing=0.15, ignore_index=2, reduction=reduction), logits, target, weight=wts)
probs = torch.softmax(torch.randn(6, 5), 1)
loss_case("ce_prob", lambda i, t, reduction: F.cross_entropy(i, t, weight=wts, label_smoothing=0.1, reduction=reduction), logits, probs, weight=wts)
l4 = torch.randn(2, 5, 3, 2)
t4 = torch.randint(0, 5, (2, 3, 2))
loss_case("ce_kdim", lambda i, t, reduction: F.cross_entropy(i, t, weight=wts, reduction=reduction), l4, t4, weight=wts)
logp = torch.log_softmax(torch.randn(6, 5), 1)
loss_case("nll", lambda i, t, reduction: F.nll_loss(i, t, weight=wts, ignore_index=4, reduction=reduction), logp, target, weight=wts)
p = torch.rand(4, 3) * 0.98 + 0.01
y = (torch.rand(4, 3) > 0.5).double()
bw = torch.rand(4, 3) + 0.5
loss_case("bce", lambda i, t, reduction: F.binary_cross_entropy(i, t, weight=bw, reduction=reduction), p, y, weight=bw)
z = torch.tensor([[-50., -3, 0], [0.5, 2, 40], [-1, 1, 7], [100, -100, 0.1]])
pw = torch.tensor([0.5, 2.0, 3.0])
loss_case("bcelogits", lambda i, t, reduction: F.binary_cross_entropy_with_logits(i, t, weight=bw, pos_weight=pw, reduction=reduction), z, y, weight=bw, pos_weight=pw)
loss_case("bcelogits_plain", F.binary_cross_entropy_with_logits, z, y)

# ---- attention ----
m = tnn.MultiheadAttention(8, 2, batch_first=True)
with torch.no_grad():
    m.in_proj_bias.uniform_(-0.5, 0.5)
    m.out_proj.bias.uniform_(-0.5, 0.5)
m.eval()
q, k, v = torch.randn(2, 3, 8), torch.randn(2, 4, 8), torch.randn(2, 4, 8)
am = torch.tensor([[False, True, False, False], [False, False, True, False], [True, False, False, False]])
kpm = torch.tensor([[False, False, False, True], [False, False, False, False]])
out, w = m(q, k, v, attn_mask=am, key_padding_mask=kpm)
out_self, w_self = m(q, q, q)
add("mha", q=q, k=k, v=v, attn_mask=am, key_padding_mask=kpm, out=out, weights=w, out_self=out_self, weights_self=w_self, **state("p.", m))

for nf in [False, True]:
    m = tnn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, activation="gelu", batch_first=True, norm_first=nf)
    with torch.no_grad():
        for prm in m.parameters():
            if prm.dim() == 1:
                prm.uniform_(-0.3, 0.3)
    m.eval()
    x = torch.randn(2, 5, 8)
    kp = torch.tensor([[False] * 5, [False, False, False, True, True]])
    add("encoder_normfirst" if nf else "encoder", x=x, y=m(x), y_masked=m(x, src_key_padding_mask=kp), key_padding_mask=kp, **state("p.", m))

with open("reference.json", "w") as f:
    json.dump({"torch": torch.__version__, "cases": cases}, f)
print(len(cases), "cases")
