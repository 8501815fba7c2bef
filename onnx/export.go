package onnx

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fathom-ml/fathom/internal/atomicfile"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// Opsets this package writes and reads (the default "ai.onnx" domain).
const (
	// DefaultOpset is the opset Export writes unless told otherwise: 17,
	// the first with LayerNormalization and the newest python3-onnx 1.12's
	// checker knows.
	DefaultOpset = 17
	// MinExportOpset is the oldest opset Export writes: 13 gives Softmax
	// its per-axis meaning and Dropout its ratio input.
	MinExportOpset = 13
	// MaxExportOpset is the newest opset Export writes.
	MaxExportOpset = 21
	// MinImportOpset and MaxImportOpset bound the opsets a file may import
	// (the attributes of every supported op are read as these versions
	// define them).
	MinImportOpset = 7
	MaxImportOpset = 21
	// IRVersion is the ONNX IR version written: 8 (ONNX 1.10 to 1.12).
	IRVersion = 8
)

// MetadataKey is the metadata_props key under which Export keeps the
// model's architecture JSON (modelfile.Architecture: spec, task, classes,
// columns, label, imputation, standardization, training facts), so that
// Import restores everything around the network.
const MetadataKey = modelfile.ArchitectureKey

// Names of the graph's input and output.
const (
	InputName  = "input"
	OutputName = "output"
)

// ExportOptions configures Export.
type ExportOptions struct {
	// Opset is the default-domain opset version (0: DefaultOpset).
	Opset int
}

// Export converts a fathom model to an ONNX model. The graph takes the
// raw features [batch, input...] (the model's standardization is its
// first nodes) and returns the network's output [batch, ...]: logits for
// classification (Predict's probabilities are their softmax), the value
// for regression. Layers that ONNX cannot express in the chosen opset
// give an error naming the layer.
func Export(m *modelfile.Model, o ExportOptions) (*ModelProto, error) {
	opset := o.Opset
	if opset == 0 {
		opset = DefaultOpset
	}
	if opset < MinExportOpset || opset > MaxExportOpset {
		return nil, fmt.Errorf("onnx export: opset %d is not supported (%d to %d)", opset, MinExportOpset, MaxExportOpset)
	}
	arch, err := m.Architecture()
	if err != nil {
		return nil, err
	}
	archJSON, err := json.Marshal(arch)
	if err != nil {
		return nil, err
	}
	m.Net.Eval()
	e := &exporter{opset: opset, g: &GraphProto{Name: "fathom"}}
	x := InputName
	shape := slices.Clone(m.Spec.Input)
	if s := m.Scaler; s != nil {
		if len(s.Mean) != numelInts(shape) {
			return nil, fmt.Errorf("onnx export: standardization covers %d values, the input %v has %d", len(s.Mean), shape, numelInts(shape))
		}
		mean := make([]float32, len(s.Mean))
		inv := make([]float32, len(s.Std))
		for j := range s.Mean {
			mean[j] = float32(s.Mean[j])
			inv[j] = 1
			if s.Std[j] > 0 {
				inv[j] = float32(1 / s.Std[j])
			}
		}
		x = e.node("Sub", "standardize/Sub", []string{x, e.init("standardize.mean", mean, shape...)})
		x = e.node("Mul", "standardize/Mul", []string{x, e.init("standardize.inv_std", inv, shape...)})
	}
	// Shapes are followed by running each layer on one zero example.
	probe := tensor.Zeros(tensor.Float32, append([]int{1}, shape...)...)
	var out string
	out, probe, err = e.layers(m.Net.Layers(), "", x, probe)
	if err != nil {
		return nil, fmt.Errorf("onnx export: %w", err)
	}
	// The output gets its fixed name through a final Identity.
	e.g.Node = append(e.g.Node, &NodeProto{OpType: "Identity", Name: "output/Identity", Input: []string{out}, Output: []string{OutputName}})
	e.g.Input = []*ValueInfo{valueInfo(InputName, shape)}
	e.g.Output = []*ValueInfo{valueInfo(OutputName, probe.Shape()[1:])}
	return &ModelProto{
		IRVersion:       IRVersion,
		OpsetImport:     []OperatorSetID{{Version: int64(opset)}},
		ProducerName:    "fathom",
		ProducerVersion: "1",
		DocString:       fmt.Sprintf("fathom %s model: input %v, %d layers", m.Task, m.Spec.Input, len(m.Spec.Layers)),
		Graph:           e.g,
		MetadataProps:   []StringPair{{Key: MetadataKey, Value: string(archJSON)}},
	}, nil
}

// WriteFile exports m and writes the ONNX file at path atomically.
func WriteFile(path string, m *modelfile.Model, o ExportOptions) error {
	mp, err := Export(m, o)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return atomicfile.WriteBytes(path, mp.Marshal())
}

// valueInfo is a float tensor [batch, shape...] with a symbolic batch dim.
func valueInfo(name string, shape []int) *ValueInfo {
	vi := &ValueInfo{Name: name, ElemType: TypeFloat, HasShape: true, Shape: []Dim{{Param: "batch"}}}
	for _, d := range shape {
		vi.Shape = append(vi.Shape, Dim{Value: int64(d)})
	}
	return vi
}

func numelInts(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// exporter builds the graph.
type exporter struct {
	opset int
	g     *GraphProto
}

// node appends a node named name (its output has the same name) and
// returns its output.
func (e *exporter) node(op, name string, inputs []string, attrs ...*AttributeProto) string {
	e.g.Node = append(e.g.Node, &NodeProto{OpType: op, Name: name, Input: inputs, Output: []string{name}, Attribute: attrs})
	return name
}

// init adds a float initializer and returns its name.
func (e *exporter) init(name string, vals []float32, shape ...int) string {
	e.g.Initializer = append(e.g.Initializer, floatTensor(name, vals, shape...))
	return name
}

// affine returns the names of a normalization's scale and bias: its
// parameters, or ones and zeros of the given shape when it has none.
func (e *exporter) affine(name string, weight, bias *tensor.Tensor, shape ...int) (string, string) {
	sn, bn := name+".weight", name+".bias"
	if weight != nil {
		return e.param(sn, weight), e.param(bn, bias)
	}
	d := numelInts(shape)
	ones := make([]float32, d)
	for i := range ones {
		ones[i] = 1
	}
	return e.init(sn, ones, shape...), e.init(bn, make([]float32, d), shape...)
}

// param adds a model tensor as an initializer named by its state-dict name.
func (e *exporter) param(name string, t *tensor.Tensor) string {
	return e.init(name, t.Contiguous().Float32s(), t.Shape()...)
}

// scalar adds a float scalar initializer.
func (e *exporter) scalar(name string, v float64) string {
	return e.init(name, []float32{float32(v)})
}

// layers emits a sequence of layers whose state-dict names start with
// prefix, from tensor x; probe is a zero example of x's shape.
func (e *exporter) layers(ls []nn.Layer, prefix, x string, probe *tensor.Tensor) (string, *tensor.Tensor, error) {
	for i, l := range ls {
		name := prefix + strconv.Itoa(i)
		y, err := e.layer(l, name, x, probe)
		if err != nil {
			return "", nil, fmt.Errorf("layer %s (%T): %w", name, l, err)
		}
		x, probe = y, l.Forward(probe)
	}
	return x, probe, nil
}

// layer emits one layer named name (its state-dict prefix) applied to x.
func (e *exporter) layer(l nn.Layer, name, x string, probe *tensor.Tensor) (string, error) {
	rank := len(probe.Shape()) // with the batch dim
	n := func(op string, inputs []string, attrs ...*AttributeProto) string {
		return e.node(op, name+"/"+op, inputs, attrs...)
	}
	switch l := l.(type) {
	case *nn.Linear:
		w := e.param(name+".weight", l.Weight)
		if rank == 2 {
			in := []string{x, w}
			if l.Bias != nil {
				in = append(in, e.param(name+".bias", l.Bias))
			}
			return n("Gemm", in, attrInt("transB", 1)), nil
		}
		// [..., In] inputs: MatMul by Wᵀ, then the bias.
		wt := e.node("Transpose", name+"/Transpose", []string{w}, attrInts("perm", 1, 0))
		y := n("MatMul", []string{x, wt})
		if l.Bias != nil {
			y = n("Add", []string{y, e.param(name+".bias", l.Bias)})
		}
		return y, nil
	case *nn.Conv2d:
		in := []string{x, e.param(name+".weight", l.Weight)}
		if l.Bias != nil {
			in = append(in, e.param(name+".bias", l.Bias))
		}
		return n("Conv", in,
			attrInts("kernel_shape", l.Kernel[0], l.Kernel[1]),
			attrInts("strides", l.Stride[0], l.Stride[1]),
			attrInts("pads", l.Padding[0], l.Padding[1], l.Padding[0], l.Padding[1]),
			attrInts("dilations", l.Dilation[0], l.Dilation[1]),
			attrInt("group", int64(l.Groups))), nil
	case *nn.MaxPool2d:
		return n("MaxPool", []string{x},
			attrInts("kernel_shape", l.Kernel[0], l.Kernel[1]),
			attrInts("strides", l.Stride[0], l.Stride[1]),
			attrInts("pads", l.Padding[0], l.Padding[1], l.Padding[0], l.Padding[1]),
			attrInts("dilations", l.Dilation[0], l.Dilation[1]),
			attrInt("ceil_mode", boolInt(l.CeilMode))), nil
	case *nn.AvgPool2d:
		if l.CeilMode {
			// PyTorch and ONNX disagree on the divisor of a window that
			// ends in the ceil-mode overhang; refuse rather than differ.
			return "", fmt.Errorf("average pooling with ceil_mode has no exact ONNX equivalent")
		}
		return n("AveragePool", []string{x},
			attrInts("kernel_shape", l.Kernel[0], l.Kernel[1]),
			attrInts("strides", l.Stride[0], l.Stride[1]),
			attrInts("pads", l.Padding[0], l.Padding[1], l.Padding[0], l.Padding[1]),
			attrInt("count_include_pad", boolInt(l.CountIncludePad))), nil
	case *nn.AdaptiveAvgPool2d:
		s := probe.Shape()
		h, w := s[2], s[3]
		if l.Size == [2]int{1, 1} {
			return n("GlobalAveragePool", []string{x}), nil
		}
		if h%l.Size[0] != 0 || w%l.Size[1] != 0 {
			return "", fmt.Errorf("adaptive pooling of %d×%d to %v has uneven windows, which ONNX's AveragePool cannot express", h, w, l.Size)
		}
		kh, kw := h/l.Size[0], w/l.Size[1]
		return n("AveragePool", []string{x}, attrInts("kernel_shape", kh, kw), attrInts("strides", kh, kw)), nil
	case *nn.BatchNorm:
		if l.RunningMean == nil {
			return "", fmt.Errorf("batch norm without running statistics normalizes by each batch's own, which ONNX's BatchNormalization (inference) cannot express")
		}
		scale, bias := e.affine(name, l.Weight, l.Bias, l.Features)
		return n("BatchNormalization", []string{x, scale, bias, e.param(name+".running_mean", l.RunningMean), e.param(name+".running_var", l.RunningVar)},
			attrFloat("epsilon", float32(l.Eps)), attrFloat("momentum", float32(1-l.Momentum))), nil
	case *nn.LayerNorm:
		if e.opset < 17 {
			return "", fmt.Errorf("LayerNormalization needs opset 17 or later (asked for %d)", e.opset)
		}
		scale, bias := e.affine(name, l.Weight, l.Bias, l.Shape...)
		return n("LayerNormalization", []string{x, scale, bias}, attrInt("axis", int64(-len(l.Shape))), attrFloat("epsilon", float32(l.Eps))), nil
	case *nn.Flatten:
		if l.StartDim != 1 || (l.EndDim != -1 && l.EndDim != rank-1) {
			return "", fmt.Errorf("flatten of dims %d..%d: only flattening all but the batch dim is supported", l.StartDim, l.EndDim)
		}
		return n("Flatten", []string{x}, attrInt("axis", 1)), nil
	case *nn.Dropout:
		// Inference mode (no training_mode input): the identity, with the
		// ratio kept so that an import can fine-tune with it.
		return n("Dropout", []string{x, e.scalar(name+".ratio", l.P)}), nil
	case *nn.Identity:
		return n("Identity", []string{x}), nil
	case *nn.Sequential:
		y, _, err := e.layers(l.Layers(), name+".", x, probe)
		return y, err
	case *nn.TransformerEncoderLayer:
		return e.encoder(l, name, x, probe)
	case *nn.Residual:
		body, _, err := e.layers(bodyLayers(l.Body), name+".body.", x, probe)
		if err != nil {
			return "", err
		}
		skip := x
		if l.Proj != nil {
			if skip, err = e.layer(l.Proj, name+".proj", x, probe); err != nil {
				return "", fmt.Errorf("projection: %w", err)
			}
		}
		return n("Add", []string{body, skip}), nil
	}
	if y, ok := e.activation(l, name, x); ok {
		return y, nil
	}
	return "", fmt.Errorf("no ONNX export for this layer type (supported: %s)", strings.Join(ExportedLayers, ", "))
}

// activation emits l applied to x when l is an activation (or softmax)
// layer, and reports whether it was one.
func (e *exporter) activation(l nn.Layer, name, x string) (string, bool) {
	n := func(op string, inputs []string, attrs ...*AttributeProto) string {
		return e.node(op, name+"/"+op, inputs, attrs...)
	}
	switch l := l.(type) {
	case *nn.ReLU:
		return n("Relu", []string{x}), true
	case *nn.Sigmoid:
		return n("Sigmoid", []string{x}), true
	case *nn.Tanh:
		return n("Tanh", []string{x}), true
	case *nn.LeakyReLU:
		return n("LeakyRelu", []string{x}, attrFloat("alpha", float32(l.Slope))), true
	case *nn.ELU:
		return n("Elu", []string{x}, attrFloat("alpha", float32(l.Alpha))), true
	case *nn.Softplus:
		// ONNX's Softplus has no β and no threshold; above the threshold
		// PyTorch returns x, which log(1+eˣ) equals in float32 for the
		// default threshold 20.
		if l.Beta == 1 {
			return n("Softplus", []string{x}), true
		}
		b := e.scalar(name+".beta", l.Beta)
		y := e.node("Mul", name+"/Mul", []string{x, b})
		y = n("Softplus", []string{y})
		return e.node("Div", name+"/Div", []string{y, b}), true
	case *nn.SiLU:
		s := n("Sigmoid", []string{x})
		return n("Mul", []string{x, s}), true
	case *nn.GELU:
		if l.Approximate == "tanh" {
			// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
			x3 := e.node("Mul", name+"/Mul_sq", []string{x, x})
			x3 = e.node("Mul", name+"/Mul_cube", []string{x3, x})
			t := e.node("Mul", name+"/Mul_c", []string{x3, e.scalar(name+".c", 0.044715)})
			t = e.node("Add", name+"/Add_x", []string{x, t})
			t = e.node("Mul", name+"/Mul_k", []string{t, e.scalar(name+".k", math.Sqrt(2/math.Pi))})
			t = n("Tanh", []string{t})
			t = e.node("Add", name+"/Add_one", []string{t, e.scalar(name+".one", 1)})
			t = e.node("Mul", name+"/Mul_x", []string{x, t})
			return e.node("Mul", name+"/Mul_half", []string{t, e.scalar(name+".half", 0.5)}), true
		}
		// 0.5·x·(1 + erf(x/√2)), the form PyTorch exports (Gelu is opset 20).
		t := n("Div", []string{x, e.scalar(name+".sqrt2", math.Sqrt2)})
		t = n("Erf", []string{t})
		t = e.node("Add", name+"/Add", []string{t, e.scalar(name+".one", 1)})
		t = e.node("Mul", name+"/Mul", []string{x, t})
		return e.node("Mul", name+"/Mul_half", []string{t, e.scalar(name+".half", 0.5)}), true
	case *nn.Softmax:
		return n("Softmax", []string{x}, attrInt("axis", int64(l.Dim))), true
	case *nn.LogSoftmax:
		return n("LogSoftmax", []string{x}, attrInt("axis", int64(l.Dim))), true
	}
	return "", false
}

// ExportedLayers lists the spec layer types Export writes.
var ExportedLayers = []string{"linear", "conv2d", "maxpool2d", "avgpool2d", "adaptiveavgpool2d", "batchnorm1d", "batchnorm2d",
	"layernorm", "relu", "sigmoid", "tanh", "leakyrelu", "elu", "softplus", "silu", "gelu", "softmax", "logsoftmax",
	"flatten", "dropout", "identity", "residual", "transformerencoderlayer"}

// bodyLayers returns a residual body's layers (a Sequential's, or the one layer).
func bodyLayers(l nn.Layer) []nn.Layer {
	if s, ok := l.(*nn.Sequential); ok {
		return s.Layers()
	}
	return []nn.Layer{l}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// ints adds an int64 initializer (a shape) and returns its name.
func (e *exporter) ints(name string, vals ...int64) string {
	e.g.Initializer = append(e.g.Initializer, intTensor(name, vals, len(vals)))
	return name
}

// encoder emits a batch-first transformer encoder layer on x [B, L, E]:
// self-attention written out (MatMul, Reshape, Transpose, Softmax),
// dropout omitted (inference), layer norms as LayerNormalization.
func (e *exporter) encoder(t *nn.TransformerEncoderLayer, name, x string, probe *tensor.Tensor) (string, error) {
	s := probe.Shape()
	if len(s) != 3 {
		return "", fmt.Errorf("encoder input %v, want [batch, L, E]", s)
	}
	if e.opset < 17 {
		return "", fmt.Errorf("LayerNormalization needs opset 17 or later (asked for %d)", e.opset)
	}
	sa := t.SelfAttn
	if !sa.BatchFirst {
		return "", fmt.Errorf("only batch-first attention is exported")
	}
	l, em, h := s[1], sa.EmbedDim, sa.Heads
	d := em / h
	p := name + ".self_attn"
	node := func(op, suffix string, in []string, attrs ...*AttributeProto) string {
		return e.node(op, p+"/"+op+"_"+suffix, in, attrs...)
	}
	w := sa.InProjWeight.Contiguous().Float32s()
	var bias []float32
	if sa.InProjBias != nil {
		bias = sa.InProjBias.Contiguous().Float32s()
	}
	heads := e.ints(p+".heads_shape", 0, int64(l), int64(h), int64(d))
	attn := func(in string) (string, error) {
		var proj [3]string
		for i, part := range []string{"q", "k", "v"} {
			// Wᵢᵀ as an [E, E] initializer: x·Wᵢᵀ.
			wt := make([]float32, em*em)
			for r := range em {
				for c := range em {
					wt[c*em+r] = w[(i*em+r)*em+c]
				}
			}
			y := node("MatMul", part, []string{in, e.init(p+".in_proj_weight_t."+part, wt, em, em)})
			if bias != nil {
				y = node("Add", part, []string{y, e.init(p+".in_proj_bias."+part, bias[i*em:(i+1)*em], em)})
			}
			y = node("Reshape", part, []string{y, heads})
			perm := attrInts("perm", 0, 2, 1, 3)
			if part == "k" {
				perm = attrInts("perm", 0, 2, 3, 1) // Kᵀ: [B, H, D, L]
			}
			proj[i] = node("Transpose", part, []string{y}, perm)
		}
		q := node("Mul", "scale", []string{proj[0], e.scalar(p+".scale", 1/math.Sqrt(float64(d)))})
		sc := node("MatMul", "scores", []string{q, proj[1]})
		a := node("Softmax", "weights", []string{sc}, attrInt("axis", -1))
		ctx := node("MatMul", "context", []string{a, proj[2]})
		ctx = node("Transpose", "context", []string{ctx}, attrInts("perm", 0, 2, 1, 3))
		ctx = node("Reshape", "context", []string{ctx, e.ints(p+".context_shape", 0, int64(l), int64(em))})
		return e.layer(sa.OutProj, p+".out_proj", ctx, probe)
	}
	ff := func(in string) (string, error) {
		y, err := e.layer(t.Linear1, name+".linear1", in, probe)
		if err != nil {
			return "", err
		}
		hidden := t.Linear1.Forward(probe)
		if y, err = e.layer(t.Activation, name+".activation", y, hidden); err != nil {
			return "", err
		}
		return e.layer(t.Linear2, name+".linear2", y, hidden)
	}
	norm := func(m *nn.LayerNorm, suffix, in string) (string, error) {
		return e.layer(m, name+"."+suffix, in, probe)
	}
	add := func(suffix, a, b string) string { return e.node("Add", name+"/Add_"+suffix, []string{a, b}) }
	var err error
	var y string
	if t.NormFirst {
		if y, err = norm(t.Norm1, "norm1", x); err == nil {
			y, err = attn(y)
		}
		if err != nil {
			return "", err
		}
		x = add("attention", x, y)
		if y, err = norm(t.Norm2, "norm2", x); err == nil {
			y, err = ff(y)
		}
		if err != nil {
			return "", err
		}
		return add("feedforward", x, y), nil
	}
	if y, err = attn(x); err != nil {
		return "", err
	}
	if x, err = norm(t.Norm1, "norm1", add("attention", x, y)); err != nil {
		return "", err
	}
	if y, err = ff(x); err != nil {
		return "", err
	}
	return norm(t.Norm2, "norm2", add("feedforward", x, y))
}
