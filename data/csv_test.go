package data

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseCSV(t *testing.T) {
	for _, test := range []struct {
		name    string
		input   string
		opts    CSVOptions
		cols    []string
		x       []float32
		labels  []int64
		classes []string
		y       []float32
	}{
		{
			name:  "features only",
			input: "a,b\n1,2\n3.5,-4e2\n",
			cols:  []string{"a", "b"}, x: []float32{1, 2, 3.5, -400},
		},
		{
			name:  "string label, classes sorted",
			input: "x,species,y\n1,versicolor,2\n3,setosa,4\n5,versicolor,6\n",
			opts:  CSVOptions{Label: "species"},
			cols:  []string{"x", "y"}, x: []float32{1, 2, 3, 4, 5, 6},
			labels: []int64{1, 0, 1}, classes: []string{"setosa", "versicolor"},
		},
		{
			name:  "numeric class names sort as numbers",
			input: "f,c\n1,10\n2,2\n3,1\n",
			opts:  CSVOptions{Label: "c"},
			cols:  []string{"f"}, x: []float32{1, 2, 3},
			labels: []int64{2, 1, 0}, classes: []string{"1", "2", "10"},
		},
		{
			name:  "fixed class list",
			input: "f,c\n1,b\n2,a\n",
			opts:  CSVOptions{Label: "c", Classes: []string{"b", "a"}},
			cols:  []string{"f"}, x: []float32{1, 2},
			labels: []int64{0, 1}, classes: []string{"b", "a"},
		},
		{
			name:  "numeric label",
			input: "f,price\n1,2.5\n2,3.5\n",
			opts:  CSVOptions{Label: "price", LabelKind: LabelNumeric},
			cols:  []string{"f"}, x: []float32{1, 2}, y: []float32{2.5, 3.5},
		},
		{
			name:  "no header, label last, semicolons",
			input: "1;2;yes\n3;4;no\n",
			opts:  CSVOptions{NoHeader: true, LabelIndex: -1, Comma: ';'},
			cols:  []string{"c1", "c2"}, x: []float32{1, 2, 3, 4},
			labels: []int64{1, 0}, classes: []string{"no", "yes"},
		},
		{
			name:  "label by position, select and ignore",
			input: "id,a,b,c,lab\n7,1,2,3,x\n8,4,5,6,y\n",
			opts:  CSVOptions{LabelIndex: 5, Select: []string{"c", "a", "id"}, Ignore: []string{"id"}},
			cols:  []string{"c", "a"}, x: []float32{3, 1, 6, 4},
			labels: []int64{0, 1}, classes: []string{"x", "y"},
		},
		{
			name:  "mean imputation",
			input: "a,b\n1,NA\n?,4\n3,\n NaN ,8\n",
			opts:  CSVOptions{Impute: MissingMean},
			cols:  []string{"a", "b"}, x: []float32{1, 6, 2, 4, 3, 6, 2, 8},
		},
		{
			name:  "custom missing token, spaces, BOM, quotes, comments",
			input: "\ufeff\"a\", b\n# a comment\n -1 ,\"2\"\nmissing,3\n",
			opts:  CSVOptions{Missing: []string{"missing"}, Impute: MissingMean, Comment: '#'},
			cols:  []string{"a", "b"}, x: []float32{-1, 2, -1, 3},
		},
		{
			name:  "header only",
			input: "a,b,label\n",
			opts:  CSVOptions{Label: "label"},
			cols:  []string{"a", "b"}, x: []float32{}, labels: []int64{}, classes: []string{},
		},
	} {
		t.Run(test.name, func(t *testing.T) {
			tab, err := ParseCSV(strings.NewReader(test.input), "t.csv", test.opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := tab.Validate(); err != nil {
				t.Fatal(err)
			}
			if tab.Cols != len(test.cols) || tab.Rows*tab.Cols != len(test.x) {
				t.Fatalf("size %d×%d", tab.Rows, tab.Cols)
			}
			if !reflect.DeepEqual(tab.Columns, test.cols) || !reflect.DeepEqual(tab.X, test.x) {
				t.Fatalf("columns %v X %v, want %v %v", tab.Columns, tab.X, test.cols, test.x)
			}
			if !reflect.DeepEqual(tab.Labels, test.labels) || !reflect.DeepEqual(tab.Classes, test.classes) {
				t.Fatalf("labels %v classes %v, want %v %v", tab.Labels, tab.Classes, test.labels, test.classes)
			}
			if !reflect.DeepEqual(tab.Y, test.y) {
				t.Fatalf("y %v, want %v", tab.Y, test.y)
			}
		})
	}
}

func TestParseCSVErrors(t *testing.T) {
	iris := "sepal_length,sepal_width,species\n5.1,3.5,setosa\n4.9,abc,setosa\n"
	for _, test := range []struct {
		name  string
		input string
		opts  CSVOptions
		want  string
	}{
		{"not a number", iris, CSVOptions{Label: "species"}, `f.csv:3: column "sepal_width" (2): cannot parse "abc" as a number`},
		{"missing", "a,b\n1,2\n3,NA\n", CSVOptions{}, `f.csv:3: column "b" (2): missing value "NA" (set Impute to MissingMean`},
		{"empty cell", "a,b\n1,\n", CSVOptions{}, `f.csv:2: column "b" (2): missing value ""`},
		{"missing label", "a,l\n1,?\n", CSVOptions{Label: "l", Impute: MissingMean}, `f.csv:2: label column "l" (2): missing label "?"`},
		{"numeric label not a number", "a,l\n1,x\n", CSVOptions{Label: "l", LabelKind: LabelNumeric}, `f.csv:2: label column "l" (2): cannot parse "x" as a number`},
		{"unknown class", "a,l\n1,c\n", CSVOptions{Label: "l", Classes: []string{"a", "b"}}, `f.csv:2: label column "l" (2): unknown class "c" (classes: a, b)`},
		{"field count", "a,b\n1,2\n3\n", CSVOptions{}, `f.csv:3: row has a different number of fields than the header (2)`},
		{"line of a multi-line record", "a,b\n\"x\ny\",1\n2,zz\n", CSVOptions{Select: []string{"b"}}, `f.csv:4: column "b" (2): cannot parse "zz"`},
		{"bad quote", "a,b\n1,\"2\n", CSVOptions{}, `f.csv:2:6: extraneous or missing " in quoted-field`},
		{"unknown label", "a,b\n1,2\n", CSVOptions{Label: "c"}, `f.csv: label column "c" not found (columns: a, b)`},
		{"unknown ignored", "a,b\n1,2\n", CSVOptions{Ignore: []string{"z"}}, `ignored column "z" not found`},
		{"label also selected", "a,b\n1,2\n", CSVOptions{Label: "b", Select: []string{"b"}}, `column "b" is the label`},
		{"label index out of range", "a,b\n1,2\n", CSVOptions{LabelIndex: 3}, `label column 3 is out of range: there are 2 columns`},
		{"duplicate header", "a,a\n1,2\n", CSVOptions{}, `column name "a" appears twice`},
		{"empty file", "", CSVOptions{}, `f.csv: the file is empty`},
		{"out of range", "a\n1e39\n", CSVOptions{}, `"1e39" is outside the float32 range`},
		{"all missing", "a,b\n1,NA\n2,NA\n", CSVOptions{Impute: MissingMean}, `f.csv: column "b" (2): every value is missing`},
		{"label options without label", "a\n1\n", CSVOptions{LabelKind: LabelNumeric}, `label options given but no label column`},
	} {
		t.Run(test.name, func(t *testing.T) {
			_, err := ParseCSV(strings.NewReader(test.input), "f.csv", test.opts)
			if err == nil || !strings.Contains(err.Error(), test.want) {
				t.Fatalf("got %v, want error containing %q", err, test.want)
			}
		})
	}
}

func TestReadCSVFileAndGzip(t *testing.T) {
	dir := t.TempDir()
	text := "a,b,l\n1,2,x\n3,4,y\n"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(text))
	zw.Close()
	for name, content := range map[string][]byte{"plain.csv": []byte(text), "packed.csv.gz": gz.Bytes()} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		tab, err := ReadCSV(p, CSVOptions{Label: "l"})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(tab.X, []float32{1, 2, 3, 4}) || !reflect.DeepEqual(tab.Classes, []string{"x", "y"}) {
			t.Fatalf("%s: %+v", name, tab)
		}
	}
	p := filepath.Join(dir, "bad.csv")
	os.WriteFile(p, []byte("a\n1\nq\n"), 0o644)
	if _, err := ReadCSV(p, CSVOptions{}); err == nil || !strings.HasPrefix(err.Error(), p+":3: ") {
		t.Fatalf("error %v does not start with %s:3:", err, p)
	}
}

func TestCSVScanner(t *testing.T) {
	var b strings.Builder
	b.WriteString("f,l\n")
	names := []string{"b", "a", "c"}
	for i := 0; i < 10; i++ {
		b.WriteString(strings.Repeat("1", 1) + "." + string(rune('0'+i)) + "," + names[i%3] + "\n")
	}
	s, err := NewCSVScanner(strings.NewReader(b.String()), "s.csv", CSVOptions{Label: "l"})
	if err != nil {
		t.Fatal(err)
	}
	var rows int
	var all []float32
	for batch := 0; ; batch++ {
		tab, err := s.Next(4)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if want := min(4, 10-rows); tab.Rows != want {
			t.Fatalf("batch %d has %d rows, want %d", batch, tab.Rows, want)
		}
		// Indices follow first appearance and never change between batches.
		for i, l := range tab.Labels {
			if tab.Classes[l] != names[(rows+i)%3] {
				t.Fatalf("row %d: class %q, want %q", rows+i, tab.Classes[l], names[(rows+i)%3])
			}
			if int(l) != (rows+i)%3 {
				t.Fatalf("row %d: index %d, want %d", rows+i, l, (rows+i)%3)
			}
		}
		rows += tab.Rows
		all = append(all, tab.X...)
	}
	if rows != 10 || all[9] != 1.9 {
		t.Fatalf("read %d rows: %v", rows, all)
	}
	if _, err := s.Next(4); err != io.EOF {
		t.Fatalf("Next after the end: %v", err)
	}
	if _, err := NewCSVScanner(strings.NewReader("a\n1\n"), "s.csv", CSVOptions{Impute: MissingMean}); err == nil {
		t.Fatal("NewCSVScanner accepted mean imputation")
	}
}

func ExampleParseCSV() {
	csv := "height,weight,size\n1.80,80,L\n1.60,55,S\n1.75,NA,M\n"
	t, err := ParseCSV(strings.NewReader(csv), "people.csv", CSVOptions{Label: "size", Impute: MissingMean})
	if err != nil {
		panic(err)
	}
	fmt.Println(t.Rows, t.Columns, t.Classes)
	fmt.Println(t.Row(2), t.Classes[t.Labels[2]])

	_, err = ParseCSV(strings.NewReader("height,weight\n1.80,eighty\n"), "people.csv", CSVOptions{})
	fmt.Println(err)
	// Output:
	// 3 [height weight] [L M S]
	// [1.75 67.5] M
	// people.csv:2: column "weight" (2): cannot parse "eighty" as a number
}

// FuzzReadCSV: ParseCSV never panics, and a table it returns is consistent
// and holds no NaN (missing values are errors or imputed).
func FuzzReadCSV(f *testing.F) {
	f.Add("a,b,l\n1,2,x\n3,4,y\n", false, true)
	f.Add("1;2\n3;NA\n", true, false)
	f.Add("a,b\n\"1\",\"2\n\"\n", false, false)
	f.Add("x,l\n1e38,1\n-0,2\n", false, true)
	f.Add("x,y\n1,inf\n-Infinity,2\n", false, false)
	f.Fuzz(func(t *testing.T, input string, noHeader, label bool) {
		opts := CSVOptions{NoHeader: noHeader, Impute: MissingMean}
		if strings.Contains(input, ";") {
			opts.Comma = ';'
		}
		if label {
			opts.LabelIndex = -1
		}
		tab, err := ParseCSV(strings.NewReader(input), "fuzz.csv", opts)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.csv") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if err := tab.Validate(); err != nil {
			t.Fatal(err)
		}
		for _, v := range tab.X {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("non-finite value in %v", tab.X)
			}
		}
	})
}

// TestCSVRejectsNonFinite: every spelling of an infinity strconv accepts,
// and NaN when it is not a missing-value spelling, is refused with its
// file, line and column, in features and numeric labels, by the direct
// reader and through a Frame.
func TestCSVRejectsNonFinite(t *testing.T) {
	for _, cell := range []string{"inf", "Inf", "+inf", "-inf", "Infinity", "-Infinity", "INF", "nan"} {
		input := "a,b\n1,2\n3," + cell + "\n"
		want := `bad.csv:3: column "b" (2): "` + cell + `" is not a finite number`
		_, err := ParseCSV(strings.NewReader(input), "bad.csv", CSVOptions{Missing: []string{}})
		if err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %q", cell, err, want)
		}
		_, err = ParseCSV(strings.NewReader(input), "bad.csv", CSVOptions{Missing: []string{}, LabelIndex: -1, LabelKind: LabelNumeric})
		if want := `bad.csv:3: label column "b" (2): "` + cell + `" is not a finite number`; err == nil || err.Error() != want {
			t.Errorf("%s as label: got %v, want %q", cell, err, want)
		}
		fr, err := ParseCSVFrame(strings.NewReader(input), "bad.csv", CSVFrameOptions{Missing: []string{}})
		if err != nil {
			t.Fatalf("%s: frame: %v", cell, err)
		}
		if _, err := fr.Table(TableOptions{}); err == nil || !strings.Contains(err.Error(), `row 2: column "b"`) || !strings.Contains(err.Error(), "is not a finite number") {
			t.Errorf("%s: frame table: got %v", cell, err)
		}
	}
}
