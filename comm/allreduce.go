package comm

import (
	"fmt"

	"github.com/fathom-ml/fathom/comm/sched"
)

// AllReduce reduces x element-wise over all ranks, in place: afterwards every
// rank holds the same result. The algorithm is chosen by size (AlgoAuto).
func AllReduce[T Number](g *Group, x []T, op ReduceOp) error {
	return AllReduceWith(g, x, op, AlgoAuto)
}

// AllReduceAsync is the asynchronous AllReduce: x must not be touched until
// Wait returns.
func AllReduceAsync[T Number](g *Group, x []T, op ReduceOp) *Work {
	if !validOp[T](op) {
		return doneWork(fmt.Errorf("comm: AllReduce: invalid op %v", op))
	}
	algo := g.chooseAlgo(len(x)*elemSize[T](), AlgoAuto)
	return g.submit("allreduce", -1, func(tag uint64) error { return allReduce(g, tag, x, op, algo) })
}

// AllReduceWith is AllReduce with an explicit algorithm. Every rank must
// pass the same algorithm.
func AllReduceWith[T Number](g *Group, x []T, op ReduceOp, algo Algorithm) error {
	if !validOp[T](op) {
		return fmt.Errorf("comm: AllReduce: invalid op %v", op)
	}
	algo = g.chooseAlgo(len(x)*elemSize[T](), algo)
	return g.do("allreduce/"+algo.String(), -1, func(tag uint64) error { return allReduce(g, tag, x, op, algo) })
}

// ChooseAlgorithm returns the algorithm AllReduceWith runs for a message of
// the given size in bytes when asked for algo (resolves AlgoAuto).
func (g *Group) ChooseAlgorithm(bytes int, algo Algorithm) Algorithm {
	return g.chooseAlgo(bytes, algo)
}

func (g *Group) chooseAlgo(bytes int, algo Algorithm) Algorithm {
	if algo != AlgoAuto {
		return algo
	}
	if bytes < g.opts.SmallBytes {
		return AlgoRecursiveDoubling
	}
	return AlgoRing
}

func allReduce[T Number](g *Group, tag uint64, x []T, op ReduceOp, algo Algorithm) error {
	if g.size == 1 {
		return nil // avg over one rank is the identity
	}
	var err error
	switch algo {
	case AlgoRing:
		err = ringAllReduce(g, tag, x, op)
	case AlgoRecursiveDoubling:
		err = rdAllReduce(g, tag, x, op)
	case AlgoNaive:
		err = naiveAllReduce(g, tag, x, op)
	default:
		err = fmt.Errorf("comm: unknown algorithm %v", algo)
	}
	return err
}

// ringSegmentBytes is the pipelining unit of the ring: a chunk travels as
// segments of this size, and a rank forwards segment k of the chunk it just
// received as soon as that segment is reduced, without waiting for the rest
// of the chunk, so its outgoing link never idles between steps.
const ringSegmentBytes = 1 << 20

// ringAllReduce is the bandwidth-optimal ring (Patarasuk & Yuan 2009): a
// reduce-scatter leaves each rank one fully reduced chunk of K/N elements
// after N-1 steps, and an all-gather circulates the chunks in N-1 more
// steps. Each rank sends and receives 2(N-1)·K/N elements in total. The
// 2(N-1) steps run as one pipeline: a sender goroutine streams segments to
// the successor while this goroutine receives segments from the predecessor,
// reduces (or stores) them straight from the transport's buffer, and hands
// each finished segment to the sender, since what a rank sends at step i+1
// is exactly what it received at step i.
func ringAllReduce[T Number](g *Group, tag uint64, x []T, op ReduceOp) error {
	size, n := g.size, len(x)
	rs, ag := sched.RingReduceScatter(g.rank, size), sched.RingAllGather(g.rank, size)
	steps := append(rs, ag...)
	seg := max(ringSegmentBytes/elemSize[T](), 1)
	segments := func(c int) [][2]int {
		s, e := sched.Chunk(n, size, c)
		var out [][2]int
		for lo := s; lo < e; lo += seg {
			out = append(out, [2]int{lo, min(lo+seg, e)})
		}
		return out
	}
	total := 0
	for _, st := range steps {
		total += len(segments(st.Recv))
	}
	next, prev := g.links[sched.Next(g.rank, size)], g.links[sched.Prev(g.rank, size)]
	ready := make(chan struct{}, total) // one token per segment received and reduced
	quit := make(chan struct{})
	sent := make(chan error, 1)
	go func() {
		for i, st := range steps {
			for _, sg := range segments(st.Send) {
				if i > 0 {
					select {
					case <-ready:
					case <-quit:
						sent <- nil
						return
					}
				}
				if err := next.send(tag, asBytes(x[sg[0]:sg[1]])); err != nil {
					sent <- err
					return
				}
			}
		}
		sent <- nil
	}()
	var err error
recv:
	for i, st := range steps {
		for _, sg := range segments(st.Recv) {
			part := x[sg[0]:sg[1]]
			if i < len(rs) {
				err = recvReduce(g, tag, prev, part, op)
				if err == nil && i == len(rs)-1 && op == Avg {
					divide(part, size) // the owned chunk is final: average it before it circulates
				}
			} else {
				err = prev.recvInto(tag, asBytes(part))
			}
			if err != nil {
				break recv
			}
			ready <- struct{}{}
		}
	}
	if err != nil {
		close(quit) // the sender may be waiting for a segment that will never come
	}
	if serr := <-sent; err == nil {
		err = serr
	}
	return err
}

// rdAllReduce is recursive doubling with fold-in/fold-out for non-powers of
// two (Thakur, Rabenseifner & Gropp 2005): ceil(log2 N)(+2) rounds of whole
// vectors, the fewest message latencies, for small messages.
func rdAllReduce[T Number](g *Group, tag uint64, x []T, op ReduceOp) error {
	plan := sched.RecursiveDoubling(g.rank, g.size)
	b := asBytes(x)
	if plan.FoldSendTo >= 0 {
		if err := g.links[plan.FoldSendTo].send(tag, b); err != nil {
			return err
		}
		return g.links[plan.UnfoldRecvFrom].recvInto(tag, b)
	}
	if plan.FoldRecvFrom >= 0 {
		if err := recvReduce(g, tag, g.links[plan.FoldRecvFrom], x, op); err != nil {
			return err
		}
	}
	tmp := scratchOf[T](g, len(x))
	for _, p := range plan.Partners {
		// x is being sent, so the partner's vector lands in tmp first
		if err := g.exchange(tag, p, b, p, asBytes(tmp)); err != nil {
			return err
		}
		reduceInto(x, tmp, op)
	}
	if op == Avg {
		divide(x, g.size)
	}
	if plan.UnfoldSendTo >= 0 {
		return g.links[plan.UnfoldSendTo].send(tag, b)
	}
	return nil
}

// naiveAllReduce is the baseline: every rank sends its whole vector to rank
// 0, which reduces them in rank order and sends the result back to each.
// Rank 0's link carries 2(N-1)·K, N times the ring's 2(N-1)·K/N.
func naiveAllReduce[T Number](g *Group, tag uint64, x []T, op ReduceOp) error {
	b := asBytes(x)
	if g.rank != 0 {
		if err := g.links[0].send(tag, b); err != nil {
			return err
		}
		return g.links[0].recvInto(tag, b)
	}
	for r := 1; r < g.size; r++ {
		if err := recvReduce(g, tag, g.links[r], x, op); err != nil {
			return err
		}
	}
	if op == Avg {
		divide(x, g.size)
	}
	for r := 1; r < g.size; r++ {
		if err := g.links[r].send(tag, b); err != nil {
			return err
		}
	}
	return nil
}
