package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/safetensors"
	"github.com/fathom-ml/fathom/tensor"
)

// inspectTensor is one tensor of `fathom inspect`.
type inspectTensor struct {
	Name     string  `json:"name"`
	DType    string  `json:"dtype"`
	Shape    []int   `json:"shape"`
	Params   int64   `json:"params"`
	Bytes    int64   `json:"bytes"`
	Sparsity float64 `json:"sparsity"` // share of elements that are zero
}

// inspectResult is the `fathom inspect --json` report.
type inspectResult struct {
	File         string            `json:"file"`
	FileBytes    int64             `json:"file_bytes"`
	Kind         string            `json:"kind"` // "network", "ml", "checkpoint" or "safetensors"
	Architecture string            `json:"architecture,omitempty"`
	Spec         json.RawMessage   `json:"spec,omitempty"`
	Info         map[string]string `json:"info,omitempty"`
	Tensors      []inspectTensor   `json:"tensors"`
	Params       int64             `json:"params"`
	Bytes        int64             `json:"bytes"`
	DTypes       map[string]int64  `json:"dtype_params"`
	Sparsity     float64           `json:"sparsity"`
}

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

func runInspect(path string, stdout io.Writer) error {
	f, err := safetensors.ReadFile(path)
	if err != nil {
		return err
	}
	r := inspectResult{File: path, FileBytes: fileSize(path), Kind: "safetensors", DTypes: map[string]int64{}}
	var zeros int64
	for _, e := range f.Tensors {
		t := inspectTensor{Name: e.Name, DType: e.DType, Shape: e.Shape, Params: 1, Bytes: int64(len(e.Data))}
		for _, d := range e.Shape {
			t.Params *= int64(d)
		}
		z := zeroElems(e, t.Params)
		if t.Params > 0 {
			t.Sparsity = float64(z) / float64(t.Params)
		}
		zeros += z
		r.Tensors = append(r.Tensors, t)
		r.Params += t.Params
		r.Bytes += t.Bytes
		r.DTypes[e.DType] += t.Params
	}
	if r.Params > 0 {
		r.Sparsity = float64(zeros) / float64(r.Params)
	}
	meta := f.Metadata
	switch {
	case meta[modelfile.ArchitectureKey] != "":
		r.Kind = "network"
		a, err := modelfile.ParseArchitecture(meta)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		r.Spec = a.Model
		spec, err := nn.DecodeSpecJSON(a.Model)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		r.Info = map[string]string{"task": a.Task, "input": fmt.Sprint(spec.Input)}
		if len(a.Classes) > 0 {
			r.Info["classes"] = fmt.Sprint(len(a.Classes))
		}
		if q, ok := a.Info["quantization"]; ok {
			js, _ := json.Marshal(q)
			r.Info["quantization"] = string(js)
		}
		net, _, err := spec.BuildWithin(tensor.NewRNG(0), max(r.Params, 1))
		if err != nil {
			return fmt.Errorf("%s: architecture: %w", path, err)
		}
		if err := modelfile.LoadEntries(net, f.Tensors); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		r.Architecture = describeLayers(net)
	case meta["fathom.ml"] != "":
		r.Kind = "ml"
		r.Spec = json.RawMessage(meta["fathom.ml"])
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(r.Spec, &head) == nil {
			r.Architecture = "ml model " + head.Type
		}
	case meta[modelfile.CheckpointKey] != "":
		r.Kind = "checkpoint"
	}
	if jsonOut {
		if r.Tensors == nil {
			r.Tensors = []inspectTensor{}
		}
		return printJSON(r)
	}
	printInspect(stdout, &r)
	return nil
}

// describeLayers is nn.Describe without the parameter line (the tensors
// table counts every stored value, int8 buffers included).
func describeLayers(net *nn.Sequential) string {
	d := nn.Describe(net)
	if i := strings.LastIndex(d, "\nparameters:"); i >= 0 {
		d = d[:i]
	}
	return d
}

// zeroElems counts the elements of e whose bytes are all zero, or that are
// a float −0.
func zeroElems(e safetensors.Entry, n int64) int64 {
	bits, ok := safetensors.DTypeBits(e.DType)
	if !ok || bits%8 != 0 || n == 0 || int64(len(e.Data)) != n*int64(bits/8) {
		return 0
	}
	size := bits / 8
	float := strings.HasPrefix(e.DType, "F") || e.DType == "BF16"
	var z int64
	for i := 0; i < len(e.Data); i += size {
		el := e.Data[i : i+size]
		zero := true
		for b, v := range el {
			if v != 0 && !(float && b == size-1 && v == 0x80) {
				zero = false
				break
			}
		}
		if zero {
			z++
		}
	}
	return z
}

func printInspect(w io.Writer, r *inspectResult) {
	fmt.Fprintf(w, "%s: %s, %d bytes\n", r.File, r.Kind, r.FileBytes)
	for _, k := range slices.Sorted(maps.Keys(r.Info)) {
		fmt.Fprintf(w, "%s: %s\n", k, r.Info[k])
	}
	if r.Architecture != "" {
		fmt.Fprintf(w, "\n%s\n", r.Architecture)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "tensor\tdtype\tshape\tparams\tbytes\tsparsity")
	for _, t := range r.Tensors {
		fmt.Fprintf(tw, "%s\t%s\t%v\t%d\t%d\t%.1f%%\n", t.Name, t.DType, t.Shape, t.Params, t.Bytes, 100*t.Sparsity)
	}
	fmt.Fprintf(tw, "total\t\t\t%d\t%d\t%.1f%%\n", r.Params, r.Bytes, 100*r.Sparsity)
	tw.Flush()
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(r.DTypes)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, r.DTypes[k]))
	}
	fmt.Fprintf(w, "by dtype: %s\n", strings.Join(parts, ", "))
}
