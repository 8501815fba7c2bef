package modelfile_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/fathom-ml/fathom/modelfile"
)

// Serving a model needs package modelfile only: load the file (the network
// is rebuilt from the architecture it holds), save it elsewhere, load it
// back and predict from raw float32 rows. testdata/tiny.safetensors is a
// two-class linear model over the columns x and y, regenerated with
// `go test ./modelfile -run TestTinyModelFile -update`.
func Example() {
	m, err := modelfile.Load("testdata/tiny.safetensors")
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "modelfile-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.safetensors")
	if err := m.Save(path); err != nil {
		log.Fatal(err)
	}
	m, err = modelfile.Load(path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.Task, m.Columns, m.Classes)

	// Two rows of (x, y), row-major.
	p, err := m.PredictRows([]float32{0, 1, 2, -1}, 2)
	if err != nil {
		log.Fatal(err)
	}
	for i, k := range p.Class {
		fmt.Printf("row %d: %s (p=%.3f)\n", i+1, p.Classes[k], p.Probs[2*i+int(k)])
	}
	// Output:
	// classification [x y] [below above]
	// row 1: above (p=1.000)
	// row 2: below (p=1.000)
}
