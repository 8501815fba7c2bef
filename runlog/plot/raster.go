package plot

import (
	"image"
	"image/color"
	"image/draw"
	"math"
)

// fillRect paints r (clipped to the image) with c.
func fillRect(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	draw.Draw(img, r, image.NewUniform(c), image.Point{}, draw.Src)
}

// A mask holds the coverage, 0 to 1, of one colour over a rectangle of
// the image. Shapes are added with max, not summed, so where the segments
// of a polyline overlap at a joint the edge is not drawn twice as dark.
type mask struct {
	r   image.Rectangle
	cov []float32
}

func newMask(r image.Rectangle) *mask {
	return &mask{r: r, cov: make([]float32, r.Dx()*r.Dy())}
}

// capsule adds the points within radius of the segment (x0, y0)–(x1, y1),
// with a one-pixel soft edge: a line of width 2·radius with round ends.
// Coordinates are in image pixels; pixel (i, j) has its centre at
// (i+0.5, j+0.5).
func (m *mask) capsule(x0, y0, x1, y1, radius float64) {
	bb := image.Rect(int(math.Floor(math.Min(x0, x1)-radius-1)), int(math.Floor(math.Min(y0, y1)-radius-1)),
		int(math.Ceil(math.Max(x0, x1)+radius+1)), int(math.Ceil(math.Max(y0, y1)+radius+1))).Intersect(m.r)
	dx, dy := x1-x0, y1-y0
	l2 := dx*dx + dy*dy
	for j := bb.Min.Y; j < bb.Max.Y; j++ {
		for i := bb.Min.X; i < bb.Max.X; i++ {
			px, py := float64(i)+0.5-x0, float64(j)+0.5-y0
			t := 0.0
			if l2 > 0 {
				t = math.Max(0, math.Min(1, (px*dx+py*dy)/l2))
			}
			d := math.Hypot(px-t*dx, py-t*dy)
			c := float32(math.Max(0, math.Min(1, radius+0.5-d)))
			k := (j-m.r.Min.Y)*m.r.Dx() + i - m.r.Min.X
			m.cov[k] = max(m.cov[k], c)
		}
	}
}

// covered returns the mean coverage over r.
func (m *mask) covered(r image.Rectangle) float64 {
	r = r.Intersect(m.r)
	if r.Empty() {
		return 0
	}
	sum := 0.0
	for j := r.Min.Y; j < r.Max.Y; j++ {
		for i := r.Min.X; i < r.Max.X; i++ {
			sum += float64(m.cov[(j-m.r.Min.Y)*m.r.Dx()+i-m.r.Min.X])
		}
	}
	return sum / float64(r.Dx()*r.Dy())
}

// paint blends c over the image in proportion to the coverage.
func (m *mask) paint(img *image.RGBA, c color.RGBA) {
	for j := m.r.Min.Y; j < m.r.Max.Y; j++ {
		for i := m.r.Min.X; i < m.r.Max.X; i++ {
			a := m.cov[(j-m.r.Min.Y)*m.r.Dx()+i-m.r.Min.X]
			if a == 0 || !(image.Point{i, j}.In(img.Rect)) {
				continue
			}
			o := img.RGBAAt(i, j)
			mix := func(bg, fg uint8) uint8 { return uint8(float32(bg)*(1-a) + float32(fg)*a + 0.5) }
			img.SetRGBA(i, j, color.RGBA{mix(o.R, c.R), mix(o.G, c.G), mix(o.B, c.B), 255})
		}
	}
}
