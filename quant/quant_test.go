package quant_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/quant"
	"github.com/fathom-ml/fathom/tensor"
)

func TestMinMax(t *testing.T) {
	var o quant.MinMax
	o.Observe(tensor.FromFloat32([]float32{0.5, 2, -1}, 3))
	o.Observe(tensor.FromFloat32([]float32{3}, 1, 1))
	o.Observe(tensor.Zeros(tensor.Float32, 0))
	p := o.Params(false)
	if math.Abs(float64(p.Scale)-4.0/255) > 1e-7 || p.ZeroPoint != 64 {
		t.Errorf("asymmetric %+v, want scale 4/255 zero 64", p)
	}
	if p := o.Params(true); math.Abs(float64(p.Scale)-3/127.5) > 1e-7 || p.ZeroPoint != 128 {
		t.Errorf("symmetric %+v, want scale 3/127.5 zero 128", p)
	}
}

// TestHistogram: 10000 values uniform on [0, 1) and one outlier at 1000.
// MinMax maps [0, 1000]; the 99.9% percentile ignores the outlier and maps
// about [0, 1].
func TestHistogram(t *testing.T) {
	v := make([]float32, 10001)
	for i := range 10000 {
		v[i] = float32(i) / 10000
	}
	v[10000] = 1000
	x := tensor.FromFloat32(v, len(v))
	h := &quant.Histogram{Percentile: 0.999}
	h.Observe(x)
	p := h.Params(false)
	// The bins are 1000/2048 wide: the upper edge lands within one bin above 1.
	if hi := float64(p.Scale) * 255; hi < 0.99 || hi > 1+1000.0/2048+0.01 || p.ZeroPoint != 0 {
		t.Errorf("percentile map %+v covers [0, %g], want about [0, 1]", p, hi)
	}
	var m quant.MinMax
	m.Observe(x)
	if hi := float64(m.Params(false).Scale) * 255; math.Abs(hi-1000) > 1e-3 {
		t.Errorf("min-max covers [0, %g], want [0, 1000]", hi)
	}
	full := &quant.Histogram{Percentile: 1}
	full.Observe(x)
	if hi := float64(full.Params(false).Scale) * 255; math.Abs(hi-1000) > 1e-3 {
		t.Errorf("percentile 1 covers [0, %g], want [0, 1000]", hi)
	}
}

func buildNet(t *testing.T, spec nn.Spec) *nn.Sequential {
	t.Helper()
	net, _, err := spec.Build(tensor.NewRNG(5))
	if err != nil {
		t.Fatal(err)
	}
	net.Eval()
	return net
}

func TestQuantizeModes(t *testing.T) {
	spec := nn.Spec{Input: []int{1, 8, 8}, Layers: []nn.LayerSpec{
		{Type: "conv2d", Out: 4, Kernel: nn.IntPair{3, 3}, Padding: nn.IntPair{1, 1}},
		{Type: "batchnorm2d"},
		{Type: "relu"},
		{Type: "conv2d", Out: 4, Kernel: nn.IntPair{1, 1}, Groups: 2},
		{Type: "flatten"},
		{Type: "linear", Out: 16},
		{Type: "relu"},
		{Type: "linear", Out: 3},
	}}
	net := buildNet(t, spec)
	rng := tensor.NewRNG(6)
	calib := rng.Normal(tensor.Float32, 0, 1, 50, 1, 8, 8)
	x := rng.Normal(tensor.Float32, 0, 1, 7, 1, 8, 8)
	want := net.Forward(x.NoGrad()).Float32s()
	for _, o := range []quant.Options{
		{Mode: quant.Dynamic},
		{Mode: quant.Static, Calibration: calib},
		{Mode: quant.Static, Calibration: calib, Observer: quant.ObserveHistogram, Symmetric: true},
	} {
		qnet, qspec, rep, err := quant.Quantize(net, spec, o)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(rep.Quantized, ","); got != "model.layers[0] (conv2d),model.layers[5] (linear),model.layers[7] (linear)" {
			t.Errorf("quantized %s", got)
		}
		if len(rep.Kept) != 2 || !strings.Contains(rep.Kept[0], "layers[1] (batchnorm2d)") || !strings.Contains(rep.Kept[1], "layers[3] (conv2d): conv2d with groups=2") {
			t.Errorf("kept %q", rep.Kept)
		}
		if qspec.Layers[0].Type != "qconv2d" || qspec.Layers[3].Type != "conv2d" || qspec.Layers[7].Type != "qlinear" || spec.Layers[0].Type != "conv2d" {
			t.Errorf("spec types %v (original %v)", qspec.Layers, spec.Layers[0].Type)
		}
		_, isQ := qnet.At(5).(*nn.QLinear)
		if !isQ {
			t.Errorf("layer 5 is %T", qnet.At(5))
		}
		st := qnet.At(0).(*nn.QConv2d).InputScale.Float32s()[0]
		if (st == 0) != (o.Mode == quant.Dynamic) {
			t.Errorf("mode %v: input scale %g", o.Mode, st)
		}
		got := qnet.Forward(x.NoGrad()).Float32s()
		d := 0.0
		for i := range got {
			d = max(d, math.Abs(float64(got[i]-want[i])))
		}
		if d > 0.1 {
			t.Errorf("%+v: outputs differ from float by %g", o.Mode, d)
		}
	}
}

func TestQuantizeCalibrationErrors(t *testing.T) {
	spec := nn.Spec{Input: []int{4}, Layers: []nn.LayerSpec{{Type: "linear", Out: 2}}}
	net := buildNet(t, spec)
	for _, c := range []struct {
		x    *tensor.Tensor
		want string
	}{
		{nil, "needs a calibration sample"},
		{tensor.Zeros(tensor.Float32, 3, 5), "examples of shape [5], the model reads [4]"},
		{tensor.Zeros(tensor.Float32, 0, 4), "needs a calibration sample"},
	} {
		_, _, _, err := quant.Quantize(net, spec, quant.Options{Mode: quant.Static, Calibration: c.x})
		if !errors.Is(err, quant.ErrCalibration) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("calibration %v: %v, want %q", c.x, err, c.want)
		}
	}
}

func TestParse(t *testing.T) {
	if m, err := quant.ParseMode("static"); err != nil || m != quant.Static {
		t.Error(m, err)
	}
	if _, err := quant.ParseMode("qat"); err == nil {
		t.Error("mode qat accepted")
	}
	if o, err := quant.ParseObserver("percentile"); err != nil || o != quant.ObserveHistogram {
		t.Error(o, err)
	}
	if _, err := quant.ParseObserver("kl"); err == nil {
		t.Error("observer kl accepted")
	}
}
