package data

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// batchFrame has a column of every kind the writer takes, with nulls.
func batchFrame(t *testing.T, n int) *Frame {
	t.Helper()
	f64 := make([]float64, n)
	f32 := make([]float32, n)
	i64 := make([]int64, n)
	str := make([]string, n)
	b := make([]bool, n)
	valid := make([]bool, n)
	vec := make([]float32, 3*n)
	for i := range n {
		f64[i], f32[i], i64[i] = float64(i)/4, float32(i)/8, int64(i*i)
		str[i], b[i], valid[i] = string(rune('a'+i%26)), i%3 == 0, i%5 != 0
		for e := range 3 {
			vec[i*3+e] = float32(i + e)
		}
	}
	f, err := NewFrame(NewColumn("f64", f64, valid), NewColumn("f32", f32, nil), NewColumn("i64", i64, nil),
		NewColumn("s", str, valid), NewColumn("b", b, nil), NewVectorColumn32("v", 3, vec, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func writeFrameFile(t *testing.T, path string, f *Frame, groups int) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewParquetFrameWriter(&buf, f, ParquetWriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	per := (f.Len() + groups - 1) / groups
	for lo := 0; lo < f.Len(); lo += per {
		if err := w.Write(f.Slice(lo, min(lo+per, f.Len()))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// framesEqual compares two frames cell by cell through their String form
// and null masks.
func framesEqual(t *testing.T, got, want *Frame) {
	t.Helper()
	if !slices.Equal(got.Names(), want.Names()) || got.Len() != want.Len() {
		t.Fatalf("frame %v × %d, want %v × %d", got.Names(), got.Len(), want.Names(), want.Len())
	}
	for j, wc := range want.Columns() {
		gc := got.Columns()[j]
		if gc.Kind() != wc.Kind() {
			t.Fatalf("column %s: kind %s, want %s", wc.Name(), gc.Kind(), wc.Kind())
		}
		for i := range want.Len() {
			if gc.IsNull(i) != wc.IsNull(i) {
				t.Fatalf("column %s row %d: null %v, want %v", wc.Name(), i, gc.IsNull(i), wc.IsNull(i))
			}
		}
	}
	for j, wc := range want.Columns() {
		gc := got.Columns()[j]
		for i := range want.Len() {
			if g, w := cellText(gc, i), cellText(wc, i); g != w {
				t.Fatalf("column %s row %d: %s, want %s", wc.Name(), i, g, w)
			}
		}
	}
}

// cellText formats a cell ("null" for a null).
func cellText(c Column, i int) string {
	if c.IsNull(i) {
		return "null"
	}
	switch c := c.(type) {
	case *ScalarColumn[float64]:
		return fmt.Sprint(c.Value(i))
	case *ScalarColumn[float32]:
		return fmt.Sprint(c.Value(i))
	case *ScalarColumn[int64]:
		return fmt.Sprint(c.Value(i))
	case *ScalarColumn[string]:
		return c.Value(i)
	case *ScalarColumn[bool]:
		return fmt.Sprint(c.Value(i))
	case *VectorColumn:
		var v []float64
		for e := range c.Width() {
			v = append(v, c.At(i, e))
		}
		return fmt.Sprint(v)
	}
	return "?"
}

// TestParquetFrameWriterRoundTrip: what the writer writes in several row
// groups, ReadParquetFrame reads back, kinds and nulls included.
func TestParquetFrameWriterRoundTrip(t *testing.T) {
	f := batchFrame(t, 23)
	path := filepath.Join(t.TempDir(), "f.parquet")
	writeFrameFile(t, path, f, 3)
	got, err := ReadParquetFrame(path, ParquetFrameOptions{})
	if err != nil {
		t.Fatal(err)
	}
	framesEqual(t, got, f)
}

// TestParquetBatches: OpenBatches streams the file in batches of the
// size asked (across row groups), together the whole file, with a column
// selection in its order.
func TestParquetBatches(t *testing.T) {
	f := batchFrame(t, 50)
	path := filepath.Join(t.TempDir(), "f.parquet")
	writeFrameFile(t, path, f, 4)
	for _, size := range []int{1, 7, 13, 50, 100} {
		r, err := OpenBatches(path, BatchOptions{BatchSize: size, Columns: []string{"v", "s", "i64"}})
		if err != nil {
			t.Fatal(err)
		}
		var parts []*Frame
		for {
			b, bad, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(bad) > 0 || b.Len() > size || b.Len() == 0 {
				t.Fatalf("size %d: a batch of %d rows, bad %v", size, b.Len(), bad)
			}
			parts = append(parts, b)
		}
		r.Close()
		want, _ := f.Select("v", "s", "i64")
		row := 0
		for _, p := range parts {
			framesEqual(t, p, want.Slice(row, row+p.Len()))
			row += p.Len()
		}
		if row != 50 {
			t.Fatalf("size %d: %d rows in all", size, row)
		}
	}
	if _, err := OpenBatches(path, BatchOptions{Columns: []string{"nope"}}); err == nil {
		t.Fatal("a missing column was accepted")
	}
}

// TestCSVBatches: kinds from the first batch, bad rows (a field too many,
// text in a number column of a later batch) reported with their row in
// the batch and read as nulls.
func TestCSVBatches(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.csv")
	os.WriteFile(path, []byte("id,x,name\n1,0.5,a\n2,1.5,b\n3,NA,c\n4,oops,d\n5,2,e,extra\n6,3,\n"), 0o644)
	r, err := OpenBatches(path, BatchOptions{BatchSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b1, bad1, err := r.Next()
	if err != nil || len(bad1) != 0 || b1.Len() != 3 {
		t.Fatalf("first batch: %v rows, bad %v, %v", b1.Len(), bad1, err)
	}
	if k := b1.Col("x").Kind(); k != Float64 || !b1.Col("x").IsNull(2) {
		t.Fatalf("x is %s, row 3 null %v", k, b1.Col("x").IsNull(2))
	}
	b2, bad2, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	want := []BadRow{{0, `column "x": cannot parse "oops" as a number`}, {1, "4 fields, the header has 3"}}
	if !slices.Equal(bad2, want) {
		t.Fatalf("bad rows %+v, want %+v", bad2, want)
	}
	if b2.Len() != 3 || !b2.Col("x").IsNull(0) || !b2.Col("name").IsNull(2) {
		t.Fatalf("second batch %s", b2)
	}
	if _, _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last batch: %v, want io.EOF", err)
	}
}

// A UTF-8 byte order mark is not part of the first column's name, as with
// ReadCSVFrame.
func TestCSVBatchesBOM(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bom.csv")
	if err := os.WriteFile(path, []byte("\ufeffid,x\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rd, err := OpenBatches(path, BatchOptions{Columns: []string{"id"}})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if got := rd.Columns(); !slices.Equal(got, []string{"id"}) {
		t.Fatalf("columns %q, want [id]", got)
	}
	f, _, err := rd.Next()
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := f.Float64s("id"); !slices.Equal(v, []float64{1}) {
		t.Fatalf("id %v, want [1]", v)
	}
}
