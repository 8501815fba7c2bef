package data

import (
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// testFrame returns a frame with a column of every kind and a few nulls:
//
//	row  f64   f32  i64  s     b      vec (float64, width 2)
//	0    0.5   1    10   "a"   true   [1 2]
//	1    null  2    20   null  false  null
//	2    2.5   3    null "b"   true   [5 null]
func testFrame(t *testing.T) *Frame {
	t.Helper()
	f, err := NewFrame(
		NewColumn("f64", []float64{0.5, 0, 2.5}, []bool{true, false, true}),
		NewColumn("f32", []float32{1, 2, 3}, nil),
		NewColumn("i64", []int64{10, 20, 0}, []bool{true, true, false}),
		NewColumn("s", []string{"a", "", "b"}, []bool{true, false, true}),
		NewColumn("b", []bool{true, false, true}, nil),
		NewVectorColumn("vec", 2, []float64{1, 2, 0, 0, 5, 0}, []bool{true, false, true}, []bool{true, true, true, true, true, false}),
	)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestFrameBasics(t *testing.T) {
	f := testFrame(t)
	if f.Len() != 3 || f.NumCols() != 6 {
		t.Fatalf("shape %d×%d", f.Len(), f.NumCols())
	}
	if got := f.Names(); !slices.Equal(got, []string{"f64", "f32", "i64", "s", "b", "vec"}) {
		t.Fatalf("names %v", got)
	}
	if want := "Frame 3×6 [f64 float64, f32 float32, i64 int64, s string, b bool, vec vector<float64, 2>]"; f.String() != want {
		t.Fatalf("String() = %q", f.String())
	}
	for _, test := range []struct {
		col   string
		kind  Kind
		nulls int
	}{
		{"f64", Float64, 1}, {"f32", Float32, 0}, {"i64", Int64, 1},
		{"s", String, 1}, {"b", Bool, 0}, {"vec", Vector, 1},
	} {
		c := f.Col(test.col)
		if c.Kind() != test.kind || c.NullCount() != test.nulls || c.Len() != 3 {
			t.Errorf("%s: kind %v nulls %d len %d", test.col, c.Kind(), c.NullCount(), c.Len())
		}
		if (c.Valid() == nil) != (test.nulls == 0) {
			t.Errorf("%s: Valid() = %v", test.col, c.Valid())
		}
	}
	if f.Col("nope") != nil || f.Has("nope") || !f.Has("s") {
		t.Fatal("Col/Has of a missing column")
	}
	// Typed accessors.
	if v, err := f.Float64s("f64"); err != nil || !slices.Equal(v, []float64{0.5, 0, 2.5}) {
		t.Fatalf("Float64s: %v, %v", v, err)
	}
	if v, err := f.Float32s("f32"); err != nil || !slices.Equal(v, []float32{1, 2, 3}) {
		t.Fatalf("Float32s: %v, %v", v, err)
	}
	if v, err := f.Int64s("i64"); err != nil || !slices.Equal(v, []int64{10, 20, 0}) {
		t.Fatalf("Int64s: %v, %v", v, err)
	}
	if v, err := f.Strings("s"); err != nil || !slices.Equal(v, []string{"a", "", "b"}) {
		t.Fatalf("Strings: %v, %v", v, err)
	}
	if v, err := f.Bools("b"); err != nil || !slices.Equal(v, []bool{true, false, true}) {
		t.Fatalf("Bools: %v, %v", v, err)
	}
	vec, err := f.Vectors("vec")
	if err != nil || vec.Width() != 2 || vec.Elem() != Float64 || vec.At(2, 0) != 5 {
		t.Fatalf("Vectors: %v, %v", vec, err)
	}
	if vec.ElemNull(0, 1) || !vec.ElemNull(1, 0) || !vec.ElemNull(2, 1) || vec.ElemNull(2, 0) {
		t.Fatal("ElemNull")
	}
	if _, err := f.Strings("f64"); !errors.Is(err, ErrKind) || !strings.Contains(err.Error(), `column "f64" is float64, not string`) {
		t.Fatalf("wrong kind: %v", err)
	}
	if _, err := f.Vectors("b"); !errors.Is(err, ErrKind) {
		t.Fatalf("wrong kind: %v", err)
	}
	if _, err := f.Float64s("nope"); err == nil || !strings.Contains(err.Error(), `column "nope" not found (columns: f64, f32`) {
		t.Fatalf("missing column: %v", err)
	}
}

func TestNewFrameErrors(t *testing.T) {
	a := NewColumn("a", []float64{1, 2}, nil)
	for _, test := range []struct {
		name string
		cols []Column
		want string
	}{
		{"duplicate", []Column{a, a}, `column name "a" appears twice`},
		{"lengths", []Column{a, NewColumn("b", []int64{1}, nil)}, `column "b" has 1 rows, column "a" has 2`},
		{"no name", []Column{NewColumn("", []bool{true}, nil)}, "has no name"},
		{"nil", []Column{nil}, "is nil"},
	} {
		if _, err := NewFrame(test.cols...); err == nil || !strings.Contains(err.Error(), test.want) {
			t.Errorf("%s: got %v, want %q", test.name, err, test.want)
		}
	}
	if f, err := NewFrame(); err != nil || f.Len() != 0 || f.NumCols() != 0 {
		t.Fatalf("empty frame: %v, %v", f, err)
	}
}

func TestFrameDerive(t *testing.T) {
	f := testFrame(t)
	// Select shares columns and keeps the order asked for.
	g, err := f.Select("s", "f64")
	if err != nil || !slices.Equal(g.Names(), []string{"s", "f64"}) || g.Col("f64") != f.Col("f64") {
		t.Fatalf("Select: %v, %v", g, err)
	}
	if _, err := f.Select("s", "s"); err == nil {
		t.Fatal("Select of a column twice")
	}
	if _, err := f.Select("zz"); err == nil {
		t.Fatal("Select of a missing column")
	}
	g, err = f.Drop("vec", "b")
	if err != nil || !slices.Equal(g.Names(), []string{"f64", "f32", "i64", "s"}) {
		t.Fatalf("Drop: %v, %v", g, err)
	}
	// With appends a new column, or replaces one in place; f is unchanged.
	extra := NewColumn("extra", []int64{7, 8, 9}, nil)
	g, err = f.With(extra)
	if err != nil || g.NumCols() != 7 || g.Col("extra") != extra || f.Has("extra") {
		t.Fatalf("With (append): %v, %v", g, err)
	}
	repl := NewColumn("s", []string{"x", "y", "z"}, nil)
	g, err = f.With(repl)
	if err != nil || !slices.Equal(g.Names(), f.Names()) || g.Col("s") != repl {
		t.Fatalf("With (replace): %v, %v", g, err)
	}
	if v, _ := f.Strings("s"); v[0] != "a" {
		t.Fatal("With changed the original frame")
	}
	if _, err := f.With(NewColumn("short", []int64{1}, nil)); err == nil {
		t.Fatal("With of a column of the wrong length")
	}
	g, err = f.Rename("s", "name")
	if err != nil || g.Col("name") == nil || g.Has("s") || !f.Has("s") {
		t.Fatalf("Rename: %v, %v", g, err)
	}
	if _, err := f.Rename("s", "b"); err == nil {
		t.Fatal("Rename onto a taken name")
	}
	// Take gathers rows of every column, with their null flags.
	g = f.Take([]int{2, 0, 2})
	if g.Len() != 3 {
		t.Fatalf("Take: %d rows", g.Len())
	}
	if v, _ := g.Float64s("f64"); !slices.Equal(v, []float64{2.5, 0.5, 2.5}) || g.Col("f64").NullCount() != 0 {
		t.Fatalf("Take f64 %v nulls %d", v, g.Col("f64").NullCount())
	}
	if g.Col("i64").NullCount() != 2 || !g.Col("i64").IsNull(0) {
		t.Fatal("Take lost the i64 nulls")
	}
	gv, _ := g.Vectors("vec")
	if !slices.Equal(gv.Float64s(), []float64{5, 0, 1, 2, 5, 0}) || !gv.ElemNull(0, 1) || gv.ElemNull(1, 1) {
		t.Fatalf("Take vec %v", gv.Float64s())
	}
	// Slice shares the values.
	g = f.Slice(1, 3)
	if v, _ := g.Int64s("i64"); !slices.Equal(v, []int64{20, 0}) || !g.Col("i64").IsNull(1) || !g.Col("vec").IsNull(0) {
		t.Fatalf("Slice: %v", v)
	}
	if g := f.Slice(1, 1); g.Len() != 0 || g.NumCols() != 6 {
		t.Fatalf("empty slice: %v", g)
	}
	// Metadata follows derived frames; WithMetadata leaves f alone.
	m := f.WithMetadata("k", "v")
	if v, ok := m.Take([]int{0}).Metadata("k"); !ok || v != "v" {
		t.Fatal("metadata lost by Take")
	}
	if _, ok := f.Metadata("k"); ok {
		t.Fatal("WithMetadata changed the original frame")
	}
}

func TestVectorColumn32(t *testing.T) {
	c := NewVectorColumn32("v", 3, []float32{1, 2, 3, 4, 5, 6}, nil, nil)
	if c.Len() != 2 || c.Elem() != Float32 || c.At(1, 2) != 6 || c.Float64s() != nil {
		t.Fatalf("%+v", c)
	}
	got := c.Take([]int{1}).(*VectorColumn)
	if !slices.Equal(got.Float32s(), []float32{4, 5, 6}) {
		t.Fatalf("Take %v", got.Float32s())
	}
	if got := c.Slice(1, 2).(*VectorColumn); !slices.Equal(got.Float32s(), []float32{4, 5, 6}) {
		t.Fatalf("Slice %v", got.Float32s())
	}
	if c.Renamed("w").Name() != "w" || c.Name() != "v" {
		t.Fatal("Renamed")
	}
}

func TestFrameTable(t *testing.T) {
	f := testFrame(t)
	// Nulls are an error naming the row and column...
	_, err := f.Table(TableOptions{Label: "s", Features: []string{"f32"}, Source: "src"})
	if want := `src: row 2: label column "s": null label`; err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	_, err = f.Table(TableOptions{Label: "b", Ignore: []string{"s"}, Source: "src"})
	if want := `src: row 2: column "f64": null value (set Impute to MissingMean to fill it with the column mean)`; err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	_, err = f.Table(TableOptions{Features: []string{"vec"}})
	if want := `row 2: column "vec": null value`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
	// ... or filled with the column mean.
	got, err := f.Table(TableOptions{Label: "b", Ignore: []string{"s"}, Impute: MissingMean})
	if err != nil {
		t.Fatal(err)
	}
	want := &Table{
		Rows: 3, Cols: 5, Columns: []string{"f64", "f32", "i64", "vec[0]", "vec[1]"},
		X: []float32{
			0.5, 1, 10, 1, 2,
			1.5, 2, 20, 3, 2,
			2.5, 3, 15, 5, 2,
		},
		LabelName: "b", Labels: []int64{1, 0, 1}, Classes: []string{"false", "true"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	// Numeric labels; vector element names select the vector.
	got, err = f.Table(TableOptions{Label: "f32", LabelKind: LabelNumeric, Features: []string{"vec[0]", "vec[1]", "b"}, Impute: MissingMean})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Y, []float32{1, 2, 3}) || !slices.Equal(got.Columns, []string{"vec[0]", "vec[1]", "b"}) || got.Labels != nil {
		t.Fatalf("numeric label: %+v", got)
	}
	for _, test := range []struct {
		opts TableOptions
		want string
	}{
		{TableOptions{Features: []string{"s"}}, `column "s" has type string; features must be numbers, booleans or vectors`},
		{TableOptions{Features: []string{"vec[0]", "f32"}}, `do not match the vector columns they name`},
		{TableOptions{Label: "vec", Features: []string{"f32"}}, `label column "vec" has type vector<float64, 2>`},
		{TableOptions{Label: "s", LabelKind: LabelNumeric, Features: []string{"f32"}}, `label column "s": type string is not numeric`},
		{TableOptions{LabelKind: LabelNumeric}, `label options given but no label column`},
		{TableOptions{Label: "f32", Classes: []string{"1", "2"}, Features: []string{"b"}}, `row 3: label column "f32": unknown class "3" (classes: 1, 2)`},
		{TableOptions{Label: "nope"}, `label column "nope" not found`},
		{TableOptions{Label: "f32", Classes: []string{"1", "1"}}, `class "1" is listed twice`},
	} {
		if _, err := f.Table(test.opts); err == nil || !strings.Contains(err.Error(), test.want) {
			t.Errorf("%+v: got %v, want %q", test.opts, err, test.want)
		}
	}
	// Out of the float32 range.
	big, _ := NewFrame(NewColumn("x", []float64{1e300}, nil))
	if _, err := big.Table(TableOptions{}); err == nil || !strings.Contains(err.Error(), `row 1: column "x": 1e+300 is outside the float32 range`) {
		t.Fatalf("got %v", err)
	}
	// Non-finite values are refused, as features and as numeric labels,
	// float64 or float32: one infinity turns a standardized column into
	// NaNs.
	for _, test := range []struct {
		col  Column
		opts TableOptions
		want string
	}{
		{NewColumn("x", []float64{1, math.Inf(1)}, nil), TableOptions{}, `row 2: column "x": +Inf is not a finite number`},
		{NewColumn("x", []float64{math.Inf(-1)}, nil), TableOptions{}, `row 1: column "x": -Inf is not a finite number`},
		{NewColumn("x", []float64{math.NaN()}, nil), TableOptions{}, `row 1: column "x": NaN is not a finite number`},
		{NewColumn("x", []float32{float32(math.Inf(1))}, nil), TableOptions{}, `row 1: column "x": +Inf is not a finite number`},
		{NewColumn("x", []float64{math.Inf(1)}, nil), TableOptions{Label: "x", LabelKind: LabelNumeric}, `row 1: label column "x": +Inf is not a finite number`},
	} {
		fr, _ := NewFrame(test.col)
		if got, err := fr.Table(test.opts); err == nil || !strings.Contains(err.Error(), test.want) {
			t.Errorf("got %v, %v; want %q", got, err, test.want)
		}
	}
	// An all-null column has no mean.
	allNull, _ := NewFrame(NewColumn("x", []float64{0, 0}, []bool{false, false}))
	if _, err := allNull.Table(TableOptions{Impute: MissingMean}); err == nil || !strings.Contains(err.Error(), "every value is missing") {
		t.Fatalf("got %v", err)
	}
}

func TestFrameTableFeatureShape(t *testing.T) {
	f, _ := NewFrame(NewVectorColumn32("img", 4, []float32{1, 2, 3, 4}, nil, nil))
	got, err := f.WithMetadata(featureShapeKey, "[2,2]").Table(TableOptions{})
	if err != nil || !slices.Equal(got.FeatureShape, []int{2, 2}) {
		t.Fatalf("%+v, %v", got, err)
	}
	// A shape that does not fit the selected columns is ignored.
	got, err = f.WithMetadata(featureShapeKey, "[3]").Table(TableOptions{})
	if err != nil || got.FeatureShape != nil {
		t.Fatalf("%+v, %v", got, err)
	}
}

// otherColumn is a Column implemented outside the package's concrete types.
type otherColumn struct{ *Float64Column }

func TestFrameTableUnknownColumnType(t *testing.T) {
	f, _ := NewFrame(otherColumn{NewColumn("x", []float64{1}, nil)})
	if _, err := f.Table(TableOptions{}); err == nil || !strings.Contains(err.Error(), `column "x": Table cannot convert a column of Go type data.otherColumn`) {
		t.Fatalf("got %v", err)
	}
	if _, err := f.Table(TableOptions{Label: "x"}); err == nil || !strings.Contains(err.Error(), `label column "x": Table cannot convert`) {
		t.Fatalf("got %v", err)
	}
}

// TestTableFrameRoundTrip converts tables to frames and back, directly and
// through a Parquet file.
func TestTableFrameRoundTrip(t *testing.T) {
	iris, err := Iris()
	if err != nil {
		t.Fatal(err)
	}
	img := &Table{Rows: 2, Cols: 4, X: []float32{1, 2, 3, 4, 5, 6, 7, 8}, FeatureShape: []int{2, 2}, Y: []float32{0.5, 1.5}}
	unsorted := &Table{Rows: 3, Cols: 1, X: []float32{1, 2, 3}, Columns: []string{"x"}, LabelName: "c", Labels: []int64{0, 1, 0}, Classes: []string{"z", "a"}}
	noRows := &Table{Cols: 1, X: []float32{}, Columns: []string{"x"}}
	for _, test := range []struct {
		name string
		tab  *Table
		opts TableOptions
	}{
		{"iris", iris, TableOptions{Label: "species"}},
		{"image", img, TableOptions{Label: "label", LabelKind: LabelNumeric}},
		{"class order", unsorted, TableOptions{Label: "c", Classes: unsorted.Classes}},
		{"no rows", noRows, TableOptions{}},
	} {
		f, err := test.tab.Frame()
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.Table(test.opts)
		if err != nil {
			t.Fatalf("%s: %v", test.name, err)
		}
		want := test.tab
		if want.Columns == nil { // the frame names the columns
			want = want.Clone()
			want.Columns = []string{"c1", "c2", "c3", "c4"}
			want.LabelName = "label"
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: through a Frame\n%+v\nwant %+v", test.name, got, want)
		}
		p := filepath.Join(t.TempDir(), "t.parquet")
		if err := WriteParquet(p, test.tab); err != nil {
			t.Fatal(err)
		}
		pf, err := ReadParquetFrame(p, ParquetFrameOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := pf.Table(test.opts); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: through Parquet\n%+v, %v\nwant %+v", test.name, got, err, want)
		}
	}
	if _, err := (&Table{Rows: 1, Cols: 2, X: []float32{1}}).Frame(); err == nil {
		t.Fatal("Frame of an invalid table")
	}
}
