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
	ch := &chain{v: i8Active, x: x, ldx: ldx, c: c, ldc: ldc, m: m}
	ops := ch.prepare(layers)
	if m < 0 {
		panic(fmt.Sprintf("kernel.GemmChainF32I8: m=%d", m))
	}
	if m == 0 {
		return
	}
	ch.k0 = layers[0].W.K
	checkStride("GemmChainF32I8", ldx, ch.k0, len(x), m)
	checkStride("GemmChainF32I8", ldc, layers[len(layers)-1].W.N, len(c), m)
	ch.epilogues()

	// Blocks: the kernel's tile height, or, on several cores, a number of
	// blocks that is a multiple of the cores (64 rows on 2: 6 blocks of 11
	// or 10) so that they share the rows evenly.
	workers := parallel.Workers()
	big := ops >= i8SerialOps && workers > 1
	blocks := (m + ch.v.mr - 1) / ch.v.mr
	if big {
		blocks = (max(blocks, 2*workers) + workers - 1) / workers * workers
		blocks = min(blocks, (m+3)/4) // at least 4 rows a block
	}
	blocks = max(blocks, 1)
	ch.mr = (m + blocks - 1) / blocks
	blocks = (m + ch.mr - 1) / ch.mr

	// ahead: the block whose rows a participant prefetches while it works
	// on block b, b+ahead (blocks are claimed in turn).
	ch.ahead = 1
	if big {
		ch.ahead = min(workers, blocks)
	}
	if !big || blocks == 1 {
		s := ch.scratch()
		for b := 0; b < blocks; b++ {
			ch.block(s, b)
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
		s := ch.scratch()
		for {
			b := t.next.Add(1) - 1
			if b >= t.blocks {
				break
			}
			ch.block(s, int(b))
		}
		chainScratchPool.Put(s)
	}
	t.job.Run(min(workers, blocks), t)
	t.run = nil
	chainTasks.Put(t)
}

// chain is one call of GemmChainF32I8: its operands, its prepared layers,
// the epilogues of the active variant and the block geometry.
type chain struct {
	v          *i8Variant
	ls         []chainLayer
	x, c       []float32
	ldx, ldc   int
	m, k0      int
	mr, ahead  int
	maxQ, maxF int // the widest quantized input and float32 scratch row
	direct     bool
	deq        dequantFunc
	rowsDeq    dequantRowsFunc
	rq         requantFunc
}

// prepare checks the layers and prepares them for the call: how each
// layer's tiles leave the epilogue, and its scales folded per panel. It
// returns the multiply-adds of the whole chain.
func (ch *chain) prepare(layers []I8Layer) (ops float64) {
	ch.ls = make([]chainLayer, len(layers))
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
		cl := &ch.ls[l]
		cl.w, cl.perRow, cl.relu = w, L.PerRow, L.ReLU
		if !L.PerRow {
			cl.inv, cl.zero = 1/L.AScale, L.AZero
		}
		ops += float64(ch.m) * float64(w.N) * float64(w.K)
		ch.maxQ = max(ch.maxQ, 4*w.kg)
		switch {
		case l == len(layers)-1:
			cl.out = outFinal
		case !L.PerRow && !layers[l+1].PerRow:
			cl.out = outReq
		default:
			cl.out = outF32
			ch.maxF = max(ch.maxF, w.N)
		}
		var next *I8Dequant
		if cl.out == outReq {
			next = &layers[l+1].I8Dequant
		}
		cl.fold(L, next)
	}
	return ops
}

// fold sets the layer's epilogue constants: per panel u, v, b for a
// PerRow input; otherwise the static input's scales and offsets, with the
// next layer's static map folded in when next is not nil (as gemmU8Out).
func (cl *chainLayer) fold(L *I8Layer, next *I8Dequant) {
	w := L.W
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
		return
	}
	cl.sc, cl.off = L.scales(w)
	if next == nil {
		return
	}
	inv := 1 / next.AScale
	cl.lo, cl.hi = 0, 255
	if L.ReLU {
		cl.lo = float32(next.AZero)
	}
	for j := range cl.sc {
		cl.sc[j] *= inv
		cl.off[j] = cl.off[j]*inv + float32(next.AZero)
	}
}

// epilogues takes the active variant's epilogues, or the pure-Go ones.
func (ch *chain) epilogues() {
	v := ch.v
	ch.deq, ch.rowsDeq, ch.rq = v.dequant, v.dequantRows, v.requant
	if ch.deq == nil {
		ch.deq = dequantGo
	}
	if ch.rowsDeq == nil {
		ch.rowsDeq = dequantRowsGo
	}
	if ch.rq == nil {
		ch.rq = requantGo
	}
	ch.direct = v.direct != nil && !i8Packed
}

// scratch returns a participant's buffers, grown to the call's sizes.
func (ch *chain) scratch() *chainScratch {
	mr, maxQ := ch.mr, ch.maxQ
	s := chainScratchPool.Get().(*chainScratch)
	for t := range 2 {
		if cap(s.q[t]) < mr*maxQ {
			s.q[t] = make([]uint8, mr*maxQ)
		}
		if cap(s.rs[t]) < mr {
			s.rs[t], s.rz[t] = make([]float32, mr), make([]float32, mr)
		}
	}
	if !ch.direct && cap(s.a) < mr*maxQ {
		s.a = make([]uint8, mr*maxQ)
	}
	if cap(s.f) < mr*ch.maxF {
		s.f = make([]float32, mr*ch.maxF)
	}
	if cap(s.tile) < ch.v.mr*i8NR {
		s.tile = make([]int32, ch.v.mr*i8NR)
	}
	return s
}

// block runs every layer on block b of the rows.
func (ch *chain) block(s *chainScratch, b int) {
	mr, m, x, ldx := ch.mr, ch.m, ch.x, ch.ldx
	i0 := b * mr
	rows := min(mr, m-i0)
	// Layer 0's input: the float32 rows quantized.
	L0 := &ch.ls[0]
	ld := 4 * L0.w.kg
	quantRowsU8(s.q[0][:rows*ld], ld, x[i0*ldx:], ldx, ch.k0, rows, L0.perRow, L0.inv, L0.zero, s.rs[0], s.rz[0])
	// Fetch the rows of this participant's next block while this one is multiplied.
	if nb := (b + ch.ahead) * mr; nb < m {
		prefetchF32(x[nb*ldx : min(len(x), min(m, nb+mr)*ldx)])
	}
	cur := 0
	for l := range ch.ls {
		if ch.ls[l].out == outFinal {
			ch.layer(s, l, i0, rows, cur, 0)
			break
		}
		nld := 4 * ch.ls[l+1].w.kg
		ch.layer(s, l, i0, rows, cur, nld)
		ch.nextInput(s, l, rows, 1-cur, nld)
		cur = 1 - cur
	}
}

// layer multiplies block rows from i0 (its quantized input in s.q[cur])
// by layer l's panels and sends the tiles through the layer's epilogue:
// into C, into the float32 scratch, or requantized into s.q[1-cur] with
// rows nld apart.
func (ch *chain) layer(s *chainScratch, l, i0, rows, cur, nld int) {
	L := &ch.ls[l]
	v, w, kg := ch.v, L.w, L.w.kg
	n := w.N
	ab := s.q[cur][:rows*4*kg]
	ap := ab
	if !ch.direct {
		ap = s.a[:rows*4*kg]
		packAI8(ap, ab, 4*kg, rows, w.K, kg)
	}
	rs, rz := s.rs[cur], s.rz[cur]
	panels := (n + i8NR - 1) / i8NR
	for p := 0; p < panels; p++ {
		j0 := p * i8NR
		cols := min(i8NR, n-j0)
		bw := w.data[p*kg*4*i8NR : (p+1)*kg*4*i8NR]
		if ch.direct {
			v.direct(rows, kg, ab, 4*kg, bw, s.tile)
		} else {
			v.micro(rows, kg, ap, bw, s.tile)
		}
		var dst []float32
		ldd := n
		switch L.out {
		case outFinal:
			dst, ldd = ch.c[i0*ch.ldc+j0:], ch.ldc
		case outF32:
			dst = s.f[j0:]
		case outReq:
			ch.rq(rows, cols, s.tile, tileOf(L.sc, j0), tileOf(L.off, j0), s.q[1-cur][j0:], nld, L.lo, L.hi)
			continue
		}
		if L.perRow {
			ch.rowsDeq(rows, cols, s.tile, (*[3 * i8NR]float32)(L.cv[p*3*i8NR:(p+1)*3*i8NR]), rs, rz, dst, ldd, L.relu)
		} else {
			ch.deq(rows, cols, s.tile, tileOf(L.sc, j0), tileOf(L.off, j0), dst, ldd, L.relu)
		}
	}
}

// nextInput finishes layer l+1's input in s.q[nxt], rows nld apart: the
// requantized rows padded with zeros past n, or the float32 scratch
// quantized row by row.
func (ch *chain) nextInput(s *chainScratch, l, rows, nxt, nld int) {
	n := ch.ls[l].w.N
	nq := s.q[nxt][:rows*nld]
	if ch.ls[l].out == outReq {
		for i := 0; i < rows; i++ {
			clear(nq[i*nld+n : (i+1)*nld])
		}
		return
	}
	N := &ch.ls[l+1]
	quantRowsU8(nq, nld, s.f, n, n, rows, N.perRow, N.inv, N.zero, s.rs[nxt], s.rz[nxt])
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
