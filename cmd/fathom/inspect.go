package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/fathom-ml/fathom/modelfile"
)

func init() {
	cmd := &cobra.Command{
		Use:   "inspect MODEL",
		Short: "Show a model file's architecture and tensors (shape, dtype, bytes, sparsity)",
		Long: `Inspect reads a safetensors file — a network written by fathom train or
fathom quantize, an ml model written by fathom ml fit, a checkpoint or any
safetensors file — and prints its architecture (the layers of a network, the
type and settings of an ml model) and, per tensor, its dtype, shape, number
of elements, bytes and sparsity (the share of elements that are zero), with
totals by dtype. Nothing is run.`,
		Example: `  fathom inspect runs/fashion-mlp/model.safetensors
  fathom inspect mlp-int8.safetensors --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInspect(args[0], cmd.OutOrStdout())
		},
	}
	rootCmd.AddCommand(cmd)
}

// runInspect prints modelfile.Inspect's report of path: JSON with
// --json, else text on stdout.
func runInspect(path string, stdout io.Writer) error {
	r, err := modelfile.Inspect(path)
	if err != nil {
		return err
	}
	if jsonOut {
		return printJSON(r)
	}
	r.WriteText(stdout)
	return nil
}
