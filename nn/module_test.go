package nn_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// block is a custom module with a submodule list and a buffer.
type block struct {
	nn.Base
	layers *nn.ModuleList[*nn.Linear]
	norm   *nn.BatchNorm
	scale  *tensor.Tensor
	steps  *tensor.Tensor
}

func newBlock(rng *tensor.RNG) *block {
	b := &block{layers: nn.NewModuleList(nn.NewLinear(rng, 3, 4), nn.NewLinear(rng, 4, 3)), norm: nn.NewBatchNorm1d(3),
		scale: tensor.Ones(tensor.Float32, 3), steps: tensor.Scalar(0, tensor.Int64)}
	b.RegisterParameter("scale", &b.scale)
	b.RegisterBuffer("steps", &b.steps)
	b.Register("layers", b.layers)
	b.Register("norm", b.norm)
	return b
}

func (b *block) Forward(x *tensor.Tensor) *tensor.Tensor {
	for _, l := range b.layers.All() {
		x = l.Forward(x)
	}
	return b.norm.Forward(x).Mul(b.scale)
}

func names(ns []nn.Named) string {
	var s []string
	for _, n := range ns {
		s = append(s, n.Name)
	}
	return strings.Join(s, " ")
}

func TestModuleWalks(t *testing.T) {
	rng := tensor.NewRNG(31)
	m := nn.NewSequential(newBlock(rng), nn.NewReLU(), nn.NewLinear(rng, 3, 2))
	if got, want := names(m.NamedParameters()), "0.scale 0.layers.0.weight 0.layers.0.bias 0.layers.1.weight 0.layers.1.bias 0.norm.weight 0.norm.bias 2.weight 2.bias"; got != want {
		t.Fatalf("parameters:\n got %s\nwant %s", got, want)
	}
	if got, want := names(m.NamedBuffers()), "0.steps 0.norm.running_mean 0.norm.running_var 0.norm.num_batches_tracked"; got != want {
		t.Fatalf("buffers:\n got %s\nwant %s", got, want)
	}
	var mods []string
	for _, nm := range m.NamedModules() {
		mods = append(mods, nm.Name)
	}
	if got, want := strings.Join(mods, ","), ",0,0.layers,0.layers.0,0.layers.1,0.norm,1,2"; got != want {
		t.Fatalf("modules: got %q, want %q", got, want)
	}
	if n := m.NumParameters(); n != 3+12+4+12+3+3+3+6+2 {
		t.Fatalf("NumParameters = %d", n)
	}
	for _, p := range m.Parameters() {
		if !p.RequiresGrad() {
			t.Fatal("registered parameters must require grad")
		}
	}
	desc := nn.Describe(m)
	for _, want := range []string{"(0): block(", "(layers): ModuleList(", "(0): Linear(in=3, out=4, bias=true)", "(norm): BatchNorm1d(3", "(2): Linear(in=3, out=2", "parameters: 48"} {
		if !strings.Contains(desc, want) {
			t.Errorf("Describe lacks %q:\n%s", want, desc)
		}
	}
}

func TestSharedParameterListedOnce(t *testing.T) {
	rng := tensor.NewRNG(32)
	l := nn.NewLinear(rng, 3, 3)
	m := nn.NewSequential(l, nn.NewTanh(), l) // weight tying
	if got := names(m.NamedParameters()); got != "0.weight 0.bias" {
		t.Fatalf("shared parameters listed as %q", got)
	}
	if sd := nn.StateDict(m); len(sd) != 4 {
		t.Fatalf("state dict has %d entries, want 4 (both names, as PyTorch)", len(sd))
	}
}

func TestTrainEvalAndFreeze(t *testing.T) {
	rng := tensor.NewRNG(33)
	b := newBlock(rng)
	m := nn.NewSequential(b, nn.NewDropout(rng, 0.5))
	m.Eval()
	for _, nm := range m.NamedModules() {
		if nm.Module.Training() {
			t.Fatalf("%q still training after Eval", nm.Name)
		}
	}
	m.Train()
	if !b.norm.Training() {
		t.Fatal("Train did not reach a grandchild")
	}
	// Freeze the block (a pretrained backbone), train a head on top.
	head := nn.NewLinear(rng, 3, 2)
	b.SetRequiresGrad(false)
	x := rng.Normal(tensor.Float32, 0, 1, 8, 3)
	loss := head.Forward(b.Forward(x)).SumAll()
	loss.Backward()
	for _, p := range b.Parameters() {
		if p.RequiresGrad() || p.Grad() != nil {
			t.Fatal("a frozen parameter requires or received a gradient")
		}
	}
	if head.Weight.Grad() == nil {
		t.Fatal("the head received no gradient")
	}
	b.SetRequiresGrad(true)
	if !b.layers.At(0).Weight.RequiresGrad() {
		t.Fatal("unfreezing failed")
	}
}

func TestToConvertsDTypes(t *testing.T) {
	b := newBlock(tensor.NewRNG(34))
	w := b.layers.At(0).Weight.Clone()
	b.To(tensor.Float64)
	for _, p := range append(b.Parameters(), b.norm.RunningMean, b.norm.RunningVar) {
		if p.DType() != tensor.Float64 {
			t.Fatalf("dtype %v after To(Float64)", p.DType())
		}
	}
	if !b.layers.At(0).Weight.RequiresGrad() || b.norm.RunningMean.RequiresGrad() {
		t.Fatal("To changed requires-grad flags")
	}
	if b.steps.DType() != tensor.Int64 || b.norm.NumBatchesTracked.DType() != tensor.Int64 {
		t.Fatal("To converted an integer buffer")
	}
	assertClose(t, "values kept", b.layers.At(0).Weight, w.To(tensor.Float64), 0)
	b.Forward(tensor.Ones(tensor.Float64, 4, 3)) // runs in float64
}

func TestRegisterPanics(t *testing.T) {
	for name, f := range map[string]func(b *nn.Base){
		"dotted name": func(b *nn.Base) { b.Register("a.b", nn.NewReLU()) },
		"duplicate":   func(b *nn.Base) { b.Register("x", nn.NewReLU()); b.Register("x", nn.NewTanh()) },
		"param vs child": func(b *nn.Base) {
			p := tensor.Zeros(tensor.Float32, 1)
			b.Register("x", nn.NewReLU())
			b.RegisterParameter("x", &p)
		},
		"int parameter": func(b *nn.Base) { p := tensor.Zeros(tensor.Int64, 1); b.RegisterParameter("p", &p) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f(&nn.Base{})
		}()
	}
}

func TestStateDictRoundTrip(t *testing.T) {
	rng := tensor.NewRNG(35)
	src := nn.NewSequential(newBlock(rng), nn.NewLinear(rng, 3, 2))
	src.Forward(rng.Normal(tensor.Float32, 0, 1, 5, 3)) // move the running stats
	dst := nn.NewSequential(newBlock(tensor.NewRNG(99)), nn.NewLinear(rng, 3, 2))
	held := dst.Parameters() // an optimizer's references stay valid
	if err := nn.LoadStateDict(dst, nn.StateDict(src), true); err != nil {
		t.Fatal(err)
	}
	sd := nn.StateDict(src)
	for k, v := range nn.StateDict(dst) {
		assertClose(t, k, v, sd[k], 0)
	}
	for i, p := range dst.Parameters() {
		if p != held[i] {
			t.Fatal("LoadStateDict replaced a parameter instead of copying into it")
		}
	}
	x := rng.Normal(tensor.Float32, 0, 1, 4, 3)
	src.Eval()
	dst.Eval()
	assertClose(t, "same outputs", dst.Forward(x), src.Forward(x), 0)

}

func TestLoadStateDictErrors(t *testing.T) {
	rng := tensor.NewRNG(36)
	m := nn.NewSequential(nn.NewLinear(rng, 3, 2), nn.NewBatchNorm1d(2))
	sd := nn.StateDict(m)
	delete(sd, "1.running_var")
	sd["2.weight"] = tensor.Zeros(tensor.Float32, 1)
	sd["0.bias"] = tensor.Zeros(tensor.Float32, 3)
	before := m.At(0).(*nn.Linear).Weight.Clone()
	sd["0.weight"] = tensor.Full(tensor.Float32, 7, 2, 3)
	err := nn.LoadStateDict(m, sd, true)
	var se *nn.StateDictError
	if !errors.As(err, &se) {
		t.Fatalf("error %v is not a *StateDictError", err)
	}
	if strings.Join(se.Missing, ",") != "1.running_var" || strings.Join(se.Unexpected, ",") != "2.weight" || len(se.Mismatched) != 1 || se.Mismatched[0].Key != "0.bias" {
		t.Fatalf("error fields %+v", se)
	}
	for _, want := range []string{"missing keys: 1.running_var", "unexpected keys: 2.weight", "size mismatch for 0.bias: state dict has shape [3], model has [2]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	assertClose(t, "nothing copied on error", m.At(0).(*nn.Linear).Weight, before, 0)
	// Non-strict: missing and unexpected keys are fine, shapes are not.
	if err := nn.LoadStateDict(m, sd, false); err == nil || !strings.Contains(err.Error(), "0.bias") {
		t.Fatalf("non-strict load with a shape mismatch: %v", err)
	}
	delete(sd, "0.bias")
	if err := nn.LoadStateDict(m, sd, false); err != nil {
		t.Fatal(err)
	}
	if m.At(0).(*nn.Linear).Weight.At(1, 2) != 7 {
		t.Fatal("non-strict load did not copy")
	}
}

// TestConcurrentEvalForward runs one model in eval mode from several
// goroutines (run with -race).
func TestConcurrentEvalForward(t *testing.T) {
	rng := tensor.NewRNG(37)
	m := nn.NewSequential(nn.NewLinear(rng, 8, 16), nn.NewBatchNorm1d(16), nn.NewReLU(), nn.NewDropout(rng, 0.5), nn.NewLinear(rng, 16, 3))
	m.Eval()
	x := rng.Normal(tensor.Float32, 0, 1, 5, 8)
	want := m.Forward(x.NoGrad())
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for range 8 {
		wg.Go(func() {
			for range 20 {
				y := m.Forward(x.NoGrad())
				if y.RequiresGrad() || !sameValues(y.Values(), want.Values()) {
					errs <- "different or recorded output"
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}
