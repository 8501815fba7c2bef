package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/fathom-ml/fathom/dashboard"
	"github.com/fathom-ml/fathom/runlog"
)

func init() {
	var addr, tokenFile string
	cmd := &cobra.Command{
		Use:   "dashboard RUN_DIR...",
		Short: "Replay finished runs on the dashboard page; several runs are overlaid to compare",
		Long: `Serves the dashboard of finished (or interrupted) training runs from their output
directories: each run's dashboard.json (every epoch and the step curve, written by
fathom train), or its metrics.csv (epochs only). One run is shown as its live page was;
several are overlaid on one page (loss per step, evaluation metric and loss per epoch,
seconds per epoch) with a table of the runs, each linking to its own page.

Serves on 127.0.0.1 on a free port unless --addr says otherwise (beyond loopback a
token is required: --token-file, else $` + dashboardTokenEnv + `), until interrupted.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return replayDashboard(ctx, args, addr, tokenFile, cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "serve on `ADDR` (host:port)")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "file holding the token every request must present (default beyond loopback: $"+dashboardTokenEnv+")")
	rootCmd.AddCommand(cmd)
}

// replayDashboard serves the runs in dirs until ctx ends.
func replayDashboard(ctx context.Context, dirs []string, addr, tokenFile string, stderr io.Writer) error {
	srv, err := listenRuns(dirs, addr, tokenFile)
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Fprintf(stderr, "dashboard: %s%s (%d runs; Ctrl-C ends)\n", srv.URL(), tokenNote(srv), len(dirs))
	<-ctx.Done()
	return nil
}

// listenRuns loads the runs in dirs and serves them.
func listenRuns(dirs []string, addr, tokenFile string) (*dashboard.Server, error) {
	runs := make([]dashboard.Run, len(dirs))
	for i, d := range dirs {
		b, err := dashboard.LoadRun(d)
		if err != nil {
			return nil, err
		}
		runs[i] = dashboard.Run{Name: runLabel(d, dirs), Board: b}
	}
	tok := ""
	if tokenFile != "" {
		var err error
		if tok, err = readTokenFile("--token-file", tokenFile); err != nil {
			return nil, err
		}
	}
	srv, err := dashboard.ListenRuns(dashboard.Options{Addr: addr, Token: tok}, runs)
	if errors.Is(err, dashboard.ErrNoToken) {
		if tok = os.Getenv(dashboardTokenEnv); tok != "" {
			srv, err = dashboard.ListenRuns(dashboard.Options{Addr: addr, Token: tok}, runs)
		}
	}
	if errors.Is(err, dashboard.ErrNoToken) {
		return nil, fmt.Errorf("--addr %s is beyond loopback: give a token with --token-file or $%s", addr, dashboardTokenEnv)
	}
	return srv, err
}

// runLabel names a run after its directory's base name, or its path when
// two runs share a base name.
func runLabel(dir string, all []string) string {
	b := runlog.RunName(dir)
	for _, o := range all {
		if o != dir && runlog.RunName(o) == b {
			return filepath.Clean(dir)
		}
	}
	return b
}
