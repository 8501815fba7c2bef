//go:build unix

package data

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParquetMatrixTruncatedWhileMapped: a file cut short after the
// matrix reader opened it (the pages are read straight from the mapping)
// gives an error naming it from Next and NextColumns, not a crash.
func TestParquetMatrixTruncatedWhileMapped(t *testing.T) {
	for _, cols := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "t.parquet")
		const n, w = 4000, 16
		writeFloatSpec(t, path, floatSpec{n: n, w: w, rg: 1000, nullable: func(int) bool { return false },
			value: func(i, j int) float32 { return float32(i*w + j) }})
		m, err := OpenParquetMatrix(path, MatrixOptions{Width: w, BatchSize: 1000})
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]float32, 1000*w)
		if _, _, err := m.Next(buf); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, 4096); err != nil {
			t.Fatal(err)
		}
		if cols {
			_, _, err = m.NextColumns(buf, 1000)
		} else {
			_, _, err = m.Next(buf)
		}
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Fatalf("after truncation: %v, want an error naming the file", err)
		}
		m.Close()
	}
}
