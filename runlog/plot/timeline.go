package plot

import (
	"image"
	"image/png"
	"io"
	"math"

	"github.com/fathom-ml/fathom/internal/atomicfile"
)

// TimelineRow is one row of a timeline figure: a label and the intervals
// in which it was busy, in milliseconds from the figure's origin.
type TimelineRow struct {
	Label string
	Spans [][2]float64
	// Comm draws the row in the communication colour (orange) rather
	// than the compute colour (blue).
	Comm bool
}

// Layout of a timeline, in pixels.
const (
	timelineW   = 960
	timelineRow = 26 // a row's height
	timelineBar = 16 // a bar's height
)

// Timeline draws rows as horizontal bars over a common time axis
// in milliseconds, with title above, and writes the PNG atomically: what
// docs show of how a data-parallel step's all-reduces overlap its
// backward pass.
func Timeline(path, title string, rows []TimelineRow) error {
	img := drawTimeline(title, rows)
	return atomicfile.Write(path, func(w io.Writer) error { return png.Encode(w, img) })
}

func drawTimeline(title string, rows []TimelineRow) *image.RGBA {
	labelW := 0
	for _, r := range rows {
		labelW = max(labelW, textWidth(r.Label))
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		for _, s := range r.Spans {
			lo, hi = min(lo, s[0]), max(hi, s[1])
		}
	}
	if !(lo < hi) {
		lo, hi = 0, 1
	}
	lo = min(lo, 0)
	top := padOuter + textHeight + titleGap
	plot := image.Rect(padOuter+labelW+tickGap, top, timelineW-padOuter, top+len(rows)*timelineRow)
	h := plot.Max.Y + tickLen + tickGap + textHeight + labelGap + textHeight + padOuter
	img := image.NewRGBA(image.Rect(0, 0, timelineW, h))
	fillRect(img, img.Rect, white)
	drawText(img, padOuter, padOuter, fitText(title, timelineW-2*padOuter), inkColor, false)
	x := func(ms float64) int {
		return plot.Min.X + int(math.Round((ms-lo)/(hi-lo)*float64(plot.Dx())))
	}
	step, ticks := niceTicks(lo, hi, 8)
	labels := tickLabels(ticks, step)
	for i, t := range ticks {
		tx := x(t)
		fillRect(img, image.Rect(tx, plot.Min.Y, tx+1, plot.Max.Y), gridColor)
		fillRect(img, image.Rect(tx, plot.Max.Y, tx+1, plot.Max.Y+tickLen), axisColor)
		l := labels[i]
		drawText(img, tx-textWidth(l)/2, plot.Max.Y+tickLen+tickGap, l, inkColor, false)
	}
	xl := "milliseconds"
	drawText(img, plot.Min.X+(plot.Dx()-textWidth(xl))/2, plot.Max.Y+tickLen+tickGap+textHeight+labelGap, xl, inkColor, false)
	for i, r := range rows {
		y := plot.Min.Y + i*timelineRow
		drawText(img, plot.Min.X-tickGap-textWidth(r.Label), y+(timelineRow-textHeight)/2, r.Label, inkColor, false)
		c := trainColor
		if r.Comm {
			c = evalColor
		}
		by := y + (timelineRow-timelineBar)/2
		for _, s := range r.Spans {
			x0, x1 := x(s[0]), max(x(s[1]), x(s[0])+1) // at least a pixel
			fillRect(img, image.Rect(x0, by, x1, by+timelineBar), c)
		}
	}
	fillRect(img, image.Rect(plot.Min.X, plot.Max.Y, plot.Max.X, plot.Max.Y+1), axisColor)
	fillRect(img, image.Rect(plot.Min.X, plot.Min.Y, plot.Min.X+1, plot.Max.Y), axisColor)
	return img
}
