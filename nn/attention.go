package nn

import (
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/tensor"
)

// MultiheadAttention is scaled dot-product attention over Heads heads
// (Vaswani et al., "Attention Is All You Need", NeurIPS 2017), as
// torch.nn.MultiheadAttention with kdim = vdim = EmbedDim:
//
//	Q = query·Wqᵀ + bq, K = key·Wkᵀ + bk, V = value·Wvᵀ + bv   (split into heads of size D = E/H)
//	A = softmax(Q·Kᵀ/√D + mask)   per head, then dropout in training mode
//	out = concat_heads(A·V)·Woᵀ + bo
//
// Parameters, with PyTorch's names so state dicts interchange:
// "in_proj_weight" [3E, E] (Wq, Wk, Wv stacked; Xavier uniform),
// "in_proj_bias" [3E] (zeros), "out_proj.weight" [E, E] (Linear's default)
// and "out_proj.bias" (zeros).
type MultiheadAttention struct {
	Base
	InProjWeight *tensor.Tensor
	InProjBias   *tensor.Tensor // nil without bias
	OutProj      *Linear
	EmbedDim     int
	Heads        int
	Dropout      float64
	BatchFirst   bool
	rng          *tensor.RNG
}

// MultiheadAttentionConfig configures NewMultiheadAttention.
type MultiheadAttentionConfig struct {
	EmbedDim, Heads int
	// Dropout is the probability of dropping an attention weight in
	// training mode (PyTorch's default 0).
	Dropout float64
	// BatchFirst selects inputs [B, L, E]; otherwise [L, B, E] (PyTorch's
	// default). Unbatched inputs [L, E] work either way.
	BatchFirst bool
	NoBias     bool
}

// NewMultiheadAttention returns a MultiheadAttention configured by c.
func NewMultiheadAttention(rng *tensor.RNG, c MultiheadAttentionConfig) *MultiheadAttention {
	if c.EmbedDim <= 0 || c.Heads <= 0 || c.EmbedDim%c.Heads != 0 {
		panic(fmt.Sprintf("nn: NewMultiheadAttention: embed dim %d must be a positive multiple of the number of heads %d", c.EmbedDim, c.Heads))
	}
	if c.Dropout < 0 || c.Dropout > 1 {
		panic(fmt.Sprintf("nn: NewMultiheadAttention: dropout %g is outside [0, 1]", c.Dropout))
	}
	e := c.EmbedDim
	m := &MultiheadAttention{EmbedDim: e, Heads: c.Heads, Dropout: c.Dropout, BatchFirst: c.BatchFirst}
	m.InProjWeight = tensor.Zeros(tensor.Float32, 3*e, e)
	InitXavierUniform(rng, m.InProjWeight, 1)
	m.OutProj = NewLinearWith(rng, LinearConfig{In: e, Out: e, NoBias: c.NoBias})
	if !c.NoBias {
		m.InProjBias = tensor.Zeros(tensor.Float32, 3*e)
		m.OutProj.Bias.Zero()
	}
	m.rng = rng.Split()
	m.RegisterParameter("in_proj_weight", &m.InProjWeight)
	m.RegisterParameter("in_proj_bias", &m.InProjBias)
	m.Register("out_proj", m.OutProj)
	return m
}

// AttentionOptions are the optional inputs of MultiheadAttention.Forward.
type AttentionOptions struct {
	// AttnMask [L, S] or [B·H, L, S] masks query–key pairs: a Bool mask is
	// true where attention is NOT allowed; a float mask is added to the
	// scores (use −Inf to forbid).
	AttnMask *tensor.Tensor
	// Causal forbids each query position i from attending to keys j > i
	// (combined with AttnMask if both are given).
	Causal bool
	// KeyPaddingMask [B, S] (or [S] unbatched), Bool, true at key
	// positions to ignore (padding).
	KeyPaddingMask *tensor.Tensor
	// NeedWeights makes Forward return the attention weights, averaged
	// over heads ([B, L, S]) unless PerHeadWeights ([B, H, L, S]).
	NeedWeights    bool
	PerHeadWeights bool
}

// Forward attends query [B, L, E] to key and value [B, S, E] (sequence
// first when not BatchFirst; [L, E] and [S, E] unbatched). It returns the
// output shaped like query and, if o.NeedWeights, the attention weights
// (else nil). A query row whose keys are all masked gets NaN, as in
// PyTorch.
func (m *MultiheadAttention) Forward(query, key, value *tensor.Tensor, o AttentionOptions) (out, weights *tensor.Tensor) {
	if query.Dim() != key.Dim() || query.Dim() != value.Dim() || (query.Dim() != 2 && query.Dim() != 3) {
		panic(fmt.Sprintf("nn: MultiheadAttention: query %v, key %v and value %v must all be 2-D or all 3-D", query.Shape(), key.Shape(), value.Shape()))
	}
	unbatched := query.Dim() == 2
	q, k, v := query, key, value
	if unbatched {
		q, k, v = q.Unsqueeze(0), k.Unsqueeze(0), v.Unsqueeze(0)
	} else if !m.BatchFirst {
		q, k, v = q.Transpose(0, 1), k.Transpose(0, 1), v.Transpose(0, 1)
	}
	e, h := m.EmbedDim, m.Heads
	d := e / h
	b, l, s := q.Size(0), q.Size(1), k.Size(1)
	if q.Size(2) != e || k.Size(2) != e || v.Size(2) != e || k.Size(0) != b || v.Size(0) != b || v.Size(1) != s {
		panic(fmt.Sprintf("nn: MultiheadAttention(embed=%d): query %v, key %v and value %v do not fit", e, query.Shape(), key.Shape(), value.Shape()))
	}
	// Projections: one GEMM for self-attention, three otherwise.
	var qp, kp, vp *tensor.Tensor
	if query == key && key == value {
		qkv := tensor.Linear(q, m.InProjWeight, m.InProjBias).Chunk(3, -1)
		qp, kp, vp = qkv[0], qkv[1], qkv[2]
	} else {
		ws := m.InProjWeight.Chunk(3, 0)
		bs := []*tensor.Tensor{nil, nil, nil}
		if m.InProjBias != nil {
			bs = m.InProjBias.Chunk(3, 0)
		}
		qp = tensor.Linear(q, ws[0], bs[0])
		kp = tensor.Linear(k, ws[1], bs[1])
		vp = tensor.Linear(v, ws[2], bs[2])
	}
	// [B, L, E] → [B, H, L, D].
	heads := func(x *tensor.Tensor, n int) *tensor.Tensor {
		return x.Reshape(b, n, h, d).Transpose(1, 2)
	}
	qh, kh, vh := heads(qp, l), heads(kp, s), heads(vp, s)
	scores := qh.MulScalar(1 / math.Sqrt(float64(d))).MatMul(kh.Transpose(2, 3)) // [B, H, L, S]
	scores = m.applyMasks(scores, o, b, l, s, unbatched)
	attn := scores.Softmax(-1)
	if m.Training() && m.Dropout > 0 {
		attn = attn.Mul(dropoutMask(m.rng, attn.DType(), m.Dropout, attn.Shape()))
	}
	ctx := attn.MatMul(vh).Transpose(1, 2).Reshape(b, l, e) // [B, L, E]
	out = m.OutProj.Forward(ctx)
	if unbatched {
		out = out.Squeeze(0)
	} else if !m.BatchFirst {
		out = out.Transpose(0, 1)
	}
	if o.NeedWeights {
		weights = attn
		if !o.PerHeadWeights {
			weights = attn.Mean([]int{1}, false)
		}
		if unbatched {
			weights = weights.Squeeze(0)
		}
	}
	return out, weights
}

// applyMasks adds the attention and key-padding masks to scores [B, H, L, S].
func (m *MultiheadAttention) applyMasks(scores *tensor.Tensor, o AttentionOptions, b, l, s int, unbatched bool) *tensor.Tensor {
	h := m.Heads
	if o.Causal {
		c := make([]bool, l*s)
		for i := range l {
			for j := i + 1; j < s; j++ {
				c[i*s+j] = true
			}
		}
		scores = scores.MaskedFill(tensor.FromBool(c, l, s), math.Inf(-1))
	}
	if am := o.AttnMask; am != nil {
		switch {
		case am.Dim() == 2 && am.Size(0) == l && am.Size(1) == s:
		case am.Dim() == 3 && am.Size(0) == b*h && am.Size(1) == l && am.Size(2) == s:
			am = am.Reshape(b, h, l, s)
		default:
			panic(fmt.Sprintf("nn: MultiheadAttention: attention mask %v, want [%d, %d] or [%d, %d, %d]", am.Shape(), l, s, b*h, l, s))
		}
		if am.DType() == tensor.Bool {
			scores = scores.MaskedFill(am, math.Inf(-1))
		} else {
			scores = scores.Add(am)
		}
	}
	if kp := o.KeyPaddingMask; kp != nil {
		if unbatched && kp.Dim() == 1 {
			kp = kp.Unsqueeze(0)
		}
		if kp.Dim() != 2 || kp.Size(0) != b || kp.Size(1) != s {
			panic(fmt.Sprintf("nn: MultiheadAttention: key padding mask %v, want [%d, %d]", kp.Shape(), b, s))
		}
		kp = kp.Reshape(b, 1, 1, s)
		if kp.DType() == tensor.Bool {
			scores = scores.MaskedFill(kp, math.Inf(-1))
		} else {
			scores = scores.Add(kp)
		}
	}
	return scores
}

func (m *MultiheadAttention) describe() string {
	return fmt.Sprintf("MultiheadAttention(embed_dim=%d, heads=%d, dropout=%g, batch_first=%v)", m.EmbedDim, m.Heads, m.Dropout, m.BatchFirst)
}

// TransformerEncoderLayer is self-attention followed by a feed-forward
// network, each wrapped in a residual connection and layer norm, as
// torch.nn.TransformerEncoderLayer:
//
//	post-norm (default): x = norm1(x + sa(x)); x = norm2(x + ff(x))
//	NormFirst:           x = x + sa(norm1(x)); x = x + ff(norm2(x))
//	sa(x) = dropout1(self_attn(x, x, x))
//	ff(x) = dropout2(linear2(dropout(activation(linear1(x)))))
//
// Children carry PyTorch's names (self_attn, linear1, dropout, linear2,
// norm1, norm2, dropout1, dropout2), so state dicts interchange.
type TransformerEncoderLayer struct {
	Base
	SelfAttn           *MultiheadAttention
	Linear1, Linear2   *Linear
	Drop, Drop1, Drop2 *Dropout
	Norm1, Norm2       *LayerNorm
	Activation         Layer
	NormFirst          bool
	dModel, heads, ff  int
}

// TransformerEncoderLayerConfig configures NewTransformerEncoderLayer.
type TransformerEncoderLayerConfig struct {
	DModel, Heads int
	FF            int     // feed-forward width; 0 means PyTorch's 2048
	Dropout       float64 // 0 means no dropout (PyTorch's default is 0.1: set it)
	Activation    string  // "relu" (default) or "gelu"
	Eps           float64 // layer norm eps; 0 means 1e-5
	BatchFirst    bool
	NormFirst     bool
}

// NewTransformerEncoderLayer returns an encoder layer configured by c.
func NewTransformerEncoderLayer(rng *tensor.RNG, c TransformerEncoderLayerConfig) *TransformerEncoderLayer {
	if c.FF == 0 {
		c.FF = 2048
	}
	if c.Eps == 0 {
		c.Eps = 1e-5
	}
	var actL Layer = NewReLU()
	switch c.Activation {
	case "", "relu":
	case "gelu":
		actL = NewGELU()
	default:
		panic(fmt.Sprintf("nn: NewTransformerEncoderLayer: activation %q, want relu or gelu", c.Activation))
	}
	t := &TransformerEncoderLayer{NormFirst: c.NormFirst, Activation: actL, dModel: c.DModel, heads: c.Heads, ff: c.FF}
	t.SelfAttn = NewMultiheadAttention(rng, MultiheadAttentionConfig{EmbedDim: c.DModel, Heads: c.Heads, Dropout: c.Dropout, BatchFirst: c.BatchFirst})
	t.Linear1 = NewLinear(rng, c.DModel, c.FF)
	t.Drop = NewDropout(rng, c.Dropout)
	t.Linear2 = NewLinear(rng, c.FF, c.DModel)
	t.Norm1 = NewLayerNormWith(LayerNormConfig{Shape: []int{c.DModel}, Eps: c.Eps})
	t.Norm2 = NewLayerNormWith(LayerNormConfig{Shape: []int{c.DModel}, Eps: c.Eps})
	t.Drop1 = NewDropout(rng, c.Dropout)
	t.Drop2 = NewDropout(rng, c.Dropout)
	t.Register("self_attn", t.SelfAttn)
	t.Register("linear1", t.Linear1)
	t.Register("dropout", t.Drop)
	t.Register("linear2", t.Linear2)
	t.Register("norm1", t.Norm1)
	t.Register("norm2", t.Norm2)
	t.Register("dropout1", t.Drop1)
	t.Register("dropout2", t.Drop2)
	return t
}

// Forward runs the layer on x without masks.
func (t *TransformerEncoderLayer) Forward(x *tensor.Tensor) *tensor.Tensor {
	return t.ForwardMasked(x, AttentionOptions{})
}

// ForwardMasked runs the layer with attention masks (AttnMask, Causal,
// KeyPaddingMask; NeedWeights is ignored).
func (t *TransformerEncoderLayer) ForwardMasked(x *tensor.Tensor, o AttentionOptions) *tensor.Tensor {
	o.NeedWeights = false
	sa := func(x *tensor.Tensor) *tensor.Tensor {
		y, _ := t.SelfAttn.Forward(x, x, x, o)
		return t.Drop1.Forward(y)
	}
	ff := func(x *tensor.Tensor) *tensor.Tensor {
		return t.Drop2.Forward(t.Linear2.Forward(t.Drop.Forward(t.Activation.Forward(t.Linear1.Forward(x)))))
	}
	if t.NormFirst {
		x = x.Add(sa(t.Norm1.Forward(x)))
		return x.Add(ff(t.Norm2.Forward(x)))
	}
	x = t.Norm1.Forward(x.Add(sa(x)))
	return t.Norm2.Forward(x.Add(ff(x)))
}

func (t *TransformerEncoderLayer) describe() string {
	return fmt.Sprintf("TransformerEncoderLayer(d_model=%d, heads=%d, ff=%d, norm_first=%v)", t.dModel, t.heads, t.ff, t.NormFirst)
}

func init() {
	registerLayer("transformerencoderlayer", []string{"heads", "ff", "p", "activation", "norm_first", "eps"}, buildTransformerEncoderLayer)
	registerAlias("transformerencoder", "transformerencoderlayer")
	registerAlias("transformer", "transformerencoderlayer")
}

// buildTransformerEncoderLayer builds a batch-first encoder layer over
// inputs [L, E].
func buildTransformerEncoderLayer(b *layerBuild) (Layer, []int, error) {
	s, in := b.spec, b.in
	if len(in) != 2 {
		return b.fail("input must be [L, E] (sequence length, embedding size), got %v", in)
	}
	if s.Heads <= 0 {
		return b.fail("field \"heads\" is required")
	}
	if in[1]%s.Heads != 0 {
		return b.fail("embedding size %d is not divisible by heads=%d", in[1], s.Heads)
	}
	if product(in[1], max(s.FF, 2048)) > maxParams {
		return b.fail("a feed-forward weight of %d×%d is too large", max(s.FF, 2048), in[1])
	}
	p := 0.1
	if s.P != nil {
		p = *s.P
	}
	if p < 0 || p > 1 {
		return b.fail("p=%g is outside [0, 1]", p)
	}
	switch s.Activation {
	case "", "relu", "gelu":
	default:
		return b.fail("activation=%q, want relu or gelu", s.Activation)
	}
	d, ff := float64(in[1]), float64(s.FF)
	if s.FF == 0 {
		ff = 2048
	}
	// Attention's input and output projections, the two feed-forward
	// linears and the two layer norms, all with biases.
	if err := b.reserve(4*d*d + 4*d + 2*d*ff + ff + d + 4*d); err != nil {
		return nil, nil, err
	}
	return NewTransformerEncoderLayer(b.rng, TransformerEncoderLayerConfig{
		DModel: in[1], Heads: s.Heads, FF: s.FF, Dropout: p, Activation: s.Activation,
		Eps: s.Eps, BatchFirst: true, NormFirst: s.NormFirst}), b.same(), nil
}
