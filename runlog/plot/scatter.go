package plot

import (
	"image"
	"image/color"
	"image/png"
	"io"
	"math"

	"github.com/fathom-ml/fathom/internal/atomicfile"
)

// ScatterPanel is one panel of a scatter figure: points of one or more
// named series against a shared x axis.
type ScatterPanel struct {
	Title, XLabel, YLabel string
	Series                []ScatterSeries
}

// ScatterSeries is one set of points, drawn as markers in one colour.
type ScatterSeries struct {
	Name string
	X, Y []float64
}

// scatterColors are Okabe and Ito's palette after the curves' two.
var scatterColors = []color.RGBA{trainColor, evalColor, {213, 94, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255}, {86, 180, 233, 255}}

// Layout of a scatter figure: panels of scatterW×scatterH pixels, two per
// row.
const scatterW, scatterH, scatterCols = 480, 360, 2

// Scatter draws panels (two per row) into a PNG file at path;
// points that are not finite are left out.
func Scatter(path string, panels []ScatterPanel) error {
	img := drawScatter(panels)
	return atomicfile.Write(path, func(w io.Writer) error { return png.Encode(w, img) })
}

func drawScatter(panels []ScatterPanel) *image.RGBA {
	rows := max((len(panels)+scatterCols-1)/scatterCols, 1)
	cols := min(max(len(panels), 1), scatterCols)
	img := image.NewRGBA(image.Rect(0, 0, cols*scatterW, rows*scatterH))
	fillRect(img, img.Rect, white)
	for i, sp := range panels {
		p := panel{title: sp.Title, ylabel: sp.YLabel, xlabel: sp.XLabel, xreal: true}
		xlo, xhi := math.NaN(), math.NaN()
		for k, s := range sp.Series {
			ser := series{name: s.Name, color: scatterColors[k%len(scatterColors)], dots: true}
			for j := range min(len(s.X), len(s.Y)) {
				x, y := s.X[j], s.Y[j]
				if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) {
					continue
				}
				ser.x, ser.y = append(ser.x, x), append(ser.y, y)
				if !(xlo <= x) {
					xlo = x
				}
				if !(xhi >= x) {
					xhi = x
				}
			}
			p.series = append(p.series, ser)
		}
		xlo, xhi = dataRange(xlo, xhi, 0.05)
		x0, y0 := (i%scatterCols)*scatterW, (i/scatterCols)*scatterH
		drawPanel(img, image.Rect(x0, y0, x0+scatterW, y0+scatterH), p, xlo, xhi)
	}
	return img
}
