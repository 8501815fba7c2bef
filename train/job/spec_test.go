package job

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
	"gopkg.in/yaml.v3"
)

const cnnYAML = `
input: [1, 28, 28]
layers:
  - {type: conv2d, out: 32, kernel: 3, padding: 1}
  - {type: batchnorm2d, momentum: 0.05}
  - {type: ReLU}
  - {type: maxpool2d, kernel: 2}
  - {type: conv2d, out: 64, kernel: [3, 3], padding: 1, bias: false}
  - {type: relu}
  - {type: max_pool2d, kernel: 2}
  - type: residual
    layers:
      - {type: conv2d, out: 64, kernel: 3, padding: 1}
      - {type: gelu, approximate: tanh}
  - {type: adaptive_avg_pool2d, size: [7, 7]}
  - {type: flatten}
  - {type: linear, in: 3136, out: 128}
  - {type: leaky_relu, slope: 0.1}
  - {type: dropout, p: 0.2}
  - {type: batchnorm1d}
  - {type: linear, out: 10}
  - {type: log_softmax}
`

// The same spec as JSON, the form model files hold.
const cnnJSON = `{"input": [1, 28, 28], "layers": [
  {"type": "conv2d", "out": 32, "kernel": 3, "padding": 1},
  {"type": "batchnorm2d", "momentum": 0.05},
  {"type": "ReLU"},
  {"type": "maxpool2d", "kernel": 2},
  {"type": "conv2d", "out": 64, "kernel": [3, 3], "padding": 1, "bias": false},
  {"type": "relu"},
  {"type": "max_pool2d", "kernel": 2},
  {"type": "residual", "layers": [
    {"type": "conv2d", "out": 64, "kernel": 3, "padding": 1},
    {"type": "gelu", "approximate": "tanh"}]},
  {"type": "adaptive_avg_pool2d", "size": [7, 7]},
  {"type": "flatten"},
  {"type": "linear", "in": 3136, "out": 128},
  {"type": "leaky_relu", "slope": 0.1},
  {"type": "dropout", "p": 0.2},
  {"type": "batchnorm1d"},
  {"type": "linear", "out": 10},
  {"type": "log_softmax"}]}`

func TestDecodeSpecYAML(t *testing.T) {
	spec, err := DecodeSpecYAML([]byte(cnnYAML))
	if err != nil {
		t.Fatal(err)
	}
	want, err := nn.DecodeSpecJSON([]byte(cnnJSON))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(spec, want) {
		t.Fatalf("YAML spec %+v\nJSON spec %+v", spec, want)
	}
	if _, out, err := spec.Build(tensor.NewRNG(1)); err != nil || !reflect.DeepEqual(out, []int{10}) {
		t.Fatalf("build: %v, output %v", err, out)
	}
	if spec.Layers[0].Kernel != (nn.IntPair{3, 3}) || spec.Layers[8].Size != (nn.IntPair{7, 7}) {
		t.Fatalf("sizes: kernel %v, size %v", spec.Layers[0].Kernel, spec.Layers[8].Size)
	}

	// Round trip: a spec written as YAML reads back the same.
	spec.Layers[4].Kernel = nn.IntPair{3, 5}
	ys, err := yaml.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeSpecYAML(ys)
	if err != nil {
		t.Fatalf("%v\n%s", err, ys)
	}
	if !reflect.DeepEqual(back, spec) {
		t.Fatalf("YAML round trip changed the spec:\n%s", ys)
	}
}

func TestDecodeSpecYAMLErrors(t *testing.T) {
	for _, test := range []struct {
		text string
		want []string
	}{
		{"input: [4]\nlayers:\n  - type: linear\n    kernal: 3\n", []string{"kernal", "line 4"}},
		{"layers:\n  - {type: conv2d, kernel: [1, 2, 3]}\n", []string{"line 2", "layers[0].kernel", "[height, width]"}},
		{"layers:\n\n  - {type: conv2d, kernel: abc}\n", []string{"line 3", "[height, width]", `"abc"`}},
		{"layers:\n  - {type: conv2d, kernel: {h: 3}}\n", []string{"line 2", "a mapping"}},
		{"layers: 3\n", []string{"line 1", "want a list"}},
		{"a: 1\n", []string{"line 1", `unknown key "a"`, "input, layers"}},
	} {
		_, err := DecodeSpecYAML([]byte(test.text))
		if err == nil {
			t.Errorf("%q: accepted", test.text)
			continue
		}
		for _, w := range test.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q lacks %q", test.text, err, w)
			}
		}
	}
}

// A bad size in a training config names its line too.
func TestConfigBadKernel(t *testing.T) {
	_, err := ParseConfig([]byte("data: {source: iris}\nmodel:\n  - {type: linear, out: 3}\n  - {type: maxpool2d, kernel: [2, x]}\n"), "c.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), "c.yaml:4") || !strings.Contains(err.Error(), "model[1].kernel") {
		t.Fatalf("error %v", err)
	}
}

func FuzzDecodeSpecYAML(f *testing.F) {
	f.Add([]byte(cnnYAML))
	f.Add([]byte("input: [3, 8, 8]\nlayers: [{type: conv2d, out: 2, kernel: [2, 3]}, {type: flatten}, {type: linear, out: 2}]\n"))
	f.Add([]byte("layers:\n  - type: residual\n    layers:\n" + residualLaughs(9, "      ")))
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := DecodeSpecYAML(data)
		if err != nil {
			return
		}
		// Whatever decodes survives a YAML round trip unchanged (compared
		// as YAML, where a nil and an empty list are alike).
		ys, err := yaml.Marshal(spec)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeSpecYAML(ys)
		if err != nil {
			t.Fatalf("round trip: %v\n%s", err, ys)
		}
		if again, _ := yaml.Marshal(back); string(again) != string(ys) {
			t.Fatalf("round trip changed the spec:\n%s\n%s", ys, again)
		}
	})
}
