package quant

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// Mode is how activations are quantized.
type Mode int

const (
	// Dynamic quantizes each batch with its own min-max map at run time.
	Dynamic Mode = iota
	// Static uses maps calibrated once on a data sample.
	Static
)

// ParseMode reads "dynamic" or "static".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "dynamic", "":
		return Dynamic, nil
	case "static":
		return Static, nil
	}
	return 0, fmt.Errorf("unknown quantization mode %q (want dynamic or static)", s)
}

func (m Mode) String() string {
	if m == Static {
		return "static"
	}
	return "dynamic"
}

// ObserverKind selects the calibration observer of static quantization.
type ObserverKind int

const (
	// ObserveMinMax maps the whole range seen (MinMax).
	ObserveMinMax ObserverKind = iota
	// ObserveHistogram maps a percentile range (Histogram).
	ObserveHistogram
)

// ParseObserver reads "minmax" or "percentile" (also "histogram").
func ParseObserver(s string) (ObserverKind, error) {
	switch s {
	case "minmax", "":
		return ObserveMinMax, nil
	case "percentile", "histogram":
		return ObserveHistogram, nil
	}
	return 0, fmt.Errorf("unknown observer %q (want minmax or percentile)", s)
}

// Options configures Quantize.
type Options struct {
	Mode Mode
	// Calibration is the sample static quantization observes: [N, input...]
	// float32, already prepared (standardized) as the network sees it.
	Calibration *tensor.Tensor
	Observer    ObserverKind
	// Percentile for ObserveHistogram (0: 0.9999).
	Percentile float64
	// Symmetric chooses symmetric activation maps (zero point 128).
	Symmetric bool
}

// Report says what Quantize did, layer by layer ("model.layers[i] (type)").
type Report struct {
	Quantized []string
	// Kept lists the layers with weights that stay float32, with why.
	Kept []string
}

// ErrCalibration is wrapped by the errors about calibration data.
var ErrCalibration = errors.New("calibration data")

// Quantize returns a copy of net (built from spec) with its Linear and
// Conv2d layers replaced by int8 ones, and the matching spec. net is not
// changed; the layers that stay float are shared with it.
func Quantize(net *nn.Sequential, spec nn.Spec, o Options) (*nn.Sequential, nn.Spec, *Report, error) {
	layers := net.Layers()
	if len(layers) != len(spec.Layers) {
		return nil, nn.Spec{}, nil, fmt.Errorf("quant: the network has %d layers, its spec %d", len(layers), len(spec.Layers))
	}
	var x *tensor.Tensor
	if o.Mode == Static {
		if o.Calibration == nil || o.Calibration.Shape()[0] == 0 {
			return nil, nn.Spec{}, nil, fmt.Errorf("%w: static quantization needs a calibration sample", ErrCalibration)
		}
		if s := o.Calibration.Shape(); !slices.Equal(s[1:], spec.Input) {
			return nil, nn.Spec{}, nil, fmt.Errorf("%w: examples of shape %v, the model reads %v", ErrCalibration, s[1:], spec.Input)
		}
		x = o.Calibration.NoGrad()
	}
	out := nn.NewSequential()
	qspec := nn.Spec{Input: slices.Clone(spec.Input), Layers: slices.Clone(spec.Layers)}
	rep := &Report{}
	for i, l := range layers {
		name := fmt.Sprintf("model.layers[%d] (%s)", i, spec.Layers[i].Type)
		var in *tensor.QuantParams
		if x != nil {
			switch l.(type) {
			case *nn.Linear, *nn.Conv2d:
				p := observe(x, o)
				in = &p
			}
		}
		var q nn.Layer
		switch l := l.(type) {
		case *nn.Linear:
			q = nn.QuantizeLinear(l, in)
			qspec.Layers[i].Type = "qlinear"
		case *nn.Conv2d:
			c, err := nn.QuantizeConv2d(l, in)
			if err != nil {
				rep.Kept = append(rep.Kept, name+": "+err.Error())
				break
			}
			q = c
			qspec.Layers[i].Type = "qconv2d"
		default:
			if len(l.NamedParameters())+len(l.NamedBuffers()) > 0 && !isQuantized(l) {
				rep.Kept = append(rep.Kept, name+": no int8 version of this layer")
			}
		}
		if q != nil {
			rep.Quantized = append(rep.Quantized, name)
			out.Append(q)
		} else {
			out.Append(l)
		}
		if x != nil {
			x = l.Forward(x)
		}
	}
	return out, qspec, rep, nil
}

func isQuantized(l nn.Layer) bool {
	switch l.(type) {
	case *nn.QLinear, *nn.QConv2d:
		return true
	}
	return false
}

func observe(x *tensor.Tensor, o Options) tensor.QuantParams {
	var ob Observer = &MinMax{}
	if o.Observer == ObserveHistogram {
		ob = &Histogram{Percentile: o.Percentile}
	}
	ob.Observe(x)
	return ob.Params(o.Symmetric)
}

// String lists the report for people.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "quantized to int8: %d layers\n", len(r.Quantized))
	for _, q := range r.Quantized {
		fmt.Fprintf(&b, "  %s\n", q)
	}
	if len(r.Kept) > 0 {
		fmt.Fprintf(&b, "kept in float32: %d layers\n", len(r.Kept))
		for _, k := range r.Kept {
			fmt.Fprintf(&b, "  %s\n", k)
		}
	}
	return b.String()
}
