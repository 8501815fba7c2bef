package comm

import (
	"errors"
	"fmt"
	"os"
	"testing"
)

// TestWindow: every rank's writes before a Barrier are what the others
// read after it, round after round; SumChunk gives bitwise the chunks of
// ReduceScatterInPlace on the same vectors (inexact float sums, 2-4
// ranks, a range that starts inside the parts); groups that do not share
// memory get ErrNoWindow on every rank.
func TestWindow(t *testing.T) {
	for n := 2; n <= 4; n++ {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			gs := newGroups(t, n, TransportSHM, nil)
			const m, off = 1001, 37
			ln := n * m
			val := func(r, i int) float32 { return float32(float64(r+1)*1.37e-3*float64(i%97) + 1/float64(i%13+3)) }
			want := make([][]float32, n)
			got := make([][]float32, n)
			mustAll(t, "window", onAll(gs, func(g *Group) error {
				x := make([]float32, ln)
				for i := range x {
					x[i] = val(g.Rank(), i)
				}
				if err := ReduceScatterInPlace(g, x, Sum); err != nil {
					return err
				}
				want[g.Rank()] = x[g.Rank()*m : (g.Rank()+1)*m]

				w, err := NewWindow(g, off+ln+5)
				if err != nil {
					return err
				}
				defer w.Close()
				me := w.Part(g.Rank())
				for round := 1; round <= 20; round++ {
					for i := range me {
						me[i] = float32(round*10 + g.Rank())
					}
					if err := w.Barrier(); err != nil {
						return err
					}
					for r := range g.Size() {
						if v := w.Part(r)[len(me)-1]; v != float32(round*10+r) {
							return fmt.Errorf("round %d: rank %d reads %v from rank %d", round, g.Rank(), v, r)
						}
					}
					if err := w.Barrier(); err != nil { // done reading
						return err
					}
				}
				for i := range ln {
					me[off+i] = val(g.Rank(), i)
				}
				if err := w.Barrier(); err != nil {
					return err
				}
				w.SumChunk(off, ln)
				got[g.Rank()] = append([]float32(nil), me[off+g.Rank()*m:off+(g.Rank()+1)*m]...)
				return w.Barrier()
			}))
			for r := range n {
				if i, ok := equal(got[r], want[r]); !ok {
					t.Fatalf("rank %d element %d: SumChunk %v, ReduceScatterInPlace %v", r, i, got[r][i], want[r][i])
				}
			}
		})
	}
	t.Run("tcp", func(t *testing.T) {
		gs := newGroups(t, 2, TransportTCP, nil)
		errs := onAll(gs, func(g *Group) error {
			_, err := NewWindow(g, 10)
			return err
		})
		for r, err := range errs {
			if !errors.Is(err, ErrNoWindow) {
				t.Errorf("rank %d: NewWindow over TCP: %v, want ErrNoWindow", r, err)
			}
		}
	})
}

// TestWindowFallsBack: a rank that cannot create its part (a file left in
// its place) makes NewWindow return ErrNoWindow on every rank, and leaves
// no file of the others behind.
func TestWindowFallsBack(t *testing.T) {
	gs := newGroups(t, 3, TransportSHM, nil)
	// NewWindow names the parts after the operation counter once its first
	// agreement has run: one past the current one.
	path := func(g *Group, r int) string { return fmt.Sprintf("%s%s-w%d-%d", shmDirPrefix, g.jobID, g.seq+1, r) }
	stale := path(gs[1], 1)
	others := []string{path(gs[0], 0), path(gs[2], 2)}
	if err := os.WriteFile(stale, []byte("x"), 0o600); err != nil {
		t.Skip("cannot write to /dev/shm:", err)
	}
	defer os.Remove(stale)
	errs := onAll(gs, func(g *Group) error {
		_, err := NewWindow(g, 100)
		return err
	})
	for r, err := range errs {
		if !errors.Is(err, ErrNoWindow) {
			t.Errorf("rank %d: %v, want ErrNoWindow", r, err)
		}
	}
	for _, p := range others {
		if _, err := os.Stat(p); err == nil {
			os.Remove(p)
			t.Errorf("%s left behind", p)
		}
	}
	// The group still works.
	mustAll(t, "barrier", onAll(gs, Barrier))
}
