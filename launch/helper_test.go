//go:build unix

package launch

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/store"
	"github.com/fathom-ml/fathom/internal/distenv"
)

// The process tests start the test binary itself as the worker: with
// helperEnv set, TestMain runs helperMain instead of the tests, and the
// first argument picks what the worker does.
const helperEnv = "FATHOM_LAUNCH_TEST_HELPER"

// helperTimeout bounds every helper worker's life, so no test can leave a
// process behind for long even if the launcher under test is broken.
const helperTimeout = 60 * time.Second

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		helperMain(os.Args[1:])
		return
	}
	os.Exit(m.Run())
}

func helperMain(args []string) {
	go func() {
		time.Sleep(helperTimeout)
		fmt.Fprintln(os.Stderr, "helper: timed out")
		os.Exit(99)
	}()
	rank, _ := strconv.Atoi(os.Getenv(distenv.Rank))
	argInt := func(i int) int { n, _ := strconv.Atoi(args[i]); return n }
	switch mode := args[0]; mode {
	case "env":
		// Print the distributed variables (never the token) and, given a
		// directory, write the token to a file there for the test to read.
		for _, k := range []string{distenv.Rank, distenv.WorldSize, distenv.LocalRank, distenv.LocalWorldSize, distenv.MasterAddr, distenv.MasterPort,
			distenv.GroupRank, distenv.NodeRank, distenv.GroupWorldSize, distenv.RestartCount, distenv.MaxRestarts, distenv.GOMAXPROCS, distenv.OMPNumThreads, "LAUNCH_TEST_BASE"} {
			fmt.Printf("%s=%s\n", k, os.Getenv(k))
		}
		if len(args) > 1 {
			tok := os.Getenv(distenv.JobToken)
			os.WriteFile(filepath.Join(args[1], "token-"+strconv.Itoa(rank)), []byte(tok), 0o600)
		}
	case "lines": // lines K: K lines on stdout and on stderr, interleaved
		pad := strings.Repeat("x", 100)
		for i := range argInt(1) {
			fmt.Fprintf(os.Stdout, "rank %d out line %d %s\n", rank, i, pad)
			fmt.Fprintf(os.Stderr, "rank %d err line %d %s\n", rank, i, pad)
		}
	case "fail": // fail R CODE: rank R writes to stderr and exits CODE; the others wait
		if rank == argInt(1) {
			fmt.Fprintln(os.Stderr, "something went wrong")
			fmt.Fprintln(os.Stderr, "last words of rank", rank)
			os.Exit(argInt(2))
		}
		time.Sleep(helperTimeout)
	case "fail-rest-ok": // fail-rest-ok R CODE MS: rank R exits CODE at once; the others exit 0 after MS milliseconds
		if rank == argInt(1) {
			os.Exit(argInt(2))
		}
		time.Sleep(time.Duration(argInt(3)) * time.Millisecond)
		fmt.Println("rank", rank, "finished")
	case "selfkill": // selfkill R: rank R kills itself with SIGKILL; the others wait
		if rank == argInt(1) {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
		time.Sleep(helperTimeout)
	case "stopped": // stopped R: rank R stops itself (SIGSTOP); the others then fail naming it, as comm's survivors do
		if rank == argInt(1) {
			syscall.Kill(os.Getpid(), syscall.SIGSTOP)
			time.Sleep(helperTimeout)
		}
		time.Sleep(500 * time.Millisecond)
		fmt.Fprintf(os.Stderr, "comm: rank %d: allreduce/ring: lost rank %d (detected by rank %d: rank %d has not been heard from for 1s (stopped or hung?))\n",
			rank, argInt(1), rank, argInt(1))
		os.Exit(2)
	case "trap": // report the first SIGINT/SIGTERM and exit 0
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
		fmt.Println("ready")
		sig := <-sigs
		fmt.Println("got", sig)
	case "ignore": // ignore SIGINT and SIGTERM
		signal.Ignore(syscall.SIGINT, syscall.SIGTERM)
		fmt.Println("ready")
		time.Sleep(helperTimeout)
	case "ignore-or-fail": // ignore-or-fail R CODE: rank R fails once the others ignore SIGTERM
		if rank == argInt(1) {
			// The test creates the file once every worker is ready.
			fmt.Println("ready")
			waitForFile(os.Getenv("LAUNCH_TEST_GO"))
			os.Exit(argInt(2))
		}
		signal.Ignore(syscall.SIGINT, syscall.SIGTERM)
		fmt.Println("ready")
		time.Sleep(helperTimeout)
	case "store": // store: meet in the job's store, which rank 0 does not host (the launcher does); rank 0 never answers
		if os.Getenv(distenv.StoreHosted) != "1" {
			fmt.Fprintln(os.Stderr, "store: FATHOM_STORE_HOSTED is not 1")
			os.Exit(3)
		}
		world, _ := strconv.Atoi(os.Getenv(distenv.WorldSize))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		addr := net.JoinHostPort(os.Getenv(distenv.MasterAddr), os.Getenv(distenv.MasterPort))
		st, err := store.Dial(ctx, addr, []byte(os.Getenv(distenv.JobToken)), rank)
		if err != nil {
			fmt.Fprintln(os.Stderr, "store:", err)
			os.Exit(4)
		}
		defer st.Close()
		if n, err := st.Add(ctx, "arrived", 1); err != nil {
			fmt.Fprintln(os.Stderr, "store:", err)
			os.Exit(5)
		} else if n == int64(world) {
			st.Set(ctx, "all", []byte("here"))
		}
		if _, err := st.Get(ctx, "all"); err != nil {
			fmt.Fprintln(os.Stderr, "store:", err)
			os.Exit(6)
		}
		fmt.Println("met")
	case "collective": // collective R: a real group; rank R kills itself (SIGKILL) in attempt 0 after the first all-reduce
		count, _ := strconv.Atoi(os.Getenv(distenv.RestartCount))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		g, err := comm.NewFromEnv(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, "rendezvous:", err)
			os.Exit(3)
		}
		for step := range 3 {
			x := []float64{float64(rank + 1)}
			if err := comm.AllReduce(g, x, comm.Sum); err != nil {
				fmt.Fprintln(os.Stderr, "allreduce:", err)
				os.Exit(4)
			}
			if step == 0 && count == 0 && rank == argInt(1) {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
			fmt.Printf("attempt=%d step=%d sum=%g\n", count, step, x[0])
		}
		if err := g.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "close:", err)
			os.Exit(5)
		}
	case "elastic": // elastic W STEPS: a real group of WORLD_SIZE; all-reduce until told to stop, or STEPS times when WORLD_SIZE is W
		round, _ := strconv.Atoi(os.Getenv(distenv.RestartCount))
		world, _ := strconv.Atoi(os.Getenv(distenv.WorldSize))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		g, err := comm.NewFromEnv(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, "rendezvous:", err)
			os.Exit(3)
		}
		deadline := time.Now().Add(helperTimeout)
		for step := 0; time.Now().Before(deadline); step++ {
			x := []float64{1}
			if err := comm.AllReduce(g, x, comm.Sum); err != nil {
				fmt.Fprintln(os.Stderr, "allreduce:", err)
				os.Exit(4)
			}
			if step == 0 {
				fmt.Printf("rank=%d world=%d round=%d sum=%g ready\n", rank, world, round, x[0])
			}
			if world == argInt(1) && step+1 >= argInt(2) {
				fmt.Printf("rank=%d world=%d round=%d steps=%d done\n", rank, world, round, step+1)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := g.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "close:", err)
			os.Exit(5)
		}
	case "launcher": // launcher ENDPOINT ID CMD...: an elastic launcher of 1 to 2 nodes in its own process (to be killed), leases of 2s
		cfg := DefaultConfig()
		cfg.NNodes, cfg.MinNodes, cfg.RendezvousBackend = 2, 1, BackendEtcd
		cfg.RendezvousEndpoint, cfg.RendezvousID, cfg.RendezvousHost = args[1], args[2], "127.0.0.1"
		cfg.RendezvousLastCall, cfg.RendezvousTimeout, cfg.Grace = time.Second, 20*time.Second, 2*time.Second
		cfg.Command = args[3:]
		if err := cfg.Validate(); err != nil {
			fmt.Fprintln(os.Stderr, "launcher:", err)
			os.Exit(97)
		}
		cfg.RendezvousTTL = 2 * time.Second
		if _, err := Run(context.Background(), cfg); err != nil {
			fmt.Fprintln(os.Stderr, "launcher:", err)
			os.Exit(1)
		}
	case "restart": // restart K: rank 1 fails while FATHOM_RESTART_COUNT < K
		count, _ := strconv.Atoi(os.Getenv(distenv.RestartCount))
		fmt.Printf("count=%d\n", count)
		if rank == 1 && count < argInt(1) {
			fmt.Fprintln(os.Stderr, "failing at count", count)
			os.Exit(1)
		}
	case "grandchild": // start a child in our process group holding stdout; exit 0
		cmd := exec.Command("sleep", "60")
		cmd.Stdout = os.Stdout
		cmd.Start()
		fmt.Printf("child=%d\n", cmd.Process.Pid)
	case "escapee": // start a child in a new session holding stdout; exit 0
		cmd := exec.Command("sleep", "60")
		cmd.Stdout = os.Stdout
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		cmd.Start()
		fmt.Printf("child=%d\n", cmd.Process.Pid)
	case "noeol":
		fmt.Print("no newline at the end")
	default:
		fmt.Fprintln(os.Stderr, "helper: unknown mode", mode)
		os.Exit(98)
	}
}

// waitForFile waits (bounded) until path exists.
func waitForFile(path string) {
	deadline := time.Now().Add(helperTimeout)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// helperConfig returns a Config that runs the helper in the given mode.
func helperConfig(t *testing.T, n int, args ...string) (Config, *syncBuffer) {
	t.Helper()
	out := &syncBuffer{}
	// GORACE: a -race worker would otherwise sleep 1s at exit.
	env := mergeEnv(os.Environ(), helperEnv+"=1", "GORACE=atexit_sleep_ms=0")
	return Config{
		Command:      append([]string{os.Args[0]}, args...),
		NProcPerNode: n,
		Env:          env,
		Stdout:       out,
		Stderr:       out,
		Grace:        5 * time.Second,
	}, out
}

// syncBuffer is a bytes.Buffer safe for concurrent use, which tests can
// wait on.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor waits until s occurs at least count times in b, or fails the
// test after a bounded time.
func (b *syncBuffer) waitFor(t *testing.T, s string, count int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for strings.Count(b.String(), s) < count {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %d x %q; output so far:\n%s", count, s, b.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// checkNoLeak fails the test if the goroutine count does not come back to
// before (polled for a bounded time: exiting goroutines need a moment).
func checkNoLeak(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("goroutines: %d before, %d after Run:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// processGone reports whether pid has exited (absent, or a zombie waiting
// for its new parent to reap it).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false // cannot tell without /proc; assume alive
	}
	// Field 3, after "pid (comm)", is the state.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z' || s[i+2] == 'X'
	}
	return false
}
