package ps

import "fmt"

// Align is the granularity, in elements, at which Plan may cut a tensor
// between two servers. A multiple of every kernel's vector width (16
// float32 lanes at most), it keeps each element on the same code path
// (vector body or scalar tail) of the optimizer's kernels as in one
// process, which is what makes a synchronous server's step bitwise equal
// to a data-parallel one.
const Align = 64

// Segment is a contiguous range [Lo, Hi) of the flattened elements of
// parameter Param, held and updated by one server.
type Segment struct {
	Param  int
	Lo, Hi int
}

// Len returns the number of elements of the segment.
func (s Segment) Len() int { return s.Hi - s.Lo }

// Plan shards parameters of the given sizes (elements) over servers
// servers by bytes: the flattened concatenation of all parameters is cut
// into servers ranges of equal length, each cut moved down to a multiple
// of Align elements from the start of the tensor it falls in. Server s
// holds plan[s], in parameter order. A server may hold nothing when there
// are fewer aligned pieces than servers; otherwise the largest share
// exceeds total/servers by less than Align elements.
func Plan(sizes []int, servers int) ([][]Segment, error) {
	if servers < 1 {
		return nil, fmt.Errorf("ps: want at least one server, got %d", servers)
	}
	total := 0
	for i, n := range sizes {
		if n < 0 {
			return nil, fmt.Errorf("ps: parameter %d has negative size %d", i, n)
		}
		total += n
	}
	// cut[s] is the flat offset where server s begins.
	cut := make([]int, servers+1)
	cut[servers] = total
	for s := 1; s < servers; s++ {
		x := total * s / servers
		start := 0 // the flat offset of the tensor x falls in
		for _, n := range sizes {
			if x < start+n {
				break
			}
			start += n
		}
		cut[s] = max(start+(x-start)/Align*Align, cut[s-1])
	}
	plan := make([][]Segment, servers)
	for s := range servers {
		lo, hi := cut[s], cut[s+1]
		start := 0
		for i, n := range sizes {
			a, b := max(lo, start), min(hi, start+n)
			if a < b {
				plan[s] = append(plan[s], Segment{Param: i, Lo: a - start, Hi: b - start})
			}
			start += n
		}
	}
	return plan, nil
}

// planElems returns the number of elements of segs.
func planElems(segs []Segment) int {
	n := 0
	for _, s := range segs {
		n += s.Len()
	}
	return n
}
