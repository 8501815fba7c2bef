package decomp

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/internal/parallel"
	"github.com/fathom-ml/fathom/ml"
)

// PCA is Spark ML's PCA estimator (a feature transformer): it fits the
// top k principal components of inputCol and its model projects rows on
// them into outputCol. Its zero value is not usable: start from NewPCA.
type PCA struct {
	InputCol  string `json:"inputCol" yaml:"inputCol"`
	OutputCol string `json:"outputCol" yaml:"outputCol"`
	// K is the number of components (1 ≤ K ≤ the width); Spark has no
	// default, fathom's is 2.
	K int `json:"k" yaml:"k"`
	// Solver (not in Spark) is "auto" (default: "gramian" up to 4096
	// features, else "randomized"), "gramian" (exact: the covariance
	// matrix formed and solved) or "randomized" (Halko et al.).
	Solver string `json:"solver" yaml:"solver"`
}

// NewPCA returns a PCA on "features" into "pcaFeatures" with k = 2.
func NewPCA() *PCA {
	return &PCA{InputCol: ml.FeaturesCol, OutputCol: "pcaFeatures", K: 2, Solver: SolverAuto}
}

// Type is "PCA".
func (p *PCA) Type() string { return "PCA" }

// Copy returns an independent copy.
func (p *PCA) Copy() ml.Estimator { c := *p; return &c }

func (p *PCA) validate() error {
	switch {
	case p.InputCol == "" || p.OutputCol == "":
		return errors.New("PCA: inputCol and outputCol must be set")
	case p.K < 1:
		return fmt.Errorf("PCA: k must be ≥ 1, got %d", p.K)
	}
	switch p.Solver {
	case SolverAuto, SolverGramian, SolverRandomized:
	default:
		return fmt.Errorf("PCA: solver must be auto, gramian or randomized, got %q", p.Solver)
	}
	return nil
}

// Fit centers the rows (means all-reduced), computes the covariance's top
// K eigenpairs (see topEigen) and returns the components with the
// fraction of the total variance each explains.
func (p *PCA) Fit(d ml.Data) (ml.Model, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	r, err := readRows(d, p.InputCol, "PCA")
	if err != nil {
		return nil, err
	}
	if p.K > r.d {
		return nil, fmt.Errorf("PCA: k = %d components from %d features; k must be ≤ the number of features", p.K, r.d)
	}
	if r.total < 2 {
		return nil, fmt.Errorf("PCA: %d rows; the covariance needs at least 2", r.total)
	}
	var e eigen
	total := 0.0
	if resolveSolver(p.Solver, r.d) == SolverGramian {
		// one pass centers and transposes; the Gramian's trace comes along
		var g []float64
		if g, total, err = r.centeredGramian(); err == nil && total > 0 {
			e, err = gramEigen(g, r.d, p.K)
		}
	} else {
		var ss float64
		if _, ss, err = r.center(); err == nil {
			tr := []float64{ss}
			if err = r.c.AllReduce(tr, ml.OpSum); err == nil {
				total = tr[0]
				if total > 0 {
					e, err = topEigen(r, p.K, p.Solver)
				}
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("PCA: %w", err)
	}
	if !(total > 0) {
		return nil, fmt.Errorf("PCA: every column of %q is constant: there is no variance to explain", p.InputCol)
	}
	m := &PCAModel{InputCol: p.InputCol, OutputCol: p.OutputCol, K: p.K, NumFeatures: r.d,
		PC: e.vectors, ExplainedVariance: make([]float64, p.K)}
	for i, v := range e.values {
		m.ExplainedVariance[i] = v / total
	}
	return m, nil
}

// PCAModel is a fitted PCA. As Spark's, its transform projects the rows
// as they are, x·PC, without subtracting the mean (scikit-learn's
// transform subtracts it; the two differ by the constant Mean·PC).
type PCAModel struct {
	InputCol    string `json:"inputCol"`
	OutputCol   string `json:"outputCol"`
	K           int    `json:"k"`
	NumFeatures int    `json:"numFeatures"`

	// PC is NumFeatures × K, row-major: the components are its columns,
	// each of unit length with its largest-magnitude entry positive.
	PC []float64 `json:"-"`
	// ExplainedVariance is the fraction of the total variance each
	// component explains (Spark's explainedVariance, scikit-learn's
	// explained_variance_ratio_).
	ExplainedVariance []float64 `json:"-"`
}

// Type is "PCAModel".
func (m *PCAModel) Type() string { return "PCAModel" }

// Transform adds outputCol: each row times PC (K values).
func (m *PCAModel) Transform(f *data.Frame) (*data.Frame, error) {
	x, err := ml.Features(f, m.InputCol)
	if err != nil {
		return nil, fmt.Errorf("PCAModel: %w", err)
	}
	if x.Rows > 0 && x.Cols != m.NumFeatures {
		return nil, fmt.Errorf("PCAModel: column %q has %d elements, the model was fitted on %d", m.InputCol, x.Cols, m.NumFeatures)
	}
	d, k := m.NumFeatures, m.K
	out := make([]float64, x.Rows*k)
	parallel.For(x.Rows, 1024, func(lo, hi int) {
		kernel.Dgemm(false, false, hi-lo, k, d, 1, x.Data[lo*d:hi*d], d, m.PC, k, 0, out[lo*k:hi*k], k)
	})
	return ml.WithColumns(f, ml.VectorOut(m.OutputCol, k, out))
}

// Encode stores the columns as params and PC and the explained variance
// as arrays.
func (m *PCAModel) Encode() (ml.Encoded, error) {
	return ml.Encoded{Params: m, Arrays: map[string]ml.Array{
		"pc":                ml.Mat(m.NumFeatures, m.K, m.PC),
		"explainedVariance": ml.Vec(m.ExplainedVariance),
	}}, nil
}

func decodePCAModel(raw json.RawMessage, arrays map[string]ml.Array) (ml.Model, error) {
	m := &PCAModel{}
	if err := ml.DecodeParams(raw, m); err != nil {
		return nil, err
	}
	if m.K < 1 || m.NumFeatures < m.K {
		return nil, fmt.Errorf("bad k %d or numFeatures %d", m.K, m.NumFeatures)
	}
	pc, err := ml.Need(arrays, "pc", m.NumFeatures, m.K)
	if err != nil {
		return nil, err
	}
	ev, err := ml.Need(arrays, "explainedVariance", m.K)
	if err != nil {
		return nil, err
	}
	m.PC, m.ExplainedVariance = pc.Data, ev.Data
	return m, nil
}

func init() {
	ml.RegisterStage("PCA", func() ml.Stage { return NewPCA() })
	ml.RegisterModel("PCAModel", decodePCAModel)
}
