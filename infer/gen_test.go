package infer_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/fathom-ml/fathom/data"
)

var (
	genDir   = flag.String("infer.gen", "", "write Fashion-MNIST-like Parquet partitions into this directory (TestGeneratePartitions)")
	genRows  = flag.Int("infer.gen.rows", 1_000_000, "rows in all")
	genParts = flag.Int("infer.gen.parts", 20, "partitions")
	genGroup = flag.Int("infer.gen.group", 10000, "rows per row group")
	genRaw   = flag.Bool("infer.gen.uncompressed", false, "uncompressed pages (the default is Snappy)")
	genVec   = flag.Bool("infer.gen.vector", false, "one vector column \"image\" (fixed-size list of 784 float32) instead of 784 columns")
	genDict  = flag.Bool("infer.gen.dict", false, "dictionary-encoded columns, as PyArrow and Spark write by default")
)

// TestGeneratePartitions writes the data of the scale run in
// docs/inference.md when -infer.gen DIR is given: -infer.gen.parts
// Parquet partitions (DIR/part=<k>/data.parquet) of -infer.gen.rows rows
// in all, each an id and 784 float32 pixel columns c1..c784 (the layout
// data.WriteParquet gives a table) cycling through the Fashion-MNIST
// training images, in row groups of -infer.gen.group rows (10,000).
//
//	go test ./infer -run TestGeneratePartitions -infer.gen /tmp/fmnist-parts
func TestGeneratePartitions(t *testing.T) {
	if *genDir == "" {
		t.Skip("-infer.gen DIR not given")
	}
	train, err := data.LoadFashionMNIST("train")
	if err != nil {
		t.Skip(err)
	}
	per := *genRows / *genParts
	group := *genGroup
	for k := range *genParts {
		path := filepath.Join(*genDir, "part="+strconv.Itoa(k), "data.parquet")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		fh, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		var w *data.ParquetFrameWriter
		for s := 0; s < per; s += group {
			n := min(group, per-s)
			cols := []data.Column{}
			id := make([]int64, n)
			for i := range id {
				id[i] = int64(k*per + s + i)
			}
			cols = append(cols, data.NewColumn("id", id, nil))
			if *genVec {
				img := make([]float32, n*train.Cols)
				for i := range n {
					r := int(id[i]) % train.Rows
					copy(img[i*train.Cols:(i+1)*train.Cols], train.X[r*train.Cols:(r+1)*train.Cols])
				}
				cols = append(cols, data.NewVectorColumn32("image", train.Cols, img, nil, nil))
			}
			for j := range train.Cols * btoi(!*genVec) {
				v := make([]float32, n)
				for i := range v {
					v[i] = train.X[(int(id[i])%train.Rows)*train.Cols+j]
				}
				cols = append(cols, data.NewColumn("c"+strconv.Itoa(j+1), v, nil))
			}
			f, err := data.NewFrame(cols...)
			if err != nil {
				t.Fatal(err)
			}
			if w == nil {
				if w, err = data.NewParquetFrameWriter(fh, f, data.ParquetWriteOptions{Uncompressed: *genRaw, Dictionary: *genDict}); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Write(f); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("%s: %d rows\n", path, per)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
