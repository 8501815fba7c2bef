package main

import (
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fathom-ml/fathom/dashboard"
	"github.com/fathom-ml/fathom/runlog"
	"github.com/fathom-ml/fathom/train"
	"github.com/fathom-ml/fathom/train/job"
)

var dashboardScreenshot = flag.Bool("dashboard.screenshot", false,
	"write docs/img/dashboard.png from TestDashboardInBrowser")

// chromium returns the path of a Chromium (Debian's `chromium`) or "".
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestDashboardInBrowser trains Iris in-process with a dashboard and
// watches the page in headless Chromium: it loads without console errors,
// and its loss curve gains a point as each epoch finishes (the first
// epochs wait for the page to show them before the next starts).
func TestDashboardInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	exe := chromium()
	if exe == "" {
		t.Skip("dashboard browser test skipped: no Chromium on PATH (apt-get install chromium)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	srv, err := dashboard.Listen(dashboard.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	epochs := "8"
	if *dashboardScreenshot {
		epochs = "60" // the whole example, for the picture
	}
	cfg, err := job.Load("../../examples/iris.yaml", []string{"epochs=" + epochs, "output.dir=" + t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}

	// The first epochs stop after reporting until the test lets them go.
	const gated = 3
	reached, release := make(chan int), make(chan struct{})
	wait := func(what string, ch <-chan struct{}) error {
		select {
		case <-ch:
			return nil
		case <-ctx.Done():
			return errors.New("dashboard browser test: timed out " + what)
		}
	}
	hooks := train.Hooks{EpochEnd: func(r runlog.Epoch) error {
		if r.Epoch > gated {
			return nil
		}
		select {
		case reached <- r.Epoch:
		case <-ctx.Done():
			return ctx.Err()
		}
		return wait("waiting for the page", release)
	}}
	runDone := make(chan error, 1)
	go func() {
		_, err := job.Run(ctx, cfg, job.RunOptions{Dashboard: srv.Board(), Hooks: hooks})
		runDone <- err
	}()

	bctx := startBrowser(t, ctx, exe)
	if err := chromedp.Do(bctx, chromedp.Navigate(srv.URL())); err != nil {
		t.Fatalf("navigate: %v", err)
	}
	poll := func(expr string) int { t.Helper(); return pollPage(t, bctx, expr) }
	poll("window.fathomDashboard && fathomDashboard.connected")

	points := 0
	for k := 1; k <= gated; k++ {
		select {
		case e := <-reached:
			if e != k {
				t.Fatalf("epoch %d reported, want %d", e, k)
			}
		case err := <-runDone:
			t.Fatalf("the run ended before epoch %d: %v", k, err)
		case <-ctx.Done():
			t.Fatal("timed out waiting for epoch", k)
		}
		// The page shows exactly the epochs so far: the run waits.
		n := poll("fathomDashboard.epochs >= " + strconv.Itoa(k) + " && fathomDashboard.epochs")
		if n != k {
			t.Errorf("after epoch %d the page shows %d epochs", k, n)
		}
		p := poll("fathomDashboard.points")
		if p <= points {
			t.Errorf("after epoch %d the curve has %d points, %d before", k, p, points)
		}
		points = p
		release <- struct{}{}
	}
	if err := <-runDone; err != nil {
		t.Fatal(err)
	}
	poll("fathomDashboard.done")
	info, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`[document.getElementById('config').textContent,
		document.getElementById('model').textContent, document.getElementById('status').textContent,
		String(fathomDashboard.epochs), JSON.stringify(fathomDashboard.errors)]`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(info[0], "epochs: "+epochs) || !strings.Contains(info[1], "Linear") || info[2] != "finished" ||
		info[3] != epochs || info[4] != "[]" {
		t.Errorf("final page: config %.40q…, model %.40q…, status %q, %s epochs, errors %s", info[0], info[1], info[2], info[3], info[4])
	}

	// The loss chart on a log scale, and back.
	for _, want := range []string{"true", "false"} {
		if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS("#loss-log"))); err != nil {
			t.Fatal(err)
		}
		pollPage(t, bctx, "String(fathomDashboard.lossLog) === '"+want+"' && document.querySelectorAll('#c-loss .uplot').length === 1")
	}

	if *dashboardScreenshot {
		time.Sleep(300 * time.Millisecond) // a frame for the last draw
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join("..", "..", "docs", "img", "dashboard.png")
		if err := os.WriteFile(out, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", out, len(png))
	}
}

// startBrowser starts headless Chromium for the test and fails the test,
// when it ends, with every console error and uncaught exception the page
// had, but those that contain one of allowed.
func startBrowser(t *testing.T, ctx context.Context, exe string, allowed ...string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1280, 1500))
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	var mu sync.Mutex
	var problems []string
	messages := chromedp.Console(bctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			ok := slices.ContainsFunc(allowed, func(a string) bool { return strings.Contains(m.Text, a) })
			if (m.Type == chromedp.ConsoleError || m.IsException()) && !ok {
				mu.Lock()
				problems = append(problems, m.String())
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { // also when a check gave up
		time.Sleep(100 * time.Millisecond) // messages in flight
		mu.Lock()
		if len(problems) > 0 {
			t.Errorf("console errors:\n%s", strings.Join(problems, "\n"))
		}
		mu.Unlock()
		cancelBrowser()
		cancelAlloc()
	})
	return bctx
}

// pollPage waits up to 30 s for a JavaScript expression to be a non-zero
// number (true counts as 1) and returns it.
func pollPage(t *testing.T, bctx context.Context, expr string) int {
	t.Helper()
	v, err := chromedp.Run(bctx, chromedp.Poll[int]("Number("+expr+")",
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		t.Fatalf("waiting for %s: %v", expr, err)
	}
	return v
}
