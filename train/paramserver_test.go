package train

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/commtest"
	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/ps"
	"github.com/fathom-ml/fathom/tensor"
)

// TestParameterServerSameBits: deterministic training of the BatchNorm and
// dropout model by 2 workers through 1 or 2 synchronous parameter servers
// (Adam on the servers) gives the bits of one process, as DataParallel
// does (TestDeterministicSameBitsOnAnyRanks).
func TestParameterServerSameBits(t *testing.T) {
	trainT, _ := irisSplits(t, 1)
	opts := func(s Strategy, m Options) Options {
		m.Epochs, m.Strategy, m.MicroShards = 3, s, 4
		m.Train = loader(t, trainT, data.LoaderOptions{BatchSize: 12, Shuffle: true, Seed: 1})
		return m
	}
	one := detModel(t, 1)
	tr, err := New(opts(nil, Options{Model: one, Optimizer: adam(t, one, 0.01)}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Fit(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := detState(one)

	for _, servers := range []int{1, 2} {
		t.Run(fmt.Sprintf("%dservers", servers), func(t *testing.T) {
			var sizes []int
			for _, p := range one.Parameters() {
				sizes = append(sizes, p.Numel())
			}
			plan, err := ps.Plan(sizes, servers)
			if err != nil {
				t.Fatal(err)
			}
			token := []byte(commtest.Token)
			addrs := make([]string, servers)
			var wg sync.WaitGroup
			serveErrs := make([]error, servers)
			for i := range servers {
				srv, err := ps.NewServer(ps.ServerOptions{Index: i, Workers: 2, Segments: plan[i], Token: token, Timeout: 20 * time.Second,
					NewOptimizer: func(p []*tensor.Tensor) (optim.Optimizer, error) {
						return optim.NewAdam(p, optim.AdamOptions{LR: 0.01})
					}})
				if err != nil {
					t.Fatal(err)
				}
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				addrs[i] = ln.Addr().String()
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, serveErrs[i] = srv.Serve(context.Background(), ln)
				}()
			}
			gs := commtest.Groups(t, 2, comm.TransportAuto, nil)
			ws := make([][]float32, 2)
			commtest.MustAll(t, "fit", commtest.OnAll(gs, func(g *comm.Group) error {
				// Worker 1 starts from other weights: the servers take worker 0's.
				m := detModel(t, uint64(1+g.Rank()))
				c, err := ps.Dial(context.Background(), ps.ClientOptions{Worker: g.Rank(), Addrs: addrs, Plan: plan, Token: token})
				if err != nil {
					return err
				}
				popt := ps.NewOptimizer(adam(t, m, 0.01), c, m.Parameters())
				tr, err := New(opts(NewParameterServer(g, popt, false), Options{Model: m, Optimizer: popt}))
				if err != nil {
					return err
				}
				if _, err := tr.Fit(context.Background()); err != nil {
					c.Abort()
					return err
				}
				ws[g.Rank()] = detState(m)
				return c.Close()
			}))
			wg.Wait()
			for i, err := range serveErrs {
				if err != nil {
					t.Fatalf("server %d: %v", i, err)
				}
			}
			for r := range 2 {
				if i := firstDiff(ws[r], want); i >= 0 {
					t.Errorf("worker %d: value %d is %v, one process trained %v", r, i, ws[r][i], want[i])
				}
			}
		})
	}
}

// TestParameterServerAsync: 2 workers through an asynchronous server with
// staleness 1 train Iris as one process does, roughly: every worker's
// gradient is applied on its own (twice the optimizer steps), so the
// weights differ, but the model learns.
func TestParameterServerAsync(t *testing.T) {
	trainT, testT := irisSplits(t, 1)
	m0 := mlp(t, 1, 4, nn.LayerSpec{Type: "linear", Out: 16}, nn.LayerSpec{Type: "relu"}, nn.LayerSpec{Type: "linear", Out: 3})
	var sizes []int
	for _, p := range m0.Parameters() {
		sizes = append(sizes, p.Numel())
	}
	plan, err := ps.Plan(sizes, 1)
	if err != nil {
		t.Fatal(err)
	}
	token := []byte(commtest.Token)
	srv, err := ps.NewServer(ps.ServerOptions{Workers: 2, Segments: plan[0], Async: true, Staleness: 1, Token: token, Timeout: 20 * time.Second,
		NewOptimizer: func(p []*tensor.Tensor) (optim.Optimizer, error) {
			return optim.NewAdam(p, optim.AdamOptions{LR: 0.01})
		}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	var stats ps.Stats
	go func() {
		var err error
		stats, err = srv.Serve(context.Background(), ln)
		done <- err
	}()
	gs := commtest.Groups(t, 2, comm.TransportAuto, nil)
	accs := make([]float64, 2)
	commtest.MustAll(t, "fit", commtest.OnAll(gs, func(g *comm.Group) error {
		m := mlp(t, uint64(1+g.Rank()), 4, nn.LayerSpec{Type: "linear", Out: 16}, nn.LayerSpec{Type: "relu"}, nn.LayerSpec{Type: "linear", Out: 3})
		c, err := ps.Dial(context.Background(), ps.ClientOptions{Worker: g.Rank(), Addrs: []string{ln.Addr().String()}, Plan: plan, Token: token})
		if err != nil {
			return err
		}
		popt := ps.NewOptimizer(adam(t, m, 0.01), c, m.Parameters())
		tr, err := New(Options{Model: m, Optimizer: popt, Epochs: 20, Strategy: NewParameterServer(g, popt, true),
			Train: loader(t, trainT, data.LoaderOptions{BatchSize: 16, Shuffle: true, Seed: 1}),
			Eval:  loader(t, testT, data.LoaderOptions{BatchSize: 100})})
		if err != nil {
			return err
		}
		hist, err := tr.Fit(context.Background())
		if err != nil {
			c.Abort()
			return err
		}
		accs[g.Rank()] = hist[len(hist)-1].Eval.Accuracy
		return c.Close()
	}))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Each worker pushes once per global batch of 16 rows.
	if steps := 2 * 20 * ((trainT.Rows + 15) / 16); stats.Updates != steps {
		t.Errorf("the server applied %d updates, want one per worker step, %d", stats.Updates, steps)
	}
	for r, a := range accs {
		if a < 0.9 {
			t.Errorf("worker %d: test accuracy %v after 20 asynchronous epochs, want ≥ 0.9", r, a)
		}
	}
}
