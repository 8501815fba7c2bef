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

// TestDashboardManyStepsInBrowser: with 100,000 steps on the board and
// 50,000 more arriving live, the page holds a bounded number of points and
// answers at once.
func TestDashboardManyStepsInBrowser(t *testing.T) {
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
	b := srv.Board()
	const perEpoch, epochs = 1000, 150
	b.SetInfo(dashboard.RunInfo{Title: "many steps", Epochs: epochs, Headline: "accuracy", Machine: dashboard.LocalMachine()})
	step := 0
	addEpoch := func(e int) {
		for i := 1; i <= perEpoch; i++ {
			step++
			b.AddStep(dashboard.Step{Step: step, Epoch: e, Batch: i, Batches: perEpoch, Loss: 1 / float64(step), LR: 0.1, SamplesPerSec: 1000})
		}
		b.AddEpoch(dashboard.Epoch{Epoch: e, Steps: step, Train: map[string]float64{"loss": 1 / float64(step), "accuracy": 0.9},
			Eval: map[string]float64{"loss": 1 / float64(step), "accuracy": 0.8}})
	}
	for e := 1; e <= 100; e++ {
		addEpoch(e)
	}
	bctx := startBrowser(t, ctx, exe)
	if err := chromedp.Do(bctx, chromedp.Navigate(srv.URL())); err != nil {
		t.Fatalf("navigate: %v", err)
	}
	pollPage(t, bctx, "fathomDashboard.epochs >= 100")
	for e := 101; e <= epochs; e++ { // live, while the page draws
		addEpoch(e)
		time.Sleep(2 * time.Millisecond)
	}
	b.Finish(nil)
	pollPage(t, bctx, "fathomDashboard.done && fathomDashboard.steps === "+strconv.Itoa(epochs*perEpoch))
	start := time.Now()
	points, err := chromedp.Run(bctx, chromedp.Evaluate[int]("fathomDashboard.points"))
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the page took %v to answer", d)
	}
	if points > 20000 || points < 1000 {
		t.Errorf("the page holds %d step points, want at most 20000", points)
	}
	// The longest the page was busy at a stretch, loading and drawing
	// included (generous: CI shares two cores with the other packages' tests;
	// idle, it is about 150 ms).
	ms, err := chromedp.Run(bctx, chromedp.Evaluate[float64]("fathomDashboard.longestTaskMs"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d points on the page; its longest task took %.0f ms", points, ms)
	if ms > 3000 {
		t.Errorf("the page was busy for %.0f ms at a stretch", ms)
	}
}

// TestDashboardTokenInBrowser: a page opened as /?token=TOKEN loads its
// script, styles and events with the cookie the token set; without the
// token the server answers 401 and shows nothing of the run.
func TestDashboardTokenInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	exe := chromium()
	if exe == "" {
		t.Skip("dashboard browser test skipped: no Chromium on PATH (apt-get install chromium)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const token = "browser-test-token"
	srv, err := dashboard.Listen(dashboard.Options{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	b := srv.Board()
	b.SetInfo(dashboard.RunInfo{Title: "secret run", Epochs: 1})
	b.AddStep(dashboard.Step{Step: 1, Epoch: 1, Loss: 1})
	b.AddEpoch(dashboard.Epoch{Epoch: 1, Steps: 1, Train: map[string]float64{"loss": 1}})
	b.Finish(nil)

	bctx := startBrowser(t, ctx, exe, "status of 401") // the page without the token
	resp, err := chromedp.Run(bctx, chromedp.NavigateResponse(srv.URL()))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 401 {
		t.Errorf("the page without a token: status %d, want 401", resp.Status)
	}
	body, err := chromedp.Run(bctx, chromedp.Evaluate[string]("document.body.textContent"))
	if err != nil || strings.Contains(body, "secret run") {
		t.Errorf("the page without a token shows %q (%v)", body, err)
	}
	if err := chromedp.Do(bctx, chromedp.Navigate(srv.URL()+"?token="+token)); err != nil {
		t.Fatal(err)
	}
	pollPage(t, bctx, "window.fathomDashboard && fathomDashboard.done && fathomDashboard.epochs === 1")
	title, err := chromedp.Run(bctx, chromedp.Evaluate[string]("document.getElementById('title').textContent"))
	if err != nil || title != "secret run" {
		t.Errorf("title %q (%v)", title, err)
	}
}
