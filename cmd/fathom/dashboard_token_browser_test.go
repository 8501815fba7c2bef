package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fathom-ml/fathom/dashboard"
)

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
