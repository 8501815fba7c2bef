package comm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/comm/auth"
	"github.com/fathom-ml/fathom/comm/store"
)

// TestKilledRankFailsFast kills one rank (all its connections close, as when
// the process dies) while the others run all-reduces; every other rank must
// return, well before its timeout, an error naming the lost rank.
func TestKilledRankFailsFast(t *testing.T) {
	for _, tr := range transports {
		for _, victim := range []int{0, 2} {
			t.Run(fmt.Sprintf("%s/victim=%d", tr.name, victim), func(t *testing.T) {
				const n = 5
				gs := newGroups(t, n, tr.tr, func(o *Options) { o.Timeout = time.Minute })
				start := time.Now()
				errs := onAll(gs, func(g *Group) error {
					x := make([]float32, 50000)
					for it := 0; it < 100000; it++ {
						if g.Rank() == victim && it == 20 {
							g.kill()
							return nil
						}
						if err := AllReduceWith(g, x, Sum, AlgoRing); err != nil {
							return err
						}
					}
					return errors.New("no error after 100000 all-reduces")
				})
				elapsed := time.Since(start)
				if elapsed > 20*time.Second {
					t.Errorf("ranks took %v to notice the loss (timeout is 1m)", elapsed)
				}
				for r, err := range errs {
					if r == victim {
						continue
					}
					var pe *PeerLostError
					if !errors.As(err, &pe) || pe.Rank != victim {
						t.Errorf("rank %d: error %v does not name lost rank %d", r, err, victim)
						continue
					}
					if !strings.Contains(err.Error(), fmt.Sprintf("lost rank %d", victim)) {
						t.Errorf("rank %d: message %q does not name rank %d", r, err, victim)
					}
				}
			})
		}
	}
}

// TestTimeout: one rank never joins a collective; the others time out (or
// are aborted by the first that does) instead of hanging.
func TestTimeout(t *testing.T) {
	gs := newGroups(t, 3, TransportTCP, func(o *Options) { o.Timeout = 300 * time.Millisecond })
	errs := onAll(gs, func(g *Group) error {
		if g.Rank() == 1 {
			return nil
		}
		return AllReduce(g, make([]float64, 10), Sum)
	})
	for _, r := range []int{0, 2} {
		if !errors.Is(errs[r], ErrTimeout) && !errors.Is(errs[r], ErrAborted) {
			t.Errorf("rank %d: %v, want a timeout", r, errs[r])
		}
	}
	// the group is unusable afterwards, and says why
	if err := Barrier(gs[0]); err == nil {
		t.Error("barrier on an aborted group succeeded")
	}
}

// TestStrangerRefused connects to a worker's port with a wrong token: the
// connection is refused, logged with the remote address and rank claim, and
// the job keeps working.
func TestStrangerRefused(t *testing.T) {
	var logs syncBuf
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	gs := newGroups(t, 2, TransportTCP, func(o *Options) { o.Logger = logger })
	c, err := net.Dial("tcp", gs[0].ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	err = auth.Client(c, []byte("not-the-token"), auth.KindPeer, 1, time.Now().Add(5*time.Second))
	c.Close()
	if !errors.Is(err, auth.ErrRefused) {
		t.Fatalf("stranger handshake: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "refused") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	l := logs.String()
	if !strings.Contains(l, "rank_claim=1") || !strings.Contains(l, "remote=127.0.0.1") {
		t.Errorf("refusal not logged with address and claim: %q", l)
	}
	if strings.Contains(l, testToken) {
		t.Error("log contains the token")
	}
	x := []float32{1, 2}
	mustAll(t, "allreduce after stranger", onAll(gs, func(g *Group) error { return AllReduce(g, x[:1:1], Max) }))
}

// TestWrongTokenRank: a rank started with another token cannot join.
func TestWrongTokenRank(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := store.Serve(ln, []byte(testToken), quietLog)
	defer srv.Close()
	o := Options{Rank: 1, WorldSize: 2, Token: []byte("wrong"), MasterAddr: "127.0.0.1",
		MasterPort: ln.Addr().(*net.TCPAddr).Port, RendezvousTimeout: 3 * time.Second, Logger: quietLog}
	if _, err := New(context.Background(), o); !errors.Is(err, auth.ErrRefused) {
		t.Fatalf("New with a wrong token: %v", err)
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// ---- multi-process: the test binary re-executes itself as workers ----

func TestMain(m *testing.M) {
	if os.Getenv("FATHOM_DIST_TEST_WORKER") == "1" {
		os.Exit(testWorker())
	}
	os.Exit(m.Run())
}

// testWorker joins the group from the environment (as under a launcher),
// prints "ready", then all-reduces until an error, which it prints.
func testWorker() int {
	g, err := NewFromEnv(context.Background())
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	x := make([]float32, 1<<16)
	for it := 0; it < 1000000; it++ {
		if it == 5 {
			fmt.Println("ready")
		}
		if err := AllReduce(g, x, Sum); err != nil {
			fmt.Println("error:", err)
			g.Close() // must not hang on a dead or stopped peer
			return 2
		}
	}
	g.Close()
	return 0
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestKillProcess starts 4 worker processes through the environment, the
// way a launcher does (rank 0 hosts the store), SIGKILLs rank 2 and expects
// every survivor to exit with an error naming rank 2.
func TestKillProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	for _, shm := range []string{"0", "1"} {
		t.Run("shm="+shm, func(t *testing.T) {
			const n, victim = 4, 2
			port := freePort(t)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmds := make([]*exec.Cmd, n)
			outs := make([]*syncBuf, n)
			for r := 0; r < n; r++ {
				cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), "FATHOM_DIST_TEST_WORKER=1",
					"RANK="+strconv.Itoa(r), "WORLD_SIZE="+strconv.Itoa(n), "LOCAL_RANK="+strconv.Itoa(r),
					"LOCAL_WORLD_SIZE="+strconv.Itoa(n), "MASTER_ADDR=127.0.0.1", "MASTER_PORT="+strconv.Itoa(port),
					"FATHOM_JOB_TOKEN=proc-token", "FATHOM_SHM="+shm, "FATHOM_TIMEOUT=2m")
				outs[r] = &syncBuf{}
				cmd.Stdout, cmd.Stderr = outs[r], outs[r]
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				cmds[r] = cmd
			}
			deadline := time.Now().Add(30 * time.Second)
			for !strings.Contains(outs[victim].String(), "ready") {
				if time.Now().After(deadline) {
					for _, c := range cmds {
						c.Process.Kill()
					}
					t.Fatalf("workers not ready: %q", outs[0].String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			killed := time.Now()
			cmds[victim].Process.Signal(syscall.SIGKILL)
			for r, c := range cmds {
				c.Wait()
				if r == victim {
					continue
				}
				out := outs[r].String()
				if !strings.Contains(out, fmt.Sprintf("lost rank %d", victim)) {
					t.Errorf("rank %d output does not name rank %d: %q", r, victim, out)
				}
			}
			if d := time.Since(killed); d > 20*time.Second {
				t.Errorf("survivors took %v to exit (timeout 2m)", d)
			}
		})
	}
}

// TestStrangerFloodRateLimited: many refused connections give at most
// auth.RefusalBurst warning lines, not one each.
func TestStrangerFloodRateLimited(t *testing.T) {
	var logs syncBuf
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	gs := newGroups(t, 2, TransportTCP, func(o *Options) { o.Logger = logger })
	const strangers = 3 * auth.RefusalBurst
	for range strangers {
		c, err := net.Dial("tcp", gs[0].ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		auth.Client(c, []byte("not-the-token"), auth.KindPeer, 1, time.Now().Add(5*time.Second))
		c.Close()
	}
	// the refusals are logged by the accepting goroutines: wait for the burst
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(logs.String(), "refused connection") < auth.RefusalBurst && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	if n := strings.Count(logs.String(), "refused connection"); n != auth.RefusalBurst {
		t.Errorf("%d refusal lines for %d strangers, want %d", n, strangers, auth.RefusalBurst)
	}
	closeAll(gs) // Stop writes the count of the rest
	if !strings.Contains(logs.String(), fmt.Sprintf("count=%d", strangers-auth.RefusalBurst)) {
		t.Errorf("no summary of the refusals not logged:\n%s", logs.String())
	}
}
