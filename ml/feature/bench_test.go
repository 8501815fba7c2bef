package feature

import (
	"fmt"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

// benchFrame is 100k rows: a 20-wide vector, a string category of 1000
// values, a numeric column.
func benchFrame(b *testing.B) *data.Frame {
	n, w := 100_000, 20
	v := make([]float64, n*w)
	cat := make([]string, n)
	x := make([]float64, n)
	for i := range n {
		for j := range w {
			v[i*w+j] = float64((i*31+j*7)%97) / 7
		}
		cat[i] = fmt.Sprintf("c%d", (i*7919)%1000)
		x[i] = float64(i % 13)
	}
	f, err := data.NewFrame(ml.VectorOut("features", w, v), data.NewColumn("cat", cat, nil), data.NewColumn("x", x, nil))
	if err != nil {
		b.Fatal(err)
	}
	return f
}

func BenchmarkStringIndexer(b *testing.B) {
	f := benchFrame(b)
	s := NewStringIndexer()
	s.InputCol, s.OutputCol = "cat", "idx"
	b.ResetTimer()
	for range b.N {
		m, err := s.Fit(ml.Local(f))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.Transform(f); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStandardScaler(b *testing.B) {
	f := benchFrame(b)
	s := NewStandardScaler()
	s.WithMean = true
	b.ResetTimer()
	for range b.N {
		m, err := s.Fit(ml.Local(f))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.Transform(f); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVectorAssembler(b *testing.B) {
	f := benchFrame(b)
	a := NewVectorAssembler("features", "x")
	a.OutputCol = "all"
	b.ResetTimer()
	for range b.N {
		if _, err := a.Transform(f); err != nil {
			b.Fatal(err)
		}
	}
}
