package data

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkParseCSV parses 20000 rows of 10 numeric features and a class.
func BenchmarkParseCSV(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString("f0,f1,f2,f3,f4,f5,f6,f7,f8,f9,label\n")
	const rows = 20000
	for i := 0; i < rows; i++ {
		for j := 0; j < 10; j++ {
			buf.WriteString(strconv.FormatFloat(float64(i*j)*0.001, 'f', 4, 64))
			buf.WriteByte(',')
		}
		buf.WriteString("class" + strconv.Itoa(i%7) + "\n")
	}
	input := buf.Bytes()
	b.SetBytes(int64(len(input)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseCSV(bytes.NewReader(input), "bench.csv", CSVOptions{Label: "label"}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkParquetRead(b *testing.B) {
	t := &Table{Rows: 100000, Cols: 16, X: make([]float32, 100000*16), Labels: make([]int64, 100000), Classes: []string{"a", "b"}}
	for i := range t.X {
		t.X[i] = float32(i % 1000)
	}
	p := filepath.Join(b.TempDir(), "b.parquet")
	if err := WriteParquet(p, t); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadParquet(p, ParquetOptions{Label: "label"}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(t.Rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkLoadFashionMNISTTest(b *testing.B) {
	if _, err := os.Stat(FashionMNISTDir()); err != nil {
		b.Skip("Fashion-MNIST not installed")
	}
	for b.Loop() {
		if _, err := LoadFashionMNIST("t10k"); err != nil {
			b.Fatal(err)
		}
	}
}
