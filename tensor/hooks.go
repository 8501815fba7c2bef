package tensor

import "fmt"

// leafHooks holds the grad-ready hooks of one leaf and its scratch state
// for the Backward call that is running. A leaf without hooks has none
// (Tensor.hooks is nil), so the engine's fast path checks one pointer.
type leafHooks struct {
	fns []*gradReadyHook // in registration order; replaced, never edited, so firing may iterate an old slice

	// Scratch state of the Backward call that is running.
	run     *backwardRun // the call that counted pending; nil when none is
	pending int          // recorded uses of the leaf whose backward has not run yet
}

// gradReadyHook is one registered hook; fn is nil once removed.
type gradReadyHook struct{ fn func(*Tensor) }

// RegisterGradReadyHook registers fn to run each time Backward has finished
// accumulating t's gradient: once per Backward call that reaches t, right
// after the last contribution of that call has been added to t.Grad (every
// path through the graph, so a parameter used twice is reported after both
// uses), on the goroutine running Backward. This is PyTorch's
// register_post_accumulate_grad_hook; data-parallel training uses it to
// start reducing a bucket of gradients while Backward still works on
// earlier layers. It returns a function that removes the hook (calling it
// again does nothing).
//
// Hooks of one leaf run in registration order, and leaves are reported in
// the order Backward finishes them: the parameters of the last layer
// first. A call that does not reach t (t unused by the graph, or frozen
// with SetRequiresGrad(false)) does not run fn; ReachableLeaves tells
// beforehand which leaves a call will reach. Once fn has run, that call
// no longer touches t.Grad, so fn may pass it to another goroutine. fn
// must not call Backward. See the package documentation.
//
// t must be a leaf that requires grad (a parameter); otherwise
// RegisterGradReadyHook panics.
func (t *Tensor) RegisterGradReadyHook(fn func(t *Tensor)) (remove func()) {
	switch {
	case fn == nil:
		panic("tensor: RegisterGradReadyHook with a nil function")
	case t.node != nil:
		panic(fmt.Sprintf("tensor: RegisterGradReadyHook on a non-leaf tensor (output of %s); gradient-ready hooks are for leaves such as parameters", t.node.op))
	case !t.requiresGrad:
		panic("tensor: RegisterGradReadyHook on a tensor that does not require grad; call SetRequiresGrad(true) first")
	}
	h := &gradReadyHook{fn: fn}
	if t.hooks == nil {
		t.hooks = &leafHooks{}
	}
	// A new slice, so that a Backward firing the old one is not disturbed.
	t.hooks.fns = append(t.hooks.fns[:len(t.hooks.fns):len(t.hooks.fns)], h)
	return func() { t.removeGradReadyHook(h) }
}

func (t *Tensor) removeGradReadyHook(h *gradReadyHook) {
	if h.fn == nil || t.hooks == nil {
		return
	}
	h.fn = nil
	var keep []*gradReadyHook
	for _, g := range t.hooks.fns {
		if g != h {
			keep = append(keep, g)
		}
	}
	if len(keep) == 0 {
		t.hooks = nil // back to the fast path
		return
	}
	t.hooks.fns = keep
}

// ReachableLeaves returns the leaves that require grad which t.Backward
// would reach, each once, in the order Backward would finish their
// gradients and fire their grad-ready hooks. A parameter missing from the
// list would receive no gradient from this graph (an unused parameter).
// It leaves the graph as it was, so call it before Backward (or between
// Backward calls that pass RetainGraph); it panics on a graph that an
// earlier Backward freed. It walks the graph as Backward does: do not run
// it concurrently with a Backward over the same graph. t itself is
// returned when it is a leaf that requires grad.
func (t *Tensor) ReachableLeaves() []*Tensor {
	if !t.requiresGrad {
		return nil
	}
	if t.node == nil {
		return []*Tensor{t}
	}
	order, _ := topoOrder(t)
	for _, u := range order {
		if n := u.node; n.freed {
			panic(fmt.Sprintf("tensor: ReachableLeaves through the graph of %s, which an earlier Backward freed; pass tensor.RetainGraph to that call", n.op))
		}
	}
	// Count the recorded uses of each leaf, then replay the backward
	// walk: a leaf is done when its last use has been walked.
	uses := make(map[*Tensor]int)
	for _, u := range order {
		for _, in := range u.node.inputs {
			if in.node == nil && in.requiresGrad {
				uses[in]++
			}
		}
	}
	var leaves []*Tensor
	for i := len(order) - 1; i >= 0; i-- {
		n := order[i].node
		n.visit = nil
		for _, in := range n.inputs {
			if in.node == nil && in.requiresGrad {
				if uses[in]--; uses[in] == 0 {
					leaves = append(leaves, in)
				}
			}
		}
	}
	return leaves
}

// countHookedUses counts, for each leaf with hooks that the nodes of
// order (a graph Backward is about to walk, marked run) take as inputs,
// how many times they take it.
func countHookedUses(order []*Tensor, run *backwardRun) {
	for _, u := range order {
		for _, in := range u.node.inputs {
			if in.node != nil || !in.requiresGrad || in.hooks == nil {
				continue
			}
			h := in.hooks
			if h.run != run {
				h.run, h.pending = run, 0
			}
			h.pending++
		}
	}
}

// finishUses is called after Backward has walked node n: each input of n
// that is a leaf with hooks counted by this run has one use fewer to wait
// for, and its hooks fire when none is left.
func finishUses(n *node, run *backwardRun) {
	for _, in := range n.inputs {
		if in.node != nil || !in.requiresGrad || in.hooks == nil || in.hooks.run != run {
			continue
		}
		h := in.hooks
		if h.pending--; h.pending == 0 {
			h.run = nil
			fireGradReady(in, h)
		}
	}
}

// fireGradReady runs the hooks of leaf t.
func fireGradReady(t *Tensor, h *leafHooks) {
	for _, g := range h.fns {
		if fn := g.fn; fn != nil { // nil: removed by an earlier hook of this firing
			fn(t)
		}
	}
}
