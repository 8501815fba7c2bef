package linear

import (
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/internal/parallel"
	"github.com/fathom-ml/fathom/ml"
)

// Loss is a per-row loss of a linear model with k outputs (margins
// m = W·x + b, one per output) and a label. It is the "aggregator" of
// Spark's ml.optim.aggregator, written once for every linear model here.
type Loss int

const (
	// SquaredError is ½(m − y)², one output (least squares).
	SquaredError Loss = iota
	// Logistic is log(1 + e^m) − y·m for y ∈ {0, 1}, one output (binomial
	// logistic regression).
	Logistic
	// Softmax is log Σ_c e^{m_c} − m_y for y ∈ {0..k−1}, k outputs
	// (multinomial logistic regression, no reference class).
	Softmax
	// Hinge is max(0, 1 − t·m) with t = ±1: for one output t = 2y − 1;
	// for k > 1 outputs each output c is a one-vs-rest problem with
	// t_c = +1 when y = c, −1 otherwise, and the losses add up.
	Hinge
	// SquaredHinge is max(0, 1 − t·m)², with t as for Hinge.
	SquaredHinge
)

func (l Loss) String() string {
	switch l {
	case SquaredError:
		return "squaredError"
	case Logistic:
		return "logistic"
	case Softmax:
		return "softmax"
	case Hinge:
		return "hinge"
	case SquaredHinge:
		return "squaredHinge"
	}
	return fmt.Sprintf("Loss(%d)", int(l))
}

// Aggregator computes the weighted sum of a Loss and its gradient over
// the rows of every rank: each rank runs through its own rows (a dense
// row-major block) in row blocks, two GEMMs per block (margins = X·Wᵀ,
// then ∇W += Rᵀ·X with R the loss's derivative by the margins), in chunks
// that the cores share and whose sums are added in order, and the ranks'
// [loss, ∇W, ∇b, Σw] are summed by one all-reduce per evaluation. Its
// buffers are allocated once: an evaluation allocates at most one small
// closure, never a buffer the size of the data.
type Aggregator struct {
	loss      Loss
	x         []float64 // n × d, row-major
	n, d, k   int
	y, w      []float64 // label per row; weight per row (nil: 1)
	intercept bool
	comm      ml.Comm

	chunks, size, block int
	parts               []aggPart
	red                 []float64 // [loss, ∇W (k·d), ∇b (k), Σw]
	coef, icpt          []float64 // the point being evaluated
}

type aggPart struct {
	m          []float64 // block × k margins, then derivatives
	g          []float64 // k × d
	gb         []float64 // k
	loss, wsum float64
}

// chunkRows returns how n rows are cut into chunks that each hold a
// partial sum of width floats: chunks of at least 2048 rows, at most 512
// of them, and their partial sums within about 64 MB. Chunks depend on
// the data's shape only — not on the cores — so a fit is the same bit for
// bit on any machine with the same kernels.
func chunkRows(n, width int) (count, size int) {
	if n == 0 {
		return 0, 0
	}
	most := min(max(8_000_000/max(width, 1), 4), 512)
	size = max(2048, (n+most-1)/most)
	return (n + size - 1) / size, size
}

// aggBlockFlops sets the row block: about this many multiply-adds per GEMM.
var aggBlockFlops = 400_000

// NewAggregator returns the aggregator of loss over this rank's rows x
// (n × d), labels y (class indices as float64 for classifiers) and weights
// w (nil: every weight 1), with k outputs. intercept says whether the
// margins include an intercept per output (its gradient is computed
// either way). Every rank must call it with the same d, k and loss.
func NewAggregator(loss Loss, x ml.Matrix, y, w []float64, k int, intercept bool, c ml.Comm) *Aggregator {
	if c == nil {
		c = ml.Single
	}
	a := &Aggregator{loss: loss, x: x.Data, n: x.Rows, d: x.Cols, k: k, y: y, w: w, intercept: intercept, comm: c}
	a.chunks, a.size = chunkRows(a.n, k*a.d)
	// A row block fits in a core's L2 and its GEMMs stay below the size
	// at which kernel.Dgemm would split them over the cores itself (the
	// chunks already are).
	a.block = min(max(aggBlockFlops/max(1, k*a.d), 16), 512)
	a.parts = make([]aggPart, a.chunks)
	for i := range a.parts {
		a.parts[i] = aggPart{m: make([]float64, a.block*k), g: make([]float64, k*a.d), gb: make([]float64, k)}
	}
	a.red = make([]float64, 2+k*a.d+k)
	return a
}

// Eval returns the weighted loss sum Σ_i w_i·loss(W·x_i + b, y_i) over
// every rank's rows and the weight sum Σ w_i, and writes the gradient of
// the loss sum by W (k × d, row-major) into gw and by b into gb. coef is
// W, icpt is b (ignored without intercept). It is collective: every rank
// calls it with the same coef and icpt.
func (a *Aggregator) Eval(coef, icpt, gw, gb []float64) (lossSum, wsum float64, err error) {
	a.coef, a.icpt = coef, icpt
	if a.chunks > 0 {
		parallel.For(a.chunks, 1, a.runChunks)
	}
	r := a.red
	clear(r)
	for i := range a.parts {
		p := &a.parts[i]
		r[0] += p.loss
		g := r[1 : 1+a.k*a.d]
		for j, v := range p.g {
			g[j] += v
		}
		gbr := r[1+a.k*a.d : 1+a.k*a.d+a.k]
		for j, v := range p.gb {
			gbr[j] += v
		}
		r[len(r)-1] += p.wsum
	}
	if err := a.comm.AllReduce(r, ml.OpSum); err != nil {
		return 0, 0, err
	}
	a.coef, a.icpt = nil, nil
	copy(gw, r[1:1+a.k*a.d])
	copy(gb, r[1+a.k*a.d:1+a.k*a.d+a.k])
	return r[0], r[len(r)-1], nil
}

func (a *Aggregator) runChunks(lo, hi int) {
	for c := lo; c < hi; c++ {
		a.chunk(&a.parts[c], c*a.size, min((c+1)*a.size, a.n))
	}
}

// chunk computes rows [lo, hi) into p.
func (a *Aggregator) chunk(p *aggPart, lo, hi int) {
	clear(p.g)
	clear(p.gb)
	p.loss, p.wsum = 0, 0
	d, k := a.d, a.k
	for b0 := lo; b0 < hi; b0 += a.block {
		b1 := min(b0+a.block, hi)
		rows := b1 - b0
		xb := a.x[b0*d : b1*d]
		m := p.m[:rows*k]
		if d > 0 {
			kernel.Dgemm(false, true, rows, k, d, 1, xb, d, a.coef, d, 0, m, k)
		} else {
			clear(m)
		}
		if a.intercept {
			for i := range rows {
				mi := m[i*k : (i+1)*k]
				for c, b := range a.icpt {
					mi[c] += b
				}
			}
		}
		for i := range rows {
			wi := 1.0
			if a.w != nil {
				wi = a.w[b0+i]
			}
			mi := m[i*k : (i+1)*k]
			p.loss += wi * a.lossAndDeriv(mi, a.y[b0+i])
			p.wsum += wi
			for c := range mi {
				mi[c] *= wi
				p.gb[c] += mi[c]
			}
		}
		if d > 0 {
			kernel.Dgemm(true, false, k, d, rows, 1, m, k, xb, d, 1, p.g, d)
		}
	}
}

// lossAndDeriv returns the loss at margins m for label y and overwrites
// m with the derivative of the loss by m.
func (a *Aggregator) lossAndDeriv(m []float64, y float64) float64 {
	switch a.loss {
	case SquaredError:
		r := m[0] - y
		m[0] = r
		return r * r / 2
	case Logistic:
		z := m[0]
		// log(1 + e^z) − y·z, stable for either sign of z.
		l := math.Log1p(math.Exp(-math.Abs(z))) + max(z, 0) - y*z
		m[0] = sigmoid(z) - y
		return l
	case Softmax:
		lab := int(y)
		my := m[lab]
		top := m[0]
		for _, v := range m[1:] {
			top = max(top, v)
		}
		s := 0.0
		for c, v := range m {
			e := math.Exp(v - top)
			m[c] = e
			s += e
		}
		// log Σ e^{m_c} − m_y = log s + top − m_y, with s ≥ 1.
		l := math.Log(s) + (top - my)
		inv := 1 / s
		for c := range m {
			m[c] *= inv
		}
		m[lab] -= 1
		return l
	case Hinge, SquaredHinge:
		if len(m) == 1 {
			return hinge(a.loss, &m[0], 2*y-1)
		}
		lab := int(y)
		l := 0.0
		for c := range m {
			t := -1.0
			if c == lab {
				t = 1
			}
			l += hinge(a.loss, &m[c], t)
		}
		return l
	}
	panic("linear: unknown loss")
}

// hinge returns the (squared) hinge loss of margin *m for target t = ±1
// and overwrites *m with its derivative.
func hinge(l Loss, m *float64, t float64) float64 {
	r := 1 - t**m
	if r <= 0 {
		*m = 0
		return 0
	}
	if l == Hinge {
		*m = -t
		return r
	}
	*m = -2 * t * r
	return r * r
}

func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}
