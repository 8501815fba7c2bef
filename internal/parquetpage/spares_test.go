package parquetpage

import "testing"

// TestSpares: buffers come back from Free for the next Allocate of
// their size class, Reallocate keeps the contents.
func TestSpares(t *testing.T) {
	a := NewSpares(1 << 20)
	b := a.Allocate(1000)
	if len(b) != 1000 || cap(b) != 1024 {
		t.Fatalf("len %d cap %d, want 1000 and 1024", len(b), cap(b))
	}
	b[999] = 7
	b = a.Reallocate(3000, b)
	if len(b) != 3000 || b[999] != 7 {
		t.Fatalf("reallocated: len %d, b[999] %d", len(b), b[999])
	}
	a.Free(b)
	c := a.Allocate(2500)
	if &c[0] != &b[0] {
		t.Fatal("a freed buffer was not reused")
	}
	a.Free(make([]byte, 100)) // not one of its sizes: dropped
	if d := a.Allocate(100); cap(d) != 128 {
		t.Fatalf("cap %d, want 128", cap(d))
	}
	big := a.Allocate(2 << 20)
	a.Free(big) // more than it keeps
	if b := a.Allocate(2 << 20); &b[0] == &big[0] {
		t.Fatal("a buffer over the limit was kept")
	}
}
