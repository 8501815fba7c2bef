// Command transfer writes Fashion-MNIST as Parquet partitions for the
// transfer-learning example (see README.md next to it): a CNN trained on
// one set of images, its penultimate layer's activations extracted by
// `fathom predict --output-layer` for two others, and a logistic
// regression fitted on those features with `fathom ml fit`.
//
//	go run ./examples/transfer -out runs/transfer/images
//
// It writes three data sets of disjoint training images under -out:
// pretrain/ (-pretrain rows, to train the CNN), train/ and test/ (-rows
// each, for the downstream model), each split into -parts Parquet files
// of an id, the class index as label and the 784 pixels (scaled to
// [0, 1]) as one vector column "image".
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/internal/atomicfile"
)

func main() {
	out := flag.String("out", filepath.Join("runs", "transfer", "images"), "output directory")
	pretrain := flag.Int("pretrain", 20000, "images to train the CNN on")
	rows := flag.Int("rows", 10000, "images in each of train/ and test/")
	parts := flag.Int("parts", 4, "Parquet files per data set")
	flag.Parse()
	if err := run(*out, *pretrain, *rows, *parts); err != nil {
		log.Fatal(err)
	}
}

func run(out string, pretrain, rows, parts int) error {
	t, err := data.LoadFashionMNIST("train")
	if err != nil {
		return fmt.Errorf("needs Fashion-MNIST (apt-get install dataset-fashion-mnist, or FATHOM_DATA): %w", err)
	}
	if pretrain+2*rows > t.Rows {
		return fmt.Errorf("-pretrain + 2 × -rows = %d, over the %d training images", pretrain+2*rows, t.Rows)
	}
	start := 0
	for _, set := range []struct {
		name string
		n    int
	}{{"pretrain", pretrain}, {"train", rows}, {"test", rows}} {
		per := (set.n + parts - 1) / parts
		for k := 0; k*per < set.n; k++ {
			lo, hi := start+k*per, start+min((k+1)*per, set.n)
			if err := writePart(filepath.Join(out, set.name, fmt.Sprintf("part-%02d.parquet", k)), t, lo, hi); err != nil {
				return err
			}
		}
		fmt.Printf("%s: %d images in %s\n", set.name, set.n, filepath.Join(out, set.name))
		start += set.n
	}
	return nil
}

// writePart writes the images lo..hi-1 of t.
func writePart(path string, t *data.Table, lo, hi int) error {
	n := hi - lo
	id := make([]int64, n)
	for i := range id {
		id[i] = int64(lo + i)
	}
	f, err := data.NewFrame(data.NewColumn("id", id, nil), data.NewColumn("label", t.Labels[lo:hi], nil),
		data.NewVectorColumn32("image", t.Cols, t.X[lo*t.Cols:hi*t.Cols], nil, nil))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		pw, err := data.NewParquetFrameWriter(w, f, data.ParquetWriteOptions{})
		if err != nil {
			return err
		}
		if err := pw.Write(f); err != nil {
			return err
		}
		return pw.Close()
	})
}
