//go:build unix

package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/internal/distenv"
)

// parseEnvOutput maps rank -> key -> value from "[r] KEY=VALUE" lines.
func parseEnvOutput(t *testing.T, out string) map[int]map[string]string {
	t.Helper()
	re := regexp.MustCompile(`^\[(\d+)\] ([A-Z_]+)=(.*)$`)
	got := map[int]map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		m := re.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		r, _ := strconv.Atoi(m[1])
		if got[r] == nil {
			got[r] = map[string]string{}
		}
		got[r][m[2]] = m[3]
	}
	return got
}

func TestRunWorkersGetDistinctEnv(t *testing.T) {
	before := runtime.NumGoroutine()
	const n = 3
	cfg, out := helperConfig(t, n, "env")
	cfg.ThreadsPerWorker = 1
	cfg.Env = append(cfg.Env, "LAUNCH_TEST_BASE=kept", "RANK=77", "GOMAXPROCS=64")
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out)
	}
	if res.MasterPort == 0 || res.MasterAddr != "127.0.0.1" {
		t.Errorf("master %s:%d", res.MasterAddr, res.MasterPort)
	}
	got := parseEnvOutput(t, out.String())
	if len(got) != n {
		t.Fatalf("output from %d ranks, want %d:\n%s", len(got), n, out)
	}
	for r := range n {
		want := map[string]string{
			"RANK": strconv.Itoa(r), "WORLD_SIZE": "3", "LOCAL_RANK": strconv.Itoa(r), "LOCAL_WORLD_SIZE": "3",
			"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": strconv.Itoa(res.MasterPort),
			"GROUP_RANK": "0", "NODE_RANK": "0", "GROUP_WORLD_SIZE": "1",
			"FATHOM_RESTART_COUNT": "0", "FATHOM_MAX_RESTARTS": "0",
			"GOMAXPROCS": "1", "OMP_NUM_THREADS": "1", "LAUNCH_TEST_BASE": "kept",
		}
		for k, v := range want {
			if got[r][k] != v {
				t.Errorf("rank %d: %s=%q, want %q", r, k, got[r][k], v)
			}
		}
	}
	for i, w := range res.Workers {
		if !w.Success() || w.Rank != i || w.LocalRank != i || w.Pid <= 0 {
			t.Errorf("worker %d result %+v", i, w)
		}
	}
	checkNoLeak(t, before)
}

// Two launchers of one job (here on one machine) give out ranks 0..3 once.
func TestRunMultiNodeRanks(t *testing.T) {
	port, err := FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		out string
		err error
	}
	results := make(chan outcome, 2)
	for node := range 2 {
		cfg, out := helperConfig(t, 2, "env")
		cfg.NNodes, cfg.NodeRank, cfg.MasterPort = 2, node, port
		cfg.Env = append(cfg.Env, distenv.JobToken+"=multi-node-test-token")
		go func() {
			_, err := Run(context.Background(), cfg)
			results <- outcome{out.String(), err}
		}()
	}
	seen := map[int]int{}
	for range 2 {
		o := <-results
		if o.err != nil {
			t.Fatalf("Run: %v\n%s", o.err, o.out)
		}
		for r, env := range parseEnvOutput(t, o.out) {
			seen[r]++
			node := r / 2
			if env["RANK"] != strconv.Itoa(r) || env["WORLD_SIZE"] != "4" || env["LOCAL_RANK"] != strconv.Itoa(r%2) ||
				env["NODE_RANK"] != strconv.Itoa(node) || env["GROUP_WORLD_SIZE"] != "2" || env["MASTER_PORT"] != strconv.Itoa(port) {
				t.Errorf("rank %d env %v", r, env)
			}
		}
	}
	for r := range 4 {
		if seen[r] != 1 {
			t.Errorf("rank %d seen %d times", r, seen[r])
		}
	}
}

func TestRunPrefixesWholeLines(t *testing.T) {
	const n, lines = 4, 400
	cfg, out := helperConfig(t, n, "lines", strconv.Itoa(lines))
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatalf("Run: %v", err)
	}
	re := regexp.MustCompile(`^\[(\d)\] rank (\d) (out|err) line (\d+) x{100}$`)
	next := map[string]int{}
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		m := re.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("line not whole or not prefixed: %q", line)
		}
		if m[1] != m[2] {
			t.Fatalf("prefix [%s] on a line of rank %s", m[1], m[2])
		}
		key := m[2] + m[3]
		if i, _ := strconv.Atoi(m[4]); i != next[key] {
			t.Fatalf("rank %s %s: line %d after %d", m[2], m[3], i, next[key]-1)
		}
		next[key]++
	}
	if len(next) != 2*n {
		t.Errorf("streams seen: %v", next)
	}
	for k, c := range next {
		if c != lines {
			t.Errorf("%s: %d lines, want %d", k, c, lines)
		}
	}
}

func TestRunNoPrefix(t *testing.T) {
	cfg, out := helperConfig(t, 2, "noeol")
	cfg.NoPrefix = true
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if want := "no newline at the end\nno newline at the end\n"; out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
}

func TestRunFailureStopsOthers(t *testing.T) {
	before := runtime.NumGoroutine()
	cfg, out := helperConfig(t, 3, "fail", "1", "7")
	res, err := Run(context.Background(), cfg)
	if !errors.Is(err, ErrWorkerFailed) {
		t.Fatalf("Run error %v, want ErrWorkerFailed\n%s", err, out)
	}
	if !strings.Contains(err.Error(), "rank 1 exit code 7") {
		t.Errorf("error %q does not name rank 1 and its code", err)
	}
	if len(res.Failures) != 1 || res.Failures[0].Rank != 1 || res.Failures[0].ExitCode != 7 {
		t.Fatalf("failures %+v", res.Failures)
	}
	for _, w := range res.Workers {
		if w.Rank != 1 && w.Signal != syscall.SIGTERM {
			t.Errorf("rank %d ended with %s, want SIGTERM", w.Rank, w.Status())
		}
	}
	// The others sleep for a minute; being here much earlier shows they
	// were stopped (not a timing test: the margin is tens of seconds).
	if res.Duration > helperTimeout/2 {
		t.Errorf("run took %v: the other workers were not stopped", res.Duration)
	}
	summary := out.String()
	for _, want := range []string{
		"rank 1 failed first: exit code 7 after",
		"2 other worker(s) stopped by signal",
		"last 2 line(s) of rank 1's stderr:",
		"    something went wrong\n    last words of rank 1\n",
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}
	if res.Summary() == "" || !strings.Contains(summary, res.Summary()) {
		t.Errorf("Result.Summary not printed")
	}
	checkNoLeak(t, before)
}

func TestRunWorkerKilledBySignal(t *testing.T) {
	cfg, out := helperConfig(t, 2, "selfkill", "0")
	res, err := Run(context.Background(), cfg)
	if !errors.Is(err, ErrWorkerFailed) {
		t.Fatalf("Run error %v\n%s", err, out)
	}
	f := res.Failures[0]
	if f.Rank != 0 || f.Signal != syscall.SIGKILL || f.ExitCode != -1 {
		t.Errorf("failure %+v", f)
	}
	if !strings.Contains(out.String(), "rank 0 failed first: signal SIGKILL") {
		t.Errorf("summary:\n%s", out)
	}
}

// Workers that ignore SIGTERM are killed when the grace period ends.
func TestRunGraceThenKill(t *testing.T) {
	dir := t.TempDir()
	goFile := filepath.Join(dir, "go")
	cfg, out := helperConfig(t, 3, "ignore-or-fail", "0", "5")
	cfg.Env = append(cfg.Env, "LAUNCH_TEST_GO="+goFile)
	cfg.Grace = 200 * time.Millisecond
	done := make(chan struct{})
	var res Result
	var err error
	go func() { res, err = Run(context.Background(), cfg); close(done) }()
	out.waitFor(t, "ready", 3)
	os.WriteFile(goFile, nil, 0o600)
	<-done
	if !errors.Is(err, ErrWorkerFailed) || res.Failures[0].Rank != 0 || res.Failures[0].ExitCode != 5 {
		t.Fatalf("err %v, failures %+v\n%s", err, res.Failures, out)
	}
	for _, w := range res.Workers[1:] {
		if w.Signal != syscall.SIGKILL {
			t.Errorf("rank %d ended with %s, want SIGKILL after the grace period", w.Rank, w.Status())
		}
	}
}

func TestRunForwardsSignals(t *testing.T) {
	before := runtime.NumGoroutine()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(signalName(sig), func(t *testing.T) {
			cfg, out := helperConfig(t, 3, "trap")
			sigs := make(chan os.Signal, 1)
			cfg.Signals = sigs
			done := make(chan struct{})
			var res Result
			var err error
			go func() { res, err = Run(context.Background(), cfg); close(done) }()
			out.waitFor(t, "ready", 3)
			sigs <- sig
			<-done
			if !errors.Is(err, ErrInterrupted) || errors.Is(err, ErrWorkerFailed) {
				t.Fatalf("Run error %v, want ErrInterrupted\n%s", err, out)
			}
			if !res.Interrupted || res.Signal != sig || len(res.Failures) != 0 {
				t.Errorf("result: interrupted=%v signal=%v failures=%v", res.Interrupted, res.Signal, res.Failures)
			}
			for r := range 3 {
				if want := fmt.Sprintf("[%d] got %v", r, sig); !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
				if !res.Workers[r].Success() {
					t.Errorf("rank %d: %s", r, res.Workers[r].Status())
				}
			}
		})
	}
	checkNoLeak(t, before)
}

// A second signal kills workers that ignore the first, without waiting for
// the grace period.
func TestRunSecondSignalKills(t *testing.T) {
	cfg, out := helperConfig(t, 2, "ignore")
	cfg.Grace = time.Minute
	sigs := make(chan os.Signal, 2)
	cfg.Signals = sigs
	done := make(chan struct{})
	var res Result
	var err error
	go func() { res, err = Run(context.Background(), cfg); close(done) }()
	out.waitFor(t, "ready", 2)
	sigs <- syscall.SIGINT
	sigs <- syscall.SIGINT
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after a second signal")
	}
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err %v", err)
	}
	for _, w := range res.Workers {
		if w.Signal != syscall.SIGKILL {
			t.Errorf("rank %d: %s, want SIGKILL", w.Rank, w.Status())
		}
	}
}

func TestRunContextCancel(t *testing.T) {
	cfg, out := helperConfig(t, 2, "trap")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	var err error
	go func() { _, err = Run(ctx, cfg); close(done) }()
	out.waitFor(t, "ready", 2)
	cancel()
	<-done
	if !errors.Is(err, ErrInterrupted) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if strings.Count(out.String(), "got terminated") != 2 {
		t.Errorf("workers did not get SIGTERM:\n%s", out)
	}
}

func TestRunRestarts(t *testing.T) {
	for _, test := range []struct {
		failures, maxRestarts int
		ok                    bool
	}{
		{0, 0, true}, {2, 2, true}, {2, 3, true}, {3, 2, false},
	} {
		t.Run(fmt.Sprintf("fail%d_max%d", test.failures, test.maxRestarts), func(t *testing.T) {
			cfg, out := helperConfig(t, 2, "restart", strconv.Itoa(test.failures))
			cfg.MaxRestarts = test.maxRestarts
			res, err := Run(context.Background(), cfg)
			if (err == nil) != test.ok {
				t.Fatalf("err %v, want ok=%v\n%s", err, test.ok, out)
			}
			attempts := min(test.failures, test.maxRestarts) + 1
			if res.Restarts != attempts-1 || len(res.Failures) != min(test.failures, attempts) {
				t.Errorf("restarts %d, failures %d", res.Restarts, len(res.Failures))
			}
			// Every attempt saw its own restart count: rank 1 prints it before
			// failing (rank 0 may be stopped before it prints, except in a
			// successful last attempt).
			for c := range attempts {
				if want := fmt.Sprintf("[1] count=%d\n", c); !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			if want := fmt.Sprintf("[0] count=%d\n", attempts-1); test.ok && !strings.Contains(out.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
			if strings.Contains(out.String(), fmt.Sprintf("count=%d", attempts)) {
				t.Errorf("more attempts than expected:\n%s", out)
			}
			if test.failures > 0 && test.maxRestarts > 0 && !strings.Contains(out.String(), "restarting the local group (restart 1 of") {
				t.Errorf("no restart notice:\n%s", out)
			}
		})
	}
}

func TestRunJobToken(t *testing.T) {
	t.Run("generated", func(t *testing.T) {
		dir := t.TempDir()
		cfg, out := helperConfig(t, 3, "env", dir)
		cfg.Env = mergeEnv(cfg.Env, distenv.JobToken+"=") // empty: treated as absent
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !res.TokenGenerated {
			t.Errorf("TokenGenerated = false")
		}
		tok := readTokens(t, dir, 3)
		if len(tok) != 64 {
			t.Errorf("generated token has %d characters, want 64", len(tok))
		}
		assertNotPrinted(t, tok, out.String(), fmt.Sprintf("%+v", res))
	})
	t.Run("inherited", func(t *testing.T) {
		dir := t.TempDir()
		const secret = "inherited-secret-0123456789"
		cfg, out := helperConfig(t, 2, "env", dir)
		cfg.Env = append(cfg.Env, distenv.JobToken+"="+secret)
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.TokenGenerated {
			t.Errorf("TokenGenerated = true with FATHOM_JOB_TOKEN set")
		}
		if tok := readTokens(t, dir, 2); tok != secret {
			t.Errorf("workers got a different token")
		}
		assertNotPrinted(t, secret, out.String(), fmt.Sprintf("%+v", res))
	})
	t.Run("not in failure output", func(t *testing.T) {
		const secret = "failure-secret-9876543210"
		cfg, out := helperConfig(t, 2, "fail", "0", "3")
		cfg.Env = append(cfg.Env, distenv.JobToken+"="+secret)
		res, err := Run(context.Background(), cfg)
		if err == nil {
			t.Fatal("Run succeeded")
		}
		assertNotPrinted(t, secret, out.String(), err.Error(), res.Summary(), fmt.Sprintf("%+v", res))
	})
}

// readTokens returns the token the n workers wrote, checking they agree.
func readTokens(t *testing.T, dir string, n int) string {
	t.Helper()
	var tok string
	for r := range n {
		b, err := os.ReadFile(filepath.Join(dir, "token-"+strconv.Itoa(r)))
		if err != nil {
			t.Fatal(err)
		}
		if r > 0 && string(b) != tok {
			t.Fatalf("rank %d has a different token", r)
		}
		tok = string(b)
	}
	return tok
}

func assertNotPrinted(t *testing.T, secret string, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if strings.Contains(s, secret) {
			t.Errorf("the job token appears in launcher output or results")
		}
	}
}

func TestRunStartFailure(t *testing.T) {
	before := runtime.NumGoroutine()
	cfg, _ := helperConfig(t, 2, "env")
	cfg.Command = []string{filepath.Join(t.TempDir(), "no-such-program")}
	_, err := Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "start rank 0") {
		t.Fatalf("err %v", err)
	}
	checkNoLeak(t, before)
}

// A background child left in the worker's process group is killed when
// the worker exits, so its open stdout cannot hold the run.
func TestRunKillsLeftoverChildren(t *testing.T) {
	before := runtime.NumGoroutine()
	cfg, out := helperConfig(t, 1, "grandchild")
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatalf("Run: %v\n%s", err, out)
	}
	pid := childPid(t, out.String())
	deadline := time.Now().Add(5 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("leftover child %d still alive after Run", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	checkNoLeak(t, before)
}

// A child that left the process group (new session) and keeps stdout open
// cannot make Run wait forever: the drain timeout closes the pipe.
func TestRunDrainTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the drain timeout")
	}
	before := runtime.NumGoroutine()
	cfg, out := helperConfig(t, 1, "escapee")
	done := make(chan error, 1)
	go func() { _, err := Run(context.Background(), cfg); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run waits on a pipe held by an escaped child")
	}
	syscall.Kill(childPid(t, out.String()), syscall.SIGKILL)
	checkNoLeak(t, before)
}

func childPid(t *testing.T, out string) int {
	t.Helper()
	m := regexp.MustCompile(`child=(\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no child pid in output:\n%s", out)
	}
	pid, _ := strconv.Atoi(m[1])
	return pid
}

func TestRunCancelledBeforeStart(t *testing.T) {
	cfg, out := helperConfig(t, 2, "env")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Run(ctx, cfg)
	if !errors.Is(err, ErrInterrupted) || !res.Interrupted || len(res.Workers) != 0 || out.String() != "" {
		t.Errorf("err %v, result %+v, output %q", err, res, out)
	}
}

// A worker that is stopped (SIGSTOP) makes the others fail naming it: the
// summary blames it, not the first to exit, and the run ends without
// waiting for the grace period (the stopped worker is resumed to act on its
// SIGTERM).
func TestRunStoppedWorkerBlamed(t *testing.T) {
	cfg, out := helperConfig(t, 3, "stopped", "1")
	cfg.Grace = helperTimeout
	res, err := Run(context.Background(), cfg)
	if !errors.Is(err, ErrWorkerFailed) {
		t.Fatalf("Run error %v\n%s", err, out)
	}
	if !strings.Contains(err.Error(), "rank 1 (named by rank") {
		t.Errorf("error %q does not blame rank 1", err)
	}
	if c, why := res.Culprit(); c != 1 {
		t.Errorf("culprit %d (%s), want 1", c, why)
	}
	if runtime.GOOS == "linux" && !res.Workers[1].Stopped {
		t.Errorf("rank 1 not seen stopped: %+v", res.Workers[1])
	}
	summary := out.String()
	if !strings.Contains(summary, "fathom run: rank 1 failed: rank ") || !strings.Contains(summary, "reported it lost") {
		t.Errorf("summary does not blame rank 1:\n%s", summary)
	}
	if res.Duration > helperTimeout/2 {
		t.Errorf("run took %v: the stopped worker waited for the grace period", res.Duration)
	}
}

func TestCulprit(t *testing.T) {
	for _, test := range []struct {
		name    string
		tail    []string
		stopped int // rank stopped, -1 for none
		want    int
	}{
		{name: "plain failure", tail: []string{"panic: boom"}, stopped: -1, want: 0},
		{name: "named lost", tail: []string{"x", "comm: rank 0: allreduce: lost rank 2 (detected by rank 3: eof)"}, stopped: -1, want: 2},
		{name: "last mention wins", tail: []string{"lost rank 1 (...)", "lost rank 3 (...)"}, stopped: -1, want: 3},
		{name: "names itself", tail: []string{"lost rank 0"}, stopped: -1, want: 0},
		{name: "stopped, nothing named", tail: nil, stopped: 2, want: 2},
		{name: "named beats stopped", tail: []string{"lost rank 1"}, stopped: 2, want: 1},
	} {
		r := Result{Failures: []WorkerResult{{Rank: 0, ExitCode: 2, StderrTail: test.tail}}}
		for i := range 4 {
			r.Workers = append(r.Workers, WorkerResult{Rank: i, Stopped: i == test.stopped})
		}
		if got, why := r.Culprit(); got != test.want {
			t.Errorf("%s: culprit %d (%s), want %d", test.name, got, why, test.want)
		}
	}
}

// TestRunAllInterfacesSaysSo: --master-addr 0.0.0.0 exposes the store on
// every interface, and the launcher says so (loopback says nothing).
func TestRunAllInterfacesSaysSo(t *testing.T) {
	for _, test := range []struct {
		addr string
		warn bool
	}{{"0.0.0.0", true}, {"127.0.0.1", false}} {
		cfg, out := helperConfig(t, 1, "env")
		cfg.MasterAddr = test.addr
		if _, err := Run(context.Background(), cfg); err != nil {
			t.Fatalf("%s: %v\n%s", test.addr, err, out)
		}
		if got := strings.Contains(out.String(), "every interface"); got != test.warn {
			t.Errorf("--master-addr %s: notice printed %v, want %v:\n%s", test.addr, got, test.warn, out)
		}
	}
}

// Two launchers of two workers each, on loopback: a worker of node 1 is
// killed (SIGKILL) in the first attempt; both launchers restart together
// and the second attempt's group forms and finishes, without meeting the
// first attempt's keys.
func TestRunRestartsAcrossNodes(t *testing.T) {
	port, err := FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		res Result
		out string
		err error
	}
	results := make([]chan outcome, 2)
	begin := time.Now()
	for node := range 2 {
		results[node] = make(chan outcome, 1)
		cfg, out := helperConfig(t, 2, "collective", "3")
		cfg.NNodes, cfg.NodeRank, cfg.MasterPort, cfg.MaxRestarts = 2, node, port, 2
		cfg.RendezvousTimeout = 30 * time.Second
		cfg.Env = append(cfg.Env, distenv.JobToken+"=multi-node-test-token", distenv.HeartbeatTimeout+"=2s", distenv.Timeout+"=20s")
		go func() {
			res, err := Run(context.Background(), cfg)
			results[node] <- outcome{res, out.String(), err}
		}()
	}
	o0 := ""
	for node := range 2 {
		o := <-results[node]
		o0 += o.out
		if o.err != nil {
			t.Fatalf("node %d: %v\n%s", node, o.err, o.out)
		}
		if o.res.Restarts != 1 {
			t.Errorf("node %d: %d restarts, want 1\n%s", node, o.res.Restarts, o.out)
		}
		for r := 2 * node; r < 2*node+2; r++ {
			if want := fmt.Sprintf("[%d] attempt=1 step=2 sum=10\n", r); !strings.Contains(o.out, want) {
				t.Errorf("node %d: output lacks %q:\n%s", node, want, o.out)
			}
		}
		if !strings.Contains(o.out, "restarting the workers of every node (restart 1 of 2)") {
			t.Errorf("node %d: no restart notice:\n%s", node, o.out)
		}
	}
	t.Logf("two nodes restarted and finished in %v", time.Since(begin).Round(time.Millisecond))
	if testing.Verbose() {
		t.Log(o0)
	}
}

func TestRunSeveralNodesNeedAToken(t *testing.T) {
	cfg, _ := helperConfig(t, 1, "env")
	cfg.NNodes, cfg.MasterPort = 2, 1
	if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), distenv.JobToken) {
		t.Fatalf("err = %v", err)
	}
}

func TestVerdict(t *testing.T) {
	for _, c := range []struct {
		outs              []string
		done, restartable bool
	}{
		{[]string{"ok", "ok"}, true, false},
		{[]string{"failed", "stopped"}, false, true},
		{[]string{"stopped", "failed", "failed"}, false, true},
		{[]string{"ok", "failed"}, false, false},
		{[]string{"interrupted", "stopped"}, false, false},
		{[]string{"failed", "interrupted"}, false, false},
	} {
		done, restartable, why := verdict(c.outs)
		if done != c.done || restartable != c.restartable {
			t.Errorf("verdict(%v) = %v, %v (%s)", c.outs, done, restartable, why)
		}
	}
}

// TestRunKeepGoing: with KeepGoing a failed worker leaves the others to
// run to their end; Run then reports the failure (and restarts are
// refused with it).
func TestRunKeepGoing(t *testing.T) {
	cfg, out := helperConfig(t, 3, "fail-rest-ok", "1", "7", "300")
	cfg.KeepGoing = true
	res, err := Run(context.Background(), cfg)
	if !errors.Is(err, ErrWorkerFailed) {
		t.Fatalf("Run error %v, want ErrWorkerFailed\n%s", err, out)
	}
	if len(res.Failures) != 1 || res.Failures[0].Rank != 1 || res.Failures[0].ExitCode != 7 {
		t.Fatalf("failures %+v", res.Failures)
	}
	for _, w := range res.Workers {
		if w.Rank != 1 && (!w.Success() || w.Stopped) {
			t.Errorf("rank %d ended with %s, want success", w.Rank, w.Status())
		}
	}
	for _, want := range []string{"rank 0 finished", "rank 2 finished", "the other workers keep going"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	cfg.MaxRestarts = 1
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "keep-going") {
		t.Errorf("keep-going with restarts: %v", err)
	}
}

// TestSingleNodeHostsStore: on one node the launcher, not rank 0, hosts
// the job's store (FATHOM_STORE_HOSTED=1): the workers meet there
// although rank 0 serves nothing.
func TestSingleNodeHostsStore(t *testing.T) {
	cfg, out := helperConfig(t, 3, "store")
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if got := strings.Count(out.String(), "met\n"); got != 3 || len(res.Workers) != 3 {
		t.Fatalf("%d of 3 workers met in the launcher's store:\n%s", got, out.String())
	}
}
