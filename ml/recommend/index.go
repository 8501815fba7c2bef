package recommend

import (
	"math"
	"math/bits"
	"slices"

	"github.com/fathom-ml/fathom/internal/parallel"
)

// idIndex maps the distinct ids of one side (users or items) to dense
// indices 0..n−1 in increasing id order.
type idIndex struct {
	ids []int32 // sorted, distinct
	// A dense table over [lo, lo+len(table)) when the ids are not too
	// sparse, else a map.
	lo    int32
	table []int32
	m     map[int32]int32
}

// denseSpan is how much larger than the number of ids their range may be
// for the dense table (and the bitmap that finds them).
const denseSpan = 8

func newIDIndex(ids []int32) *idIndex {
	x := &idIndex{ids: ids}
	if len(ids) == 0 {
		return x
	}
	lo, hi := int64(ids[0]), int64(ids[len(ids)-1])
	if span := hi - lo + 1; span <= int64(denseSpan*len(ids))+1024 {
		x.lo = int32(lo)
		x.table = make([]int32, span)
		for i := range x.table {
			x.table[i] = -1
		}
		for i, id := range ids {
			x.table[int64(id)-lo] = int32(i)
		}
		return x
	}
	x.m = make(map[int32]int32, len(ids))
	for i, id := range ids {
		x.m[id] = int32(i)
	}
	return x
}

// lookup returns id's index, or −1.
func (x *idIndex) lookup(id int32) int32 {
	if x.table != nil {
		o := int64(id) - int64(x.lo)
		if o < 0 || o >= int64(len(x.table)) {
			return -1
		}
		return x.table[o]
	}
	if i, ok := x.m[id]; ok {
		return i
	}
	return -1
}

// distinctIDs returns the sorted distinct values of ids: through a bitmap
// over their range when it is dense enough, else by sorting a copy.
func distinctIDs(ids []int32) []int32 {
	if len(ids) == 0 {
		return []int32{}
	}
	type span struct{ lo, hi int32 }
	s := parallel.MapReduce(len(ids), 1<<16, span{math.MaxInt32, math.MinInt32}, func(lo, hi int) span {
		out := span{math.MaxInt32, math.MinInt32}
		for _, v := range ids[lo:hi] {
			out.lo = min(out.lo, v)
			out.hi = max(out.hi, v)
		}
		return out
	}, func(a, b span) span { return span{min(a.lo, b.lo), max(a.hi, b.hi)} })
	width := int64(s.hi) - int64(s.lo) + 1
	if width > int64(denseSpan*len(ids))+(1<<20) {
		c := slices.Clone(ids)
		slices.Sort(c)
		return slices.Compact(c)
	}
	set := make([]uint64, (width+63)/64)
	for _, v := range ids {
		o := uint64(int64(v) - int64(s.lo))
		set[o>>6] |= 1 << (o & 63)
	}
	var out []int32
	for w, b := range set {
		for b != 0 {
			t := b & -b
			out = append(out, int32(int64(s.lo)+int64(w)*64+int64(bits.TrailingZeros64(t))))
			b ^= t
		}
	}
	return out
}

// mergeIDs returns the sorted union of sorted, distinct id lists.
func mergeIDs(lists [][]int32) []int32 {
	var all []int32
	for _, l := range lists {
		all = append(all, l...)
	}
	slices.Sort(all)
	return slices.Compact(all)
}
