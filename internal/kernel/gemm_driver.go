package kernel

// Blocked, packed GEMM driver shared by every micro-kernel variant.
//
// The loop nest is the one of GotoBLAS and BLIS (K. Goto and R. van de Geijn,
// "Anatomy of High-Performance Matrix Multiplication", ACM TOMS 34(3), 2008;
// F. Van Zee and R. van de Geijn, "BLIS: A Framework for Rapidly
// Instantiating BLAS Functionality", ACM TOMS 41(3), 2015):
//
//	for jc over n in steps of nc          (B block kc×nc, shared by workers)
//	  for pc over k in steps of kc
//	    pack op(B)[pc:pc+kc, jc:jc+nc] into nr-column micro-panels
//	    for ic over m in steps of mc      (A block mc×kc lives in L2)
//	      pack op(A)[ic:ic+mc, pc:pc+kc]
//	      for jr over the block in steps of nr   (B micro-panel in L1)
//	        for ir over the block in steps of mr
//	          micro-kernel: C[ir:ir+mr, jr:jr+nr] = alpha·A·B + beta·C
//
// Variants with irOuter (the wide AVX-512 tiles, whose 48-column B
// micro-panel would not fit L1 beside A) swap the two inner loops: the A
// micro-panel stays in L1 and the B micro-panels stream past it from L2.
//
// The assembly micro-kernels read A with a stride in either orientation, so
// "packing" A is a row copy (or nothing: A is used in place when its stride
// does not alias in L1, and by the wide tiles always, see gemmAliasRows), and
// they take alpha and beta themselves. B is packed
// into nr-wide panels (a transposed B with an AVX-512 register transpose),
// except for a small m (few row panels to reuse it), where B is read in place.
// The first kc block applies the caller's beta, later ones add (beta = 1).
// Blocks are balanced (k = 784 with kc = 256 runs as 4×196).
//
// Work big enough to pay for it (gemmParallelMinFlops) is shared with the
// helpers of package parallel (see gemmJob): either chunks of C that share
// one packed, double-buffered B block, or, when m is small, column chunks
// that need no sharing. Packing buffers live in the variant, so steady-state calls
// allocate nothing.

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/fathom-ml/fathom/internal/parallel"
)

// gemmFloat is the element type of the GEMM kernels.
type gemmFloat interface{ ~float32 | ~float64 }

// microKernel computes the rows×cols tile of C at c (row stride ldc):
// C = alpha·A·B when beta == 0 (C not read), else C = alpha·A·B + beta·C,
// where B(p, j) = b[p*ldb + j] and A(i, p) = a[i*lda + p] when rowA, else
// a[p*lda + i]. rows ≤ mr and cols ≤ nr; a kernel that is not masked is only
// called with cols == nr, and B always has nr readable columns.
type microKernel[T gemmFloat] func(rowA bool, rows, cols, k int, a []T, lda int, b []T, ldb int, c []T, ldc int, alpha, beta T)

// gemmVariant is one micro-kernel family with its blocking parameters.
type gemmVariant[T gemmFloat] struct {
	name       string
	mr, nr     int // register tile
	kc, mc, nc int // cache blocks; mc is a multiple of mr, nc of nr
	masked     bool
	strided    bool // the kernel is fast on A in place and on unpacked B
	irOuter    bool // loop over row panels outside column panels (A micro-panel in L1)
	// wide, when set, is a sibling variant with a larger tile that
	// Sgemm/Dgemm use for products of at least gemmWideMin in m and n.
	wide  *gemmVariant[T]
	micro microKernel[T]
	// trans, when set, transposes a block of transN rows of length k
	// (k a multiple of transN): dst[p*ldd+j] = src[j*lds+p]. packB uses it
	// for a transposed B.
	trans  func(k int, src []T, lds int, dst []T, ldd int)
	transN int

	// Packing buffers live as long as the variant, so steady-state calls
	// allocate nothing: one for serial calls (serialMu), one per part of
	// parallel calls (gemmParallelMu), and a sync.Pool for serial calls made
	// while another goroutine holds serialMu.
	serialMu  sync.Mutex
	serialBuf gemmBuf[T]
	partBufs  []*gemmBuf[T]
	bufs      sync.Pool  // *gemmBuf[T]
	job       gemmJob[T] // used only while holding gemmParallelMu
	sharedB   [2][]T     // double-buffered B block of parallel jobs (gemmParallelMu)
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
	s := make([]T, n+64/size)
	off := 0
	for uintptr(unsafe.Pointer(&s[off]))%64 != 0 {
		off++
	}
	return s[off : off+n : off+n]
}

// grow returns buf if it holds n elements, else a new aligned slice.
func grow[T gemmFloat](buf []T, n int) []T {
	if cap(buf) >= n {
		return buf[:n]
	}
	return alignedSlice[T](n)
}

// partBuf returns the buffers of worker part (plan made them).
func (v *gemmVariant[T]) partBuf(part int) *gemmBuf[T] {
	bf := v.partBufs[part]
	bf.tile = grow(bf.tile, v.mr*v.nr)
	return bf
}

// serial runs the whole GEMM on the calling goroutine.
func (v *gemmVariant[T]) serial(g *gemmArgs[T]) {
	var bf *gemmBuf[T]
	locked := v.serialMu.TryLock()
	if locked {
		bf = &v.serialBuf
	} else if bf, _ = v.bufs.Get().(*gemmBuf[T]); bf == nil {
		bf = new(gemmBuf[T])
	}
	bf.tile = grow(bf.tile, v.mr*v.nr)
	gemmStrip(v, bf, g, 0, g.m, 0, g.n)
	if locked {
		v.serialMu.Unlock()
	} else {
		v.bufs.Put(bf)
	}
}

// gemmArgs are the arguments of one GEMM call and the per-call choices.
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

	kc      int  // k block: at most v.kc, balanced so the last one is not tiny
	directA bool // use A in place (no copy)
	directB bool // use B in place (full-width panels)
}

// gemmParallelMinFlops is the size (2·m·n·k) below which a GEMM runs on the
// calling goroutine only.
var gemmParallelMinFlops = 1_000_000

// gemmDirectBRows is the largest m for which B is read in place (when its
// stride allows) instead of packed.
var gemmDirectBRows = 64

// gemmWideMin is the smallest m and n for which Sgemm and Dgemm use a
// variant's wide sibling. Below it the 14-row tile wastes less on the edges
// (n = 256 is 8 panels of 32 but 5.3 of 48) and the two tiles are level at
// n = 512-1024; at n = 2048 the wide tile is about 5% faster.
var gemmWideMin = 768

// pick returns the variant to run an m×n×k product with.
func (v *gemmVariant[T]) pick(m, n, k int) *gemmVariant[T] {
	if v.wide != nil && m >= gemmWideMin && n >= gemmWideMin && k >= v.wide.kc {
		return v.wide
	}
	return v
}

// transAmc multiplies a variant's mc for a transposed A that is packed:
// each k step of the block is then one longer contiguous run (measured
// about 5% faster with a 40 KB stride, 784×10000 by 256).
const transAmc = 2

// transAPackStride is the stride in bytes above which a transposed A is
// packed rather than read in place: each k step of a panel in place would
// be a memory page of its own (measured about 10% slower at 40 KB).
const transAPackStride = 4096

// gemmDirectA enables using A in place; tests and benchmarks flip it.
var gemmDirectA = true

func gemm[T gemmFloat](v *gemmVariant[T], transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	checkGemm(transA, transB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	g := gemmArgs[T]{transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha,
		a: a, lda: lda, b: b, ldb: ldb, beta: beta, c: c, ldc: ldc}
	g.kc = balancedBlock(v.kc, k, 1)
	if v.strided {
		var zero T
		size := int(unsafe.Sizeof(zero))
		g.directA = gemmDirectA && (friendlyStride(lda*size) || v.irOuter && v.mr <= gemmAliasRows) && !(transA && lda*size > transAPackStride)
		// A packed B panel pays off only when many row panels reuse it.
		g.directB = !transB && (m <= v.mr || m <= gemmDirectBRows && friendlyStride(ldb*size))
	}
	parts := runtime.GOMAXPROCS(0)
	if 2*float64(m)*float64(n)*float64(k) < float64(gemmParallelMinFlops) {
		parts = 1
	}
	if parts > 1 && gemmParallelMu.TryLock() {
		j := &v.job
		if parts := j.plan(v, &g, parts); parts > 1 {
			j.pj.Spin, j.pj.WaitSpin = gemmSpin, gemmSpinWait
			j.pj.Run(parts, j)
			j.args = gemmArgs[T]{} // drop references to the caller's slices
			gemmParallelMu.Unlock()
			return
		}
		gemmParallelMu.Unlock()
	}
	v.serial(&g)
}

// gemmParallelMu is held by the one GEMM that runs in parallel: another
// GEMM that finds it taken (a concurrent or nested call) runs on its own
// goroutine instead, so parallel GEMMs neither oversubscribe the cores nor
// share a variant's job and B buffers.
var gemmParallelMu sync.Mutex

// gemmSpin is how long the pool's helpers stay awake after a parallel
// GEMM: the GEMMs of a training step come in chains. The caller polls for
// its helpers' last chunks for gemmSpinWait before it blocks.
const gemmSpin = 300 * time.Microsecond

// gemmMaxParts bounds the parts of one parallel GEMM.
const gemmMaxParts = 1<<16 - 1

// gemmAliasRows is the most rows of an A micro-panel that may be read in
// place at a stride that maps them all to one L1 set: with A held in L1
// across a row of B panels (irOuter), each k-line of the panel takes one way
// per row of the 12-way L1, and 9 rows leave room for the B and C lines
// passing through. Reading A in place there saves the copy (single core
// about 7% faster at n = 1024 and 2048).
const gemmAliasRows = 9

// friendlyStride reports whether rows this many bytes apart can be streamed
// together without piling onto one L1 set (a 4 KiB multiple maps every row
// to the same set of a 48 KiB 12-way cache).
func friendlyStride(bytes int) bool {
	r := bytes % 4096
	return r != 0 && r != 2048
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

// gemmStrip computes rows [m0,m1) and columns [n0,n1) of C on the calling
// goroutine with its own buffers.
func gemmStrip[T gemmFloat](v *gemmVariant[T], bf *gemmBuf[T], g *gemmArgs[T], m0, m1, n0, n1 int) {
	for jc := n0; jc < n1; jc += v.nc {
		ncur := min(v.nc, n1-jc)
		for pc := 0; pc < g.k; pc += g.kc {
			kcur := min(g.kc, g.k-pc)
			bf.b = grow(bf.b, kcur*roundUp(ncur, v.nr))
			packBPanels(v, g, bf.b, pc, kcur, jc, ncur, 0, (ncur+v.nr-1)/v.nr)
			macroBlock(v, bf, g, bf.b, pc, kcur, jc, ncur, m0, m1)
		}
	}
}

// balancedBlock splits n into the fewest blocks of at most max (a multiple
// of unit) and returns a block size, a multiple of unit, that makes them
// about equal, so no block is a sliver (k = 784 with kc = 256 becomes 4×196).
func balancedBlock(max, n, unit int) int {
	if n <= max {
		return max
	}
	blocks := (n + max - 1) / max
	return roundUp((n+blocks-1)/blocks, unit)
}

func roundUp(x, to int) int { return (x + to - 1) / to * to }

// packBPanels packs micro-panels [p0,p1) of op(B)[pc:pc+kcur, jc:jc+ncur]
// into dst (panel q at dst[q*nr*kcur:]). With directB only the last, partial
// panel is packed: full panels are read in place.
func packBPanels[T gemmFloat](v *gemmVariant[T], g *gemmArgs[T], dst []T, pc, kcur, jc, ncur, p0, p1 int) {
	nr := v.nr
	if !g.transB {
		// Row by row across all the panels: B is read in long contiguous
		// runs (panel by panel, each k step would be a short read at a
		// large stride, which the hardware prefetchers do not follow).
		for p := 0; p < kcur; p++ {
			src := g.b[(pc+p)*g.ldb+jc:]
			for q := p0; q < p1; q++ {
				jr := q * nr
				cols := min(nr, ncur-jr)
				if g.directB && cols == nr {
					continue
				}
				d := dst[jr*kcur+p*nr : jr*kcur+p*nr+nr]
				copy(d, src[jr:jr+cols])
				if cols < nr {
					clear(d[cols:])
				}
			}
		}
		return
	}
	for q := p0; q < p1; q++ {
		jr := q * nr
		cols := min(nr, ncur-jr)
		if g.directB && cols == nr {
			continue
		}
		packB(v, dst[jr*kcur:(jr+nr)*kcur], g.b, g.ldb, g.transB, pc, kcur, jc+jr, cols)
	}
}

// macroBlock runs the ic, jr and ir loops over rows [m0,m1) against the
// packed B block bp of op(B)[pc:pc+kcur, jc:jc+ncur].
func macroBlock[T gemmFloat](v *gemmVariant[T], bf *gemmBuf[T], g *gemmArgs[T], bp []T, pc, kcur, jc, ncur, m0, m1 int) {
	macroTile(v, bf, g, bp, pc, kcur, jc, ncur, m0, m1, 0, ncur)
}

// macroTile is macroBlock restricted to the block's columns [j0, j1), where
// j0 is a multiple of nr.
func macroTile[T gemmFloat](v *gemmVariant[T], bf *gemmBuf[T], g *gemmArgs[T], bp []T, pc, kcur, jc, ncur, m0, m1, j0, j1 int) {
	mr, nr := v.mr, v.nr
	beta := g.beta
	if pc > 0 {
		beta = 1
	}
	mcMax := v.mc
	if g.transA && !g.directA {
		mcMax *= transAmc
	}
	mc := balancedBlock(mcMax, m1-m0, mr)
	for ic := m0; ic < m1; ic += mc {
		mcur := min(mc, m1-ic)
		// A for this block: in place, or copied/packed into bf.a.
		var ablk []T
		var lda int
		rowA := !g.transA
		switch {
		case g.directA && rowA:
			ablk, lda = g.a[ic*g.lda+pc:], g.lda
		case g.directA:
			ablk, lda = g.a[pc*g.lda+ic:], g.lda
		default:
			bf.a = grow(bf.a, mcur*kcur)
			ablk = bf.a
			if v.strided && rowA {
				copyRows(ablk, g.a, g.lda, ic, mcur, pc, kcur)
				lda = kcur
			} else {
				packA(ablk, g.a, g.lda, g.transA, ic, mcur, pc, kcur, mr)
				rowA = false
			}
		}
		// tile runs the micro-kernel on the rows ir.. and columns jr.. of
		// this block.
		tile := func(ir, jr int) {
			rows, cols := min(mr, mcur-ir), min(nr, ncur-jr)
			var ap []T // the panel's first element
			alda := lda
			switch {
			case g.directA && rowA:
				ap = ablk[ir*g.lda:]
			case g.directA:
				ap = ablk[ir:]
			case rowA:
				ap = ablk[ir*kcur:]
			default: // packed panels of `rows` values per k step
				ap, alda = ablk[ir*kcur:], rows
			}
			var bpan []T
			ldb := nr
			if g.directB && cols == nr {
				bpan, ldb = g.b[pc*g.ldb+jc+jr:], g.ldb
			} else {
				bpan = bp[jr*kcur : (jr+nr)*kcur]
			}
			ci := (ic+ir)*g.ldc + jc + jr
			if cols == nr || v.masked {
				v.micro(rowA, rows, cols, kcur, ap, alda, bpan, ldb, g.c[ci:], g.ldc, g.alpha, beta)
				return
			}
			// Partial column tile for a kernel that always writes nr
			// columns: compute into scratch, then merge.
			v.micro(rowA, rows, nr, kcur, ap, alda, bpan, ldb, bf.tile, nr, g.alpha, 0)
			mergeTile(rows, cols, bf.tile, nr, g.c[ci:], g.ldc, beta)
		}
		if v.irOuter {
			// The A micro-panel stays in L1 while the B micro-panels
			// stream past it from L2.
			for ir := 0; ir < mcur; ir += mr {
				for jr := j0; jr < j1; jr += nr {
					tile(ir, jr)
				}
			}
			continue
		}
		// A B micro-panel stays in L1 while the A panels stream past it.
		for jr := j0; jr < j1; jr += nr {
			for ir := 0; ir < mcur; ir += mr {
				tile(ir, jr)
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

// copyRows copies op(A)[ic:ic+mcur, pc:pc+kcur] of a non-transposed A into
// dst with row stride kcur.
func copyRows[T gemmFloat](dst, a []T, lda, ic, mcur, pc, kcur int) {
	for i := 0; i < mcur; i++ {
		copy(dst[i*kcur:(i+1)*kcur], a[(ic+i)*lda+pc:])
	}
}

// gemmPackGroup is how many B micro-panels a worker packs per claim.
const gemmPackGroup = 8

// packA packs op(A)[ic:ic+mcur, pc:pc+kcur] into micro-panels of mr rows; the
// panel starting at row ir holds rows = min(mr, mcur-ir) values per k step,
// at dst[ir*kcur + p*rows + i].
func packA[T gemmFloat](dst, a []T, lda int, trans bool, ic, mcur, pc, kcur, mr int) {
	if trans {
		// op(A)(i, p) = a[p*lda + i]: each k step is one contiguous run
		// of the block's rows, read once and dealt out to the panels (a
		// panel at a time would come back to every run once per panel,
		// and with a large lda each run is a memory page of its own).
		for p := 0; p < kcur; p++ {
			src := a[(pc+p)*lda+ic:]
			src = src[:mcur]
			for ir := 0; ir < mcur; ir += mr {
				rows := min(mr, mcur-ir)
				copy(dst[ir*kcur+p*rows:ir*kcur+p*rows+rows], src[ir:ir+rows])
			}
		}
		return
	}
	for ir := 0; ir < mcur; ir += mr {
		rows := min(mr, mcur-ir)
		panel := dst[ir*kcur : (ir+rows)*kcur]
		// op(A)(i, p) = a[i*lda + p]: read rows contiguously, write strided.
		for i := 0; i < rows; i++ {
			src := a[(ic+ir+i)*lda+pc:]
			src = src[:kcur]
			for p, x := range src {
				panel[p*rows+i] = x
			}
		}
	}
}

// packB packs op(B)[pc:pc+kcur, j0:j0+cols] into one micro-panel dst of nr
// columns, zero-padded: element (p, j) at dst[p*nr + j].
func packB[T gemmFloat](v *gemmVariant[T], dst, b []T, ldb int, trans bool, pc, kcur, j0, cols int) {
	nr := v.nr
	if !trans {
		// op(B)(p, j) = b[p*ldb + j]: each k step is a contiguous run.
		for p := 0; p < kcur; p++ {
			d := dst[p*nr : p*nr+nr]
			copy(d, b[(pc+p)*ldb+j0:][:cols])
			if cols < nr {
				clear(d[cols:])
			}
		}
		return
	}
	// op(B)(p, j) = b[j*ldb + p]: transN columns of op(B) at a time with the
	// assembly transpose when there is one, then four at a time, each read
	// contiguously.
	j := 0
	if tn := v.transN; v.trans != nil && kcur >= tn {
		kk := kcur / tn * tn
		for ; j+tn <= cols; j += tn {
			v.trans(kk, b[(j0+j)*ldb+pc:], ldb, dst[j:], nr)
			for jj := j; jj < j+tn; jj++ {
				src := b[(j0+jj)*ldb+pc+kk:][:kcur-kk]
				for p, x := range src {
					dst[(kk+p)*nr+jj] = x
				}
			}
		}
	}
	for ; j+4 <= cols; j += 4 {
		s0 := b[(j0+j)*ldb+pc:][:kcur]
		s1 := b[(j0+j+1)*ldb+pc:][:kcur]
		s2 := b[(j0+j+2)*ldb+pc:][:kcur]
		s3 := b[(j0+j+3)*ldb+pc:][:kcur]
		for p := range s0 {
			d := dst[p*nr+j : p*nr+j+4]
			d[0], d[1], d[2], d[3] = s0[p], s1[p], s2[p], s3[p]
		}
	}
	for ; j < cols; j++ {
		src := b[(j0+j)*ldb+pc:][:kcur]
		for p, x := range src {
			dst[p*nr+j] = x
		}
	}
	if cols < nr {
		for p := 0; p < kcur; p++ {
			clear(dst[p*nr+cols : p*nr+nr])
		}
	}
}

// gemmJob is a GEMM shared by the caller and the helpers of package
// parallel (each a "worker" below, with its own part). Work is handed out
// dynamically from atomic counters, so a worker slowed down by another
// process on the machine just takes fewer pieces.
//
// Row mode (the usual one): for each (jc, pc) block, the workers claim B
// micro-panels to pack into a shared buffer, wait until all are packed, then
// claim chunks of C to multiply; a chunk waits for the same chunk of block
// t-1 (it adds into what that one wrote), so a slow worker holds up only the
// chunk it is on. B is double-buffered, so packing block t overlaps the end
// of block t-1: before packing, a worker only waits until every row chunk
// of block t-2 (the previous user of the buffer) is done. The counters run on across blocks, each
// block owning a range of their values.
//
// Column mode (small m): the workers claim chunks of columns of C and run the
// whole serial algorithm on each with their own buffers.
type gemmJob[T gemmFloat] struct {
	pj        parallel.Job
	v         *gemmVariant[T]
	args      gemmArgs[T]
	rows      bool // row mode (else column mode)
	chunk     int  // rows or columns per chunk (a multiple of mr or nr)
	colChunk  int  // row mode: columns per chunk within a block (a multiple of nr)
	panelNext atomic.Uint64
	panelDone atomic.Uint64
	chunkNext atomic.Uint64
	bufDone   [2]atomic.Uint64 // row mode: chunks done of the blocks using each B buffer
	tileIter  []atomic.Uint32  // row mode: per chunk of a block, blocks done
	sig       gemmSignal
}

// plan sets up the job for up to maxParts workers and returns how many to
// use. Row mode shares the packing of B; column mode has each worker use all
// of A (in place, or copied per chunk), so it suits a small m. The cost model
// counts a worker's share of the padded tile work plus its packing, taking
// one packed element as 8 multiply-adds.
func (j *gemmJob[T]) plan(v *gemmVariant[T], g *gemmArgs[T], maxParts int) int {
	j.v, j.args = v, *g
	m, n, k := g.m, g.n, g.k
	pm := (m + v.mr - 1) / v.mr // row panels
	pn := (n + v.nr - 1) / v.nr // column panels
	parts := min(maxParts, gemmMaxParts)
	if pm < parts && pn < parts {
		parts = max(pm, pn)
	}
	if parts < 2 {
		return 1
	}
	p := float64(parts)
	work := float64(pm*v.mr) * float64(pn*v.nr) * float64(k) / p
	costRows := work + 8*float64(k)*(float64(m)+float64(n))/p
	copyA := float64(m)
	if g.directA {
		copyA = 0
	}
	costCols := work + 8*float64(k)*(float64(n)/p+copyA)
	if pm < parts {
		costRows = math.Inf(1)
	}
	if pn < parts {
		costCols = math.Inf(1)
	}
	for len(v.partBufs) < parts {
		v.partBufs = append(v.partBufs, new(gemmBuf[T]))
	}
	// A wide-tile variant keeps each A micro-panel in L1 across a whole
	// row of B panels; column chunks would cut those rows short and read A
	// once per chunk.
	j.rows = costRows <= costCols || v.irOuter && pm >= parts
	if j.rows {
		// Chunks are full-width row ranges, about 8 per worker (each copies
		// its rows of A once per block, and the B block stays in L2 while it
		// is walked); only when that leaves fewer than 4 per worker are row
		// ranges cut into column pieces.
		j.chunk = min(balancedBlock(v.mc, m, v.mr), max(v.mr, roundUp((m+8*parts-1)/(8*parts), v.mr)))
		rowChunks := (m + j.chunk - 1) / j.chunk
		ncur := min(v.nc, n)
		pieces := 1
		if rowChunks < 4*parts {
			pieces = min((8*parts+rowChunks-1)/rowChunks, (ncur+v.nr-1)/v.nr)
		}
		j.colChunk = roundUp((ncur+pieces-1)/pieces, v.nr)
		j.args.directB = false // B is shared and packed
		if tiles := rowChunks * pieces; len(j.tileIter) < tiles {
			j.tileIter = make([]atomic.Uint32, tiles)
		}
		for i := range j.tileIter {
			j.tileIter[i].Store(0)
		}
		need := g.kc * roundUp(ncur, v.nr)
		v.sharedB[0] = grow(v.sharedB[0], need)
		v.sharedB[1] = grow(v.sharedB[1], need)
	} else {
		// About four column chunks per worker for balance; one when each
		// chunk would copy all of A.
		perWorker := 4
		if !g.directA {
			perWorker = 1 // each chunk copies all of A
		}
		j.chunk = roundUp((n+parts*perWorker-1)/(parts*perWorker), v.nr)
	}
	j.panelNext.Store(0)
	j.panelDone.Store(0)
	j.chunkNext.Store(0)
	j.bufDone[0].Store(0)
	j.bufDone[1].Store(0)
	return parts
}

// claim takes the next value of c below end, if any.
func claim(c *atomic.Uint64, end uint64) (uint64, bool) {
	for {
		x := c.Load()
		if x >= end {
			return 0, false
		}
		if c.CompareAndSwap(x, x+1) {
			return x, true
		}
	}
}

// RunPart runs one participant of the job: part 0 is the caller, the others
// are helpers of package parallel, which may join late or not at all (all
// work is claimed, and waits are only for claimed work).
func (j *gemmJob[T]) RunPart(part int) {
	v, g := j.v, &j.args
	bf := v.partBuf(part)
	if !j.rows {
		chunks := uint64((g.n + j.chunk - 1) / j.chunk)
		for {
			q, ok := claim(&j.chunkNext, chunks)
			if !ok {
				return
			}
			lo := int(q) * j.chunk
			gemmStrip(v, bf, g, 0, g.m, lo, min(g.n, lo+j.chunk))
		}
	}
	rowChunks := (g.m + j.chunk - 1) / j.chunk
	var panelEnd, chunkEnd uint64
	var bufChunks [2]uint64 // chunks of the blocks before t that used each buffer
	t := 0
	for jc := 0; jc < g.n; jc += v.nc {
		ncur := min(v.nc, g.n-jc)
		panels := uint64((ncur + v.nr - 1) / v.nr)
		groups := (panels + gemmPackGroup - 1) / gemmPackGroup
		pieces := (ncur + j.colChunk - 1) / j.colChunk
		chunks := uint64(rowChunks * pieces)
		for pc := 0; pc < g.k; pc += g.kc {
			kcur := min(g.kc, g.k-pc)
			panelStart, chunkStart := panelEnd, chunkEnd
			panelEnd += groups
			chunkEnd += chunks
			bp := v.sharedB[t%2][:kcur*int(panels)*v.nr]
			// The buffer's previous blocks (t-2, t-4, ...) must be done with it.
			buf := &j.bufDone[t%2]
			end := bufChunks[t%2]
			j.sig.wait(func() bool { return buf.Load() >= end })
			bufChunks[t%2] += chunks
			for {
				x, ok := claim(&j.panelNext, panelEnd)
				if !ok {
					break
				}
				// Claims are groups of gemmPackGroup panels, packed row by
				// row (see packBPanels).
				q := int(x-panelStart) * gemmPackGroup
				q1 := min(q+gemmPackGroup, int(panels))
				packBPanels(v, g, bp, pc, kcur, jc, ncur, q, q1)
				j.panelDone.Add(1)
				j.sig.notify()
			}
			pend := panelEnd
			j.sig.wait(func() bool { return j.panelDone.Load() >= pend })
			for {
				x, ok := claim(&j.chunkNext, chunkEnd)
				if !ok {
					break
				}
				tile := &j.tileIter[x-chunkStart]
				if t > 0 {
					// This chunk adds into the C that the same chunk of block
					// t-1 wrote (same jc) or follows it (next jc, whose blocks
					// have no more chunks): wait for that one only.
					j.sig.wait(func() bool { return tile.Load() >= uint32(t) })
				}
				r, c := int(x-chunkStart)/pieces, int(x-chunkStart)%pieces
				lo, jlo := r*j.chunk, c*j.colChunk
				macroTile(v, bf, g, bp, pc, kcur, jc, ncur, lo, min(g.m, lo+j.chunk), jlo, min(ncur, jlo+j.colChunk))
				tile.Store(uint32(t + 1))
				buf.Add(1)
				j.sig.notify()
			}
			t++
		}
	}
}

// gemmSignal lets workers wait for a condition on the job's counters: spin
// for a few microseconds (the usual wait when both cores are ours), then
// block, so a peer descheduled on a busy machine costs no CPU.
type gemmSignal struct {
	mu      sync.Mutex
	cond    *sync.Cond
	waiters atomic.Int32
}

// gemmSpinWait is how long a waiting worker spins before it blocks.
const gemmSpinWait = 50 * time.Microsecond

func (s *gemmSignal) wait(done func() bool) {
	if spinUntil(done, gemmSpinWait) {
		return
	}
	s.mu.Lock()
	if s.cond == nil {
		s.cond = sync.NewCond(&s.mu)
	}
	s.waiters.Add(1)
	for !done() {
		s.cond.Wait()
	}
	s.waiters.Add(-1)
	s.mu.Unlock()
}

// notify wakes blocked waiters after a counter changed. A waiter registers
// before its last check of the condition, so either it sees the change or
// notify sees the waiter.
func (s *gemmSignal) notify() {
	if s.waiters.Load() > 0 {
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	}
}

// spinUntil polls done for up to d, yielding the processor now and then,
// and reports whether done became true.
func spinUntil(done func() bool, d time.Duration) bool {
	var start time.Time
	for i := 1; ; i++ {
		if done() {
			return true
		}
		if i%64 == 0 {
			if start.IsZero() {
				start = time.Now()
			} else if time.Since(start) > d {
				return false
			}
			runtime.Gosched()
		}
	}
}
