package plot

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// Bars land where their spans are: a compute bar's middle is blue, a
// communication bar's orange, and the gap between them white.
func TestTimeline(t *testing.T) {
	rows := []TimelineRow{
		{Label: "backward", Spans: [][2]float64{{0, 4}}},
		{Label: "bucket 0", Spans: [][2]float64{{5, 9}}, Comm: true},
	}
	img := drawTimeline("step", rows)
	b := img.Bounds()
	if b.Dx() != timelineW {
		t.Fatalf("width %d", b.Dx())
	}
	top := padOuter + textHeight + titleGap
	labelW := textWidth("backward")
	left := padOuter + labelW + tickGap
	plotW := timelineW - padOuter - left
	at := func(ms float64, row int) (int, int) {
		return left + int(ms/9*float64(plotW)), top + row*timelineRow + timelineRow/2
	}
	if x, y := at(2, 0); img.RGBAAt(x, y) != trainColor {
		t.Errorf("compute bar at (%d, %d): %v", x, y, img.RGBAAt(x, y))
	}
	if x, y := at(7, 1); img.RGBAAt(x, y) != evalColor {
		t.Errorf("communication bar at (%d, %d): %v", x, y, img.RGBAAt(x, y))
	}
	if x, y := at(4.5, 1); img.RGBAAt(x, y) != white && img.RGBAAt(x, y) != gridColor {
		t.Errorf("gap at (%d, %d): %v", x, y, img.RGBAAt(x, y))
	}
	path := filepath.Join(t.TempDir(), "t.png")
	if err := Timeline(path, "step", rows); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Fatal(err)
	}
}
