package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/fathom-ml/fathom/launch"
	"github.com/fathom-ml/fathom/launch/launchflag"
	"github.com/spf13/cobra"
)

// runCfg is bound to the flags of `fathom run`.
var runCfg = launch.DefaultConfig()

var runCmd = &cobra.Command{
	Use:   "run [flags] [--] CMD [ARGS...]",
	Short: "Start N workers of a command with the distributed environment set (torchrun's role)",
	Long: `Start N workers of CMD on this machine, each with RANK, WORLD_SIZE, LOCAL_RANK,
LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, GROUP_RANK/NODE_RANK, FATHOM_RESTART_COUNT
and FATHOM_JOB_TOKEN set (the token is inherited when set, generated otherwise, and
never printed). Worker output lines are prefixed with "[rank] ". SIGINT and SIGTERM
are forwarded to the workers; a second signal kills them. When one worker fails the
others are stopped and the local group is restarted up to --max-restarts times; then
fathom exits non-zero with a summary of the first failure.

Multi-node: run one launcher per node with the same --nnodes, --master-addr and
--master-port and a distinct --node-rank; global RANK = node_rank*N + local_rank.

Elastic (torchrun's etcd rendezvous): with --rdzv-backend etcd --rdzv-endpoint
HOST:2379 --rdzv-id JOB and --nnodes MIN:MAX, the launchers meet in etcd and form
numbered rounds of MIN to MAX nodes; a node that joins or leaves sends every node to
a new round (WORLD_SIZE = nodes x N, FATHOM_RESTART_COUNT = the round), which does
not count against --max-restarts. FATHOM_JOB_TOKEN must be set on every node.`,
	Example: `  fathom run -n 4 -- fathom bench allreduce
  fathom run -n 2 --nnodes 2 --node-rank 0 --master-addr 10.0.0.1 --master-port 29500 -- ./worker
  fathom run -n 2 --nnodes 1:4 --rdzv-backend etcd --rdzv-endpoint 10.0.0.5:2379 --rdzv-id job-7 -- fathom train job.yaml`,
	Args: cobra.MinimumNArgs(1),
	RunE: runWorkers,
}

// runDashboard is the --dashboard flag of `fathom run`.
var runDashboard string

func init() {
	launchflag.Add(runCmd.Flags(), &runCfg)
	runCmd.Flags().StringVar(&runDashboard, "dashboard", "", "serve the job's live web page on `ADDR` (with no value, 127.0.0.1 on a free port): rank 0 serves it, every rank reports to it (the command must take --dashboard: fathom train, ml fit)")
	runCmd.Flags().Lookup("dashboard").NoOptDefVal = dashboardAuto
	// Flags after the command name belong to the command.
	runCmd.Flags().SetInterspersed(false)
	rootCmd.AddCommand(runCmd)
}

// runResultJSON is the --json summary line of `fathom run`.
type runResultJSON struct {
	OK       bool `json:"ok"`
	Restarts int  `json:"restarts"`
	// Rounds and Round: with --rdzv-backend etcd, how many rounds this
	// node took part in and the number of the last.
	Rounds      int             `json:"rounds,omitempty"`
	Round       *int            `json:"round,omitempty"`
	Interrupted bool            `json:"interrupted"`
	Seconds     float64         `json:"seconds"`
	MasterAddr  string          `json:"master_addr"`
	MasterPort  int             `json:"master_port"`
	Workers     []runWorkerJSON `json:"workers"`
	Failures    []runWorkerJSON `json:"failures,omitempty"`
	// Culprit is the rank launch.Result.Culprit blames for the failure:
	// the rank the first failed worker named lost, a stopped worker, else
	// the first to fail.
	Culprit *int `json:"culprit_rank,omitempty"`
}

type runWorkerJSON struct {
	Rank     int     `json:"rank"`
	ExitCode int     `json:"exit_code"`
	Signal   string  `json:"signal,omitempty"`
	Stopped  bool    `json:"stopped,omitempty"`
	Seconds  float64 `json:"seconds"`
}

func runWorkers(cmd *cobra.Command, args []string) error {
	cfg := runCfg
	cfg.Command = args
	if runDashboard != "" {
		addr, err := launchDashboard(&cfg, runDashboard, cmd.ErrOrStderr())
		if err != nil {
			return fmt.Errorf("run: --dashboard: %w", err)
		}
		runDashboard = addr
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	cfg.Signals = sigs

	res, err := launch.Run(context.Background(), cfg)
	if jsonOut && (err == nil || len(res.Workers) > 0) {
		if jerr := printJSON(runJSON(res, err)); jerr != nil && err == nil {
			err = jerr
		}
	}
	if errors.Is(err, launch.ErrInterrupted) && !errors.Is(err, launch.ErrWorkerFailed) {
		// Exit as a shell does for a command killed by the signal.
		code := 130
		if res.Signal == syscall.SIGTERM {
			code = 143
		}
		os.Stderr.WriteString("fathom: run: " + err.Error() + "\n")
		os.Exit(code)
	}
	if err != nil {
		return errors.New("run: " + err.Error())
	}
	return nil
}

// launchDashboard has the workers of cfg serve (rank 0) and report to
// (every rank) a dashboard on addr: $FATHOM_DASHBOARD in their
// environment, which the commands take as their --dashboard. A free
// loopback port is chosen here, so the address is known (and printed)
// before the workers start and stays the same across restarts.
func launchDashboard(cfg *launch.Config, addr string, stderr io.Writer) (string, error) {
	if addr == dashboardAuto {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return "", err
		}
		addr = ln.Addr().String()
		ln.Close()
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" || port == "0" {
		return "", fmt.Errorf("want host:port with a port, got %q", addr)
	}
	env := cfg.Env
	if env == nil {
		env = os.Environ()
	}
	cfg.Env = append(slices.Clip(env), dashboardEnv+"="+addr)
	if cfg.NodeRank == 0 {
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "127.0.0.1"
		}
		note := ""
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			note = " (token required: the job token, or $" + dashboardTokenEnv + ")"
		}
		fmt.Fprintf(stderr, "dashboard: http://%s/%s (served by rank 0)\n", net.JoinHostPort(host, port), note)
	}
	return addr, nil
}

func runJSON(res launch.Result, err error) runResultJSON {
	conv := func(ws []launch.WorkerResult) []runWorkerJSON {
		out := make([]runWorkerJSON, len(ws))
		for i, w := range ws {
			out[i] = runWorkerJSON{Rank: w.Rank, ExitCode: w.ExitCode, Signal: w.SignalName(), Stopped: w.Stopped,
				Seconds: w.Duration.Seconds()}
		}
		return out
	}
	var culprit, round *int
	if res.Rounds > 0 {
		round = &res.Round
	}
	if c, _ := res.Culprit(); c >= 0 {
		culprit = &c
	}
	return runResultJSON{
		Culprit:     culprit,
		OK:          err == nil,
		Restarts:    res.Restarts,
		Rounds:      res.Rounds,
		Round:       round,
		Interrupted: res.Interrupted,
		Seconds:     res.Duration.Seconds(),
		MasterAddr:  res.MasterAddr,
		MasterPort:  res.MasterPort,
		Workers:     conv(res.Workers),
		Failures:    conv(res.Failures),
	}
}
