package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fathom-ml/fathom/dashboard"
	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml/mljob"
)

// trainRuns trains short Iris runs into fresh directories, one per
// learning rate, and returns the directories.
func trainRuns(t *testing.T, epochs string, lrs ...string) []string {
	t.Helper()
	var dirs []string
	for _, lr := range lrs {
		dir := filepath.Join(t.TempDir(), "lr-"+lr)
		err := runTrain(context.Background(), "../../examples/iris.yaml",
			[]string{"epochs=" + epochs, "optimizer.lr=" + lr, "output.dir=" + dir}, true, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	return dirs
}

func TestReplayRunLabels(t *testing.T) {
	a, b := filepath.Join("x", "run"), filepath.Join("y", "run")
	if got := runLabel(a, []string{a, b}); got != a {
		t.Errorf("shared base name: %q, want %q", got, a)
	}
	if got := runLabel(a, []string{a, "z"}); got != "run" {
		t.Errorf("own base name: %q", got)
	}
	if _, err := listenRuns([]string{t.TempDir()}, "127.0.0.1:0", ""); err == nil || !strings.Contains(err.Error(), "not a run directory") {
		t.Errorf("empty directory: %v", err)
	}
	dirs := trainRuns(t, "2", "0.01")
	if _, err := listenRuns(dirs, "0.0.0.0:0", ""); err == nil || !strings.Contains(err.Error(), "token") {
		t.Errorf("beyond loopback without a token: %v", err)
	}
}

// TestReplayInBrowser: `fathom dashboard` over two finished runs shows
// both on the compare page (a curve each in every chart, a row each in the
// table) without console errors, and each run's own page replays all its
// epochs as finished.
func TestReplayInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	exe := chromium()
	if exe == "" {
		t.Skip("dashboard browser test skipped: no Chromium on PATH (apt-get install chromium)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	epochs := "6"
	if *dashboardScreenshot {
		epochs = "60"
	}
	dirs := trainRuns(t, epochs, "0.01", "0.003")
	// a third run read from its metrics.csv alone (an older run)
	old := filepath.Join(t.TempDir(), "metrics-only")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	m, err := os.ReadFile(filepath.Join(dirs[0], "metrics.csv"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(old, "metrics.csv"), m, 0o644)
	dirs = append(dirs, old)

	srv, err := listenRuns(dirs, "127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	bctx := startBrowser(t, ctx, exe)
	if err := chromedp.Do(bctx, chromedp.Navigate(srv.URL())); err != nil {
		t.Fatalf("navigate: %v", err)
	}
	pollPage(t, bctx, "fathomDashboard.runs === 3")
	got, err := chromedp.Run(bctx, chromedp.Evaluate[[]int](`[fathomDashboard.series,
		document.querySelectorAll('#runs tbody tr').length, document.querySelectorAll('.uplot').length,
		fathomDashboard.errors.length]`))
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != 4*3 || got[1] != 3 || got[2] != 4 || got[3] != 0 {
		t.Errorf("compare page: %d series, %d table rows, %d charts, %d errors; want 12, 3, 4, 0", got[0], got[1], got[2], got[3])
	}
	row, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector('#runs tbody tr').textContent`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(row, "lr-0.01") || !strings.Contains(row, epochs) || !strings.Contains(row, "finished") {
		t.Errorf("first row %q", row)
	}
	if *dashboardScreenshot {
		time.Sleep(300 * time.Millisecond)
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join("..", "..", "docs", "img", "dashboard-compare.png")
		if err := os.WriteFile(out, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", out)
	}
	// The first run's own page: every epoch, finished, the step curve.
	if err := chromedp.Do(bctx, chromedp.Navigate(srv.URL()+"runs/0/")); err != nil {
		t.Fatal(err)
	}
	pollPage(t, bctx, "fathomDashboard.done && fathomDashboard.epochs === "+epochs+" && fathomDashboard.points > "+epochs)
	status, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.getElementById('status').textContent`))
	if err != nil || status != "finished" {
		t.Errorf("run page status %q, %v", status, err)
	}
}

// TestMLFitDashboardInBrowser: the page of a `fathom ml fit` shows the
// solver's iterations (the tiles say so) and the fit's metrics.
func TestMLFitDashboardInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	exe := chromium()
	if exe == "" {
		t.Skip("dashboard browser test skipped: no Chromium on PATH (apt-get install chromium)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := dashboard.Listen(dashboard.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cfg, err := mljob.Load("../../examples/ml/iris-logreg.yaml", []string{"output.dir=" + t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := mljob.Run(cfg, mljob.Options{Dashboard: srv.Board()})
	if err != nil {
		t.Fatal(err)
	}
	bctx := startBrowser(t, ctx, exe)
	if err := chromedp.Do(bctx, chromedp.Navigate(srv.URL())); err != nil {
		t.Fatal(err)
	}
	pollPage(t, bctx, "fathomDashboard.done && fathomDashboard.epochs === 1")
	got, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`[document.getElementById('t-step').previousElementSibling.textContent,
		document.getElementById('t-step').textContent, document.getElementById('model').textContent, String(fathomDashboard.points)]`))
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != "iteration" || got[1] != strconv.Itoa(res.Iterations) || !strings.Contains(got[2], "LogisticRegression") ||
		got[3] != strconv.Itoa(res.Iterations) {
		t.Errorf("page: label %q, iterations %q, model %q, %s points; want %d iterations", got[0], got[1], got[2], got[3], res.Iterations)
	}
}

// TestPredictDashboardInBrowser: `fathom predict MODEL DIR --out OUT
// --dashboard` shows every partition with its rows and errors (a bad row
// counted in its partition), the totals in the tiles, and rows/s.
func TestPredictDashboardInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	exe := chromium()
	if exe == "" {
		t.Skip("dashboard browser test skipped: no Chromium on PATH (apt-get install chromium)")
	}
	dirs := trainRuns(t, "3", "0.01")
	model := filepath.Join(dirs[0], "model.safetensors")
	in := filepath.Join(t.TempDir(), "in")
	lines := strings.Split(strings.TrimSpace(string(data.IrisCSV())), "\n")
	head, rows := lines[0], lines[1:]
	for i := range 3 {
		part := rows[i*50 : (i+1)*50]
		if i == 1 {
			part = append(append([]string{}, part...), "x,1,2,3,setosa") // a row that cannot be scored
		}
		p := filepath.Join(in, fmt.Sprintf("part=%d", i), "rows.csv")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(head+"\n"+strings.Join(part, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	runCtx, stopRun := context.WithCancel(ctx)
	var stderr syncBuffer
	b := batchPredictFlags{maxErrors: 10, batchSize: 20, dash: dashboardFlags{addr: dashboardAuto, keep: true}}
	ran := make(chan error, 1)
	go func() {
		ran <- runBatchPredict(runCtx, model, []string{in}, filepath.Join(t.TempDir(), "out"), b, io.Discard, writerFunc(stderr.WriteString))
	}()
	var url string
	for deadline := time.Now().Add(30 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, l := range strings.Split(stderr.String(), "\n") {
			if u, ok := strings.CutPrefix(l, "dashboard: "); ok && strings.HasPrefix(u, "http://") && url == "" {
				url = u
			}
		}
	}
	if url == "" {
		t.Fatalf("no dashboard address:\n%s", stderr.String())
	}
	bctx := startBrowser(t, ctx, exe)
	if err := chromedp.Do(bctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	pollPage(t, bctx, "fathomDashboard.done && fathomDashboard.partitionsDone === 3")
	got, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`[String(fathomDashboard.rows),
		String(document.querySelectorAll('#parts tbody tr').length), document.getElementById('t-loss').textContent,
		document.getElementById('t-epoch').textContent, document.getElementById('t-step').previousElementSibling.textContent,
		String(document.getElementById('predict').hidden), String(document.getElementById('c-loss').parentNode.hidden),
		document.querySelector('#parts tbody').textContent]`))
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != "150" || got[1] != "3" || got[2] != "1" || got[3] != "3 / 3" || got[4] != "rows" || got[5] != "false" || got[6] != "true" ||
		!strings.Contains(got[7], "part=1") {
		t.Errorf("page: rows %s, %s table rows, errors %q, partitions %q, label %q, hidden %s/%s, table %q",
			got[0], got[1], got[2], got[3], got[4], got[5], got[6], got[7])
	}
	stopRun()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
}

// writerFunc adapts a string sink to io.Writer.
type writerFunc func(string)

func (f writerFunc) Write(p []byte) (int, error) { f(string(p)); return len(p), nil }
