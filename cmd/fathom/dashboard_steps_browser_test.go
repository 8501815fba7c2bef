package main

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fathom-ml/fathom/dashboard"
)

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
