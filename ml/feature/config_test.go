package feature

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/mltest"
)

// TestConfigDecode: a config names a stage by type and sets some of
// Spark's params; the rest keep the defaults.
func TestConfigDecode(t *testing.T) {
	for _, tc := range []struct {
		typ, yaml string
		check     func(ml.Stage) bool
	}{
		{"StringIndexer", "inputCol: cat\noutputCol: idx\nstringOrderType: alphabetAsc", func(s ml.Stage) bool {
			x := s.(*StringIndexer)
			return x.InputCol == "cat" && x.StringOrderType == AlphabetAsc && x.HandleInvalid == InvalidError
		}},
		{"OneHotEncoder", "inputCols: [a, b]\noutputCols: [av, bv]\nhandleInvalid: keep", func(s ml.Stage) bool {
			x := s.(*OneHotEncoder)
			return slices.Equal(x.InputCols, []string{"a", "b"}) && x.DropLast && x.HandleInvalid == InvalidKeep
		}},
		{"Imputer", "inputCols: [g]\noutputCols: [h]\nstrategy: median", func(s ml.Stage) bool {
			x := s.(*Imputer)
			return x.Strategy == StrategyMedian && math.IsNaN(x.MissingValue)
		}},
		{"Imputer", "inputCol: g\noutputCol: h\nmissingValue: -1", func(s ml.Stage) bool {
			x := s.(*Imputer)
			return x.Strategy == StrategyMean && x.MissingValue == -1
		}},
		{"StandardScaler", "withMean: true", func(s ml.Stage) bool {
			x := s.(*StandardScaler)
			return x.WithMean && x.WithStd && x.InputCol == ml.FeaturesCol
		}},
		{"MinMaxScaler", "max: 5", func(s ml.Stage) bool { x := s.(*MinMaxScaler); return x.Min == 0 && x.Max == 5 }},
		{"VectorAssembler", "inputCols: [a, b]\nhandleInvalid: skip", func(s ml.Stage) bool {
			x := s.(*VectorAssembler)
			return x.OutputCol == ml.FeaturesCol && x.HandleInvalid == InvalidSkip
		}},
		{"Bucketizer", "inputCol: x\noutputCol: b\nsplits: [-.inf, 0, .inf]", func(s ml.Stage) bool {
			x := s.(*Bucketizer)
			return len(x.Splits) == 3 && math.IsInf(x.Splits[0], -1) && x.HandleInvalid == InvalidError
		}},
		{"Normalizer", "p: .inf", func(s ml.Stage) bool { return math.IsInf(s.(*Normalizer).P, 1) }},
	} {
		s, err := ml.NewStage(tc.typ)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(strings.NewReader(tc.yaml))
		dec.KnownFields(true)
		if err := dec.Decode(s); err != nil {
			t.Fatalf("%s: %v", tc.typ, err)
		}
		if !tc.check(s) {
			t.Errorf("%s from %q: %+v", tc.typ, tc.yaml, s)
		}
	}
}

// TestPipelineConformance runs the conformance suite on a pipeline of
// every estimator here: the fitted PipelineModel saves and loads with its
// stages' labels and arrays, and fits the same on 1 to 4 ranks.
func TestPipelineConformance(t *testing.T) {
	f := testFrame(t)
	newPipe := func() ml.Estimator {
		idx := NewStringIndexer()
		idx.InputCols, idx.OutputCols = []string{"cat", "code"}, []string{"catIdx", "codeIdx"}
		oh := NewOneHotEncoder()
		oh.InputCols, oh.OutputCols = []string{"catIdx", "codeIdx"}, []string{"catVec", "codeVec"}
		imp := NewImputer()
		imp.InputCol, imp.OutputCol, imp.Strategy = "gap", "gapFilled", StrategyMedian
		va := NewVectorAssembler("catVec", "codeVec", "gapFilled", "features")
		va.OutputCol = "raw"
		mm := NewMinMaxScaler()
		mm.InputCol, mm.OutputCol = "raw", "mm"
		st := NewStandardScaler()
		st.InputCol, st.OutputCol, st.WithMean = "mm", "std", true
		return ml.NewPipeline(idx, oh, imp, va, mm, st, NewPolynomialExpansion("std", "poly"))
	}
	m := mltest.Check(t, newPipe, f, mltest.Options{})
	out, err := m.Transform(f)
	if err != nil {
		t.Fatal(err)
	}
	vc, err := out.Vectors("poly")
	if err != nil {
		t.Fatal(err)
	}
	// cat's 4 labels and code's 5 values one-hot with dropLast, gap and
	// the 3 features: 3 + 4 + 1 + 3 = 11 elements; their monomials of
	// degree 1 and 2: C(13, 2) − 1 = 77.
	if vc.Width() != 77 {
		t.Fatalf("poly is %d wide, want 77", vc.Width())
	}
	if got := m.(*ml.PipelineModel).Stages[0].(*StringIndexerModel).LabelsArray[0]; !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Fatalf("labels %q", got)
	}
}

// TestJSONNonFinite: the params that hold NaN or ±Inf travel through
// JSON as Spark writes them ("NaN", "Infinity").
func TestJSONNonFinite(t *testing.T) {
	p := NewImputer()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"missingValue":"NaN"`) || !strings.Contains(string(b), `"strategy":"mean"`) {
		t.Fatalf("Imputer as JSON: %s", b)
	}
	if err := json.Unmarshal([]byte(`{"inputCol":"g","outputCol":"h","missingValue":-1}`), p); err != nil {
		t.Fatal(err)
	}
	if p.MissingValue != -1 || p.InputCol != "g" || p.Strategy != StrategyMean {
		t.Fatalf("Imputer from JSON: %+v", p)
	}
	if err := json.Unmarshal([]byte(`{"missingValue":"NaN"}`), p); err != nil || !math.IsNaN(p.MissingValue) || p.InputCol != "g" {
		t.Fatalf("Imputer from JSON with NaN: %+v, %v", p, err)
	}
	if err := json.Unmarshal([]byte(`{"missingValu":1}`), p); err == nil || !strings.Contains(err.Error(), "unknown field") {
		t.Fatalf("unknown field: %v", err)
	}
	if err := json.Unmarshal([]byte(`{"missingValue":"none"}`), p); err == nil {
		t.Fatal("missingValue \"none\" accepted")
	}
	n := NewNormalizer("a", "b")
	if err := json.Unmarshal([]byte(`{"p":"Infinity"}`), n); err != nil || !math.IsInf(n.P, 1) || n.InputCol != "a" {
		t.Fatalf("Normalizer from JSON: %+v, %v", n, err)
	}
	bk := NewBucketizer("x", "y")
	if err := json.Unmarshal([]byte(`{"splits":["-Infinity",0,"Infinity"]}`), bk); err != nil || len(bk.Splits) != 3 || !math.IsInf(bk.Splits[0], -1) || bk.HandleInvalid != InvalidError {
		t.Fatalf("Bucketizer from JSON: %+v, %v", bk, err)
	}
	if b, err = json.Marshal(bk); err != nil || !strings.Contains(string(b), `"splits":["-Infinity",0,"Infinity"]`) {
		t.Fatalf("Bucketizer as JSON: %s, %v", b, err)
	}
}
