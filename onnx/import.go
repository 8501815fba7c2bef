package onnx

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// UnsupportedError reports an ONNX node that has no fathom layer.
type UnsupportedError struct {
	Op, Node string
	Reason   string
}

func (e *UnsupportedError) Error() string {
	s := fmt.Sprintf("unsupported ONNX op %s at node %q", e.Op, e.Node)
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// Metadata keys a producer other than fathom may set (metadata_props) to
// tell Import what the model predicts; ImportOptions override them.
const (
	MetaTask    = "fathom.task"    // classification or regression
	MetaClasses = "fathom.classes" // class names in logit order, comma-separated
	MetaColumns = "fathom.columns" // input feature column names, comma-separated
)

// ImportOptions says what an imported model predicts when the file does
// not say it (a file fathom exported carries its whole architecture).
// Zero fields take the file's fathom.* metadata, else the defaults: a
// model with one output value is a regression, with k > 1 a
// classification over classes "0".."k-1"; columns are unnamed (inputs
// are taken in order).
type ImportOptions struct {
	Task    string
	Classes []string
	Columns []string
}

// ReadFile reads and decodes an ONNX file (at most MaxFileSize bytes).
func ReadFile(path string) (*ModelProto, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m, err := Unmarshal(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Load reads an ONNX file as a fathom model with default ImportOptions:
// what modelfile.Load calls for a .onnx path.
func Load(path string) (*modelfile.Model, error) {
	return LoadWith(path, ImportOptions{})
}

// LoadWith reads an ONNX file as a fathom model.
func LoadWith(path string, o ImportOptions) (*modelfile.Model, error) {
	mp, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := Import(mp, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Import maps an ONNX graph to fathom layers and returns the model in
// evaluation mode. The graph must be a chain of supported ops from one
// float input [batch, ...] to one output, with skip connections allowed
// (a residual block: two branches joined by an Add); see the package
// documentation for the ops and patterns. Any other op gives an
// *UnsupportedError naming it and its node.
func Import(mp *ModelProto, o ImportOptions) (*modelfile.Model, error) {
	opset, err := checkOpset(mp)
	if err != nil {
		return nil, err
	}
	g := mp.Graph
	if g == nil || len(g.Node) == 0 {
		return nil, errors.New("the ONNX model has no graph nodes")
	}
	im, err := newImporter(g)
	if err != nil {
		return nil, err
	}
	im.opset = opset
	layers, err := im.chain(im.input, nil, "")
	if err != nil {
		return nil, err
	}
	if len(layers) == 0 {
		return nil, errors.New("the ONNX graph has no layers fathom can run")
	}
	if layers, err = foldEncoders(layers); err != nil {
		return nil, err
	}
	if im.used < len(im.nodes) {
		for _, n := range im.nodes {
			if !n.done {
				return nil, &UnsupportedError{Op: n.OpType, Node: n.Name, Reason: "the node is not on the path from the input to the output"}
			}
		}
	}
	meta := map[string]string{}
	for _, p := range mp.MetadataProps {
		meta[p.Key] = p.Value
	}
	m := &modelfile.Model{Spec: nn.Spec{Input: im.inputShape}}
	var arch *modelfile.Architecture
	if _, ok := meta[MetadataKey]; ok {
		if arch, err = modelfile.ParseArchitecture(meta); err != nil {
			return nil, fmt.Errorf("metadata %q: %w", MetadataKey, err)
		}
	}
	for _, l := range layers {
		m.Spec.Layers = append(m.Spec.Layers, l.toSpec())
	}
	out, err := im.build(m, layers)
	if err != nil {
		return nil, err
	}
	if err := describeModel(m, im, out, arch, meta, o); err != nil {
		return nil, err
	}
	// Predict takes the softmax of a classifier's output; a graph that
	// ends in a Softmax gets a LogSoftmax instead, whose softmax is the
	// same probabilities.
	last := &m.Spec.Layers[len(m.Spec.Layers)-1]
	if m.Task == metrics.Classification && last.Type == "softmax" && last.Dim != nil && (*last.Dim == -1 || *last.Dim == 1) {
		last.Type = "logsoftmax"
		if _, err := im.build(m, layers); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// build builds m.Spec into m.Net with the imported weights and returns
// the shape of one output example.
func (im *importer) build(m *modelfile.Model, layers []*layer) ([]int, error) {
	// A bound on the network's size from the weights the file holds.
	stored := int64(1)
	for _, c := range im.consts {
		stored += int64(len(c.vals))
	}
	net, out, err := m.Spec.BuildWithin(tensor.NewRNG(0), stored)
	if err != nil {
		return nil, fmt.Errorf("the layers the graph maps to do not build: %w", err)
	}
	sd := map[string]*tensor.Tensor{}
	for i, l := range layers {
		l.weights(strconv.Itoa(i), sd)
	}
	for _, e := range nn.StateEntries(net) {
		if _, ok := sd[e.Name]; !ok && !strings.HasSuffix(e.Name, "num_batches_tracked") {
			return nil, fmt.Errorf("internal: no ONNX weights for %s", e.Name)
		}
	}
	if err := nn.LoadStateDict(net, sd, false); err != nil {
		return nil, err
	}
	net.Eval()
	m.Net = net
	return out, nil
}

// describeModel sets the task, classes, columns and input scaling.
func describeModel(m *modelfile.Model, im *importer, out []int, arch *modelfile.Architecture, meta map[string]string, o ImportOptions) error {
	task := o.Task
	classes, columns := o.Classes, o.Columns
	if arch != nil {
		if task == "" {
			task = arch.Task
		}
		if classes == nil {
			classes = arch.Classes
		}
		if columns == nil {
			columns = arch.Columns
		}
		m.Label, m.Info, m.TrainedOn = arch.Label, arch.Info, arch.TrainedOn
		if arch.Impute != nil {
			m.Impute = arch.Impute.Mean
		}
	}
	if task == "" {
		task = meta[MetaTask]
	}
	if classes == nil && meta[MetaClasses] != "" {
		classes = strings.Split(meta[MetaClasses], ",")
	}
	if columns == nil && meta[MetaColumns] != "" {
		columns = strings.Split(meta[MetaColumns], ",")
	}
	n := numelInts(out)
	if task == "" {
		task = "regression"
		if n > 1 || classes != nil {
			task = "classification"
		}
	}
	t, err := metrics.ParseTask(task)
	if err != nil {
		return err
	}
	m.Task = t
	if t == metrics.Classification && classes == nil {
		for i := range n {
			classes = append(classes, strconv.Itoa(i))
		}
	}
	if t == metrics.Classification {
		m.Classes = classes
	}
	if err := m.CheckOutput(out); err != nil {
		return err
	}
	if columns != nil && len(columns) != numelInts(im.inputShape) {
		return fmt.Errorf("%d column names for an input of %d values %v", len(columns), numelInts(im.inputShape), im.inputShape)
	}
	m.Columns = columns
	if im.mean != nil {
		m.Scaler = &data.Standardizer{Mean: im.mean, Std: im.std}
		// The graph holds float32 means and inverse deviations; when they
		// are the file's recorded standardization rounded, take the exact
		// float64 values, so that a round trip predicts bit for bit alike.
		if arch != nil && arch.Standardize != nil && sameScaling(arch.Standardize, im.mean, im.std) {
			m.Scaler = &data.Standardizer{Mean: arch.Standardize.Mean, Std: arch.Standardize.Std}
		}
	}
	if m.Impute != nil && len(m.Impute) != numelInts(im.inputShape) {
		m.Impute = nil
	}
	return nil
}

// sameScaling reports whether the graph's standardization (mean, std from
// float32 constants) is s rounded to float32 as Export writes it.
func sameScaling(s *modelfile.Standardization, mean, std []float64) bool {
	if len(s.Mean) != len(mean) || len(s.Std) != len(std) {
		return false
	}
	for j := range mean {
		inv := 1.0
		if s.Std[j] > 0 {
			inv = 1 / s.Std[j]
		}
		if float32(s.Mean[j]) != float32(mean[j]) || float32(inv) != float32(1/std[j]) {
			return false
		}
	}
	return true
}

// checkOpset checks the default-domain opset and that every node is in it.
func checkOpset(mp *ModelProto) (int64, error) {
	var v int64 = -1
	for _, o := range mp.OpsetImport {
		if o.Domain == "" || o.Domain == "ai.onnx" {
			v = o.Version
		}
	}
	if v < 0 {
		return 0, errors.New("the ONNX model imports no default-domain opset")
	}
	if v < MinImportOpset || v > MaxImportOpset {
		return 0, fmt.Errorf("ONNX opset %d is not supported (%d to %d)", v, MinImportOpset, MaxImportOpset)
	}
	if mp.Graph != nil {
		for _, n := range mp.Graph.Node {
			if n.Domain != "" && n.Domain != "ai.onnx" {
				return 0, &UnsupportedError{Op: n.Domain + "." + n.OpType, Node: n.Name, Reason: "only the default ONNX domain is supported"}
			}
		}
	}
	return v, nil
}

// layer is one imported layer: its spec, its weights by state-dict
// suffix, and a residual's body and projection.
type layer struct {
	spec nn.LayerSpec
	w    map[string][]float64
	ws   map[string][]int
	body []*layer
	proj *layer
}

func (l *layer) set(name string, c *constant, shape ...int) {
	if l.w == nil {
		l.w, l.ws = map[string][]float64{}, map[string][]int{}
	}
	if shape == nil {
		shape = c.shape
	}
	l.w[name], l.ws[name] = c.vals, shape
}

func (l *layer) toSpec() nn.LayerSpec {
	s := l.spec
	for _, b := range l.body {
		s.Layers = append(s.Layers, b.toSpec())
	}
	if l.proj != nil {
		s.Proj = true
	}
	return s
}

// weights adds the layer's tensors to sd under prefix.
func (l *layer) weights(prefix string, sd map[string]*tensor.Tensor) {
	for k, v := range l.w {
		sd[prefix+"."+k] = tensor.FromFloat64(v, l.ws[k]...)
	}
	for i, b := range l.body {
		b.weights(prefix+".body."+strconv.Itoa(i), sd)
	}
	if l.proj != nil {
		l.proj.weights(prefix+".proj", sd)
	}
}

// node is a graph node with its import state.
type node struct {
	*NodeProto
	index int
	done  bool
}

// importer holds the graph being mapped.
type importer struct {
	nodes      []*node
	consts     map[string]*constant
	users      map[string][]*node
	input      string
	output     string
	inputShape []int
	used       int
	opset      int64
	rank       int // example rank (without batch) of the tensor being mapped
	mean, std  []float64
}

func newImporter(g *GraphProto) (*importer, error) {
	im := &importer{consts: map[string]*constant{}, users: map[string][]*node{}}
	for _, t := range g.Initializer {
		c, err := decodeTensor(t)
		if err != nil {
			return nil, fmt.Errorf("initializer: %w", err)
		}
		im.consts[t.Name] = c
	}
	var inputs []*ValueInfo
	for _, v := range g.Input {
		if _, ok := im.consts[v.Name]; !ok {
			inputs = append(inputs, v)
		}
	}
	if len(inputs) != 1 || len(g.Output) != 1 {
		return nil, fmt.Errorf("the graph has %d inputs and %d outputs; fathom models have one of each", len(inputs), len(g.Output))
	}
	in := inputs[0]
	if in.ElemType != TypeFloat {
		return nil, fmt.Errorf("input %q has element type %d; fathom models read float32 (1)", in.Name, in.ElemType)
	}
	if !in.HasShape || len(in.Shape) < 2 {
		return nil, fmt.Errorf("input %q needs a shape [batch, ...] with at least one feature dim", in.Name)
	}
	for _, d := range in.Shape[1:] {
		if d.Value <= 0 || d.Value > maxElems {
			return nil, fmt.Errorf("input %q has shape %v: every dim but the batch must be a fixed positive size", in.Name, dimString(in.Shape))
		}
		im.inputShape = append(im.inputShape, int(d.Value))
	}
	if _, err := numel(toInt64(im.inputShape)); err != nil {
		return nil, fmt.Errorf("input %q: %w", in.Name, err)
	}
	im.input, im.output, im.rank = in.Name, g.Output[0].Name, len(im.inputShape)
	for i, np := range g.Node {
		n := &node{NodeProto: np, index: len(im.nodes)}
		if n.Name == "" {
			n.Name = fmt.Sprintf("#%d", i)
		}
		if n.OpType == "Constant" {
			if len(n.Output) != 1 {
				return nil, &UnsupportedError{Op: n.OpType, Node: n.Name, Reason: "a Constant has one output"}
			}
			c, err := constantValue(n)
			if err != nil {
				return nil, err
			}
			im.consts[n.Output[0]] = c
			continue
		}
		// A Transpose of a constant matrix (a Linear's weight, as Export
		// writes it for inputs of higher rank) is folded.
		if c := im.consts[firstInput(n)]; n.OpType == "Transpose" && c != nil && len(c.shape) == 2 && len(n.Output) == 1 {
			if p := n.intsAttr("perm"); p == nil || slices.Equal(p, []int64{1, 0}) {
				im.consts[n.Output[0]] = transpose2(c)
				continue
			}
		}
		im.nodes = append(im.nodes, n)
		for _, x := range n.Input {
			if x != "" {
				im.users[x] = append(im.users[x], n)
			}
		}
	}
	return im, nil
}

// firstInput returns n's first input name, or "".
func firstInput(n *node) string {
	if len(n.Input) == 0 {
		return ""
	}
	return n.Input[0]
}

func toInt64(s []int) []int64 {
	out := make([]int64, len(s))
	for i, v := range s {
		out[i] = int64(v)
	}
	return out
}

func dimString(ds []Dim) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		if d.Param != "" {
			parts[i] = d.Param
		} else {
			parts[i] = strconv.FormatInt(d.Value, 10)
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// constantValue decodes a Constant node's value.
func constantValue(n *node) (*constant, error) {
	for _, a := range n.Attribute {
		switch a.Name {
		case "value":
			if a.T == nil {
				break
			}
			c, err := decodeTensor(a.T)
			if err != nil {
				return nil, fmt.Errorf("node %q (Constant): %w", n.Name, err)
			}
			return c, nil
		case "value_float":
			return &constant{vals: []float64{float64(a.F)}}, nil
		case "value_int":
			return &constant{vals: []float64{float64(a.I)}}, nil
		case "value_floats":
			c := &constant{shape: []int{len(a.Floats)}}
			for _, f := range a.Floats {
				c.vals = append(c.vals, float64(f))
			}
			return c, nil
		case "value_ints":
			c := &constant{shape: []int{len(a.Ints)}}
			for _, v := range a.Ints {
				c.vals = append(c.vals, float64(v))
			}
			return c, nil
		}
	}
	return nil, &UnsupportedError{Op: "Constant", Node: n.Name, Reason: "no tensor, float or int value"}
}

// liveUsers returns the nodes not yet mapped that read x.
func (im *importer) liveUsers(x string) []*node {
	var out []*node
	for _, n := range im.users[x] {
		if !n.done {
			out = append(out, n)
		}
	}
	return out
}

// take marks nodes as mapped.
func (im *importer) take(ns ...*node) {
	for _, n := range ns {
		if !n.done {
			n.done = true
			im.used++
		}
	}
}

// chain maps the nodes from tensor x until the graph output or the
// tensor stop (a residual's join input). first, if set, is the node at x
// to start with (x's other readers belong to another branch).
func (im *importer) chain(x string, first []*node, stop string) ([]*layer, error) {
	var out []*layer
	for steps := 0; x != im.output && x != stop; steps++ {
		if steps > len(im.nodes) {
			return nil, errors.New("the graph has a cycle")
		}
		users := first
		if first != nil {
			first = nil
		} else {
			users = im.liveUsers(x)
		}
		var (
			ls  []*layer
			y   string
			err error
		)
		act := false
		if x != im.input && len(users) > 0 {
			ls, y, act = im.activation(x, users)
		}
		if !act && len(users) == 3 {
			ls, y, act = im.attention(x, users)
		}
		switch {
		case act:
		case len(users) == 0:
			return nil, fmt.Errorf("tensor %q is neither read by a node nor the graph output %q", x, im.output)
		case len(users) == 1:
			ls, y, err = im.single(x, users[0])
		default:
			ls, y, err = im.residual(x, users)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, ls...)
		x = y
	}
	return out, nil
}

// constIn returns input i of n as a constant, or nil.
func (im *importer) constIn(n *node, i int) *constant {
	if i >= len(n.Input) {
		return nil
	}
	return im.consts[n.Input[i]]
}

// only returns the one live reader of t, or nil.
func (im *importer) only(t string) *node {
	u := im.liveUsers(t)
	if len(u) != 1 || t == im.output {
		return nil
	}
	return u[0]
}

func unsupported(n *node, format string, a ...any) error {
	return &UnsupportedError{Op: n.OpType, Node: n.Name, Reason: fmt.Sprintf(format, a...)}
}

// single maps node n reading x (x's only reader) and the nodes it fuses
// with; it returns the layers (none for a no-op) and the output tensor.
func (im *importer) single(x string, n *node) ([]*layer, string, error) {
	if len(n.Output) == 0 {
		return nil, "", unsupported(n, "the node has no output")
	}
	for _, extra := range n.Output[1:] {
		if extra != "" && len(im.users[extra]) > 0 {
			return nil, "", unsupported(n, "its output %q is used (only the first output of a node is supported)", extra)
		}
	}
	y := n.Output[0]
	im.take(n)
	if len(n.Input) == 0 || n.Input[0] != x {
		return nil, "", unsupported(n, "the mapped tensor %q must be its first input", x)
	}
	one := func(s nn.LayerSpec) ([]*layer, string, error) { return []*layer{{spec: s}}, y, nil }
	switch n.OpType {
	case "Identity":
		return nil, y, nil
	case "Relu", "Sigmoid", "Tanh", "Softplus":
		return one(nn.LayerSpec{Type: strings.ToLower(n.OpType)})
	case "LeakyRelu":
		s := roundF32(n.floatAttr("alpha", 0.01))
		return one(nn.LayerSpec{Type: "leakyrelu", Slope: &s})
	case "Elu":
		return one(nn.LayerSpec{Type: "elu", Alpha: roundF32(n.floatAttr("alpha", 1))})
	case "Softmax", "LogSoftmax":
		return im.softmax(n, y)
	case "Gemm":
		return im.gemm(n, y)
	case "MatMul":
		return im.matmul(n, y)
	case "Conv":
		return im.conv(n, y)
	case "MaxPool", "AveragePool":
		return im.pool(n, y, nil)
	case "Pad":
		return im.pad(n, y)
	case "GlobalAveragePool":
		if im.rank != 3 {
			return nil, "", unsupported(n, "input must be [batch, C, H, W]")
		}
		return one(nn.LayerSpec{Type: "adaptiveavgpool2d", Size: nn.IntPair{1, 1}})
	case "BatchNormalization":
		return im.batchNorm(n, y)
	case "LayerNormalization":
		return im.layerNorm(n, y)
	case "Flatten":
		if a := n.intAttr("axis", 1); a != 1 {
			return nil, "", unsupported(n, "axis=%d (only 1, keeping the batch dim, is supported)", a)
		}
		im.rank = 1
		return one(nn.LayerSpec{Type: "flatten"})
	case "Reshape":
		return im.reshape(n, y)
	case "Dropout":
		p := n.floatAttr("ratio", 0.5)
		if c := im.constIn(n, 1); c != nil && len(c.vals) == 1 {
			p = c.vals[0]
		} else if len(n.Input) > 1 && n.Input[1] != "" {
			return nil, "", unsupported(n, "the ratio must be a constant")
		}
		if len(n.Input) > 2 && n.Input[2] != "" {
			if c := im.constIn(n, 2); c == nil || len(c.vals) != 1 || c.vals[0] != 0 {
				return nil, "", unsupported(n, "training_mode must be a constant false")
			}
		}
		p = roundF32(p)
		return one(nn.LayerSpec{Type: "dropout", P: &p})
	case "Sub", "Mul", "Div":
		if x == im.input {
			return im.standardize(n, y)
		}
		return nil, "", unsupported(n, "elementwise %s is supported only as an input standardization or inside a GELU or SiLU", n.OpType)
	}
	return nil, "", unsupported(n, "no fathom layer for it (supported: %s)", strings.Join(ImportedOps, ", "))
}

// ImportedOps lists the ONNX ops Import maps to fathom layers (Add, Mul,
// Div, Sub and Erf only in the patterns the package documentation names).
var ImportedOps = []string{"Gemm", "MatMul", "Add", "Conv", "MaxPool", "AveragePool", "GlobalAveragePool", "Pad",
	"BatchNormalization", "LayerNormalization", "Relu", "Sigmoid", "Tanh", "LeakyRelu", "Elu", "Softplus",
	"Softmax", "LogSoftmax", "Flatten", "Reshape", "Dropout", "Identity", "Constant",
	"Sub/Mul/Div (input standardization)", "Erf/Pow/Mul/Add/... (GELU, SiLU written out)",
	"Transpose (of constants)", "MatMul/Reshape/Transpose/Softmax (self-attention in a transformer encoder layer)"}

func (im *importer) softmax(n *node, y string) ([]*layer, string, error) {
	def := int64(-1)
	if im.opset < 13 {
		def = 1
	}
	axis := n.intAttr("axis", def)
	if axis == 0 || axis > int64(im.rank) || axis < -int64(im.rank) {
		return nil, "", unsupported(n, "axis=%d: fathom normalizes over an example dim", axis)
	}
	if im.rank != 1 && im.opset < 13 {
		return nil, "", unsupported(n, "before opset 13 Softmax flattens the input; only [batch, features] inputs are supported")
	}
	d := int(axis)
	return []*layer{{spec: nn.LayerSpec{Type: strings.ToLower(n.OpType), Dim: &d}}}, y, nil
}

func (im *importer) gemm(n *node, y string) ([]*layer, string, error) {
	w := im.constIn(n, 1)
	if w == nil || len(w.shape) != 2 {
		return nil, "", unsupported(n, "B must be a constant matrix (a Linear's weight)")
	}
	if n.intAttr("transA", 0) != 0 || n.floatAttr("alpha", 1) != 1 || n.floatAttr("beta", 1) != 1 {
		return nil, "", unsupported(n, "only transA=0, alpha=1, beta=1 (a Linear) are supported")
	}
	if im.rank != 1 {
		return nil, "", unsupported(n, "Gemm reads [batch, features]; the input here has %d example dims", im.rank)
	}
	wt := w
	if n.intAttr("transB", 0) == 0 {
		wt = transpose2(w)
	}
	out, in := wt.shape[0], wt.shape[1]
	l := &layer{spec: nn.LayerSpec{Type: "linear", In: in, Out: out}}
	l.set("weight", wt)
	if b := im.constIn(n, 2); b != nil {
		if len(b.vals) != out {
			return nil, "", unsupported(n, "bias C has %d values for %d outputs (only a per-output bias is supported)", len(b.vals), out)
		}
		l.set("bias", b, out)
	} else if len(n.Input) > 2 && n.Input[2] != "" {
		return nil, "", unsupported(n, "C must be a constant")
	} else {
		f := false
		l.spec.Bias = &f
	}
	return []*layer{l}, y, nil
}

// matmul maps MatMul by a constant [in, out] and an optional following
// Add of a constant [out] to a Linear.
func (im *importer) matmul(n *node, y string) ([]*layer, string, error) {
	w := im.constIn(n, 1)
	if w == nil || len(w.shape) != 2 {
		return nil, "", unsupported(n, "the second input must be a constant matrix (a Linear's weight)")
	}
	wt := transpose2(w)
	out, in := wt.shape[0], wt.shape[1]
	l := &layer{spec: nn.LayerSpec{Type: "linear", In: in, Out: out}}
	l.set("weight", wt)
	if add := im.only(y); add != nil && add.OpType == "Add" && len(add.Input) == 2 {
		bi := 1
		if add.Input[1] == y {
			bi = 0
		}
		if b := im.constIn(add, bi); b != nil && len(b.vals) == out && (len(b.shape) == 1 || (len(b.shape) == 2 && b.shape[0] == 1)) {
			im.take(add)
			l.set("bias", b, out)
			return []*layer{l}, add.Output[0], nil
		}
	}
	f := false
	l.spec.Bias = &f
	return []*layer{l}, y, nil
}

func transpose2(c *constant) *constant {
	r, k := c.shape[0], c.shape[1]
	t := &constant{shape: []int{k, r}, vals: make([]float64, len(c.vals))}
	for i := range r {
		for j := range k {
			t.vals[j*r+i] = c.vals[i*k+j]
		}
	}
	return t
}

// pads2 reads a 2-D pads attribute [top, left, bottom, right] and requires
// equal padding on both sides.
func pads2(n *node, pads []int64) (nn.IntPair, error) {
	if pads == nil {
		return nn.IntPair{}, nil
	}
	if len(pads) != 4 {
		return nn.IntPair{}, unsupported(n, "pads %v: want 4 values", pads)
	}
	if pads[0] != pads[2] || pads[1] != pads[3] {
		return nn.IntPair{}, unsupported(n, "pads %v: only equal padding on both sides is supported", pads)
	}
	return nn.IntPair{int(pads[0]), int(pads[1])}, nil
}

// pair2 reads a 2-value attribute, def when absent.
func pair2(n *node, name string, def int) (nn.IntPair, error) {
	v := n.intsAttr(name)
	if v == nil {
		return nn.IntPair{def, def}, nil
	}
	if len(v) != 2 || v[0] <= 0 || v[1] <= 0 || v[0] > math.MaxInt32 || v[1] > math.MaxInt32 {
		return nn.IntPair{}, unsupported(n, "%s=%v: want two positive values (2-D)", name, v)
	}
	return nn.IntPair{int(v[0]), int(v[1])}, nil
}

func checkAutoPad(n *node) error {
	switch ap := n.stringAttr("auto_pad", "NOTSET"); ap {
	case "NOTSET", "", "VALID":
		return nil
	default:
		return unsupported(n, "auto_pad=%s (only explicit pads are supported)", ap)
	}
}

func (im *importer) conv(n *node, y string) ([]*layer, string, error) {
	w := im.constIn(n, 1)
	if w == nil || len(w.shape) != 4 {
		return nil, "", unsupported(n, "W must be a constant [out, in/groups, kh, kw] (a 2-D convolution)")
	}
	if im.rank != 3 {
		return nil, "", unsupported(n, "input must be [batch, C, H, W]")
	}
	if err := checkAutoPad(n); err != nil {
		return nil, "", err
	}
	s := nn.LayerSpec{Type: "conv2d", Out: w.shape[0], Kernel: nn.IntPair{w.shape[2], w.shape[3]}}
	var err error
	if k := n.intsAttr("kernel_shape"); k != nil && (len(k) != 2 || int(k[0]) != w.shape[2] || int(k[1]) != w.shape[3]) {
		return nil, "", unsupported(n, "kernel_shape %v does not match W %v", k, w.shape)
	}
	if s.Stride, err = pair2(n, "strides", 1); err != nil {
		return nil, "", err
	}
	if s.Dilation, err = pair2(n, "dilations", 1); err != nil {
		return nil, "", err
	}
	if s.Padding, err = pads2(n, n.intsAttr("pads")); err != nil {
		return nil, "", err
	}
	g := n.intAttr("group", 1)
	if g < 1 || g > int64(w.shape[0]) {
		return nil, "", unsupported(n, "group=%d", g)
	}
	s.Groups = int(g)
	s.In = w.shape[1] * s.Groups
	l := &layer{spec: s}
	l.set("weight", w)
	if b := im.constIn(n, 2); b != nil {
		if len(b.vals) != w.shape[0] {
			return nil, "", unsupported(n, "bias has %d values for %d channels", len(b.vals), w.shape[0])
		}
		l.set("bias", b, w.shape[0])
	} else if len(n.Input) > 2 && n.Input[2] != "" {
		return nil, "", unsupported(n, "the bias must be a constant")
	} else {
		f := false
		l.spec.Bias = &f
	}
	return []*layer{l}, y, nil
}

// pool maps MaxPool and AveragePool; pad is the padding of a preceding
// zero Pad node (PyTorch's export of count_include_pad average pooling).
func (im *importer) pool(n *node, y string, pad *nn.IntPair) ([]*layer, string, error) {
	if im.rank != 3 {
		return nil, "", unsupported(n, "input must be [batch, C, H, W]")
	}
	if err := checkAutoPad(n); err != nil {
		return nil, "", err
	}
	if n.intAttr("storage_order", 0) != 0 {
		return nil, "", unsupported(n, "storage_order=1")
	}
	s := nn.LayerSpec{Type: "maxpool2d", CeilMode: n.intAttr("ceil_mode", 0) != 0}
	var err error
	if s.Kernel, err = pair2(n, "kernel_shape", 0); err != nil || s.Kernel[0] == 0 {
		return nil, "", unsupported(n, "kernel_shape must give two positive sizes")
	}
	if s.Stride, err = pair2(n, "strides", 1); err != nil {
		return nil, "", err
	}
	if s.Padding, err = pads2(n, n.intsAttr("pads")); err != nil {
		return nil, "", err
	}
	if n.OpType == "MaxPool" {
		if s.Dilation, err = pair2(n, "dilations", 1); err != nil {
			return nil, "", err
		}
		if pad != nil {
			return nil, "", unsupported(n, "a zero Pad before MaxPool differs from MaxPool's own padding")
		}
		return []*layer{{spec: s}}, y, nil
	}
	s.Type = "avgpool2d"
	include := n.intAttr("count_include_pad", 0) != 0
	if pad != nil {
		if !s.Padding.IsZero() {
			return nil, "", unsupported(n, "padding both in a Pad and in the pooling")
		}
		s.Padding, include = *pad, true
	}
	if s.CeilMode && !s.Padding.IsZero() {
		return nil, "", unsupported(n, "ceil_mode with padding: PyTorch and ONNX disagree on the divisor")
	}
	s.CountIncludePad = &include
	return []*layer{{spec: s}}, y, nil
}

// pad maps a constant zero Pad: nothing when it pads nothing, else the
// padding of the AveragePool that must follow it.
func (im *importer) pad(n *node, y string) ([]*layer, string, error) {
	if m := n.stringAttr("mode", "constant"); m != "constant" {
		return nil, "", unsupported(n, "mode=%s (only constant zero padding before pooling is supported)", m)
	}
	pads := n.intsAttr("pads")
	if c := im.constIn(n, 1); c != nil {
		pads = nil
		for _, v := range c.vals {
			pads = append(pads, int64(v))
		}
	} else if len(n.Input) > 1 && n.Input[1] != "" {
		return nil, "", unsupported(n, "the pads must be a constant")
	}
	if c := im.constIn(n, 2); c != nil && (len(c.vals) != 1 || c.vals[0] != 0) {
		return nil, "", unsupported(n, "only zero padding is supported")
	} else if c == nil && len(n.Input) > 2 && n.Input[2] != "" {
		return nil, "", unsupported(n, "the pad value must be a constant")
	}
	if len(n.Input) > 3 && n.Input[3] != "" {
		return nil, "", unsupported(n, "the axes input is not supported")
	}
	zero := true
	for _, p := range pads {
		zero = zero && p == 0
	}
	if zero {
		return nil, y, nil
	}
	next := im.only(y)
	if len(pads) != 8 || pads[0] != 0 || pads[1] != 0 || pads[4] != 0 || pads[5] != 0 || next == nil || next.OpType != "AveragePool" {
		return nil, "", unsupported(n, "pads %v: only spatial zero padding directly before an AveragePool is supported", pads)
	}
	p, err := pads2(n, []int64{pads[2], pads[3], pads[6], pads[7]})
	if err != nil {
		return nil, "", err
	}
	im.take(next)
	if len(next.Output) == 0 {
		return nil, "", unsupported(next, "the node has no output")
	}
	return im.pool(next, next.Output[0], &p)
}

func (im *importer) batchNorm(n *node, y string) ([]*layer, string, error) {
	if len(n.Input) != 5 {
		return nil, "", unsupported(n, "want 5 inputs (X, scale, B, mean, var)")
	}
	cs := make([]*constant, 4)
	for i := range cs {
		if cs[i] = im.constIn(n, i+1); cs[i] == nil {
			return nil, "", unsupported(n, "input %q must be a constant", n.Input[i+1])
		}
	}
	c := len(cs[0].vals)
	for _, x := range cs {
		if len(x.vals) != c {
			return nil, "", unsupported(n, "scale, B, mean and var must have one value per channel")
		}
	}
	if n.intAttr("training_mode", 0) != 0 || n.intAttr("spatial", 1) != 1 {
		return nil, "", unsupported(n, "only inference-mode, per-channel batch normalization is supported")
	}
	typ := "batchnorm1d"
	switch im.rank {
	case 1, 2:
	case 3:
		typ = "batchnorm2d"
	default:
		return nil, "", unsupported(n, "input with %d example dims", im.rank)
	}
	l := &layer{spec: nn.LayerSpec{Type: typ, In: c, Eps: n.floatAttr("epsilon", 1e-5), Momentum: 1 - n.floatAttr("momentum", 0.9)}}
	// float32 attributes: round to the float32 value's shortest decimal
	l.spec.Eps = roundF32(l.spec.Eps)
	l.spec.Momentum = roundF32(l.spec.Momentum)
	if l.spec.Momentum <= 0 || l.spec.Momentum > 1 {
		l.spec.Momentum = 0.1
	}
	for i, name := range []string{"weight", "bias", "running_mean", "running_var"} {
		l.set(name, cs[i], c)
	}
	return []*layer{l}, y, nil
}

// roundF32 returns the shortest decimal of float32(v): attributes are
// float32, so 1e-5 arrives as 9.99999974738e-06.
func roundF32(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(float64(float32(v)), 'g', -1, 32), 64)
	return r
}

func (im *importer) layerNorm(n *node, y string) ([]*layer, string, error) {
	axis := n.intAttr("axis", -1)
	if axis != -1 && axis != int64(im.rank) {
		return nil, "", unsupported(n, "axis=%d: fathom's LayerNorm normalizes the last dim only", axis)
	}
	scale := im.constIn(n, 1)
	if scale == nil {
		return nil, "", unsupported(n, "the scale must be a constant")
	}
	d := len(scale.vals)
	bias := &constant{shape: []int{d}, vals: make([]float64, d)}
	if b := im.constIn(n, 2); b != nil {
		bias = b
	} else if len(n.Input) > 2 && n.Input[2] != "" {
		return nil, "", unsupported(n, "the bias must be a constant")
	}
	if len(bias.vals) != d {
		return nil, "", unsupported(n, "scale and bias differ in size")
	}
	for _, o := range n.Output[1:] {
		if o != "" && len(im.users[o]) > 0 {
			return nil, "", unsupported(n, "the mean and inverse standard deviation outputs are not supported")
		}
	}
	l := &layer{spec: nn.LayerSpec{Type: "layernorm", In: d, Eps: roundF32(n.floatAttr("epsilon", 1e-5))}}
	l.set("weight", scale, d)
	l.set("bias", bias, d)
	return []*layer{l}, y, nil
}

// reshape maps a Reshape to [batch, features] (x.view(x.size(0), -1)) to
// a flatten.
func (im *importer) reshape(n *node, y string) ([]*layer, string, error) {
	c := im.constIn(n, 1)
	if c == nil {
		return nil, "", unsupported(n, "the shape must be a constant (export with constant folding)")
	}
	if len(c.vals) == 2 && (c.vals[1] == -1 || c.vals[0] == -1 || c.vals[0] == 0) {
		im.rank = 1
		return []*layer{{spec: nn.LayerSpec{Type: "flatten"}}}, y, nil
	}
	return nil, "", unsupported(n, "shape %v: only a reshape to [batch, features] is supported", c.vals)
}

// standardize maps Sub(x, mean) and Mul(·, 1/std) or Div(·, std) at the
// graph input, with constants of the example's shape, to the model's
// input standardization.
func (im *importer) standardize(n *node, y string) ([]*layer, string, error) {
	f := numelInts(im.inputShape)
	c := im.constIn(n, 1)
	if c == nil || len(c.vals) != f {
		return nil, "", unsupported(n, "at the input, %s by a constant of %d values (one per input value) is an input standardization; anything else is not supported", n.OpType, f)
	}
	im.mean, im.std = make([]float64, f), make([]float64, f)
	for j := range f {
		im.std[j] = 1
	}
	scale := func(m *node, c *constant) {
		for j, v := range c.vals {
			if m.OpType == "Mul" {
				if v != 0 {
					im.std[j] = 1 / v
				}
			} else {
				im.std[j] = v
			}
		}
	}
	if n.OpType == "Sub" {
		copy(im.mean, c.vals)
		if m := im.only(y); m != nil && (m.OpType == "Mul" || m.OpType == "Div") && len(m.Input) == 2 && m.Input[0] == y {
			if c2 := im.constIn(m, 1); c2 != nil && len(c2.vals) == f {
				im.take(m)
				scale(m, c2)
				return nil, m.Output[0], nil
			}
		}
		return nil, y, nil
	}
	scale(n, c)
	return nil, y, nil
}

// elementwiseOps are the ops an activation written out may use, with
// their float64 meaning.
var elementwiseOps = map[string]func(a []float64) float64{
	"Add":     func(a []float64) float64 { return a[0] + a[1] },
	"Sub":     func(a []float64) float64 { return a[0] - a[1] },
	"Mul":     func(a []float64) float64 { return a[0] * a[1] },
	"Div":     func(a []float64) float64 { return a[0] / a[1] },
	"Pow":     func(a []float64) float64 { return math.Pow(a[0], a[1]) },
	"Tanh":    func(a []float64) float64 { return math.Tanh(a[0]) },
	"Erf":     func(a []float64) float64 { return math.Erf(a[0]) },
	"Sigmoid": func(a []float64) float64 { return 1 / (1 + math.Exp(-a[0])) },
	"Exp":     func(a []float64) float64 { return math.Exp(a[0]) },
	"Log":     func(a []float64) float64 { return math.Log(a[0]) },
	"Sqrt":    func(a []float64) float64 { return math.Sqrt(a[0]) },
	"Neg":     func(a []float64) float64 { return -a[0] },
	"Softplus": func(a []float64) float64 {
		return math.Log1p(math.Exp(a[0]))
	},
}

// activations are the candidates an elementwise region is compared with;
// fit, if set, derives a parameter from the region's value at 0 and
// returns the spec and function with it.
var activations = []struct {
	spec nn.LayerSpec
	f    func(x float64) float64
	fit  func(f0 float64) (nn.LayerSpec, func(x float64) float64)
}{
	{nn.LayerSpec{Type: "gelu"}, func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }, nil},
	{nn.LayerSpec{Type: "gelu", Approximate: "tanh"}, func(x float64) float64 {
		return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
	}, nil},
	{nn.LayerSpec{Type: "silu"}, func(x float64) float64 { return x / (1 + math.Exp(-x)) }, nil},
	// softplus with β: log(1+e^(βx))/β, whose value at 0 is ln 2/β
	{fit: func(f0 float64) (nn.LayerSpec, func(x float64) float64) {
		beta := float64(float32(math.Ln2 / f0))
		return nn.LayerSpec{Type: "softplus", Beta: beta}, func(x float64) float64 { return math.Log1p(math.Exp(beta*x)) / beta }
	}},
}

// activation finds the smallest run of elementwise nodes (in graph order)
// that starts at x, reads nothing but x and scalar constants, takes all
// of x's readers and ends in one tensor; if that function of x equals a
// fathom activation at sample points, the run maps to it.
func (im *importer) activation(x string, users []*node) ([]*layer, string, bool) {
	start := slices.MinFunc(users, func(a, b *node) int { return a.index - b.index }).index
	in := map[string]bool{x: true}
	var region []*node
	for _, n := range im.nodes[start:] {
		if len(region) >= 32 {
			break
		}
		if n.done || elementwiseOps[n.OpType] == nil || len(n.Output) != 1 {
			continue
		}
		reads, ok := false, true
		for _, t := range n.Input {
			switch c := im.consts[t]; {
			case in[t]:
				reads = true
			case c != nil && len(c.vals) == 1:
			default:
				ok = false
			}
		}
		if !reads || !ok {
			continue
		}
		region = append(region, n)
		in[n.Output[0]] = true
		if !im.closed(x, region, users) {
			continue
		}
		y := n.Output[0]
		for _, a := range activations {
			spec, f := a.spec, a.f
			if a.fit != nil {
				f0, ok := im.eval(x, region, 0)
				if !ok || !(f0 > 0) {
					continue
				}
				spec, f = a.fit(f0)
			}
			if im.matches(x, region, f) {
				im.take(region...)
				return []*layer{{spec: spec}}, y, true
			}
		}
		// Not yet an activation: the run may go on (x·β, Softplus, ÷β).
	}
	return nil, "", false
}

// closed reports whether region takes all of x's readers and every
// tensor it makes but the last is read only inside it.
func (im *importer) closed(x string, region []*node, users []*node) bool {
	inside := map[*node]bool{}
	for _, n := range region {
		inside[n] = true
	}
	for _, u := range users {
		if !inside[u] {
			return false
		}
	}
	for _, n := range region[:len(region)-1] {
		t := n.Output[0]
		if t == im.output {
			return false
		}
		for _, u := range im.users[t] {
			if !inside[u] {
				return false
			}
		}
	}
	return true
}

// eval computes the region's output for x = v.
func (im *importer) eval(x string, region []*node, v float64) (float64, bool) {
	vals := map[string]float64{x: v}
	for _, n := range region {
		args := make([]float64, len(n.Input))
		for i, t := range n.Input {
			if _, mine := vals[t]; !mine {
				args[i] = im.consts[t].vals[0]
				continue
			}
			args[i] = vals[t]
		}
		binary := n.OpType == "Add" || n.OpType == "Sub" || n.OpType == "Mul" || n.OpType == "Div" || n.OpType == "Pow"
		if len(args) == 0 || binary != (len(args) == 2) {
			return 0, false
		}
		vals[n.Output[0]] = elementwiseOps[n.OpType](args)
	}
	return vals[region[len(region)-1].Output[0]], true
}

// matches evaluates the region at sample points and compares it with f.
func (im *importer) matches(x string, region []*node, f func(float64) float64) bool {
	for k := -40; k <= 40; k++ {
		v := float64(k) * 0.15
		got, ok := im.eval(x, region, v)
		if !ok {
			return false
		}
		want := f(v)
		// float32 constants (√2, 0.044715, ...) limit the agreement.
		if math.IsNaN(got) || math.Abs(got-want) > 1e-5*(1+math.Abs(want)) {
			return false
		}
	}
	return true
}

// residual maps a block whose branches from x are joined by an Add: the
// join is the first node every reader of x leads to; the readers split
// into the two branches by the Add input they lead to (the Add itself
// reading x is the identity shortcut).
func (im *importer) residual(x string, users []*node) ([]*layer, string, error) {
	reach := func(start *node) map[*node]bool {
		seen := map[*node]bool{start: true}
		stack := []*node{start}
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, o := range n.Output {
				for _, u := range im.users[o] {
					if !seen[u] && !u.done {
						seen[u] = true
						stack = append(stack, u)
					}
				}
			}
		}
		return seen
	}
	reaches := make([]map[*node]bool, len(users))
	for i, u := range users {
		reaches[i] = reach(u)
	}
	var join *node
	for n := range reaches[0] {
		all := true
		for _, r := range reaches[1:] {
			all = all && r[n]
		}
		if all && (join == nil || n.index < join.index) {
			join = n
		}
	}
	if join == nil || join.OpType != "Add" || len(join.Input) != 2 || im.consts[join.Input[0]] != nil || im.consts[join.Input[1]] != nil || len(join.Output) != 1 {
		return nil, "", unsupported(users[0], "tensor %q is read by %d nodes whose branches are not joined by an Add of the two (a residual block)", x, len(users))
	}
	// Group the readers by the join input they lead to.
	var groups [2][]*node
	identity := -1
	for i, u := range users {
		if u == join {
			identity = slices.Index(join.Input, x)
			continue
		}
		k := -1
		for j, in := range join.Input {
			if in != x && producedIn(in, reaches[i]) {
				if k >= 0 {
					return nil, "", unsupported(u, "a node after %q feeds both inputs of the Add %q", x, join.Name)
				}
				k = j
			}
		}
		if k < 0 {
			return nil, "", unsupported(join, "cannot follow the branch from %q to this Add", x)
		}
		groups[k] = append(groups[k], u)
	}
	rank := im.rank
	branch := func(k int) ([]*layer, int, error) {
		im.rank = rank
		if k == identity {
			if len(groups[k]) > 0 {
				return nil, 0, unsupported(join, "both inputs of the Add come from %q", x)
			}
			return nil, rank, nil
		}
		if len(groups[k]) == 0 {
			return nil, 0, unsupported(join, "cannot follow the branch from %q to this Add", x)
		}
		ls, err := im.chain(x, groups[k], join.Input[k])
		return ls, im.rank, err
	}
	a, rankA, err := branch(0)
	if err != nil {
		return nil, "", err
	}
	b, rankB, err := branch(1)
	if err != nil {
		return nil, "", err
	}
	// b is to be the shortcut: the empty branch, else the one projection-
	// like layer; between two such (Linear + Linear: the sum is the same
	// either way) the one feeding the Add's second input, as Export writes.
	isProj := func(ls []*layer) bool { return len(ls) == 1 && projectionLike(ls[0]) }
	if len(a) == 0 || (isProj(a) && !isProj(b)) {
		a, b, rankA, rankB = b, a, rankB, rankA
	}
	if rankA != rankB {
		return nil, "", unsupported(join, "the branches joined here end in different ranks")
	}
	im.rank = rankA
	im.take(join)
	if len(a) == 0 {
		return nil, "", unsupported(join, "a residual block needs a body")
	}
	r := &layer{spec: nn.LayerSpec{Type: "residual"}, body: a}
	switch len(b) {
	case 0:
	case 1:
		p := b[0]
		if !projectionLike(p) {
			return nil, "", unsupported(join, "the shortcut is a %s; fathom's residual projection is a Linear or a 1×1 convolution with bias", p.spec.Type)
		}
		r.proj = p
	default:
		return nil, "", unsupported(join, "the shortcut branch has %d layers; fathom's residual projection is one Linear or 1×1 convolution", len(b))
	}
	return []*layer{r}, join.Output[0], nil
}

// producedIn reports whether tensor t is an output of a node in set.
func producedIn(t string, set map[*node]bool) bool {
	for n := range set {
		if slices.Contains(n.Output, t) {
			return true
		}
	}
	return false
}

// projectionLike reports whether l is what nn builds as a residual
// projection: a Linear with bias, or a 1×1 convolution with bias, no
// padding, dilation 1 and one group (its stride is checked when the
// network is built).
func projectionLike(l *layer) bool {
	s := l.spec
	hasBias := s.Bias == nil || *s.Bias
	switch s.Type {
	case "linear":
		return hasBias
	case "conv2d":
		return hasBias && s.Kernel == nn.IntPair{1, 1} && s.Padding.IsZero() && s.Dilation == nn.IntPair{1, 1} && s.Groups == 1
	}
	return false
}
