package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fathom-ml/fathom/dashboard"
)

// syncBuffer is a strings.Builder safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) WriteString(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.WriteString(v)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDashboardWorkersDistributed runs `fathom run -n 2 -- fathom train
// examples/iris.yaml --dashboard --dashboard-keep`: rank 0 serves the
// page, and its workers table gets both ranks (through the job's store)
// with their last step; where Chromium is installed the page's table shows
// two rows.
func TestDashboardWorkersDistributed(t *testing.T) {
	testDashboardWorkers(t, nil, []string{"--dashboard", "--dashboard-keep"}, "[0] dashboard: ")
}

// TestRunDashboard is TestDashboardWorkersDistributed with the page asked
// of the launcher: `fathom run --dashboard -n 2 -- fathom train ...`
// prints the address before the workers start and they take it from
// their environment.
func TestRunDashboard(t *testing.T) {
	testDashboardWorkers(t, []string{"--dashboard"}, []string{"--dashboard-keep"}, "dashboard: ")
}

func testDashboardWorkers(t *testing.T, runFlags, trainFlags []string, prefix string) {
	if testing.Short() {
		t.Skip("builds the binary and starts processes")
	}
	exe := buildFathom(t)
	args := append([]string{"run"}, runFlags...)
	args = append(args, "-n", "2", "--", exe, "train", "../../examples/iris.yaml", "--quiet",
		"--set", "epochs=20", "--set", "output.dir="+t.TempDir())
	cmd := exec.Command(exe, append(args, trainFlags...)...)
	cmd.Env = append(os.Environ(), "MASTER_ADDR=", "FATHOM_JOB_TOKEN=", dashboardEnv+"=")
	cmd.Stdout = io.Discard
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Rank 0 prints the page's address: "[0] dashboard: http://127.0.0.1:PORT/".
	urls := make(chan string, 1)
	var stderr syncBuffer
	go func() {
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			line := sc.Text()
			stderr.WriteString(line + "\n")
			if u, ok := strings.CutPrefix(line, prefix); ok && strings.HasPrefix(u, "http://") {
				u, _, _ = strings.Cut(u, " (served by rank 0)")
				select {
				case urls <- u:
				default:
				}
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Signal(os.Interrupt) // the launcher passes it on
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-exited
			t.Errorf("fathom run did not stop on SIGINT\n%s", stderr.String())
		}
	}()
	var url string
	select {
	case url = <-urls:
	case err := <-exited:
		t.Fatalf("fathom run ended (%v) without a dashboard address:\n%s", err, stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("no dashboard address within a minute:\n%s", stderr.String())
	}
	if strings.Contains(url, " ") {
		t.Errorf("the address line %q carries more than the URL", url)
	}

	var st struct {
		Info    dashboard.RunInfo
		Workers []dashboard.Worker
		Status  dashboard.Status
	}
	deadline := time.Now().Add(60 * time.Second)
	for ; time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get(url + "api/state")
		if err != nil {
			continue
		}
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if err == nil && st.Status.Done && len(st.Workers) == 2 && st.Workers[1].Step == st.Workers[0].Step && st.Workers[0].Step > 0 {
			break
		}
	}
	if !st.Status.Done || len(st.Workers) != 2 || st.Info.WorldSize != 2 {
		t.Fatalf("state after the run: %+v, %+v, world size %d\n%s", st.Status, st.Workers, st.Info.WorldSize, stderr.String())
	}
	for r, w := range st.Workers {
		if w.Rank != r || w.Epoch != 20 || w.Step != 20*7 || w.SamplesPerSec <= 0 || w.Host == "" {
			t.Errorf("worker %d: %+v, want epoch 20, step 140", r, w)
		}
	}

	exeChromium := chromium()
	if exeChromium == "" {
		t.Log("the page's table is not checked: no Chromium on PATH (apt-get install chromium)")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bctx := startBrowser(t, ctx, exeChromium)
	if err := chromedp.Do(bctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	rows := pollPage(t, bctx, "fathomDashboard.done && document.querySelectorAll('#workers tbody tr').length")
	if rows != 2 {
		t.Errorf("the workers table has %d rows, want 2", rows)
	}
	text, err := chromedp.Run(bctx, chromedp.Evaluate[string]("document.querySelector('#workers tbody').textContent"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains([]byte(text), []byte(strconv.Itoa(20*7))) {
		t.Errorf("the workers table %q does not show step 140", text)
	}
}
