package join

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/internal/distenv"
)

// TestSingleProcess: without WORLD_SIZE a process joins nothing: no
// group, no store, and Close is a no-op.
func TestSingleProcess(t *testing.T) {
	t.Setenv(distenv.WorldSize, "")
	t.Setenv(distenv.Rank, "")
	j, err := FromEnv(context.Background(), Options{Group: true, Store: true})
	if err != nil {
		t.Fatal(err)
	}
	if j.Distributed() || j.Group != nil || j.Store != nil || j.Rank() != 0 || j.Size() != 1 {
		t.Fatalf("single process: %+v", j)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := j.DialStore(context.Background()); err == nil {
		t.Fatal("DialStore of a single process: no error")
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// env returns rank's environment of a job of size on port.
func env(t *testing.T, rank, size, port, restart int) distenv.Env {
	t.Helper()
	vars := []string{
		distenv.Rank + "=" + strconv.Itoa(rank), distenv.WorldSize + "=" + strconv.Itoa(size),
		distenv.MasterAddr + "=127.0.0.1", distenv.MasterPort + "=" + strconv.Itoa(port),
		distenv.JobToken + "=secret", distenv.RestartCount + "=" + strconv.Itoa(restart),
		distenv.HeartbeatTimeout + "=-1s",
	}
	e, err := distenv.Parse(distenv.Lookup(vars))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// joinAll joins size ranks at once and returns their jobs.
func joinAll(t *testing.T, ctx context.Context, size, port, restart int, o Options) []*Job {
	t.Helper()
	jobs := make([]*Job, size)
	errs := make([]error, size)
	var wg sync.WaitGroup
	for r := range size {
		wg.Add(1)
		go func() {
			defer wg.Done()
			jobs[r], errs[r] = fromEnv(ctx, env(t, r, size, port, restart), o)
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	return jobs
}

// closeAll closes every job at once (a group's close waits for all).
func closeAll(t *testing.T, jobs []*Job) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(jobs))
	for r, j := range jobs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[r] = j.Close() }()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: close: %v", r, err)
		}
	}
}

// TestStoreOnly: without a group rank 0 hosts the store; every rank's
// client sees the same keys, under the restart generation's prefix (a
// key set through Store is found by DialStore's client, and not without
// the prefix).
func TestStoreOnly(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	port := freePort(t)
	jobs := joinAll(t, ctx, 3, port, 2, Options{Store: true})
	for r, j := range jobs {
		if j.Group != nil || j.Store == nil || j.Rank() != r || j.Size() != 3 || !j.Distributed() {
			t.Fatalf("rank %d: %+v", r, j)
		}
		if _, err := j.Store.Add(ctx, "count", 1); err != nil {
			t.Fatal(err)
		}
	}
	if v, err := jobs[2].Store.Add(ctx, "count", 0); err != nil || v != 3 {
		t.Fatalf("count %d, %v: want 3 (one store)", v, err)
	}
	other, err := jobs[1].DialStore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := other.Add(ctx, "count", 0); err != nil || v != 3 {
		t.Fatalf("DialStore's client: count %d, %v", v, err)
	}
	other.Close()
	if v, err := jobs[0].client.Add(ctx, "g2/count", 0); err != nil || v != 3 {
		t.Fatalf("the raw key g2/count: %d, %v (want the prefix of restart 2)", v, err)
	}
	closeAll(t, jobs)
}

// TestGroupAndStore: the group's collectives and the store work side by
// side, and a first start has no prefix.
func TestGroupAndStore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	port := freePort(t)
	adjusted := 0
	var mu sync.Mutex
	jobs := joinAll(t, ctx, 2, port, 0, Options{Group: true, Store: true, Comm: func(o *comm.Options) {
		mu.Lock()
		adjusted++
		mu.Unlock()
		o.Transport = comm.TransportTCP
	}})
	if adjusted != 2 {
		t.Fatalf("Options.Comm called %d times, want once a rank", adjusted)
	}
	var wg sync.WaitGroup
	sums := make([][]int64, 2)
	for r, j := range jobs {
		if j.Group == nil || j.Group.Rank() != r || j.Group.Options().Transport != comm.TransportTCP {
			t.Fatalf("rank %d: group %v", r, j.Group)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sums[r] = []int64{int64(r + 1)}
			if err := comm.AllReduce(j.Group, sums[r], comm.Sum); err != nil {
				t.Error(err)
			}
			if err := j.Store.Set(ctx, fmt.Sprint("k", r), []byte{byte(r)}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if sums[0][0] != 3 || sums[1][0] != 3 {
		t.Fatalf("all-reduce: %v", sums)
	}
	if b, err := jobs[0].Store.Get(ctx, "k1"); err != nil || len(b) != 1 || b[0] != 1 {
		t.Fatalf("rank 1's key from rank 0: %v, %v", b, err)
	}
	if b, err := jobs[0].client.Get(ctx, "k1"); err != nil || len(b) != 1 {
		t.Fatalf("a first start's key has no prefix: %v, %v", b, err)
	}
	closeAll(t, jobs)
}

// TestNoToken: a store-only job without the job token is refused before
// anything listens.
func TestNoToken(t *testing.T) {
	e := env(t, 0, 2, freePort(t), 0)
	e.JobToken = ""
	if _, err := fromEnv(context.Background(), e, Options{Store: true}); err == nil {
		t.Fatal("no token: no error")
	}
}
