package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fathom-ml/fathom/dashboard"
)

// TestTuneDashboardInBrowser runs a search of 6 Iris trials reporting to
// a dashboard that headless Chromium shows: the trials table fills with
// one row per trial (a column per searched key), the best is marked, the
// scatter is drawn and the page has no console errors.
func TestTuneDashboardInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	exe := chromium()
	if exe == "" {
		t.Skip("tune dashboard browser test skipped: no Chromium on PATH (apt-get install chromium)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := dashboard.Listen(dashboard.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	bctx := startBrowser(t, ctx, exe)
	if err := chromedp.Do(bctx, chromedp.Navigate(srv.URL())); err != nil {
		t.Fatalf("navigate: %v", err)
	}
	pollPage(t, bctx, "window.fathomDashboard && fathomDashboard.connected")

	f := tuneFlags{grid: []string{"optimizer.lr=0.1,0.01,0.001", "model.0.out=8,32"}, sets: []string{"epochs=10"},
		out: t.TempDir(), quiet: true, parallel: 2}
	done := make(chan error, 1)
	go func() { done <- runTuneOn(ctx, "../../examples/iris.yaml", f, srv.Board(), io.Discard, io.Discard) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("timed out")
	}
	srv.Board().Finish(nil)
	pollPage(t, bctx, "fathomDashboard.trialsFinished === 6 && fathomDashboard.done")
	got, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`[
		String(document.querySelectorAll('#trials tbody tr').length),
		Array.from(document.querySelectorAll('#trials thead th')).map(function (th) { return th.textContent; }).join(','),
		String(document.querySelectorAll('#trials td.best').length),
		String(document.getElementById('tune').hidden),
		String(document.querySelectorAll('#c-trials .uplot').length),
		document.getElementById('trials-note').textContent,
		JSON.stringify(fathomDashboard.errors)]`))
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != "6" || got[1] != "trial,optimizer.lr,model.0.out,accuracy,epochs,status,seconds,rank" || got[2] != "1" ||
		got[3] != "false" || got[4] != "1" || !strings.HasPrefix(got[5], "6 of 6 finished · best: trial ") || got[6] != "[]" {
		t.Errorf("page: %d rows %q, header %q, %s best, hidden %s, %s charts, note %q, errors %s",
			len(got[0]), got[0], got[1], got[2], got[3], got[4], got[5], got[6])
	}
	if *dashboardScreenshot {
		time.Sleep(300 * time.Millisecond) // a frame for the last draw
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join("..", "..", "docs", "img", "dashboard-tune.png")
		if err := os.WriteFile(out, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", out, len(png))
	}
}
