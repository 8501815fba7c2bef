package data

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// benchCSV returns 20000 rows of 10 numeric features and a class.
func benchCSV() []byte {
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
	return buf.Bytes()
}

// BenchmarkParseCSV parses 20000 rows of 10 numeric features and a class.
func BenchmarkParseCSV(b *testing.B) {
	const rows = 20000
	input := benchCSV()
	b.SetBytes(int64(len(input)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseCSV(bytes.NewReader(input), "bench.csv", CSVOptions{Label: "label"}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkParseCSVFrame reads BenchmarkParseCSV's input into a Frame and,
// in the "table" case, converts it to the same Table.
func BenchmarkParseCSVFrame(b *testing.B) {
	const rows = 20000
	input := benchCSV()
	for _, toTable := range []bool{false, true} {
		name := "frame"
		if toTable {
			name = "table"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(input)))
			b.ReportAllocs()
			for b.Loop() {
				f, err := ParseCSVFrame(bytes.NewReader(input), "bench.csv", CSVFrameOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if toTable {
					if _, err := f.Table(TableOptions{Label: "label"}); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkParquetReadFrame reads BenchmarkParquetRead's file into a Frame
// and converts it to the same Table.
func BenchmarkParquetReadFrame(b *testing.B) {
	p, rows := benchParquet(b)
	b.ReportAllocs()
	for b.Loop() {
		f, err := ReadParquetFrame(p, ParquetFrameOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Table(TableOptions{Label: "label"}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// benchParquet writes 100000 rows of 16 float32 features and a class label.
func benchParquet(b *testing.B) (path string, rows int) {
	t := &Table{Rows: 100000, Cols: 16, X: make([]float32, 100000*16), Labels: make([]int64, 100000), Classes: []string{"a", "b"}}
	for i := range t.X {
		t.X[i] = float32(i % 1000)
	}
	p := filepath.Join(b.TempDir(), "b.parquet")
	if err := WriteParquet(p, t); err != nil {
		b.Fatal(err)
	}
	return p, t.Rows
}

func BenchmarkParquetRead(b *testing.B) {
	p, rows := benchParquet(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadParquet(p, ParquetOptions{Label: "label"}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
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
