package job

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// pretrained saves a 4-16-8-5 classifier (five classes: another head
// than iris's three) and returns its path and state dict values.
func pretrained(t *testing.T) (string, map[string][]float32) {
	t.Helper()
	spec := nn.Spec{Input: []int{4}, Layers: []nn.LayerSpec{
		{Type: "linear", Out: 16}, {Type: "relu"}, {Type: "linear", Out: 8}, {Type: "relu"}, {Type: "linear", Out: 5}}}
	net, _, err := spec.Build(tensor.NewRNG(42))
	if err != nil {
		t.Fatal(err)
	}
	m := &modelfile.Model{Net: net, Spec: spec, Task: metrics.Classification, Classes: []string{"a", "b", "c", "d", "e"}}
	path := filepath.Join(t.TempDir(), "pre.safetensors")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	vals := map[string][]float32{}
	for name, v := range nn.StateDict(net) {
		vals[name] = slices.Clone(v.Float32s())
	}
	return path, vals
}

const fineTuneConfig = `
data: {source: iris, test_fraction: 0.2, standardize: true}
model:
  - {type: linear, out: 16}
  - {type: relu}
  - {type: linear, out: 8}
  - {type: relu}
  - {type: linear, out: 3}
loss: cross_entropy
optimizer: {type: adam, lr: 0.01}
epochs: 30
batch_size: 16
seed: 1
`

// TestFineTune: init_from loads the matching layers, the head (5 classes
// in the file, 3 in the config) is initialized fresh, frozen layers come
// out of training bitwise unchanged and the others trained.
func TestFineTune(t *testing.T) {
	pre, vals := pretrained(t)
	c, err := ParseConfig([]byte(fineTuneConfig), "ft.yaml", []string{"output.dir=" + t.TempDir(), "init_from=" + pre, "freeze=[0]"})
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	r, err := Run(context.Background(), c, RunOptions{Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "4 tensors loaded; head replaced, initialized fresh: 4.weight, 4.bias") {
		t.Errorf("log does not report the loading:\n%s", log.String())
	}
	m, err := modelfile.Load(r.ModelPath)
	if err != nil {
		t.Fatal(err)
	}
	got := nn.StateDict(m.Net)
	for _, name := range []string{"0.weight", "0.bias"} {
		if !slices.Equal(got[name].Float32s(), vals[name]) {
			t.Errorf("frozen %s changed in training", name)
		}
	}
	if slices.Equal(got["2.weight"].Float32s(), vals["2.weight"]) {
		t.Error("2.weight (not frozen) did not train")
	}
	if s := got["4.weight"].Shape(); !slices.Equal(s, []int{3, 8}) {
		t.Errorf("head shape %v, want [3 8]", s)
	}
	if acc := r.Test.Accuracy; acc < 0.5 {
		t.Errorf("test accuracy %v after fine-tuning", acc)
	}
}

// TestFineTuneErrors: a shape mismatch below the head, a missing tensor,
// a bad freeze name: each a clear error.
func TestFineTuneErrors(t *testing.T) {
	pre, _ := pretrained(t)
	for _, test := range []struct {
		sets []string
		want string
	}{
		{[]string{"init_from=" + pre, "model.0.out=32"}, `tensor "0.weight" has shape [16 4] in the file and [32 4] in the model: only the last layer (the head, layer 4) may differ`},
		{[]string{"init_from=" + filepath.Join(t.TempDir(), "missing.safetensors")}, "init_from: "},
		{[]string{"freeze=[7]"}, `freeze: "7" is not a layer index of the model (0 to 4)`},
		{[]string{"freeze=[1]"}, "freeze: layer 1 (relu) has no parameters to freeze"},
	} {
		c, err := ParseConfig([]byte(fineTuneConfig), "ft.yaml", append([]string{"output.dir=" + t.TempDir()}, test.sets...))
		if err == nil {
			_, err = Run(context.Background(), c, RunOptions{})
		}
		if err == nil || !strings.Contains(err.Error(), test.want) {
			t.Errorf("%v: err = %v, want %q", test.sets, err, test.want)
		}
	}
}

// BenchmarkFrozenStep measures what freezing saves: one training step
// (forward, backward, Adam) of the Fashion-MNIST CNN at batch 64, with
// every layer trained and with the two convolutions frozen (the tape then
// records no gradient work for them).
//
//	go test ./train/job -run - -bench FrozenStep
func BenchmarkFrozenStep(b *testing.B) {
	cfg := `
data: {source: iris}
model:
  - {type: conv2d, out: 32, kernel: 3, padding: 1}
  - {type: relu}
  - {type: maxpool2d, kernel: 2}
  - {type: conv2d, out: 64, kernel: 3, padding: 1}
  - {type: relu}
  - {type: maxpool2d, kernel: 2}
  - {type: flatten}
  - {type: linear, out: 128}
  - {type: relu}
  - {type: linear, out: 10}
loss: cross_entropy
optimizer: {type: adam, lr: 0.001}
epochs: 1
batch_size: 64
`
	for _, freeze := range []string{"[]", "[0, 3]"} {
		b.Run(fmt.Sprintf("freeze=%s", freeze), func(b *testing.B) {
			c, err := ParseConfig([]byte(cfg), "cnn.yaml", []string{"freeze=" + freeze})
			if err != nil {
				b.Fatal(err)
			}
			net, _, err := c.buildModel([]int{1, 28, 28}, tensor.NewRNG(1))
			if err != nil {
				b.Fatal(err)
			}
			if err := c.freeze(net); err != nil {
				b.Fatal(err)
			}
			opt, err := c.newOptimizer(trainable(net.Parameters()))
			if err != nil {
				b.Fatal(err)
			}
			rng := tensor.NewRNG(2)
			x := rng.Normal(tensor.Float32, 0, 1, 64, 1, 28, 28)
			y := make([]int64, 64)
			for i := range y {
				y[i] = int64(i % 10)
			}
			target := tensor.FromInt64(y, 64)
			b.ResetTimer()
			for range b.N {
				opt.ZeroGrad()
				loss := nn.CrossEntropyLoss(net.Forward(x), target, nn.ClassOptions{})
				loss.Backward()
				opt.Step()
			}
		})
	}
}
