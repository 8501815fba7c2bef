package infer

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/fathom-ml/fathom/data"
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
	m     *modelfile.Model
	net   *nn.Sequential // the whole network, or its prefix up to the output layer
	layer int            // the output layer's index, −1 for predictions
	feat  *modelfile.Features
	buf   []float32 // the last batch's features
}

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
	p := &Net{m: m, net: m.Net, layer: -1, feat: m.Features()}
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

// Model returns the network's model file.
func (p *Net) Model() *modelfile.Model { return p.m }

// Inputs returns the columns the network's features come from (nil when
// the model does not name its columns).
func (p *Net) Inputs() []string { return p.feat.Inputs }

// Predict implements Predictor.
func (p *Net) Predict(in *data.Frame) (Result, error) {
	x, rows, bad, err := p.feat.Frame(in, p.buf)
	if err != nil {
		return Result{}, err
	}
	p.buf = x[:cap(x)]
	return p.forward(x, rows, bad)
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
	w := p.feat.Width
	if ld > 0 {
		if len(x) < (w-1)*ld+n || ld < n {
			return Result{}, fmt.Errorf("%d values for %d rows of %d features %d apart", len(x), n, w, ld)
		}
		if len(nulls) == 0 && finite {
			return p.forwardColumns(x, n, ld)
		}
		// Rows to impute or to drop: row-major, as the other readers give.
		rm := make([]float32, n*w)
		for j := range w {
			for i, v := range x[j*ld : j*ld+n] {
				rm[i*w+j] = v
			}
		}
		x = rm
	}
	if len(x) < n*w {
		return Result{}, fmt.Errorf("%d values for %d rows of %d features", len(x), n, w)
	}
	name := func(j int) string {
		if len(names) == 1 && w > 1 {
			return p.feat.Name(names[0], j)
		}
		return names[j]
	}
	x, rows, bad, err := p.feat.Rows(x, n, nulls, name, finite)
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
	w := p.feat.Width
	p.feat.StandardizeColumns(x, n, ld)
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
	x := tensor.FromFloat32(make([]float32, p.feat.Width), append([]int{1}, p.m.Spec.Input...)...)
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
