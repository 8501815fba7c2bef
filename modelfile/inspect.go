package modelfile

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/safetensors"
	"github.com/fathom-ml/fathom/tensor"
)

// InspectTensor is one tensor of an Inspection.
type InspectTensor struct {
	Name     string  `json:"name"`
	DType    string  `json:"dtype"`
	Shape    []int   `json:"shape"`
	Params   int64   `json:"params"`
	Bytes    int64   `json:"bytes"`
	Sparsity float64 `json:"sparsity"` // share of elements that are zero
}

// Inspection is what Inspect reports of a safetensors file: the
// `fathom inspect --json` report.
type Inspection struct {
	File         string            `json:"file"`
	FileBytes    int64             `json:"file_bytes"`
	Kind         string            `json:"kind"` // "network", "ml", "checkpoint" or "safetensors"
	Architecture string            `json:"architecture,omitempty"`
	Spec         json.RawMessage   `json:"spec,omitempty"`
	Info         map[string]string `json:"info,omitempty"`
	Tensors      []InspectTensor   `json:"tensors"`
	Params       int64             `json:"params"`
	Bytes        int64             `json:"bytes"`
	DTypes       map[string]int64  `json:"dtype_params"`
	Sparsity     float64           `json:"sparsity"`
}

// Inspect reads the safetensors file at path — a network, an ml model,
// a checkpoint or any safetensors file — and reports its architecture
// and, per tensor, dtype, shape, elements, bytes and sparsity (the share
// of elements that are zero), with totals by dtype. Nothing is run.
func Inspect(path string) (*Inspection, error) {
	f, err := safetensors.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := &Inspection{File: path, FileBytes: fileSize(path), Kind: "safetensors", DTypes: map[string]int64{}}
	var zeros int64
	for _, e := range f.Tensors {
		t := InspectTensor{Name: e.Name, DType: e.DType, Shape: e.Shape, Params: 1, Bytes: int64(len(e.Data))}
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
	case meta[ArchitectureKey] != "":
		r.Kind = "network"
		a, err := ParseArchitecture(meta)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		r.Spec = a.Model
		spec, err := nn.DecodeSpecJSON(a.Model)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
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
			return nil, fmt.Errorf("%s: architecture: %w", path, err)
		}
		if err := LoadEntries(net, f.Tensors); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
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
	case meta[CheckpointKey] != "":
		r.Kind = "checkpoint"
	}
	if r.Tensors == nil {
		r.Tensors = []InspectTensor{}
	}
	return r, nil
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
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

// WriteText writes the report for people: the kind, the architecture and
// a table of the tensors.
func (r *Inspection) WriteText(w io.Writer) {
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
