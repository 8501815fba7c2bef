package quant

import (
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/tensor"
)

// Observer records the values a layer input takes on a calibration
// sample and chooses its uint8 map.
type Observer interface {
	// Observe records the values of x (any shape, float).
	Observe(x *tensor.Tensor)
	// Params returns the map for the values observed so far.
	Params(symmetric bool) tensor.QuantParams
}

// MinMax observes the smallest and largest value.
type MinMax struct {
	lo, hi float32
	seen   bool
}

// Observe implements Observer.
func (o *MinMax) Observe(x *tensor.Tensor) {
	if x.Numel() == 0 {
		return
	}
	lo, hi := tensor.MinMax(x)
	if !o.seen {
		o.lo, o.hi, o.seen = lo, hi, true
		return
	}
	o.lo, o.hi = min(o.lo, lo), max(o.hi, hi)
}

// Params implements Observer.
func (o *MinMax) Params(symmetric bool) tensor.QuantParams {
	return tensor.ChooseQuantParams(o.lo, o.hi, symmetric)
}

// HistogramBins is the resolution of a Histogram.
const HistogramBins = 2048

// Histogram observes the distribution of the values in HistogramBins equal
// bins and maps the range between the (1 − Percentile) and Percentile
// quantiles (for symmetric maps, the larger magnitude of the two), so that
// rare outliers do not stretch the scale. The bins span the range of the
// first batch observed; later values outside it count in the end bins, so
// pass the whole calibration sample to the first Observe.
type Histogram struct {
	// Percentile is the share of values the map covers, in (0, 1]; 0 means 0.9999.
	Percentile float64
	lo, hi     float32
	bins       []int64
	total      int64
}

// Observe implements Observer.
func (o *Histogram) Observe(x *tensor.Tensor) {
	if x.Numel() == 0 {
		return
	}
	v := x.Detach().To(tensor.Float32).Float32s()
	if o.bins == nil {
		o.lo, o.hi = tensor.MinMax(x)
		o.bins = make([]int64, HistogramBins)
	}
	w := float64(o.hi - o.lo)
	for _, f := range v {
		if f != f {
			continue
		}
		b := 0
		if w > 0 {
			b = int(float64(f-o.lo) / w * HistogramBins)
		}
		o.bins[min(max(b, 0), HistogramBins-1)]++
		o.total++
	}
}

// quantile returns the value below which a share q of the observations lie
// (the upper edge of the bin where the count crosses q·total).
func (o *Histogram) quantile(q float64) float32 {
	target := q * float64(o.total)
	var c int64
	w := float64(o.hi-o.lo) / HistogramBins
	for b, n := range o.bins {
		c += n
		if float64(c) >= target {
			return o.lo + float32(float64(b+1)*w)
		}
	}
	return o.hi
}

// Params implements Observer.
func (o *Histogram) Params(symmetric bool) tensor.QuantParams {
	if o.total == 0 {
		return tensor.ChooseQuantParams(0, 0, symmetric)
	}
	p := o.Percentile
	if p == 0 {
		p = 0.9999
	}
	if !(p > 0 && p <= 1) {
		panic(fmt.Sprintf("quant: Histogram.Percentile = %g, want (0, 1]", p))
	}
	hi := min(o.quantile(p), o.hi)
	lo := o.lo
	if p < 1 {
		// The lower tail: the upper edge of the bin where (1−p) is crossed,
		// less one bin, so that a distribution starting at lo keeps lo.
		lo = max(o.quantile(1-p)-float32(float64(o.hi-o.lo)/HistogramBins), o.lo)
	}
	if symmetric {
		a := float32(math.Max(math.Abs(float64(lo)), math.Abs(float64(hi))))
		return tensor.ChooseQuantParams(-a, a, true)
	}
	return tensor.ChooseQuantParams(lo, hi, false)
}
