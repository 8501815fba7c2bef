package ps

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/tensor"
)

func TestPlan(t *testing.T) {
	for _, test := range []struct {
		sizes   []int
		servers int
	}{
		{[]int{784 * 128, 128, 128 * 10, 10}, 1},
		{[]int{784 * 128, 128, 128 * 10, 10}, 2},
		{[]int{784 * 128, 128, 128 * 10, 10}, 4},
		{[]int{5, 3}, 3},
		{[]int{0, 1000, 7}, 5},
		{nil, 2},
	} {
		plan, err := Plan(test.sizes, test.servers)
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, n := range test.sizes {
			total += n
		}
		// Every element is held once, in order, and cuts inside a tensor
		// fall on multiples of Align.
		next := make([]int, len(test.sizes))
		largest := 0
		for s, segs := range plan {
			largest = max(largest, planElems(segs))
			for _, seg := range segs {
				if seg.Lo != next[seg.Param] || seg.Hi <= seg.Lo || seg.Hi > test.sizes[seg.Param] {
					t.Fatalf("%v over %d: server %d holds %+v, want a range from %d", test.sizes, test.servers, s, seg, next[seg.Param])
				}
				if seg.Lo%Align != 0 {
					t.Fatalf("%v over %d: segment %+v starts off the %d-element grid", test.sizes, test.servers, seg, Align)
				}
				next[seg.Param] = seg.Hi
			}
		}
		for i, n := range test.sizes {
			if next[i] != n {
				t.Fatalf("%v over %d: parameter %d covered up to %d of %d", test.sizes, test.servers, i, next[i], n)
			}
		}
		if bound := total/test.servers + Align; largest > bound {
			t.Errorf("%v over %d: a server holds %d elements, more than the balanced %d", test.sizes, test.servers, largest, bound)
		}
	}
	if _, err := Plan([]int{3}, 0); err == nil {
		t.Error("Plan over 0 servers: no error")
	}
}

func TestClock(t *testing.T) {
	c := NewClock(3, 1)
	step := func(w int) { c.Push(w) }
	if !c.Ready(0) || !c.Ready(1) || c.Ready(2) {
		t.Fatal("at clocks 0,0,0 with staleness 1: want steps 0 and 1 readable, not 2")
	}
	step(0)
	step(0)
	step(1)
	if c.Ready(2) {
		t.Fatal("worker 2 at clock 0: step 2 must wait")
	}
	step(2)
	if !c.Ready(2) || c.Ready(3) {
		t.Fatal("slowest at 1: want step 2 readable, not 3")
	}
	c.Leave(2)
	c.Leave(1)
	if m, _ := c.Min(); m != 2 || !c.Ready(3) {
		t.Fatalf("workers 1 and 2 gone: min %d, want 2 and step 3 readable", m)
	}
	c.Leave(0)
	if _, ok := c.Min(); ok || !c.Ready(100) || c.Live() != 0 {
		t.Fatal("all gone: no bound")
	}
}

var testToken = []byte("ps-test-token")

type cluster struct {
	plan    [][]Segment
	addrs   []string
	servers []*Server
	stats   []Stats
	errs    []error
	cancel  []context.CancelFunc
	wg      sync.WaitGroup
}

func sgd(lr float64) func([]*tensor.Tensor) (optim.Optimizer, error) {
	return func(p []*tensor.Tensor) (optim.Optimizer, error) {
		return optim.NewSGD(p, optim.SGDOptions{LR: lr})
	}
}

// startCluster starts nServers servers on loopback for workers workers.
func startCluster(t *testing.T, sizes []int, nServers, workers int, async bool, staleness int) *cluster {
	t.Helper()
	return startClusterOpt(t, sizes, nServers, workers, async, staleness, sgd(0.5))
}

// startClusterOpt is startCluster with the servers' optimizer newOpt.
func startClusterOpt(t *testing.T, sizes []int, nServers, workers int, async bool, staleness int,
	newOpt func([]*tensor.Tensor) (optim.Optimizer, error)) *cluster {
	t.Helper()
	plan, err := Plan(sizes, nServers)
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{plan: plan, stats: make([]Stats, nServers), errs: make([]error, nServers)}
	for i := range nServers {
		s, err := NewServer(ServerOptions{Index: i, Workers: workers, Segments: plan[i], Async: async, Staleness: staleness,
			NewOptimizer: newOpt, Token: testToken, Timeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		c.servers = append(c.servers, s)
		c.addrs = append(c.addrs, ln.Addr().String())
		c.cancel = append(c.cancel, cancel)
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.stats[i], c.errs[i] = s.Serve(ctx, ln)
		}()
	}
	t.Cleanup(func() {
		for _, f := range c.cancel {
			f()
		}
		c.wg.Wait()
	})
	return c
}

func (c *cluster) dial(t *testing.T, w int) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := Dial(ctx, ClientOptions{Worker: w, Addrs: c.addrs, Plan: c.plan, Token: testToken, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// grad returns worker w's gradient of step k: values whose float32 sum
// depends on the order of addition.
func grad(sizes []int, w, k int) [][]float32 {
	g := make([][]float32, len(sizes))
	for i, n := range sizes {
		g[i] = make([]float32, n)
		for j := range g[i] {
			g[i][j] = float32(j%7+1) * []float32{1e-3, 1, 3e-7, 0.7}[(w+k+j)%4] / float32(i+1)
		}
	}
	return g
}

// TestSyncSum: a synchronous step of 4 workers over 3 servers is the SGD
// step on the gradients summed in recursive doubling's tree, bit for bit,
// on every worker.
func TestSyncSum(t *testing.T) {
	sizes := []int{300, 7, 130, 1}
	const workers, steps = 4, 3
	c := startCluster(t, sizes, 3, workers, false, 0)
	init := grad(sizes, 9, 9)
	// The reference: one process.
	want := make([][]float32, len(sizes))
	for i := range sizes {
		want[i] = append([]float32(nil), init[i]...)
	}
	for k := range steps {
		g := make([][][]float32, workers)
		for w := range workers {
			g[w] = grad(sizes, w, k)
		}
		for i := range sizes {
			for j := range want[i] {
				sum := (g[0][i][j] + g[1][i][j]) + (g[2][i][j] + g[3][i][j])
				want[i][j] -= float32(0.5) * sum
			}
		}
	}
	got := make([][][]float32, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		cl := c.dial(t, w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cl.Close()
			p := make([][]float32, len(sizes))
			for i, n := range sizes {
				p[i] = make([]float32, n)
			}
			if w == 0 {
				if errs[w] = cl.Init(init); errs[w] != nil {
					return
				}
			}
			if errs[w] = cl.Pull(0, p); errs[w] != nil {
				return
			}
			for k := range steps {
				if errs[w] = cl.Step(k, 0.5, grad(sizes, w, k), p); errs[w] != nil {
					return
				}
			}
			got[w] = p
		}()
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Fatalf("worker %d: %v", w, err)
		}
	}
	for w := range workers {
		for i := range sizes {
			for j := range want[i] {
				if got[w][i][j] != want[i][j] {
					t.Fatalf("worker %d: param %d[%d] = %g, want %g", w, i, j, got[w][i][j], want[i][j])
				}
			}
		}
	}
	c.wg.Wait()
	for s, err := range c.errs {
		if err != nil || c.stats[s].Updates != steps {
			t.Fatalf("server %d: %d updates, %v; want %d, nil", s, c.stats[s].Updates, err, steps)
		}
	}
}

// TestStaleness: with staleness 1, a worker may run one step ahead of the
// slowest and no more; the slowest's push releases it.
func TestStaleness(t *testing.T) {
	sizes := []int{100}
	c := startCluster(t, sizes, 2, 2, true, 1)
	fast, slow := c.dial(t, 0), c.dial(t, 1)
	defer fast.Close()
	defer slow.Close()
	p0, p1 := [][]float32{make([]float32, 100)}, [][]float32{make([]float32, 100)}
	if err := fast.Init(grad(sizes, 0, 0)); err != nil {
		t.Fatal(err)
	}
	if err := fast.Pull(0, p0); err != nil {
		t.Fatal(err)
	}
	if err := slow.Pull(0, p1); err != nil {
		t.Fatal(err)
	}
	// Step 0 of the fast worker: it may compute step 1 (1 ahead of 0).
	if err := fast.Step(0, 0.5, grad(sizes, 0, 0), p0); err != nil {
		t.Fatal(err)
	}
	// Step 1: the pull of step 2 must wait for the slow worker.
	done := make(chan error, 1)
	go func() { done <- fast.Step(1, 0.5, grad(sizes, 0, 1), p0) }()
	// The server applies the fast worker's two updates at once (polled:
	// a loaded machine may take a while to deliver the second push).
	applied := func() int {
		n := 0
		for _, s := range c.servers {
			if s.Elems() == 0 {
				continue
			}
			s.mu.Lock()
			if n == 0 || s.stats.Updates < n {
				n = s.stats.Updates
			}
			s.mu.Unlock()
		}
		return n
	}
	for deadline := time.Now().Add(10 * time.Second); applied() < 2 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
	}
	if n := applied(); n != 2 {
		t.Fatalf("asynchronous server applied %d updates, want the fast worker's 2 at once", n)
	}
	// ... yet the pull of step 2 stays blocked.
	select {
	case err := <-done:
		t.Fatalf("the fast worker got step 2's parameters two steps ahead of the slowest (err %v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := slow.Step(0, 0.5, grad(sizes, 1, 0), p1); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the fast worker stayed blocked after the slow one caught up")
	}
}

// TestAsyncWorkerLost: asynchronously, a worker whose connection breaks
// leaves the staleness bound and the others finish.
func TestAsyncWorkerLost(t *testing.T) {
	sizes := []int{200, 10}
	const workers, steps = 3, 8
	c := startCluster(t, sizes, 2, workers, true, 0)
	clients := make([]*Client, workers)
	for w := range workers {
		clients[w] = c.dial(t, w)
	}
	if err := clients[0].Init(grad(sizes, 0, 0)); err != nil {
		t.Fatal(err)
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := clients[w]
			p := [][]float32{make([]float32, 200), make([]float32, 10)}
			if errs[w] = cl.Pull(0, p); errs[w] != nil {
				return
			}
			for k := range steps {
				if w == 2 && k == 2 {
					for _, sc := range cl.conns { // the process dies: connections close without "done"
						sc.c.Close()
					}
					return
				}
				if errs[w] = cl.Step(k, 0.1, grad(sizes, w, k), p); errs[w] != nil {
					return
				}
			}
			errs[w] = cl.Close()
		}()
	}
	wg.Wait()
	for w, err := range errs[:2] {
		if err != nil {
			t.Fatalf("worker %d: %v", w, err)
		}
	}
	c.wg.Wait()
	for s, err := range c.errs {
		if err != nil {
			t.Fatalf("server %d: %v", s, err)
		}
		if st := c.stats[s]; len(st.Lost) != 1 || st.Lost[0] != 2 || st.Updates != 2*steps+2 {
			t.Fatalf("server %d: %+v, want worker 2 lost and %d updates", s, st, 2*steps+2)
		}
	}
}

// TestSyncWorkerLost: synchronously, a lost worker fails the servers, and
// the other workers get an error naming it.
func TestSyncWorkerLost(t *testing.T) {
	sizes := []int{64}
	c := startCluster(t, sizes, 1, 2, false, 0)
	a, b := c.dial(t, 0), c.dial(t, 1)
	defer a.Close()
	p := [][]float32{make([]float32, 64)}
	if err := a.Init(p); err != nil {
		t.Fatal(err)
	}
	b.conns[0].c.Close()
	err := a.Step(0, 0.1, grad(sizes, 0, 0), p)
	if err == nil || !strings.Contains(err.Error(), "lost worker 1") {
		t.Fatalf("step with worker 1 gone: %v, want an error naming lost worker 1", err)
	}
	c.wg.Wait()
	if c.errs[0] == nil {
		t.Fatal("the server did not fail")
	}
}

// TestServerLost: a server that dies fails the workers' next step with an
// error naming it.
func TestServerLost(t *testing.T) {
	sizes := []int{256, 256}
	c := startCluster(t, sizes, 2, 1, true, 0)
	cl := c.dial(t, 0)
	defer cl.Close()
	p := [][]float32{make([]float32, 256), make([]float32, 256)}
	if err := cl.Init(p); err != nil {
		t.Fatal(err)
	}
	if err := cl.Step(0, 0.1, grad(sizes, 0, 0), p); err != nil {
		t.Fatal(err)
	}
	// Server 1 dies: its connections break.
	c.servers[1].closeConns()
	err := cl.Step(1, 0.1, grad(sizes, 0, 1), p)
	var lost *ServerLostError
	if !errors.As(err, &lost) || lost.Server != 1 || !strings.Contains(err.Error(), "parameter server 1") {
		t.Fatalf("step with server 1 gone: %v, want a *ServerLostError naming server 1", err)
	}
}

// TestRefusesWrongToken: a connection without the job token is refused.
func TestRefusesWrongToken(t *testing.T) {
	c := startCluster(t, []int{64}, 1, 1, false, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := Dial(ctx, ClientOptions{Worker: 0, Addrs: c.addrs, Plan: c.plan, Token: []byte("wrong"), Timeout: time.Second})
	if err == nil {
		t.Fatal("a client with the wrong token was accepted")
	}
}
