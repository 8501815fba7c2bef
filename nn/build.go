package nn

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fathom-ml/fathom/tensor"
)

// SpecError reports a layer of a Spec that cannot be built: its path (such
// as "model.layers[3]"), its type and what is wrong.
type SpecError struct {
	Path string
	Type string
	Err  error
}

func (e *SpecError) Error() string {
	if e.Type == "" {
		return fmt.Sprintf("%s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("%s (%s): %v", e.Path, e.Type, e.Err)
}

func (e *SpecError) Unwrap() error { return e.Err }

// Build builds the layers of a Spec as a Sequential for examples of shape
// input (without the batch dim), inferring each layer's input size from
// the previous layer's output. It returns the model and the shape of one
// output example. Errors are *SpecError values naming the layer, e.g.
//
//	layers[3] (linear): input has 3136 features but in=3000
//	layers[2] (conv2d): input must be [C, H, W], got [784]
//
// All randomness (initialization, dropout streams) comes from rng.
func Build(specs []LayerSpec, input []int, rng *tensor.RNG) (*Sequential, []int, error) {
	return buildSeq("layers", specs, input, rng, nil)
}

// Build builds the model of s for examples of shape s.Input; errors name
// layers as "model.layers[i]".
func (s Spec) Build(rng *tensor.RNG) (*Sequential, []int, error) {
	return s.BuildWithin(rng, 0)
}

// BuildWithin is Build with a bound on what the model may hold: at most
// maxValues parameter and stored-buffer values in all (what its state dict
// holds; 0 means no bound beyond the per-tensor one). Each layer's values
// are counted from its spec before the layer is allocated, so a spec that
// declares layers far larger than what the caller expects (a model file
// whose architecture does not match its few stored weights) fails naming
// the layer that crosses the bound, having allocated at most the layers
// before it.
func (s Spec) BuildWithin(rng *tensor.RNG, maxValues int64) (*Sequential, []int, error) {
	if len(s.Input) == 0 {
		return nil, nil, fmt.Errorf("model.input: the input shape is missing")
	}
	for _, d := range s.Input {
		if d <= 0 {
			return nil, nil, fmt.Errorf("model.input: sizes must be positive, got %v", s.Input)
		}
	}
	if product(s.Input...) > maxElems {
		return nil, nil, fmt.Errorf("model.input: shape %v is too large", s.Input)
	}
	var bud *budget
	if maxValues > 0 {
		bud = &budget{limit: float64(maxValues)}
	}
	return buildSeq("model.layers", s.Layers, s.Input, rng, bud)
}

// budget counts the values (parameters and stored buffers) a build has
// reserved against its limit.
type budget struct{ limit, used float64 }

func buildSeq(path string, specs []LayerSpec, input []int, rng *tensor.RNG, bud *budget) (*Sequential, []int, error) {
	seq := NewSequential()
	shape := slices.Clone(input)
	for i := range specs {
		p := fmt.Sprintf("%s[%d]", path, i)
		l, out, err := buildLayer(p, &specs[i], shape, rng, bud)
		if err != nil {
			return nil, nil, err
		}
		if product(out...) > maxElems {
			return nil, nil, &SpecError{Path: p, Type: specs[i].Type, Err: fmt.Errorf("output shape %v is too large", out)}
		}
		seq.Append(l)
		shape = out
	}
	return seq, shape, nil
}

// Limits that keep a mistyped size from allocating without bound.
const (
	maxElems  = 1 << 40 // elements of one example's activation
	maxParams = 1 << 32 // elements of one parameter tensor
)

// product multiplies sizes in float64, so it cannot overflow.
func product(n ...int) float64 {
	p := 1.0
	for _, v := range n {
		p *= float64(v)
	}
	return p
}

// Layer types register themselves, next to each layer, with registerLayer:
// the spec fields the type accepts (LayerTypes) and a build function that
// checks the type's fields against the input shape and returns the layer
// and the shape of one output example. Adding a layer type edits only the
// layer's file.

// layerBuild is what a build function gets: the layer's spec, the shape of
// one input example and the RNG, with helpers that make errors naming the
// layer.
type layerBuild struct {
	path string // "model.layers[3]"
	typ  string // the canonical type, a LayerTypes key
	spec *LayerSpec
	in   []int
	rng  *tensor.RNG
	bud  *budget // nil: no bound on the model's total size
}

// buildFunc builds the layer of b and returns it with the shape of one
// output example.
type buildFunc func(b *layerBuild) (Layer, []int, error)

// builders holds the build function of every LayerTypes key. The tables
// are written only by init functions, so they are complete and read-only
// once the package is initialized, and Build may run concurrently.
var builders = map[string]buildFunc{}

// registerLayer registers layer type typ (lower case, without '_' and
// '-'), the spec fields it accepts besides "type", and its build function.
// Call it from an init function only.
func registerLayer(typ string, fields []string, build buildFunc) {
	if _, dup := builders[typ]; dup || typ != normType(typ) || build == nil {
		panic(fmt.Sprintf("nn: layer type %q registered twice, not canonical or without a build function", typ))
	}
	if fields == nil {
		fields = []string{}
	}
	LayerTypes[typ] = fields
	builders[typ] = build
}

// registerAlias makes alias another spelling of the registered layer type
// typ. Call it from an init function only.
func registerAlias(alias, typ string) {
	if _, dup := typeAliases[alias]; dup || alias != normType(alias) {
		panic(fmt.Sprintf("nn: layer type alias %q registered twice or not canonical", alias))
	}
	typeAliases[alias] = typ
}

// buildLayer checks what applies to every layer type (the type, the
// fields it accepts, signs) and runs the type's build function.
func buildLayer(path string, s *LayerSpec, in []int, rng *tensor.RNG, bud *budget) (Layer, []int, error) {
	typ, ok := canonicalType(s.Type)
	if !ok {
		if s.Type == "" {
			return nil, nil, &SpecError{Path: path, Err: fmt.Errorf("the layer type is missing (known: %s)", knownTypes())}
		}
		return nil, nil, &SpecError{Path: path, Err: fmt.Errorf("unknown layer type %q (known: %s)", s.Type, knownTypes())}
	}
	b := &layerBuild{path: path, typ: typ, spec: s, in: in, rng: rng, bud: bud}
	allowed := LayerTypes[typ]
	for _, f := range s.setFields() {
		if !slices.Contains(allowed, f) {
			if len(allowed) == 0 {
				return b.fail("field %q does not apply (%s takes no fields)", f, typ)
			}
			return b.fail("field %q does not apply (%s takes %s)", f, typ, strings.Join(allowed, ", "))
		}
	}
	for _, pr := range []struct {
		name string
		v    IntPair
	}{{"kernel", s.Kernel}, {"stride", s.Stride}, {"padding", s.Padding}, {"dilation", s.Dilation}, {"size", s.Size}} {
		if pr.v[0] < 0 || pr.v[1] < 0 {
			return b.fail("%s must not be negative, got %v", pr.name, [2]int(pr.v))
		}
	}
	if s.Out < 0 || s.In < 0 || s.Num < 0 || s.Groups < 0 || s.Heads < 0 || s.FF < 0 || s.Eps < 0 || s.Momentum < 0 {
		return b.fail("sizes and rates must not be negative")
	}
	return builders[typ](b)
}

// fail returns a *SpecError naming the layer.
func (b *layerBuild) fail(format string, a ...any) (Layer, []int, error) {
	return nil, nil, &SpecError{Path: b.path, Type: b.spec.Type, Err: fmt.Errorf(format, a...)}
}

// errorf is fail's error alone, for checks shared by several builders.
func (b *layerBuild) errorf(format string, a ...any) error {
	_, _, err := b.fail(format, a...)
	return err
}

// reserve counts the n parameter and stored-buffer values of the layer
// about to be allocated against the build's bound; a build function calls
// it before allocating anything.
func (b *layerBuild) reserve(n float64) error {
	if b.bud == nil {
		return nil
	}
	b.bud.used += n
	if b.bud.used > b.bud.limit {
		return b.errorf("the layers up to this one hold %.0f parameter and buffer values, more than the %.0f allowed", b.bud.used, b.bud.limit)
	}
	return nil
}

// needOut checks that the spec sets "out".
func (b *layerBuild) needOut() error {
	if b.spec.Out <= 0 {
		return fmt.Errorf("field \"out\" is required")
	}
	return nil
}

// image checks that the input is an image [C, H, W].
func (b *layerBuild) image() error {
	if len(b.in) != 3 {
		return fmt.Errorf("input must be [C, H, W], got %v", b.in)
	}
	return nil
}

// checkIn checks the spec's optional "in" against the inferred size have
// (what: "features" or "channels").
func (b *layerBuild) checkIn(have int, what string) error {
	if b.spec.In != 0 && b.spec.In != have {
		return fmt.Errorf("input has %d %s but in=%d", have, what, b.spec.In)
	}
	return nil
}

// bias reports whether the layer has a bias (the default).
func (b *layerBuild) bias() bool { return b.spec.Bias == nil || *b.spec.Bias }

// biasValues is the size of a bias of n values, 0 when the spec has none.
func (b *layerBuild) biasValues(n int) float64 {
	if b.bias() {
		return float64(n)
	}
	return 0
}

// last returns the input shape with its last dim replaced by n.
func (b *layerBuild) last(n int) []int { return append(slices.Clone(b.in[:len(b.in)-1]), n) }

// same returns a copy of the input shape, for layers that keep it.
func (b *layerBuild) same() []int { return slices.Clone(b.in) }
