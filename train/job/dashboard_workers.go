package job

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/fathom-ml/fathom/comm/store"
	"github.com/fathom-ml/fathom/dashboard"
	"github.com/fathom-ml/fathom/internal/distenv"
	"github.com/fathom-ml/fathom/train"
)

// workerReportEvery is how often each worker of a distributed job sends
// its progress to rank 0's dashboard, and rank 0 collects them.
var workerReportEvery = time.Second

// workerReports carries the progress of every worker of a distributed job
// to rank 0's dashboard: each worker writes its latest step to the job's
// rendezvous store (authenticated with the job token) under
// dashboard/worker/RANK about once a second, off the training goroutine;
// rank 0 reads them and fills the board's workers table. Reports are best
// effort: a store that cannot be reached leaves the table to rank 0 alone
// and never fails the job.
type workerReports struct {
	rank, size int
	board      *dashboard.Board // rank 0's; nil elsewhere
	host       string

	mu   sync.Mutex
	last dashboard.Worker // this worker's latest step

	client *store.Client
	seen   map[int]int // rank 0: the last step read of each worker
	done   chan struct{}
	wg     sync.WaitGroup
}

func workerKey(rank int) string { return "dashboard/worker/" + strconv.Itoa(rank) }

// startWorkerReports starts the reports of this worker (rank of size).
func startWorkerReports(rank, size int, board *dashboard.Board) *workerReports {
	w := &workerReports{rank: rank, size: size, board: board, seen: map[int]int{}, done: make(chan struct{})}
	w.host, _ = os.Hostname()
	w.last = dashboard.Worker{Rank: rank, Host: w.host}
	if rank != 0 || board != nil {
		w.wg.Add(1)
		go w.loop()
	}
	return w
}

// step records this worker's latest step; it runs on the training
// goroutine and only takes a lock.
func (w *workerReports) step(e train.BatchEvent) {
	sps := 0.0
	if s := e.Elapsed.Seconds(); s > 0 {
		sps = float64(e.Samples) / s
	}
	w.mu.Lock()
	w.last = dashboard.Worker{Rank: w.rank, Host: w.host, Step: e.Step, Epoch: e.Epoch, SamplesPerSec: sps}
	w.mu.Unlock()
}

// stop sends or collects a last report and ends the reports.
func (w *workerReports) stop() {
	close(w.done)
	w.wg.Wait()
}

func (w *workerReports) loop() {
	defer w.wg.Done()
	t := time.NewTicker(workerReportEvery)
	defer t.Stop()
	defer func() {
		if w.client != nil {
			w.client.Close()
		}
	}()
	for {
		select {
		case <-t.C:
			w.report(250 * time.Millisecond)
		case <-w.done:
			w.report(time.Second) // the last steps
			return
		}
	}
}

// report sends this worker's progress (ranks > 0) or collects every
// worker's (rank 0), each store call bounded by wait.
func (w *workerReports) report(wait time.Duration) {
	w.mu.Lock()
	me := w.last
	w.mu.Unlock()
	if w.rank == 0 {
		me.LastSeen = time.Now()
		w.board.SetWorker(me)
	}
	if w.size < 2 || !w.dial(wait) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if w.rank != 0 {
		b, _ := json.Marshal(me)
		if err := w.client.Set(ctx, workerKey(w.rank), b); err != nil {
			w.drop()
		}
		return
	}
	for r := 1; r < w.size && ctx.Err() == nil; r++ {
		one, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		b, err := w.client.Get(one, workerKey(r))
		cancel()
		var got dashboard.Worker
		if err != nil || json.Unmarshal(b, &got) != nil || got.Rank != r {
			continue
		}
		if prev, ok := w.seen[r]; ok && prev == got.Step {
			continue // no news: last seen stays when it was
		}
		w.seen[r] = got.Step
		got.LastSeen = time.Now() // rank 0's clock, not the worker's
		w.board.SetWorker(got)
	}
}

// dial connects to the job's store once; it reports whether a client is
// there.
func (w *workerReports) dial(wait time.Duration) bool {
	if w.client != nil {
		return true
	}
	e, err := distenv.FromOS()
	if err != nil || e.MasterPort <= 0 {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	c, err := store.Dial(ctx, net.JoinHostPort(e.MasterAddr, strconv.Itoa(e.MasterPort)), []byte(e.JobToken), w.rank)
	if err != nil {
		return false
	}
	w.client = c
	return true
}

// drop closes a client that failed, so the next report dials again.
func (w *workerReports) drop() {
	w.client.Close()
	w.client = nil
}
