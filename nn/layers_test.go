package nn_test

import (
	"math"
	"testing"

	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

const refTol = 1e-10

func TestLayersMatchPyTorch(t *testing.T) {
	rng := tensor.NewRNG(1)
	for _, c := range []struct {
		name string
		m    nn.Layer
	}{
		{"linear", nn.NewLinear(rng, 4, 5)},
		{"conv2d", nn.NewConv2dWith(rng, nn.Conv2dConfig{In: 3, Out: 4, Kernel: [2]int{3, 2}, Stride: [2]int{2, 1}, Padding: nn.Pair(1), Dilation: [2]int{1, 2}})},
		{"conv2d_groups", nn.NewConv2dWith(rng, nn.Conv2dConfig{In: 4, Out: 6, Kernel: nn.Pair(3), Padding: nn.Pair(1), Groups: 2, NoBias: true})},
		{"maxpool2d", &nn.MaxPool2d{Kernel: nn.Pair(3), Stride: nn.Pair(2), Padding: nn.Pair(1)}},
		{"avgpool2d", &nn.AvgPool2d{Kernel: nn.Pair(3), Stride: nn.Pair(2), Padding: nn.Pair(1), CountIncludePad: true}},
		{"adaptiveavgpool2d", nn.NewAdaptiveAvgPool2d(3, 4)},
		{"layernorm", nn.NewLayerNorm(4)},
		{"layernorm2", nn.NewLayerNormWith(nn.LayerNormConfig{Shape: []int{3, 4}, Eps: 1e-3})},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := ref(t, c.name)
			loadRef(t, c.m, r, "p.")
			assertClose(t, "forward", c.m.Forward(r["x"]), r["y"], refTol)
		})
	}
	r := ref(t, "avgpool2d")
	nopad := &nn.AvgPool2d{Kernel: nn.Pair(3), Stride: nn.Pair(2), Padding: nn.Pair(1)}
	assertClose(t, "avgpool2d count_include_pad=false", nopad.Forward(r["x"]), r["y_nopad"], refTol)
}

func TestBatchNormMatchesPyTorch(t *testing.T) {
	for _, c := range []struct {
		name string
		new  func(nn.BatchNormConfig) *nn.BatchNorm
	}{
		{"batchnorm1d", nn.NewBatchNorm1dWith},
		{"batchnorm1d_3d", nn.NewBatchNorm1dWith},
		{"batchnorm2d", nn.NewBatchNorm2dWith},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := ref(t, c.name)
			m := c.new(nn.BatchNormConfig{Features: 4, Momentum: 0.2})
			loadRef(t, m, r, "p.")
			if !m.Training() {
				t.Fatal("a new module must start in training mode")
			}
			assertClose(t, "train step 1", m.Forward(r["x1"]), r["y1"], refTol)
			assertClose(t, "train step 2", m.Forward(r["x2"]), r["y2"], refTol)
			assertClose(t, "running_mean", m.RunningMean, r["after.running_mean"], refTol)
			assertClose(t, "running_var", m.RunningVar, r["after.running_var"], refTol)
			if m.NumBatchesTracked.Item() != 2 {
				t.Fatalf("num_batches_tracked = %v, want 2", m.NumBatchesTracked.Item())
			}
			m.Eval()
			rm := m.RunningMean.Clone()
			assertClose(t, "eval", m.Forward(r["x3"]), r["y3"], refTol)
			assertClose(t, "eval leaves running stats", m.RunningMean, rm, 0)
		})
	}
}

func TestBatchNormVariants(t *testing.T) {
	rng := tensor.NewRNG(2)
	x := rng.Normal(tensor.Float64, 2, 3, 8, 3)
	// Without running statistics, eval mode uses the batch statistics.
	m := nn.NewBatchNorm1dWith(nn.BatchNormConfig{Features: 3, NoTrackRunningStats: true, NoAffine: true})
	if len(m.NamedParameters()) != 0 || len(m.NamedBuffers()) != 0 {
		t.Fatalf("no affine, no tracking: params %v, buffers %v", m.NamedParameters(), m.NamedBuffers())
	}
	m.To(tensor.Float64)
	y := m.Forward(x)
	m.Eval()
	assertClose(t, "eval without running stats", m.Forward(x), y, 0)
	mean := y.Mean([]int{0}, false).Values()
	v := y.Var([]int{0}, 0, false).Values()
	for c := range 3 {
		if math.Abs(mean[c]) > 1e-12 || math.Abs(v[c]-1) > 1e-4 {
			t.Fatalf("channel %d: mean %g, biased var %g; want 0 and ≈1", c, mean[c], v[c])
		}
	}
	// Cumulative average (momentum=None): after k batches the running mean
	// is the plain average of the k batch means.
	cm := nn.NewBatchNorm1dWith(nn.BatchNormConfig{Features: 3, CumulativeAverage: true})
	cm.To(tensor.Float64)
	var sum [3]float64
	for k := range 3 {
		xb := rng.Normal(tensor.Float64, float64(k), 1, 5, 3)
		cm.Forward(xb)
		bm := xb.Mean([]int{0}, false).Values()
		for c := range 3 {
			sum[c] += bm[c]
		}
	}
	got := cm.RunningMean.Values()
	for c := range 3 {
		if math.Abs(got[c]-sum[c]/3) > 1e-12 {
			t.Fatalf("cumulative running mean[%d] = %g, want %g", c, got[c], sum[c]/3)
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("training on one value per channel must panic")
		}
	}()
	nn.NewBatchNorm1d(3).Forward(tensor.Ones(tensor.Float32, 1, 3))
}

func TestEmbeddingMatchesPyTorch(t *testing.T) {
	r := ref(t, "embedding")
	m := nn.NewEmbeddingWith(tensor.NewRNG(3), nn.EmbeddingConfig{Num: 6, Dim: 3, HasPadding: true, PaddingIdx: 1})
	if row := m.Weight.Narrow(0, 1, 1).Values(); row[0] != 0 || row[1] != 0 || row[2] != 0 {
		t.Fatalf("padding row starts at %v, want zeros", row)
	}
	loadRef(t, m, r, "p.")
	y := m.Forward(r["idx"])
	assertClose(t, "forward", y, r["y"], refTol)
	y.Mul(tensor.Arange(tensor.Float64, 0, 18, 1).Reshape(2, 3, 3)).SumAll().Backward()
	assertClose(t, "weight grad (no gradient at the padding row)", m.Weight.Grad(), r["grad"], refTol)
}

func TestActivationsMatchPyTorch(t *testing.T) {
	r := ref(t, "activations")
	x := r["x"]
	for _, c := range []struct {
		name string
		m    nn.Layer
	}{
		{"relu", nn.NewReLU()},
		{"leaky", nn.NewLeakyReLU(0.2)},
		{"elu", nn.NewELU(0.7)},
		{"sigmoid", nn.NewSigmoid()},
		{"tanh", nn.NewTanh()},
		{"softplus", &nn.Softplus{Beta: 2, Threshold: 3}},
		{"silu", nn.NewSiLU()},
		{"gelu", nn.NewGELU()},
		{"gelu_tanh", &nn.GELU{Approximate: "tanh"}},
		{"softmax", nn.NewSoftmax(1)},
		{"logsoftmax", nn.NewLogSoftmax(0)},
	} {
		assertClose(t, c.name, c.m.Forward(x), r[c.name], 1e-12)
	}
	for _, name := range []string{"relu", "gelu", "tanh", "sigmoid", "silu", "swish", "elu", "leaky_relu", "softplus", "identity"} {
		if _, err := nn.Activation(name); err != nil {
			t.Errorf("Activation(%q): %v", name, err)
		}
	}
	if _, err := nn.Activation("relu6"); err == nil {
		t.Error("Activation(relu6) must fail")
	}
}

func TestAttentionMatchesPyTorch(t *testing.T) {
	r := ref(t, "mha")
	m := nn.NewMultiheadAttention(tensor.NewRNG(4), nn.MultiheadAttentionConfig{EmbedDim: 8, Heads: 2, BatchFirst: true})
	loadRef(t, m, r, "p.")
	m.Eval()
	out, w := m.Forward(r["q"], r["k"], r["v"], nn.AttentionOptions{AttnMask: r["attn_mask"], KeyPaddingMask: r["key_padding_mask"], NeedWeights: true})
	assertClose(t, "output", out, r["out"], refTol)
	assertClose(t, "weights", w, r["weights"], refTol)
	q := r["q"]
	out, w = m.Forward(q, q, q, nn.AttentionOptions{NeedWeights: true})
	assertClose(t, "self-attention output", out, r["out_self"], refTol)
	assertClose(t, "self-attention weights", w, r["weights_self"], refTol)

	// Sequence-first layout and unbatched inputs give the same numbers.
	m.BatchFirst = false
	out, _ = m.Forward(q.Transpose(0, 1), q.Transpose(0, 1), q.Transpose(0, 1), nn.AttentionOptions{})
	assertClose(t, "sequence first", out.Transpose(0, 1), r["out_self"], refTol)
	q0 := q.Select(0, 0)
	out, _ = m.Forward(q0, q0, q0, nn.AttentionOptions{})
	assertClose(t, "unbatched", out, r["out_self"].Select(0, 0), refTol)

	// A float mask of 0/−Inf equals the Bool mask; Causal equals the
	// upper-triangular Bool mask.
	fm := tensor.Where(r["attn_mask"], tensor.Scalar(math.Inf(-1), tensor.Float64), tensor.Scalar(0, tensor.Float64))
	m.BatchFirst = true
	out, _ = m.Forward(r["q"], r["k"], r["v"], nn.AttentionOptions{AttnMask: fm, KeyPaddingMask: r["key_padding_mask"]})
	assertClose(t, "float mask", out, r["out"], refTol)
	causal := tensor.FromBool([]bool{false, true, true, false, false, true, false, false, false}, 3, 3)
	a, _ := m.Forward(q, q, q, nn.AttentionOptions{Causal: true})
	b, _ := m.Forward(q, q, q, nn.AttentionOptions{AttnMask: causal})
	assertClose(t, "causal", a, b, 0)
}

func TestTransformerEncoderLayerMatchesPyTorch(t *testing.T) {
	for _, nf := range []bool{false, true} {
		name := "encoder"
		if nf {
			name = "encoder_normfirst"
		}
		t.Run(name, func(t *testing.T) {
			r := ref(t, name)
			m := nn.NewTransformerEncoderLayer(tensor.NewRNG(5), nn.TransformerEncoderLayerConfig{
				DModel: 8, Heads: 2, FF: 16, Activation: "gelu", BatchFirst: true, NormFirst: nf})
			loadRef(t, m, r, "p.")
			m.Eval()
			assertClose(t, "forward", m.Forward(r["x"]), r["y"], refTol)
			y := m.ForwardMasked(r["x"], nn.AttentionOptions{KeyPaddingMask: r["key_padding_mask"]})
			assertClose(t, "masked", y, r["y_masked"], refTol)
		})
	}
}

func TestDropout(t *testing.T) {
	x := tensor.Ones(tensor.Float64, 200, 50)
	d := nn.NewDropout(tensor.NewRNG(6), 0.3)
	y := d.Forward(x).Values()
	zeros := 0
	for _, v := range y {
		switch {
		case v == 0:
			zeros++
		case math.Abs(v-1/0.7) > 1e-15:
			t.Fatalf("kept element %g, want 1/(1−p) = %g", v, 1/0.7)
		}
	}
	if frac := float64(zeros) / float64(len(y)); math.Abs(frac-0.3) > 0.02 {
		t.Fatalf("dropped fraction %.3f, want ≈0.3", frac)
	}
	// The same seed gives the same mask; a second call a new one.
	d2 := nn.NewDropout(tensor.NewRNG(6), 0.3)
	assertClose(t, "same seed", d2.Forward(x), tensor.FromFloat64(y, 200, 50), 0)
	if sameValues(d2.Forward(x).Values(), y) {
		t.Fatal("consecutive masks are identical")
	}
	// Eval mode is the identity (the same tensor).
	d.Eval()
	if d.Forward(x) != x {
		t.Fatal("dropout in eval mode must return its input")
	}
	// Gradient: the mask times the incoming gradient.
	d.Train()
	xg := tensor.Ones(tensor.Float64, 10, 10).SetRequiresGrad(true)
	yg := d.Forward(xg)
	yg.SumAll().Backward()
	assertClose(t, "gradient equals the mask", xg.Grad(), yg.Detach(), 0)
	// p = 1 drops everything.
	if s := nn.NewDropout(tensor.NewRNG(1), 1).Forward(x).SumAll().Item(); s != 0 {
		t.Fatalf("p=1 kept a sum of %g", s)
	}
}

func sameValues(a, b []float64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestInitializers(t *testing.T) {
	rng := tensor.NewRNG(7)
	if in, out := nn.Fans([]int{32, 16, 3, 3}); in != 144 || out != 288 {
		t.Fatalf("Fans = %d, %d; want 144, 288", in, out)
	}
	for _, c := range []struct {
		name string
		gain float64
		want float64
	}{{"linear", 0, 1}, {"sigmoid", 0, 1}, {"tanh", 0, 5.0 / 3}, {"relu", 0, math.Sqrt2}, {"leaky_relu", 0.2, math.Sqrt(2 / 1.04)}, {"selu", 0, 0.75}} {
		if g := nn.CalculateGain(c.name, c.gain); math.Abs(g-c.want) > 1e-15 {
			t.Errorf("CalculateGain(%s) = %g, want %g", c.name, g, c.want)
		}
	}
	// Bounds and standard deviations of each scheme on a large tensor.
	w := tensor.Zeros(tensor.Float64, 400, 300)
	check := func(name string, bound, std float64) {
		t.Helper()
		v := w.Values()
		var s2, mx float64
		for _, x := range v {
			s2 += x * x
			mx = math.Max(mx, math.Abs(x))
		}
		sd := math.Sqrt(s2 / float64(len(v)))
		if bound > 0 && mx > bound {
			t.Errorf("%s: |value| %g exceeds bound %g", name, mx, bound)
		}
		if math.Abs(sd-std)/std > 0.02 {
			t.Errorf("%s: std %g, want ≈%g", name, sd, std)
		}
	}
	nn.InitXavierUniform(rng, w, 2)
	a := 2 * math.Sqrt(6.0/700)
	check("xavier uniform", a, a/math.Sqrt(3))
	nn.InitXavierNormal(rng, w, 1)
	check("xavier normal", 0, math.Sqrt(2.0/700))
	nn.InitKaimingUniform(rng, w, 0, nn.FanIn, "relu")
	b := math.Sqrt2 * math.Sqrt(3.0/300)
	check("kaiming uniform", b, b/math.Sqrt(3))
	nn.InitKaimingNormal(rng, w, 0, nn.FanOut, "relu")
	check("kaiming normal fan out", 0, math.Sqrt2/math.Sqrt(400))
	// PyTorch's Linear default: weights and bias within 1/√in.
	l := nn.NewLinear(rng, 300, 400)
	bound := 1 / math.Sqrt(300)
	for _, p := range []*tensor.Tensor{l.Weight, l.Bias} {
		if p.Abs().MaxAll().Item() > bound {
			t.Fatalf("Linear init exceeds 1/√in = %g", bound)
		}
	}
	w = l.Weight.Detach().To(tensor.Float64)
	check("linear default", bound, bound/math.Sqrt(3))
	// The same seed gives the same parameters.
	l1, l2 := nn.NewLinear(tensor.NewRNG(9), 5, 3), nn.NewLinear(tensor.NewRNG(9), 5, 3)
	assertClose(t, "reproducible init", l1.Weight, l2.Weight, 0)
}
