package feature

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/mltest"
)

func frame(t *testing.T, cols ...data.Column) *data.Frame {
	t.Helper()
	f, err := data.NewFrame(cols...)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// testFrame is 23 rows: a 3-wide features vector, a string category with
// ties, an int64 category, a float column with NaNs and a constant column.
func testFrame(t *testing.T) *data.Frame {
	n := 23
	feat := make([]float64, 3*n)
	cat := make([]string, n)
	code := make([]int64, n)
	gap := make([]float64, n)
	for i := range n {
		x := float64(i)
		feat[3*i] = math.Sin(x) * 3
		feat[3*i+1] = x*x/10 - 4
		feat[3*i+2] = 7 // constant
		cat[i] = []string{"b", "a", "c", "a", "b", "d"}[i%6]
		code[i] = int64((i * 7) % 5)
		gap[i] = math.Cos(x) * 10
		if i%4 == 1 {
			gap[i] = math.NaN()
		}
	}
	return frame(t,
		ml.VectorOut("features", 3, feat),
		data.NewColumn("cat", cat, nil),
		data.NewColumn("code", code, nil),
		data.NewColumn("gap", gap, nil),
	)
}

func TestConformance(t *testing.T) {
	f := testFrame(t)
	for _, test := range []struct {
		name string
		est  func() ml.Estimator
	}{
		{"StandardScaler", func() ml.Estimator { return NewStandardScaler() }},
		{"StandardScaler/withMean", func() ml.Estimator { s := NewStandardScaler(); s.WithMean = true; return s }},
		{"MinMaxScaler", func() ml.Estimator { s := NewMinMaxScaler(); s.Min, s.Max = -2, 3; return s }},
		{"MaxAbsScaler", func() ml.Estimator { return NewMaxAbsScaler() }},
		{"StringIndexer", func() ml.Estimator { s := NewStringIndexer(); s.InputCol, s.OutputCol = "cat", "catIndex"; return s }},
		{"StringIndexer/cols", func() ml.Estimator {
			s := NewStringIndexer()
			s.InputCols, s.OutputCols = []string{"cat", "code"}, []string{"ci", "di"}
			return s
		}},
		{"OneHotEncoder", func() ml.Estimator { o := NewOneHotEncoder(); o.InputCol, o.OutputCol = "code", "codeVec"; return o }},
		{"OneHotEncoder/keep", func() ml.Estimator {
			o := NewOneHotEncoder()
			o.InputCols, o.OutputCols, o.DropLast, o.HandleInvalid = []string{"code"}, []string{"v"}, false, InvalidKeep
			return o
		}},
		{"Imputer/mean", func() ml.Estimator { p := NewImputer(); p.InputCol, p.OutputCol = "gap", "filled"; return p }},
		{"Imputer/median", func() ml.Estimator {
			p := NewImputer()
			p.InputCols, p.OutputCols, p.Strategy = []string{"gap", "code"}, []string{"g", "c"}, StrategyMedian
			return p
		}},
		{"Imputer/mode", func() ml.Estimator {
			p := NewImputer()
			p.InputCols, p.OutputCols, p.Strategy = []string{"code"}, []string{"c"}, StrategyMode
			return p
		}},
	} {
		t.Run(test.name, func(t *testing.T) { mltest.Check(t, test.est, f, mltest.Options{}) })
	}
}

// TestDistributedLabels: the labels live in the params, which
// mltest.DiffModels does not compare; every rank must get the
// single-process labels.
func TestDistributedLabels(t *testing.T) {
	f := testFrame(t)
	for _, order := range []string{FrequencyDesc, FrequencyAsc, AlphabetDesc, AlphabetAsc} {
		newEst := func() ml.Estimator {
			s := NewStringIndexer()
			s.InputCols, s.OutputCols, s.StringOrderType = []string{"cat", "code"}, []string{"ci", "di"}, order
			return s
		}
		one, err := newEst().Fit(ml.Local(f))
		if err != nil {
			t.Fatal(err)
		}
		want := one.(*StringIndexerModel).LabelsArray
		for _, n := range []int{2, 3, 4} {
			for r, m := range mltest.FitOnRanks(t, newEst, f, n, nil) {
				got := m.(*StringIndexerModel).LabelsArray
				if !slices.EqualFunc(got, want, slices.Equal) {
					t.Fatalf("%s, %d ranks, rank %d: labels %q, single process %q", order, n, r, got, want)
				}
			}
		}
	}
}

func indexLabels(t *testing.T, order string, f *data.Frame, col string) []string {
	t.Helper()
	s := NewStringIndexer()
	s.InputCol, s.OutputCol, s.StringOrderType = col, "idx", order
	m, err := s.Fit(ml.Local(f))
	if err != nil {
		t.Fatal(err)
	}
	return m.(*StringIndexerModel).Labels
}

func TestStringIndexerOrder(t *testing.T) {
	// counts: b 3, a 3, c 1, d 2, e 1
	f := frame(t, data.NewColumn("s", []string{"b", "a", "d", "b", "c", "a", "e", "d", "b", "a"}, nil))
	for _, test := range []struct {
		order string
		want  []string
	}{
		{FrequencyDesc, []string{"a", "b", "d", "c", "e"}},
		{FrequencyAsc, []string{"c", "e", "d", "a", "b"}},
		{AlphabetDesc, []string{"e", "d", "c", "b", "a"}},
		{AlphabetAsc, []string{"a", "b", "c", "d", "e"}},
	} {
		if got := indexLabels(t, test.order, f, "s"); !slices.Equal(got, test.want) {
			t.Errorf("%s: labels %q, want %q", test.order, got, test.want)
		}
	}
	// Numbers are indexed by their Java string form; nulls are not counted.
	g := frame(t,
		data.NewColumn("x", []float64{1, 2.5, 1, 1e7, 0.0001, 2.5, 1}, []bool{true, true, true, true, true, true, false}),
		data.NewColumn("i", []int64{3, 3, 10, 3, 10, 7, 7}, nil),
		data.NewColumn("b", []bool{true, false, true, true, false, true, true}, nil),
	)
	for _, test := range []struct {
		col  string
		want []string
	}{
		{"x", []string{"1.0", "2.5", "1.0E-4", "1.0E7"}},
		{"i", []string{"3", "10", "7"}},
		{"b", []string{"true", "false"}},
	} {
		if got := indexLabels(t, FrequencyDesc, g, test.col); !slices.Equal(got, test.want) {
			t.Errorf("column %s: labels %q, want %q", test.col, got, test.want)
		}
	}
}

func TestJavaDouble(t *testing.T) {
	for _, test := range []struct {
		v    float64
		want string
	}{
		{1, "1.0"}, {-2.5, "-2.5"}, {0, "0.0"}, {0.001, "0.001"}, {0.0001, "1.0E-4"},
		{1234567.5, "1234567.5"}, {1e7, "1.0E7"}, {1.25e-10, "1.25E-10"}, {math.NaN(), "NaN"},
		{math.Inf(-1), "-Infinity"}, {100, "100.0"},
	} {
		if got := javaDouble(test.v, 64); got != test.want {
			t.Errorf("javaDouble(%g) = %q, want %q", test.v, got, test.want)
		}
	}
	if got := javaDouble(float64(float32(0.1)), 32); got != "0.1" {
		t.Errorf("javaDouble(float32 0.1) = %q, want 0.1", got)
	}
}

func TestStringIndexerInvalid(t *testing.T) {
	train := frame(t, data.NewColumn("s", []string{"x", "y", "x"}, nil))
	test := frame(t, data.NewColumn("s", []string{"y", "z", "", "x"}, []bool{true, true, false, true}), data.NewColumn("k", []int64{1, 2, 3, 4}, nil))
	fit := func(h string) *StringIndexerModel {
		s := NewStringIndexer()
		s.InputCol, s.OutputCol, s.HandleInvalid = "s", "idx", h
		m, err := s.Fit(ml.Local(train))
		if err != nil {
			t.Fatal(err)
		}
		return m.(*StringIndexerModel)
	}
	_, err := fit(InvalidError).Transform(test)
	if err == nil || !strings.Contains(err.Error(), `column "s", row 2: unseen label "z"`) {
		t.Fatalf("unseen label: err = %v", err)
	}
	_, err = fit(InvalidError).Transform(test.Slice(2, 4))
	if err == nil || !strings.Contains(err.Error(), `column "s", row 1: null value`) {
		t.Fatalf("null: err = %v", err)
	}
	out, err := fit(InvalidSkip).Transform(test)
	if err != nil {
		t.Fatal(err)
	}
	idx, _ := out.Float64s("idx")
	k, _ := out.Int64s("k")
	if !slices.Equal(idx, []float64{1, 0}) || !slices.Equal(k, []int64{1, 4}) {
		t.Fatalf("skip: idx %v, k %v; want [1 0], [1 4]", idx, k)
	}
	out, err = fit(InvalidKeep).Transform(test)
	if err != nil {
		t.Fatal(err)
	}
	idx, _ = out.Float64s("idx")
	if !slices.Equal(idx, []float64{1, 2, 2, 0}) {
		t.Fatalf("keep: idx %v, want [1 2 2 0]", idx)
	}
	// IndexToString finds the labels in the metadata and maps back.
	back, err := NewIndexToString("idx", "s2").Transform(out.Slice(0, 1))
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := back.Strings("s2"); !slices.Equal(s, []string{"y"}) {
		t.Fatalf("IndexToString: %q, want [y]", s)
	}
	if _, err := NewIndexToString("idx", "s2").Transform(out); err == nil || !strings.Contains(err.Error(), `row 2: index 2 is not one of the 2 labels'`) {
		t.Fatalf("IndexToString of the keep index: err = %v", err)
	}
	if _, err := NewIndexToString("k", "s2").Transform(out); err == nil || !strings.Contains(err.Error(), "no labels") {
		t.Fatalf("IndexToString without labels: err = %v", err)
	}
	if _, err := fit(InvalidError).Transform(frame(t, data.NewColumn("t", []string{"x"}, nil))); err == nil || !strings.Contains(err.Error(), `no column "s" (the frame has t)`) {
		t.Fatalf("missing column: err = %v", err)
	}
}

func TestParamErrors(t *testing.T) {
	f := testFrame(t)
	for _, test := range []struct {
		est  ml.Estimator
		want string
	}{
		{&StringIndexer{InputCol: "cat", OutputCol: "o", HandleInvalid: "drop", StringOrderType: FrequencyDesc}, `StringIndexer: handleInvalid must be one of "error", "skip", "keep", got "drop"`},
		{&StringIndexer{InputCol: "cat", OutputCol: "o", HandleInvalid: InvalidError, StringOrderType: "random"}, `stringOrderType must be one of`},
		{NewStringIndexer(), "StringIndexer: set inputCol (and outputCol) or inputCols (and outputCols)"},
		{&StringIndexer{InputCols: []string{"cat"}, OutputCols: []string{"a", "b"}, HandleInvalid: InvalidError, StringOrderType: FrequencyDesc}, "1 inputCols but 2 outputCols"},
		{&MinMaxScaler{InputCol: "features", OutputCol: "o", Min: 1, Max: 1}, "MinMaxScaler: min must be < max, got min 1, max 1"},
		{&StandardScaler{InputCol: "cat", OutputCol: "o"}, `column "cat" is string, not numeric`},
		{&StandardScaler{InputCol: "nope", OutputCol: "o"}, `no column "nope" (the frame has features, cat, code, gap)`},
		{&OneHotEncoder{InputCol: "cat", OutputCol: "o", HandleInvalid: InvalidError}, `OneHotEncoder: column "cat" is string, not a numeric scalar column (index strings with StringIndexer first)`},
		{&OneHotEncoder{InputCol: "code", OutputCol: "o", HandleInvalid: InvalidSkip}, `handleInvalid must be one of "error", "keep"`},
		{&OneHotEncoder{InputCol: "gap", OutputCol: "o", HandleInvalid: InvalidError}, `OneHotEncoder: column "gap", row 2: NaN is not a category index`},
		{&Imputer{InputCol: "gap", OutputCol: "o", Strategy: "max", MissingValue: math.NaN()}, `strategy must be one of "mean", "median", "mode"`},
		{&Imputer{InputCol: "cat", OutputCol: "o", Strategy: StrategyMean, MissingValue: math.NaN()}, `Imputer: column "cat" is string`},
	} {
		_, err := test.est.Fit(ml.Local(f))
		if err == nil || !strings.Contains(err.Error(), test.want) {
			t.Errorf("%s: err = %v, want it to contain %q", test.est.Type(), err, test.want)
		}
	}
}

func TestVectorAssembler(t *testing.T) {
	f := frame(t,
		data.NewColumn("a", []float64{1, math.NaN(), 3, 4}, nil),
		data.NewColumn("b", []int64{10, 20, 0, 40}, []bool{true, true, false, true}),
		data.NewVectorColumn32("v", 2, []float32{0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5}, nil, nil),
		data.NewColumn("t", []bool{true, false, true, false}, nil),
		data.NewColumn("s", []string{"p", "q", "r", "s"}, nil),
	)
	va := NewVectorAssembler("a", "b", "v", "t")
	va.HandleInvalid = InvalidKeep
	out, err := va.Transform(f)
	if err != nil {
		t.Fatal(err)
	}
	vc, _ := out.Vectors("features")
	nan := math.NaN()
	want := []float64{1, 10, 0.5, 1.5, 1, nan, 20, 2.5, 3.5, 0, 3, nan, 4.5, 5.5, 1, 4, 40, 6.5, 7.5, 0}
	if vc.Width() != 5 || !slices.EqualFunc(vc.Float64s(), want, func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }) {
		t.Fatalf("keep: %d wide %v, want 5 wide %v", vc.Width(), vc.Float64s(), want)
	}
	va.HandleInvalid = InvalidSkip
	if out, err = va.Transform(f); err != nil {
		t.Fatal(err)
	}
	vc, _ = out.Vectors("features")
	if s, _ := out.Strings("s"); !slices.Equal(vc.Float64s(), []float64{1, 10, 0.5, 1.5, 1, 4, 40, 6.5, 7.5, 0}) || !slices.Equal(s, []string{"p", "s"}) {
		t.Fatalf("skip: %v, rows %q", vc.Float64s(), s)
	}
	va.HandleInvalid = InvalidError
	if _, err = va.Transform(f); err == nil || !strings.Contains(err.Error(), `VectorAssembler: column "a", row 2: NaN value`) {
		t.Fatalf("NaN: err = %v", err)
	}
	if _, err = va.Transform(f.Slice(2, 4)); err == nil || !strings.Contains(err.Error(), `column "b", row 1: null value`) {
		t.Fatalf("null: err = %v", err)
	}
	if _, err = NewVectorAssembler("a", "s").Transform(f); err == nil || !strings.Contains(err.Error(), `column "s" is string, not a numeric scalar column`) {
		t.Fatalf("string column: err = %v", err)
	}
	if _, err = NewVectorAssembler("a", "zz").Transform(f); err == nil || !strings.Contains(err.Error(), `no column "zz" (the frame has a, b, v, t, s)`) {
		t.Fatalf("missing column: err = %v", err)
	}
	// NaN inside a vector is copied (Spark); a null element is invalid.
	g := frame(t, data.NewVectorColumn("v", 2, []float64{1, math.NaN(), 3, 4}, nil, []bool{true, true, false, true}))
	va = NewVectorAssembler("v")
	if _, err = va.Transform(g); err == nil || !strings.Contains(err.Error(), `column "v", row 2, element 1: null value`) {
		t.Fatalf("null element: err = %v", err)
	}
	out, err = va.Transform(g.Slice(0, 1))
	if err != nil {
		t.Fatal(err)
	}
	vc, _ = out.Vectors("features")
	if v := vc.Float64s(); v[0] != 1 || !math.IsNaN(v[1]) {
		t.Fatalf("NaN in a vector: %v", v)
	}
	va.HandleInvalid = InvalidSkip
	if out, err = va.Transform(g); err != nil || out.Len() != 1 {
		t.Fatalf("skip a null element: %v rows, %v", out, err)
	}
	// A pure transformer saves and loads.
	va = NewVectorAssembler("v", "t")
	va.HandleInvalid = InvalidSkip
	roundTrip(t, va, f)
	roundTrip(t, NewIndexToString("a", "label", "x", "y", "z", "w", "v"), f.Slice(0, 1))
}

func roundTrip(t *testing.T, m ml.Model, f *data.Frame) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := ml.SaveModel(path, m); err != nil {
		t.Fatal(err)
	}
	back, err := ml.LoadModel(path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := m.Transform(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := back.Transform(f)
	if err != nil {
		t.Fatal(err)
	}
	if d := mltest.DiffFrames(a, b, 0); d != "" {
		t.Fatalf("%s: loaded model transforms differently: %s", m.Type(), d)
	}
}

func TestOneHotEncoder(t *testing.T) {
	train := frame(t, data.NewColumn("c", []float64{0, 2, 1, 2}, nil))
	test := frame(t, data.NewColumn("c", []float64{2, 5, 0, math.NaN()}, nil))
	for _, tc := range []struct {
		dropLast bool
		handle   string
		width    int
		want     []float64 // nil: an error
	}{
		{true, InvalidError, 2, nil},
		{false, InvalidError, 3, nil},
		{true, InvalidKeep, 3, []float64{0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0}},
		{false, InvalidKeep, 4, []float64{0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1}},
	} {
		o := NewOneHotEncoder()
		o.InputCol, o.OutputCol, o.DropLast, o.HandleInvalid = "c", "v", tc.dropLast, tc.handle
		m, err := o.Fit(ml.Local(train))
		if err != nil {
			t.Fatal(err)
		}
		out, err := m.Transform(test)
		if tc.want == nil {
			if err == nil || !strings.Contains(err.Error(), `column "c", row 2: category index 5 is not one of the 3 seen when fitting`) {
				t.Errorf("dropLast %v: err = %v", tc.dropLast, err)
			}
			out, err = m.Transform(train)
			if err != nil {
				t.Fatal(err)
			}
			vc, _ := out.Vectors("v")
			if vc.Width() != tc.width || vc.At(0, 0) != 1 || vc.At(1, 1) != 0 {
				t.Errorf("dropLast %v: width %d, %v", tc.dropLast, vc.Width(), vc.Float64s())
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		vc, _ := out.Vectors("v")
		if vc.Width() != tc.width || !slices.Equal(vc.Float64s(), tc.want) {
			t.Errorf("dropLast %v, keep: %d wide %v, want %d wide %v", tc.dropLast, vc.Width(), vc.Float64s(), tc.width, tc.want)
		}
	}
}

func TestImputer(t *testing.T) {
	nan := math.NaN()
	f := frame(t,
		data.NewColumn("x", []float64{4, nan, 1, 0, 3, 0, 2}, []bool{true, true, true, true, true, true, false}),
		data.NewColumn("n", []int64{5, 0, 5, 1, 1, 0, 2}, nil),
	)
	fit := func(strategy string, missing float64, col string) *ImputerModel {
		p := NewImputer()
		p.InputCol, p.OutputCol, p.Strategy, p.MissingValue = col, "out", strategy, missing
		m, err := p.Fit(ml.Local(f))
		if err != nil {
			t.Fatal(err)
		}
		return m.(*ImputerModel)
	}
	// x present: 4, 1, 0, 3, 0 (NaN and null missing): median 1 (rank 3 of 5).
	// With missingValue 0: 4, 1, 3: mean 8/3, median 3.
	// n with missingValue 0: 5, 5, 1, 1, 2: mode 1 (1 and 5 tie: the smallest).
	for _, tc := range []struct {
		strategy string
		missing  float64
		col      string
		want     float64
	}{
		{StrategyMean, nan, "x", 8.0 / 5},
		{StrategyMedian, nan, "x", 1},
		{StrategyMode, nan, "x", 0},
		{StrategyMean, 0, "x", 8.0 / 3},
		{StrategyMedian, 0, "x", 3},
		{StrategyMode, 0, "n", 1},
		{StrategyMedian, 5, "n", 1}, // 0, 1, 1, 0, 2: rank 3 → 1
		{StrategyMedian, 2, "n", 1}, // 5, 0, 5, 1, 1, 0 → 0 0 1 1 5 5: rank 3 is 1
		{StrategyMedian, 1, "n", 2}, // 5, 0, 5, 0, 2 → 0 0 2 5 5: 2
		{StrategyMedian, 0, "n", 2}, // 5 5 1 1 2 → 1 1 2 5 5: 2
	} {
		m := fit(tc.strategy, tc.missing, tc.col)
		if m.Surrogates[0] != tc.want {
			t.Errorf("%s, missingValue %g, column %s: surrogate %g, want %g", tc.strategy, tc.missing, tc.col, m.Surrogates[0], tc.want)
		}
	}
	// The lower median of an even count: 0, 1, 2, 3 → 1 (scikit-learn: 1.5).
	g := frame(t, data.NewColumn("y", []float64{3, 0, 2, 1}, nil))
	p := NewImputer()
	p.InputCol, p.OutputCol, p.Strategy = "y", "o", StrategyMedian
	m, err := p.Fit(ml.Local(g))
	if err != nil || m.(*ImputerModel).Surrogates[0] != 1 {
		t.Fatalf("even median: %v, %v; want 1", m, err)
	}
	// Transform replaces null and missingValue; with missingValue 0 a NaN stays.
	out, err := fit(StrategyMean, 0, "x").Transform(f)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := out.Float64s("out")
	w := 8.0 / 3
	if want := []float64{4, nan, 1, w, 3, w, w}; !slices.EqualFunc(v, want, func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }) {
		t.Fatalf("transform: %v, want %v", v, want)
	}
	p.InputCol, p.MissingValue = "y", 0
	if _, err := p.Fit(ml.Local(frame(t, data.NewColumn("y", []float64{0, nan, 0}, nil)))); err == nil || !strings.Contains(err.Error(), `Imputer: column "y" has no value that is not missing`) {
		t.Fatalf("all missing: err = %v", err)
	}
}

// TestEmptyRank: a rank with no rows contributes nothing and still gets
// the model.
func TestEmptyRank(t *testing.T) {
	f := testFrame(t)
	split := func(f *data.Frame, r, n int) *data.Frame {
		if r == 0 {
			return f.Slice(0, 0)
		}
		return mltest.SplitRows(f, r-1, n-1)
	}
	for _, newEst := range []func() ml.Estimator{
		func() ml.Estimator { s := NewStandardScaler(); s.WithMean = true; return s },
		func() ml.Estimator { return NewMinMaxScaler() },
		func() ml.Estimator { s := NewStringIndexer(); s.InputCol, s.OutputCol = "cat", "i"; return s },
		func() ml.Estimator { o := NewOneHotEncoder(); o.InputCol, o.OutputCol = "code", "v"; return o },
		func() ml.Estimator {
			p := NewImputer()
			p.InputCols, p.OutputCols, p.Strategy = []string{"gap"}, []string{"g"}, StrategyMedian
			return p
		},
		func() ml.Estimator {
			p := NewImputer()
			p.InputCols, p.OutputCols, p.Strategy = []string{"code"}, []string{"g"}, StrategyMode
			return p
		},
	} {
		mltest.Check(t, newEst, f, mltest.Options{Ranks: []int{2, 3}, Split: split})
	}
}
