package job

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/tensor"
)

// The Fashion-MNIST CNN recipe (examples/fashion-cnn.yaml) against
// PyTorch: testdata/cnn_reference.json holds float64 PyTorch results for
// weights and a batch of 64 images that both sides rebuild from
// splitmix64 streams (testdata/gen_cnn_reference.py). The batch runs every
// path the real recipe runs: a one-channel first convolution (per-image
// columns, dot-product weight gradient), a 32→64 convolution over chunks
// of images (batched columns, GEMM weight gradient), the 2×2 max-pool fast
// path, the flatten order into the 3136→128 layer, cross-entropy and Adam.

type cnnReference struct {
	Logits []float64 `json:"logits"`
	Loss   float64   `json:"loss"`
	Grads  map[string]struct {
		Norm   float64   `json:"norm"`
		Stride int       `json:"stride"`
		Sample []float64 `json:"sample"`
	} `json:"grads"`
	AdamLosses []float64 `json:"adam_losses"`
}

// splitmix64 returns n outputs of splitmix64 started at seed (Steele, Lea
// and Flood, "Fast Splittable Pseudorandom Number Generators", OOPSLA
// 2014), the stream gen_cnn_reference.py draws.
func splitmix64(seed uint64, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		seed += 0x9e3779b97f4a7c15
		z := seed
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		out[i] = z ^ z>>31
	}
	return out
}

// relL2 returns ‖got − want‖ / ‖want‖.
func relL2(got []float32, want []float64) float64 {
	var num, den float64
	for i, w := range want {
		d := float64(got[i]) - w
		num += d * d
		den += w * w
	}
	return math.Sqrt(num / den)
}

func TestFashionCNNMatchesPyTorch(t *testing.T) {
	b, err := os.ReadFile("testdata/cnn_reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref cnnReference
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	c, err := Load("../../examples/fashion-cnn.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	net, _, err := c.buildModel(c.Data.Shape, tensor.NewRNG(0))
	if err != nil {
		t.Fatal(err)
	}
	fanIn := map[string]float64{"0": 9, "3": 288, "7": 3136, "9": 128}
	params := net.NamedParameters()
	if len(params) != 8 {
		t.Fatalf("the recipe has %d parameters, want 8", len(params))
	}
	// The script fills parameters in state-dict order (weight, bias per
	// layer), which NamedParameters also follows.
	for i, p := range params {
		bound := 1 / math.Sqrt(fanIn[p.Name[:1]])
		w := p.Tensor.Float32s()
		for j, z := range splitmix64(uint64(1000+i), len(w)) {
			u := float64(z>>40) / (1 << 24)
			w[j] = float32((2*u - 1) * bound)
		}
	}
	const n = 64
	x := make([]float32, n*784)
	for i, z := range splitmix64(7, len(x)) {
		x[i] = float32(z>>56) / 255
	}
	labels := make([]int64, n)
	for i, z := range splitmix64(8, n) {
		labels[i] = int64(z % 10)
	}
	xt, yt := tensor.FromFloat32(x, n, 1, 28, 28), tensor.FromInt64(labels, n)

	logits := net.Forward(xt)
	if e := relL2(logits.Float32s(), ref.Logits); e > 1e-5 {
		t.Errorf("logits: relative L2 error %.3g", e)
	}
	loss := nn.CrossEntropyLoss(logits, yt, nn.ClassOptions{})
	if d := math.Abs(loss.Item() - ref.Loss); d > 1e-5 {
		t.Errorf("loss %.7f, PyTorch %.7f", loss.Item(), ref.Loss)
	}
	loss.Backward()
	for _, p := range params {
		r, ok := ref.Grads[p.Name]
		if !ok {
			t.Fatalf("no reference gradient for %s", p.Name)
		}
		g := p.Tensor.Grad().Float32s()
		var norm float64
		for _, v := range g {
			norm += float64(v) * float64(v)
		}
		norm = math.Sqrt(norm)
		sample := make([]float32, len(r.Sample))
		for i := range sample {
			sample[i] = g[i*r.Stride]
		}
		// PyTorch's own float32 gradients are 1e-7 to 7e-6 from its float64
		// ones here (the first layer sums 64·784 products per weight).
		e := relL2(sample, r.Sample)
		t.Logf("gradient of %-8s relative L2 error %.2g", p.Name, e)
		if e > 3e-5 {
			t.Errorf("gradient of %s: relative L2 error %.3g", p.Name, e)
		}
		if e := math.Abs(norm-r.Norm) / r.Norm; e > 3e-5 {
			t.Errorf("gradient of %s: norm %.7g, PyTorch %.7g", p.Name, norm, r.Norm)
		}
	}

	net.ZeroGrad()
	opt, err := optim.NewAdam(net.Parameters(), optim.AdamOptions{LR: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	for step, want := range ref.AdamLosses {
		l := nn.CrossEntropyLoss(net.Forward(xt), yt, nn.ClassOptions{})
		if d := math.Abs(l.Item() - want); d > 1e-4 {
			t.Errorf("after %d Adam steps: loss %.7f, PyTorch %.7f", step, l.Item(), want)
		}
		if step == len(ref.AdamLosses)-1 {
			break
		}
		opt.ZeroGrad()
		l.Backward()
		if err := opt.Step(); err != nil {
			t.Fatal(err)
		}
	}
}
