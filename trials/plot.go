package trials

import (
	"math"
	"strconv"

	"github.com/fathom-ml/fathom/runlog/plot"
)

// WritePlot draws the results into a PNG: the metric of every trial
// against its ID (done and stopped trials apart), then one panel of the
// metric against each numeric searched key (on a log10 axis when its
// values span an order of magnitude or more, all positive and not all
// whole numbers) — a scatter
// per key, the readable form of parallel coordinates for a few keys.
func WritePlot(path string, rs []Result, metricName string) error {
	byStatus := func(x func(Result) (float64, bool)) []plot.ScatterSeries {
		var out []plot.ScatterSeries
		for _, st := range []Status{Done, Stopped} {
			s := plot.ScatterSeries{Name: string(st)}
			for _, r := range rs {
				if r.Status != st {
					continue
				}
				if v, ok := x(r); ok {
					s.X, s.Y = append(s.X, v), append(s.Y, r.Metric)
				}
			}
			if len(s.X) > 0 || st == Done {
				out = append(out, s)
			}
		}
		return out
	}
	panels := []plot.ScatterPanel{{Title: metricName + " by trial", XLabel: "trial", YLabel: metricName,
		Series: byStatus(func(r Result) (float64, bool) { return float64(r.ID), true })}}
	for _, key := range paramKeys(rs) {
		vals := map[int]float64{}
		lo, hi, numeric, whole := math.Inf(1), math.Inf(-1), true, true
		for _, r := range rs {
			for _, p := range r.Params {
				if p.Key != key {
					continue
				}
				v, err := strconv.ParseFloat(p.Value, 64)
				if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
					numeric = false
					continue
				}
				vals[r.ID] = v
				whole = whole && v == math.Trunc(v)
				lo, hi = min(lo, v), max(hi, v)
			}
		}
		if !numeric || len(vals) == 0 {
			continue
		}
		log := lo > 0 && hi/lo >= 10 && !whole // a learning rate, not a seed or a width
		label := key
		if log {
			label = "log10 " + key
		}
		panels = append(panels, plot.ScatterPanel{Title: metricName + " by " + key, XLabel: label, YLabel: metricName,
			Series: byStatus(func(r Result) (float64, bool) {
				v, ok := vals[r.ID]
				if log {
					v = math.Log10(v)
				}
				return v, ok
			})})
	}
	return plot.Scatter(path, panels)
}
