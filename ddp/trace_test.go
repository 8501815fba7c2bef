package ddp

import (
	"testing"
	"time"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/commtest"
)

// Overlap takes the union of the all-reduces and splits it at the end of
// backward.
func TestOverlapSums(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	steps := []StepTrace{{
		Begin: ms(0), BackwardEnd: ms(10), SyncEnd: ms(16),
		Buckets: []BucketTrace{
			{Launch: ms(2), Start: ms(2), End: ms(5)},
			{Launch: ms(4), Start: ms(4), End: ms(7)},         // overlaps the first: union [2, 7]
			{Launch: ms(10), Start: ms(9), End: ms(15)},       // [9, 15]: 1 ms before backward's end
			{Launch: ms(15), Start: time.Time{}, End: ms(15)}, // never ran: left out
		},
	}}
	comm, hidden := Overlap(steps)
	if comm != 11*time.Millisecond || hidden != 6*time.Millisecond {
		t.Fatalf("Overlap = %v, %v; want 11ms, 6ms", comm, hidden)
	}
}

// A traced run records every step's buckets in order, each queued before
// it ran and ended before Sync returned; only the last Trace steps are kept.
func TestTraces(t *testing.T) {
	p := newProblem(29, 12)
	gs := commtest.Groups(t, 2, comm.TransportTCP, nil)
	traces := make([][]StepTrace, 2)
	errs := commtest.OnAll(gs, func(g *comm.Group) error {
		m := mlp(1)
		d, err := New(m, g, Options{FirstBucketMB: 0.0005, BucketCapMB: 0.001, Trace: 4})
		if err != nil {
			return err
		}
		defer d.Close()
		for k := range p.steps() * 2 {
			lo, hi := p.part(k%p.steps(), g.Rank(), 2)
			x, y := p.batch(lo, hi)
			loss := lossOf(m, x, y)
			if err := d.Prepare(loss); err != nil {
				return err
			}
			loss.Backward()
			if err := d.Sync(); err != nil {
				return err
			}
		}
		traces[g.Rank()] = d.Traces()
		return nil
	})
	commtest.MustAll(t, "train", errs)
	for r, tr := range traces {
		if len(tr) != 4 {
			t.Fatalf("rank %d: %d traced steps, want the last 4", r, len(tr))
		}
		for s, st := range tr {
			if st.BackwardEnd.Before(st.Begin) || st.SyncEnd.Before(st.BackwardEnd) {
				t.Errorf("rank %d step %d: begin %v, backward end %v, sync end %v", r, s, st.Begin, st.BackwardEnd, st.SyncEnd)
			}
			if len(st.Buckets) < 2 {
				t.Fatalf("rank %d step %d: %d buckets", r, s, len(st.Buckets))
			}
			for i, b := range st.Buckets {
				if b.Bytes <= 0 || b.Start.Before(b.Launch) || b.End.Before(b.Start) || b.End.After(st.SyncEnd) {
					t.Errorf("rank %d step %d bucket %d: %+v", r, s, i, b)
				}
			}
		}
		comm, hidden := Overlap(tr)
		if comm <= 0 || hidden < 0 || hidden > comm {
			t.Errorf("rank %d: Overlap = %v, %v", r, comm, hidden)
		}
	}
}
