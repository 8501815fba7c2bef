package glm

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Families, Spark's names.
const (
	Gaussian = "gaussian"
	Binomial = "binomial"
	Poisson  = "poisson"
	Gamma    = "gamma"
	Tweedie  = "tweedie"
)

// Links, Spark's names.
const (
	Identity = "identity"
	Log      = "log"
	Logit    = "logit"
	Probit   = "probit"
	CLogLog  = "cloglog"
	Inverse  = "inverse"
	Sqrt     = "sqrt"
)

// epsilon keeps a projected mean inside the family's domain (Spark's
// 1e-16); delta is Spark's starting mean for a response of 0 (Tweedie's
// and Poisson's 0.1).
const (
	epsilon = 1e-16
	delta   = 0.1
)

// family is an exponential-dispersion family: its variance function, unit
// deviance, starting mean, domain and AIC (McCullagh and Nelder, ch. 2;
// Spark's definitions).
type family struct {
	name  string
	power float64 // the variance power p: V(μ) = μ^p (binomial: μ(1−μ))
}

// familyOf is Spark's Family.fromParams: tweedie with a variance power of
// 0, 1 or 2 is the gaussian, poisson or gamma family.
func familyOf(name string, variancePower float64) family {
	if name == Tweedie {
		switch variancePower {
		case 0:
			return family{name: Gaussian}
		case 1:
			return family{name: Poisson, power: 1}
		case 2:
			return family{name: Gamma, power: 2}
		}
		return family{name: Tweedie, power: variancePower}
	}
	switch name {
	case Poisson:
		return family{name: Poisson, power: 1}
	case Gamma:
		return family{name: Gamma, power: 2}
	}
	return family{name: name}
}

func (f family) variance(mu float64) float64 {
	switch f.name {
	case Gaussian:
		return 1
	case Binomial:
		return mu * (1 - mu)
	case Poisson:
		return mu
	case Gamma:
		return mu * mu
	}
	return math.Pow(mu, f.power)
}

// checkLabel returns what is wrong with a response, or "".
func (f family) checkLabel(y float64) string {
	switch f.name {
	case Binomial:
		if y < 0 || y > 1 {
			return "binomial needs a label in [0, 1]"
		}
	case Poisson:
		if y < 0 {
			return "poisson needs a non-negative label"
		}
	case Gamma:
		if y <= 0 {
			return "gamma needs a positive label"
		}
	case Tweedie:
		if f.power >= 2 && y <= 0 {
			return fmt.Sprintf("tweedie with variancePower %g needs a positive label", f.power)
		}
		if y < 0 {
			return "tweedie needs a non-negative label"
		}
	}
	return ""
}

// initialize is the starting mean for response y of weight w (Spark's
// Family.initialize; gaussian with a log or inverse link starts away from
// the edge of the link's domain).
func (f family) initialize(y, w float64, l link) float64 {
	switch f.name {
	case Binomial:
		return (w*y + 0.5) / (w + 1)
	case Poisson, Tweedie:
		if y == 0 {
			return delta
		}
	case Gaussian:
		if (l.name == Log && y <= 0) || (l.name == Inverse && y == 0) {
			return delta
		}
	}
	return y
}

// project keeps a mean inside the family's domain (Spark's project).
func (f family) project(mu float64) float64 {
	switch f.name {
	case Binomial:
		return min(max(mu, epsilon), 1-epsilon)
	case Poisson, Gamma, Tweedie:
		return max(mu, epsilon)
	}
	return mu
}

// deviance is the weighted unit deviance w·d(y; μ).
func (f family) deviance(y, mu, w float64) float64 {
	switch f.name {
	case Gaussian:
		r := y - mu
		return w * r * r
	case Binomial:
		return 2 * w * (ylogy(y, mu) + ylogy(1-y, 1-mu))
	case Poisson:
		return 2 * w * (ylogy(y, mu) - (y - mu))
	case Gamma:
		return 2 * w * (-math.Log(y/mu) + (y-mu)/mu)
	}
	p := f.power
	y1 := y
	if p >= 1 && p < 2 {
		y1 = max(y, delta) // Spark: y ≥ δ in the first term (it is multiplied by y)
	}
	return 2 * w * (y*math.Pow(y1, 1-p)/(1-p) - y*math.Pow(mu, 1-p)/(1-p) -
		math.Pow(y, 2-p)/(2-p) + math.Pow(mu, 2-p)/(2-p))
}

// ylogy is y·log(y/μ), 0 when y is 0.
func ylogy(y, mu float64) float64 { return xlogy(y, y/mu) }

// aicTerms are the sums over rows the AIC needs (all-reduced).
type aicTerms struct {
	logLik  float64 // Σ w·log p(y; μ) (binomial, poisson); Σ w·log p(y; μ, φ) is done in aic for gamma
	logW    float64 // Σ log w (gaussian)
	gammaLY float64 // Σ w·log y (gamma)
	gammaYM float64 // Σ w·y/μ (gamma)
	gammaLM float64 // Σ w·log μ (gamma)
}

// rowAIC adds row (y, μ, w)'s share to t.
func (f family) rowAIC(t *aicTerms, y, mu, w float64) {
	switch f.name {
	case Gaussian:
		t.logW += math.Log(w)
	case Binomial:
		n := math.Round(w)
		if n != 0 {
			k := math.Round(y * w)
			t.logLik += lchoose(n, k) + xlogy(k, mu) + xlogy(n-k, 1-mu)
		}
	case Poisson:
		k := math.Trunc(y)
		lg, _ := math.Lgamma(k + 1)
		t.logLik += w * (xlogy(k, mu) - mu - lg)
	case Gamma:
		t.gammaLY += w * math.Log(y)
		t.gammaYM += w * y / mu
		t.gammaLM += w * math.Log(mu)
	}
}

// xlogy is x·log(y), 0 when x is 0.
func xlogy(x, y float64) float64 {
	if x == 0 {
		return 0
	}
	return x * math.Log(y)
}

func lchoose(n, k float64) float64 {
	a, _ := math.Lgamma(n + 1)
	b, _ := math.Lgamma(k + 1)
	c, _ := math.Lgamma(n - k + 1)
	return a - b - c
}

// aic is Spark's family AIC (before the 2·rank term): n rows, the
// deviance and the total weight; NaN for tweedie, which has none.
func (f family) aic(t aicTerms, dev float64, n, weightSum float64) float64 {
	switch f.name {
	case Gaussian:
		return n*(math.Log(dev/n*2*math.Pi)+1) + 2 - t.logW
	case Binomial, Poisson:
		return -2 * t.logLik
	case Gamma:
		// Σ w·log Gamma(y; shape 1/φ, scale μφ) with φ = dev/Σw:
		// (k−1) log y − y/(μφ) − lgamma(k) − k log(μφ), k = 1/φ.
		phi := dev / weightSum
		k := 1 / phi
		lg, _ := math.Lgamma(k)
		ll := (k-1)*t.gammaLY - t.gammaYM/phi - weightSum*lg - k*(t.gammaLM+weightSum*math.Log(phi))
		return -2*ll + 2
	}
	return math.NaN()
}

// link is a link function g: η = g(μ), its inverse, and dη/dμ.
type link struct {
	name  string
	power float64 // the power link's λ (tweedie)
}

// powerLink is Spark's Power(λ): λ = 0 is the log link, 1 identity.
func powerLink(p float64) link {
	switch p {
	case 0:
		return link{name: Log}
	case 1:
		return link{name: Identity}
	}
	return link{name: "power", power: p}
}

func (l link) link(mu float64) float64 {
	switch l.name {
	case Identity:
		return mu
	case Log:
		return math.Log(mu)
	case Logit:
		return math.Log(mu / (1 - mu))
	case Probit:
		return -math.Sqrt2 * math.Erfcinv(2*mu)
	case CLogLog:
		return math.Log(-math.Log1p(-mu))
	case Inverse:
		return 1 / mu
	case Sqrt:
		return math.Sqrt(mu)
	}
	return math.Pow(mu, l.power)
}

func (l link) unlink(eta float64) float64 {
	switch l.name {
	case Identity:
		return eta
	case Log:
		return math.Exp(eta)
	case Logit:
		return 1 / (1 + math.Exp(-eta))
	case Probit:
		return 0.5 * math.Erfc(-eta/math.Sqrt2)
	case CLogLog:
		return -math.Expm1(-math.Exp(eta))
	case Inverse:
		return 1 / eta
	case Sqrt:
		return eta * eta
	}
	return math.Pow(eta, 1/l.power)
}

// deriv is dη/dμ at μ.
func (l link) deriv(mu float64) float64 {
	switch l.name {
	case Identity:
		return 1
	case Log:
		return 1 / mu
	case Logit:
		return 1 / (mu * (1 - mu))
	case Probit:
		z := -math.Sqrt2 * math.Erfcinv(2*mu)
		return 1 / (math.Exp(-z*z/2) / math.Sqrt(2*math.Pi))
	case CLogLog:
		return 1 / ((mu - 1) * math.Log1p(-mu))
	case Inverse:
		return -1 / (mu * mu)
	case Sqrt:
		return 1 / (2 * math.Sqrt(mu))
	}
	return l.power * math.Pow(mu, l.power-1)
}

// canonical is the default link of each family (Spark's).
var canonical = map[string]string{
	Gaussian: Identity,
	Binomial: Logit,
	Poisson:  Log,
	Gamma:    Inverse,
}

// supported lists the links each family allows (Spark's
// supportedFamilyAndLinkPairs).
var supported = map[string][]string{
	Gaussian: {Identity, Log, Inverse},
	Binomial: {Logit, Probit, CLogLog},
	Poisson:  {Log, Identity, Sqrt},
	Gamma:    {Inverse, Identity, Log},
}

// pValue is the two-sided p-value of statistic t: normal for binomial and
// poisson (dispersion fixed at 1), Student's t with dof degrees of freedom
// otherwise (Spark's).
func pValue(t float64, normal bool, dof float64) float64 {
	a := math.Abs(t)
	if normal || dof <= 0 {
		return math.Erfc(a / math.Sqrt2)
	}
	return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: dof}.Survival(a)
}
