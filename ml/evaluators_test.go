package ml

import (
	"strings"
	"sync"
	"testing"

	"github.com/fathom-ml/fathom/data"
)

type countEval struct{ Name string }

func (e *countEval) Metric() string     { return e.Name }
func (e *countEval) LargerBetter() bool { return true }
func (e *countEval) Evaluate(f *data.Frame, c Comm) (float64, error) {
	n, err := SumCount(c, f.Len())
	return float64(n), err
}

// registerCountOnce keeps the registry test repeatable (-count=N): the
// registry is process-wide.
var registerCountOnce sync.Once

func TestEvaluatorRegistry(t *testing.T) {
	registerCountOnce.Do(func() {
		RegisterEvaluator("mlTestCountEvaluator", func() Evaluator { return &countEval{Name: "count"} })
	})
	e, err := NewEvaluator("mlTestCountEvaluator")
	if err != nil || e.Metric() != "count" {
		t.Fatalf("NewEvaluator: %v, %v", e, err)
	}
	if _, err := NewEvaluator("NoSuchEvaluator"); err == nil || !strings.Contains(err.Error(), "mlTestCountEvaluator") {
		t.Fatalf("unknown evaluator: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a duplicate registration did not panic")
		}
	}()
	RegisterEvaluator("mlTestCountEvaluator", func() Evaluator { return &countEval{} })
}
