package job

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/comm/store"
	"github.com/fathom-ml/fathom/dashboard"
	"github.com/fathom-ml/fathom/train"
)

// TestWorkerReports: three workers report through a store; rank 0's board
// gets each one's last step, and a worker that stops reporting keeps the
// time it was last seen.
func TestWorkerReports(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const token = "job-token"
	srv := store.Serve(ln, []byte(token), nil)
	defer srv.Close()
	t.Setenv("MASTER_ADDR", "127.0.0.1")
	t.Setenv("MASTER_PORT", strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	t.Setenv("FATHOM_JOB_TOKEN", token)
	defer func(d time.Duration) { workerReportEvery = d }(workerReportEvery)
	workerReportEvery = 10 * time.Millisecond

	b := dashboard.NewBoard(0)
	ws := []*workerReports{startWorkerReports(0, 3, b), startWorkerReports(1, 3, nil), startWorkerReports(2, 3, nil)}
	for step := 1; step <= 5; step++ {
		for _, w := range ws {
			w.step(train.BatchEvent{Epoch: 1, Step: step, Samples: 10 * step, Elapsed: time.Duration(step) * time.Millisecond})
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, w := range ws[1:] {
		w.stop() // the last report goes out
	}
	var got []dashboard.Worker
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		got = b.Snapshot().Workers
		if len(got) == 3 && got[1].Step == 5 && got[2].Step == 5 {
			break
		}
	}
	if len(got) != 3 {
		t.Fatalf("workers %+v, want 3", got)
	}
	for r, w := range got {
		if w.Rank != r || w.Step != 5 || w.Epoch != 1 || w.SamplesPerSec != 10000 || w.LastSeen.IsZero() {
			t.Errorf("worker %d: %+v, want step 5 at 10000 samples/s", r, w)
		}
	}
	// Ranks 1 and 2 are silent from now on: their last-seen times stay
	// while rank 0 goes on reading.
	seen := got[2].LastSeen
	time.Sleep(50 * time.Millisecond)
	ws[0].stop()
	if after := b.Snapshot().Workers[2].LastSeen; !after.Equal(seen) {
		t.Errorf("a silent worker's last-seen time moved from %v to %v", seen, after)
	}
}

// TestWorkerReportsWithoutStore: no store to reach leaves rank 0's own
// row and no error.
func TestWorkerReportsWithoutStore(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // nothing listens there now
	t.Setenv("MASTER_ADDR", "127.0.0.1")
	t.Setenv("MASTER_PORT", strconv.Itoa(port))
	defer func(d time.Duration) { workerReportEvery = d }(workerReportEvery)
	workerReportEvery = 10 * time.Millisecond
	b := dashboard.NewBoard(0)
	w := startWorkerReports(0, 2, b)
	w.step(train.BatchEvent{Epoch: 1, Step: 3})
	time.Sleep(30 * time.Millisecond)
	w.stop()
	if got := b.Snapshot().Workers; len(got) != 1 || got[0].Step != 3 {
		t.Errorf("workers %+v, want rank 0 at step 3", got)
	}
}
