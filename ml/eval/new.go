package eval

import (
	"fmt"
	"slices"

	"github.com/fathom-ml/fathom/ml"
)

var constructors = map[string]func() ml.Evaluator{
	"BinaryClassificationEvaluator":     func() ml.Evaluator { return NewBinaryClassificationEvaluator() },
	"MulticlassClassificationEvaluator": func() ml.Evaluator { return NewMulticlassClassificationEvaluator() },
	"RegressionEvaluator":               func() ml.Evaluator { return NewRegressionEvaluator() },
}

// New returns the evaluator of the given type (Spark's class name) with
// its defaults, for configs to decode their settings over.
func New(typ string) (ml.Evaluator, error) {
	mk, ok := constructors[typ]
	if !ok {
		return nil, fmt.Errorf("eval: unknown evaluator %q (known: %v)", typ, Types())
	}
	return mk(), nil
}

// Types lists the evaluator types New knows, sorted.
func Types() []string {
	out := make([]string, 0, len(constructors))
	for k := range constructors {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
