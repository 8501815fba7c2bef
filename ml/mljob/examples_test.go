package mljob

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/mltest"
)

// minMetric are floors the example fits must reach on their held-out rows
// (larger-is-better metrics only).
var minMetric = map[string]map[string]float64{
	"iris-logreg.yaml":       {"accuracy": 0.9},
	"iris-cv.yaml":           {"accuracy": 0.9},
	"mlp.yaml":               {"accuracy": 0.9},
	"naive-bayes.yaml":       {"accuracy": 0.8},
	"linearsvc.yaml":         {"areaUnderROC": 0.9},
	"linear-regression.yaml": {"r2": 0.9},
}

// distTol is the relative tolerance between an example's model fit over
// 2 ranks and in one process: 1e-9, except for the MLP, whose 200 L-BFGS
// iterations on a non-convex loss amplify the rounding of the
// differently ordered sums (about 1e-6 relative at the end).
var distTol = map[string]float64{"mlp.yaml": 1e-5}

// missingTypes lists the stage and evaluator types a config names that
// this build has not registered.
func missingTypes(t *testing.T, text []byte) []string {
	var c struct {
		Pipeline  []struct{ Type string } `yaml:"pipeline"`
		Evaluator yaml.Node               `yaml:"evaluator"`
	}
	if err := yaml.Unmarshal(text, &c); err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, s := range c.Pipeline {
		if !slices.Contains(ml.StageTypes(), s.Type) {
			missing = append(missing, s.Type)
		}
	}
	var evs []struct{ Type string }
	if c.Evaluator.Kind == yaml.MappingNode {
		evs = make([]struct{ Type string }, 1)
		c.Evaluator.Decode(&evs[0])
	} else {
		c.Evaluator.Decode(&evs)
	}
	for _, e := range evs {
		if !slices.Contains(ml.EvaluatorTypes(), e.Type) {
			missing = append(missing, e.Type)
		}
	}
	return missing
}

// TestExamples parses every examples/ml config strictly and fits it. A
// config naming a type this build lacks is skipped (the algorithms
// register themselves through stages.go).
func TestExamples(t *testing.T) {
	paths, err := filepath.Glob("../../examples/ml/*.yaml")
	if err != nil || len(paths) < 7 {
		t.Fatalf("examples: %v, %v", paths, err)
	}
	for _, path := range paths {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			text, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if m := missingTypes(t, text); len(m) > 0 {
				// Still check every key but the stages' params strictly.
				var doc yaml.Node
				if err := yaml.Unmarshal(text, &doc); err != nil {
					t.Fatal(err)
				}
				if err := checkKeys(doc.Content[0], reflect.TypeFor[Config](), ""); err != nil {
					t.Fatal(err)
				}
				t.Skipf("keys checked; types not registered in this build, not fitted: %v", m)
			}
			c, err := Load(path, []string{"output.dir=" + t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(c, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.MetricsSplit != "test" || len(res.Metrics) == 0 {
				t.Fatalf("result %+v", res)
			}
			for k, floor := range minMetric[name] {
				if v, ok := res.Metrics[k]; !ok || v < floor {
					t.Errorf("%s %g, want ≥ %g (metrics %v)", k, v, floor, res.Metrics)
				}
			}
			// The same fit over 2 ranks of a process group (each rank
			// its share of the rows, rank 0 writing): the same model.
			rs := runOnRanks(t, c, 2)
			for r, rr := range rs {
				tol := distTol[name]
				if tol == 0 {
					tol = 1e-9
				}
				if d := mltest.DiffModels(res.Model, rr.Model, tol); d != "" {
					t.Fatalf("2 ranks, rank %d: %s", r, d)
				}
				for k, v := range res.Metrics {
					if math.Abs(rr.Metrics[k]-v) > tol*max(math.Abs(v), 1) {
						t.Fatalf("2 ranks, rank %d: %s %.17g, one process %.17g", r, k, rr.Metrics[k], v)
					}
				}
			}
			back, err := ml.LoadModel(res.ModelPath)
			if err != nil {
				t.Fatal(err)
			}
			if back.Type() != "PipelineModel" {
				t.Fatalf("saved %s", back.Type())
			}
		})
	}
}

// TestFashionExamples checks the Fashion-MNIST configs (too slow to fit in
// a test; `fathom ml fit` runs them): their keys, and their stages' params
// when the types are registered.
func TestFashionExamples(t *testing.T) {
	paths, err := filepath.Glob("../../examples/ml/fashion/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("examples: %v, %v", paths, err)
	}
	for _, path := range paths {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if m := missingTypes(t, text); len(m) > 0 {
			var doc yaml.Node
			if err := yaml.Unmarshal(text, &doc); err != nil {
				t.Fatal(err)
			}
			if err := checkKeys(doc.Content[0], reflect.TypeFor[Config](), ""); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			continue
		}
		if _, err := Load(path, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// TestIrisCVParallelism: the cross-validated grid of examples/ml/iris-cv.yaml
// with the real stages gives the same metrics and model at parallelism 1
// and 4, and with the fits spread over 3 ranks.
func TestIrisCVParallelism(t *testing.T) {
	path := "../../examples/ml/iris-cv.yaml"
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := missingTypes(t, text); len(m) > 0 {
		t.Skipf("types not registered in this build: %v", m)
	}
	var results []*Result
	for _, set := range [][]string{
		{"tuning.crossValidator.parallelism=1"},
		{"tuning.crossValidator.parallelism=4"},
	} {
		c, err := Load(path, set)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(c, Options{NoSave: true})
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
	}
	c, err := Load(path, []string{"tuning.crossValidator.distribution=spread", "output.dir=" + t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	results = append(results, runOnRanks(t, c, 3)...)
	a := results[0]
	for i, b := range results[1:] {
		if !slices.Equal(a.Tuning.AvgMetrics, b.Tuning.AvgMetrics) || a.Tuning.BestIndex != b.Tuning.BestIndex {
			t.Fatalf("run %d: metrics %v (best %d), first run %v (best %d)", i+1, b.Tuning.AvgMetrics, b.Tuning.BestIndex, a.Tuning.AvgMetrics, a.Tuning.BestIndex)
		}
		tol := 0.0
		if i >= 1 { // the spread runs refit the best point over 3 ranks
			tol = 1e-9
		}
		if d := mltest.DiffModels(a.Model, b.Model, tol); d != "" {
			t.Fatalf("run %d: best model: %s", i+1, d)
		}
	}
}
