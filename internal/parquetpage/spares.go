package parquetpage

import (
	"math/bits"
	"sync"
)

// Spares keeps the buffers freed to it (in power-of-two size classes)
// for the next Allocate of their class, without zeroing them: the page
// buffers of a Parquet reader, which it fills before reading. It keeps at
// most limit bytes of spare buffers. Its Allocate, Reallocate and Free
// are those of arrow-go's memory.Allocator, so a reader's arrow-go page
// reader can draw on the same spares. Safe for concurrent use.
type Spares struct {
	mu    sync.Mutex
	free  [48][][]byte
	bytes int
	limit int
}

// NewSpares returns a Spares that keeps at most limit bytes.
func NewSpares(limit int) *Spares { return &Spares{limit: limit} }

// sizeClass returns the size class of n bytes: buffers of 1<<class bytes.
func sizeClass(n int) int { return max(6, bits.Len(uint(n-1))) }

// Allocate returns size bytes, a spare buffer of the size's class if one
// is kept (its contents left as they were).
func (a *Spares) Allocate(size int) []byte {
	if size == 0 {
		return []byte{}
	}
	c := sizeClass(size)
	a.mu.Lock()
	if l := a.free[c]; len(l) > 0 {
		b := l[len(l)-1]
		a.free[c] = l[:len(l)-1]
		a.bytes -= cap(b)
		a.mu.Unlock()
		return b[:size]
	}
	a.mu.Unlock()
	return make([]byte, size, 1<<c)
}

// Reallocate returns b grown to size bytes, its contents kept.
func (a *Spares) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		return b[:size]
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

// Free keeps b for a later Allocate (a buffer not from Allocate, or over
// the limit, is left to the garbage collector).
func (a *Spares) Free(b []byte) {
	c := bits.Len(uint(cap(b))) - 1
	if cap(b) == 0 || cap(b) != 1<<c || c < 6 {
		return
	}
	a.mu.Lock()
	if a.bytes+cap(b) <= a.limit {
		a.free[c] = append(a.free[c], b[:0])
		a.bytes += cap(b)
	}
	a.mu.Unlock()
}
