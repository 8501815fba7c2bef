package onnx

import (
	"math"
	"slices"

	"github.com/fathom-ml/fathom/nn"
)

// Self-attention as Export writes it (and as hand-written exporters
// commonly do): three MatMuls of x by constant [E, E] matrices, each with
// an optional bias Add, a Reshape to [batch, L, H, D] and a Transpose
// into heads (K's to [batch, H, D, L]); Q scaled by 1/√D; Q·Kᵀ, Softmax
// over the last axis, ·V; a Transpose and Reshape back to [batch, L, E];
// the output projection (MatMul and Add). It maps to an "attention"
// pseudo-layer that foldEncoders turns, with the layer norms, residual
// Adds and feed-forward linears around it, into a transformer encoder
// layer: fathom has no stand-alone attention layer spec.

// attentionType is the pseudo layer type of a recognized self-attention.
const attentionType = "onnx.selfattention"

// linearAt returns the constant weight [in, out] of MatMul node m reading
// t and, if its one reader is an Add of a constant [out], the bias and
// that Add; out is the tensor after both.
func (im *importer) linearAt(m *node, t string) (w, b *constant, add *node, out string, ok bool) {
	if m.OpType != "MatMul" || len(m.Input) != 2 || m.Input[0] != t || len(m.Output) != 1 {
		return nil, nil, nil, "", false
	}
	if w = im.consts[m.Input[1]]; w == nil || len(w.shape) != 2 {
		return nil, nil, nil, "", false
	}
	out = m.Output[0]
	if a := im.only(out); a != nil && a.OpType == "Add" {
		if o, isOther := other(a, out); isOther {
			if c := im.consts[o]; c != nil && len(c.vals) == w.shape[1] && len(a.Output) == 1 {
				return w, c, a, a.Output[0], true
			}
		}
	}
	return w, nil, nil, out, true
}

// follow returns the one reader of t if it is an op of type op with one
// output, reading t first.
func (im *importer) follow(t, op string) *node {
	n := im.only(t)
	if n == nil || n.OpType != op || len(n.Output) != 1 || len(n.Input) == 0 || n.Input[0] != t {
		return nil
	}
	return n
}

// constInts returns constant input i of n as integers.
func (im *importer) constInts(n *node, i int) []int {
	c := im.constIn(n, i)
	if c == nil {
		return nil
	}
	out := make([]int, len(c.vals))
	for j, v := range c.vals {
		out[j] = int(v)
	}
	return out
}

// attention recognizes self-attention on x [batch, L, E] read by users.
func (im *importer) attention(x string, users []*node) ([]*layer, string, bool) {
	if len(users) != 3 || im.rank != 2 {
		return nil, "", false
	}
	var taken []*node
	type proj struct {
		w, b *constant
		out  string // after the Transpose into heads
		perm []int64
	}
	var projs []proj
	heads := 0
	for _, u := range users {
		w, b, add, t, ok := im.linearAt(u, x)
		if !ok || w.shape[0] != w.shape[1] {
			return nil, "", false
		}
		taken = append(taken, u)
		if add != nil {
			taken = append(taken, add)
		}
		r := im.follow(t, "Reshape")
		if r == nil {
			return nil, "", false
		}
		shape := im.constInts(r, 1)
		tr := im.follow(r.Output[0], "Transpose")
		if len(shape) != 4 || shape[2] <= 0 || tr == nil {
			return nil, "", false
		}
		if heads == 0 {
			heads = shape[2]
		} else if heads != shape[2] {
			return nil, "", false
		}
		taken = append(taken, r, tr)
		projs = append(projs, proj{w: w, b: b, out: tr.Output[0], perm: tr.intsAttr("perm")})
	}
	e := projs[0].w.shape[0]
	if e%heads != 0 {
		return nil, "", false
	}
	d := e / heads
	// Q: scaled by 1/√D then the first input of Q·Kᵀ; K: transposed to
	// [batch, H, D, L], the second; V: the second input of attn·V.
	var q, k, v = -1, -1, -1
	var scale, scores *node
	for i, p := range projs {
		switch {
		case slices.Equal(p.perm, []int64{0, 2, 3, 1}):
			k = i
		case slices.Equal(p.perm, []int64{0, 2, 1, 3}):
			if s := im.only(p.out); s != nil && s.OpType == "Mul" {
				if o, ok := other(s, p.out); ok && near(im.consts[o], 1/math.Sqrt(float64(d))) {
					q, scale = i, s
					continue
				}
			}
			v = i
		}
	}
	if q < 0 || k < 0 || v < 0 {
		return nil, "", false
	}
	if scores = im.follow(scale.Output[0], "MatMul"); scores == nil || scores.Input[1] != projs[k].out {
		return nil, "", false
	}
	sm := im.follow(scores.Output[0], "Softmax")
	if sm == nil || (sm.intAttr("axis", -1) != -1 && sm.intAttr("axis", -1) != 3) {
		return nil, "", false
	}
	ctx := im.follow(sm.Output[0], "MatMul")
	if ctx == nil || ctx.Input[1] != projs[v].out {
		return nil, "", false
	}
	tr := im.follow(ctx.Output[0], "Transpose")
	if tr == nil || !slices.Equal(tr.intsAttr("perm"), []int64{0, 2, 1, 3}) {
		return nil, "", false
	}
	rs := im.follow(tr.Output[0], "Reshape")
	if rs == nil {
		return nil, "", false
	}
	if s := im.constInts(rs, 1); len(s) != 3 || s[2] != e {
		return nil, "", false
	}
	om := im.only(rs.Output[0])
	if om == nil {
		return nil, "", false
	}
	ow, ob, oadd, out, ok := im.linearAt(om, rs.Output[0])
	if !ok || ow.shape[0] != e || ow.shape[1] != e {
		return nil, "", false
	}
	taken = append(taken, scale, scores, sm, ctx, tr, rs, om)
	if oadd != nil {
		taken = append(taken, oadd)
	}
	// in_proj_weight [3E, E]: the rows of Wq, Wk, Wv (the MatMuls hold Wᵀ).
	l := &layer{spec: nn.LayerSpec{Type: attentionType, Heads: heads, In: e}}
	inW := &constant{shape: []int{3 * e, e}}
	inB := &constant{shape: []int{3 * e}, vals: make([]float64, 3*e)}
	for j, i := range []int{q, k, v} {
		inW.vals = append(inW.vals, transpose2(projs[i].w).vals...)
		if projs[i].b != nil {
			copy(inB.vals[j*e:], projs[i].b.vals)
		}
	}
	l.set("self_attn.in_proj_weight", inW)
	l.set("self_attn.in_proj_bias", inB)
	l.set("self_attn.out_proj.weight", transpose2(ow))
	if ob == nil {
		ob = &constant{shape: []int{e}, vals: make([]float64, e)}
	}
	l.set("self_attn.out_proj.bias", ob, e)
	im.take(taken...)
	return []*layer{l}, out, true
}

// foldEncoders replaces the layers around each recognized attention by
// one transformer encoder layer:
//
//	post-norm: residual[attention], layernorm, residual[linear, act, linear], layernorm
//	pre-norm:  residual[layernorm, attention], residual[layernorm, linear, act, linear]
//
// with act relu or (exact) gelu. Attention anywhere else is an error.
func foldEncoders(ls []*layer) ([]*layer, error) {
	var out []*layer
	for i := 0; i < len(ls); i++ {
		if enc, n := foldAt(ls[i:]); enc != nil {
			out = append(out, enc)
			i += n - 1
			continue
		}
		if hasAttention(ls[i]) {
			return nil, &UnsupportedError{Op: "MatMul", Node: "self-attention", Reason: "self-attention is imported only inside a transformer encoder layer (attention, residual Adds, layer norms, feed-forward linears)"}
		}
		out = append(out, ls[i])
	}
	return out, nil
}

func hasAttention(l *layer) bool {
	if l.spec.Type == attentionType {
		return true
	}
	return slices.ContainsFunc(l.body, hasAttention)
}

// bodyTypes reports whether l is an identity-shortcut residual whose body
// has exactly the given layer types ("act": relu or gelu).
func bodyTypes(l *layer, types ...string) bool {
	if l.spec.Type != "residual" || l.proj != nil || len(l.body) != len(types) {
		return false
	}
	for i, t := range types {
		bt := l.body[i].spec.Type
		if t == "act" {
			if bt != "relu" && !(bt == "gelu" && l.body[i].spec.Approximate == "") {
				return false
			}
			continue
		}
		if bt != t {
			return false
		}
	}
	return true
}

// foldAt folds an encoder layer at the start of ls, returning it and the
// number of layers it replaces.
func foldAt(ls []*layer) (*layer, int) {
	var attn, n1, n2, ff1, act, ff2 *layer
	normFirst := false
	n := 0
	switch {
	case len(ls) >= 4 && bodyTypes(ls[0], attentionType) && ls[1].spec.Type == "layernorm" &&
		bodyTypes(ls[2], "linear", "act", "linear") && ls[3].spec.Type == "layernorm":
		attn, n1, n2, n = ls[0].body[0], ls[1], ls[3], 4
		ff1, act, ff2 = ls[2].body[0], ls[2].body[1], ls[2].body[2]
	case len(ls) >= 2 && bodyTypes(ls[0], "layernorm", attentionType) && bodyTypes(ls[1], "layernorm", "linear", "act", "linear"):
		attn, n1, n2, n, normFirst = ls[0].body[1], ls[0].body[0], ls[1].body[0], 2, true
		ff1, act, ff2 = ls[1].body[1], ls[1].body[2], ls[1].body[3]
	default:
		return nil, 0
	}
	e := attn.spec.In
	if n1.spec.Eps != n2.spec.Eps || ff2.spec.Out != e || ff1.spec.In != e ||
		(ff1.spec.Bias != nil && !*ff1.spec.Bias) || (ff2.spec.Bias != nil && !*ff2.spec.Bias) {
		return nil, 0
	}
	enc := &layer{spec: nn.LayerSpec{Type: "transformerencoderlayer", Heads: attn.spec.Heads, FF: ff1.spec.Out,
		Activation: act.spec.Type, NormFirst: normFirst, Eps: n1.spec.Eps}}
	for name, w := range attn.w {
		enc.set(name, &constant{vals: w}, attn.ws[name]...)
	}
	for prefix, src := range map[string]*layer{"linear1": ff1, "linear2": ff2, "norm1": n1, "norm2": n2} {
		for name, w := range src.w {
			enc.set(prefix+"."+name, &constant{vals: w}, src.ws[name]...)
		}
	}
	return enc, n
}

// other returns the input of a two-input node that is not t.
func other(n *node, t string) (string, bool) {
	if len(n.Input) != 2 {
		return "", false
	}
	switch t {
	case n.Input[0]:
		return n.Input[1], true
	case n.Input[1]:
		return n.Input[0], true
	}
	return "", false
}

// near reports whether constant c is the scalar v (float32 rounding).
func near(c *constant, v float64) bool {
	return c != nil && len(c.vals) == 1 && math.Abs(c.vals[0]-v) <= 1e-6*math.Abs(v)
}
