package tensor

import (
	"fmt"
	"slices"
)

// node records how a non-leaf tensor was computed: the op's inputs and a
// closure that maps the gradient of the output to gradients of the inputs.
// The closure is written next to the op's forward code.
type node struct {
	op       string
	inputs   []*Tensor
	backward func(g *Tensor) []*Tensor // one entry per input; nil = no gradient

	// free, if set, releases scratch the op saved for backward (see
	// recycler.go); the engine calls it when it frees the node.
	free func()
	// custom marks nodes of CustomOp: the gradients their backward
	// returns are never recycled by the engine.
	custom bool

	// Scratch state of the Backward call that is running.
	grad  *Tensor // accumulated gradient of the output
	owned bool    // grad was allocated by the engine and may be updated in place
	visit *backwardRun
	freed bool
}

// backwardRun identifies one Backward call (marks visited nodes and the
// leaves with hooks that it counts).
type backwardRun struct {
	hooked bool // a node of the graph takes a leaf that has grad-ready hooks
}

// BackwardOpts configures Backward.
type BackwardOpts struct {
	// RetainGraph keeps the recorded graph (closures and the tensors they
	// saved) after the call, so Backward may run through it again. By
	// default the graph is freed as it is walked.
	RetainGraph bool
}

// RetainGraph is the BackwardOpts that keeps the graph: t.Backward(tensor.RetainGraph).
var RetainGraph = BackwardOpts{RetainGraph: true}

// ---- recording ----

// track1..track3 decide whether an op over the given inputs records a node:
// it does when an input requires grad and no input is inference-marked. They
// mark out as inference when an input is. The op then calls attach.
func track1(out, a *Tensor) bool {
	if a.inference {
		out.inference = true
		return false
	}
	return a.requiresGrad
}

func track2(out, a, b *Tensor) bool {
	if a.inference || b.inference {
		out.inference = true
		return false
	}
	return a.requiresGrad || b.requiresGrad
}

func track3(out, a, b, c *Tensor) bool {
	if a.inference || b.inference || (c != nil && c.inference) {
		out.inference = true
		return false
	}
	return a.requiresGrad || b.requiresGrad || (c != nil && c.requiresGrad)
}

// inherit marks out as inference when an input is (for ops that never
// record, such as comparisons and index results) and returns out.
func inherit(out *Tensor, inputs ...*Tensor) *Tensor {
	for _, in := range inputs {
		if in.inference {
			out.inference = true
		}
	}
	return out
}

// attach records the op that produced out.
func (out *Tensor) attach(op string, back func(g *Tensor) []*Tensor, inputs ...*Tensor) {
	if !out.dtype.IsFloat() {
		return
	}
	out.requiresGrad = true
	out.node = &node{op: op, inputs: inputs, backward: back}
}

// needs reports whether the gradient for t is wanted inside a backward closure.
func needs(t *Tensor) bool { return t != nil && t.requiresGrad }

// ---- user-facing autograd state ----

// SetRequiresGrad marks a leaf tensor as a parameter whose gradient Backward
// accumulates into Grad. It panics on non-leaf tensors and on non-float
// dtypes. It returns t for chaining: w := tensor.Zeros(...).SetRequiresGrad(true).
func (t *Tensor) SetRequiresGrad(b bool) *Tensor {
	if t.node != nil {
		panic(fmt.Sprintf("tensor: SetRequiresGrad on a non-leaf tensor (output of %s); use Detach first", t.node.op))
	}
	if b && !t.dtype.IsFloat() {
		panic(fmt.Sprintf("tensor: only floating-point tensors can require grad, got %v", t.dtype))
	}
	t.requiresGrad = b
	if b {
		t.inference = false
	}
	return t
}

// RequiresGrad reports whether t is a parameter or was computed from one
// with recording on.
func (t *Tensor) RequiresGrad() bool { return t.requiresGrad }

// IsLeaf reports whether t was not produced by a recorded op (parameters,
// data, detached tensors).
func (t *Tensor) IsLeaf() bool { return t.node == nil }

// GradFn returns the name of the op that produced t ("" for leaves).
func (t *Tensor) GradFn() string {
	if t.node == nil {
		return ""
	}
	return t.node.op
}

// Grad returns the gradient accumulated by Backward (nil before the first
// Backward, or after SetGrad(nil)). It is a contiguous tensor of t's shape
// and dtype owned by t: optimizers may read and update it in place.
func (t *Tensor) Grad() *Tensor { return t.grad }

// SetGrad replaces the accumulated gradient; SetGrad(nil) drops it (the
// next Backward allocates a fresh one).
func (t *Tensor) SetGrad(g *Tensor) {
	if g != nil && !slices.Equal(g.shape, t.shape) {
		panic(fmt.Sprintf("tensor: SetGrad with shape %v on a tensor of shape %v", g.shape, t.shape))
	}
	t.grad = g
}

// ZeroGrad sets the accumulated gradient to zero in place, keeping its
// buffer so a training loop allocates none. It does nothing if there is no
// gradient yet.
func (t *Tensor) ZeroGrad() {
	if t.grad != nil {
		t.grad.fillRaw(0)
	}
}

// RetainGrad asks Backward to store the gradient of a non-leaf tensor in
// its Grad as well (leaves always get one).
func (t *Tensor) RetainGrad() *Tensor {
	t.retainGrad = true
	return t
}

// alias returns a new header viewing the same elements, with no autograd state.
func (t *Tensor) alias() *Tensor {
	u := header(t.dtype, len(t.shape))
	copy(u.shape, t.shape)
	copy(u.strides, t.strides)
	u.offset = t.offset
	u.st = t.st
	return u
}

// Detach returns a view of t sharing its storage, with no history and not
// requiring grad.
func (t *Tensor) Detach() *Tensor { return t.alias() }

// NoGrad returns a view of t marked for inference: no op that takes it (or
// anything computed from it) records autograd history, even when other
// inputs (parameters) require grad. This is how forward passes run without
// building a graph; it involves no global state, so any number of
// goroutines may do it at once.
func (t *Tensor) NoGrad() *Tensor {
	u := t.alias()
	u.inference = true
	return u
}

// IsInference reports whether t is inference-marked (see NoGrad).
func (t *Tensor) IsInference() bool { return t.inference }

// ---- backward ----

// Backward computes the gradient of the one-element tensor t with respect to
// every leaf that requires grad and adds it to the leaf's Grad, running a
// leaf's grad-ready hooks (RegisterGradReadyHook) as soon as its gradient
// is complete. The graph is freed afterwards unless opts has RetainGraph;
// running Backward through a freed graph panics. See the package
// documentation.
func (t *Tensor) Backward(opts ...BackwardOpts) {
	if t.Numel() != 1 {
		panic(fmt.Sprintf("tensor: Backward needs a one-element tensor, got shape %v; use BackwardWith", t.shape))
	}
	t.BackwardWith(OnesLike(t), opts...)
}

// BackwardWith is Backward for a tensor of any shape, seeded with grad (the
// gradient of some scalar with respect to t), which must have t's shape.
func (t *Tensor) BackwardWith(grad *Tensor, opts ...BackwardOpts) {
	var o BackwardOpts
	for _, x := range opts {
		o.RetainGraph = o.RetainGraph || x.RetainGraph
	}
	if !t.requiresGrad {
		panic("tensor: Backward on a tensor that does not require grad (no input requires grad, or it was computed from a NoGrad view)")
	}
	if !slices.Equal(grad.shape, t.shape) {
		panic(fmt.Sprintf("tensor: BackwardWith gradient of shape %v for a tensor of shape %v", grad.shape, t.shape))
	}
	grad = grad.castRaw(t.dtype)
	if t.node == nil {
		accumulateLeaf(t, grad)
		if t.hooks != nil {
			fireGradReady(t, t.hooks)
		}
		return
	}
	order, run := topoOrder(t)
	// hookRun is set when a leaf of the graph has grad-ready hooks: such
	// leaves count their uses, and fire when the walk has done them all
	// (hooks.go). Without hooks the walk does no hook work.
	var hookRun *backwardRun
	if run.hooked {
		hookRun = run
		countHookedUses(order, run)
	}
	t.node.grad = grad
	var cands []storage // storages to recycle when no node holds them
	for i := len(order) - 1; i >= 0; i-- {
		u := order[i]
		n := u.node
		g := n.grad
		n.grad, n.owned, n.visit = nil, false, nil
		if g != nil && u.retainGrad {
			accumulateLeaf(u, g)
		}
		if g != nil {
			if n.freed {
				panic(fmt.Sprintf("tensor: Backward through the graph of %s a second time, but an earlier Backward freed it; pass tensor.RetainGraph to the earlier call", n.op))
			}
			seq0 := allocSeq.Load()
			grads := n.backward(g)
			cands = append(cands[:0], g.st)
			for j, in := range n.inputs {
				if j >= len(grads) || grads[j] == nil {
					continue
				}
				if !n.custom {
					claim(grads[j], seq0)
				}
				cands = append(cands, grads[j].st)
				if !in.requiresGrad {
					continue
				}
				gj := fitGrad(n.op, grads[j], in)
				claim(gj, seq0)
				cands = append(cands, gj.st)
				if in.node == nil {
					accumulateLeaf(in, gj)
				} else if old := accumulateNode(in.node, gj); old != nil {
					cands = append(cands, old)
				}
			}
			drop(g.st)
			for _, st := range cands {
				if m := st.meta(); m.eng && m.refs <= 0 {
					st.recycle()
				}
			}
			clear(cands)
		}
		if hookRun != nil {
			finishUses(n, hookRun)
		}
		if !o.RetainGraph {
			n.backward, n.inputs, n.freed = nil, nil, true
			if n.free != nil {
				n.free()
				n.free = nil
			}
		}
	}
}

// claim marks the storage of a gradient as engine-owned when it was
// allocated by this package after seq0, i.e. during the backward call
// that returned it (see the lifetime rule in recycler.go).
func claim(g *Tensor, seq0 uint64) {
	if m := g.st.meta(); m.seq > seq0 {
		m.eng = true
	}
}

// hold and drop count the nodes holding an engine-owned storage as their
// gradient.
func hold(st storage) {
	if m := st.meta(); m.eng {
		m.refs++
	}
}

func drop(st storage) {
	if m := st.meta(); m.eng {
		m.refs--
	}
}

// topoOrder returns the non-leaf tensors reachable from t, each after all of
// its inputs (post-order of an iterative depth-first search), and the
// mark it left on them, which tells whether one of them takes a leaf that
// requires grad and has grad-ready hooks.
func topoOrder(t *Tensor) (order []*Tensor, run *backwardRun) {
	run = &backwardRun{}
	type frame struct {
		t *Tensor
		i int
	}
	stack := []frame{{t, 0}}
	t.node.visit = run
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		n := f.t.node
		if f.i < len(n.inputs) {
			in := n.inputs[f.i]
			f.i++
			if in.node != nil && in.requiresGrad && in.node.visit != run {
				in.node.visit = run
				stack = append(stack, frame{in, 0})
			} else if in.hooks != nil && in.node == nil && in.requiresGrad {
				// A store, not a flag carried through the loop, which
				// would cost every iteration a register.
				run.hooked = true
			}
			continue
		}
		order = append(order, f.t)
		stack = stack[:len(stack)-1]
	}
	return order, run
}

// fitGrad brings a gradient to the input's shape (summing broadcast dims)
// and dtype.
func fitGrad(op string, g, in *Tensor) *Tensor {
	if g.dtype != in.dtype {
		g = g.castRaw(in.dtype)
	}
	if !slices.Equal(g.shape, in.shape) {
		g = sumToShape(op, g, in.shape)
	}
	return g
}

// sumToShape sums g over the dims along which shape was broadcast to g's shape.
func sumToShape(op string, g *Tensor, shape []int) *Tensor {
	lead := len(g.shape) - len(shape)
	if lead < 0 {
		panic(fmt.Sprintf("tensor: %s backward: gradient shape %v cannot reduce to %v", op, g.shape, shape))
	}
	var dims []int
	for i := 0; i < lead; i++ {
		dims = append(dims, i)
	}
	for i, s := range shape {
		switch gs := g.shape[lead+i]; {
		case gs == s:
		case s == 1:
			dims = append(dims, lead+i)
		default:
			panic(fmt.Sprintf("tensor: %s backward: gradient shape %v cannot reduce to %v", op, g.shape, shape))
		}
	}
	if len(dims) == 0 {
		return g.reshapeRaw(shape)
	}
	return reduceRaw(redSum, g, dims, true).reshapeRaw(shape)
}

// directGrad reports whether a backward closure may write the gradient of
// t straight into t.grad (assigning a fresh tensor when it is nil, or
// accumulating with a GEMM's beta = 1) instead of returning it: t must be
// a leaf whose gradient buffer, if any, is contiguous and of t's dtype.
// This saves a temporary and an addition per parameter per step. A
// closure may write only the gradients of its own node's inputs this way:
// grad-ready hooks (hooks.go) fire once the nodes taking a leaf are done.
func directGrad(t *Tensor) bool {
	if t == nil || t.node != nil || !t.requiresGrad {
		return false
	}
	return t.grad == nil || (t.grad.dtype == t.dtype && t.grad.IsContiguous() && slices.Equal(t.grad.shape, t.shape))
}

// accumulateLeaf adds g into t.grad, allocating it on first use.
func accumulateLeaf(t *Tensor, g *Tensor) {
	if t.grad == nil {
		t.grad = g.cloneRaw()
		return
	}
	t.grad.addInPlaceRaw(g)
}

// accumulateNode adds g into the gradient of node n. When it replaces an
// earlier gradient by a new sum, it returns the earlier one's storage,
// which no longer belongs to n.
func accumulateNode(n *node, g *Tensor) storage {
	switch {
	case n.grad == nil:
		n.grad = g
		hold(g.st)
	case n.owned:
		n.grad.addInPlaceRaw(g)
	default:
		old := n.grad
		n.grad = binaryRaw(opAdd, old, g)
		n.grad.st.meta().eng = true
		hold(n.grad.st)
		n.owned = true
		drop(old.st)
		return old.st
	}
	return nil
}

// checkInPlace panics when an in-place op would corrupt a recorded graph.
func (t *Tensor) checkInPlace(op string) {
	if t.requiresGrad && t.node != nil {
		panic(fmt.Sprintf("tensor: %s on a non-leaf tensor that requires grad (output of %s); in-place ops would corrupt its gradient", op, t.node.op))
	}
}
