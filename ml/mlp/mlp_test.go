package mlp

import (
	"encoding/json"
	"flag"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/commtest"
	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/mltest"
)

// frameOf builds a frame of a float64 "features" vector column and a
// float64 "label" column.
func frameOf(t testing.TB, width int, x []float64, labels []float64) *data.Frame {
	t.Helper()
	f, err := data.NewFrame(
		data.NewVectorColumn(ml.FeaturesCol, width, x, nil, nil),
		data.NewColumn(ml.LabelCol, labels, nil))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// blobs returns n samples of k Gaussian-ish clusters in 2-d (centres on a
// circle of radius r, spread 1), deterministic; small r overlaps them.
func blobs(t testing.TB, n, k int, r float64, seed uint64) *data.Frame {
	rng := splitmix64(seed)
	normal := func() float64 { // Box–Muller
		u1, u2 := rng.float64(), rng.float64()
		return math.Sqrt(-2*math.Log(1-u1)) * math.Cos(2*math.Pi*u2)
	}
	x := make([]float64, 0, 2*n)
	y := make([]float64, 0, n)
	for i := range n {
		c := i % k
		a := 2 * math.Pi * float64(c) / float64(k)
		x = append(x, r*math.Cos(a)+normal(), r*math.Sin(a)+normal())
		y = append(y, float64(c))
	}
	return frameOf(t, 2, x, y)
}

// torchCase is the network of testdata/peer_torch.py: layers [3, 4, 2, 3],
// weight i = 0.5·sin(i+1), x[r][f] = cos(1.3r + 0.7f), label r mod 3.
func torchCase(t testing.TB) (layers []int, w []float64, f *data.Frame) {
	layers = []int{3, 4, 2, 3}
	w = make([]float64, newTopology(layers).size)
	for i := range w {
		w[i] = 0.5 * math.Sin(float64(i+1))
	}
	const n = 6
	x := make([]float64, n*3)
	y := make([]float64, n)
	for r := range n {
		for c := range 3 {
			x[r*3+c] = math.Cos(1.3*float64(r) + 0.7*float64(c))
		}
		y[r] = float64(r % 3)
	}
	return layers, w, frameOf(t, 3, x, y)
}

// The loss and gradient at given weights equal PyTorch's autograd
// (testdata/peer_torch.py, its output in testdata/peer_torch.out).
func TestLossGradAgainstTorch(t *testing.T) {
	const (
		torchCE   = 1.1322468673573078
		torchLoss = 1.3040185169578957 // with regParam 0.1
	)
	torchGrad := []float64{0.042018591810023563, 0.045584053265431926, 0.0070242609174277588, -0.037896621587925942, -0.047516705650722059, -0.012577744191413913, 0.031250957543235904, 0.049398319449951093, 0.021317893494910801, -0.025189340145182749, -0.052412776115830624, -0.026878604220472634, -0.00062822243541581029, -0.0015658659082325938, 0.002006865759231766, 2.5739473268167727e-05, -0.036119941690697849, -0.048840531447940136, 0.022240638519810351, 0.031729074838495519, 0.055370425747339268, -0.013221849389499048, -0.033127703498156476, -0.053966990392489464, 0.020491668220253466, -0.01937669413903044, 0.091255002547753025, 0.017777169645708014, -0.080849780568490792, 0.0058410403105955619, -0.014797885062633251, -0.033075284656674114, 0.096203079652261769, 0.01045530370104434, -0.10665838335330607}

	layers, w, f := torchCase(t)
	x, labels, err := readRows(ml.Local(f), ml.FeaturesCol, ml.LabelCol)
	if err != nil {
		t.Fatal(err)
	}
	top := newTopology(layers)
	nw := newNetwork(top, featureMajor[float64](x), labels, x.Rows, kernel.Dgemm)
	obj := &objective{top: top, comm: ml.Single, rows: float64(x.Rows), reg: 0.1, local: nw.lossGrad, buf: make([]float64, 1+top.size)}
	g := make([]float64, top.size)
	loss := obj.eval(w, g)
	if !close(loss, torchLoss, 1e-13) {
		t.Errorf("loss %.17g, torch %.17g", loss, torchLoss)
	}
	for i := range g {
		if math.Abs(g[i]-torchGrad[i]) > 1e-13 {
			t.Errorf("grad[%d] = %.17g, torch %.17g", i, g[i], torchGrad[i])
		}
	}

	// Fit with maxIter 0 evaluates the same objective at initialWeights.
	e := NewMultilayerPerceptronClassifier()
	e.Layers, e.InitialWeights, e.MaxIter, e.RegParam = layers, w, 0, 0.1
	m := fit(t, e, f)
	if !close(m.Loss, torchLoss, 1e-13) || !slices.Equal(m.Weights, w) {
		t.Errorf("maxIter 0: loss %.17g (torch %.17g), weights moved: %v", m.Loss, torchLoss, !slices.Equal(m.Weights, w))
	}
	e.RegParam = 0
	if m := fit(t, e, f); !close(m.Loss, torchCE, 1e-13) {
		t.Errorf("regParam 0: loss %.17g, torch's cross-entropy %.17g", m.Loss, torchCE)
	}
}

func close(a, b, tol float64) bool { return math.Abs(a-b) <= tol*max(math.Abs(a), math.Abs(b), 1e-300) }

func fit(t testing.TB, e *MultilayerPerceptronClassifier, f *data.Frame) *MultilayerPerceptronClassificationModel {
	t.Helper()
	m, err := e.Fit(ml.Local(f))
	if err != nil {
		t.Fatal(err)
	}
	return m.(*MultilayerPerceptronClassificationModel)
}

// The gradient of the objective (both precisions' networks, with and
// without the penalty) against central differences of the float64 loss.
func TestGradientFiniteDifferences(t *testing.T) {
	for _, tc := range []struct {
		layers []int
		reg    float64
	}{
		{[]int{2, 3}, 0},             // no hidden layer: softmax regression
		{[]int{5, 7, 4}, 0},          // one hidden layer
		{[]int{5, 7, 6, 4}, 0.3},     // two, with the penalty
		{[]int{3, 2, 2, 2, 5}, 0.01}, // three
	} {
		top := newTopology(tc.layers)
		n, d, k := 37, tc.layers[0], tc.layers[len(tc.layers)-1]
		rng := splitmix64(uint64(len(tc.layers)*100 + d))
		x := make([]float64, n*d)
		for i := range x {
			x[i] = 4*rng.float64() - 2
		}
		y := make([]int32, n)
		for i := range y {
			y[i] = int32(rng.next() % uint64(k))
		}
		w := top.initWeights(int64(d))
		for i := range w {
			w[i] *= 3 // away from the linear regime of the sigmoids
		}
		obj64 := &objective{top: top, comm: ml.Single, rows: float64(n), reg: tc.reg, buf: make([]float64, 1+top.size),
			local: newNetwork(top, transpose[float64](x, n, d), y, n, kernel.Dgemm).lossGrad}
		obj32 := &objective{top: top, comm: ml.Single, rows: float64(n), reg: tc.reg, buf: make([]float64, 1+top.size),
			local: newNetwork(top, transpose[float32](x, n, d), y, n, kernel.Sgemm).lossGrad}
		g := make([]float64, top.size)
		g32 := make([]float64, top.size)
		obj64.eval(w, g)
		obj32.eval(w, g32)
		scratch := make([]float64, top.size)
		const h = 1e-5
		for i := range w {
			wi := w[i]
			w[i] = wi + h
			fp := obj64.eval(w, scratch)
			w[i] = wi - h
			fm := obj64.eval(w, scratch)
			w[i] = wi
			fd := (fp - fm) / (2 * h)
			if math.Abs(g[i]-fd) > 1e-7*max(1, math.Abs(fd)) {
				t.Errorf("layers %v, weight %d: gradient %.10g, central difference %.10g", tc.layers, i, g[i], fd)
			}
			if math.Abs(g32[i]-g[i]) > 1e-5*max(1, math.Abs(g[i])) {
				t.Errorf("layers %v, weight %d: float32 gradient %.8g, float64 %.8g", tc.layers, i, g32[i], g[i])
			}
		}
	}
}

// On well-separated clusters, L-BFGS classifies every training sample and
// fresh samples of the same clusters; the probabilities sum to 1 and the
// prediction is their argmax.
func TestSeparable(t *testing.T) {
	train, test := blobs(t, 150, 3, 6, 1), blobs(t, 150, 3, 6, 2)
	for _, solver := range []string{SolverLBFGS, SolverGD} {
		e := NewMultilayerPerceptronClassifier()
		e.Layers, e.Seed, e.Solver = []int{2, 5, 3}, 7, solver
		if solver == SolverGD {
			e.StepSize, e.MaxIter = 10, 300
		}
		m := fit(t, e, train)
		for name, f := range map[string]*data.Frame{"train": train, "test": test} {
			if acc := accuracy(t, m, f); acc < 0.99 {
				t.Errorf("%s: %s accuracy %.3f, want ≥ 0.99", solver, name, acc)
			}
		}
		out, err := m.Transform(test)
		if err != nil {
			t.Fatal(err)
		}
		prob := out.Col(ml.ProbabilityCol).(*data.VectorColumn).Float64s()
		raw := out.Col(ml.RawPredictionCol).(*data.VectorColumn).Float64s()
		pred, _ := ml.Numbers(out, ml.PredictionCol)
		for i := range pred {
			p, r := prob[3*i:3*i+3], raw[3*i:3*i+3]
			if s := p[0] + p[1] + p[2]; math.Abs(s-1) > 1e-12 {
				t.Fatalf("row %d: probabilities %v sum to %g", i, p, s)
			}
			if best := kernel.ArgMaxF64(p); float64(best) != pred[i] || kernel.ArgMaxF64(r) != best {
				t.Fatalf("row %d: prediction %g, probabilities %v, raw %v", i, pred[i], p, r)
			}
			// probability = softmax(rawPrediction)
			if q := math.Exp(r[1]-r[0]) * p[0]; math.Abs(q-p[1]) > 1e-12 {
				t.Fatalf("row %d: probabilities %v are not the softmax of %v", i, p, r)
			}
		}
		if solver == SolverGD && m.Iterations < 2 {
			t.Errorf("gd ran %d iterations", m.Iterations)
		}
	}
}

// The conformance suite in float64 on overlapping clusters (so the
// optimum is finite), 20 iterations: every rank's model is the
// single-process one within 1e-9.
func TestConformance(t *testing.T) {
	f := blobs(t, 90, 3, 1.5, 3)
	for _, solver := range []string{SolverLBFGS, SolverGD} {
		mltest.Check(t, func() ml.Estimator {
			e := NewMultilayerPerceptronClassifier()
			e.Layers, e.MaxIter, e.Seed, e.Solver, e.RegParam = []int{2, 4, 3, 0}, 20, 3, solver, 1e-3
			e.StepSize = 2 // for gd: far enough from the start in 20 steps
			return e
		}, f, mltest.Options{})
	}
}

// With float32 passes every rank still gets the same model (the same
// all-reduced sums), and it is near the single-process one.
func TestFloat32Ranks(t *testing.T) {
	f := blobs(t, 90, 3, 1.5, 3)
	newEst := func() ml.Estimator {
		e := NewMultilayerPerceptronClassifier()
		e.Layers, e.MaxIter, e.Seed, e.Precision = []int{0, 4, 0}, 20, 3, Float32
		return e
	}
	single, err := newEst().Fit(ml.Local(f))
	if err != nil {
		t.Fatal(err)
	}
	ms := mltest.FitOnRanks(t, newEst, f, 3, nil)
	for r, m := range ms {
		if d := mltest.DiffModels(ms[0], m, 0); d != "" {
			t.Errorf("rank %d's model differs from rank 0's: %s", r, d)
		}
		if d := mltest.DiffModels(single, m, 1e-3); d != "" {
			t.Errorf("rank %d's model is far from the single-process one: %s", r, d)
		}
	}
}

// Layers 0 take the input width and the class count from the data; the
// seed decides the initial weights.
func TestInferLayersAndSeed(t *testing.T) {
	f := blobs(t, 60, 4, 3, 4)
	e := NewMultilayerPerceptronClassifier()
	e.Layers, e.MaxIter = []int{0, 3, 0}, 5
	m := fit(t, e, f)
	if !slices.Equal(m.Layers, []int{2, 3, 4}) {
		t.Errorf("layers %v, want [2 3 4]", m.Layers)
	}
	if e.Layers[0] != 0 {
		t.Errorf("Fit changed the estimator's layers: %v", e.Layers)
	}
	again := fit(t, e, f)
	if !slices.Equal(m.Weights, again.Weights) {
		t.Error("two fits with one seed differ")
	}
	e.Seed = 1
	if other := fit(t, e, f); slices.Equal(m.Weights, other.Weights) {
		t.Error("seeds 0 and 1 give the same model")
	}
	// More output units than classes is allowed (as in Spark).
	e.Layers = []int{2, 3, 6}
	if m := fit(t, e, f); m.NumClasses() != 6 {
		t.Errorf("%d classes, want 6", m.NumClasses())
	}
}

func TestBadInput(t *testing.T) {
	good := blobs(t, 30, 3, 3, 5)
	x := good.Col(ml.FeaturesCol)
	oneClass := frameOf(t, 2, make([]float64, 20), make([]float64, 10))
	strLabel, _ := data.NewFrame(x, data.NewColumn(ml.LabelCol, slices.Repeat([]string{"a"}, 30), nil))
	nanX := make([]float64, 60)
	nanX[13] = math.NaN()
	bigLabel := slices.Repeat([]float64{0, 1, 2}, 10)
	bigLabel[16] = 7
	for _, tc := range []struct {
		name string
		set  func(e *MultilayerPerceptronClassifier)
		f    *data.Frame
		want string
	}{
		{"no layers", func(e *MultilayerPerceptronClassifier) { e.Layers = nil }, good, "layers must list"},
		{"zero hidden", func(e *MultilayerPerceptronClassifier) { e.Layers = []int{2, 0, 3} }, good, "layers[1] = 0"},
		{"one output", func(e *MultilayerPerceptronClassifier) { e.Layers = []int{2, 1} }, good, "at least 2 classes"},
		{"maxIter", func(e *MultilayerPerceptronClassifier) { e.MaxIter = -1 }, good, "maxIter must be ≥ 0, got -1"},
		{"tol", func(e *MultilayerPerceptronClassifier) { e.Tol = -1 }, good, "tol must be ≥ 0"},
		{"solver", func(e *MultilayerPerceptronClassifier) { e.Solver = "adam" }, good, `solver must be "l-bfgs" or "gd", got "adam"`},
		{"stepSize", func(e *MultilayerPerceptronClassifier) { e.StepSize = 0 }, good, "stepSize must be > 0"},
		{"regParam", func(e *MultilayerPerceptronClassifier) { e.RegParam = -1 }, good, "regParam must be ≥ 0"},
		{"precision", func(e *MultilayerPerceptronClassifier) { e.Precision = "float16" }, good, "precision must be"},
		{"blockSize", func(e *MultilayerPerceptronClassifier) { e.BlockSize = 0 }, good, "blockSize must be > 0"},
		{"initialWeights", func(e *MultilayerPerceptronClassifier) { e.InitialWeights = []float64{1, 2} }, good, "initialWeights has 2 values, layers [2 4 3] need 27"},
		{"width", func(e *MultilayerPerceptronClassifier) { e.Layers = []int{3, 4, 3} }, good, `layers[0] = 3, but column "features" has 2 values per row`},
		{"label ≥ output", nil, frameOf(t, 2, x.(*data.VectorColumn).Float64s(), bigLabel), `column "label", row 17: label 7, but the output layer has 3 units`},
		{"one class", func(e *MultilayerPerceptronClassifier) { e.Layers = []int{0, 4, 0} }, oneClass, `column "label" has a single class (0)`},
		{"string label", nil, strLabel, `column "label" is string, not numeric`},
		{"NaN feature", nil, frameOf(t, 2, nanX, slices.Repeat([]float64{0, 1}, 15)), `column "features", row 7, element 2: NaN is not a finite number`},
		{"no features", func(e *MultilayerPerceptronClassifier) { e.FeaturesCol = "pixels" }, good, `no column "pixels"`},
	} {
		e := NewMultilayerPerceptronClassifier()
		e.Layers, e.MaxIter = []int{2, 4, 3}, 3
		if tc.set != nil {
			tc.set(e)
		}
		_, err := e.Fit(ml.Local(tc.f))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		} else if !strings.HasPrefix(err.Error(), "MultilayerPerceptronClassifier: ") {
			t.Errorf("%s: error %q does not name the estimator", tc.name, err)
		}
	}

	// The model refuses features of another width.
	e := NewMultilayerPerceptronClassifier()
	e.Layers, e.MaxIter = []int{2, 4, 3}, 3
	m := fit(t, e, good)
	wide := frameOf(t, 3, make([]float64, 9), make([]float64, 3))
	if _, err := m.Transform(wide); err == nil || !strings.Contains(err.Error(), `column "features" has 3 values per row, the model was fitted on 2`) {
		t.Errorf("Transform of a wider frame: %v", err)
	}
}

// A bad row on one rank fails the fit on every rank (none is left waiting
// in a collective), and the rank that has it names the row.
func TestBadInputDistributed(t *testing.T) {
	labels := slices.Repeat([]float64{0, 1, 2}, 10)
	labels[25] = 9
	f := frameOf(t, 2, blobs(t, 30, 3, 3, 6).Col(ml.FeaturesCol).(*data.VectorColumn).Float64s(), labels)
	const n = 3
	gs := commtest.Groups(t, n, comm.TransportTCP, nil)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r, g := range gs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := NewMultilayerPerceptronClassifier()
			e.Layers = []int{2, 4, 3}
			_, errs[r] = e.Fit(ml.Partitioned(mltest.SplitRows(f, r, n), ml.Group(g)))
		}()
	}
	wg.Wait()
	// Rank 2 holds rows 21..30; row 26 is its 6th.
	if errs[2] == nil || !strings.Contains(errs[2].Error(), `rank 2: column "label", row 6: label 9`) {
		t.Errorf("rank 2: %v", errs[2])
	}
	for r := range 2 {
		if errs[r] == nil || !strings.Contains(errs[r].Error(), "a label on another rank is 9") {
			t.Errorf("rank %d: %v", r, errs[r])
		}
	}
}

// The registered stage decodes a config over Spark's defaults, and a
// damaged saved model is an error, not a panic.
func TestRegistryAndPersistence(t *testing.T) {
	s, err := ml.NewStage("MultilayerPerceptronClassifier")
	if err != nil {
		t.Fatal(err)
	}
	e := s.(*MultilayerPerceptronClassifier)
	if err := json.Unmarshal([]byte(`{"layers": [0, 5, 0], "maxIter": 7, "solver": "gd"}`), e); err != nil {
		t.Fatal(err)
	}
	want := NewMultilayerPerceptronClassifier()
	want.Layers, want.MaxIter, want.Solver = []int{0, 5, 0}, 7, SolverGD
	if d, _ := json.Marshal(e); string(d) != string(must(json.Marshal(want))) {
		t.Errorf("decoded stage %s, want %s", d, must(json.Marshal(want)))
	}
	c := e.Copy().(*MultilayerPerceptronClassifier)
	c.Layers[1] = 9
	if e.Layers[1] != 5 {
		t.Error("Copy shares the layers")
	}

	m := fit(t, e, blobs(t, 30, 3, 3, 7))
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := ml.SaveModel(path, m); err != nil {
		t.Fatal(err)
	}
	back, err := ml.LoadModel(path)
	if err != nil {
		t.Fatal(err)
	}
	b := back.(*MultilayerPerceptronClassificationModel)
	if b.Iterations != m.Iterations || b.Evaluations != m.Evaluations || b.Loss != m.Loss || !slices.Equal(b.Layers, m.Layers) {
		t.Errorf("loaded %+v, saved %+v", b, m)
	}
	if _, err := decodeModel(json.RawMessage(`{"layers": [2, 5, 3]}`), map[string]ml.Array{"weights": ml.Vec(make([]float64, 4))}); err == nil || !strings.Contains(err.Error(), "4 weights, layers [2 5 3] need 33") {
		t.Errorf("damaged model: %v", err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// A rank with no rows takes part in every all-reduce with zeros.
func TestEmptyRank(t *testing.T) {
	f := blobs(t, 60, 3, 1.5, 8)
	newEst := func() ml.Estimator {
		e := NewMultilayerPerceptronClassifier()
		e.Layers, e.MaxIter, e.Seed = []int{0, 4, 0}, 15, 2
		return e
	}
	single, err := newEst().Fit(ml.Local(f))
	if err != nil {
		t.Fatal(err)
	}
	// Rank 0 gets nothing, rank 1 a third, rank 2 the rest.
	split := func(f *data.Frame, r, n int) *data.Frame {
		return f.Slice([]int{0, 0, 20}[r], []int{0, 20, 60}[r])
	}
	for r, m := range mltest.FitOnRanks(t, newEst, f, 3, split) {
		if d := mltest.DiffModels(single, m, 1e-9); d != "" {
			t.Errorf("rank %d: %s", r, d)
		}
	}
}

var fashion = flag.Bool("mlp.fashion", false, "fit Fashion-MNIST (about a minute) and check the test accuracy")

// The accuracy bar: ≥ 85% on Fashion-MNIST's test set after 100
// L-BFGS iterations of the 784-100-10 network (float32 passes, as the
// benchmark). Run with -mlp.fashion.
func TestFashionMNISTAccuracy(t *testing.T) {
	if !*fashion {
		t.Skip("needs -mlp.fashion")
	}
	train, test := fashionFrame(t, "train"), fashionFrame(t, "t10k")
	m := fit(t, FashionMNISTEstimator(), train)
	acc := accuracy(t, m, test)
	t.Logf("%d iterations, %d evaluations, loss %.4f, test accuracy %.4f", m.Iterations, m.Evaluations, m.Loss, acc)
	if m.Iterations != 100 {
		t.Errorf("%d iterations, want 100", m.Iterations)
	}
	if acc < 0.85 {
		t.Errorf("test accuracy %.4f < 0.85", acc)
	}
}

// A float32 features column is read without a float64 copy: the same
// model as from the same values in float64, and the same errors.
func TestFloat32Column(t *testing.T) {
	f64 := blobs(t, 60, 3, 2, 9)
	v := f64.Col(ml.FeaturesCol).(*data.VectorColumn).Float64s()
	v32 := make([]float32, len(v))
	for i, x := range v {
		v32[i] = float32(x)
		v[i] = float64(v32[i]) // exactly representable in both
	}
	f32, err := data.NewFrame(data.NewVectorColumn32(ml.FeaturesCol, 2, v32, nil, nil), f64.Col(ml.LabelCol))
	if err != nil {
		t.Fatal(err)
	}
	for _, prec := range []string{Float64, Float32} {
		e := NewMultilayerPerceptronClassifier()
		e.Layers, e.MaxIter, e.Precision = []int{0, 4, 0}, 10, prec
		a, b := fit(t, e, f64), fit(t, e, f32)
		if d := mltest.DiffModels(a, b, 0); d != "" {
			t.Errorf("%s: float32 column: %s", prec, d)
		}
		outA, _ := a.Transform(f64)
		outB, _ := a.Transform(f32)
		if d := mltest.DiffFrames(must(outA.Drop(ml.FeaturesCol)), must(outB.Drop(ml.FeaturesCol)), 0); d != "" {
			t.Errorf("%s: transform of the float32 column: %s", prec, d)
		}
	}
	v32[9] = float32(math.Inf(1))
	e := NewMultilayerPerceptronClassifier()
	e.Layers = []int{0, 4, 0}
	if _, err := e.Fit(ml.Local(f32)); err == nil || !strings.Contains(err.Error(), `column "features", row 5, element 2: +Inf is not a finite number`) {
		t.Errorf("Inf in a float32 column: %v", err)
	}
}
