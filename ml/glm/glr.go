package glm

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/internal/parallel"
	"github.com/fathom-ml/fathom/ml"
)

// GeneralizedLinearRegression is Spark ML's GeneralizedLinearRegression,
// fitted by IRLS. Its zero value is not usable: start from
// NewGeneralizedLinearRegression.
type GeneralizedLinearRegression struct {
	FeaturesCol   string `json:"featuresCol" yaml:"featuresCol"`
	LabelCol      string `json:"labelCol" yaml:"labelCol"`
	PredictionCol string `json:"predictionCol" yaml:"predictionCol"`
	// LinkPredictionCol, if set, names an output column of the linear
	// predictor η (the link of the prediction).
	LinkPredictionCol string `json:"linkPredictionCol" yaml:"linkPredictionCol"`
	// WeightCol names a column of non-negative row weights; "" weighs
	// every row 1.
	WeightCol string `json:"weightCol" yaml:"weightCol"`
	// OffsetCol names a column added to the linear predictor with
	// coefficient 1 (at fit and at transform time); "" is none.
	OffsetCol string `json:"offsetCol" yaml:"offsetCol"`
	// Family is "gaussian" (default), "binomial", "poisson", "gamma" or
	// "tweedie".
	Family string `json:"family" yaml:"family"`
	// Link is "identity", "log", "logit", "probit", "cloglog", "inverse"
	// or "sqrt"; "" is the family's canonical link. Not used by tweedie.
	Link string `json:"link" yaml:"link"`
	// VariancePower is the tweedie variance power p, V(μ) = μ^p: 0 or ≥ 1
	// [0].
	VariancePower float64 `json:"variancePower" yaml:"variancePower"`
	// LinkPower is the tweedie power link's λ, η = μ^λ (0 is log); nil is
	// the canonical 1 − variancePower. Only for tweedie.
	LinkPower *float64 `json:"linkPower" yaml:"linkPower"`
	// FitIntercept adds an intercept [true].
	FitIntercept bool `json:"fitIntercept" yaml:"fitIntercept"`
	// MaxIter bounds the IRLS iterations [25].
	MaxIter int `json:"maxIter" yaml:"maxIter"`
	// Tol stops IRLS when no coefficient changes by tol or more [1e-6].
	Tol float64 `json:"tol" yaml:"tol"`
	// RegParam is the L2 penalty [0].
	RegParam float64 `json:"regParam" yaml:"regParam"`
}

// NewGeneralizedLinearRegression returns the estimator with Spark's
// defaults: gaussian family, canonical link, intercept, 25 iterations,
// tol 1e-6, no regularization.
func NewGeneralizedLinearRegression() *GeneralizedLinearRegression {
	return &GeneralizedLinearRegression{
		FeaturesCol:   ml.FeaturesCol,
		LabelCol:      ml.LabelCol,
		PredictionCol: ml.PredictionCol,
		Family:        Gaussian,
		FitIntercept:  true,
		MaxIter:       25,
		Tol:           1e-6,
	}
}

// Type is "GeneralizedLinearRegression".
func (g *GeneralizedLinearRegression) Type() string { return "GeneralizedLinearRegression" }

// Copy returns an independent copy.
func (g *GeneralizedLinearRegression) Copy() ml.Estimator {
	c := *g
	if g.LinkPower != nil {
		p := *g.LinkPower
		c.LinkPower = &p
	}
	return &c
}

const who = "GeneralizedLinearRegression"

// resolve validates the parameters and returns the family and link.
func (g *GeneralizedLinearRegression) resolve() (family, link, error) {
	bad := func(format string, a ...any) (family, link, error) {
		return family{}, link{}, fmt.Errorf(who+": "+format, a...)
	}
	if g.FeaturesCol == "" || g.LabelCol == "" {
		return bad("featuresCol and labelCol must be set")
	}
	if g.MaxIter < 1 {
		return bad("maxIter must be ≥ 1, got %d", g.MaxIter)
	}
	if !(g.Tol >= 0) || math.IsInf(g.Tol, 0) {
		return bad("tol must be ≥ 0, got %g", g.Tol)
	}
	if !(g.RegParam >= 0) || math.IsInf(g.RegParam, 0) {
		return bad("regParam must be ≥ 0, got %g", g.RegParam)
	}
	if g.Family == Tweedie {
		p := g.VariancePower
		if !(p == 0 || p >= 1) || math.IsInf(p, 0) {
			return bad("variancePower must be 0 or ≥ 1, got %g", p)
		}
		if g.Link != "" {
			return bad("link %q is not used by the tweedie family: set linkPower (η = μ^linkPower, 0 for log)", g.Link)
		}
		lp := 1 - p
		if g.LinkPower != nil {
			lp = *g.LinkPower
		}
		if math.IsNaN(lp) || math.IsInf(lp, 0) {
			return bad("linkPower must be finite, got %g", lp)
		}
		return familyOf(Tweedie, p), powerLink(lp), nil
	}
	links, ok := supported[g.Family]
	if !ok {
		return bad("family must be gaussian, binomial, poisson, gamma or tweedie, got %q", g.Family)
	}
	if g.LinkPower != nil {
		return bad("linkPower is only for the tweedie family (the %s family takes link)", g.Family)
	}
	if g.VariancePower != 0 {
		return bad("variancePower is only for the tweedie family")
	}
	name := g.Link
	if name == "" {
		name = canonical[g.Family]
	}
	if !slices.Contains(links, name) {
		return bad("the %s family supports the links %v, got %q", g.Family, links, name)
	}
	return familyOf(g.Family, 0), link{name: name}, nil
}

// readLocal reads this rank's rows and checks the labels against the
// family's domain.
func (g *GeneralizedLinearRegression) readLocal(f *data.Frame, fam family) (problem, error) {
	x, err := ml.Features(f, g.FeaturesCol)
	if err != nil {
		return problem{}, fmt.Errorf(who+": %w", err)
	}
	y, err := ml.Numbers(f, g.LabelCol)
	if err != nil {
		return problem{}, fmt.Errorf(who+": %w", err)
	}
	for i, v := range y {
		if msg := fam.checkLabel(v); msg != "" {
			return problem{}, fmt.Errorf(who+": column %q, row %d: label %g: the %s", g.LabelCol, i+1, v, msg)
		}
	}
	w, err := ml.Weights(f, g.WeightCol)
	if err != nil {
		return problem{}, fmt.Errorf(who+": %w", err)
	}
	if w == nil {
		w = make([]float64, len(y))
		for i := range w {
			w[i] = 1
		}
	}
	off := make([]float64, len(y))
	if g.OffsetCol != "" {
		if off, err = ml.Numbers(f, g.OffsetCol); err != nil {
			return problem{}, fmt.Errorf(who+": %w", err)
		}
	}
	return problem{x: x, y: y, w: w, off: off}, nil
}

// Fit fits the model by IRLS and computes its training summary. Every
// rank of d's Comm gets the same model.
func (g *GeneralizedLinearRegression) Fit(d ml.Data) (ml.Model, error) {
	fam, lnk, err := g.resolve()
	if err != nil {
		return nil, err
	}
	c := d.C()
	p, localErr := g.readLocal(d.Frame, fam)
	// Agree on failure and width first: a rank that fails still joins, so
	// that no rank waits forever for it.
	meta := []float64{0, float64(p.x.Cols), -float64(p.x.Cols)}
	if localErr != nil {
		meta = []float64{1, math.Inf(-1), math.Inf(-1)}
	}
	if err := c.AllReduce(meta, ml.OpMax); err != nil {
		return nil, fmt.Errorf(who+": %w", err)
	}
	if localErr != nil {
		return nil, localErr
	}
	if meta[0] > 0 {
		return nil, fmt.Errorf(who+": %w", ml.ErrOtherRank)
	}
	if meta[1] != -meta[2] {
		return nil, fmt.Errorf(who+": column %q has %d elements here and %g on another rank", g.FeaturesCol, p.x.Cols, math.Max(meta[1], -meta[2]))
	}

	res, err := irls(c, p, fam, lnk, g.FitIntercept, g.MaxIter, g.Tol, g.RegParam)
	if err != nil {
		return nil, fmt.Errorf(who+": %w", err)
	}
	dim := p.x.Cols
	m := &GeneralizedLinearRegressionModel{
		FeaturesCol:       g.FeaturesCol,
		PredictionCol:     g.PredictionCol,
		LinkPredictionCol: g.LinkPredictionCol,
		OffsetCol:         g.OffsetCol,
		Family:            g.Family,
		Link:              lnk.name,
		VariancePower:     g.VariancePower,
		LinkPower:         lnk.power,
		FitIntercept:      g.FitIntercept,
		Coefficients:      res.beta[:dim],
		fam:               fam,
		lnk:               lnk,
	}
	if g.FitIntercept {
		m.Intercept = res.beta[dim]
	}
	if m.Summary, err = g.summarize(c, p, m, res); err != nil {
		return nil, fmt.Errorf(who+": %w", err)
	}
	return m, nil
}

// Summary is Spark's GeneralizedLinearRegressionTrainingSummary. The
// per-coefficient arrays hold the coefficients in order, then the
// intercept (Spark's order).
type Summary struct {
	// CoefficientStandardErrors are √(dispersion · diag (XᵀWX)⁻¹).
	CoefficientStandardErrors []float64
	// TValues are estimate / standard error.
	TValues []float64
	// PValues are two-sided: normal for binomial and poisson, Student's t
	// with ResidualDegreeOfFreedom otherwise.
	PValues []float64
	// Dispersion is 1 for binomial and poisson, otherwise Pearson's χ² /
	// ResidualDegreeOfFreedom.
	Dispersion float64
	// Deviance is Σ w·d(y; μ), the model's; NullDeviance is the
	// intercept-only model's (with the offset, if any), or that of η =
	// offset without an intercept.
	Deviance, NullDeviance float64
	// AIC is Spark's (family log-likelihood, +2 for an estimated
	// dispersion, +2·Rank); NaN for tweedie, which has none.
	AIC float64
	// NumInstances is the number of rows, Rank the number of coefficients
	// (intercept included); ResidualDegreeOfFreedom = NumInstances − Rank,
	// ResidualDegreeOfFreedomNull = NumInstances − 1 with an intercept,
	// else NumInstances.
	NumInstances, Rank                                   int
	ResidualDegreeOfFreedom, ResidualDegreeOfFreedomNull int
	// NumIterations is the number of IRLS iterations (solves).
	NumIterations int
	// Converged says whether IRLS met tol within maxIter; Warning says
	// why not (the model is the last iterate).
	Converged bool
	Warning   string
}

// summarize computes the training summary at the fitted model: one
// all-reduce of the deviances, Pearson's χ² and the AIC's sums (after an
// intercept-only IRLS fit for the null deviance when there is an offset).
func (g *GeneralizedLinearRegression) summarize(c ml.Comm, p problem, m *GeneralizedLinearRegressionModel, res fit) (*Summary, error) {
	fam, lnk := m.fam, m.lnk
	q := len(res.beta)
	n := int(res.n)
	s := &Summary{
		NumInstances:                n,
		Rank:                        q,
		ResidualDegreeOfFreedom:     n - q,
		ResidualDegreeOfFreedomNull: n,
		NumIterations:               res.iterations,
		Converged:                   res.converged,
	}
	if g.FitIntercept {
		s.ResidualDegreeOfFreedomNull = n - 1
	}
	if !res.converged {
		s.Warning = fmt.Sprintf("IRLS did not converge in %d iterations (the largest coefficient change was %.3g, tol %g); the model is the last iterate", res.iterations, res.change, g.Tol)
	}

	// The null model's means: intercept only (refitted when there is an
	// offset), or η = offset without an intercept.
	var nullMu func(i int) float64
	switch {
	case g.FitIntercept && g.OffsetCol == "":
		mu := fam.project(res.weightedY / res.weightSum)
		nullMu = func(int) float64 { return mu }
	case g.FitIntercept:
		null, err := irls(c, p.withoutFeatures(), fam, lnk, true, g.MaxIter, g.Tol, 0)
		if err != nil {
			return nil, fmt.Errorf("the intercept-only model for the null deviance: %w", err)
		}
		b := null.beta[0]
		nullMu = func(i int) float64 { return fam.project(lnk.unlink(b + p.off[i])) }
	default:
		nullMu = func(i int) float64 { return fam.project(lnk.unlink(p.off[i])) }
	}

	var t aicTerms
	var dev, nullDev, pearson float64
	for i := range p.x.Rows {
		y, w := p.y[i], p.w[i]
		mu := m.mean(p.x.Row(i), p.off[i])
		dev += fam.deviance(y, mu, w)
		nullDev += fam.deviance(y, nullMu(i), w)
		r := y - mu
		pearson += w * r * r / fam.variance(mu)
		fam.rowAIC(&t, y, mu, w)
	}
	sums := []float64{dev, nullDev, pearson, t.logLik, t.logW, t.gammaLY, t.gammaYM, t.gammaLM}
	if err := c.AllReduce(sums, ml.OpSum); err != nil {
		return nil, err
	}
	dev, nullDev, pearson = sums[0], sums[1], sums[2]
	t = aicTerms{logLik: sums[3], logW: sums[4], gammaLY: sums[5], gammaYM: sums[6], gammaLM: sums[7]}
	s.Deviance, s.NullDeviance = dev, nullDev
	s.AIC = fam.aic(t, dev, res.n, res.weightSum) + 2*float64(q)

	if !res.converged && fam.name == Binomial && dev < 1e-6*nullDev {
		s.Warning += " (a deviance near 0: the classes may be perfectly separated, where the maximum-likelihood coefficients are infinite; regParam > 0 gives finite ones)"
	}

	fixed := g.Family == Binomial || g.Family == Poisson
	s.Dispersion = 1
	if !fixed {
		s.Dispersion = pearson / float64(s.ResidualDegreeOfFreedom)
		if s.ResidualDegreeOfFreedom <= 0 {
			s.Dispersion = math.NaN()
			s.Warning = joinWarnings(s.Warning, fmt.Sprintf("no residual degrees of freedom (%d rows, %d coefficients): the dispersion and standard errors are undefined", n, q))
		}
	}
	s.CoefficientStandardErrors = make([]float64, q)
	s.TValues = make([]float64, q)
	s.PValues = make([]float64, q)
	for j := range q {
		se := math.Sqrt(res.inv[j*q+j] * s.Dispersion)
		s.CoefficientStandardErrors[j] = se
		s.TValues[j] = res.beta[j] / se
		s.PValues[j] = pValue(s.TValues[j], fixed, float64(s.ResidualDegreeOfFreedom))
	}
	return s, nil
}

func joinWarnings(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// GeneralizedLinearRegressionModel is a fitted GLM: prediction is the mean
// response μ = g⁻¹(x·β + intercept + offset).
type GeneralizedLinearRegressionModel struct {
	FeaturesCol       string
	PredictionCol     string
	LinkPredictionCol string
	OffsetCol         string
	Family            string
	// Link is the link's name ("power" for a tweedie power link other than
	// log and identity, with LinkPower its λ).
	Link          string
	VariancePower float64
	LinkPower     float64
	FitIntercept  bool
	Coefficients  []float64
	Intercept     float64
	// Summary is the training summary (kept by SaveModel).
	Summary *Summary

	fam family
	lnk link
}

// Type is "GeneralizedLinearRegressionModel".
func (m *GeneralizedLinearRegressionModel) Type() string {
	return "GeneralizedLinearRegressionModel"
}

// eta is the linear predictor of features x with offset off.
func (m *GeneralizedLinearRegressionModel) eta(x []float64, off float64) float64 {
	e := m.Intercept + off
	for j, v := range x {
		e += v * m.Coefficients[j]
	}
	return e
}

func (m *GeneralizedLinearRegressionModel) mean(x []float64, off float64) float64 {
	return m.fam.project(m.lnk.unlink(m.eta(x, off)))
}

// Transform adds the prediction column (the mean response) and, if
// LinkPredictionCol is set, the linear predictor. With OffsetCol set the
// frame must have that column.
func (m *GeneralizedLinearRegressionModel) Transform(f *data.Frame) (*data.Frame, error) {
	const who = "GeneralizedLinearRegressionModel"
	x, err := ml.Features(f, m.FeaturesCol)
	if err != nil {
		return nil, fmt.Errorf(who+": %w", err)
	}
	if x.Cols != len(m.Coefficients) {
		return nil, fmt.Errorf(who+": column %q has %d elements, the model was fitted on %d", m.FeaturesCol, x.Cols, len(m.Coefficients))
	}
	var off []float64
	if m.OffsetCol != "" {
		if off, err = ml.Numbers(f, m.OffsetCol); err != nil {
			return nil, fmt.Errorf(who+": %w", err)
		}
	}
	pred := make([]float64, x.Rows)
	var eta []float64
	if m.LinkPredictionCol != "" {
		eta = make([]float64, x.Rows)
	}
	parallel.For(x.Rows, max(64, 16384/max(x.Cols, 1)), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			o := 0.0
			if off != nil {
				o = off[i]
			}
			e := m.eta(x.Row(i), o)
			pred[i] = m.fam.project(m.lnk.unlink(e))
			if eta != nil {
				eta[i] = e
			}
		}
	})
	var cols []data.Column
	if m.PredictionCol != "" {
		cols = append(cols, ml.ScalarOut(m.PredictionCol, pred))
	}
	if eta != nil {
		cols = append(cols, ml.ScalarOut(m.LinkPredictionCol, eta))
	}
	return ml.WithColumns(f, cols...)
}

// savedModel is the JSON part of a saved model; the numbers are arrays.
type savedModel struct {
	FeaturesCol       string        `json:"featuresCol"`
	PredictionCol     string        `json:"predictionCol"`
	LinkPredictionCol string        `json:"linkPredictionCol,omitempty"`
	OffsetCol         string        `json:"offsetCol,omitempty"`
	Family            string        `json:"family"`
	Link              string        `json:"link"`
	FitIntercept      bool          `json:"fitIntercept"`
	Summary           *savedSummary `json:"summary,omitempty"`
}

// savedSummary is the JSON part of a saved Summary.
type savedSummary struct {
	NumInstances                int    `json:"numInstances"`
	Rank                        int    `json:"rank"`
	ResidualDegreeOfFreedom     int    `json:"residualDegreeOfFreedom"`
	ResidualDegreeOfFreedomNull int    `json:"residualDegreeOfFreedomNull"`
	NumIterations               int    `json:"numIterations"`
	Converged                   bool   `json:"converged"`
	Warning                     string `json:"warning,omitempty"`
}

// Encode stores the settings and the summary's counts as params; the
// coefficients, intercept, powers and the summary's numbers as arrays.
func (m *GeneralizedLinearRegressionModel) Encode() (ml.Encoded, error) {
	sm := savedModel{
		FeaturesCol: m.FeaturesCol, PredictionCol: m.PredictionCol, LinkPredictionCol: m.LinkPredictionCol,
		OffsetCol: m.OffsetCol, Family: m.Family, Link: m.Link, FitIntercept: m.FitIntercept,
	}
	arrays := map[string]ml.Array{
		"coefficients": ml.Vec(m.Coefficients),
		"intercept":    ml.Vec([]float64{m.Intercept}),
		"powers":       ml.Vec([]float64{m.VariancePower, m.LinkPower}),
	}
	if s := m.Summary; s != nil {
		sm.Summary = &savedSummary{s.NumInstances, s.Rank, s.ResidualDegreeOfFreedom, s.ResidualDegreeOfFreedomNull, s.NumIterations, s.Converged, s.Warning}
		arrays["summary.coefficientStandardErrors"] = ml.Vec(s.CoefficientStandardErrors)
		arrays["summary.tValues"] = ml.Vec(s.TValues)
		arrays["summary.pValues"] = ml.Vec(s.PValues)
		arrays["summary.stats"] = ml.Vec([]float64{s.Dispersion, s.Deviance, s.NullDeviance, s.AIC})
	}
	return ml.Encoded{Params: sm, Arrays: arrays}, nil
}

func decodeModel(raw json.RawMessage, arrays map[string]ml.Array) (ml.Model, error) {
	var sm savedModel
	if err := ml.DecodeParams(raw, &sm); err != nil {
		return nil, err
	}
	coef, err := ml.Need(arrays, "coefficients", -1)
	if err != nil {
		return nil, err
	}
	icpt, err := ml.Need(arrays, "intercept", 1)
	if err != nil {
		return nil, err
	}
	pw, err := ml.Need(arrays, "powers", 2)
	if err != nil {
		return nil, err
	}
	m := &GeneralizedLinearRegressionModel{
		FeaturesCol: sm.FeaturesCol, PredictionCol: sm.PredictionCol, LinkPredictionCol: sm.LinkPredictionCol,
		OffsetCol: sm.OffsetCol, Family: sm.Family, Link: sm.Link, FitIntercept: sm.FitIntercept,
		VariancePower: pw.Data[0], LinkPower: pw.Data[1],
		Coefficients: coef.Data, Intercept: icpt.Data[0],
	}
	if _, ok := supported[m.Family]; !ok && m.Family != Tweedie {
		return nil, fmt.Errorf("unknown family %q", m.Family)
	}
	m.fam = familyOf(m.Family, m.VariancePower)
	switch m.Link {
	case Identity, Log, Logit, Probit, CLogLog, Inverse, Sqrt:
		m.lnk = link{name: m.Link}
	case "power":
		m.lnk = link{name: "power", power: m.LinkPower}
	default:
		return nil, fmt.Errorf("unknown link %q", m.Link)
	}
	if s := sm.Summary; s != nil {
		q := len(m.Coefficients)
		if m.FitIntercept {
			q++
		}
		sum := &Summary{
			NumInstances: s.NumInstances, Rank: s.Rank, ResidualDegreeOfFreedom: s.ResidualDegreeOfFreedom,
			ResidualDegreeOfFreedomNull: s.ResidualDegreeOfFreedomNull, NumIterations: s.NumIterations,
			Converged: s.Converged, Warning: s.Warning,
		}
		for name, dst := range map[string]*[]float64{
			"summary.coefficientStandardErrors": &sum.CoefficientStandardErrors,
			"summary.tValues":                   &sum.TValues,
			"summary.pValues":                   &sum.PValues,
		} {
			a, err := ml.Need(arrays, name, q)
			if err != nil {
				return nil, err
			}
			*dst = a.Data
		}
		st, err := ml.Need(arrays, "summary.stats", 4)
		if err != nil {
			return nil, err
		}
		sum.Dispersion, sum.Deviance, sum.NullDeviance, sum.AIC = st.Data[0], st.Data[1], st.Data[2], st.Data[3]
		m.Summary = sum
	}
	return m, nil
}

func init() {
	ml.RegisterStage("GeneralizedLinearRegression", func() ml.Stage { return NewGeneralizedLinearRegression() })
	ml.RegisterModel("GeneralizedLinearRegressionModel", decodeModel)
}

// NumIterations is the number of IRLS iterations (ml.Iterative).
func (m *GeneralizedLinearRegressionModel) NumIterations() int {
	if m.Summary == nil {
		return 0
	}
	return m.Summary.NumIterations
}
