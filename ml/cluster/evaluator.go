package cluster

import (
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/ml"
)

// ClusteringEvaluator is Spark ML's: the mean silhouette of the rows,
// with the squared Euclidean distance (Spark's default) or the cosine
// distance, computed as Spark does in O(n·k·d) from per-cluster sums.
type ClusteringEvaluator struct {
	FeaturesCol   string `json:"featuresCol" yaml:"featuresCol"`
	PredictionCol string `json:"predictionCol" yaml:"predictionCol"`
	// MetricName is "silhouette", the only one.
	MetricName string `json:"metricName" yaml:"metricName"`
	// DistanceMeasure is "squaredEuclidean" (default) or "cosine".
	DistanceMeasure string `json:"distanceMeasure" yaml:"distanceMeasure"`
}

// NewClusteringEvaluator returns Spark's defaults.
func NewClusteringEvaluator() *ClusteringEvaluator {
	return &ClusteringEvaluator{FeaturesCol: ml.FeaturesCol, PredictionCol: ml.PredictionCol,
		MetricName: "silhouette", DistanceMeasure: "squaredEuclidean"}
}

// Metric is the metric name.
func (e *ClusteringEvaluator) Metric() string { return e.MetricName }

// LargerBetter is true: a silhouette near 1 is a tight, separated cluster.
func (e *ClusteringEvaluator) LargerBetter() bool { return true }

// Evaluate returns the mean silhouette over every rank's rows. With the
// squared Euclidean distance the mean distance of x to the rows of
// cluster C is ‖x‖² + Σ_C‖y‖²/n_C − 2x·Σ_C y/n_C; for cosine, with unit
// rows, 1 − x·Σ_C y/n_C. A row's own cluster's mean excludes the row
// (scaled by n/(n−1)), a row alone in its cluster scores 0 (Spark's
// SquaredEuclideanSilhouette and CosineSilhouette).
func (e *ClusteringEvaluator) Evaluate(f *data.Frame, c ml.Comm) (float64, error) {
	if e.MetricName != "silhouette" {
		return 0, fmt.Errorf("ClusteringEvaluator: metricName must be silhouette, got %q", e.MetricName)
	}
	if c == nil {
		c = ml.Single
	}
	cosine := false
	switch e.DistanceMeasure {
	case "squaredEuclidean":
	case "cosine":
		cosine = true
	default:
		return 0, fmt.Errorf("ClusteringEvaluator: distanceMeasure must be squaredEuclidean or cosine, got %q", e.DistanceMeasure)
	}
	p, err := readPoints(f, e.FeaturesCol, cosine)
	var pred []float64
	if err == nil {
		pred, err = ml.Numbers(f, e.PredictionCol)
	}
	k := -1
	if err == nil {
		for i, v := range pred {
			if v < 0 || v != math.Trunc(v) || v > 1<<24 {
				err = fmt.Errorf("column %q, row %d: %g is not a cluster index", e.PredictionCol, i+1, v)
				break
			}
			k = max(k, int(v))
		}
	}
	width := 0
	if p != nil {
		width = p.d
	}
	meta := []float64{float64(k), float64(width), 0}
	if err != nil {
		meta[2] = 1
	}
	if rerr := c.AllReduce(meta, ml.OpMax); rerr != nil {
		return 0, fmt.Errorf("ClusteringEvaluator: %w", rerr)
	}
	if err != nil {
		return 0, fmt.Errorf("ClusteringEvaluator: %w", err)
	}
	if meta[2] != 0 {
		return 0, fmt.Errorf("ClusteringEvaluator: %w", ml.ErrOtherRank)
	}
	k, d := int(meta[0])+1, int(meta[1])
	if k < 2 {
		return 0, fmt.Errorf("ClusteringEvaluator: the silhouette needs at least 2 clusters, the predictions have %d", max(k, 0))
	}
	if p.n > 0 && p.d != d {
		return 0, fmt.Errorf("ClusteringEvaluator: column %q has %d elements here, %d on another rank", e.FeaturesCol, p.d, d)
	}
	// per cluster: Σy (k × d), Σ‖y‖² (k), n (k)
	st := make([]float64, k*d+2*k)
	for i := range p.n {
		j := int(pred[i])
		kernel.AxpyF64(1, p.row(i), st[j*d:(j+1)*d])
		st[k*d+j] += p.norm2[i]
		st[k*d+k+j]++
	}
	if err := c.AllReduce(st, ml.OpSum); err != nil {
		return 0, fmt.Errorf("ClusteringEvaluator: %w", err)
	}
	sums, sq, cnt := st[:k*d], st[k*d:k*d+k], st[k*d+k:]
	mean := func(x []float64, xn float64, j int) float64 {
		dot := kernel.DotF64(x, sums[j*d:(j+1)*d])
		if cosine {
			return 1 - dot/cnt[j]
		}
		return xn + sq[j]/cnt[j] - 2*dot/cnt[j]
	}
	total := []float64{0, float64(p.n)}
	for i := range p.n {
		j := int(pred[i])
		if cnt[j] <= 1 {
			continue
		}
		x := p.row(i)
		a := mean(x, p.norm2[i], j) * cnt[j] / (cnt[j] - 1)
		b := math.Inf(1)
		for o := range k {
			if o != j && cnt[o] > 0 {
				b = min(b, mean(x, p.norm2[i], o))
			}
		}
		switch {
		case a < b:
			total[0] += 1 - a/b
		case a > b:
			total[0] += b/a - 1
		}
	}
	if err := c.AllReduce(total, ml.OpSum); err != nil {
		return 0, fmt.Errorf("ClusteringEvaluator: %w", err)
	}
	if total[1] == 0 {
		return 0, fmt.Errorf("ClusteringEvaluator: no rows")
	}
	return total[0] / total[1], nil
}
