package data

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
)

// TestWriteParquetFrame: a frame written to a path reads back equal, in
// row groups of 65,536 rows, its columns REQUIRED when asked, its
// metadata kept, no temporary file left; an empty frame is a file of one
// empty row group; nulls in a required column are an error and leave no
// file.
func TestWriteParquetFrame(t *testing.T) {
	const n = 70000
	x := make([]float64, n)
	s := make([]string, n)
	for i := range x {
		x[i], s[i] = float64(i)/3, []string{"a", "b", "c"}[i%3]
	}
	f, err := NewFrame(NewColumn("x", x, nil), NewColumn("s", s, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, required := range []bool{false, true} {
		dir := t.TempDir()
		path := filepath.Join(dir, "f.parquet")
		opts := ParquetWriteOptions{Dictionary: true, Required: required, Metadata: map[string]string{"k": "v"}}
		if err := WriteParquetFrame(path, f, opts); err != nil {
			t.Fatal(err)
		}
		got, err := ReadParquetFrame(path, ParquetFrameOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if gx, _ := got.Col("x").(*ScalarColumn[float64]); gx == nil || !slices.Equal(gx.Values(), x) {
			t.Fatalf("required %v: column x differs", required)
		}
		if gs, _ := got.Col("s").(*ScalarColumn[string]); gs == nil || !slices.Equal(gs.Values(), s) {
			t.Fatalf("required %v: column s differs", required)
		}
		if v, ok := got.Metadata("k"); !ok || v != "v" {
			t.Fatalf("required %v: metadata %q %v", required, v, ok)
		}
		pf, err := file.OpenParquetFile(path, false)
		if err != nil {
			t.Fatal(err)
		}
		maxDef := pf.MetaData().Schema.Column(0).MaxDefinitionLevel()
		groups := pf.NumRowGroups()
		pf.Close()
		if groups != 2 || (maxDef == 0) != required {
			t.Fatalf("required %v: %d row groups, max definition level %d", required, groups, maxDef)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Fatalf("required %v: %d files in the directory, want the one written", required, len(ents))
		}
	}

	path := filepath.Join(t.TempDir(), "empty.parquet")
	if err := WriteParquetFrame(path, f.Slice(0, 0), ParquetWriteOptions{Required: true}); err != nil {
		t.Fatal(err)
	}
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if pf.NumRowGroups() != 1 || pf.NumRows() != 0 {
		t.Fatalf("empty frame: %d row groups, %d rows", pf.NumRowGroups(), pf.NumRows())
	}
	pf.Close()

	nulls, err := NewFrame(NewColumn("x", []float64{1, 2}, []bool{true, false}))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	err = WriteParquetFrame(filepath.Join(dir, "n.parquet"), nulls, ParquetWriteOptions{Required: true})
	if err == nil || !strings.Contains(err.Error(), "nulls") {
		t.Fatalf("nulls in a required column: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("%d files left after a failed write", len(ents))
	}
}
