package plot

import (
	"image"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestScatter checks the layout (two panels a row), that points are drawn
// as markers without a line between them, and that non-finite points are
// left out.
func TestScatter(t *testing.T) {
	pts := ScatterSeries{Name: "done", X: []float64{0, 10, math.NaN()}, Y: []float64{0, 10, 5}}
	panels := []ScatterPanel{{Title: "a", XLabel: "trial", YLabel: "accuracy", Series: []ScatterSeries{pts}}, {Title: "b"}, {Title: "c"}}
	img := drawScatter(panels)
	if got := img.Bounds().Size(); got != image.Pt(2*scatterW, 2*scatterH) {
		t.Fatalf("3 panels: image %v, want two rows of two", got)
	}
	// The path between the two markers stays background.
	coloured := func(x, y int) bool {
		c := img.RGBAAt(x, y)
		return c.B > 150 && c.R < 80 // the first series' blue
	}
	// The markers sit at the bottom left and the top right of the first
	// panel: its lowest and its highest coloured pixels.
	lo, hi, n := image.Point{}, image.Pt(0, scatterH), 0
	for y := 0; y < scatterH; y++ {
		for x := 0; x < scatterW; x++ {
			if coloured(x, y) {
				n++
				if y > lo.Y {
					lo = image.Pt(x, y)
				}
				if y < hi.Y {
					hi = image.Pt(x, y)
				}
			}
		}
	}
	if n == 0 || lo.Y-hi.Y < 50 {
		t.Fatalf("markers not found (%d coloured pixels, from y %d to %d)", n, hi.Y, lo.Y)
	}
	mid := lo.Add(hi).Div(2)
	for dy := -3; dy <= 3; dy++ {
		if coloured(mid.X, mid.Y+dy) {
			t.Errorf("pixel (%d, %d) between the markers is coloured: a line was drawn", mid.X, mid.Y+dy)
		}
	}
	path := filepath.Join(t.TempDir(), "s.png")
	if err := Scatter(path, panels); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Errorf("scatter PNG: %v", err)
	}
}
