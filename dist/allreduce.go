package dist

import (
	"fmt"

	"github.com/fathom-ml/fathom/dist/sched"
)

// AllReduce reduces x element-wise over all ranks, in place: afterwards every
// rank holds the same result. The algorithm is chosen by size (AlgoAuto).
func AllReduce[T Number](g *Group, x []T, op ReduceOp) error {
	return AllReduceWith(g, x, op, AlgoAuto)
}

// AllReduceAsync is the asynchronous AllReduce: x must not be touched until
// Wait returns.
func AllReduceAsync[T Number](g *Group, x []T, op ReduceOp) *Work {
	if !op.valid() {
		return doneWork(fmt.Errorf("dist: AllReduce: invalid op %v", op))
	}
	algo := g.chooseAlgo(len(x)*elemSize[T](), AlgoAuto)
	return g.submit("allreduce", -1, func(tag uint32) error { return allReduce(g, tag, x, op, algo) })
}

// AllReduceWith is AllReduce with an explicit algorithm. Every rank must
// pass the same algorithm.
func AllReduceWith[T Number](g *Group, x []T, op ReduceOp, algo Algorithm) error {
	if !op.valid() {
		return fmt.Errorf("dist: AllReduce: invalid op %v", op)
	}
	algo = g.chooseAlgo(len(x)*elemSize[T](), algo)
	return g.do("allreduce/"+algo.String(), -1, func(tag uint32) error { return allReduce(g, tag, x, op, algo) })
}

// ChooseAlgorithm returns the algorithm AllReduceWith runs for a message of
// the given size in bytes when asked for algo (resolves AlgoAuto).
func (g *Group) ChooseAlgorithm(bytes int, algo Algorithm) Algorithm { return g.chooseAlgo(bytes, algo) }

func (g *Group) chooseAlgo(bytes int, algo Algorithm) Algorithm {
	if algo != AlgoAuto {
		return algo
	}
	if bytes < g.opts.SmallBytes {
		return AlgoRecursiveDoubling
	}
	return AlgoRing
}

func allReduce[T Number](g *Group, tag uint32, x []T, op ReduceOp, algo Algorithm) error {
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
		err = fmt.Errorf("dist: unknown algorithm %v", algo)
	}
	return err
}

// ringAllReduce is the bandwidth-optimal ring (Patarasuk & Yuan 2009): a
// reduce-scatter leaves each rank one fully reduced chunk of K/N elements
// after N-1 steps, and an all-gather circulates the chunks in N-1 more
// steps. Each rank sends and receives 2(N-1)·K/N elements in total,
// independent of N for large N; every step sends to the successor while
// receiving from the predecessor, and a received chunk is reduced piece by
// piece as it streams in.
func ringAllReduce[T Number](g *Group, tag uint32, x []T, op ReduceOp) error {
	n := len(x)
	bounds := func(c int) (int, int) { return sched.Chunk(n, g.size, c) }
	if err := ringReduceScatter(g, tag, x, op, bounds); err != nil {
		return err
	}
	if op == Avg {
		s, e := bounds(g.rank)
		divide(x[s:e], g.size)
	}
	return ringAllGather(g, tag, x, bounds)
}

// rdAllReduce is recursive doubling with fold-in/fold-out for non-powers of
// two (Thakur, Rabenseifner & Gropp 2005): ceil(log2 N)(+2) rounds of whole
// vectors, the fewest message latencies, for small messages.
func rdAllReduce[T Number](g *Group, tag uint32, x []T, op ReduceOp) error {
	plan := sched.RecursiveDoubling(g.rank, g.size)
	b := asBytes(x)
	if plan.FoldSendTo >= 0 {
		if err := g.links[plan.FoldSendTo].send(tag, b); err != nil {
			return err
		}
		return g.links[plan.UnfoldRecvFrom].recvInto(tag, b)
	}
	if plan.FoldRecvFrom >= 0 {
		if err := recvReduce(g, tag, plan.FoldRecvFrom, x, op); err != nil {
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
func naiveAllReduce[T Number](g *Group, tag uint32, x []T, op ReduceOp) error {
	b := asBytes(x)
	if g.rank != 0 {
		if err := g.links[0].send(tag, b); err != nil {
			return err
		}
		return g.links[0].recvInto(tag, b)
	}
	for r := 1; r < g.size; r++ {
		if err := recvReduce(g, tag, r, x, op); err != nil {
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
