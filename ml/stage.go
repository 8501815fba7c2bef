package ml

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/fathom-ml/fathom/data"
)

// Stage is anything that can sit in a pipeline: an Estimator or a Model.
type Stage interface {
	// Type is the stage's registered name, Spark ML's class name where
	// Spark has one ("LogisticRegression", "VectorAssembler").
	Type() string
}

// Transformer maps a frame to a frame, usually the input with columns
// added. It must not modify its input.
type Transformer interface {
	Stage
	Transform(f *data.Frame) (*data.Frame, error)
}

// Estimator fits a Model to data.
type Estimator interface {
	Stage
	// Fit fits on d. Every rank of d.Comm must call Fit with the same
	// parameters; each gets the same model.
	Fit(d Data) (Model, error)
	// Copy returns an independent copy of the estimator and its
	// parameters (what tuning changes on a grid point).
	Copy() Estimator
}

// Model is a fitted Transformer that can be saved. Transformers that need
// no fitting (VectorAssembler) are Models too, so that a fitted pipeline is
// a list of Models.
type Model interface {
	Transformer
	// Encode returns what SaveModel stores: the JSON-encodable settings
	// and the named arrays.
	Encode() (Encoded, error)
}

// Iterative is implemented by models fitted by an iterative solver that
// can say how many iterations the fit took (L-BFGS, OWL-QN, IRLS, ...).
// Reports (`fathom bench ml`, `fathom ml fit --json`) print it when the
// model, or the last stage of a PipelineModel, implements it.
type Iterative interface {
	NumIterations() int
}

// Encoded is a model's persistent form.
type Encoded struct {
	// Params is marshalled with encoding/json (a struct with json tags).
	Params any
	// Arrays are stored as F64 tensors named "<stage>.<name>".
	Arrays map[string]Array
}

// Array is a float64 array with its shape (outermost first).
type Array struct {
	Shape []int
	Data  []float64
}

// Vec returns a 1-d Array over v.
func Vec(v []float64) Array { return Array{Shape: []int{len(v)}, Data: v} }

// Mat returns a rows × cols Array over v (row-major).
func Mat(rows, cols int, v []float64) Array {
	return Array{Shape: []int{rows, cols}, Data: v}
}

// ModelDecoder rebuilds a model from its saved params (raw JSON) and arrays.
type ModelDecoder func(params json.RawMessage, arrays map[string]Array) (Model, error)

var registry = struct {
	sync.RWMutex
	stages map[string]func() Stage
	models map[string]ModelDecoder
}{stages: map[string]func() Stage{}, models: map[string]ModelDecoder{}}

// RegisterStage makes a stage type known by name, for configs: newStage
// returns a stage with default parameters (an Estimator, or a Model that
// needs no fitting). It panics on a duplicate name (a programmer error).
func RegisterStage(typ string, newStage func() Stage) {
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.stages[typ]; dup {
		panic("ml: stage " + typ + " registered twice")
	}
	registry.stages[typ] = newStage
}

// RegisterModel makes a model type loadable by LoadModel. It panics on a
// duplicate name.
func RegisterModel(typ string, decode ModelDecoder) {
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.models[typ]; dup {
		panic("ml: model " + typ + " registered twice")
	}
	registry.models[typ] = decode
}

// NewStage returns a new stage of the registered type with its defaults.
func NewStage(typ string) (Stage, error) {
	registry.RLock()
	mk, ok := registry.stages[typ]
	registry.RUnlock()
	if !ok {
		return nil, fmt.Errorf("ml: unknown stage type %q (known: %v)", typ, StageTypes())
	}
	return mk(), nil
}

// StageTypes lists the registered stage types, sorted.
func StageTypes() []string {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]string, 0, len(registry.stages))
	for k := range registry.stages {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func modelDecoder(typ string) (ModelDecoder, bool) {
	registry.RLock()
	defer registry.RUnlock()
	d, ok := registry.models[typ]
	return d, ok
}

func modelTypes() []string {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]string, 0, len(registry.models))
	for k := range registry.models {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// CheckChoice returns an error naming who (a stage or evaluator type) and
// the parameter when v is not one of the allowed values.
func CheckChoice(who, param, v string, allowed ...string) error {
	if slices.Contains(allowed, v) {
		return nil
	}
	q := make([]string, len(allowed))
	for i, a := range allowed {
		q[i] = strconv.Quote(a)
	}
	return fmt.Errorf("%s: %s must be one of %s, got %q", who, param, strings.Join(q, ", "), v)
}
