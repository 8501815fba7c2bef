package modelfile_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

func newNet(seed uint64) *nn.Sequential {
	rng := tensor.NewRNG(seed)
	return nn.NewSequential(nn.NewLinear(rng, 3, 4), nn.NewBatchNorm1d(4), nn.NewReLU(), nn.NewLinear(rng, 4, 2))
}

func TestSafetensorsRoundTrip(t *testing.T) {
	rng := tensor.NewRNG(1)
	src := newNet(2)
	src.Forward(rng.Normal(tensor.Float32, 0, 1, 5, 3)) // move the running stats
	path := filepath.Join(t.TempDir(), "model.safetensors")
	if err := modelfile.SaveSafetensors(path, src, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	fresh := newNet(3)
	meta, err := modelfile.LoadSafetensors(path, fresh, true)
	if err != nil {
		t.Fatal(err)
	}
	if meta["format"] != "pt" {
		t.Fatalf("metadata %v", meta)
	}
	want := nn.StateDict(src)
	for k, v := range nn.StateDict(fresh) {
		if !slices.Equal(v.Values(), want[k].Values()) {
			t.Fatalf("%s: %v after the round trip, want %v", k, v.Values(), want[k].Values())
		}
	}
	if fresh.At(1).(*nn.BatchNorm).NumBatchesTracked.Item() != 1 {
		t.Fatal("num_batches_tracked not restored")
	}
	x := rng.Normal(tensor.Float32, 0, 1, 4, 3)
	src.Eval()
	fresh.Eval()
	if !slices.Equal(fresh.Forward(x).Float32s(), src.Forward(x).Float32s()) {
		t.Fatal("outputs differ after the file round trip")
	}
	// Entries come in the state dict's one order.
	var names []string
	for _, e := range modelfile.StateEntries(src) {
		names = append(names, e.Name)
	}
	var order []string
	for _, e := range nn.StateEntries(src) {
		order = append(order, e.Name)
	}
	if !slices.Equal(names, order) || names[0] != "0.weight" {
		t.Fatalf("entry order %v, want %v", names, order)
	}

	// A corrupt file names the path.
	bad := filepath.Join(t.TempDir(), "bad.safetensors")
	os.WriteFile(bad, []byte("not a model"), 0o644)
	if _, err := modelfile.LoadSafetensors(bad, fresh, true); err == nil || !strings.Contains(err.Error(), "bad.safetensors") {
		t.Fatalf("corrupt file: %v", err)
	}
}

func TestTensorEntryAllDTypes(t *testing.T) {
	for _, x := range []*tensor.Tensor{
		tensor.FromFloat32([]float32{1.5, -2, 3e-8, 4, 5, 6}, 2, 3),
		tensor.FromFloat64([]float64{1.25, -1e300}, 2),
		tensor.FromInt64([]int64{-1 << 62, 7}, 2, 1),
		tensor.FromInt32([]int32{-5, 1 << 30}, 2),
		tensor.FromUint8([]uint8{0, 255}, 2),
		tensor.FromInt8([]int8{-128, 0, 127}, 3),
		tensor.FromBool([]bool{true, false, true}, 3),
		tensor.FromFloat32([]float32{1.5, -2}, 2).To(tensor.Float16),
		tensor.FromFloat32([]float32{1.5, -2}, 2).To(tensor.BFloat16),
		tensor.Scalar(3, tensor.Int64),
		tensor.FromFloat32([]float32{1, 2, 3, 4, 5, 6}, 2, 3).T(), // non-contiguous
	} {
		e := modelfile.TensorEntry("t", x)
		y, err := modelfile.EntryTensor(e)
		if err != nil {
			t.Fatal(err)
		}
		if y.DType() != x.DType() || !slices.Equal(y.Shape(), x.Shape()) || !slices.Equal(y.Values(), x.Values()) {
			t.Fatalf("%v %v round-tripped to %v %v", x.DType(), x, y.DType(), y)
		}
	}
	e := modelfile.TensorEntry("t", tensor.Zeros(tensor.Float32, 2))
	e.Data = e.Data[:5]
	if _, err := modelfile.EntryTensor(e); err == nil {
		t.Fatal("short data accepted")
	}
	e.DType = "U16"
	if _, err := modelfile.EntryTensor(e); err == nil || !strings.Contains(err.Error(), "U16") {
		t.Fatalf("unsupported dtype: %v", err)
	}
}
