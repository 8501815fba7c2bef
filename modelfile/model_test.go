package modelfile

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/safetensors"
)

func testArch() *Architecture {
	return &Architecture{
		Model:       json.RawMessage(`{"input":[4],"layers":[{"type":"linear","out":3}]}`),
		Task:        "classification",
		Classes:     []string{"a", "b", "c"},
		Columns:     []string{"w", "x", "y", "z"},
		Label:       "species",
		Standardize: &Standardization{Mean: []float64{1, 2, 3, 4}, Std: []float64{0.5, 1, 0, 2}},
		Info:        map[string]any{"epochs": 3.0},
	}
}

func testWeights() []safetensors.Entry {
	return []safetensors.Entry{
		safetensors.F32("0.weight", []int{3, 4}, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}),
		safetensors.F32("0.bias", []int{3}, []float32{-1, 0, 1}),
	}
}

func TestModelRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.safetensors")
	arch := testArch()
	if err := WriteModel(path, arch, testWeights(), map[string]string{"note": "hi"}); err != nil {
		t.Fatal(err)
	}
	got, f, err := ReadModel(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Format != ModelFormat || !reflect.DeepEqual(got.Classes, arch.Classes) || !reflect.DeepEqual(got.Standardize, arch.Standardize) ||
		got.Label != "species" || !reflect.DeepEqual(got.Columns, arch.Columns) {
		t.Fatalf("architecture %+v, want %+v", got, arch)
	}
	var spec map[string]any
	if err := json.Unmarshal(got.Model, &spec); err != nil || spec["input"] == nil {
		t.Fatalf("model spec %s: %v", got.Model, err)
	}
	if f.Metadata["format"] != "pt" || f.Metadata["note"] != "hi" {
		t.Fatalf("metadata %v", f.Metadata)
	}
	w, ok := f.Tensor("0.weight")
	if !ok {
		t.Fatal("weight missing")
	}
	if v, _ := w.Float32s(); v[11] != 12 {
		t.Fatalf("weight %v", v)
	}
	// No temp files are left next to the model.
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Fatalf("directory holds %d entries, want only the model", len(ents))
	}
}

func TestModelErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.safetensors")
	if err := WriteModel(good, testArch(), testWeights(), nil); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain := filepath.Join(dir, "plain.safetensors")
	if err := safetensors.WriteFile(plain, testWeights(), nil); err != nil {
		t.Fatal(err)
	}
	for _, test := range []struct {
		name, path, want string
		format           bool
	}{
		{"truncated data", write("trunc.safetensors", raw[:len(raw)-5]), "trunc.safetensors", true},
		{"truncated header", write("head.safetensors", raw[:20]), "head.safetensors", true},
		{"empty", write("empty.safetensors", nil), "empty.safetensors", true},
		{"garbage", write("garbage.safetensors", []byte("hello, this is not a model file at all")), "garbage.safetensors", true},
		{"no architecture", plain, "not a fathom model", false},
		{"missing", filepath.Join(dir, "nope.safetensors"), "nope.safetensors", false},
	} {
		_, _, err := ReadModel(test.path)
		if err == nil || !strings.Contains(err.Error(), test.want) {
			t.Errorf("%s: error %v, want it to mention %q", test.name, err, test.want)
		}
		if test.format && !errors.Is(err, safetensors.ErrFormat) {
			t.Errorf("%s: error %v does not wrap ErrFormat", test.name, err)
		}
	}
}

func TestArchitectureValidate(t *testing.T) {
	for _, test := range []struct {
		name   string
		change func(a *Architecture)
		want   string
	}{
		{"format", func(a *Architecture) { a.Format = "other/9" }, "unsupported model format"},
		{"no model", func(a *Architecture) { a.Model = nil }, "no model spec"},
		{"task", func(a *Architecture) { a.Task = "ranking" }, "unknown task"},
		{"classes", func(a *Architecture) { a.Classes = nil }, "name its classes"},
		{"std length", func(a *Architecture) { a.Standardize.Std = a.Standardize.Std[:2] }, "4 means and 2"},
		{"std columns", func(a *Architecture) { a.Columns = a.Columns[:3] }, "covers 4 columns, the model reads 3"},
	} {
		a := testArch()
		a.Format = ModelFormat
		test.change(a)
		js, _ := json.Marshal(a)
		_, err := ParseArchitecture(map[string]string{ArchitectureKey: string(js)})
		if err == nil || !strings.Contains(err.Error(), test.want) {
			t.Errorf("%s: error %v, want %q", test.name, err, test.want)
		}
	}
	_, err := ParseArchitecture(map[string]string{ArchitectureKey: `{"format":"fathom-model/1","bogus":1}`})
	if err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("unknown field: %v", err)
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.ckpt")
	c := &Checkpoint{
		Epoch: 2, Step: 7, GlobalStep: 99,
		Model:          testWeights(),
		Optimizer:      []safetensors.Entry{safetensors.F32("0.exp_avg", []int{3}, []float32{1, 2, 3})},
		OptimizerState: json.RawMessage(`{"optimizer":"Adam"}`),
		RNG:            map[string][]byte{"2": {1, 2, 3, 250}},
		Trainer:        json.RawMessage(`{"bad_epochs":1}`),
	}
	if err := WriteCheckpoint(path, c); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Epoch != 2 || got.Step != 7 || got.GlobalStep != 99 || len(got.Model) != 2 || len(got.Optimizer) != 1 ||
		got.Optimizer[0].Name != "0.exp_avg" || !reflect.DeepEqual(got.RNG, c.RNG) ||
		string(got.OptimizerState) != `{"optimizer":"Adam"}` || string(got.Trainer) != `{"bad_epochs":1}` {
		t.Fatalf("checkpoint %+v", got)
	}
	names := map[string]bool{}
	for _, e := range got.Model {
		names[e.Name] = true
	}
	if !names["0.weight"] || !names["0.bias"] {
		t.Fatalf("model tensors %v", names)
	}
	raw, _ := os.ReadFile(path)
	bad := filepath.Join(t.TempDir(), "bad.ckpt")
	os.WriteFile(bad, raw[:len(raw)/2], 0o644)
	if _, err := ReadCheckpoint(bad); !errors.Is(err, safetensors.ErrFormat) || !strings.Contains(err.Error(), "bad.ckpt") {
		t.Fatalf("truncated checkpoint: %v", err)
	}
	model := filepath.Join(t.TempDir(), "m.safetensors")
	WriteModel(model, testArch(), testWeights(), nil)
	if _, err := ReadCheckpoint(model); err == nil || !strings.Contains(err.Error(), "not a fathom checkpoint") {
		t.Fatalf("model file read as checkpoint: %v", err)
	}
}

// FuzzReadModel feeds arbitrary bytes to the model reader, which must
// return an error or a valid architecture, never panic.
func FuzzReadModel(f *testing.F) {
	dir := f.TempDir()
	good := filepath.Join(dir, "seed.safetensors")
	if err := WriteModel(good, testArch(), testWeights(), nil); err != nil {
		f.Fatal(err)
	}
	raw, _ := os.ReadFile(good)
	f.Add(raw)
	f.Add(raw[:len(raw)/2])
	f.Add([]byte{8, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' ', ' ', ' ', ' ', ' '})
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := safetensors.Read(strings.NewReader(string(b)))
		if err != nil {
			return
		}
		if a, err := ParseArchitecture(file.Metadata); err == nil {
			if err := a.Validate(); err != nil {
				t.Fatalf("ParseArchitecture accepted an invalid architecture: %v", err)
			}
		}
	})
}
