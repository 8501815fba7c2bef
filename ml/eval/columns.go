package eval

import (
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

// numbers reads a numeric scalar column, the error naming the evaluator.
func numbers(who string, f *data.Frame, col string) ([]float64, error) {
	if col == "" {
		return nil, fmt.Errorf("%s: a column name is empty", who)
	}
	v, err := ml.Numbers(f, col)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", who, err)
	}
	return v, nil
}

// weights reads the weight column (nil: every weight 1).
func weights(who string, f *data.Frame, col string) ([]float64, error) {
	w, err := ml.Weights(f, col)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", who, err)
	}
	return w, nil
}

func weight(w []float64, i int) float64 {
	if w == nil {
		return 1
	}
	return w[i]
}

// maxClass bounds class indices so that a confusion matrix stays small.
const maxClass = 1 << 14

// classIndex checks that x is a class index 0, 1, 2, ...
func classIndex(who, col string, row int, x float64) (int, error) {
	if x < 0 || x != math.Trunc(x) || x >= maxClass {
		return 0, fmt.Errorf("%s: column %q, row %d: %g is not a class index 0, 1, 2, ... below %d (index string labels with StringIndexer)", who, col, row+1, x, maxClass)
	}
	return int(x), nil
}
