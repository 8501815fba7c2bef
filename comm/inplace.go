package comm

import "fmt"

// In-place collectives for ZeRO-style data parallelism: a reduce-scatter
// that leaves each rank's chunk reduced inside the gradient buffer itself,
// and an all-gather that writes every rank's chunk straight into the
// caller's destination pieces (the parameter tensors a flat vector is cut
// into). Neither stages the data in a buffer of its own: the only copies
// are the ones into and out of the transport (on shared memory, the ring
// in /dev/shm), which a reduction reads in place.

// ReduceScatterInPlace reduces x element-wise over all ranks and leaves on
// rank r the result of chunk r, x[r·m:(r+1)·m] with m = len(x)/Size(); the
// other chunks of x hold partial reductions afterwards. len(x) must be a
// multiple of Size(). It is ReduceScatter's ring (the same chunks, the same
// order of additions, so the same bits) without ReduceScatter's copy of
// the input and of the result.
func ReduceScatterInPlace[T Number](g *Group, x []T, op ReduceOp) error {
	if err := checkRSInPlace(g, x, op); err != nil {
		return err
	}
	return g.do("reducescatter", -1, func(tag uint64) error { return reduceScatterInPlace(g, tag, x, op) })
}

// ReduceScatterInPlaceAsync is the asynchronous ReduceScatterInPlace: x
// must not be touched until Wait returns.
func ReduceScatterInPlaceAsync[T Number](g *Group, x []T, op ReduceOp) *Work {
	if err := checkRSInPlace(g, x, op); err != nil {
		return doneWork(err)
	}
	return g.submit("reducescatter", -1, func(tag uint64) error { return reduceScatterInPlace(g, tag, x, op) })
}

func checkRSInPlace[T Number](g *Group, x []T, op ReduceOp) error {
	if !validOp[T](op) {
		return fmt.Errorf("comm: ReduceScatterInPlace: invalid op %v", op)
	}
	if len(x)%g.size != 0 {
		return fmt.Errorf("comm: ReduceScatterInPlace: len(x)=%d is not a multiple of the world size %d", len(x), g.size)
	}
	return nil
}

func reduceScatterInPlace[T Number](g *Group, tag uint64, x []T, op ReduceOp) error {
	if g.size == 1 {
		return nil // avg over one rank is the identity
	}
	m := len(x) / g.size
	if err := ringReduceScatter(g, tag, x, op, func(c int) (int, int) { return c * m, (c + 1) * m }); err != nil {
		return err
	}
	if op == Avg {
		divide(x[g.rank*m:(g.rank+1)*m], g.size)
	}
	return nil
}

// AllGatherInto is AllGather with the output given as consecutive pieces:
// the Size()·len(in) elements of the result are out[0], then out[1], and
// so on (their lengths must add up to that), and rank r's in lands at
// offset r·len(in) of them, whatever pieces that spans. Every rank sends
// its in to every other rank directly (the same bytes per rank as the
// ring) and each received chunk is copied from the transport's buffer
// straight into its pieces; this rank's own in is copied into its place.
func AllGatherInto[T Number](g *Group, out [][]T, in []T) error {
	if err := checkAGInto(g, out, in); err != nil {
		return err
	}
	return g.do("allgather", -1, func(tag uint64) error { return allGatherInto(g, tag, out, in) })
}

// AllGatherIntoAsync is the asynchronous AllGatherInto: neither out nor in
// may be touched until Wait returns.
func AllGatherIntoAsync[T Number](g *Group, out [][]T, in []T) *Work {
	if err := checkAGInto(g, out, in); err != nil {
		return doneWork(err)
	}
	return g.submit("allgather", -1, func(tag uint64) error { return allGatherInto(g, tag, out, in) })
}

func checkAGInto[T Number](g *Group, out [][]T, in []T) error {
	n := 0
	for _, p := range out {
		n += len(p)
	}
	if n != g.size*len(in) {
		return fmt.Errorf("comm: AllGatherInto: the pieces of out hold %d elements, want %d×%d", n, g.size, len(in))
	}
	return nil
}

func allGatherInto[T Number](g *Group, tag uint64, out [][]T, in []T) error {
	m := len(in)
	mine := pieceCursor[T]{pieces: out}
	mine.seek(g.rank * m)
	mine.put(in)
	if g.size == 1 {
		return nil
	}
	sent := make(chan error, g.size-1)
	for k := 1; k < g.size; k++ {
		l := g.links[(g.rank+k)%g.size]
		go func() { sent <- l.send(tag, asBytes(in)) }()
	}
	var err error
	for k := 1; k < g.size && err == nil; k++ {
		from := (g.rank - k + g.size) % g.size
		c := pieceCursor[T]{pieces: out}
		c.seek(from * m)
		err = g.links[from].recvFunc(tag, m*elemSize[T](), func(p []byte) { c.put(fromBytes[T](p)) })
	}
	// A link's errors are final and abort the group, so the sends return.
	for k := 1; k < g.size; k++ {
		if serr := <-sent; err == nil {
			err = serr
		}
	}
	return err
}

// pieceCursor writes consecutive elements into a vector cut into pieces.
type pieceCursor[T Number] struct {
	pieces [][]T
	i, off int // the next element goes to pieces[i][off]
}

// seek moves the cursor to element k of the vector.
func (c *pieceCursor[T]) seek(k int) {
	c.i, c.off = 0, k
	for c.i < len(c.pieces) && c.off >= len(c.pieces[c.i]) {
		c.off -= len(c.pieces[c.i])
		c.i++
	}
}

// put copies src to the cursor and advances it.
func (c *pieceCursor[T]) put(src []T) {
	for len(src) > 0 {
		for c.off >= len(c.pieces[c.i]) { // skips empty pieces too
			c.i, c.off = c.i+1, 0
		}
		n := copy(c.pieces[c.i][c.off:], src)
		c.off += n
		src = src[n:]
	}
}
