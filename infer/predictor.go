package infer

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/safetensors"
	"github.com/fathom-ml/fathom/tensor"
)

// Predictor scores batches of rows: a neural model (Net) or a fitted ml
// pipeline (Pipeline) behind one interface. A Predictor is used by one
// goroutine at a time.
type Predictor interface {
	// Inputs names the input columns the predictor reads; nil means every
	// column of the input.
	Inputs() []string
	// Predict scores the rows of in. Result.Out holds the predictions of
	// the rows it scored, Result.Rows which input rows those are, and
	// Result.Errors the rows it could not score and why. An error is for
	// the batch as a whole (a missing column, a wrong type).
	Predict(in *data.Frame) (Result, error)
}

// Result is what Predict returns for a batch.
type Result struct {
	// Out has one row per scored input row, in input order.
	Out *data.Frame
	// Rows are the input rows (0-based within the batch) of Out's rows,
	// increasing.
	Rows []int
	// Errors are the rows that could not be scored.
	Errors []data.BadRow
}

// Load reads a model file written by fathom train (a network) or fathom
// ml fit (a fitted pipeline, whose stage types must be registered: import
// the ml stage packages, as cmd/fathom does) and returns its Predictor.
// outputLayer, if not "", asks a network for the activations of that
// layer instead of its predictions (see NewNet); a pipeline refuses it.
func Load(path, outputLayer string) (Predictor, error) {
	f, err := safetensors.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading model: %w", err)
	}
	if _, ok := f.Metadata[modelfile.ArchitectureKey]; ok {
		m, err := modelfile.Load(path)
		if err != nil {
			return nil, err
		}
		return NewNet(m, outputLayer)
	}
	m, err := ml.LoadModel(path)
	if err != nil {
		if errors.Is(err, ml.ErrNotModel) {
			return nil, fmt.Errorf("%s: neither a fathom network (fathom train) nor a fitted pipeline (fathom ml fit)", path)
		}
		return nil, err
	}
	if outputLayer != "" {
		return nil, fmt.Errorf("%s: --output-layer applies to networks; this is a fitted ml pipeline", path)
	}
	return NewPipeline(m), nil
}

// Net is the Predictor of a trained network. Its outputs are, for a
// classifier, the predicted class name ("prediction") and one probability
// column per class ("prob_<class>"); for a regression, the predicted value
// ("prediction"); with an output layer, that layer's activations as one
// vector column ("features").
type Net struct {
	m      *modelfile.Model
	net    *nn.Sequential // the whole network, or its prefix up to the output layer
	layer  int            // the output layer's index, −1 for predictions
	inputs []string       // source columns
	feat   []source       // where each feature value comes from
	width  int
	mean   []float32 // standardization, or nil
	inv    []float32
	buf    []float32 // the last batch's features
}

// source locates a feature value: column col of the batch (by its index
// in Inputs), element elem of a vector column (−1 for a scalar).
type source struct{ col, elem int }

// FeaturesCol is the vector column of an output layer's activations.
const FeaturesCol = "features"

// NewNet returns the Predictor of m. outputLayer, if not "", names the
// layer whose activations to emit: its index in the network as the state
// dict names it ("0", "1", ...; "3" for the parameters "3.weight" and
// "3.bias"), or a negative index counting from the end ("-1" is the last
// layer: the logits; "-2" the one before). A Linear layer directly
// followed by a ReLU is emitted before the ReLU; name the ReLU to get its
// output.
//
// The feature columns are the model's (m.Columns): scalar columns, or the
// elements of a vector column v named v[0], v[1], ...; a model without
// column names reads the input's columns in order (in Run, all but the
// kept and key=value columns).
func NewNet(m *modelfile.Model, outputLayer string) (*Net, error) {
	p := &Net{m: m, net: m.Net, layer: -1, width: numel(m.Spec.Input)}
	if outputLayer != "" {
		n := m.Net.Len()
		i, err := strconv.Atoi(strings.TrimSpace(outputLayer))
		if err != nil {
			return nil, fmt.Errorf("output layer %q: not a layer index (the network's layers are 0 to %d: %s)", outputLayer, n-1, layerList(m))
		}
		if i < 0 {
			i += n
		}
		if i < 0 || i >= n {
			return nil, fmt.Errorf("output layer %q: out of range (the network's layers are 0 to %d: %s)", outputLayer, n-1, layerList(m))
		}
		p.layer = i
		p.net = nn.NewSequential(m.Net.Layers()[:i+1]...)
		p.net.Eval()
	}
	// Resolve the feature columns: v[e] names element e of vector column v.
	idx := map[string]int{}
	for _, name := range m.Columns {
		col, elem := name, -1
		if b, rest, ok := strings.Cut(name, "["); ok && strings.HasSuffix(rest, "]") {
			if e, err := strconv.Atoi(strings.TrimSuffix(rest, "]")); err == nil && e >= 0 {
				col, elem = b, e
			}
		}
		k, ok := idx[col]
		if !ok {
			k = len(p.inputs)
			idx[col] = k
			p.inputs = append(p.inputs, col)
		}
		p.feat = append(p.feat, source{k, elem})
	}
	if m.Scaler != nil {
		p.mean = make([]float32, len(m.Scaler.Mean))
		p.inv = make([]float32, len(m.Scaler.Std))
		for j := range p.mean {
			p.mean[j] = float32(m.Scaler.Mean[j])
			p.inv[j] = 1
			if s := m.Scaler.Std[j]; s != 0 {
				p.inv[j] = float32(1 / s)
			}
		}
	}
	return p, nil
}

func layerList(m *modelfile.Model) string {
	var b strings.Builder
	for i, l := range m.Spec.Layers {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d %s", i, l.Type)
	}
	return b.String()
}

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// Model returns the network's model file.
func (p *Net) Model() *modelfile.Model { return p.m }

// Inputs returns the columns the network's features come from (nil when
// the model does not name its columns).
func (p *Net) Inputs() []string { return p.inputs }

// Predict implements Predictor.
func (p *Net) Predict(in *data.Frame) (Result, error) {
	x, rows, bad, err := p.features(in)
	if err != nil {
		return Result{}, err
	}
	return p.forward(x, rows, bad)
}

// features gathers the feature values of the rows of in that have all of
// them (row-major, standardized) and reports the others.
func (p *Net) features(in *data.Frame) (x []float32, rows []int, bad []data.BadRow, err error) {
	n := in.Len()
	type col struct {
		c   data.Column
		f32 []float32
		f64 []float64
		i64 []int64
		str []string
		vec *data.VectorColumn
	}
	var feat []source
	var cols []col
	if p.inputs == nil {
		// No names: every column, scalars and vectors, in order.
		for k, c := range in.Columns() {
			cols = append(cols, col{c: c})
			if v, ok := c.(*data.VectorColumn); ok {
				for e := range v.Width() {
					feat = append(feat, source{k, e})
				}
			} else {
				feat = append(feat, source{k, -1})
			}
		}
	} else {
		feat = p.feat
		for _, name := range p.inputs {
			c := in.Col(name)
			if c == nil {
				return nil, nil, nil, fmt.Errorf("the input has no column %q (the model reads %s)", name, strings.Join(p.inputs, ", "))
			}
			cols = append(cols, col{c: c})
		}
	}
	if len(feat) != p.width {
		return nil, nil, nil, fmt.Errorf("the input has %d feature values per row, the model reads %d (shape %v)", len(feat), p.width, p.m.Spec.Input)
	}
	for k := range cols {
		c := &cols[k]
		switch v := c.c.(type) {
		case *data.ScalarColumn[float32]:
			c.f32 = v.Values()
		case *data.ScalarColumn[float64]:
			c.f64 = v.Values()
		case *data.ScalarColumn[int64]:
			c.i64 = v.Values()
		case *data.VectorColumn:
			c.vec = v
		case *data.ScalarColumn[string]:
			// Text (a CSV column whose first rows were not all numbers):
			// each cell is parsed, and a row whose cell is not a number
			// cannot be scored.
			c.str = v.Values()
		default:
			return nil, nil, nil, fmt.Errorf("column %q is %s; features must be numbers", c.c.Name(), c.c.Kind())
		}
	}
	for _, s := range feat {
		c := cols[s.col]
		if (s.elem >= 0) != (c.vec != nil) {
			return nil, nil, nil, fmt.Errorf("column %q: the model reads it as %s", c.c.Name(), map[bool]string{true: "a vector", false: "a number"}[s.elem >= 0])
		}
		if c.vec != nil && s.elem >= c.vec.Width() {
			return nil, nil, nil, fmt.Errorf("column %q has %d elements, the model reads element %d", c.c.Name(), c.vec.Width(), s.elem)
		}
	}
	w := p.width
	// The buffer is reused from batch to batch: every value is written.
	if cap(p.buf) < n*w {
		p.buf = make([]float32, n*w)
	}
	x = p.buf[:n*w]
	// The common layouts take a fast path: one float32 vector column
	// holding every feature in order, or float32 scalar columns.
	oneVec := len(cols) == 1 && cols[0].vec != nil && cols[0].vec.Elem() == data.Float32 && cols[0].vec.Width() == w
	if oneVec {
		for j, s := range feat {
			if s.elem != j {
				oneVec = false
			}
		}
	}
	okRow, reason, markBad := faults(n)
	// Float32 scalar columns, the usual layout of images and of tables
	// written by data.WriteParquet, are gathered eight columns at a time:
	// each row gets 32 contiguous bytes per step.
	var f32 [][]float32
	for _, s := range feat {
		c := cols[s.col]
		if c.f32 == nil {
			f32 = nil
			break
		}
		f32 = append(f32, c.f32)
	}
	if oneVec {
		copy(x, cols[0].vec.Float32s())
	} else if f32 != nil {
		gather32(x, f32, n)
	} else {
		// Column to row order in tiles of rows, so that the rows being
		// written stay in cache while every column is visited.
		const tile = 128
		for i0 := 0; i0 < n; i0 += tile {
			i1 := min(i0+tile, n)
			for j, s := range feat {
				c := cols[s.col]
				switch {
				case c.f32 != nil:
					for i, v := range c.f32[i0:i1] {
						x[(i0+i)*w+j] = v
					}
				case c.f64 != nil:
					for i, v := range c.f64[i0:i1] {
						x[(i0+i)*w+j] = float32(v)
					}
				case c.i64 != nil:
					for i, v := range c.i64[i0:i1] {
						x[(i0+i)*w+j] = float32(v)
					}
				case c.vec != nil:
					for i := i0; i < i1; i++ {
						x[i*w+j] = float32(c.vec.At(i, s.elem))
					}
				case c.str != nil:
					for i := i0; i < i1; i++ {
						if c.c.IsNull(i) {
							continue
						}
						v, err := strconv.ParseFloat(c.str[i], 64)
						if err != nil {
							markBad(i, fmt.Sprintf("column %q: cannot parse %q as a number", c.c.Name(), c.str[i]))
						}
						x[i*w+j] = float32(v)
					}
				}
			}
		}
	}
	// Nulls: imputed when the model was trained with mean imputation,
	// otherwise the row cannot be scored.
	for j, s := range feat {
		c := cols[s.col]
		if c.c.NullCount() == 0 && (c.vec == nil || c.vec.ElemValid() == nil) {
			continue
		}
		for i := range n {
			if c.c.IsNull(i) || (c.vec != nil && c.vec.ElemNull(i, s.elem)) {
				p.missing(x, i, j, p.featName(c.c.Name(), s.elem), markBad)
			}
		}
	}
	return p.finish(x, n, okRow, reason, markBad, func(j int) string { return p.featName(cols[feat[j].col].c.Name(), feat[j].elem) }, false)
}

// missing fills in feature j of row i, which is null: the mean the model
// was trained to impute, or the row cannot be scored.
func (p *Net) missing(x []float32, i, j int, name string, markBad func(int, string)) {
	if p.m.Impute != nil {
		x[i*p.width+j] = float32(p.m.Impute[j])
		return
	}
	markBad(i, fmt.Sprintf("column %q is missing (the model was trained without impute: mean)", name))
}

// finish checks that the n rows of x are finite, standardizes them and
// compacts the rows that can be scored.
// finite says the values are known to be finite (the reader summed
// them).
func (p *Net) finish(x []float32, n int, okRow []bool, reason map[int]string, markBad func(int, string), name func(j int) string, finite bool) ([]float32, []int, []data.BadRow, error) {
	w := p.width
	if !finite {
		finite = kernel.FiniteF32(x[:n*w])
	}
	if !finite {
		for i := range n {
			for j, v := range x[i*w : (i+1)*w] {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					markBad(i, fmt.Sprintf("feature %d (%s) is %v", j, name(j), v))
					break
				}
			}
		}
	}
	if p.mean != nil {
		for i := range n {
			row := x[i*w : (i+1)*w]
			for j := range row {
				row[j] = (row[j] - p.mean[j]) * p.inv[j]
			}
		}
	}
	var rows []int
	var bad []data.BadRow
	if len(reason) == 0 {
		rows = make([]int, n)
		for i := range rows {
			rows[i] = i
		}
		return x, rows, nil, nil
	}
	// Compact the good rows.
	k := 0
	for i := range n {
		if !okRow[i] {
			bad = append(bad, data.BadRow{Row: i, Reason: reason[i]})
			continue
		}
		copy(x[k*w:(k+1)*w], x[i*w:(i+1)*w])
		rows = append(rows, i)
		k++
	}
	return x[:k*w], rows, bad, nil
}

// faults returns the rows-that-can-be-scored flags of a batch of n rows,
// the reason of each row that cannot, and the function that marks one.
func faults(n int) (okRow []bool, reason map[int]string, markBad func(int, string)) {
	okRow = make([]bool, n)
	for i := range okRow {
		okRow[i] = true
	}
	reason = make(map[int]string)
	markBad = func(i int, why string) {
		if okRow[i] {
			okRow[i] = false
			reason[i] = why
		}
	}
	return okRow, reason, markBad
}

// matrixColumns says which columns data.ParquetMatrix reads for this
// network: its input columns when each feature is a column of its own, in
// order, or one vector column of every feature; nil with ok when the
// model does not name its columns (every column but the kept and key
// ones). ok is false for other layouts.
func (p *Net) matrixColumns() (cols []string, ok bool) {
	if p.inputs == nil {
		return nil, true
	}
	vector := len(p.inputs) == 1 && p.feat[0].elem >= 0
	for j, s := range p.feat {
		if vector && s.elem != j || !vector && (s.elem >= 0 || s.col != j) {
			return nil, false
		}
	}
	return p.inputs, true
}

// columnMajor reports whether the network takes its features best
// column-major, feature j of row i at x[j*ld+i]: its input is a vector
// and its first layer a float32 Linear, whose GEMM reads that layout in
// place as a transposed operand (so the reader transposes nothing).
func (p *Net) columnMajor() bool {
	if len(p.m.Spec.Input) != 1 || p.net.Len() == 0 {
		return false
	}
	l, ok := p.net.Layers()[0].(*nn.Linear)
	return ok && l.Weight.DType() == tensor.Float32
}

// predictMatrix scores n rows of features read by data.ParquetMatrix
// (row-major in x when ld is 0, else column-major: feature j of row i at
// x[j*ld+i]; the missing values listed in nulls, finite when the reader
// found every value finite); names are the matrix's columns. x is
// standardized in place.
func (p *Net) predictMatrix(x []float32, n, ld int, nulls []data.NullCell, names []string, finite bool) (Result, error) {
	if ld > 0 {
		if len(x) < (p.width-1)*ld+n || ld < n {
			return Result{}, fmt.Errorf("%d values for %d rows of %d features %d apart", len(x), n, p.width, ld)
		}
		if len(nulls) == 0 && finite {
			return p.forwardColumns(x, n, ld)
		}
		// Rows to impute or to drop: row-major, as the other readers give.
		rm := make([]float32, n*p.width)
		for j := range p.width {
			for i, v := range x[j*ld : j*ld+n] {
				rm[i*p.width+j] = v
			}
		}
		x = rm
	}
	if len(x) < n*p.width {
		return Result{}, fmt.Errorf("%d values for %d rows of %d features", len(x), n, p.width)
	}
	name := func(j int) string {
		if len(names) == 1 && p.width > 1 {
			return p.featName(names[0], j)
		}
		return names[j]
	}
	okRow, reason, markBad := faults(n)
	for _, c := range nulls {
		p.missing(x, c.Row, c.Col, name(c.Col), markBad)
	}
	x, rows, bad, err := p.finish(x[:n*p.width], n, okRow, reason, markBad, name, finite)
	if err != nil {
		return Result{}, err
	}
	return p.forward(x, rows, bad)
}

// forward runs the network on the rows of x that can be scored.
func (p *Net) forward(x []float32, rows []int, bad []data.BadRow) (Result, error) {
	res := Result{Rows: rows, Errors: bad}
	n := len(rows)
	var err error
	if n == 0 {
		res.Out, err = p.outputs(nil, 0)
		return res, err
	}
	out := p.net.Forward(tensor.FromFloat32(x, append([]int{n}, p.m.Spec.Input...)...).NoGrad())
	res.Out, err = p.outputs(out, n)
	return res, err
}

// forwardColumns standardizes and scores the n rows of the column-major x
// (feature j of row i at x[j*ld+i]), every value present and finite.
func (p *Net) forwardColumns(x []float32, n, ld int) (Result, error) {
	w := p.width
	if p.mean != nil {
		for j := range w {
			m, inv := p.mean[j], p.inv[j]
			col := x[j*ld : j*ld+n]
			for i, v := range col {
				col[i] = (v - m) * inv
			}
		}
	}
	rows := make([]int, n)
	for i := range rows {
		rows[i] = i
	}
	t := tensor.FromFloat32(x[:(w-1)*ld+ld], w, ld)
	if n < ld {
		t = t.Narrow(1, 0, n)
	}
	out := p.net.Forward(t.Transpose(0, 1).NoGrad())
	res := Result{Rows: rows}
	var err error
	res.Out, err = p.outputs(out, n)
	return res, err
}

// gather32 writes the n rows of the columns cols into x, row-major.
func gather32(x []float32, cols [][]float32, n int) {
	w := len(cols)
	const tile = 256
	for i0 := 0; i0 < n; i0 += tile {
		i1 := min(i0+tile, n)
		j := 0
		for ; j+8 <= w; j += 8 {
			c0, c1, c2, c3 := cols[j][i0:i1], cols[j+1][i0:i1], cols[j+2][i0:i1], cols[j+3][i0:i1]
			c4, c5, c6, c7 := cols[j+4][i0:i1], cols[j+5][i0:i1], cols[j+6][i0:i1], cols[j+7][i0:i1]
			for i := range c0 {
				r := x[(i0+i)*w+j : (i0+i)*w+j+8 : (i0+i)*w+j+8]
				r[0], r[1], r[2], r[3] = c0[i], c1[i], c2[i], c3[i]
				r[4], r[5], r[6], r[7] = c4[i], c5[i], c6[i], c7[i]
			}
		}
		for ; j < w; j++ {
			for i, v := range cols[j][i0:i1] {
				x[(i0+i)*w+j] = v
			}
		}
	}
}

func (p *Net) featName(col string, elem int) string {
	if elem < 0 {
		return col
	}
	return col + "[" + strconv.Itoa(elem) + "]"
}

// outputs turns the network's output for n rows into output columns.
func (p *Net) outputs(out *tensor.Tensor, n int) (*data.Frame, error) {
	if p.layer >= 0 {
		w := 0
		var vals []float32
		if out != nil {
			vals = out.Float32s()
			w = len(vals) / max(n, 1)
		} else {
			w = p.layerWidth()
			vals = []float32{}
		}
		return data.NewFrame(data.NewVectorColumn32(FeaturesCol, w, vals, nil, nil))
	}
	if p.m.Task == metrics.Regression {
		v := []float32{}
		if out != nil {
			v = out.Float32s()
		}
		return data.NewFrame(data.NewColumn("prediction", v, nil))
	}
	c := len(p.m.Classes)
	var probs []float32
	if out != nil {
		probs = out.Softmax(1).Float32s()
	}
	pred := make([]string, n)
	cols := make([]data.Column, 0, c+1)
	for i := range n {
		pred[i] = p.m.Classes[metrics.Argmax(probs[i*c:(i+1)*c])]
	}
	cols = append(cols, data.NewColumn("prediction", pred, nil))
	for k, name := range p.m.Classes {
		v := make([]float32, n)
		for i := range v {
			v[i] = probs[i*c+k]
		}
		cols = append(cols, data.NewColumn("prob_"+name, v, nil))
	}
	return data.NewFrame(cols...)
}

// layerWidth is the number of activations per row of the output layer.
func (p *Net) layerWidth() int {
	x := tensor.FromFloat32(make([]float32, p.width), append([]int{1}, p.m.Spec.Input...)...)
	return len(p.net.Forward(x.NoGrad()).Float32s())
}

// Pipeline is the Predictor of a fitted ml pipeline: its outputs are the
// columns the pipeline adds ("prediction", "probability" when it has
// one, and any string columns such as a decoded label).
type Pipeline struct {
	m ml.Model
}

// NewPipeline returns the Predictor of a fitted pipeline (or any ml
// Model).
func NewPipeline(m ml.Model) *Pipeline { return &Pipeline{m: m} }

// Inputs returns nil: a pipeline reads the columns its stages name.
func (p *Pipeline) Inputs() []string { return nil }

// Predict implements Predictor. A batch the pipeline refuses is retried
// row by row, so that only the rows at fault are reported.
func (p *Pipeline) Predict(in *data.Frame) (Result, error) {
	out, err := p.m.Transform(in)
	if err == nil {
		rows := make([]int, in.Len())
		for i := range rows {
			rows[i] = i
		}
		o, err := p.outputs(in, out)
		return Result{Out: o, Rows: rows}, err
	}
	var res Result
	var parts []*data.Frame
	for i := range in.Len() {
		o, rerr := p.m.Transform(in.Slice(i, i+1))
		if rerr != nil {
			res.Errors = append(res.Errors, data.BadRow{Row: i, Reason: rerr.Error()})
			continue
		}
		o, rerr = p.outputs(in, o)
		if rerr != nil {
			return Result{}, rerr
		}
		parts = append(parts, o)
		res.Rows = append(res.Rows, i)
	}
	if len(parts) == 0 {
		// Nothing scored: the whole batch was at fault, or the model
		// does not fit the data at all.
		if in.Len() > 1 {
			return Result{}, err
		}
		return res, nil
	}
	res.Out, err = concat(parts)
	return res, err
}

// outputs selects the columns the pipeline added.
func (p *Pipeline) outputs(in, out *data.Frame) (*data.Frame, error) {
	if !out.Has(ml.PredictionCol) {
		return nil, fmt.Errorf("the model's output has no %q column (columns: %s)", ml.PredictionCol, strings.Join(out.Names(), ", "))
	}
	names := []string{ml.PredictionCol}
	if out.Has(ml.ProbabilityCol) {
		names = append(names, ml.ProbabilityCol)
	}
	for _, c := range out.Columns() {
		if c.Kind() == data.String && !in.Has(c.Name()) {
			names = append(names, c.Name())
		}
	}
	return out.Select(names...)
}

// concat stacks frames of the same columns.
func concat(parts []*data.Frame) (*data.Frame, error) {
	if len(parts) == 1 {
		return parts[0], nil
	}
	var cols []data.Column
	for j, c0 := range parts[0].Columns() {
		var col data.Column
		switch c0.(type) {
		case *data.ScalarColumn[float64]:
			col = concatScalar[float64](parts, j)
		case *data.ScalarColumn[float32]:
			col = concatScalar[float32](parts, j)
		case *data.ScalarColumn[int64]:
			col = concatScalar[int64](parts, j)
		case *data.ScalarColumn[string]:
			col = concatScalar[string](parts, j)
		case *data.ScalarColumn[bool]:
			col = concatScalar[bool](parts, j)
		case *data.VectorColumn:
			var vals []float64
			var vals32 []float32
			w := c0.(*data.VectorColumn).Width()
			f32 := c0.(*data.VectorColumn).Elem() == data.Float32
			for _, f := range parts {
				v := f.Columns()[j].(*data.VectorColumn)
				if f32 {
					vals32 = append(vals32, v.Float32s()...)
				} else {
					vals = append(vals, v.Float64s()...)
				}
			}
			if f32 {
				col = data.NewVectorColumn32(c0.Name(), w, vals32, nil, nil)
			} else {
				col = data.NewVectorColumn(c0.Name(), w, vals, nil, nil)
			}
		default:
			return nil, fmt.Errorf("column %q: cannot stack kind %s", c0.Name(), c0.Kind())
		}
		cols = append(cols, col)
	}
	return data.NewFrame(cols...)
}

func concatScalar[T data.Scalar](parts []*data.Frame, j int) data.Column {
	var vals []T
	var valid []bool
	anyNull := false
	for _, f := range parts {
		c := f.Columns()[j].(*data.ScalarColumn[T])
		vals = append(vals, c.Values()...)
		if c.NullCount() > 0 {
			anyNull = true
		}
	}
	if anyNull {
		for _, f := range parts {
			c := f.Columns()[j].(*data.ScalarColumn[T])
			for i := range c.Len() {
				valid = append(valid, !c.IsNull(i))
			}
		}
	}
	return data.NewColumn(parts[0].Columns()[j].Name(), vals, valid)
}
