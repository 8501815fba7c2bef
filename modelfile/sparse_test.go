package modelfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/safetensors"
	"github.com/fathom-ml/fathom/tensor"
)

func sparseModel(t *testing.T) *Model {
	t.Helper()
	spec := nn.Spec{Input: []int{40}, Layers: []nn.LayerSpec{{Type: "linear", Out: 64}, {Type: "relu"}, {Type: "linear", Out: 3}}}
	net, _, err := spec.Build(tensor.NewRNG(1))
	if err != nil {
		t.Fatal(err)
	}
	return &Model{Net: net, Spec: spec, Task: metrics.Classification, Classes: []string{"a", "b", "c"}}
}

// TestSparseRoundTrip: a weight that is 90% zeros is stored as mask and
// values (the file shrinks), loads back exactly, and a dense model is
// stored as before.
func TestSparseRoundTrip(t *testing.T) {
	dir := t.TempDir()
	m := sparseModel(t)
	dense := filepath.Join(dir, "dense.safetensors")
	if err := m.Save(dense); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.ReadFile(dense)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.Metadata[SparseKey]; ok {
		t.Fatal("a dense model was stored sparse")
	}
	w := m.Net.At(0).(*nn.Linear).Weight.Float32s()
	for i := range w {
		if i%10 != 3 {
			w[i] = 0
		}
	}
	sparse := filepath.Join(dir, "sparse.safetensors")
	if err := m.Save(sparse); err != nil {
		t.Fatal(err)
	}
	ds, _ := os.Stat(dense)
	ss, _ := os.Stat(sparse)
	if !(ss.Size() < ds.Size()*4/10) {
		t.Errorf("sparse file %d bytes, dense %d", ss.Size(), ds.Size())
	}
	back, err := Load(sparse)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]*tensor.Tensor{"0.weight": m.Net.At(0).(*nn.Linear).Weight, "2.weight": m.Net.At(2).(*nn.Linear).Weight} {
		var got *tensor.Tensor
		for _, e := range nn.StateEntries(back.Net) {
			if e.Name == name {
				got = e.Tensor
			}
		}
		g, wv := got.Float32s(), want.Float32s()
		for i := range wv {
			if g[i] != wv[i] {
				t.Fatalf("%s[%d] = %v after loading, want %v", name, i, g[i], wv[i])
			}
		}
	}
}

func TestDenseEntriesErrors(t *testing.T) {
	entries, meta := SparseEntries([]safetensors.Entry{TensorEntry("w", tensor.FromFloat32(make([]float32, 300), 300))})
	if meta == nil || len(entries) != 2 {
		t.Fatalf("an all-zero tensor was not stored sparse: %v", meta)
	}
	bad := append([]safetensors.Entry(nil), entries...)
	bad[0].Data = []byte{1, 2}
	if _, err := DenseEntries(bad, meta); err == nil || !strings.Contains(err.Error(), `"w"`) {
		t.Errorf("short mask: %v", err)
	}
	bad = append([]safetensors.Entry(nil), entries...)
	bad[0].Data = append([]byte{1}, make([]byte, len(entries[0].Data)-1)...)
	if _, err := DenseEntries(bad, meta); err == nil || !strings.Contains(err.Error(), "nonzeros") {
		t.Errorf("mask and values disagree: %v", err)
	}
	if _, err := DenseEntries(entries[:1], meta); err == nil {
		t.Error("missing values accepted")
	}
}
