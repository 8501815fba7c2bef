package plot

import (
	"image"
	"image/color"
	"image/png"
	"io"
	"math"

	"github.com/fathom-ml/fathom/internal/atomicfile"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/runlog"
)

// Curves draws the learning curves of hist as a PNG of 960×400 pixels at
// path: the loss per epoch on the left and the task's metric on the
// right, training and evaluation data as separate lines ("train" and
// "eval"), title (if not empty) above the loss. Values that are NaN or
// infinite are left out. The file is written to a temporary name and
// renamed.
func Curves(path string, task metrics.Task, hist []runlog.Epoch, title string) error {
	return CurvesSplit(path, task, hist, title, "eval")
}

// CurvesSplit is Curves with the evaluation curves named after the split
// they hold, as runlog.WriteMetricsCSVSplit names its columns: "val" is
// drawn as "validation", any other name as it is.
func CurvesSplit(path string, task metrics.Task, hist []runlog.Epoch, title, split string) error {
	name := split
	if split == "val" {
		name = "validation"
	}
	c := drawCurves(task, hist, title, name)
	return atomicfile.Write(path, func(w io.Writer) error {
		return png.Encode(w, c.img)
	})
}

// The learning curves are drawn with the standard library only: a white
// image of curvesW×curvesH pixels holding two panels side by side.
const curvesW, curvesH = 960, 400

// maxMarkers is the number of points above which a curve is drawn without
// markers, which would crowd the line.
const maxMarkers = 30

var (
	// The curves are blue and orange from Okabe and Ito's palette, which
	// stay apart for every kind of colour vision.
	trainColor = color.RGBA{0, 114, 178, 255}
	evalColor  = color.RGBA{230, 159, 0, 255}

	white      = color.RGBA{255, 255, 255, 255}
	inkColor   = color.RGBA{34, 34, 34, 255}
	axisColor  = color.RGBA{85, 85, 85, 255}
	gridColor  = color.RGBA{229, 229, 229, 255}
	frameColor = color.RGBA{190, 190, 190, 255}
)

// A series is one curve: finite points in epoch order.
type series struct {
	name  string
	color color.RGBA
	x, y  []float64
	dots  bool // markers only, no line (a scatter)
}

// A panel is one of the two plots: a title, the y axis's title and its
// curves.
type panel struct {
	title, ylabel string
	series        []series
	// xlabel names the x axis ("" is "epoch", whole numbers); xreal
	// allows ticks between whole numbers.
	xlabel string
	xreal  bool
}

// curvesImage is the drawn image with the plot area of each panel, for
// tests.
type curvesImage struct {
	img   *image.RGBA
	plots [2]image.Rectangle
}

// drawCurves draws the loss (left) and the task's headline metric (right)
// of hist, the evaluation curves named evalName in the legends.
func drawCurves(task metrics.Task, hist []runlog.Epoch, title, evalName string) curvesImage {
	m := task.Headline()
	mk := func(name string, get func(metrics.Metrics) float64) panel {
		tr := series{name: "train", color: trainColor}
		ev := series{name: evalName, color: evalColor}
		add := func(s *series, epoch int, v float64) {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				s.x, s.y = append(s.x, float64(epoch)), append(s.y, v)
			}
		}
		for _, r := range hist {
			add(&tr, r.Epoch, get(r.Train))
			if r.Eval != nil {
				add(&ev, r.Epoch, get(*r.Eval))
			}
		}
		return panel{title: name, ylabel: name, series: []series{tr, ev}}
	}
	loss := mk("loss", func(x metrics.Metrics) float64 { return x.Loss })
	metric := mk(m, func(x metrics.Metrics) float64 { v, _ := x.Get(m); return v })
	if title != "" {
		// A long title is shortened, not the panel's name.
		loss.title = fitText(title, curvesW/2-2*padOuter-textWidth(": loss")) + ": loss"
	}

	// Both panels share the epoch axis, over every epoch of hist.
	xlo, xhi := math.NaN(), math.NaN()
	for _, r := range hist {
		e := float64(r.Epoch)
		if !(xlo <= e) {
			xlo = e
		}
		if !(xhi >= e) {
			xhi = e
		}
	}
	switch {
	case math.IsNaN(xlo):
		xlo, xhi = 0, 1
	case xlo == xhi:
		xlo, xhi = xlo-0.5, xhi+0.5
	default:
		xlo, xhi = dataRange(xlo, xhi, 0.03)
	}

	img := image.NewRGBA(image.Rect(0, 0, curvesW, curvesH))
	fillRect(img, img.Rect, white)
	var out curvesImage
	out.img = img
	out.plots[0] = drawPanel(img, image.Rect(0, 0, curvesW/2, curvesH), loss, xlo, xhi)
	out.plots[1] = drawPanel(img, image.Rect(curvesW/2, 0, curvesW, curvesH), metric, xlo, xhi)
	return out
}

// Layout of a panel, in pixels.
const (
	padOuter  = 10 // around the panel's texts
	tickLen   = 5  // tick marks, outside the plot area
	tickGap   = 5  // between a tick mark and its label
	titleGap  = 12 // between the title and the plot area
	labelGap  = 10 // between tick labels and the axis title
	markerR   = 3  // marker radius
	lineR     = 1  // half the line width
	legendPad = 8
	legendRow = textHeight + 8
	sampleLen = 28 // the line in front of a legend entry
)

// drawPanel draws p into area with the epoch axis over [xlo, xhi] and
// returns the plot area.
func drawPanel(img *image.RGBA, area image.Rectangle, p panel, xlo, xhi float64) image.Rectangle {
	// The y axis: every finite value of every series, padded.
	ylo, yhi := math.NaN(), math.NaN()
	for _, s := range p.series {
		for _, v := range s.y {
			if !(ylo <= v) {
				ylo = v
			}
			if !(yhi >= v) {
				yhi = v
			}
		}
	}
	empty := math.IsNaN(ylo)
	ylo, yhi = dataRange(ylo, yhi, 0.05)
	ystep, yticks := niceTicks(ylo, yhi, 5)
	if empty { // no values to read off the axis
		yticks = nil
	}
	ylabels := tickLabels(yticks, ystep)
	labelW := 0
	for _, l := range ylabels {
		labelW = max(labelW, textWidth(l))
	}

	plot := image.Rect(
		area.Min.X+padOuter+textHeight+labelGap+labelW+tickGap+tickLen,
		area.Min.Y+padOuter+textHeight+titleGap,
		area.Max.X-2*padOuter,
		area.Max.Y-(tickLen+tickGap+textHeight+labelGap+textHeight+padOuter))
	// Pixel coordinates of data values; halves keep them finite.
	px := func(x float64) float64 {
		return float64(plot.Min.X) + (x/2-xlo/2)/(xhi/2-xlo/2)*float64(plot.Dx())
	}
	py := func(y float64) float64 {
		return float64(plot.Max.Y) - (y/2-ylo/2)/(yhi/2-ylo/2)*float64(plot.Dy())
	}

	xticks, xlabels := xAxisTicks(xlo, xhi, p.xreal, px)

	// Grid, curves, axes.
	for _, t := range xticks {
		x := int(px(t))
		fillRect(img, image.Rect(x, plot.Min.Y, x+1, plot.Max.Y), gridColor)
	}
	for _, t := range yticks {
		y := int(py(t))
		fillRect(img, image.Rect(plot.Min.X, y, plot.Max.X, y+1), gridColor)
	}
	ink, shown := drawSeries(img, plot, p.series, px, py)
	fillRect(img, image.Rect(plot.Min.X-1, plot.Min.Y, plot.Min.X, plot.Max.Y+1), axisColor)
	fillRect(img, image.Rect(plot.Min.X-1, plot.Max.Y, plot.Max.X, plot.Max.Y+1), axisColor)

	// Ticks and their labels.
	for i, t := range xticks {
		x := int(px(t))
		fillRect(img, image.Rect(x, plot.Max.Y+1, x+1, plot.Max.Y+1+tickLen), axisColor)
		drawText(img, x-textWidth(xlabels[i])/2, plot.Max.Y+1+tickLen+tickGap, xlabels[i], inkColor, false)
	}
	for i, t := range yticks {
		y := int(py(t))
		fillRect(img, image.Rect(plot.Min.X-1-tickLen, y, plot.Min.X-1, y+1), axisColor)
		drawText(img, plot.Min.X-1-tickLen-tickGap-textWidth(ylabels[i]), y-textHeight/2, ylabels[i], inkColor, false)
	}

	// Titles: the panel's above, the axes' below and to the left.
	midX, midY := (plot.Min.X+plot.Max.X)/2, (plot.Min.Y+plot.Max.Y)/2
	title := fitText(p.title, area.Dx()-2*padOuter)
	drawText(img, max(area.Min.X+padOuter, midX-textWidth(title)/2), area.Min.Y+padOuter, title, inkColor, false)
	xlabel := p.xlabel
	if xlabel == "" {
		xlabel = "epoch"
	}
	xlabel = fitText(xlabel, plot.Dx())
	drawText(img, midX-textWidth(xlabel)/2, plot.Max.Y+1+tickLen+tickGap+textHeight+labelGap, xlabel, inkColor, false)
	ylabel := fitText(p.ylabel, plot.Dy())
	drawText(img, area.Min.X+padOuter, midY+textWidth(ylabel)/2, ylabel, inkColor, true)

	if len(shown) == 0 {
		drawText(img, midX-textWidth("no data")/2, midY-textHeight/2, "no data", axisColor, false)
		return plot
	}
	drawLegend(img, plot, ink, shown)
	return plot
}

// xAxisTicks returns the ticks of the x axis over [xlo, xhi] and their
// labels: whole epochs (any step when real), labels apart by at least two
// letters at the pixel positions px gives.
func xAxisTicks(xlo, xhi float64, real bool, px func(float64) float64) ([]float64, []string) {
	xstep, _ := niceTicks(xlo, xhi, 6)
	if !real {
		xstep = max(xstep, 1)
	}
	for {
		xticks := ticksAt(xlo, xhi, xstep)
		xlabels := tickLabels(xticks, xstep)
		w := 0
		for _, l := range xlabels {
			w = max(w, textWidth(l))
		}
		if len(xticks) < 2 || px(xlo+xstep)-px(xlo) >= float64(w+2*charAdvance) {
			return xticks, xlabels
		}
		xstep = nextStep(xstep)
	}
}

// drawSeries draws the series that have points into the plot area (data
// to pixels by px and py) and returns the coverage of all their ink, to
// place the legend, and the series drawn.
func drawSeries(img *image.RGBA, plot image.Rectangle, ss []series, px, py func(float64) float64) (*mask, []series) {
	ink := newMask(plot)
	var shown []series
	for _, s := range ss {
		if len(s.x) == 0 {
			continue
		}
		shown = append(shown, s)
		m := newMask(plot)
		for i := range s.x {
			x, y := px(s.x[i]), py(s.y[i])
			if i > 0 && !s.dots {
				m.capsule(px(s.x[i-1]), py(s.y[i-1]), x, y, lineR)
			}
			if len(s.x) <= maxMarkers || s.dots {
				m.capsule(x, y, x, y, markerR)
			}
		}
		m.paint(img, s.color)
		for k, c := range m.cov {
			ink.cov[k] = max(ink.cov[k], c)
		}
	}
	return ink, shown
}

// drawLegend draws a box naming the curves in the corner of the plot area
// where it hides the least of them.
func drawLegend(img *image.RGBA, plot image.Rectangle, ink *mask, ss []series) {
	w := 0
	for _, s := range ss {
		w = max(w, textWidth(s.name))
	}
	size := image.Pt(legendPad+sampleLen+legendPad+w+legendPad, legendPad+len(ss)*legendRow-8+legendPad)
	in := plot.Inset(legendPad)
	corners := []image.Point{
		{in.Max.X - size.X, in.Min.Y}, // top right first, where gonum/plot put it
		{in.Max.X - size.X, in.Max.Y - size.Y},
		{in.Min.X, in.Min.Y},
		{in.Min.X, in.Max.Y - size.Y},
	}
	best, bestCov := corners[0], math.Inf(1)
	for _, c := range corners {
		if cov := ink.covered(image.Rectangle{c, c.Add(size)}); cov < bestCov-1e-9 {
			best, bestCov = c, cov
		}
	}
	box := image.Rectangle{best, best.Add(size)}
	fillRect(img, box, frameColor)
	fillRect(img, box.Inset(1), white)
	for i, s := range ss {
		top := box.Min.Y + legendPad + i*legendRow
		y := float64(top) + textHeight/2.0
		x0, x1 := float64(box.Min.X+legendPad), float64(box.Min.X+legendPad+sampleLen)
		m := newMask(image.Rect(int(x0)-markerR-1, top, int(x1)+markerR+1, top+textHeight))
		if !s.dots {
			m.capsule(x0, y, x1, y, lineR)
		}
		if len(s.x) <= maxMarkers || s.dots {
			m.capsule((x0+x1)/2, y, (x0+x1)/2, y, markerR)
		}
		m.paint(img, s.color)
		drawText(img, box.Min.X+legendPad+sampleLen+legendPad, top, s.name, inkColor, false)
	}
}

// fitText shortens s with "..." to at most width pixels.
func fitText(s string, width int) string {
	r := []rune(s)
	if textWidth(s) <= width {
		return s
	}
	n := max(0, (width+fontScale)/charAdvance-3)
	return string(r[:min(n, len(r))]) + "..."
}
