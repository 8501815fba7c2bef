package plot

import (
	"math"
	"strconv"
	"strings"
)

// An axis maps data values in [lo, hi] to pixels and carries its tick
// values. lo < hi, both finite.
type axis struct {
	lo, hi float64
	step   float64
	ticks  []float64
}

// dataRange returns the axis range for data in [lo, hi] (NaN when there
// is no data): the range padded by pad of its width on each side, widened
// around a constant value, [0, 1] without data. It never overflows.
func dataRange(lo, hi, pad float64) (float64, float64) {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return 0, 1
	}
	// Halves keep hi-lo finite for ranges as wide as ±MaxFloat64.
	mid, half := lo/2+hi/2, hi/2-lo/2
	if half <= math.Abs(mid)*1e-9 { // constant, up to rounding
		half = math.Abs(mid) * 0.1
		if half == 0 || math.IsInf(half, 0) {
			half = 1
		}
		pad = 0
	}
	half += 2 * pad * half
	lo, hi = mid-half, mid+half
	return math.Max(lo, -math.MaxFloat64), math.Min(hi, math.MaxFloat64)
}

// niceStep returns a step of 1, 2 or 5 × 10^k close to raw (Heckbert,
// "Nice numbers for graph labels", Graphics Gems, 1990), or 0 when raw is
// not positive and finite.
func niceStep(raw float64) float64 {
	if !(raw > 0) || math.IsInf(raw, 0) {
		return 0
	}
	exp := int(math.Floor(math.Log10(raw)))
	var m string
	switch f := raw / math.Pow(10, float64(exp)); {
	case f < 1.5:
		m = "1"
	case f < 3:
		m = "2"
	case f < 7:
		m = "5"
	default:
		m = "10"
	}
	// Parsing gives the double nearest m·10^exp; m*math.Pow(10, exp) may
	// be a little off (5.000000000000002e+307).
	step, err := strconv.ParseFloat(m+"e"+strconv.Itoa(exp), 64)
	if err != nil { // out of range
		return 0
	}
	return step
}

// nextStep returns the nice step after step: 1 → 2 → 5 → 10.
func nextStep(step float64) float64 {
	return niceStep(step * 2.2)
}

// ticksAt returns the multiples of step in [lo, hi] (at most 100).
func ticksAt(lo, hi, step float64) []float64 {
	if !(step > 0) {
		return nil
	}
	first := math.Ceil(lo / step)
	var ts []float64
	for i := 0; i < 100; i++ {
		t := (first + float64(i)) * step // k·step: no sum of rounding errors, no overflow
		if t > hi+step*1e-9 {
			break
		}
		if math.Abs(t) < step*1e-9 {
			t = 0 // no -0 and no 1e-17 from rounding
		}
		ts = append(ts, t)
	}
	return ts
}

// niceTicks returns a nice step giving about n intervals over [lo, hi]
// and the ticks it puts inside that range.
func niceTicks(lo, hi float64, n int) (step float64, ticks []float64) {
	step = niceStep(hi/float64(n) - lo/float64(n))
	return step, ticksAt(lo, hi, step)
}

// tickLabels formats ticks spaced step apart with just the digits that
// tell them apart: "0.25", "-3", "1.5e-07", "2e+09".
func tickLabels(ticks []float64, step float64) []string {
	maxAbs := 0.0
	for _, t := range ticks {
		maxAbs = math.Max(maxAbs, math.Abs(t))
	}
	// The epsilon keeps log10(1e-4) = -4.0000000001 from one more digit.
	exp10 := func(v float64) int { return int(math.Floor(math.Log10(v) + 1e-9)) }
	stepExp := exp10(step)
	labels := make([]string, len(ticks))
	for i, t := range ticks {
		switch {
		case t == 0:
			labels[i] = "0"
		case step >= 1e-4 && maxAbs < 1e7:
			labels[i] = strconv.FormatFloat(t, 'f', max(0, -stepExp), 64)
		default:
			// As many digits as the step needs, less trailing zeros.
			d := min(max(exp10(math.Abs(t))-stepExp, 0), 6)
			mant, exp, _ := strings.Cut(strconv.FormatFloat(t, 'e', d, 64), "e")
			if strings.Contains(mant, ".") {
				mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
			}
			labels[i] = mant + "e" + exp
		}
	}
	return labels
}
