package kernel

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fathom-ml/fathom/internal/parallel"
)

// A chain of int8 Linear layers (an MLP) run block of rows by block of
// rows: every layer on one block before the next block, so that a block's
// activations stay in the core's cache between layers, no activation of
// the whole batch is ever written, and the cores synchronize once per call
// rather than once per layer. Rows are independent in both quantization
// modes (a static map, or each row's own map), which is what makes this
// possible; the results are those of running the layers one by one with
// GemmF32I8F32 / GemmU8I8U8 bit for bit.

// I8Layer is one layer of GemmChainF32I8: packed weights W and the
// dequantization of its products (I8Dequant: AScale and AZero, the static
// input map, or PerRow for dynamic quantization of each row; WScale,
// Bias, ReLU; TransC and Pool must be unset).
type I8Layer struct {
	W *PackedI8
	I8Dequant
}

// chainLayer is an I8Layer prepared for one call.
type chainLayer struct {
	w      *PackedI8
	perRow bool
	relu   bool
	inv    float32 // 1/AScale of a static input map
	zero   int32
	// out: how the layer's tiles leave the epilogue.
	out int
	// cv: per panel u, v, b (PerRow input, see dequantRowsFunc); sc, off:
	// the static input's dequantization, or requantization to the next
	// layer's map (outReq) with lo, hi its clamp.
	cv, sc, off []float32
	lo, hi      float32
}

const (
	outFinal = iota // float32 into C
	outF32          // float32 into the block scratch, quantized row by row for the next layer
	outReq          // uint8 for the next layer (static → static), requantized in the epilogue
)

// chainScratch is one participant's buffers: the quantized input of the
// current and next layer, their row maps, the float32 scratch and a tile.
type chainScratch struct {
	q      [2][]uint8
	rs, rz [2][]float32
	f      []float32
	a      []uint8
	tile   []int32
}

var chainScratchPool = sync.Pool{New: func() any { return new(chainScratch) }}

// GemmChainF32I8 runs layers on the float32 rows x (A(i, p) at x[i*ldx+p],
// m rows of layers[0].W.K values): each layer's output is the next one's
// input, quantized with the next layer's map (requantized in the epilogue
// when both maps are static; otherwise dequantized into a scratch block
// and quantized row by row, each row with its own min-max map when the
// next layer is PerRow). The last layer's float32 output goes to
// C(i, j) at c[i*ldc+j]. Every layer's W.K must equal the previous W.N,
// and every K and N be positive. Large products run on several cores.
func GemmChainF32I8(m int, x []float32, ldx int, layers []I8Layer, c []float32, ldc int) {
	if len(layers) == 0 {
		panic("kernel.GemmChainF32I8: no layers")
	}
	v := i8Active
	ls := make([]chainLayer, len(layers))
	ops := 0.0
	maxQ, maxF := 0, 0
	for l := range layers {
		L := &layers[l]
		w := L.W
		if w.K == 0 || w.N == 0 || (l > 0 && w.K != layers[l-1].W.N) {
			panic(fmt.Sprintf("kernel.GemmChainF32I8: layer %d is %d×%d after %d outputs", l, w.N, w.K, layers[max(l-1, 0)].W.N))
		}
		if L.TransC || L.Pool > 1 {
			panic("kernel.GemmChainF32I8: TransC or Pool in a chain")
		}
		if len(L.WScale) != w.N || (L.Bias != nil && len(L.Bias) != w.N) {
			panic(fmt.Sprintf("kernel.GemmChainF32I8: layer %d: %d weight scales and %d biases for n=%d", l, len(L.WScale), len(L.Bias), w.N))
		}
		if !L.PerRow && (!(L.AScale > 0) || L.AZero < 0 || L.AZero > 255) {
			panic(fmt.Sprintf("kernel.GemmChainF32I8: layer %d: activation scale %g, zero point %d", l, L.AScale, L.AZero))
		}
		cl := &ls[l]
		cl.w, cl.perRow, cl.relu = w, L.PerRow, L.ReLU
		if !L.PerRow {
			cl.inv, cl.zero = 1/L.AScale, L.AZero
		}
		ops += float64(m) * float64(w.N) * float64(w.K)
		maxQ = max(maxQ, 4*w.kg)
		switch {
		case l == len(layers)-1:
			cl.out = outFinal
		case !L.PerRow && !layers[l+1].PerRow:
			cl.out = outReq
		default:
			cl.out = outF32
			maxF = max(maxF, w.N)
		}
		if L.PerRow {
			np := (w.N + i8NR - 1) / i8NR
			cl.cv = make([]float32, np*3*i8NR)
			for j := 0; j < w.N; j++ {
				p, jj := j/i8NR, j%i8NR
				cl.cv[p*3*i8NR+jj] = L.WScale[j]
				cl.cv[p*3*i8NR+i8NR+jj] = -L.WScale[j] * float32(w.RowSum[j])
				if L.Bias != nil {
					cl.cv[p*3*i8NR+2*i8NR+jj] = L.Bias[j]
				}
			}
			continue
		}
		cl.sc, cl.off = L.scales(w)
		if cl.out == outReq {
			// As gemmU8Out: the next layer's map folded in.
			nx := &layers[l+1].I8Dequant
			inv := 1 / nx.AScale
			cl.lo, cl.hi = 0, 255
			if L.ReLU {
				cl.lo = float32(nx.AZero)
			}
			for j := range cl.sc {
				cl.sc[j] *= inv
				cl.off[j] = cl.off[j]*inv + float32(nx.AZero)
			}
		}
	}
	if m < 0 {
		panic(fmt.Sprintf("kernel.GemmChainF32I8: m=%d", m))
	}
	if m == 0 {
		return
	}
	k0, nl := layers[0].W.K, layers[len(layers)-1].W.N
	checkStride("GemmChainF32I8", ldx, k0, len(x), m)
	checkStride("GemmChainF32I8", ldc, nl, len(c), m)
	deq, rowsDeq, rq := v.dequant, v.dequantRows, v.requant
	if deq == nil {
		deq = dequantGo
	}
	if rowsDeq == nil {
		rowsDeq = dequantRowsGo
	}
	if rq == nil {
		rq = requantGo
	}
	direct := v.direct != nil && !i8Packed

	// Blocks: the kernel's tile height, or, on several cores, a number of
	// blocks that is a multiple of the cores (64 rows on 2: 6 blocks of 11
	// or 10) so that they share the rows evenly.
	workers := parallel.Workers()
	big := ops >= i8SerialOps && workers > 1
	blocks := (m + v.mr - 1) / v.mr
	if big {
		blocks = (max(blocks, 2*workers) + workers - 1) / workers * workers
		blocks = min(blocks, (m+3)/4) // at least 4 rows a block
	}
	blocks = max(blocks, 1)
	mr := (m + blocks - 1) / blocks
	blocks = (m + mr - 1) / mr

	// ahead: the block whose rows a participant prefetches while it works
	// on block b, b+ahead (blocks are claimed in turn).
	ahead := 1
	if big {
		ahead = min(workers, blocks)
	}
	block := func(s *chainScratch, b int) {
		i0 := b * mr
		rows := min(mr, m-i0)
		// Layer 0's input: the float32 rows quantized.
		L0 := &ls[0]
		ld := 4 * L0.w.kg
		q := s.q[0][:rows*ld]
		rs, rz := s.rs[0], s.rz[0]
		quantRowsU8(q, ld, x[i0*ldx:], ldx, k0, rows, L0.perRow, L0.inv, L0.zero, rs, rz)
		// Fetch the rows of this participant's next block while this one is multiplied.
		if nb := (b + ahead) * mr; nb < m {
			prefetchF32(x[nb*ldx : min(len(x), min(m, nb+mr)*ldx)])
		}
		cur := 0
		for l := range ls {
			L := &ls[l]
			w, kg := L.w, L.w.kg
			n := w.N
			ab := s.q[cur][:rows*4*kg]
			ap := ab
			if !direct {
				ap = s.a[:rows*4*kg]
				packAI8(ap, ab, 4*kg, rows, w.K, kg)
			}
			rs, rz := s.rs[cur], s.rz[cur]
			nxt := 1 - cur
			var nld int
			if L.out != outFinal {
				nld = 4 * ls[l+1].w.kg
			}
			panels := (n + i8NR - 1) / i8NR
			for p := 0; p < panels; p++ {
				j0 := p * i8NR
				cols := min(i8NR, n-j0)
				bw := w.data[p*kg*4*i8NR : (p+1)*kg*4*i8NR]
				if direct {
					v.direct(rows, kg, ab, 4*kg, bw, s.tile)
				} else {
					v.micro(rows, kg, ap, bw, s.tile)
				}
				var dst []float32
				ldd := n
				switch L.out {
				case outFinal:
					dst, ldd = c[i0*ldc+j0:], ldc
				case outF32:
					dst = s.f[j0:]
				case outReq:
					rq(rows, cols, s.tile, tileOf(L.sc, j0), tileOf(L.off, j0), s.q[nxt][j0:], nld, L.lo, L.hi)
					continue
				}
				if L.perRow {
					rowsDeq(rows, cols, s.tile, (*[3 * i8NR]float32)(L.cv[p*3*i8NR:(p+1)*3*i8NR]), rs, rz, dst, ldd, L.relu)
				} else {
					deq(rows, cols, s.tile, tileOf(L.sc, j0), tileOf(L.off, j0), dst, ldd, L.relu)
				}
			}
			if L.out == outFinal {
				break
			}
			// The next layer's input, row by row (past n the bytes are 0).
			N := &ls[l+1]
			nq := s.q[nxt][:rows*nld]
			if L.out == outReq {
				for i := 0; i < rows; i++ {
					clear(nq[i*nld+n : (i+1)*nld])
				}
			} else {
				nrs, nrz := s.rs[nxt], s.rz[nxt]
				quantRowsU8(nq, nld, s.f, n, n, rows, N.perRow, N.inv, N.zero, nrs, nrz)
			}
			cur = nxt
		}
	}
	getScratch := func() *chainScratch {
		s := chainScratchPool.Get().(*chainScratch)
		for t := range 2 {
			if cap(s.q[t]) < mr*maxQ {
				s.q[t] = make([]uint8, mr*maxQ)
			}
			if cap(s.rs[t]) < mr {
				s.rs[t], s.rz[t] = make([]float32, mr), make([]float32, mr)
			}
		}
		if !direct && cap(s.a) < mr*maxQ {
			s.a = make([]uint8, mr*maxQ)
		}
		if cap(s.f) < mr*maxF {
			s.f = make([]float32, mr*maxF)
		}
		if cap(s.tile) < v.mr*i8NR {
			s.tile = make([]int32, v.mr*i8NR)
		}
		return s
	}
	if !big || blocks == 1 {
		s := getScratch()
		for b := 0; b < blocks; b++ {
			block(s, b)
		}
		chainScratchPool.Put(s)
		return
	}
	t := chainTasks.Get().(*chainTask)
	t.next.Store(0)
	t.blocks = int64(blocks)
	t.run = func() {
		if t.next.Load() >= t.blocks {
			return // a helper that came late
		}
		s := getScratch()
		for {
			b := t.next.Add(1) - 1
			if b >= t.blocks {
				break
			}
			block(s, int(b))
		}
		chainScratchPool.Put(s)
	}
	t.job.Run(min(workers, blocks), t)
	t.run = nil
	chainTasks.Put(t)
}

// chainTask shares a chain's blocks among the caller and the pool's
// helpers, which claim them one at a time.
type chainTask struct {
	job    parallel.Job
	next   atomic.Int64
	blocks int64
	run    func()
}

// RunPart claims blocks until none is left.
func (t *chainTask) RunPart(int) { t.run() }

// The helpers stay awake between the back-to-back calls of a stream of
// batches, and the caller, done with its blocks, polls for the last ones
// rather than sleeping (waking it would cost more than the wait).
var chainTasks = sync.Pool{New: func() any {
	return &chainTask{job: parallel.Job{Spin: 100 * time.Microsecond, WaitSpin: 50 * time.Microsecond}}
}}
