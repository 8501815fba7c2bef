package nn

import (
	"fmt"
	"strings"

	"github.com/fathom-ml/fathom/tensor"
)

// Module is a node of a model: it owns named parameters (tensors an
// optimizer updates), named buffers (state saved with the model but not
// trained, such as BatchNorm's running statistics) and named child modules.
//
// Every module embeds Base, which implements this interface (the
// unexported method makes embedding Base the only way); a custom module
// only registers its parts in its constructor and adds a Forward method. Layers that map one tensor to one tensor also satisfy Layer.
type Module interface {
	// NamedParameters returns the parameters of the module and of all its
	// descendants, in registration order (own parameters first, then each
	// child's, depth first), with dotted names such as "layers.0.weight".
	// A tensor registered under two names is listed once, under the first.
	NamedParameters() []Named
	// NamedBuffers is NamedParameters for buffers.
	NamedBuffers() []Named
	// NamedChildren returns the direct children in registration order.
	NamedChildren() []NamedModule
	// SetTraining switches the module and its descendants to training
	// (true) or evaluation (false) mode.
	SetTraining(on bool)
	// Training reports whether the module is in training mode (the mode a
	// new module starts in, as in PyTorch).
	Training() bool

	// The rest is implemented by Base once for every module; see the
	// methods of Base.
	Parameters() []*tensor.Tensor
	NamedModules() []NamedModule
	Train()
	Eval()
	SetRequiresGrad(on bool)
	ZeroGrad()
	NumParameters() int
	To(dt tensor.DType)
	base() *Base
}

// Layer is a module that maps one tensor to one tensor. Sequential chains
// Layers.
type Layer interface {
	Module
	Forward(x *tensor.Tensor) *tensor.Tensor
}

// Named is a tensor with its dotted name in a module tree.
type Named struct {
	Name   string
	Tensor *tensor.Tensor
}

// NamedModule is a module with its name relative to its parent.
type NamedModule struct {
	Name   string
	Module Module
}

// slot is a registered tensor: a pointer to the field that holds it, so Base
// can walk the current tensor and replace it (To changes dtypes).
type slot struct {
	name string
	p    **tensor.Tensor
}

// Base does the bookkeeping every module needs: registration of parameters,
// buffers and children, recursive walks, the training flag and freezing.
// Embed it (by value) in every module:
//
//	type Block struct {
//		nn.Base
//		fc  *nn.Linear
//		act *nn.ReLU
//	}
//
//	func NewBlock(rng *tensor.RNG, n int) *Block {
//		b := &Block{fc: nn.NewLinear(rng, n, n), act: nn.NewReLU()}
//		b.Register("fc", b.fc)
//		b.Register("act", b.act)
//		return b
//	}
//
// The zero Base is a module with nothing registered, in training mode.
type Base struct {
	params   []slot
	buffers  []slot
	children []NamedModule
	eval     bool // the zero value means training mode, PyTorch's default
}

func (b *Base) base() *Base { return b }

// checkName panics on names that would make dotted paths ambiguous or that
// are already taken in this module (programmer errors at construction).
func (b *Base) checkName(kind, name string) {
	if name == "" || strings.ContainsAny(name, ". ") {
		panic(fmt.Sprintf("nn: %s name %q must be non-empty and contain no dot or space", kind, name))
	}
	for _, s := range b.params {
		if s.name == name {
			panic(fmt.Sprintf("nn: %s %q: name already used by a parameter", kind, name))
		}
	}
	for _, s := range b.buffers {
		if s.name == name {
			panic(fmt.Sprintf("nn: %s %q: name already used by a buffer", kind, name))
		}
	}
	for _, c := range b.children {
		if c.Name == name {
			panic(fmt.Sprintf("nn: %s %q: name already used by a submodule", kind, name))
		}
	}
}

// Register adds m as a child module called name. Its parameters and
// buffers appear under "name." in the walks and the state dict.
func (b *Base) Register(name string, m Module) {
	if m == nil {
		panic(fmt.Sprintf("nn: Register(%q, nil)", name))
	}
	b.checkName("submodule", name)
	b.children = append(b.children, NamedModule{name, m})
}

// RegisterParameter registers the tensor held in *p as a trainable
// parameter called name and marks it as requiring grad. Registering the
// field's address (not the tensor) lets To replace the tensor and lets a
// field be nil (an absent bias), in which case it is skipped.
func (b *Base) RegisterParameter(name string, p **tensor.Tensor) {
	b.checkName("parameter", name)
	if t := *p; t != nil {
		if !t.DType().IsFloat() {
			panic(fmt.Sprintf("nn: parameter %q has dtype %v; parameters must be floating point", name, t.DType()))
		}
		t.SetRequiresGrad(true)
	}
	b.params = append(b.params, slot{name, p})
}

// RegisterBuffer registers the tensor held in *p as a buffer called name:
// state that is saved and loaded with the model but not trained.
func (b *Base) RegisterBuffer(name string, p **tensor.Tensor) {
	b.checkName("buffer", name)
	b.buffers = append(b.buffers, slot{name, p})
}

// walk calls fn for every registered tensor (params or buffers) in the
// tree, with its dotted name, in registration order, nils skipped.
func walk(m Module, prefix string, buffers bool, fn func(name string, p **tensor.Tensor)) {
	b := m.base()
	slots := b.params
	if buffers {
		slots = b.buffers
	}
	for _, s := range slots {
		if *s.p != nil {
			fn(prefix+s.name, s.p)
		}
	}
	for _, c := range b.children {
		walk(c.Module, prefix+c.Name+".", buffers, fn)
	}
}

func named(m Module, buffers bool) []Named {
	var out []Named
	seen := map[*tensor.Tensor]bool{}
	walk(m, "", buffers, func(name string, p **tensor.Tensor) {
		if !seen[*p] {
			seen[*p] = true
			out = append(out, Named{name, *p})
		}
	})
	return out
}

// NamedParameters implements Module.
func (b *Base) NamedParameters() []Named { return named(b, false) }

// NamedBuffers implements Module.
func (b *Base) NamedBuffers() []Named { return named(b, true) }

// NamedChildren implements Module.
func (b *Base) NamedChildren() []NamedModule { return append([]NamedModule(nil), b.children...) }

// Parameters returns the tensors of NamedParameters, the list an optimizer
// takes.
func (b *Base) Parameters() []*tensor.Tensor {
	nps := b.NamedParameters()
	out := make([]*tensor.Tensor, len(nps))
	for i, np := range nps {
		out[i] = np.Tensor
	}
	return out
}

// NamedModules returns the module itself (named "") and all descendants,
// depth first, with dotted names.
func (b *Base) NamedModules() []NamedModule {
	var out []NamedModule
	var rec func(prefix string, m Module)
	rec = func(prefix string, m Module) {
		for _, c := range m.NamedChildren() {
			out = append(out, NamedModule{prefix + c.Name, c.Module})
			rec(prefix+c.Name+".", c.Module)
		}
	}
	out = append(out, NamedModule{"", b})
	rec("", b)
	return out
}

// SetTraining implements Module.
func (b *Base) SetTraining(on bool) {
	b.eval = !on
	for _, c := range b.children {
		c.Module.SetTraining(on)
	}
}

// Training implements Module.
func (b *Base) Training() bool { return !b.eval }

// Train switches the module tree to training mode (dropout active,
// batch norm using and updating batch statistics).
func (b *Base) Train() { b.SetTraining(true) }

// Eval switches the module tree to evaluation mode (dropout off, batch
// norm using its running statistics). A module in eval mode changes no
// state in Forward, so many goroutines may run it at once.
func (b *Base) Eval() { b.SetTraining(false) }

// SetRequiresGrad freezes (false) or unfreezes (true) every parameter of
// the module tree, as PyTorch's requires_grad_: frozen parameters get no
// gradient and record no graph, e.g. a pretrained backbone under a new head.
func (b *Base) SetRequiresGrad(on bool) {
	walk(b, "", false, func(_ string, p **tensor.Tensor) { (*p).SetRequiresGrad(on) })
}

// ZeroGrad zeroes the gradient of every parameter in place (keeping the
// buffers, so a training loop allocates nothing for them).
func (b *Base) ZeroGrad() {
	walk(b, "", false, func(_ string, p **tensor.Tensor) { (*p).ZeroGrad() })
}

// NumParameters returns the number of scalar parameters (each shared
// tensor counted once).
func (b *Base) NumParameters() int {
	n := 0
	for _, np := range b.NamedParameters() {
		n += np.Tensor.Numel()
	}
	return n
}

// To converts every floating-point parameter and buffer of the tree to dt
// (PyTorch's model.to(dtype)), keeping requires-grad flags. It replaces the
// tensors, so call it before handing Parameters to an optimizer.
func (b *Base) To(dt tensor.DType) {
	if !dt.IsFloat() {
		panic(fmt.Sprintf("nn: To(%v): modules convert only to floating-point dtypes", dt))
	}
	conv := func(_ string, p **tensor.Tensor) {
		t := *p
		if !t.DType().IsFloat() || t.DType() == dt {
			return
		}
		nt := t.Detach().To(dt).Contiguous()
		if nt.SharesStorage(t) {
			nt = nt.Clone()
		}
		*p = nt.SetRequiresGrad(t.RequiresGrad())
	}
	walk(b, "", false, conv)
	walk(b, "", true, conv)
}
