package cluster

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/internal/parallel"
	"github.com/fathom-ml/fathom/ml"
)

// Distance measures, Spark's names.
const (
	Euclidean = "euclidean"
	Cosine    = "cosine"
)

// block is the number of rows whose distances to the centers one GEMM
// computes (a rows × k product against the k × d centers).
const block = 256

// points is one rank's rows as a dense float64 matrix, with their squared
// norms. For the cosine measure the rows are normalized to unit length
// when read, so that both measures run on squared Euclidean distances.
type points struct {
	n, d  int
	x     []float64 // n × d, row-major
	norm2 []float64 // ‖x_i‖²
}

func (p *points) row(i int) []float64 { return p.x[i*p.d : (i+1)*p.d] }

// readPoints reads column col of f; with unit set every row is scaled to
// norm 1 (a zero row is an error naming it).
func readPoints(f *data.Frame, col string, unit bool) (*points, error) {
	m, err := ml.Features(f, col)
	if err != nil {
		return nil, err
	}
	p, zero := newPoints(m.Data, m.Rows, m.Cols, unit)
	if zero >= 0 {
		return nil, fmt.Errorf("column %q, row %d: the cosine distance is not defined for a zero vector", col, zero+1)
	}
	return p, nil
}

// newPoints wraps x (n × d, row-major) with its rows' squared norms; with
// unit set it scales every row of x in place to norm 1 and also returns
// the index of the first zero row, which cannot be (−1 when there is none).
func newPoints(x []float64, n, d int, unit bool) (p *points, zero int) {
	p = &points{n: n, d: d, x: x, norm2: make([]float64, n)}
	var anyZero atomic.Bool
	parallel.For(p.n, max(1, (1<<15)/max(p.d, 1)), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			r := p.row(i)
			s := kernel.DotF64(r, r)
			if unit {
				if s == 0 {
					anyZero.Store(true)
					continue
				}
				inv := 1 / math.Sqrt(s)
				for j := range r {
					r[j] *= inv
				}
				s = kernel.DotF64(r, r)
			}
			p.norm2[i] = s
		}
	})
	if anyZero.Load() {
		for i := range p.n {
			if p.norm2[i] == 0 {
				return p, i
			}
		}
	}
	return p, -1
}

// sqDist writes the squared Euclidean distances of the rows of x (rows ×
// d, squared norms xn) to the k centers c (k × d, squared norms cn) to
// out (rows × k), as ‖x‖² − 2x·c + ‖c‖² with x·cᵀ one GEMM; rounding can
// make the sum slightly negative, it is clamped at 0.
func sqDist(x, xn []float64, rows, d int, c, cn []float64, k int, out []float64) {
	if rows == 0 || k == 0 {
		return
	}
	kernel.Dgemm(false, true, rows, k, d, -2, x, d, c, d, 0, out, k)
	for i := range rows {
		o := out[i*k : (i+1)*k]
		for j := range o {
			o[j] = max(o[j]+xn[i]+cn[j], 0)
		}
	}
}

// norms returns the squared norms of the k rows of c (k × d).
func norms(c []float64, k, d int) []float64 {
	out := make([]float64, k)
	for j := range k {
		r := c[j*d : (j+1)*d]
		out[j] = kernel.DotF64(r, r)
	}
	return out
}

// argmin2 returns the index and value of the smallest entry of v and the
// second smallest value (+Inf when v has one entry); ties go to the lower
// index.
func argmin2(v []float64) (arg int, best, second float64) {
	best, second = math.Inf(1), math.Inf(1)
	for j, x := range v {
		switch {
		case x < best:
			second = best
			best, arg = x, j
		case x < second:
			second = x
		}
	}
	return arg, best, second
}

// rowUniform is a uniform number in [0, 1) that depends only on seed and
// a row's global index (SplitMix64), so that sampling is the same however
// the rows are spread over the ranks.
func rowUniform(seed int64, row int) float64 {
	z := uint64(seed)*0x9e3779b97f4a7c15 + uint64(row)*0xbf58476d1ce4e5b9 + 0x94d049bb133111eb
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}

// packRows encodes float64 rows as little-endian bytes (for
// AllGatherBytes).
func packRows(v []float64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return b
}

func unpackRows(b []byte) []float64 {
	v := make([]float64, len(b)/8)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v
}
