package job

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/data"
)

// TestDataSources trains briefly from Parquet, IDX and CSV copies of
// Iris and checks the splits each source gives.
func TestDataSources(t *testing.T) {
	dir := t.TempDir()
	iris, err := data.Iris()
	if err != nil {
		t.Fatal(err)
	}
	if err := data.WriteParquet(filepath.Join(dir, "iris.parquet"), iris); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "iris.csv"), data.IrisCSV(), 0o644); err != nil {
		t.Fatal(err)
	}
	// IDX: float32 examples [150, 4] and byte labels.
	if err := data.WriteIDX(filepath.Join(dir, "x.idx"), &data.IDX{Type: data.IDXFloat32, Dims: []int{150, 4}, Float32: iris.X}); err != nil {
		t.Fatal(err)
	}
	lab := make([]uint8, 150)
	for i, l := range iris.Labels {
		lab[i] = uint8(l)
	}
	if err := data.WriteIDX(filepath.Join(dir, "y.idx"), &data.IDX{Type: data.IDXUint8, Dims: []int{150}, Uint8: lab}); err != nil {
		t.Fatal(err)
	}
	model := "model:\n  - {type: linear, out: 16}\n  - {type: relu}\n  - {type: linear, out: 3}\n" +
		"optimizer: {type: adam, lr: 0.01}\nepochs: 30\nbatch_size: 16\nseed: 2\n"
	for _, test := range []struct {
		name, data                string
		train, eval, test, nClass int
	}{
		{"parquet", "data: {source: parquet, train: iris.parquet, label: species, standardize: true, validation: 0.25}\n", 90, 30, 30, 3},
		{"csv with test file", "data: {source: csv, train: iris.csv, test: iris.csv, label: species, columns: [petal_length, petal_width]}\n", 150, 150, 150, 3},
		{"idx", "data: {source: idx, images: x.idx, labels: y.idx, test_fraction: 0.2, standardize: true}\n", 120, 30, 30, 3},
	} {
		p := filepath.Join(dir, test.name+".yaml")
		if err := os.WriteFile(p, []byte(test.data+model), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := Load(p, []string{"output.dir=" + filepath.Join(dir, "out-"+strings.ReplaceAll(test.name, " ", "-"))})
		if err != nil {
			t.Fatalf("%s: %v", test.name, err)
		}
		s, err := c.LoadData()
		if err != nil {
			t.Fatalf("%s: %v", test.name, err)
		}
		if s.Train.Rows != test.train || s.Eval.Rows != test.eval || s.Test.Rows != test.test || len(s.Train.Classes) != test.nClass {
			t.Fatalf("%s: splits %d/%d/%d with %d classes", test.name, s.Train.Rows, s.Eval.Rows, s.Test.Rows, len(s.Train.Classes))
		}
		r, err := Run(t.Context(), c, RunOptions{})
		if err != nil {
			t.Fatalf("%s: %v", test.name, err)
		}
		if r.Test.Accuracy < 0.85 {
			t.Errorf("%s: test accuracy %v", test.name, r.Test.Accuracy)
		}
	}
}
