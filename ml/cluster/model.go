package cluster

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/internal/parallel"
	"github.com/fathom-ml/fathom/ml"
)

// KMeansModel is a fitted KMeans: its centers, and Spark's training
// summary (cost, cluster sizes, iterations). Its transform adds the
// index of each row's nearest center (0 .. K−1) as the prediction column.
type KMeansModel struct {
	FeaturesCol     string `json:"featuresCol"`
	PredictionCol   string `json:"predictionCol"`
	DistanceMeasure string `json:"distanceMeasure"`
	// K is the number of centers: the k asked for, or fewer when the
	// data had fewer distinct points.
	K           int `json:"k"`
	NumFeatures int `json:"numFeatures"`
	// NumIter is the number of Lloyd iterations run.
	NumIter int `json:"numIter"`
	// TrainingCost is the sum over the training rows of the distance to
	// the nearest final center: squared Euclidean (scikit-learn's inertia)
	// or 1 − cosine similarity.
	TrainingCost float64 `json:"trainingCost"`
	// ClusterSizes counts the training rows nearest each final center.
	ClusterSizes []int64 `json:"clusterSizes"`

	// Centers is K × NumFeatures, row-major (unit rows for cosine).
	Centers []float64 `json:"-"`
}

// Type is "KMeansModel".
func (m *KMeansModel) Type() string { return "KMeansModel" }

// NumIterations is the number of Lloyd iterations (for `fathom ml`).
func (m *KMeansModel) NumIterations() int { return m.NumIter }

// Center returns center j (a view).
func (m *KMeansModel) Center(j int) []float64 {
	return m.Centers[j*m.NumFeatures : (j+1)*m.NumFeatures]
}

// Predict returns the index of the center nearest each row of x (rows ×
// NumFeatures, row-major).
func (m *KMeansModel) Predict(x []float64) ([]int, error) {
	d := m.NumFeatures
	if d == 0 || len(x)%d != 0 {
		return nil, fmt.Errorf("KMeansModel: %d values are not rows of %d", len(x), d)
	}
	unit := m.DistanceMeasure == Cosine
	if unit {
		x = slices.Clone(x)
	}
	p, zero := newPoints(x, len(x)/d, d, unit)
	if zero >= 0 {
		return nil, fmt.Errorf("KMeansModel: row %d: the cosine distance is not defined for a zero vector", zero+1)
	}
	return m.assign(p), nil
}

func (m *KMeansModel) assign(p *points) []int {
	k, d := m.K, m.NumFeatures
	cn := norms(m.Centers, k, d)
	out := make([]int, p.n)
	parallel.For(p.n, block, func(lo, hi int) {
		dist := make([]float64, block*k)
		for b := lo; b < hi; b += block {
			e := min(b+block, hi)
			sqDist(p.x[b*d:e*d], p.norm2[b:e], e-b, d, m.Centers, cn, k, dist)
			for i := b; i < e; i++ {
				out[i], _, _ = argmin2(dist[(i-b)*k : (i-b+1)*k])
			}
		}
	})
	return out
}

// Transform adds the prediction column: the nearest center's index.
func (m *KMeansModel) Transform(f *data.Frame) (*data.Frame, error) {
	p, err := readPoints(f, m.FeaturesCol, m.DistanceMeasure == Cosine)
	if err != nil {
		return nil, fmt.Errorf("KMeansModel: %w", err)
	}
	if p.n > 0 && p.d != m.NumFeatures {
		return nil, fmt.Errorf("KMeansModel: column %q has %d elements, the model was fitted on %d", m.FeaturesCol, p.d, m.NumFeatures)
	}
	pred := make([]float64, p.n)
	for i, j := range m.assign(p) {
		pred[i] = float64(j)
	}
	return ml.WithColumns(f, ml.ScalarOut(m.PredictionCol, pred))
}

// Encode stores the settings and summary as params and the centers as an
// array.
func (m *KMeansModel) Encode() (ml.Encoded, error) {
	return ml.Encoded{Params: m, Arrays: map[string]ml.Array{
		"centers": ml.Mat(m.K, m.NumFeatures, m.Centers),
	}}, nil
}

func decodeModel(raw json.RawMessage, arrays map[string]ml.Array) (ml.Model, error) {
	m := &KMeansModel{}
	if err := ml.DecodeParams(raw, m); err != nil {
		return nil, err
	}
	switch m.DistanceMeasure {
	case Euclidean, Cosine:
	default:
		return nil, fmt.Errorf("unknown distanceMeasure %q", m.DistanceMeasure)
	}
	if m.K < 1 || m.NumFeatures < 1 {
		return nil, fmt.Errorf("bad k %d or numFeatures %d", m.K, m.NumFeatures)
	}
	if m.ClusterSizes != nil && len(m.ClusterSizes) != m.K {
		return nil, fmt.Errorf("clusterSizes has %d entries for k %d", len(m.ClusterSizes), m.K)
	}
	c, err := ml.Need(arrays, "centers", m.K, m.NumFeatures)
	if err != nil {
		return nil, err
	}
	m.Centers = c.Data
	return m, nil
}

func init() {
	ml.RegisterStage("KMeans", func() ml.Stage { return NewKMeans() })
	ml.RegisterModel("KMeansModel", decodeModel)
	ml.RegisterEvaluator("ClusteringEvaluator", func() ml.Evaluator { return NewClusteringEvaluator() })
}
