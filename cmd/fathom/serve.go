package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/serve"
)

// serveTokenEnv holds the bearer token when --token-file is not given.
const serveTokenEnv = "FATHOM_SERVE_TOKEN"

// serveReady is the line `fathom serve --json` prints once it listens.
type serveReady struct {
	Addr   string   `json:"addr"`
	Models []string `json:"models"`
}

func init() {
	var (
		addr, maxBody, tokenFile, logLevel string
		names                              []string
		maxBatch, queue                    int
		maxDelay, timeout, grace           time.Duration
	)
	cmd := &cobra.Command{
		Use:   "serve MODEL...",
		Short: "Serve model files over the Open Inference Protocol (KServe v2 REST)",
		Long: `Serves the model files (written by fathom train) over HTTP with the Open
Inference Protocol: /v2/health/live, /v2/health/ready, /v2/models/NAME[/versions/V]
[/ready|/infer], and Prometheus metrics at /metrics. A model's name is its
file's base name without the extension unless --name gives one (the first
--name names the first model, and so on).

Requests to a model are batched: its batcher merges queued requests up to
--max-batch rows; with --max-delay it waits that long for more after the
first (default 0: no wait, a batch is what queued while the model was busy).
A full queue (--queue requests) answers 503.

The server listens on 127.0.0.1 unless --addr says otherwise; beyond the
loopback interface it needs a bearer token, read from --token-file or
$FATHOM_SERVE_TOKEN. SIGINT or SIGTERM stops it gracefully: requests in
flight are answered first (for at most --grace).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := parseByteSize(maxBody)
			if err != nil {
				return fmt.Errorf("--max-body: %w", err)
			}
			token, err := serveToken(tokenFile)
			if err != nil {
				return err
			}
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return fmt.Errorf("--log-level: %w", err)
			}
			if len(names) > len(args) {
				return fmt.Errorf("%d --name flags for %d models", len(names), len(args))
			}
			opts := serve.Options{MaxBatch: maxBatch, MaxDelay: maxDelay, QueueSize: queue, MaxBody: body, Timeout: timeout,
				Token: token, Logger: slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))}
			return runServe(args, names, addr, grace, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on (host:port; beyond loopback it needs a token)")
	f.StringArrayVar(&names, "name", nil, "name of the model in the same position (repeat for several)")
	f.IntVar(&maxBatch, "max-batch", serve.DefaultMaxBatch, "most rows per batch")
	f.DurationVar(&maxDelay, "max-delay", serve.DefaultMaxDelay, "longest wait for more requests to fill a batch (0: none, run what is queued)")
	f.IntVar(&queue, "queue", serve.DefaultQueueSize, "most requests waiting per model (more are answered 503)")
	f.StringVar(&maxBody, "max-body", "16MB", "largest request body (bytes, or with KB, MB, GB: powers of 1024)")
	f.DurationVar(&timeout, "timeout", serve.DefaultTimeout, "longest time for one inference request (then 503)")
	f.StringVar(&tokenFile, "token-file", "", "file holding the bearer token clients must send (else $"+serveTokenEnv+")")
	f.DurationVar(&grace, "grace", 30*time.Second, "longest time to finish requests in flight at shutdown")
	f.StringVar(&logLevel, "log-level", "info", "debug (every request), info, warn or error")
	rootCmd.AddCommand(cmd)
}

func runServe(paths, names []string, addr string, grace time.Duration, opts serve.Options) error {
	var models []serve.Model
	for i, p := range paths {
		m, err := modelfile.Load(p)
		if err != nil {
			return err
		}
		name := strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
		if i < len(names) {
			name = names[i]
		}
		models = append(models, serve.Model{Name: name, Model: m})
	}
	var list []string
	for _, m := range models {
		list = append(list, m.Name)
	}
	ready := func(a net.Addr) error {
		if jsonOut {
			return printJSON(serveReady{Addr: a.String(), Models: list})
		}
		fmt.Fprintf(os.Stderr, "serving %s on http://%s/v2/models/\n", strings.Join(list, ", "), a)
		return nil
	}
	return serve.ListenAndServe(context.Background(), models, opts, serve.Listen{Addr: addr, Grace: grace, Ready: ready})
}

// serveToken reads the bearer token from file, else from the environment.
func serveToken(file string) (string, error) {
	if file == "" {
		return strings.TrimSpace(os.Getenv(serveTokenEnv)), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("--token-file %s is empty", file)
	}
	return tok, nil
}

// parseByteSize parses "1048576", "512KB", "16MB", "1GiB" (KB, MB and GB
// are powers of 1024 here, as KiB, MiB and GiB).
func parseByteSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		n      int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"B", 1}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(v), u.n
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 || n > (1<<50)/mult {
		return 0, fmt.Errorf("%q is not a positive size in bytes", s)
	}
	return n * mult, nil
}
