// Package sched holds the communication schedules of fathom's collectives as
// pure functions: which rank sends which chunk to whom at which step. Nothing
// here touches a network; package comm executes these plans over its
// transports, and the tests here check them by simulating every rank.
//
// Schedules:
//
//   - Ring reduce-scatter and all-gather (Patarasuk & Yuan, "Bandwidth optimal
//     all-reduce algorithms for clusters of workstations", JPDC 2009; the
//     algorithm Baidu and Horovod popularised for deep learning).
//   - Recursive doubling all-reduce with the fold-in/fold-out extension for
//     world sizes that are not powers of two (Thakur, Rabenseifner & Gropp,
//     "Optimization of Collective Communication Operations in MPICH", IJHPCA
//     2005, section 4.4).
//   - Binomial-tree broadcast and the dissemination barrier (Hensgen, Finkel &
//     Manber, "Two algorithms for barrier synchronization", IJPP 1988).
package sched

import "fmt"

// Chunk returns the half-open element range [start, end) of chunk c when n
// elements are split into p nearly equal chunks: the first n%p chunks hold
// one element more than the others. Chunks may be empty when n < p.
func Chunk(n, p, c int) (start, end int) {
	if p <= 0 || c < 0 || c >= p || n < 0 {
		panic(fmt.Sprintf("sched.Chunk: n=%d p=%d c=%d out of range", n, p, c))
	}
	q, r := n/p, n%p
	start = c*q + min(c, r)
	end = start + q
	if c < r {
		end++
	}
	return start, end
}

func mod(a, n int) int { return ((a % n) + n) % n }

// Step is one step of a ring schedule: the rank sends chunk Send to its
// successor (rank+1) and, at the same time, receives chunk Recv from its
// predecessor (rank-1).
type Step struct {
	Send, Recv int
}

// RingReduceScatter is the reduce-scatter half of the ring all-reduce for
// rank in a ring of size ranks. At step s the rank sends chunk
// (rank-s-1) mod size and receives chunk (rank-s-2) mod size, which it
// reduces into its own copy. After the size-1 steps the rank holds the fully
// reduced chunk number rank. Each step moves K/size elements per link, so the
// half costs (size-1)·K/size per rank.
func RingReduceScatter(rank, size int) []Step {
	checkRank(rank, size)
	steps := make([]Step, 0, size-1)
	for s := 0; s < size-1; s++ {
		steps = append(steps, Step{Send: mod(rank-s-1, size), Recv: mod(rank-s-2, size)})
	}
	return steps
}

// RingAllGather is the all-gather half of the ring: starting from the state
// where rank holds chunk rank, at step s it sends chunk (rank-s) mod size and
// receives chunk (rank-s-1) mod size. After size-1 steps every rank holds
// every chunk.
func RingAllGather(rank, size int) []Step {
	checkRank(rank, size)
	steps := make([]Step, 0, size-1)
	for s := 0; s < size-1; s++ {
		steps = append(steps, Step{Send: mod(rank-s, size), Recv: mod(rank-s-1, size)})
	}
	return steps
}

// Next and Prev are the ring neighbours of rank.
func Next(rank, size int) int { return mod(rank+1, size) }

// Prev is the ring predecessor of rank.
func Prev(rank, size int) int { return mod(rank-1, size) }

// RDPlan is the recursive-doubling all-reduce plan of one rank.
//
// With p the largest power of two not above size and rem = size-p, the first
// 2·rem ranks pair up: each even rank r < 2·rem sends its whole vector to r+1
// (FoldSendTo), which reduces it in (FoldRecvFrom) and takes part in the
// doubling rounds on behalf of both; at the end it sends the result back
// (UnfoldSendTo / UnfoldRecvFrom). In round k the p participants exchange
// their whole vectors with the partner whose virtual rank differs in bit k
// and reduce. log2(p) rounds of K bytes each: latency-optimal, not
// bandwidth-optimal.
type RDPlan struct {
	FoldSendTo     int   // -1 or the rank this even rank hands its data to
	FoldRecvFrom   int   // -1 or the rank whose data this odd rank reduces in
	Partners       []int // real ranks to exchange with, one per round
	UnfoldSendTo   int   // -1 or the rank to send the final result to
	UnfoldRecvFrom int   // -1 or the rank to receive the final result from
}

// RecursiveDoubling returns the plan of rank in a group of size ranks.
func RecursiveDoubling(rank, size int) RDPlan {
	checkRank(rank, size)
	p := 1
	for p*2 <= size {
		p *= 2
	}
	rem := size - p
	plan := RDPlan{FoldSendTo: -1, FoldRecvFrom: -1, UnfoldSendTo: -1, UnfoldRecvFrom: -1}
	var vrank int
	switch {
	case rank < 2*rem && rank%2 == 0:
		plan.FoldSendTo = rank + 1
		plan.UnfoldRecvFrom = rank + 1
		return plan
	case rank < 2*rem:
		plan.FoldRecvFrom = rank - 1
		plan.UnfoldSendTo = rank - 1
		vrank = rank / 2
	default:
		vrank = rank - rem
	}
	real := func(v int) int {
		if v < rem {
			return 2*v + 1
		}
		return v + rem
	}
	for mask := 1; mask < p; mask <<= 1 {
		plan.Partners = append(plan.Partners, real(vrank^mask))
	}
	return plan
}

// Binomial returns the binomial-tree broadcast plan of rank for the given
// root: the parent to receive from (-1 for the root) and the children to
// forward to, in the order the sends should be issued (largest subtree
// first).
func Binomial(rank, size, root int) (parent int, children []int) {
	checkRank(rank, size)
	checkRank(root, size)
	v := mod(rank-root, size)
	parent = -1
	mask := 1
	for mask < size {
		if v&mask != 0 {
			parent = mod(v-mask+root, size)
			break
		}
		mask <<= 1
	}
	for mask >>= 1; mask > 0; mask >>= 1 {
		if v+mask < size {
			children = append(children, mod(v+mask+root, size))
		}
	}
	return parent, children
}

// Dissemination returns the barrier rounds of rank: in round k it signals
// (rank+2^k) mod size and waits for (rank-2^k) mod size. After
// ceil(log2 size) rounds every rank has heard, transitively, from all others.
func Dissemination(rank, size int) (to, from []int) {
	checkRank(rank, size)
	for d := 1; d < size; d <<= 1 {
		to = append(to, mod(rank+d, size))
		from = append(from, mod(rank-d, size))
	}
	return to, from
}

func checkRank(rank, size int) {
	if size <= 0 || rank < 0 || rank >= size {
		panic(fmt.Sprintf("sched: rank %d out of range for size %d", rank, size))
	}
}
