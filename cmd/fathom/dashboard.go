package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fathom-ml/fathom/dashboard"
	"github.com/fathom-ml/fathom/internal/distenv"
)

// dashboardTokenEnv names the environment variable that holds the
// dashboard's token when it serves beyond loopback (else the job token).
const dashboardTokenEnv = "FATHOM_DASHBOARD_TOKEN"

// dashboardEnv names the environment variable through which `fathom run
// --dashboard` gives its workers their --dashboard address.
const dashboardEnv = "FATHOM_DASHBOARD"

// dashboardAuto is --dashboard given with no address: loopback, a free port.
const dashboardAuto = "127.0.0.1:0"

// dashboardFlags are a command's --dashboard flags.
type dashboardFlags struct {
	addr      string // "" when off
	tokenFile string
	keep      bool
}

func (f *dashboardFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "dashboard", os.Getenv(dashboardEnv), "serve a live web page of the job on `ADDR` (host:port; with no value, 127.0.0.1 on a free port); beyond loopback a token is required")
	fl.Lookup("dashboard").NoOptDefVal = dashboardAuto
	fl.StringVar(&f.tokenFile, "dashboard-token-file", "", "file holding the dashboard's token (default: $"+dashboardTokenEnv+", else $"+distenv.JobToken+")")
	fl.BoolVar(&f.keep, "dashboard-keep", false, "keep serving the final page after the job ends, until interrupted")
}

// takeAddress accepts `--dashboard ADDR` as well as `--dashboard=ADDR`:
// when the flag was given with no value and one argument too many looks
// like an address, that argument is the address. It returns the rest.
func (f *dashboardFlags) takeAddress(args []string, want int) []string {
	if f.addr != dashboardAuto || len(args) != want+1 {
		return args
	}
	last := args[len(args)-1]
	if _, port, err := net.SplitHostPort(last); err == nil && port != "" {
		f.addr = last
		return args[:len(args)-1]
	}
	return args
}

// token returns the token for a dashboard: from --dashboard-token-file,
// else $FATHOM_DASHBOARD_TOKEN, else the job token.
func (f *dashboardFlags) token() (string, error) {
	if f.tokenFile != "" {
		return readTokenFile("--dashboard-token-file", f.tokenFile)
	}
	if t := os.Getenv(dashboardTokenEnv); t != "" {
		return t, nil
	}
	return os.Getenv(distenv.JobToken), nil
}

// readTokenFile reads a token from the file path that flag names.
func readTokenFile(flag, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", flag, err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("%s %s is empty", flag, path)
	}
	return t, nil
}

// tokenNote is what the line announcing srv's address adds when its
// requests need the token.
func tokenNote(srv *dashboard.Server) string {
	if ta, ok := srv.Addr().(*net.TCPAddr); ok && !ta.IP.IsLoopback() {
		return " (token required: Authorization: Bearer TOKEN, or ?token=TOKEN)"
	}
	return ""
}

// start serves the dashboard when the flag asks for it, on rank 0 of a
// distributed job only, and prints its address on stderr. It returns nil
// when there is nothing to serve.
func (f *dashboardFlags) start(stderr io.Writer) (*dashboard.Server, error) {
	if f.addr == "" {
		return nil, nil
	}
	if e, err := distenv.FromOS(); err == nil && e.Rank != 0 {
		return nil, nil // rank 0 serves the job's page
	}
	// On loopback a token is needed only when given as a file; beyond it,
	// from the environment too (the job token under fathom run).
	tok := ""
	if f.tokenFile != "" {
		var err error
		if tok, err = f.token(); err != nil {
			return nil, err
		}
	}
	srv, err := dashboard.Listen(dashboard.Options{Addr: f.addr, Token: tok})
	if errors.Is(err, dashboard.ErrNoToken) {
		if tok, _ = f.token(); tok != "" {
			srv, err = dashboard.Listen(dashboard.Options{Addr: f.addr, Token: tok})
		}
	}
	if errors.Is(err, dashboard.ErrNoToken) {
		return nil, fmt.Errorf("--dashboard %s is beyond loopback: give a token with --dashboard-token-file, $%s or $%s", f.addr, dashboardTokenEnv, distenv.JobToken)
	}
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "dashboard: %s%s\n", srv.URL(), tokenNote(srv))
	return srv, nil
}

// finish keeps serving after the job with --dashboard-keep until ctx ends,
// then closes the server.
func (f *dashboardFlags) finish(ctx context.Context, srv *dashboard.Server, stderr io.Writer) {
	if srv == nil {
		return
	}
	if f.keep && ctx.Err() == nil {
		fmt.Fprintf(stderr, "dashboard: the job has ended; still serving %s until interrupted\n", srv.URL())
		<-ctx.Done()
	}
	srv.Close()
}
