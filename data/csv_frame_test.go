package data

import (
	"bytes"
	"compress/gzip"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParseCSVFrameTypes(t *testing.T) {
	input := "num, text ,mixed,empty,int,flag\n" +
		"1.5,a,1,NA,7,true\n" +
		" -2 , b c ,x,,-8,0\n" +
		"NA,?,3,nan,NA,F\n"
	f, err := ParseCSVFrame(strings.NewReader(input), "t.csv", CSVFrameOptions{Types: map[string]Kind{"int": Int64, "flag": Bool}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Frame 3×6 [num float64, text string, mixed string, empty float64, int int64, flag bool]"; f.String() != want {
		t.Fatalf("got %s\nwant %s", f, want)
	}
	num, _ := f.Float64s("num")
	text, _ := f.Strings("text")
	mixed, _ := f.Strings("mixed")
	ints, _ := f.Int64s("int")
	flags, _ := f.Bools("flag")
	if !slices.Equal(num, []float64{1.5, -2, 0}) || !slices.Equal(text, []string{"a", "b c", ""}) ||
		!slices.Equal(mixed, []string{"1", "x", "3"}) || !slices.Equal(ints, []int64{7, -8, 0}) ||
		!slices.Equal(flags, []bool{true, false, false}) {
		t.Fatalf("values %v %q %q %v %v", num, text, mixed, ints, flags)
	}
	for _, test := range []struct {
		col   string
		valid []bool
	}{
		{"num", []bool{true, true, false}},
		{"text", []bool{true, true, false}},
		{"mixed", nil},
		{"empty", []bool{false, false, false}},
		{"int", []bool{true, true, false}},
		{"flag", nil},
	} {
		if got := f.Col(test.col).Valid(); !slices.Equal(got, test.valid) {
			t.Errorf("%s: valid %v, want %v", test.col, got, test.valid)
		}
	}

	// Select, no header, another delimiter, explicit float32, no missing tokens.
	f, err = ParseCSVFrame(strings.NewReader("1;NA;x\n2;3;y\n"), "t.csv", CSVFrameOptions{
		Comma: ';', NoHeader: true, Select: []string{"c3", "c1"}, Missing: []string{}, Types: map[string]Kind{"c1": Float32},
	})
	if err != nil {
		t.Fatal(err)
	}
	c1, _ := f.Float32s("c1")
	c3, _ := f.Strings("c3")
	if !slices.Equal(f.Names(), []string{"c3", "c1"}) || !slices.Equal(c1, []float32{1, 2}) || !slices.Equal(c3, []string{"x", "y"}) {
		t.Fatalf("%s: %v %v", f, c1, c3)
	}
	// A header with no rows makes an empty frame of inferred float64 columns.
	f, err = ParseCSVFrame(strings.NewReader("a,b\n"), "t.csv", CSVFrameOptions{})
	if err != nil || f.Len() != 0 || f.Col("b").Kind() != Float64 {
		t.Fatalf("empty: %v, %v", f, err)
	}
}

func TestParseCSVFrameErrors(t *testing.T) {
	for _, test := range []struct {
		name  string
		input string
		opts  CSVFrameOptions
		want  string
	}{
		{"int", "a,b\n1,2\n3,x\n", CSVFrameOptions{Types: map[string]Kind{"b": Int64}}, `f.csv:3: column "b" (2): cannot parse "x" as an integer`},
		{"bool", "a,b\n1,2\n", CSVFrameOptions{Types: map[string]Kind{"b": Bool}}, `f.csv:2: column "b" (2): cannot parse "2" as a boolean`},
		{"float", "a\n1\n\"x\ny\"\n", CSVFrameOptions{Types: map[string]Kind{"a": Float64}}, `f.csv:3: column "a" (1): cannot parse "x\ny" as a number`},
		{"float32 range", "a\n1e39\n", CSVFrameOptions{Types: map[string]Kind{"a": Float32}}, `f.csv:2: column "a" (1): "1e39" is outside the float32 range`},
		{"float64 range", "a\n1e999\n", CSVFrameOptions{}, `f.csv:2: column "a" (1): "1e999" is outside the float64 range`},
		{"vector", "a\n1\n", CSVFrameOptions{Types: map[string]Kind{"a": Vector}}, `column "a": a CSV column cannot be read as vector`},
		{"typed unknown", "a\n1\n", CSVFrameOptions{Types: map[string]Kind{"z": Int64}}, `typed column "z" not found`},
		{"select unknown", "a\n1\n", CSVFrameOptions{Select: []string{"z"}}, `f.csv: selected column "z" not found (columns: a)`},
		{"select twice", "a\n1\n", CSVFrameOptions{Select: []string{"a", "a"}}, `column "a" is selected twice`},
		{"field count", "a,b\n1,2\n3\n", CSVFrameOptions{}, `f.csv:3: row has a different number of fields than the header (2)`},
		{"bad quote", "a,b\n1,\"2\n", CSVFrameOptions{}, `f.csv:2:6: extraneous or missing " in quoted-field`},
		{"duplicate header", "a,a\n1,2\n", CSVFrameOptions{}, `column name "a" appears twice`},
		{"empty file", "", CSVFrameOptions{}, `f.csv: the file is empty`},
	} {
		t.Run(test.name, func(t *testing.T) {
			_, err := ParseCSVFrame(strings.NewReader(test.input), "f.csv", test.opts)
			if err == nil || !strings.Contains(err.Error(), test.want) {
				t.Fatalf("got %v, want error containing %q", err, test.want)
			}
		})
	}
}

func TestReadCSVFrameGzip(t *testing.T) {
	dir := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("a,l\n1,x\n2,y\n"))
	zw.Close()
	p := filepath.Join(dir, "f.csv.gz")
	os.WriteFile(p, gz.Bytes(), 0o644)
	f, err := ReadCSVFrame(p, CSVFrameOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := f.Strings("l"); !slices.Equal(l, []string{"x", "y"}) {
		t.Fatalf("%v", l)
	}
	if _, err := ReadCSVFrame(filepath.Join(dir, "none.csv"), CSVFrameOptions{}); err == nil {
		t.Fatal("missing file")
	}
}

// csvViaFrame reads CSV as ParseCSV does, but through a Frame: the label
// column is read as strings when it holds classes, so class names keep their
// spelling ("1.0" stays "1.0").
func csvViaFrame(input, name string, opts CSVOptions) (*Table, error) {
	fopts := CSVFrameOptions{Comma: opts.Comma, Comment: opts.Comment, NoHeader: opts.NoHeader, Missing: opts.Missing}
	label := opts.Label
	if opts.LabelIndex != 0 {
		head, err := ParseCSVFrame(strings.NewReader(input), name, CSVFrameOptions{Comma: opts.Comma, Comment: opts.Comment, NoHeader: opts.NoHeader, Types: map[string]Kind{}})
		if err != nil {
			return nil, err
		}
		names := head.Names()
		label = names[len(names)-1]
		if opts.LabelIndex > 0 {
			label = names[opts.LabelIndex-1]
		}
	}
	if label != "" && opts.LabelKind == LabelClass {
		fopts.Types = map[string]Kind{label: String}
	}
	f, err := ParseCSVFrame(strings.NewReader(input), name, fopts)
	if err != nil {
		return nil, err
	}
	return f.Table(TableOptions{Label: label, LabelKind: opts.LabelKind, Classes: opts.Classes, Features: opts.Select, Ignore: opts.Ignore, Impute: opts.Impute, Source: name})
}

// TestCSVFrameTableAgrees checks that reading through a Frame gives the
// Table ReadCSV gives, on the repository's data files and on small inputs
// covering labels, selections and missing values.
func TestCSVFrameTableAgrees(t *testing.T) {
	type input struct {
		name, text string
		opts       CSVOptions
	}
	var inputs []input
	for _, file := range []struct {
		path string
		opts CSVOptions
	}{
		{"iris.csv", CSVOptions{Label: "species"}},
		{"iris.csv", CSVOptions{LabelIndex: -1, Select: []string{"petal_width", "sepal_length"}}},
		{"iris.csv", CSVOptions{Label: "sepal_length", LabelKind: LabelNumeric, Ignore: []string{"species"}}},
		{"../examples/data/linear.csv", CSVOptions{Label: "y", LabelKind: LabelNumeric}},
		{"../examples/data/linear.csv", CSVOptions{}},
	} {
		b, err := os.ReadFile(file.path)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, input{file.path, string(b), file.opts})
	}
	inputs = append(inputs,
		input{"numeric classes", "f,c\n1,10\n2,2.0\n3,1\n", CSVOptions{Label: "c"}},
		input{"fixed classes", "f,c\n1,b\n2,a\n", CSVOptions{Label: "c", Classes: []string{"b", "a"}}},
		input{"imputed", "a,b\n1,NA\n2,4\n?,5\n", CSVOptions{Impute: MissingMean}},
		input{"no header", "1;2;x\n3;4;y\n", CSVOptions{Comma: ';', NoHeader: true, LabelIndex: 3}},
		input{"bad number", "a,b\n1,2\n3,x\n", CSVOptions{}},
		input{"missing", "a,b\n1,2\n3,NA\n", CSVOptions{}},
		input{"missing label", "a,l\n1,?\n", CSVOptions{Label: "l", Impute: MissingMean}},
		input{"empty", "a,l\n", CSVOptions{Label: "l"}},
	)
	for _, in := range inputs {
		want, werr := ParseCSV(strings.NewReader(in.text), "f.csv", in.opts)
		got, gerr := csvViaFrame(in.text, "f.csv", in.opts)
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%s %+v: ReadCSV error %v, through a Frame %v", in.name, in.opts, werr, gerr)
			continue
		}
		if werr != nil {
			// Both name the file; the frame path reports the row.
			if !strings.HasPrefix(gerr.Error(), "f.csv") {
				t.Errorf("%s: error %v does not name the file", in.name, gerr)
			}
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s %+v:\nthrough a Frame %+v\nReadCSV         %+v", in.name, in.opts, got, want)
		}
	}
}

func FuzzParseCSVFrame(f *testing.F) {
	f.Add("a,b,l\n1,2,x\n3,4,y\n", false)
	f.Add("1;2\n3;NA\n", true)
	f.Add("a,b\n\"1\",\"2\n\"\n", false)
	f.Add("x,l\n1e38,1\n-0,2\n,\n", false)
	f.Add("x\ninf\nNaN\n0x1p-2\n1_000\n", false)
	f.Fuzz(func(t *testing.T, input string, noHeader bool) {
		opts := CSVFrameOptions{NoHeader: noHeader}
		if strings.Contains(input, ";") {
			opts.Comma = ';'
		}
		fr, err := ParseCSVFrame(strings.NewReader(input), "fuzz.csv", opts)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.csv") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, c := range fr.Columns() {
			if c.Len() != fr.Len() {
				t.Fatalf("column %q has %d rows, the frame %d", c.Name(), c.Len(), fr.Len())
			}
			switch c := c.(type) {
			case *Float64Column:
				for i, v := range c.Values() {
					if c.IsNull(i) && v != 0 {
						t.Fatalf("null row %d holds %v", i, v)
					}
				}
			case *StringColumn:
				for i, v := range c.Values() {
					if v != strings.TrimSpace(v) || (c.IsNull(i) && v != "") {
						t.Fatalf("row %d: %q", i, v)
					}
				}
			default:
				t.Fatalf("inferred kind %s", c.Kind())
			}
		}
		// A numeric frame converts to a Table whose values are the
		// float32 of the column's values.
		tab, err := fr.Table(TableOptions{Impute: MissingMean})
		if err != nil {
			return
		}
		if err := tab.Validate(); err != nil {
			t.Fatal(err)
		}
		for k, name := range tab.Columns {
			vals, _ := fr.Float64s(name)
			for i, v := range vals {
				if got := tab.X[i*tab.Cols+k]; !fr.Col(name).IsNull(i) && got != float32(v) && !(math.IsNaN(v) && math.IsNaN(float64(got))) {
					t.Fatalf("row %d column %q: %v, want %v", i, name, got, float32(v))
				}
			}
		}
	})
}
