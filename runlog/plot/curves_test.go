package plot

import (
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/runlog"
)

// curvesHistory returns n epochs of a classification run whose loss
// falls and accuracy rises, with evaluation data from eval on.
func curvesHistory(n int, eval bool) []runlog.Epoch {
	var h []runlog.Epoch
	for e := 1; e <= n; e++ {
		x := float64(e)
		r := runlog.Epoch{Epoch: e, Train: metrics.Metrics{Loss: 2.3*math.Exp(-x/5) + 0.1, Accuracy: 0.95 - 0.6*math.Exp(-x/4), RMSE: math.NaN()}}
		if eval {
			r.Eval = &metrics.Metrics{Loss: 2.2*math.Exp(-x/6) + 0.2 + 0.004*x, Accuracy: 0.9 - 0.6*math.Exp(-x/4), RMSE: math.NaN()}
		}
		h = append(h, r)
	}
	return h
}

// hasColor reports whether c is a pixel of r in img.
func hasColor(img image.Image, r image.Rectangle, c color.RGBA) bool {
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if color.RGBAModel.Convert(img.At(x, y)) == c {
				return true
			}
		}
	}
	return false
}

// darkPixels counts the pixels of r darker than mid grey.
func darkPixels(img image.Image, r image.Rectangle) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if g := color.GrayModel.Convert(img.At(x, y)).(color.Gray); g.Y < 128 {
				n++
			}
		}
	}
	return n
}

func TestCurves(t *testing.T) {
	path := filepath.Join(t.TempDir(), "curves.png")
	if err := Curves(path, metrics.Classification, curvesHistory(20, true), "mnist mlp"); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if got := img.Bounds(); got != image.Rect(0, 0, curvesW, curvesH) {
		t.Fatalf("size %v, want %dx%d", got, curvesW, curvesH)
	}
	c := drawCurves(metrics.Classification, curvesHistory(20, true), "mnist mlp", "eval")
	for i, plot := range c.plots {
		if plot.Empty() || !plot.In(img.Bounds()) {
			t.Fatalf("panel %d: plot area %v", i, plot)
		}
		// The legend shows both colours too, so look at the curves only:
		// the plot area less a legend's height at the top and bottom.
		curves := plot.Inset(0)
		curves.Min.Y += 2*legendRow + 2*legendPad
		curves.Max.Y -= 2*legendRow + 2*legendPad
		for _, col := range []color.RGBA{trainColor, evalColor} {
			if !hasColor(img, curves, col) {
				t.Errorf("panel %d: no pixel of %v in %v", i, col, curves)
			}
		}
		// Title above the plot, tick labels and axis title below it.
		above := image.Rect(plot.Min.X, 0, plot.Max.X, plot.Min.Y-tickLen)
		below := image.Rect(plot.Min.X, plot.Max.Y+tickLen+1, plot.Max.X, curvesH)
		left := image.Rect(plot.Min.X-plot.Min.X%(curvesW/2), plot.Min.Y, plot.Min.X-tickLen-1, plot.Max.Y)
		for _, r := range []image.Rectangle{above, below, left} {
			if n := darkPixels(img, r); n < 50 {
				t.Errorf("panel %d: %d dark pixels in %v, want text", i, n, r)
			}
		}
	}
}

// TestCurvesDegenerate draws histories that have little or nothing
// to draw: each must give a whole image without panicking.
func TestCurvesDegenerate(t *testing.T) {
	nan := math.NaN()
	constant := curvesHistory(5, true)
	for i := range constant {
		constant[i].Train.Loss, constant[i].Eval.Loss = 0.7, 0.7
	}
	allNaNEval := curvesHistory(5, true)
	for i := range allNaNEval {
		allNaNEval[i].Eval.Loss, allNaNEval[i].Eval.Accuracy = nan, nan
	}
	withInf := curvesHistory(5, true)
	withInf[2].Train.Loss, withInf[3].Eval.Accuracy = math.Inf(1), math.Inf(-1)
	huge := curvesHistory(4, false)
	for i := range huge {
		huge[i].Train.Loss = (float64(i) - 1.5) * 1e307
	}
	tiny := curvesHistory(4, false)
	for i := range tiny {
		tiny[i].Train.Loss = 1 + float64(i)*1e-12
		tiny[i].Train.Accuracy = float64(i) * 1e-300
	}
	negative := curvesHistory(4, true)
	for i := range negative {
		negative[i].Train.Loss = -float64(i) - 0.5
	}
	regression := []runlog.Epoch{{Epoch: 1, Train: metrics.Metrics{Loss: 9, Accuracy: nan, RMSE: 3}, Eval: &metrics.Metrics{Loss: nan, Accuracy: nan, RMSE: nan}}}
	for _, test := range []struct {
		name  string
		task  metrics.Task
		hist  []runlog.Epoch
		title string
	}{
		{"empty", metrics.Classification, nil, ""},
		{"one epoch", metrics.Classification, curvesHistory(1, true), ""},
		{"one epoch regression", metrics.Regression, regression, "x"},
		{"no eval", metrics.Classification, curvesHistory(12, false), ""},
		{"all-NaN eval", metrics.Classification, allNaNEval, ""},
		{"constant loss", metrics.Classification, constant, ""},
		{"infinities", metrics.Classification, withInf, ""},
		{"huge range", metrics.Classification, huge, ""},
		{"tiny range", metrics.Classification, tiny, ""},
		{"negative", metrics.Classification, negative, ""},
		{"many epochs", metrics.Classification, curvesHistory(500, true), ""},
		{"long title", metrics.Classification, curvesHistory(3, true), strings.Repeat("wide résumé ", 20)},
	} {
		path := filepath.Join(t.TempDir(), "curves.png")
		if err := Curves(path, test.task, test.hist, test.title); err != nil {
			t.Errorf("%s: %v", test.name, err)
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil || cfg.Width != curvesW || cfg.Height != curvesH {
			t.Errorf("%s: %dx%d, %v", test.name, cfg.Width, cfg.Height, err)
		}
	}
}

func TestCurvesSplit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "curves.png")
	if err := CurvesSplit(path, metrics.Regression, nil, "", "val"); err != nil {
		t.Fatal(err)
	}
	if err := CurvesSplit(filepath.Join(t.TempDir(), "no", "curves.png"), metrics.Regression, nil, "", "val"); err == nil {
		t.Error("writing into a missing directory: no error")
	}
}

func TestNiceTicks(t *testing.T) {
	for _, test := range []struct {
		lo, hi float64
		n      int
		step   float64
		ticks  []float64
		labels []string
	}{
		{0, 1, 5, 0.2, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}, []string{"0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
		{-0.01, 2.41, 5, 0.5, []float64{0, 0.5, 1, 1.5, 2}, []string{"0", "0.5", "1.0", "1.5", "2.0"}},
		{0.31, 0.98, 5, 0.1, []float64{0.4, 0.5, 0.6, 0.7, 0.8, 0.9}, []string{"0.4", "0.5", "0.6", "0.7", "0.8", "0.9"}},
		{0.4, 20.6, 6, 5, []float64{5, 10, 15, 20}, []string{"5", "10", "15", "20"}},
		{-7, 3, 4, 2, []float64{-6, -4, -2, 0, 2}, []string{"-6", "-4", "-2", "0", "2"}},
		{-0.35, 0.35, 5, 0.1, []float64{-0.3, -0.2, -0.1, 0, 0.1, 0.2, 0.3}, []string{"-0.3", "-0.2", "-0.1", "0", "0.1", "0.2", "0.3"}},
		{1000, 5000, 4, 1000, []float64{1000, 2000, 3000, 4000, 5000}, []string{"1000", "2000", "3000", "4000", "5000"}},
		{0.0001, 0.0005, 4, 0.0001, []float64{0.0001, 0.0002, 0.0003, 0.0004, 0.0005}, []string{"0.0001", "0.0002", "0.0003", "0.0004", "0.0005"}},
		{0, 3e-6, 3, 1e-6, []float64{0, 1e-6, 2e-6, 3e-6}, []string{"0", "1e-06", "2e-06", "3e-06"}},
		{1e8, 3e8, 2, 1e8, []float64{1e8, 2e8, 3e8}, []string{"1e+08", "2e+08", "3e+08"}},
		{1.2e9, 1.5e9, 3, 1e8, []float64{1.2e9, 1.3e9, 1.4e9, 1.5e9}, []string{"1.2e+09", "1.3e+09", "1.4e+09", "1.5e+09"}},
		{-1e308, 1e308, 4, 5e307, []float64{-1e308, -5e307, 0, 5e307, 1e308}, []string{"-1e+308", "-5e+307", "0", "5e+307", "1e+308"}},
		{1, 1, 5, 0, nil, []string{}},
	} {
		step, ticks := niceTicks(test.lo, test.hi, test.n)
		labels := tickLabels(ticks, step)
		near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }
		if !near(step, test.step) || !slices.EqualFunc(ticks, test.ticks, near) || !slices.Equal(labels, test.labels) {
			t.Errorf("niceTicks(%g, %g, %d) = %g, %v, %q; want %g, %v, %q", test.lo, test.hi, test.n, step, ticks, labels, test.step, test.ticks, test.labels)
		}
	}
}

func TestDataRange(t *testing.T) {
	for _, test := range []struct{ lo, hi, pad, wantLo, wantHi float64 }{
		{0, 10, 0.05, -0.5, 10.5},
		{math.NaN(), math.NaN(), 0.05, 0, 1},
		{0.5, 0.5, 0.05, 0.45, 0.55},
		{0, 0, 0.05, -1, 1},
		{-2, -2, 0.05, -2.2, -1.8},
		{-math.MaxFloat64, math.MaxFloat64, 0.05, -math.MaxFloat64, math.MaxFloat64},
	} {
		lo, hi := dataRange(test.lo, test.hi, test.pad)
		if math.Abs(lo-test.wantLo) > 1e-12 || math.Abs(hi-test.wantHi) > 1e-12 {
			t.Errorf("dataRange(%g, %g, %g) = %g, %g; want %g, %g", test.lo, test.hi, test.pad, lo, hi, test.wantLo, test.wantHi)
		}
	}
}

// TestGlyphs checks the font data: every printable ASCII character has
// 7 rows, or 9 with a descender, of 5 pixels.
func TestGlyphs(t *testing.T) {
	for c := ' '; c <= '~'; c++ {
		g := glyphs[c]
		if len(g) != glyphH && len(g) != glyphH+glyphDescent {
			t.Errorf("%q: %d rows", c, len(g))
		}
		for _, row := range g {
			if len(row) != glyphW || strings.Trim(row, "#.") != "" {
				t.Errorf("%q: row %q", c, row)
			}
		}
	}
	if textWidth("") != 0 || textWidth("ab") != 2*charAdvance-fontScale || textWidth("é") != textWidth("e") {
		t.Error("textWidth")
	}
}
