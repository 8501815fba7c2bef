//go:build unix

package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/internal/distenv"
	"github.com/fathom-ml/fathom/launch/rdzv"
	"github.com/fathom-ml/fathom/launch/rdzv/rdzvtest"
)

// The elastic tests run launchers in-process against a real etcd server
// (rdzvtest.Start; skipped without /usr/bin/etcd), each scenario under its
// own rendezvous id, with test-binary workers in "elastic" mode: a comm
// group of WORLD_SIZE that all-reduces until told to stop, or finishes
// after a few steps when WORLD_SIZE is the one asked for.

// elasticConfig is a launcher of n workers of the helper in the given mode,
// meeting in the etcd at endpoint under id, in rounds of minNodes to
// maxNodes nodes.
func elasticConfig(t *testing.T, endpoint, id string, minNodes, maxNodes, n int, args ...string) (Config, *syncBuffer) {
	t.Helper()
	cfg, out := helperConfig(t, n, args...)
	cfg.RendezvousBackend, cfg.RendezvousEndpoint, cfg.RendezvousID = BackendEtcd, endpoint, id
	cfg.MinNodes, cfg.NNodes = minNodes, maxNodes
	cfg.RendezvousHost = "127.0.0.1"
	cfg.RendezvousLastCall = 300 * time.Millisecond
	cfg.RendezvousTTL = 2 * time.Second
	cfg.RendezvousTimeout = 20 * time.Second
	cfg.Grace = 2 * time.Second
	cfg.Env = append(cfg.Env, distenv.JobToken+"=elastic-test-token", distenv.HeartbeatTimeout+"=2s", distenv.Timeout+"=20s")
	return cfg, out
}

type runOutcome struct {
	res Result
	err error
}

// start runs a launcher in a goroutine; cancel stops it; the outcome
// arrives on the channel.
func start(cfg Config) (<-chan runOutcome, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan runOutcome, 1)
	go func() {
		res, err := Run(ctx, cfg)
		ch <- runOutcome{res, err}
	}()
	return ch, cancel
}

// wait receives a launcher's outcome, failing the test after a bounded time.
func wait(t *testing.T, ch <-chan runOutcome, out *syncBuffer) runOutcome {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(60 * time.Second):
		t.Fatalf("launcher did not end within 60s; output:\n%s", out)
	}
	return runOutcome{}
}

func TestElastic(t *testing.T) {
	endpoint := rdzvtest.Start(t)

	// (a) Two launchers with --nnodes 1:2 form one round of two nodes
	// (MAX closes it at once) and finish.
	t.Run("one round of two", func(t *testing.T) {
		before := runtime.NumGoroutine()
		var chs [2]<-chan runOutcome
		var outs [2]*syncBuffer
		for i := range 2 {
			cfg, out := elasticConfig(t, endpoint, "a", 1, 2, 2, "elastic", "4", "3")
			cfg.RendezvousLastCall = 10 * time.Second // only MAX closes the round
			var cancel context.CancelFunc
			chs[i], cancel = start(cfg)
			defer cancel()
			outs[i] = out
		}
		all := ""
		for i := range 2 {
			o := wait(t, chs[i], outs[i])
			if o.err != nil {
				t.Fatalf("launcher %d: %v\n%s", i, o.err, outs[i])
			}
			if o.res.Rounds != 1 || o.res.Round != 0 || o.res.Restarts != 0 {
				t.Errorf("launcher %d: rounds %d, round %d, restarts %d; want 1, 0, 0", i, o.res.Rounds, o.res.Round, o.res.Restarts)
			}
			all += outs[i].String()
		}
		for r := range 4 {
			if want := fmt.Sprintf("[%d] rank=%d world=4 round=0 steps=3 done", r, r); !strings.Contains(all, want) {
				t.Errorf("no %q in:\n%s", want, all)
			}
		}
		checkNoLeak(t, before)
	})

	// (b) A node leaves: B's launcher is stopped mid-run; A goes on to a
	// new round alone (MIN 1) and finishes with world size 1·P. The leave
	// costs no restart (--max-restarts 0).
	t.Run("a node leaves", func(t *testing.T) {
		cfgA, outA := elasticConfig(t, endpoint, "b", 1, 2, 1, "elastic", "1", "3")
		cfgB, outB := elasticConfig(t, endpoint, "b", 1, 2, 1, "elastic", "1", "3")
		cfgA.RendezvousLastCall, cfgB.RendezvousLastCall = time.Second, time.Second
		chA, cancelA := start(cfgA)
		defer cancelA()
		chB, cancelB := start(cfgB)
		defer cancelB()
		// Both start at once: MAX closes round 0 with both (were B late
		// by more than the last call, a later round would have them both).
		outA.waitFor(t, "world=2 round=", 1)
		outB.waitFor(t, "world=2 round=", 1)
		cancelB()
		if o := wait(t, chB, outB); !errors.Is(o.err, ErrInterrupted) {
			t.Errorf("B: err = %v, want ErrInterrupted\n%s", o.err, outB)
		}
		o := wait(t, chA, outA)
		if o.err != nil {
			t.Fatalf("A: %v\n%s", o.err, outA)
		}
		if o.res.Rounds < 2 || o.res.Restarts != 0 {
			t.Errorf("A: rounds %d, restarts %d; want at least 2, 0\n%s", o.res.Rounds, o.res.Restarts, outA)
		}
		if !strings.Contains(outA.String(), fmt.Sprintf("[0] rank=0 world=1 round=%d steps=3 done", o.res.Round)) {
			t.Errorf("A did not finish alone in round 1:\n%s", outA)
		}
	})

	// (b') A node dies: B's launcher, in a process of its own, is killed
	// (SIGKILL; its workers die with it); its lease expires and A goes on
	// alone, whether its workers saw the loss first or etcd did.
	for _, bFirst := range []bool{false, true} {
		// B starting first is likely node 0: its death takes the round's
		// store with it.
		t.Run(fmt.Sprintf("a node dies (it starts first: %v)", bFirst), func(t *testing.T) {
			id := fmt.Sprintf("f-%v", bFirst)
			cfgA, outA := elasticConfig(t, endpoint, id, 1, 2, 1, "elastic", "1", "3")
			cfgA.RendezvousLastCall = time.Second
			outB := &syncBuffer{}
			b := exec.Command(os.Args[0], "launcher", endpoint, id, os.Args[0], "elastic", "1", "3")
			b.Env, b.Stdout, b.Stderr = cfgA.Env, outB, outB
			if err := b.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { b.Process.Kill(); b.Wait() }()
			if bFirst {
				time.Sleep(300 * time.Millisecond) // not needed for the outcome, only for which path it takes
			}
			chA, cancelA := start(cfgA)
			defer cancelA()
			outA.waitFor(t, "world=2 round=", 1)
			outB.waitFor(t, "world=2 round=", 1)
			b.Process.Kill()
			b.Wait()
			o := wait(t, chA, outA)
			if o.err != nil {
				t.Fatalf("A: %v\n%s\nB:\n%s", o.err, outA, outB)
			}
			if o.res.Rounds < 2 || o.res.Restarts != 0 {
				t.Errorf("A: rounds %d, restarts %d; want at least 2, 0\n%s", o.res.Rounds, o.res.Restarts, outA)
			}
			if !strings.Contains(outA.String(), fmt.Sprintf("[0] rank=0 world=1 round=%d steps=3 done", o.res.Round)) {
				t.Errorf("A did not finish alone:\n%s", outA)
			}
			if testing.Verbose() {
				t.Logf("A:\n%s", outA)
			}
		})
	}

	// (c) A node joins: A runs alone (MIN 1) with long-lived workers; B
	// starts with the same id; both end up in round 1 of two nodes and
	// finish.
	t.Run("a node joins", func(t *testing.T) {
		cfgA, outA := elasticConfig(t, endpoint, "c", 1, 2, 1, "elastic", "2", "3")
		chA, cancelA := start(cfgA)
		defer cancelA()
		outA.waitFor(t, "world=1 round=0 sum=1 ready", 1)
		cfgB, outB := elasticConfig(t, endpoint, "c", 1, 2, 1, "elastic", "2", "3")
		chB, cancelB := start(cfgB)
		defer cancelB()
		oA, oB := wait(t, chA, outA), wait(t, chB, outB)
		if oA.err != nil || oB.err != nil {
			t.Fatalf("A: %v\nB: %v\n%s\n%s", oA.err, oB.err, outA, outB)
		}
		if oA.res.Rounds != 2 || oB.res.Rounds != 1 || oA.res.Round != 1 || oB.res.Round != 1 || oA.res.Restarts != 0 {
			t.Errorf("rounds A %d (last %d), B %d (last %d), restarts %d; want 2, 1 (both last 1), 0",
				oA.res.Rounds, oA.res.Round, oB.res.Rounds, oB.res.Round, oA.res.Restarts)
		}
		all := outA.String() + outB.String()
		for r := range 2 {
			if want := fmt.Sprintf("[%d] rank=%d world=2 round=1 steps=3 done", r, r); !strings.Contains(all, want) {
				t.Errorf("no %q in:\n%s", want, all)
			}
		}
	})

	// (d) MIN not reached within --rdzv-timeout.
	t.Run("min not reached", func(t *testing.T) {
		cfg, out := elasticConfig(t, endpoint, "d", 2, 3, 1, "env")
		cfg.RendezvousTimeout = 2 * time.Second
		_, err := Run(context.Background(), cfg)
		if !errors.Is(err, rdzv.ErrTimeout) || !strings.Contains(err.Error(), "registered (min 2)") {
			t.Fatalf("err = %v\n%s", err, out)
		}
	})

	// A worker failure does count against --max-restarts: round 1 is the
	// restart, and with no restarts left the job fails.
	t.Run("failures count", func(t *testing.T) {
		cfg, out := elasticConfig(t, endpoint, "e", 1, 1, 2, "restart", "1")
		cfg.MaxRestarts = 1
		res, err := Run(context.Background(), cfg)
		if err != nil || res.Restarts != 1 || res.Round != 1 {
			t.Fatalf("err %v, restarts %d, round %d\n%s", err, res.Restarts, res.Round, out)
		}
		cfg, out = elasticConfig(t, endpoint, "e2", 1, 1, 2, "restart", "1")
		if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrWorkerFailed) {
			t.Fatalf("err = %v, want ErrWorkerFailed\n%s", err, out)
		}
	})

	// With two nodes present, a worker killed on one of them restarts both
	// in the next round, counting one restart (a round of fixed size 2).
	t.Run("failure on one of two nodes", func(t *testing.T) {
		var chs [2]<-chan runOutcome
		var outs [2]*syncBuffer
		for i := range 2 {
			cfg, out := elasticConfig(t, endpoint, "g", 2, 2, 2, "collective", "3")
			cfg.MaxRestarts = 1
			var cancel context.CancelFunc
			chs[i], cancel = start(cfg)
			defer cancel()
			outs[i] = out
		}
		all := ""
		for i := range 2 {
			o := wait(t, chs[i], outs[i])
			if o.err != nil {
				t.Fatalf("launcher %d: %v\n%s", i, o.err, outs[i])
			}
			if o.res.Restarts != 1 || o.res.Round != 1 {
				t.Errorf("launcher %d: restarts %d, round %d; want 1, 1\n%s", i, o.res.Restarts, o.res.Round, outs[i])
			}
			if !strings.Contains(outs[i].String(), "going on to a new round (restart 1 of 1)") {
				t.Errorf("launcher %d: no restart notice:\n%s", i, outs[i])
			}
			all += outs[i].String()
		}
		for r := range 4 {
			if want := fmt.Sprintf("[%d] attempt=1 step=2 sum=10\n", r); !strings.Contains(all, want) {
				t.Errorf("no %q in:\n%s", want, all)
			}
		}
	})

	// A signal while the rendezvous waits for MIN nodes ends the wait.
	t.Run("signal while waiting", func(t *testing.T) {
		cfg, out := elasticConfig(t, endpoint, "h", 2, 2, 1, "env")
		sigs := make(chan os.Signal, 1)
		sigs <- syscall.SIGTERM
		cfg.Signals = sigs
		res, err := Run(context.Background(), cfg)
		if !errors.Is(err, ErrInterrupted) || res.Signal != syscall.SIGTERM {
			t.Fatalf("err = %v, signal %v\n%s", err, res.Signal, out)
		}
	})

	// A finished job's id is not reused by mistake.
	t.Run("ended id", func(t *testing.T) {
		cfg, out := elasticConfig(t, endpoint, "e", 1, 1, 1, "env")
		if _, err := Run(context.Background(), cfg); !errors.Is(err, rdzv.ErrEnded) {
			t.Fatalf("err = %v, want ErrEnded\n%s", err, out)
		}
	})
}

func TestElasticNeedsAToken(t *testing.T) {
	cfg, _ := helperConfig(t, 1, "env")
	cfg.RendezvousBackend, cfg.RendezvousEndpoint, cfg.RendezvousID = BackendEtcd, "127.0.0.1:1", "x"
	if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), distenv.JobToken) {
		t.Fatalf("err = %v", err)
	}
}
