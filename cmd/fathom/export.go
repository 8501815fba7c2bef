package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/onnx" // also registers .onnx with modelfile.Load: predict, serve and eval open ONNX files
)

// exportOptions are the flags of `fathom export`.
type exportOptions struct {
	format, out string
	opset       int
	task        string
	classes     []string
	columns     []string
}

func init() {
	var o exportOptions
	cmd := &cobra.Command{
		Use:   "export MODEL",
		Short: "Convert a model to ONNX, or an ONNX file to a fathom model file",
		Long: `Export converts a fathom model file to ONNX (--format onnx): one graph from
the raw features (the model's standardization is its first nodes) to the
network's output (logits for classification, the value for regression), with
the model's architecture, classes and columns kept in the file's
metadata_props. The file passes onnx.checker and runs in any ONNX runtime.

With --format fathom it converts the other way: an ONNX file (PyTorch's
torch.onnx.export of an MLP or CNN, say) becomes a fathom model file.
--task, --classes and --columns say what the model predicts when the file
does not (see docs/onnx.md); fathom predict and fathom serve also open .onnx
files directly, with those taken from the file's metadata or the defaults.

--out defaults to MODEL with the new extension (.onnx or .safetensors).`,
		Example: `  fathom export runs/iris/model.safetensors --format onnx
  fathom export runs/mnist/model.safetensors --format onnx --out mnist.onnx --opset 13
  fathom export resnet.onnx --format fathom --classes cat,dog --out resnet.safetensors`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExport(args[0], o, os.Stdout)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.format, "format", "onnx", "what to write: onnx, or fathom (a .safetensors model file from an ONNX MODEL)")
	f.StringVarP(&o.out, "out", "o", "", "output file (default: MODEL with the format's extension)")
	f.IntVar(&o.opset, "opset", onnx.DefaultOpset, fmt.Sprintf("ONNX opset to write (%d to %d)", onnx.MinExportOpset, onnx.MaxExportOpset))
	f.StringVar(&o.task, "task", "", "from ONNX: classification or regression (default: the file's metadata, else by output size)")
	f.StringSliceVar(&o.classes, "classes", nil, "from ONNX: class names in output order (default: metadata, else 0..k-1)")
	f.StringSliceVar(&o.columns, "columns", nil, "from ONNX: input column names in order (default: metadata, else none)")
	rootCmd.AddCommand(cmd)
}

// runExport is the body of `fathom export`.
func runExport(model string, o exportOptions, stdout io.Writer) error {
	ext := map[string]string{"onnx": ".onnx", "fathom": ".safetensors"}[strings.ToLower(o.format)]
	if ext == "" {
		return fmt.Errorf("--format %q: want onnx or fathom", o.format)
	}
	out := o.out
	if out == "" {
		out = strings.TrimSuffix(model, filepath.Ext(model)) + ext
	}
	if sameFile(model, out) {
		return fmt.Errorf("--out %s would overwrite the model being converted", out)
	}
	var err error
	switch ext {
	case ".onnx":
		if o.task != "" || o.classes != nil || o.columns != nil {
			return errors.New("--task, --classes and --columns apply to --format fathom (the model file already has them)")
		}
		var m *modelfile.Model
		if m, err = modelfile.Load(model); err == nil {
			err = onnx.WriteFile(out, m, onnx.ExportOptions{Opset: o.opset})
		}
	default:
		if !strings.EqualFold(filepath.Ext(model), ".onnx") {
			return fmt.Errorf("--format fathom converts an .onnx file, not %s", model)
		}
		var m *modelfile.Model
		if m, err = onnx.LoadWith(model, onnx.ImportOptions{Task: o.task, Classes: o.classes, Columns: o.columns}); err == nil {
			err = m.Save(out)
		}
	}
	if err != nil {
		return err
	}
	if jsonOut {
		return printJSON(map[string]string{"model": model, "format": o.format, "out": out})
	}
	_, err = fmt.Fprintf(stdout, "wrote %s\n", out)
	return err
}

// sameFile reports whether a and b name the same existing file.
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
