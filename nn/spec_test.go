package nn_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

const cnnJSON = `{
  "input": [1, 28, 28],
  "layers": [
    {"type": "conv2d", "out": 32, "kernel": 3, "padding": 1},
    {"type": "batchnorm2d", "momentum": 0.05},
    {"type": "ReLU"},
    {"type": "maxpool2d", "kernel": 2},
    {"type": "conv2d", "out": 64, "kernel": [3, 3], "padding": 1, "bias": false},
    {"type": "relu"},
    {"type": "max_pool2d", "kernel": 2},
    {"type": "residual", "layers": [
      {"type": "conv2d", "out": 64, "kernel": 3, "padding": 1},
      {"type": "gelu", "approximate": "tanh"}
    ]},
    {"type": "adaptive_avg_pool2d", "size": [7, 7]},
    {"type": "flatten"},
    {"type": "linear", "in": 3136, "out": 128},
    {"type": "leaky_relu", "slope": 0.1},
    {"type": "dropout", "p": 0.2},
    {"type": "batchnorm1d"},
    {"type": "linear", "out": 10},
    {"type": "log_softmax"}
  ]
}`

func TestBuildCNN(t *testing.T) {
	spec, err := nn.DecodeSpecJSON([]byte(cnnJSON))
	if err != nil {
		t.Fatal(err)
	}
	m, out, err := spec.Build(tensor.NewRNG(41))
	if err != nil {
		t.Fatal(err)
	}
	// The same seed builds the same model.
	m2, _, _ := spec.Build(tensor.NewRNG(41))
	for k, v := range nn.StateDict(m2) {
		assertClose(t, k, v, nn.StateDict(m)[k], 0)
	}
	if !sameShape(out, []int{10}) {
		t.Fatalf("output shape %v", out)
	}
	y := m.Forward(tensor.NewRNG(1).Normal(tensor.Float32, 0, 1, 4, 1, 28, 28))
	if !sameShape(y.Shape(), []int{4, 10}) {
		t.Fatalf("forward gives %v", y.Shape())
	}
	conv2 := m.At(4).(*nn.Conv2d)
	if conv2.Bias != nil || conv2.In != 32 || conv2.Out != 64 {
		t.Fatalf("second conv: %+v", conv2.Conv2dConfig)
	}
	if bn := m.At(1).(*nn.BatchNorm); bn.Momentum != 0.05 || bn.Eps != 1e-5 {
		t.Fatalf("batchnorm momentum %g eps %g", bn.Momentum, bn.Eps)
	}
	if lr := m.At(11).(*nn.LeakyReLU); lr.Slope != 0.1 {
		t.Fatalf("slope %g", lr.Slope)
	}
}

func TestBuildOtherModels(t *testing.T) {
	for _, c := range []struct {
		spec      string
		in, out   []int
		inputType tensor.DType
	}{
		{`{"layers": [{"type": "linear", "out": 256}, {"type": "relu"}, {"type": "linear", "out": 10}]}`, []int{784}, []int{10}, tensor.Float32},
		{`{"layers": [{"type": "embedding", "num": 50, "out": 16, "padding_idx": 0}, {"type": "transformer_encoder", "heads": 4, "ff": 32, "p": 0, "norm_first": true},
		  {"type": "layernorm"}, {"type": "flatten"}, {"type": "linear", "out": 3}, {"type": "softmax", "dim": 1}]}`, []int{7}, []int{3}, tensor.Int64},
		{`{"layers": [{"type": "residual", "proj": true, "layers": [{"type": "linear", "out": 8}, {"type": "silu"}]}, {"type": "tanh"},
		  {"type": "residual", "layers": [{"type": "linear", "out": 8}]}, {"type": "softplus", "beta": 2}, {"type": "elu"}, {"type": "sigmoid"}, {"type": "identity"}]}`, []int{5}, []int{8}, tensor.Float32},
		{`{"layers": [{"type": "residual", "proj": true, "layers": [{"type": "conv2d", "out": 6, "kernel": 3, "stride": 2, "padding": 1}]},
		  {"type": "avgpool2d", "kernel": 2, "count_include_pad": false}, {"type": "conv2d", "out": 4, "kernel": [1, 2], "groups": 2}]}`, []int{2, 8, 8}, []int{4, 2, 1}, tensor.Float32},
		// ceil_mode: 6×7 → 3×3 (2×3 without it) → 2×2 (1×1 without it).
		{`{"layers": [{"type": "maxpool2d", "kernel": 3, "stride": 2, "ceil_mode": true},
		  {"type": "avgpool2d", "kernel": 2, "ceil_mode": true}, {"type": "flatten"}]}`, []int{1, 6, 7}, []int{4}, tensor.Float32},
	} {
		spec, err := nn.DecodeSpecJSON([]byte(c.spec))
		if err != nil {
			t.Fatal(err)
		}
		m, out, err := nn.Build(spec.Layers, c.in, tensor.NewRNG(42))
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		if !sameShape(out, c.out) {
			t.Fatalf("%s: output %v, want %v", c.spec, out, c.out)
		}
		var x *tensor.Tensor
		if c.inputType == tensor.Int64 {
			x = tensor.NewRNG(2).RandInt(tensor.Int64, 0, 50, append([]int{3}, c.in...)...)
		} else {
			x = tensor.NewRNG(2).Normal(tensor.Float32, 0, 1, append([]int{3}, c.in...)...)
		}
		if y := m.Forward(x); !sameShape(y.Shape(), append([]int{3}, c.out...)) {
			t.Fatalf("%s: forward gives %v, Build said %v", c.spec, y.Shape(), c.out)
		}
	}
}

func TestBuildErrors(t *testing.T) {
	for _, c := range []struct {
		spec string
		in   []int
		want string
	}{
		{`[{"type": "flatten"}, {"type": "relu"}, {"type": "linear", "out": 64}, {"type": "linear", "in": 3000, "out": 10}]`, []int{64, 7, 7},
			"layers[3] (linear): input has 64 features but in=3000"},
		{`[{"type": "relu"}, {"type": "relu"}, {"type": "conv2d", "out": 3, "kernel": 3}]`, []int{784}, "layers[2] (conv2d): input must be [C, H, W], got [784]"},
		{`[{"type": "dense", "out": 3}]`, []int{4}, `layers[0]: unknown layer type "dense" (known: adaptiveavgpool2d, `},
		{`[{"out": 3}]`, []int{4}, "layers[0]: the layer type is missing"},
		{`[{"type": "linear"}]`, []int{4}, `layers[0] (linear): field "out" is required`},
		{`[{"type": "relu", "out": 3}]`, []int{4}, `layers[0] (relu): field "out" does not apply (relu takes no fields)`},
		{`[{"type": "linear", "out": 3, "kernel": 2}]`, []int{4}, `layers[0] (linear): field "kernel" does not apply (linear takes in, out, bias)`},
		{`[{"type": "dropout"}]`, []int{4}, `layers[0] (dropout): field "p" is required`},
		{`[{"type": "dropout", "p": 1.5}]`, []int{4}, `layers[0] (dropout): p=1.5 is outside [0, 1]`},
		{`[{"type": "conv2d", "out": 3, "kernel": 9}]`, []int{1, 5, 5}, "layers[0] (conv2d): kernel [9 9] with padding [0 0] and dilation [1 1] does not fit an input of 5×5"},
		{`[{"type": "conv2d", "out": 3, "kernel": 3, "groups": 2}]`, []int{3, 5, 5}, "must be divisible by groups=2"},
		{`[{"type": "maxpool2d", "kernel": 2, "padding": 2}]`, []int{1, 5, 5}, "may be at most half the kernel"},
		{`[{"type": "batchnorm2d"}]`, []int{5}, "layers[0] (batchnorm2d): input must be [C, H, W], got [5]"},
		{`[{"type": "batchnorm1d", "in": 4}]`, []int{5}, "input has 5 channels but in=4"},
		{`[{"type": "residual", "layers": [{"type": "linear", "out": 3}]}]`, []int{5}, "the body maps [5] to [3]; set proj: true"},
		{`[{"type": "residual", "layers": [{"type": "relu"}, {"type": "linear"}]}]`, []int{5}, `layers[0].layers[1] (linear): field "out" is required`},
		{`[{"type": "transformer", "heads": 3}]`, []int{4, 8}, "embedding size 8 is not divisible by heads=3"},
		{`[{"type": "transformer", "heads": 2}]`, []int{8}, "input must be [L, E]"},
		{`[{"type": "softmax", "dim": 0}]`, []int{8}, "dim=0 is outside the example dims"},
		{`[{"type": "gelu", "approximate": "fast"}]`, []int{8}, `approximate="fast"`},
		{`[{"type": "embedding", "out": 4}]`, []int{8}, `field "num"`},
		{`[{"type": "linear", "out": -3}]`, []int{8}, "must not be negative"},
	} {
		var layers []nn.LayerSpec
		if err := json.Unmarshal([]byte(c.spec), &layers); err != nil {
			t.Fatal(err)
		}
		_, _, err := nn.Build(layers, c.in, tensor.NewRNG(1))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got error %v\nwant it to contain %q", c.spec, err, c.want)
		}
	}
	if _, _, err := (nn.Spec{Layers: []nn.LayerSpec{{Type: "relu"}}}).Build(tensor.NewRNG(1)); err == nil || !strings.Contains(err.Error(), "model.input") {
		t.Errorf("missing input: %v", err)
	}
}

func TestSpecStrictDecoding(t *testing.T) {
	if _, err := nn.DecodeSpecJSON([]byte(`{"layers": [{"type": "linear", "outt": 3}]}`)); err == nil || !strings.Contains(err.Error(), "outt") {
		t.Errorf("JSON unknown field: %v", err)
	}
	if _, err := nn.DecodeSpecJSON([]byte(`{"layers": [{"type": "conv2d", "kernel": [1, 2, 3]}]}`)); err == nil || !strings.Contains(err.Error(), "[height, width]") {
		t.Errorf("JSON bad kernel: %v", err)
	}
	if _, err := nn.DecodeSpecJSON([]byte(`{"layers": [{"type": "conv2d", "kernel": "3"}]}`)); err == nil {
		t.Error("JSON string kernel accepted")
	}
}

func TestSpecRoundTrips(t *testing.T) {
	spec, err := nn.DecodeSpecJSON([]byte(cnnJSON))
	if err != nil {
		t.Fatal(err)
	}
	spec.Layers[4].Kernel = nn.IntPair{3, 5} // a rectangular kernel too
	js, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(js), `"stride"`) || !strings.Contains(string(js), `"kernel":[3,5]`) || !strings.Contains(string(js), `"kernel":3`) {
		t.Errorf("JSON form: %s", js)
	}
	back, err := nn.DecodeSpecJSON(js)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, spec) {
		t.Fatalf("JSON round trip changed the spec:\n%s", js)
	}
}

func FuzzDecodeSpec(f *testing.F) {
	f.Add([]byte(cnnJSON))
	f.Add([]byte(`{"input": [3, 8, 8], "layers": [{"type": "conv2d", "out": 2, "kernel": [2, 3]}, {"type": "flatten"}, {"type": "linear", "out": 2}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, dec := range []func([]byte) (nn.Spec, error){nn.DecodeSpecJSON} {
			spec, err := dec(data)
			if err != nil {
				continue
			}
			// Keep the built models small: reject big shapes up front.
			if len(spec.Input) > 4 || len(spec.Layers) > 8 {
				continue
			}
			n := 1
			for _, d := range spec.Input {
				if d > 64 {
					n = 1 << 30
				}
				n *= max(d, 1)
			}
			if n > 1<<12 || !smallSpec(spec.Layers) {
				continue
			}
			spec.Build(tensor.NewRNG(1)) // must return, not panic
		}
	})
}

func smallSpec(ls []nn.LayerSpec) bool {
	for _, l := range ls {
		if l.Out > 64 || l.Num > 64 || l.FF > 64 || l.Heads > 8 || l.Kernel[0] > 8 || l.Kernel[1] > 8 || l.Size[0] > 16 || l.Size[1] > 16 || l.Padding[0] > 8 || l.Padding[1] > 8 || !smallSpec(l.Layers) {
			return false
		}
	}
	return true
}
