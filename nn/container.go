package nn

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/fathom-ml/fathom/tensor"
)

// Sequential chains layers: Forward feeds each layer's output to the next
// (torch.nn.Sequential). Layer i is registered as child "i", so its
// parameters are named "0.weight", "1.bias", ...
type Sequential struct {
	Base
	layers []Layer
}

// NewSequential returns a Sequential of the given layers.
func NewSequential(layers ...Layer) *Sequential {
	s := &Sequential{}
	for _, l := range layers {
		s.Append(l)
	}
	return s
}

// Append adds l at the end and returns s.
func (s *Sequential) Append(l Layer) *Sequential {
	s.Register(strconv.Itoa(len(s.layers)), l)
	s.layers = append(s.layers, l)
	return s
}

// Len returns the number of layers.
func (s *Sequential) Len() int { return len(s.layers) }

// At returns layer i.
func (s *Sequential) At(i int) Layer { return s.layers[i] }

// Layers returns the layers (a copy of the list).
func (s *Sequential) Layers() []Layer { return append([]Layer(nil), s.layers...) }

// Forward runs the layers in order. A Conv2d or Linear directly followed
// by a ReLU runs as one fused op (tensor.Conv2dOpts.Relu,
// tensor.LinearRelu): the same values and gradients without the
// intermediate tensor. The int8 layers fuse further (see seqFuser: a
// following max pooling, uint8 activations between static layers).
//
// Outside autograd (inference), the output of a Linear that only the next
// Linear reads goes back to the tensor package's recycler once read
// (Tensor.Recycle), so that a pass over a large batch reuses the buffers
// of the one before instead of having fresh ones allocated and zeroed.
func (s *Sequential) Forward(x *tensor.Tensor) *tensor.Tensor {
	var own *tensor.Tensor // a Linear's output made by this call, read by no layer yet
	for i := 0; i < len(s.layers); i++ {
		if l, ok := s.layers[i].(*Linear); ok {
			var y *tensor.Tensor
			if i+1 < len(s.layers) && isReLU(s.layers[i+1]) {
				y = tensor.LinearRelu(x, l.Weight, l.Bias)
				i++
			} else {
				y = tensor.Linear(x, l.Weight, l.Bias)
			}
			if x == own && !y.RequiresGrad() {
				// Only y's graph node could still read x (frozen layers
				// before a trained one); Recycle itself refuses a
				// tensor of a graph.
				x.Recycle()
			}
			x, own = y, y
			continue
		}
		own = nil
		if f, ok := s.layers[i].(seqFuser); ok {
			var used int
			x, used = f.forwardFused(x, s.layers[i+1:])
			i += used
			continue
		}
		if i+1 < len(s.layers) {
			if _, ok := s.layers[i+1].(*ReLU); ok {
				switch l := s.layers[i].(type) {
				case *Conv2d:
					x = l.forward(x, true)
					i++
					continue
				case reluFuser:
					x = l.forwardRelu(x, true)
					i++
					continue
				}
			}
		}
		x = s.layers[i].Forward(x)
	}
	return x
}

func isReLU(l Layer) bool {
	_, ok := l.(*ReLU)
	return ok
}

// ModuleList holds modules of one type, registered as children "0", "1",
// ... (torch.nn.ModuleList). It has no Forward: the owner decides how to
// call them.
//
//	blocks := nn.NewModuleList[*Block]()
//	for range 4 { blocks.Append(NewBlock(rng, 64)) }
//	m.Register("blocks", blocks)
//	for _, b := range blocks.All() { x = b.Forward(x) }
type ModuleList[M Module] struct {
	Base
	mods []M
}

// NewModuleList returns a list of the given modules.
func NewModuleList[M Module](mods ...M) *ModuleList[M] {
	l := &ModuleList[M]{}
	for _, m := range mods {
		l.Append(m)
	}
	return l
}

// Append adds m at the end and returns l.
func (l *ModuleList[M]) Append(m M) *ModuleList[M] {
	l.Register(strconv.Itoa(len(l.mods)), m)
	l.mods = append(l.mods, m)
	return l
}

// Len returns the number of modules.
func (l *ModuleList[M]) Len() int { return len(l.mods) }

// At returns module i.
func (l *ModuleList[M]) At(i int) M { return l.mods[i] }

// All returns the modules (a copy of the list).
func (l *ModuleList[M]) All() []M { return append([]M(nil), l.mods...) }

// Residual computes Body(x) + x, or Body(x) + Proj(x) when a projection is
// set (to match a body that changes the shape), the skip connection of
// He et al., "Deep Residual Learning for Image Recognition" (CVPR 2016).
// Children: "body" and, if set, "proj".
type Residual struct {
	Base
	Body Layer
	Proj Layer // nil: identity shortcut
}

// NewResidual returns body(x) + proj(x); proj may be nil for the identity.
func NewResidual(body, proj Layer) *Residual {
	r := &Residual{Body: body, Proj: proj}
	r.Register("body", body)
	if proj != nil {
		r.Register("proj", proj)
	}
	return r
}

// Forward returns Body(x) + shortcut(x).
func (r *Residual) Forward(x *tensor.Tensor) *tensor.Tensor {
	y := r.Body.Forward(x)
	s := x
	if r.Proj != nil {
		s = r.Proj.Forward(x)
	}
	if !slices.Equal(y.Shape(), s.Shape()) {
		panic(fmt.Sprintf("nn: Residual: body output %v and shortcut %v differ in shape; give the Residual a projection", y.Shape(), s.Shape()))
	}
	return y.Add(s)
}

// Identity returns its input.
type Identity struct{ Base }

// NewIdentity returns an Identity module.
func NewIdentity() *Identity { return &Identity{} }

// Forward returns x.
func (*Identity) Forward(x *tensor.Tensor) *tensor.Tensor { return x }

// Flatten merges dims StartDim..EndDim (inclusive, negative from the end)
// into one; NewFlatten uses PyTorch's defaults 1 and −1, keeping the batch
// dim.
type Flatten struct {
	Base
	StartDim, EndDim int
}

// NewFlatten returns Flatten(1, −1).
func NewFlatten() *Flatten { return &Flatten{StartDim: 1, EndDim: -1} }

// Forward flattens x (a view when x is contiguous).
func (f *Flatten) Forward(x *tensor.Tensor) *tensor.Tensor { return x.Flatten(f.StartDim, f.EndDim) }

func (f *Flatten) describe() string {
	return fmt.Sprintf("Flatten(start_dim=%d, end_dim=%d)", f.StartDim, f.EndDim)
}

func init() {
	registerLayer("flatten", nil, func(b *layerBuild) (Layer, []int, error) {
		n := 1
		for _, d := range b.in {
			n *= d
		}
		return NewFlatten(), []int{n}, nil
	})
	registerLayer("identity", nil, func(b *layerBuild) (Layer, []int, error) { return NewIdentity(), b.same(), nil })
	registerLayer("residual", []string{"layers", "proj"}, buildResidual)
}

// buildResidual builds the body (its layers named "<path>.layers[i]") and,
// when the body changes the shape and proj is set, a projection.
func buildResidual(b *layerBuild) (Layer, []int, error) {
	s, in := b.spec, b.in
	if len(s.Layers) == 0 {
		return b.fail("field \"layers\" (the residual body) is required")
	}
	body, out, err := buildSeq(b.path+".layers", s.Layers, in, b.rng, b.bud)
	if err != nil {
		return nil, nil, err
	}
	if slices.Equal(out, in) {
		if s.Proj {
			return b.fail("proj is set but the body keeps the shape %v", in)
		}
		return NewResidual(body, nil), out, nil
	}
	if !s.Proj {
		return b.fail("the body maps %v to %v; set proj: true to add a projection to the shortcut", in, out)
	}
	// A Linear or 1×1 convolution, with a bias.
	if err := b.reserve(product(in[0], out[0]) + float64(out[0])); err != nil {
		return nil, nil, err
	}
	proj, err := projection(in, out, b.rng)
	if err != nil {
		return b.fail("%v", err)
	}
	return NewResidual(body, proj), out, nil
}

// projection returns the shortcut layer mapping shape in to out: a Linear
// for feature vectors, a 1×1 convolution (strided to the output's spatial
// size) for images.
func projection(in, out []int, rng *tensor.RNG) (Layer, error) {
	switch {
	case len(in) == 1 && len(out) == 1:
		return NewLinear(rng, in[0], out[0]), nil
	case len(in) == 3 && len(out) == 3:
		if in[1]%out[1] != 0 || in[2]%out[2] != 0 {
			return nil, fmt.Errorf("cannot project %v to %v with a strided 1×1 convolution", in, out)
		}
		st := IntPair{in[1] / out[1], in[2] / out[2]}
		c := Conv2dConfig{In: in[0], Out: out[0], Kernel: Pair(1), Stride: st}
		if oh, ow, _ := c.OutSize(in[1], in[2]); oh != out[1] || ow != out[2] {
			return nil, fmt.Errorf("cannot project %v to %v with a strided 1×1 convolution", in, out)
		}
		return NewConv2dWith(rng, c), nil
	}
	return nil, fmt.Errorf("cannot project %v to %v (projections map [F] to [F'] or [C, H, W] to [C', H', W'])", in, out)
}
