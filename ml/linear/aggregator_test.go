package linear

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/fathom-ml/fathom/ml"
)

// Every loss's gradient (coefficients and intercepts, with weights)
// against central finite differences of its value.
func TestAggregatorGradientFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n, d := 1100, 5 // several chunks and row blocks
	x := ml.Matrix{Rows: n, Cols: d, Data: make([]float64, n*d)}
	for i := range x.Data {
		x.Data[i] = r.NormFloat64()
	}
	w := make([]float64, n)
	for i := range w {
		w[i] = r.Float64() * 2
	}
	for _, c := range []struct {
		loss Loss
		k    int
	}{{SquaredError, 1}, {Logistic, 1}, {Softmax, 3}, {Hinge, 1}, {Hinge, 3}, {SquaredHinge, 1}, {SquaredHinge, 4}} {
		y := make([]float64, n)
		for i := range y {
			switch {
			case c.loss == SquaredError:
				y[i] = r.NormFloat64() * 3
			case c.k == 1:
				y[i] = float64(r.IntN(2))
			default:
				y[i] = float64(r.IntN(c.k))
			}
		}
		agg := NewAggregator(c.loss, x, y, w, c.k, true, nil)
		coef := make([]float64, c.k*d)
		icpt := make([]float64, c.k)
		for i := range coef {
			coef[i] = r.NormFloat64() * 0.3
		}
		for i := range icpt {
			icpt[i] = r.NormFloat64() * 0.3
		}
		gw := make([]float64, c.k*d)
		gb := make([]float64, c.k)
		_, wsum, err := agg.Eval(coef, icpt, gw, gb)
		if err != nil {
			t.Fatal(err)
		}
		want := 0.0
		for _, v := range w {
			want += v
		}
		if !closeTo(wsum, want, 1e-12) {
			t.Errorf("%v: weight sum %g, want %g", c.loss, wsum, want)
		}
		f := func() float64 {
			l, _, _ := agg.Eval(coef, icpt, make([]float64, c.k*d), make([]float64, c.k))
			return l
		}
		const h = 1e-6
		check := func(what string, p []float64, g []float64) {
			for i := range p {
				old := p[i]
				p[i] = old + h
				fp := f()
				p[i] = old - h
				fm := f()
				p[i] = old
				fd := (fp - fm) / (2 * h)
				if math.Abs(fd-g[i]) > 1e-5*max(1, math.Abs(g[i])) {
					t.Errorf("%v k=%d: ∂/∂%s[%d] = %.9g, finite difference %.9g", c.loss, c.k, what, i, g[i], fd)
				}
			}
		}
		check("W", coef, gw)
		check("b", icpt, gb)
	}
}

// The softmax loss stays finite for huge margins.
func TestSoftmaxStable(t *testing.T) {
	a := &Aggregator{loss: Softmax}
	m := []float64{1000, -1000, 999}
	l := a.lossAndDeriv(m, 1)
	if math.IsNaN(l) || math.IsInf(l, 0) || math.Abs(l-(2000+math.Log1p(math.Exp(-1)))) > 1e-9 {
		t.Errorf("loss %g", l)
	}
	for _, v := range m {
		if math.IsNaN(v) {
			t.Fatalf("derivative %v", m)
		}
	}
}

// The objective in the optimizer's space (scaled and centred features,
// per-coordinate L2 penalties): gradient against finite differences.
func TestObjectiveGradientFiniteDifferences(t *testing.T) {
	cf := clsFrame(t)
	fd, err := loadFitData(ml.Local(cf), "test", "features", "label3", "weight", true)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, p := range []problem{
		{loss: Softmax, k: 3, intercept: true, standardize: true, regParam: 0.1, elasticNet: 0.3},
		{loss: Softmax, k: 3, intercept: true, standardize: false, regParam: 0.1},
		{loss: SquaredHinge, k: 3, intercept: false, standardize: true, regParam: 0.05},
		{loss: SquaredError, k: 1, intercept: true, standardize: true, regParam: 0.2},
	} {
		o := newObjective(fd, p)
		n := o.k*o.d + o.k
		x := make([]float64, n)
		for i := range x {
			x[i] = r.NormFloat64() * 0.5
		}
		g := make([]float64, n)
		o.f(x, g)
		tmp := make([]float64, n)
		for i := range x {
			old := x[i]
			const h = 1e-6
			x[i] = old + h
			fp := o.f(x, tmp)
			x[i] = old - h
			fm := o.f(x, tmp)
			x[i] = old
			num := (fp - fm) / (2 * h)
			if math.Abs(num-g[i]) > 1e-6*max(1, math.Abs(g[i])) {
				t.Errorf("%v standardize=%v: ∂/∂x[%d] = %.9g, finite difference %.9g", p.loss, p.standardize, i, g[i], num)
			}
		}
	}
}

// The result does not depend on the number of cores.
func TestAggregatorSameOnAnyCores(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	n, d, k := 9000, 7, 3
	x := ml.Matrix{Rows: n, Cols: d, Data: make([]float64, n*d)}
	for i := range x.Data {
		x.Data[i] = r.NormFloat64()
	}
	y := make([]float64, n)
	for i := range y {
		y[i] = float64(r.IntN(k))
	}
	coef := make([]float64, k*d)
	for i := range coef {
		coef[i] = r.NormFloat64()
	}
	eval := func() []float64 {
		agg := NewAggregator(Softmax, x, y, nil, k, true, nil)
		gw, gb := make([]float64, k*d), make([]float64, k)
		l, _, err := agg.Eval(coef, []float64{0.1, 0.2, 0.3}, gw, gb)
		if err != nil {
			t.Fatal(err)
		}
		return append(append(gw, gb...), l)
	}
	old := runtime.GOMAXPROCS(1)
	one := eval()
	runtime.GOMAXPROCS(3)
	three := eval()
	runtime.GOMAXPROCS(old)
	for i := range one {
		if one[i] != three[i] {
			t.Fatalf("value %d: %.17g on one core, %.17g on three", i, one[i], three[i])
		}
	}
}

func TestAggregatorAllocations(t *testing.T) {
	n, d, k := 5000, 6, 3
	x := ml.Matrix{Rows: n, Cols: d, Data: make([]float64, n*d)}
	y := make([]float64, n)
	agg := NewAggregator(Softmax, x, y, nil, k, true, nil)
	coef, icpt := make([]float64, k*d), make([]float64, k)
	gw, gb := make([]float64, k*d), make([]float64, k)
	if a := testing.AllocsPerRun(20, func() { agg.Eval(coef, icpt, gw, gb) }); a > 1 {
		t.Errorf("%g allocations per evaluation", a)
	}
}
