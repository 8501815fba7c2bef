package kernel

// Blocked, packed GEMM driver shared by every micro-kernel variant.
//
// The loop nest is the one of GotoBLAS and BLIS (K. Goto and R. van de Geijn,
// "Anatomy of High-Performance Matrix Multiplication", ACM TOMS 34(3), 2008;
// F. Van Zee and R. van de Geijn, "BLIS: A Framework for Rapidly
// Instantiating BLAS Functionality", ACM TOMS 41(3), 2015):
//
//	for jc over n in steps of nc          (B block kc×nc lives in L3)
//	  for pc over k in steps of kc
//	    pack op(B)[pc:pc+kc, jc:jc+nc] into nr-column micro-panels
//	    for ic over m in steps of mc      (A block mc×kc lives in L2)
//	      pack alpha·op(A)[ic:ic+mc, pc:pc+kc] into mr-row micro-panels
//	      for jr over the block in steps of nr   (B micro-panel in L1)
//	        for ir over the block in steps of mr
//	          micro-kernel: C[ir:ir+mr, jr:jr+nr] (+)= Apanel · Bpanel
//
// Packing absorbs the transposes and alpha, so the micro-kernels only ever see
// one layout. The first kc block applies the caller's beta; later ones add
// (beta = 1). Work big enough to pay for it is split over GOMAXPROCS cores by
// cutting C into row or column strips (whichever wastes less), each strip run
// by one persistent worker with its own packing buffers.

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// gemmFloat is the element type of the GEMM kernels.
type gemmFloat interface{ ~float32 | ~float64 }

// microKernel computes the rows×cols tile of C at c (row stride ldc) from a
// packed A micro-panel a (rows values per k step) and a packed B micro-panel b
// (nr values per k step): C = A·B when beta == 0 (C not read), otherwise
// C = A·B + beta·C. rows ≤ mr and cols ≤ nr; kernels that are not masked are
// only called with cols == nr.
type microKernel[T gemmFloat] func(rows, cols, k int, a, b, c []T, ldc int, beta T)

// gemmVariant is one micro-kernel family with its blocking parameters.
type gemmVariant[T gemmFloat] struct {
	name       string
	mr, nr     int // register tile
	kc, mc, nc int // cache blocks; mc is a multiple of mr, nc of nr
	masked     bool
	micro      microKernel[T]

	bufs sync.Pool  // *gemmBuf[T]
	job  gemmJob[T] // used only while holding gemmPool.mu
}

// gemmBuf holds one worker's packing buffers.
type gemmBuf[T gemmFloat] struct {
	a, b, tile []T
}

// alignedSlice returns a slice of n elements whose first element is 64-byte
// aligned, so packed panels start on cache lines.
func alignedSlice[T gemmFloat](n int) []T {
	var zero T
	size := int(unsafe.Sizeof(zero))
	extra := 64 / size
	s := make([]T, n+extra)
	off := 0
	for uintptr(unsafe.Pointer(&s[off]))%64 != 0 {
		off++
	}
	return s[off : off+n : off+n]
}

func (v *gemmVariant[T]) getBuf() *gemmBuf[T] {
	bf, _ := v.bufs.Get().(*gemmBuf[T])
	if bf == nil {
		bf = new(gemmBuf[T])
	}
	if na := v.mc * v.kc; len(bf.a) < na {
		bf.a = alignedSlice[T](na)
	}
	if nb := v.nc * v.kc; len(bf.b) < nb {
		bf.b = alignedSlice[T](nb)
	}
	if nt := v.mr * v.nr; len(bf.tile) < nt {
		bf.tile = alignedSlice[T](nt)
	}
	return bf
}

// gemmArgs are the arguments of one GEMM call.
type gemmArgs[T gemmFloat] struct {
	transA, transB bool
	m, n, k        int
	alpha          T
	a              []T
	lda            int
	b              []T
	ldb            int
	beta           T
	c              []T
	ldc            int
}

// gemmParallelMinFlops is the size (2·m·n·k) below which a GEMM runs on the
// calling goroutine only: waking a worker costs a few microseconds.
var gemmParallelMinFlops = 3_000_000

func gemm[T gemmFloat](v *gemmVariant[T], transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	checkGemm(transA, transB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	args := gemmArgs[T]{transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc}
	parts := runtime.GOMAXPROCS(0)
	if 2*float64(m)*float64(n)*float64(k) < float64(gemmParallelMinFlops) {
		parts = 1
	}
	if parts > 1 && gemmPool.mu.TryLock() {
		j := &v.job
		if j.plan(v, &args, parts) > 1 {
			gemmPool.run(j.parts, j)
			j.args = gemmArgs[T]{} // drop references to the caller's slices
			gemmPool.mu.Unlock()
			return
		}
		gemmPool.mu.Unlock()
	}
	bf := v.getBuf()
	gemmBlock(v, bf, &args, 0, m, 0, n)
	v.bufs.Put(bf)
}

// checkGemm panics with a descriptive message when the slices cannot hold the
// matrices their dimensions and strides describe. The assembly kernels do not
// bounds-check, so this is what keeps them memory-safe.
func checkGemm(transA, transB bool, m, n, k, la, lda, lb, ldb, lc, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("kernel: gemm: negative dimension m=%d n=%d k=%d", m, n, k))
	}
	need := func(name string, rows, cols, ld, have int) {
		if rows == 0 || cols == 0 {
			return
		}
		if ld < cols {
			panic(fmt.Sprintf("kernel: gemm: %s is %d×%d but its leading dimension is %d", name, rows, cols, ld))
		}
		if want := (rows-1)*ld + cols; have < want {
			panic(fmt.Sprintf("kernel: gemm: %s is %d×%d with leading dimension %d and needs %d elements, has %d", name, rows, cols, ld, want, have))
		}
	}
	if transA {
		need("A", k, m, lda, la)
	} else {
		need("A", m, k, lda, la)
	}
	if transB {
		need("B", n, k, ldb, lb)
	} else {
		need("B", k, n, ldb, lb)
	}
	need("C", m, n, ldc, lc)
}

// scaleC sets C = beta·C (C = 0 when beta == 0, without reading C).
func scaleC[T gemmFloat](m, n int, beta T, c []T, ldc int) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// gemmBlock computes rows [m0,m1) and columns [n0,n1) of C on the calling
// goroutine.
func gemmBlock[T gemmFloat](v *gemmVariant[T], bf *gemmBuf[T], g *gemmArgs[T], m0, m1, n0, n1 int) {
	mr, nr := v.mr, v.nr
	for jc := n0; jc < n1; jc += v.nc {
		ncur := min(v.nc, n1-jc)
		for pc := 0; pc < g.k; pc += v.kc {
			kcur := min(v.kc, g.k-pc)
			packB(bf.b, g.b, g.ldb, g.transB, pc, kcur, jc, ncur, nr)
			beta := g.beta
			if pc > 0 {
				beta = 1
			}
			for ic := m0; ic < m1; ic += v.mc {
				mcur := min(v.mc, m1-ic)
				packA(bf.a, g.a, g.lda, g.transA, ic, mcur, pc, kcur, mr, g.alpha)
				for jr := 0; jr < ncur; jr += nr {
					cols := min(nr, ncur-jr)
					bp := bf.b[jr*kcur : (jr+nr)*kcur]
					for ir := 0; ir < mcur; ir += mr {
						rows := min(mr, mcur-ir)
						ap := bf.a[ir*kcur : (ir+rows)*kcur]
						ci := (ic+ir)*g.ldc + jc + jr
						if cols == nr || v.masked {
							v.micro(rows, cols, kcur, ap, bp, g.c[ci:], g.ldc, beta)
							continue
						}
						// Partial column tile for a kernel that always writes
						// nr columns: compute into scratch, then merge.
						v.micro(rows, nr, kcur, ap, bp, bf.tile, nr, 0)
						mergeTile(rows, cols, bf.tile, nr, g.c[ci:], g.ldc, beta)
					}
				}
			}
		}
	}
}

// mergeTile sets C = T + beta·C on a rows×cols tile (C not read when beta is 0).
func mergeTile[T gemmFloat](rows, cols int, t []T, ldt int, c []T, ldc int, beta T) {
	for i := 0; i < rows; i++ {
		src := t[i*ldt : i*ldt+cols]
		dst := c[i*ldc : i*ldc+cols]
		if beta == 0 {
			copy(dst, src)
			continue
		}
		for j, x := range src {
			dst[j] = x + beta*dst[j]
		}
	}
}

// packA packs alpha·op(A)[ic:ic+mcur, pc:pc+kcur] into micro-panels of mr
// rows; the panel starting at row ir holds rows = min(mr, mcur-ir) values per
// k step, at dst[ir*kcur + p*rows + i].
func packA[T gemmFloat](dst, a []T, lda int, trans bool, ic, mcur, pc, kcur, mr int, alpha T) {
	for ir := 0; ir < mcur; ir += mr {
		rows := min(mr, mcur-ir)
		panel := dst[ir*kcur : (ir+rows)*kcur]
		if trans {
			// op(A)(i, p) = a[p*lda + i]: each k step is a contiguous run.
			for p := 0; p < kcur; p++ {
				src := a[(pc+p)*lda+ic+ir:]
				src = src[:rows]
				d := panel[p*rows : p*rows+rows]
				if alpha == 1 {
					copy(d, src)
				} else {
					for i, x := range src {
						d[i] = alpha * x
					}
				}
			}
			continue
		}
		// op(A)(i, p) = a[i*lda + p]: read rows contiguously, write strided.
		for i := 0; i < rows; i++ {
			src := a[(ic+ir+i)*lda+pc:]
			src = src[:kcur]
			if alpha == 1 {
				for p, x := range src {
					panel[p*rows+i] = x
				}
			} else {
				for p, x := range src {
					panel[p*rows+i] = alpha * x
				}
			}
		}
	}
}

// packB packs op(B)[pc:pc+kcur, jc:jc+ncur] into micro-panels of nr columns,
// zero-padded to nr: the panel starting at column jr is dst[jr*kcur:], with
// element (p, j) at p*nr + j.
func packB[T gemmFloat](dst, b []T, ldb int, trans bool, pc, kcur, jc, ncur, nr int) {
	for jr := 0; jr < ncur; jr += nr {
		cols := min(nr, ncur-jr)
		panel := dst[jr*kcur : (jr+nr)*kcur]
		if !trans {
			// op(B)(p, j) = b[p*ldb + j]: each k step is a contiguous run.
			for p := 0; p < kcur; p++ {
				d := panel[p*nr : p*nr+nr]
				copy(d, b[(pc+p)*ldb+jc+jr:][:cols])
				if cols < nr {
					clear(d[cols:])
				}
			}
			continue
		}
		// op(B)(p, j) = b[j*ldb + p]: read columns of op(B) contiguously.
		for j := 0; j < cols; j++ {
			src := b[(jc+jr+j)*ldb+pc:]
			src = src[:kcur]
			for p, x := range src {
				panel[p*nr+j] = x
			}
		}
		if cols < nr {
			for p := 0; p < kcur; p++ {
				clear(panel[p*nr+cols : p*nr+nr])
			}
		}
	}
}

// gemmJob is a GEMM split into strips of C, one per worker.
type gemmJob[T gemmFloat] struct {
	v      *gemmVariant[T]
	args   gemmArgs[T]
	splitM bool  // strips are row ranges (else column ranges)
	bounds []int // parts+1 strip boundaries
	parts  int
}

// plan chooses the strips for up to maxParts workers and returns how many
// there are. Strips are whole micro-panels. Splitting rows makes every
// worker pack all of op(B); splitting columns makes it pack all of op(A).
// The cost model counts the slowest worker's padded tile work plus its
// packing, with packing one element taken as 16 multiply-adds.
func (j *gemmJob[T]) plan(v *gemmVariant[T], g *gemmArgs[T], maxParts int) int {
	j.v, j.args = v, *g
	m, n, k := g.m, g.n, g.k
	pm := (m + v.mr - 1) / v.mr // row panels
	pn := (n + v.nr - 1) / v.nr // column panels
	cost := func(panels, panelSize, other, parts int) float64 {
		per := (panels + parts - 1) / parts
		return float64(per*panelSize)*float64(other)*float64(k) + 16*float64(k)*float64(other+per*panelSize)
	}
	partsM := min(maxParts, pm)
	partsN := min(maxParts, pn)
	costM := cost(pm, v.mr, pn*v.nr, partsM)
	costN := cost(pn, v.nr, pm*v.mr, partsN)
	j.splitM = costM <= costN
	panels, size, total, parts := pn, v.nr, n, partsN
	if j.splitM {
		panels, size, total, parts = pm, v.mr, m, partsM
	}
	j.parts = parts
	if cap(j.bounds) < parts+1 {
		j.bounds = make([]int, parts+1)
	}
	j.bounds = j.bounds[:parts+1]
	for w := 0; w <= parts; w++ {
		j.bounds[w] = min(total, (panels*w/parts)*size)
	}
	return parts
}

func (j *gemmJob[T]) runPart(w int) {
	lo, hi := j.bounds[w], j.bounds[w+1]
	if lo >= hi {
		return
	}
	bf := j.v.getBuf()
	if j.splitM {
		gemmBlock(j.v, bf, &j.args, lo, hi, 0, j.args.n)
	} else {
		gemmBlock(j.v, bf, &j.args, 0, j.args.m, lo, hi)
	}
	j.v.bufs.Put(bf)
}

// gemmTask is a piece of work split into parts run concurrently.
type gemmTask interface{ runPart(part int) }

// gemmWorkerPool is a set of persistent worker goroutines, so a parallel GEMM
// costs a channel hand-off instead of goroutine creation and allocates
// nothing. Only the holder of mu may use it; a GEMM that finds it busy
// (another GEMM is running in parallel already) runs on its own goroutine.
type gemmWorkerPool struct {
	mu      sync.Mutex
	workers []chan gemmTask
	done    chan struct{}
}

var gemmPool = gemmWorkerPool{done: make(chan struct{})}

// run executes t.runPart(0..parts-1) concurrently, part 0 on the calling
// goroutine, and returns when all parts are done. The caller holds p.mu.
func (p *gemmWorkerPool) run(parts int, t gemmTask) {
	for len(p.workers) < parts-1 {
		ch := make(chan gemmTask)
		p.workers = append(p.workers, ch)
		go gemmWorker(ch, p.done, len(p.workers))
	}
	for w := 1; w < parts; w++ {
		p.workers[w-1] <- t
	}
	t.runPart(0)
	for w := 1; w < parts; w++ {
		<-p.done
	}
}

func gemmWorker(tasks <-chan gemmTask, done chan<- struct{}, part int) {
	for t := range tasks {
		t.runPart(part)
		done <- struct{}{}
	}
}
