package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/quant"
	"github.com/fathom-ml/fathom/tensor"
)

// quantizeOptions are the flags of `fathom quantize`.
type quantizeOptions struct {
	out, mode, calibrate, observer string
	percentile                     float64
	symmetric                      bool
	rows                           int
}

// quantizeResult is the `fathom quantize --json` report.
type quantizeResult struct {
	Model     string   `json:"model"`
	Out       string   `json:"out"`
	Mode      string   `json:"mode"`
	Observer  string   `json:"observer,omitempty"`
	Rows      int      `json:"calibration_rows,omitempty"`
	Quantized []string `json:"quantized"`
	Kept      []string `json:"kept"`
	BytesIn   int64    `json:"bytes_in"`
	BytesOut  int64    `json:"bytes_out"`
}

func init() {
	var o quantizeOptions
	cmd := &cobra.Command{
		Use:   "quantize MODEL --out FILE",
		Short: "Convert a model's Linear and Conv2d layers to int8 for faster inference",
		Long: `Quantize writes a copy of a model file whose Linear and Conv2d layers hold
int8 weights (one scale per output channel) and run on the int8 GEMM
(AVX512-VNNI where the CPU has it). The new file loads in fathom predict,
serve, eval and bench infer like any model.

--mode dynamic (the default) quantizes each batch's activations with their own
range at run time: no data needed. --mode static fixes each layer's input
range beforehand from a calibration sample (--calibrate: fashion-mnist, which
reads the first --calibrate-rows training images, iris, or a CSV/Parquet file
with the model's feature columns), observed by --observer minmax (the whole
range) or percentile (the --percentile range of a histogram, which ignores
outliers); --symmetric centres the map on zero.

Layers with weights that have no int8 version (grouped convolutions,
normalization, embeddings, attention, ...) stay float32 and are listed.`,
		Example: `  fathom quantize runs/fashion-mlp/model.safetensors --out mlp-int8.safetensors
  fathom quantize runs/fashion-cnn/model.safetensors --mode static --calibrate fashion-mnist --observer percentile --out cnn-int8.safetensors`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runQuantize(args[0], o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.out, "out", "o", "", "the quantized model file to write (required)")
	f.StringVar(&o.mode, "mode", "dynamic", "activation quantization: dynamic or static")
	f.StringVar(&o.calibrate, "calibrate", "", "static mode: calibration data (fashion-mnist, iris, or a CSV/Parquet file)")
	f.IntVar(&o.rows, "calibrate-rows", 1000, "static mode: rows of the calibration data to use (the first ones)")
	f.StringVar(&o.observer, "observer", "minmax", "static mode: minmax or percentile")
	f.Float64Var(&o.percentile, "percentile", 99.99, "percentile observer: the share of values covered, in percent")
	f.BoolVar(&o.symmetric, "symmetric", false, "static mode: symmetric activation maps (zero point 128)")
	rootCmd.AddCommand(cmd)
}

func runQuantize(path string, o quantizeOptions, stdout, stderr io.Writer) error {
	if o.out == "" {
		return fmt.Errorf("quantize: --out FILE is required")
	}
	mode, err := quant.ParseMode(o.mode)
	if err != nil {
		return fmt.Errorf("--mode: %w", err)
	}
	obs, err := quant.ParseObserver(o.observer)
	if err != nil {
		return fmt.Errorf("--observer: %w", err)
	}
	if !(o.percentile > 0 && o.percentile <= 100) {
		return fmt.Errorf("--percentile %g: want a share in (0, 100]", o.percentile)
	}
	if mode == quant.Dynamic && o.calibrate != "" {
		return fmt.Errorf("--calibrate applies to --mode static only")
	}
	if mode == quant.Static && o.calibrate == "" {
		return fmt.Errorf("--mode static needs --calibrate DATA")
	}
	if o.rows < 1 {
		return fmt.Errorf("--calibrate-rows %d: want at least 1", o.rows)
	}
	m, err := modelfile.Load(path)
	if err != nil {
		return err
	}
	opts := quant.Options{Mode: mode, Observer: obs, Percentile: o.percentile / 100, Symmetric: o.symmetric}
	rows := 0
	if mode == quant.Static {
		x, err := calibrationSample(m, o.calibrate, o.rows)
		if err != nil {
			return fmt.Errorf("--calibrate %s: %w", o.calibrate, err)
		}
		opts.Calibration, rows = x, x.Shape()[0]
	}
	net, spec, rep, err := quant.Quantize(m.Net, m.Spec, opts)
	if err != nil {
		return err
	}
	if len(rep.Quantized) == 0 {
		return fmt.Errorf("%s: no layer could be quantized\n%s", path, rep)
	}
	q := *m
	q.Net, q.Spec = net, spec
	q.Info = map[string]any{}
	maps.Copy(q.Info, m.Info)
	qi := map[string]any{"mode": mode.String(), "from": path}
	if mode == quant.Static {
		qi["observer"], qi["calibration"], qi["calibration_rows"], qi["symmetric"] = o.observer, o.calibrate, rows, o.symmetric
	}
	q.Info["quantization"] = qi
	if err := q.Save(o.out); err != nil {
		return err
	}
	res := quantizeResult{Model: path, Out: o.out, Mode: mode.String(), Rows: rows,
		Quantized: rep.Quantized, Kept: rep.Kept, BytesIn: fileSize(path), BytesOut: fileSize(o.out)}
	if mode == quant.Static {
		res.Observer = o.observer
	}
	if res.Kept == nil {
		res.Kept = []string{}
	}
	if jsonOut {
		return printJSON(res)
	}
	fmt.Fprint(stderr, rep.String())
	fmt.Fprintf(stdout, "%s (%d bytes) -> %s (%d bytes), int8 %s\n", path, res.BytesIn, o.out, res.BytesOut, mode)
	return nil
}

// calibrationSample reads the first rows of a calibration source, prepared
// (columns checked, standardized) as the model sees its input.
func calibrationSample(m *modelfile.Model, source string, rows int) (*tensor.Tensor, error) {
	var t *data.Table
	var err error
	switch strings.ToLower(source) {
	case "fashion-mnist":
		t, err = data.LoadFashionMNIST("train")
	case "iris":
		t, err = data.Iris()
	default:
		t, err = m.ReadInput(source, false)
	}
	if err != nil {
		return nil, err
	}
	if t.Rows == 0 {
		return nil, fmt.Errorf("no data rows")
	}
	in, err := m.PrepareInput(t)
	if err != nil {
		return nil, err
	}
	n := min(rows, in.Rows)
	x := append([]float32(nil), in.X[:n*in.Cols]...)
	return tensor.FromFloat32(x, append([]int{n}, m.Spec.Input...)...), nil
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}
