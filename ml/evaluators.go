package ml

import (
	"fmt"
	"sort"
	"sync"
)

// evaluators is the registry of evaluator types, for configs (`fathom ml
// fit`'s evaluator: section and tuning), as RegisterStage is for stages.
var evaluators = struct {
	sync.RWMutex
	m map[string]func() Evaluator
}{m: map[string]func() Evaluator{}}

// RegisterEvaluator makes an evaluator type known by name (Spark's class
// name, "MulticlassClassificationEvaluator"): newEval returns one with its
// default parameters, a pointer to a struct whose exported fields carry
// Spark's parameter names as json/yaml tags (metricName, labelCol, ...),
// so that a config's params decode over the defaults. Call it from the
// package's init. It panics on a duplicate name.
func RegisterEvaluator(typ string, newEval func() Evaluator) {
	evaluators.Lock()
	defer evaluators.Unlock()
	if _, dup := evaluators.m[typ]; dup {
		panic("ml: evaluator " + typ + " registered twice")
	}
	evaluators.m[typ] = newEval
}

// NewEvaluator returns a new evaluator of the registered type with its
// defaults.
func NewEvaluator(typ string) (Evaluator, error) {
	evaluators.RLock()
	mk, ok := evaluators.m[typ]
	evaluators.RUnlock()
	if !ok {
		return nil, fmt.Errorf("ml: unknown evaluator type %q (known: %v)", typ, EvaluatorTypes())
	}
	return mk(), nil
}

// EvaluatorTypes lists the registered evaluator types, sorted.
func EvaluatorTypes() []string {
	evaluators.RLock()
	defer evaluators.RUnlock()
	out := make([]string, 0, len(evaluators.m))
	for k := range evaluators.m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
