package tensor

import (
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
)

// The recycler takes back float storage so that a training step reaches a
// steady state without asking the Go allocator (and its zeroing and
// garbage collector) for its large buffers again.
//
// Lifetime rule. Storage goes back to the recycler only when nothing outside
// the package can reach it:
//
//   - gradients that the autograd engine passes between nodes during
//     Backward. A gradient a backward function returns is engine-owned
//     when its storage was allocated by this package during that call
//     (its allocation number is newer than the call); user data wrapped
//     with FromFloat32 and tensors that existed before the call (saved
//     activations, parameters) never are. The engine counts the graph
//     nodes holding each engine-owned storage and recycles it when the
//     last one has consumed it. Gradients that reach a leaf are copied
//     (or added) into its Grad, never handed over.
//   - scratch an op keeps for its own backward (argmax indices, column
//     matrices), recycled when the engine frees the node that saved it.
//
// Activations a forward pass returns are never recycled: a caller may hold
// any of them. A recycled buffer's storage is emptied (its slice set to
// nil), so a stale view that somehow survived would panic on access
// rather than read another tensor's data.
//
// Free buffers are filed in power-of-two classes by capacity; a request
// for n elements takes any buffer of capacity ≥ n from the class of n or
// the one below, and slices it to n. Fresh buffers have exactly n
// elements. The recycler keeps at most recycleMaxBytes per element type and
// drops the rest to the garbage collector.

// storageMeta is the recycler and engine bookkeeping of one storage.
type storageMeta struct {
	seq  uint64 // allocation number; 0 for wrapped user slices
	refs int32  // graph nodes holding this storage as their gradient (engine-owned only)
	eng  bool   // engine-owned gradient storage (see the lifetime rule)
}

// allocSeq numbers the allocations of this package.
var allocSeq atomic.Uint64

// nextSeq returns a new allocation number.
func nextSeq() uint64 { return allocSeq.Add(1) }

const (
	recycleMinClass = 10 // smallest recycled buffer: 1024 elements
	recycleMaxClass = 30
)

// recycleMaxBytes bounds the bytes kept per element type.
var recycleMaxBytes = 1 << 30

// recycler holds free slices per size class.
type recycler[T elem] struct {
	mu    sync.Mutex
	free  [recycleMaxClass + 1][][]T
	bytes int
	size  int // bytes per element
}

var (
	recyclerF32 = recycler[float32]{size: 4}
	recyclerF64 = recycler[float64]{size: 8}
	recyclerU8  = recycler[uint8]{size: 1} // op scratch only (max-pool window codes)
)

// sizeClass returns the class k with 2^(k−1) < n ≤ 2^k: the class a
// request for n elements takes from first. It is −1 when n is too small
// or too large to recycle.
func sizeClass(n int) int {
	if n <= 1<<(recycleMinClass-1) || n > 1<<recycleMaxClass {
		return -1
	}
	return bits.Len(uint(n - 1))
}

// capClass returns the class a free buffer of capacity c is filed under:
// k with 2^k ≤ c < 2^(k+1), or −1 when c is not recyclable.
func capClass(c int) int {
	if c < 1<<recycleMinClass || c > 1<<recycleMaxClass {
		return -1
	}
	return bits.Len(uint(c)) - 1
}

// recycledBuffer returns storage of n elements from p (zeroed when clear).
func recycledBuffer[T float](p *recycler[T], n int, clear bool) *buffer[T] {
	b := &buffer[T]{storageMeta: storageMeta{seq: nextSeq()}}
	if s := p.get(n); s != nil {
		b.data = s
		if clear {
			clearSlice(b.data)
		} else if recyclePoison {
			poisonSlice(b.data)
		}
		return b
	}
	// Fresh buffers have exactly n elements, so storage that escapes to
	// the caller wastes nothing.
	b.data = make([]T, n)
	if !clear && recyclePoison {
		poisonSlice(b.data)
	}
	return b
}

// recyclePoison makes every buffer handed out without clearing start as NaN,
// so that tests catch an op that reads an element it did not write.
var recyclePoison = false

func poisonSlice[T float](s []T) {
	nan := T(math.NaN())
	for i := range s {
		s[i] = nan
	}
}

// get returns a free slice of length n, or nil. Buffers of class
// sizeClass(n) all fit; the class below holds buffers of capacities in
// [2^(k−1), 2^k), which fit when at least n (the common case of a
// training loop asking again for the sizes it gave back).
func (p *recycler[T]) get(n int) []T {
	k := sizeClass(n)
	if k < 0 {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	take := func(k, i int) []T {
		l := p.free[k]
		s := l[i]
		l[i] = l[len(l)-1]
		l[len(l)-1] = nil
		p.free[k] = l[:len(l)-1]
		p.bytes -= cap(s) * p.size
		return s[:n]
	}
	if l := p.free[k]; len(l) > 0 {
		return take(k, len(l)-1)
	}
	if k-1 >= recycleMinClass {
		for i, s := range p.free[k-1] {
			if cap(s) >= n {
				return take(k-1, i)
			}
		}
	}
	return nil
}

func (p *recycler[T]) put(s []T) {
	k := capClass(cap(s))
	if k < 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bytes+cap(s)*p.size > recycleMaxBytes {
		return
	}
	p.free[k] = append(p.free[k], s[:0])
	p.bytes += cap(s) * p.size
}

// clearSlice zeroes s (the compiler turns the loop into memclr).
func clearSlice[T elem](s []T) {
	for i := range s {
		s[i] = 0
	}
}

// recycle gives the storage's slice back to its recycler and empties the
// storage. Only the engine and the ops that own a scratch buffer call it.
func (b *buffer[T]) recycle() {
	d := b.data
	b.data = nil
	b.eng, b.refs = false, 0
	switch s := any(d).(type) {
	case []float32:
		recyclerF32.put(s)
	case []float64:
		recyclerF64.put(s)
	}
}

// scratchF32 returns a float32 slice of n elements from the recycler
// (contents undefined); give it back with releaseF32 when done.
func scratchF32(n int) []float32 {
	if s := recyclerF32.get(n); s != nil {
		return s
	}
	return make([]float32, n)
}

// releaseF32 returns a slice from scratchF32 to the recycler.
func releaseF32(s []float32) { recyclerF32.put(s) }

// scratchU8 is scratchF32 for uint8.
func scratchU8(n int) []uint8 {
	if s := recyclerU8.get(n); s != nil {
		return s
	}
	return make([]uint8, n)
}

// Recycle gives t's storage back to the recycler, for a caller that
// knows nothing will read t, or any view of it, again: the intermediate
// activations of an inference pass (nn.Sequential recycles those of its
// fused Linear layers), so that the next pass takes its buffers from the
// recycler instead of the Go allocator, which zeroes them. It does nothing
// when t requires grad or is part of an autograd graph, wraps a caller's
// slice (FromFloat32 and the like), is engine-owned, or does not span its
// whole storage. Afterwards t's storage is empty: reading t panics.
func (t *Tensor) Recycle() {
	if t == nil || t.requiresGrad || t.node != nil || t.offset != 0 || t.st == nil {
		return
	}
	if m := t.st.meta(); m.seq == 0 || m.eng {
		return
	}
	if t.st.length() != t.Numel() || !t.IsContiguous() {
		return
	}
	t.st.recycle()
}
