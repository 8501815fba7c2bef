package data

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

type hiveRow struct {
	X     float64 `parquet:"x"`
	Label string  `parquet:"label"`
}

// writeHiveTree writes, with parquet-go, a data set partitioned by year and
// country as Spark lays it out, with the files such a directory also holds
// and readers must skip. It returns the directory.
func writeHiveTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []struct {
		path string
		rows []hiveRow
	}{
		{"year=2023/country=US/part-00000-1b2c-c000.snappy.parquet", []hiveRow{{1, "a"}, {2, "b"}}},
		{"year=2023/country=a%2Fb%3Dc/data.parq", []hiveRow{{3, "a"}}},
		{"year=2024/country=FR/0.parquet", []hiveRow{{4, "b"}}},
		{"year=2024/country=__HIVE_DEFAULT_PARTITION__/x.pq", []hiveRow{{5, "a"}, {6, "b"}}},
	} {
		writeParquetGo(t, filepath.Join(dir, filepath.FromSlash(f.path)), f.rows)
	}
	// Not Parquet data: reading any of these would fail.
	for _, name := range []string{
		"_SUCCESS", "_metadata", "_common_metadata", ".hidden.parquet",
		"year=2023/country=US/.part-00000-1b2c-c000.snappy.parquet.crc",
		"_temporary/0/part-00009.parquet", ".spark-staging/part-1.parquet",
		"year=2024/notes.txt",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("not parquet"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestReadParquetHive(t *testing.T) {
	dir := writeHiveTree(t)
	parts, err := ParquetParts(dir)
	if err != nil {
		t.Fatal(err)
	}
	var rel []string
	for _, p := range parts {
		r, _ := filepath.Rel(dir, p)
		rel = append(rel, filepath.ToSlash(r))
	}
	wantParts := []string{ // sorted by path
		"year=2023/country=US/part-00000-1b2c-c000.snappy.parquet",
		"year=2023/country=a%2Fb%3Dc/data.parq",
		"year=2024/country=FR/0.parquet",
		"year=2024/country=__HIVE_DEFAULT_PARTITION__/x.pq",
	}
	if !slices.Equal(rel, wantParts) {
		t.Fatalf("parts\n%q\nwant\n%q", rel, wantParts)
	}

	f, err := ReadParquetFrame(dir, ParquetFrameOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Frame 6×4 [x float64, label string, year int64, country string]"; f.String() != want {
		t.Fatalf("got %s\nwant %s", f, want)
	}
	x, _ := f.Float64s("x")
	year, _ := f.Int64s("year")
	country, _ := f.Strings("country")
	if !slices.Equal(x, []float64{1, 2, 3, 4, 5, 6}) || !slices.Equal(year, []int64{2023, 2023, 2023, 2024, 2024, 2024}) ||
		!slices.Equal(country, []string{"US", "US", "a/b=c", "FR", "", ""}) ||
		!slices.Equal(f.Col("country").Valid(), []bool{true, true, true, true, false, false}) || f.Col("year").Valid() != nil {
		t.Fatalf("x %v year %v country %q valid %v", x, year, country, f.Col("country").Valid())
	}
	// Keys can be selected like any column, alone or with the files' own.
	f, err = ReadParquetFrame(dir, ParquetFrameOptions{Columns: []string{"year"}})
	if err != nil || f.String() != "Frame 6×1 [year int64]" {
		t.Fatalf("keys alone: %v, %v", f, err)
	}

	// In a Table: features, labels or ignored.
	tab, err := ReadParquetDir(dir, ParquetOptions{Label: "label", Ignore: []string{"country"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tab.Columns, []string{"x", "year"}) || !slices.Equal(tab.X, []float32{1, 2023, 2, 2023, 3, 2023, 4, 2024, 5, 2024, 6, 2024}) ||
		!slices.Equal(tab.Classes, []string{"a", "b"}) || !slices.Equal(tab.Labels, []int64{0, 1, 0, 1, 0, 1}) {
		t.Fatalf("table %+v", tab)
	}
	tab, err = ReadParquetDir(dir, ParquetOptions{Label: "year", LabelKind: LabelNumeric, Select: []string{"x"}})
	if err != nil || !slices.Equal(tab.Y, []float32{2023, 2023, 2023, 2024, 2024, 2024}) {
		t.Fatalf("key as a numeric label: %+v, %v", tab, err)
	}
	tab, err = ReadParquetDir(dir, ParquetOptions{Label: "country", Select: []string{"x"}})
	want := filepath.Join(dir, "year=2024", "country=__HIVE_DEFAULT_PARTITION__", "x.pq") + `: row 1: label column "country": null`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("null key as a label: got %v, want %q", err, want)
	}
	_, err = ReadParquetDir(dir, ParquetOptions{Label: "label"})
	if err == nil || !strings.Contains(err.Error(), `column "country" has type utf8; features must be numbers or booleans`) {
		t.Fatalf("string key as a feature: %v", err)
	}
}

func TestReadParquetDirErrors(t *testing.T) {
	// No Parquet file: say what is there.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "data.csv"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "_SUCCESS"), nil, 0o644)
	want := dir + ": no Parquet files (*.parquet, *.parq, *.pq) in it or below it; other files: data.csv; skipped as hidden or metadata: _SUCCESS"
	for _, read := range []func() error{
		func() error { _, err := ParquetParts(dir); return err },
		func() error { _, err := ReadParquetFrame(dir, ParquetFrameOptions{}); return err },
		func() error { _, err := ReadParquetDir(dir, ParquetOptions{}); return err },
	} {
		if err := read(); err == nil || err.Error() != want {
			t.Errorf("got %v\nwant %s", err, want)
		}
	}
	if _, err := ReadParquetDir(filepath.Join(dir, "nope"), ParquetOptions{}); !os.IsNotExist(err) {
		t.Errorf("missing directory: %v", err)
	}

	// Files under different keys.
	dir = t.TempDir()
	writeParquetGo(t, filepath.Join(dir, "a=1", "f.parquet"), []hiveRow{{1, "a"}})
	writeParquetGo(t, filepath.Join(dir, "g.parquet"), []hiveRow{{2, "b"}})
	_, err := ReadParquetDir(dir, ParquetOptions{Label: "label"})
	want = dir + ": files are under different key=value directories: " + filepath.Join(dir, "a=1", "f.parquet") + " under keys a, " + filepath.Join(dir, "g.parquet") + " under no key=value directory"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}

	// A key that is also a column of the files.
	dir = t.TempDir()
	p := filepath.Join(dir, "x=1", "f.parquet")
	writeParquetGo(t, p, []hiveRow{{1, "a"}})
	_, err = ReadParquetFrame(dir, ParquetFrameOptions{})
	if want := p + `: column "x" is both in the file and a key of its key=value directories`; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}

	// The same key twice.
	dir = t.TempDir()
	p = filepath.Join(dir, "k=1", "k=2", "f.parquet")
	writeParquetGo(t, p, []hiveRow{{1, "a"}})
	_, err = ReadParquetFrame(dir, ParquetFrameOptions{})
	if want := p + `: key "k" appears twice in its directories`; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// TestParquetDirLayouts checks directories that are not key=value (no
// column) and keys of every kind.
func TestParquetDirLayouts(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{
		"2023/rate=0.5/_k=x/a.parquet",
		"2023/rate=1/_k=y/b.parquet",
		"2024/rate=1e-3/_k=x/c.parquet",
	} {
		writeParquetGo(t, filepath.Join(dir, filepath.FromSlash(p)), []hiveRow{{1, "a"}})
	}
	f, err := ReadParquetFrame(dir, ParquetFrameOptions{Columns: []string{"rate", "_k"}})
	if err != nil {
		t.Fatal(err)
	}
	rate, _ := f.Float64s("rate")
	k, _ := f.Strings("_k")
	if f.String() != "Frame 3×2 [rate float64, _k string]" || !slices.Equal(rate, []float64{0.5, 1, 1e-3}) || !slices.Equal(k, []string{"x", "y", "x"}) {
		t.Fatalf("%s rate %v _k %v", f, rate, k)
	}
}

func TestHiveKind(t *testing.T) {
	for _, test := range []struct {
		vals []string
		want Kind
	}{
		{[]string{"1", "-2", "007", "+3"}, Int64},
		{[]string{"1", "2.5"}, Float64},
		{[]string{"1e3", ".5", "5."}, Float64},
		{[]string{"9223372036854775808"}, Float64}, // beyond int64
		{[]string{"1", "x"}, String},
		{[]string{"NaN"}, String},
		{[]string{"Inf"}, String},
		{[]string{"0x10"}, String},
		{[]string{"1_000"}, String},
		{[]string{" 1"}, String},
		{[]string{"1e"}, String},
		{[]string{"1e999"}, String},
		{[]string{"2024-01-01"}, String},
		{nil, String}, // only nulls
	} {
		if got := hiveKind(test.vals); got != test.want {
			t.Errorf("%q: got %s, want %s", test.vals, got, test.want)
		}
	}
}

func TestUnescapePathName(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                   "plain",
		"a%2Fb%3Dc":               "a/b=c",
		"a%2fb":                   "a/b",
		"100%":                    "100%",
		"%zz":                     "%zz",
		"%4":                      "%4",
		"caf%C3%A9":               "café",
		"2024-01-01 10%3A00%3A00": "2024-01-01 10:00:00",
		"%25%25":                  "%%",
	} {
		if got := unescapePathName(in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

// TestParquetDirAgrees checks ReadParquetDir against a Frame read of the
// whole tree converted with the same options (errors included, though the
// two word some of them differently).
func TestParquetDirAgrees(t *testing.T) {
	dir := writeHiveTree(t)
	for _, opts := range []ParquetOptions{
		{Label: "label", Ignore: []string{"country"}},
		{Label: "label", Select: []string{"year", "x"}},
		{Label: "year", Select: []string{"x"}},
		{Label: "country", Select: []string{"x"}},
		{Label: "label", Select: []string{"country"}},
	} {
		want, werr := ReadParquetDir(dir, opts)
		got, gerr := parquetViaFrame(dir, opts)
		if (werr == nil) != (gerr == nil) { // the wording of errors differs
			t.Errorf("%+v: ReadParquetDir error %v, through a Frame %v", opts, werr, gerr)
			continue
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%+v:\nthrough a Frame %+v\nReadParquetDir  %+v", opts, got, want)
		}
	}
}

// TestParquetDirLinks checks that symbolic links are followed, the root
// too, and that a link back up is an error, not an endless walk.
func TestParquetDirLinks(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "data")
	writeParquetGo(t, filepath.Join(dir, "k=1", "A.PARQUET"), []hiveRow{{1, "a"}})
	writeParquetGo(t, filepath.Join(base, "elsewhere", "b.parquet"), []hiveRow{{2, "b"}})
	if err := os.Symlink(filepath.Join(base, "elsewhere"), filepath.Join(dir, "k=2")); err != nil {
		t.Skip("no symbolic links:", err)
	}
	link := filepath.Join(base, "link")
	os.Symlink(dir, link)
	f, err := ReadParquetFrame(link, ParquetFrameOptions{})
	if err != nil {
		t.Fatal(err)
	}
	k, _ := f.Int64s("k")
	if f.String() != "Frame 2×3 [x float64, label string, k int64]" || !slices.Equal(k, []int64{1, 2}) {
		t.Fatalf("%s k %v", f, k)
	}
	loop := filepath.Join(dir, "k=1", "up")
	os.Symlink(dir, loop)
	if _, err := ParquetParts(dir); err == nil || err.Error() != loop+": a symbolic link to a directory above it" {
		t.Fatalf("loop: %v", err)
	}
}

// FuzzUnescapePathName checks that decoding undoes Spark's escaping of
// directory names (every byte outside letters, digits and a few marks as
// %XX) and never fails on other input.
func FuzzUnescapePathName(f *testing.F) {
	for _, s := range []string{"US", "a/b=c", "100%", "%zz", "café", "10:00", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c < 0x20 || c >= 0x7f || strings.IndexByte("\"#%'*/:=?\\{[]^", c) >= 0 {
				fmt.Fprintf(&b, "%%%02X", c)
			} else {
				b.WriteByte(c)
			}
		}
		if got := unescapePathName(b.String()); got != s {
			t.Fatalf("%q escaped as %q decodes to %q", s, b.String(), got)
		}
		unescapePathName(s)
	})
}
