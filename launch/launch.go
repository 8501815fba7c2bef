package launch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fathom-ml/fathom/internal/distenv"
)

// Sentinel errors of Run; test with errors.Is.
var (
	// ErrWorkerFailed: a worker exited non-zero or was killed by a signal,
	// and no restarts were left.
	ErrWorkerFailed = errors.New("launch: worker failed")
	// ErrInterrupted: a signal arrived on Config.Signals or the context was
	// cancelled; the workers were stopped and not restarted.
	ErrInterrupted = errors.New("launch: interrupted")
)

// drainTimeout bounds how long Run waits, after every worker has exited and
// its process group is killed, for the workers' output pipes to reach EOF.
// Only a process that left the group (setsid) can keep a pipe open that
// long; its remaining output is dropped.
const drainTimeout = 2 * time.Second

// WorkerResult is how one worker ended.
type WorkerResult struct {
	Rank      int // global rank
	LocalRank int
	Pid       int
	// ExitCode is the process's exit code, or -1 if a signal killed it.
	ExitCode int
	// Signal is the signal that killed the process, 0 if it exited.
	Signal   syscall.Signal
	Duration time.Duration // from start to exit
	// StderrTail holds the last Config.TailLines lines of its stderr.
	StderrTail []string
	// Stopped is set when the process was stopped (SIGSTOP, SIGTSTP, a
	// debugger; Linux only) at the moment another worker of its attempt
	// failed first: the likely cause of the failure.
	Stopped bool
}

// LostRank returns the rank this worker's last stderr lines name as lost,
// following package comm's wording ("lost rank 3 (detected by rank 0: …)":
// a dead peer, or one not heard from within the heartbeat timeout), and
// whether there was one. The last mention wins.
func (w WorkerResult) LostRank() (int, bool) {
	for i := len(w.StderrTail) - 1; i >= 0; i-- {
		if m := lostRankRE.FindAllStringSubmatch(w.StderrTail[i], -1); m != nil {
			r, err := strconv.Atoi(m[len(m)-1][1])
			return r, err == nil
		}
	}
	return 0, false
}

var lostRankRE = regexp.MustCompile(`lost rank (\d+)`)

// Culprit names the rank most likely to have caused the failure of the
// last failed attempt, and why: the rank the first worker to fail named as
// lost (the survivors of a stopped, hung or dead worker exit naming it, and
// the first of them to exit is not the cause), else a worker that was
// stopped when the first failure happened, else the first worker to fail.
func (r Result) Culprit() (rank int, why string) {
	if len(r.Failures) == 0 {
		return -1, ""
	}
	f := r.Failures[len(r.Failures)-1]
	stopped := ""
	for _, w := range r.Workers {
		if w.Stopped {
			stopped = fmt.Sprintf("rank %d's process was stopped (SIGSTOP?) when rank %d failed", w.Rank, f.Rank)
			break
		}
	}
	if lost, ok := f.LostRank(); ok && lost != f.Rank {
		why = fmt.Sprintf("rank %d, the first to exit, reported it lost", f.Rank)
		for _, w := range r.Workers {
			if w.Rank == lost && w.Stopped {
				why += fmt.Sprintf("; its process was stopped (SIGSTOP?) when rank %d failed", f.Rank)
			}
		}
		return lost, why
	}
	for _, w := range r.Workers {
		if w.Stopped {
			return w.Rank, stopped
		}
	}
	return f.Rank, ""
}

// Success reports whether the worker exited with code 0.
func (w WorkerResult) Success() bool { return w.ExitCode == 0 && w.Signal == 0 }

// SignalName is the name of the signal that killed the worker ("SIGKILL"),
// or "" if it exited.
func (w WorkerResult) SignalName() string {
	if w.Signal == 0 {
		return ""
	}
	return signalName(w.Signal)
}

// Status describes the ending: "exit code 3", "signal SIGKILL" or
// "exit code 0".
func (w WorkerResult) Status() string {
	if w.Signal != 0 {
		return "signal " + w.SignalName()
	}
	return fmt.Sprintf("exit code %d", w.ExitCode)
}

// Result is the outcome of Run.
type Result struct {
	// Workers is how each worker of the last attempt ended, by local rank.
	Workers []WorkerResult
	// Failures holds the first failed worker of every failed attempt, in
	// order; its last element caused Run's ErrWorkerFailed, if any.
	Failures []WorkerResult
	// Restarts is how many times the local group was restarted (with the
	// etcd backend: how many failure restarts the job used; changes of
	// membership do not count).
	Restarts int
	// Rounds is, with the etcd backend, how many rendezvous rounds this
	// node took part in, and Round the number of the last
	// (FATHOM_RESTART_COUNT of its workers).
	Rounds, Round int
	// Interrupted is set when a signal or the context stopped the run;
	// Signal is the first signal received (nil for the context).
	Interrupted bool
	Signal      os.Signal
	// MasterAddr and MasterPort are the values the workers were given.
	MasterAddr string
	MasterPort int
	// TokenGenerated tells whether the job token was generated (true) or
	// inherited from FATHOM_JOB_TOKEN. The token itself is never returned.
	TokenGenerated bool
	Duration       time.Duration
}

// Summary describes the failure that ended the run, in a few lines for a
// human: which rank caused the failure (Culprit) when that is not the
// first to exit, which rank failed first, how, after how long, and the last
// lines of its stderr. It is "" when no worker failed.
func (r Result) Summary() string {
	if len(r.Failures) == 0 {
		return ""
	}
	f := r.Failures[len(r.Failures)-1]
	var b strings.Builder
	culprit, why := r.Culprit()
	if culprit != f.Rank {
		fmt.Fprintf(&b, "fathom run: rank %d failed: %s\n", culprit, why)
		fmt.Fprintf(&b, "fathom run: rank %d exited first: %s after %v (local rank %d, pid %d)\n",
			f.Rank, f.Status(), roundDuration(f.Duration), f.LocalRank, f.Pid)
	} else {
		fmt.Fprintf(&b, "fathom run: rank %d failed first: %s after %v (local rank %d, pid %d)\n",
			f.Rank, f.Status(), roundDuration(f.Duration), f.LocalRank, f.Pid)
	}
	stopped := 0
	for _, w := range r.Workers {
		if w.Rank != f.Rank && w.Signal != 0 {
			stopped++
		}
	}
	fmt.Fprintf(&b, "fathom run: %d other worker(s) stopped by signal; %d restart(s) used\n", stopped, r.Restarts)
	if len(f.StderrTail) > 0 {
		fmt.Fprintf(&b, "fathom run: last %d line(s) of rank %d's stderr:\n", len(f.StderrTail), f.Rank)
		for _, line := range f.StderrTail {
			fmt.Fprintf(&b, "    %s\n", line)
		}
	} else {
		fmt.Fprintf(&b, "fathom run: rank %d wrote nothing to stderr\n", f.Rank)
	}
	return b.String()
}

// Run starts cfg.NProcPerNode workers of cfg.Command with the distributed
// environment set, streams their output, and waits for all of them.
//
// When a worker fails, Run stops the others (SIGTERM, then SIGKILL after
// cfg.Grace) and restarts the group with FATHOM_RESTART_COUNT incremented,
// up to cfg.MaxRestarts times; then it prints Result.Summary to cfg.Stderr
// and returns an error wrapping ErrWorkerFailed. A signal on cfg.Signals is
// forwarded to every worker (a second one sends SIGKILL), and cancelling ctx
// acts like SIGTERM; both end the run with an error wrapping ErrInterrupted
// (or ErrWorkerFailed if a worker had failed first). A worker that cannot be
// started ends the run at once. Run returns only after every worker process
// has exited, and leaves no goroutine behind.
func Run(ctx context.Context, cfg Config) (res Result, err error) {
	begin := time.Now()
	defer func() { res.Duration = time.Since(begin) }()

	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return res, err
	}
	token, generated, err := cfg.jobToken()
	if err != nil {
		return res, err
	}
	if cfg.elastic() {
		res.TokenGenerated = generated
		if ctx.Err() != nil {
			res.Interrupted = true
			return res, fmt.Errorf("%w: %w", ErrInterrupted, context.Cause(ctx))
		}
		stdout, stderr := outputs(cfg.Stdout, cfg.Stderr)
		l := &launcher{cfg: cfg, token: token, stdout: stdout, stderr: stderr}
		err = l.runElastic(ctx, &res)
		return res, err
	}
	port := cfg.MasterPort
	if port == 0 {
		if port, err = FreePort(cfg.MasterAddr); err != nil {
			return res, err
		}
	}
	stdout, stderr := outputs(cfg.Stdout, cfg.Stderr)
	if ctx.Err() != nil {
		res.Interrupted = true
		return res, fmt.Errorf("%w: %w", ErrInterrupted, context.Cause(ctx))
	}
	l := &launcher{cfg: cfg, token: token, port: port, stdout: stdout, stderr: stderr}
	res.MasterAddr, res.MasterPort, res.TokenGenerated = cfg.MasterAddr, port, generated
	if ip := net.ParseIP(cfg.MasterAddr); ip != nil && ip.IsUnspecified() {
		l.notef("fathom run: --master-addr %s: the job's rendezvous store listens on port %d of every interface of its host; "+
			"anyone who can reach it may try to connect (each connection must prove the job token; refusals are logged)\n",
			cfg.MasterAddr, port)
	}

	var co *coordinator
	if cfg.NNodes > 1 {
		if co, err = l.openCoordinator(ctx); err != nil {
			return res, err
		}
		defer co.close()
		l.hosted = true
	} else {
		// The launcher hosts the job's store rather than rank 0: a busy
		// worker's scheduler answers the others' requests (a prediction's
		// work queue, say) only between its own computations, tens of
		// milliseconds late, while the launcher is idle; and the store
		// outlives a rank 0 that fails.
		srv, err := l.hostStore()
		if err != nil {
			return res, err
		}
		defer srv.Close()
		l.hosted = true
	}
	for restart := 0; ; restart++ {
		var remote <-chan string
		stopWatch := func() {}
		report := func(string) {}
		if co != nil {
			if err := co.join(ctx, restart); err != nil {
				return res, err
			}
			remote, stopWatch = co.watch(ctx, restart)
			report = func(msg string) { co.report(restart, msg) }
		}
		g, err := l.runGroup(ctx, restart, remote, report)
		stopWatch()
		res.Workers, res.Restarts = g.workers, restart
		if err != nil {
			return res, err
		}
		if g.failed >= 0 {
			res.Failures = append(res.Failures, g.workers[g.failed])
		}
		if co != nil {
			again, err := l.afterAttempt(ctx, co, restart, g, &res)
			if again {
				continue
			}
			return res, err
		}
		if !g.interrupted && g.failed >= 0 && restart < cfg.MaxRestarts {
			f := g.workers[g.failed]
			blame := ""
			if c, why := (Result{Workers: g.workers, Failures: []WorkerResult{f}}).Culprit(); c != f.Rank {
				blame = fmt.Sprintf("; rank %d is the likely cause: %s", c, why)
			}
			l.notef("fathom run: rank %d failed (%s after %v%s); restarting the local group (restart %d of %d)\n",
				f.Rank, f.Status(), roundDuration(f.Duration), blame, restart+1, cfg.MaxRestarts)
			g.interrupted, g.signal = l.pendingInterrupt(ctx)
			if !g.interrupted {
				continue
			}
		}
		if g.interrupted {
			res.Interrupted, res.Signal = true, g.signal
		}
		switch {
		case g.failed >= 0:
			f := res.Failures[len(res.Failures)-1]
			l.notef("%s", res.Summary())
			if c, _ := res.Culprit(); c != f.Rank {
				return res, fmt.Errorf("%w: rank %d (named by rank %d, which exited first: %s after %v)",
					ErrWorkerFailed, c, f.Rank, f.Status(), roundDuration(f.Duration))
			}
			return res, fmt.Errorf("%w: rank %d %s after %v", ErrWorkerFailed, f.Rank, f.Status(), roundDuration(f.Duration))
		case g.interrupted:
			return res, l.interruptErr(ctx, g.signal)
		}
		return res, nil
	}
}

// jobToken returns the job's secret (JobToken of the workers'
// environment); a job of several nodes must be given one, the same on
// every node.
func (cfg Config) jobToken() (token string, generated bool, err error) {
	token, generated, err = JobToken(cfg.Env)
	if err != nil {
		return "", false, err
	}
	if generated && (cfg.NNodes > 1 || cfg.elastic()) {
		with := fmt.Sprintf("--nnodes %d", cfg.NNodes)
		if cfg.elastic() {
			with = "--rdzv-backend " + BackendEtcd
		}
		return "", false, fmt.Errorf("%w: with %s every node needs the same secret: export %s (e.g. $(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \\n')) on every node before starting its launcher",
			ErrConfig, with, distenv.JobToken)
	}
	return token, generated, nil
}

// launcher holds what every attempt of one Run shares.
type launcher struct {
	cfg    Config
	token  string
	port   int
	stdout *lockedWriter
	stderr *lockedWriter
	hosted bool // the launcher (node 0's) hosts the store
}

// cause describes what ended group g: its local failure (as the other
// nodes are told), else the failure another node reported.
func (l *launcher) cause(g group) string {
	if g.failed < 0 {
		return g.remote
	}
	f := g.workers[g.failed]
	return fmt.Sprintf("node %d: rank %d failed (%s after %v)", l.cfg.NodeRank, f.Rank, f.Status(), roundDuration(f.Duration))
}

// workerFailed prints the summary and returns Run's error for the last
// local failure of a job of several nodes, whose nodes' verdict was why.
func (l *launcher) workerFailed(res *Result, why string) error {
	l.notef("%s", res.Summary())
	f := res.Failures[len(res.Failures)-1]
	return fmt.Errorf("%w: rank %d %s after %v (%s)", ErrWorkerFailed, f.Rank, f.Status(), roundDuration(f.Duration), why)
}

// afterAttempt ends attempt restart of a job of several nodes: it publishes
// this node's outcome, reads every node's and says whether to go on to the
// next attempt; if not, it returns Run's error (nil when every node
// succeeded).
func (l *launcher) afterAttempt(ctx context.Context, co *coordinator, restart int, g group, res *Result) (again bool, err error) {
	outcome := outcomeOK
	switch {
	case g.interrupted:
		outcome = outcomeInterrupted
	case g.failed >= 0:
		outcome = outcomeFailed
	case g.remote != "":
		outcome = outcomeStopped
	}
	outs, err := co.finish(context.WithoutCancel(ctx), restart, outcome)
	if err != nil {
		return false, err
	}
	done, restartable, why := verdict(outs)
	if done {
		co.linger(context.Background(), restart)
		return false, nil
	}
	cause := l.cause(g)
	if restartable && restart < l.cfg.MaxRestarts && !g.interrupted {
		if g.interrupted, g.signal = l.pendingInterrupt(ctx); !g.interrupted {
			l.notef("fathom run: attempt %d ended: %s (%s); restarting the workers of every node (restart %d of %d)\n",
				restart, why, cause, restart+1, l.cfg.MaxRestarts)
			return true, nil
		}
		co.report(restart+1, fmt.Sprintf("node %d interrupted", l.cfg.NodeRank))
	}
	co.linger(context.Background(), restart)
	if g.interrupted {
		res.Interrupted, res.Signal = true, g.signal
		return false, l.interruptErr(ctx, g.signal)
	}
	if g.failed >= 0 {
		return false, l.workerFailed(res, why)
	}
	l.notef("fathom run: attempt %d ended: %s (%s); %d restart(s) used\n", restart, why, cause, restart)
	return false, fmt.Errorf("%w: %s: %s", ErrWorkerFailed, why, cause)
}

// notef writes a launcher message to stderr, not interleaved with worker lines.
func (l *launcher) notef(format string, args ...any) {
	fmt.Fprintf(l.stderr, format, args...)
}

func (l *launcher) interruptErr(ctx context.Context, sig os.Signal) error {
	if sig != nil {
		return fmt.Errorf("%w by %s", ErrInterrupted, osSignalName(sig))
	}
	return fmt.Errorf("%w: %w", ErrInterrupted, context.Cause(ctx))
}

// pendingInterrupt reports, without blocking, whether a signal or the
// context's end arrived while no worker was running.
func (l *launcher) pendingInterrupt(ctx context.Context) (bool, os.Signal) {
	select {
	case sig, ok := <-l.cfg.Signals:
		if ok {
			return true, sig
		}
	default:
	}
	select {
	case <-ctx.Done():
		return true, nil
	default:
	}
	return false, nil
}

// proc is one running worker.
type proc struct {
	info    Worker
	cmd     *exec.Cmd
	start   time.Time
	readers [2]*os.File // stdout and stderr read ends
	tail    *tailBuffer
	exited  bool
	res     WorkerResult
}

type exitEvent struct {
	local int
	at    time.Time
}

// group is the outcome of one attempt.
type group struct {
	workers     []WorkerResult
	failed      int // local rank of the first failure, -1 if none
	interrupted bool
	signal      os.Signal
	remote      string // the failure another node reported, which stopped this group
}

// runGroup starts the local workers for attempt number restart and waits
// until all of them have exited.
//
// remote delivers a failure reported by another node (nil for a single
// node): the group is then stopped as after a local failure. report is
// called with a description when a local worker fails or the group is
// interrupted, for the other nodes.
func (l *launcher) runGroup(ctx context.Context, restart int, remote <-chan string, report func(string)) (group, error) {
	n := l.cfg.NProcPerNode
	g := group{failed: -1}
	exits := make(chan exitEvent, n) // buffered: the waiters never block
	var pumps sync.WaitGroup
	procs, err := l.startAll(restart, exits, &pumps)
	if err != nil {
		return g, err
	}

	var grace *time.Timer
	var graceC <-chan time.Time
	defer func() {
		if grace != nil {
			grace.Stop()
		}
	}()
	stopping := false
	var reports sync.WaitGroup // the reports to other nodes in flight
	// stop sends sig to every running worker and starts the grace period.
	stop := func(sig syscall.Signal) {
		stopping = true
		for _, p := range procs {
			if !p.exited {
				_ = signalWorker(p.cmd.Process, sig)
				resumeWorker(p.cmd.Process)
			}
		}
		if grace == nil {
			grace = time.NewTimer(l.cfg.Grace)
			graceC = grace.C
		}
	}
	kill := func() {
		for _, p := range procs {
			if !p.exited {
				_ = signalWorker(p.cmd.Process, syscall.SIGKILL)
			}
		}
	}

	sigs, done := l.cfg.Signals, ctx.Done()
	for running := n; running > 0; {
		select {
		case ev := <-exits:
			running--
			p := procs[ev.local]
			p.exit(ev)
			if !p.res.Success() && !stopping && l.cfg.KeepGoing {
				if g.failed < 0 {
					g.failed = ev.local
				}
				l.notef("fathom run: rank %d failed (%s after %v); the other workers keep going (--keep-going)\n",
					p.res.Rank, p.res.Status(), roundDuration(p.res.Duration))
				continue
			}
			if !p.res.Success() && !stopping {
				g.failed = ev.local
				for _, q := range procs {
					q.res.Stopped = !q.exited && processStopped(q.res.Pid)
				}
				stop(syscall.SIGTERM)
				f := p.res
				reports.Add(1)
				go func() {
					defer reports.Done()
					report(fmt.Sprintf("node %d: rank %d failed (%s after %v)", l.cfg.NodeRank, f.Rank, f.Status(), roundDuration(f.Duration)))
				}()
			}
		case msg := <-remote:
			remote = nil
			if !stopping {
				g.remote = msg
				stop(syscall.SIGTERM)
			}
		case sig, ok := <-sigs:
			if !ok {
				sigs = nil
				continue
			}
			if !g.interrupted {
				g.interrupted, g.signal = true, sig
				reports.Add(1)
				go func() {
					defer reports.Done()
					report(fmt.Sprintf("node %d interrupted by %s", l.cfg.NodeRank, osSignalName(sig)))
				}()
			}
			if stopping {
				kill() // second signal: no more grace
			} else {
				stop(toSyscallSignal(sig))
			}
		case <-done:
			done = nil
			g.interrupted = true
			reports.Add(1)
			go func() { defer reports.Done(); report(fmt.Sprintf("node %d interrupted", l.cfg.NodeRank)) }()
			if !stopping {
				stop(syscall.SIGTERM)
			}
		case <-graceC:
			graceC = nil
			kill()
		}
	}
	l.finish(procs, &pumps)
	reports.Wait()
	g.workers = make([]WorkerResult, len(procs))
	for i, p := range procs {
		p.res.StderrTail = p.tail.snapshot()
		g.workers[i] = p.res
	}
	return g, nil
}

// startAll starts the workers of attempt restart; when one cannot start,
// those started are killed and waited for.
func (l *launcher) startAll(restart int, exits chan exitEvent, pumps *sync.WaitGroup) ([]*proc, error) {
	procs := make([]*proc, 0, l.cfg.NProcPerNode)
	for local := range l.cfg.NProcPerNode {
		p, err := l.start(local, restart, exits, pumps)
		if err != nil {
			for _, q := range procs {
				_ = signalWorker(q.cmd.Process, syscall.SIGKILL)
			}
			for range procs {
				<-exits
			}
			l.finish(procs, pumps)
			return nil, fmt.Errorf("launch: start rank %d (%s): %w", p.info.Rank(), l.cfg.Command[0], err)
		}
		procs = append(procs, p)
	}
	return procs, nil
}

// exit records the worker's exit.
func (p *proc) exit(ev exitEvent) {
	p.exited = true
	p.res.Duration = ev.at.Sub(p.start)
	if st := p.cmd.ProcessState; st != nil {
		p.res.ExitCode, p.res.Signal = exitStatus(st)
	} else {
		p.res.ExitCode = -1
	}
}

// start starts worker local of attempt restart. Its exit is reported on
// exits; its two output pumps are counted in pumps.
func (l *launcher) start(local, restart int, exits chan<- exitEvent, pumps *sync.WaitGroup) (*proc, error) {
	cfg := l.cfg
	p := &proc{info: Worker{
		Topology:     Topology{NNodes: cfg.NNodes, NodeRank: cfg.NodeRank, NProcPerNode: cfg.NProcPerNode},
		LocalRank:    local,
		MasterAddr:   cfg.MasterAddr,
		MasterPort:   l.port,
		RestartCount: restart,
		MaxRestarts:  cfg.MaxRestarts,
		StoreHosted:  l.hosted,
		Threads:      cfg.threads(),
	}}
	p.res = WorkerResult{Rank: p.info.Rank(), LocalRank: local}
	p.tail = &tailBuffer{n: cfg.TailLines}

	outR, outW, err := os.Pipe()
	if err != nil {
		return p, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return p, err
	}
	p.cmd = exec.Command(cfg.Command[0], cfg.Command[1:]...)
	p.cmd.Env = p.info.Environ(cfg.Env, l.token)
	p.cmd.Dir = cfg.Dir
	p.cmd.Stdout, p.cmd.Stderr = outW, errW // *os.File: no copying goroutines in os/exec
	p.cmd.SysProcAttr = sysProcAttr()
	err = p.cmd.Start()
	// The child holds its own copies of the write ends; closing ours lets
	// the pumps see EOF when the worker (and its children) are gone.
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return p, err
	}
	p.start = time.Now()
	p.res.Pid = p.cmd.Process.Pid
	p.readers = [2]*os.File{outR, errR}

	var prefix []byte
	if !cfg.NoPrefix {
		prefix = fmt.Appendf(nil, "[%d] ", p.info.Rank())
	}
	pumps.Add(2)
	go func() { defer pumps.Done(); pump(outR, l.stdout, prefix, nil) }()
	go func() { defer pumps.Done(); pump(errR, l.stderr, prefix, p.tail) }()
	go func() {
		_ = p.cmd.Wait() // the exit status is read from ProcessState
		exits <- exitEvent{local: local, at: time.Now()}
	}()
	return p, nil
}

// finish runs after every worker of procs has exited: it kills what is left
// of their process groups, waits (bounded) for the output pumps to drain,
// and closes the pipes.
func (l *launcher) finish(procs []*proc, pumps *sync.WaitGroup) {
	for _, p := range procs {
		killLeftovers(p.cmd.Process)
	}
	drained := make(chan struct{})
	go func() { pumps.Wait(); close(drained) }()
	timer := time.NewTimer(drainTimeout)
	defer timer.Stop()
	select {
	case <-drained:
	case <-timer.C:
		// A process outside the group still holds a pipe: closing our
		// read ends makes the blocked pumps return.
		for _, p := range procs {
			for _, r := range p.readers {
				r.Close()
			}
		}
		<-drained
	}
	for _, p := range procs {
		for _, r := range p.readers {
			r.Close()
		}
	}
}

func toSyscallSignal(sig os.Signal) syscall.Signal {
	if s, ok := sig.(syscall.Signal); ok {
		return s
	}
	return syscall.SIGTERM
}

func signalName(sig syscall.Signal) string {
	if name, ok := signalNames[sig]; ok {
		return name
	}
	return sig.String()
}

func osSignalName(sig os.Signal) string {
	if s, ok := sig.(syscall.Signal); ok {
		return signalName(s)
	}
	return sig.String()
}

// roundDuration rounds d for messages: milliseconds, or microseconds below
// 10ms so that short runs do not read as "0s".
func roundDuration(d time.Duration) time.Duration {
	if d < 10*time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}
