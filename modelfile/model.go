package modelfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/fathom-ml/fathom/safetensors"
)

// A fathom model file is one safetensors file: the weights are its tensors
// (the model's state dict, loadable by safetensors.torch.load_file) and
// the architecture is a JSON document stored in its __metadata__ under
// ArchitectureKey. One file cannot get its weights and architecture out of
// step, is written atomically (temp file and rename), and any truncation
// or corruption is caught by the safetensors checks before anything is
// built.

// ArchitectureKey is the __metadata__ key holding a model file's
// architecture JSON.
const ArchitectureKey = "fathom.architecture"

// ModelFormat is the format name and version written in Architecture.Format.
const ModelFormat = "fathom-model/1"

// Architecture describes a model well enough to rebuild it without Go
// code: the layer specs (package nn's Spec, kept here as raw JSON so this
// package stays independent of nn) and what a predictor needs around the
// network: the task, the class names, the feature columns and the
// standardization fitted on the training data.
type Architecture struct {
	// Format is ModelFormat.
	Format string `json:"format"`
	// Model is the nn.Spec JSON: {"input": [...], "layers": [...]}.
	Model json.RawMessage `json:"model"`
	// Task is "classification" or "regression".
	Task string `json:"task"`
	// Classes names the output classes in logit order (classification).
	Classes []string `json:"classes,omitempty"`
	// Columns names the input feature columns in order, when the training
	// data had names (CSV, Parquet); prediction inputs are matched by them.
	Columns []string `json:"columns,omitempty"`
	// Label names the target column of the training data.
	Label string `json:"label,omitempty"`
	// Features is the number of feature values the network reads per row
	// (the product of the spec's input shape); 0 in older files.
	Features int `json:"features,omitempty"`
	// Impute, if set, fills missing feature values before standardization:
	// the value of column j is Impute.Mean[j] (impute: mean in training).
	Impute *Imputation `json:"impute,omitempty"`
	// Standardize, if set, is applied to inputs before the network:
	// x' = (x − mean) / std per column (std 0: centred only).
	Standardize *Standardization `json:"standardize,omitempty"`
	// TrainedOn records the data and split the model was trained on, so
	// that evaluation can score it on the same held-out rows.
	TrainedOn *TrainingData `json:"trained_on,omitempty"`
	// Info holds free-form facts about the training run (data source,
	// epochs, final metrics) for people reading the file.
	Info map[string]any `json:"info,omitempty"`
}

// Standardization is a per-column affine normalization fitted on the
// training data.
type Standardization struct {
	Mean []float64 `json:"mean"`
	Std  []float64 `json:"std"`
}

// Imputation is the value that fills each feature column's missing values.
type Imputation struct {
	// Mean is the mean of each feature column over the training data file
	// (the values its missing cells were filled with in training).
	Mean []float64 `json:"mean"`
}

// TrainingData says what a model was trained on: the data source, the
// split settings and a fingerprint of the training rows.
type TrainingData struct {
	// Source is the data source (iris, csv, parquet, ...); Path and
	// TestPath are its files, absolute, when it has any.
	Source   string `json:"source"`
	Path     string `json:"path,omitempty"`
	TestPath string `json:"test_path,omitempty"`
	// Test and Validation are the held-out fractions; SplitSeed seeds the
	// split; Stratify says it kept the class proportions.
	Test       float64 `json:"test"`
	Validation float64 `json:"validation"`
	SplitSeed  uint64  `json:"split_seed"`
	Stratify   bool    `json:"stratify"`
	// TrainRows is the number of rows the optimizer saw; TrainSHA256 is
	// the Fingerprint of those rows (raw features and targets, before
	// standardization).
	TrainRows   int    `json:"train_rows"`
	TrainSHA256 string `json:"train_sha256"`
}

// Validate checks the architecture's own consistency (the layer specs are
// checked by whoever builds them).
func (a *Architecture) Validate() error {
	if a.Format != ModelFormat {
		return fmt.Errorf("unsupported model format %q (want %q)", a.Format, ModelFormat)
	}
	if m := bytes.TrimSpace(a.Model); len(m) == 0 || string(m) == "null" {
		return errors.New("the architecture has no model spec")
	}
	switch a.Task {
	case "classification":
		if len(a.Classes) == 0 {
			return errors.New("a classification model must name its classes")
		}
	case "regression":
	default:
		return fmt.Errorf("unknown task %q (want classification or regression)", a.Task)
	}
	if a.Features < 0 || (a.Columns != nil && a.Features > 0 && len(a.Columns) != a.Features) {
		return fmt.Errorf("the model reads %d features but names %d columns", a.Features, len(a.Columns))
	}
	if im := a.Impute; im != nil && a.Columns != nil && len(im.Mean) != len(a.Columns) {
		return fmt.Errorf("imputation covers %d columns, the model reads %d", len(im.Mean), len(a.Columns))
	}
	if s := a.Standardize; s != nil {
		if len(s.Mean) != len(s.Std) {
			return fmt.Errorf("standardization has %d means and %d standard deviations", len(s.Mean), len(s.Std))
		}
		if a.Columns != nil && len(a.Columns) != len(s.Mean) {
			return fmt.Errorf("standardization covers %d columns, the model reads %d", len(s.Mean), len(a.Columns))
		}
	}
	return nil
}

// WriteModel writes a model file: the weights as safetensors tensors and
// arch in the metadata. Extra metadata entries (such as "format": "pt",
// which PyTorch's loader expects) may be given in meta.
func WriteModel(path string, arch *Architecture, weights []safetensors.Entry, meta map[string]string) error {
	if arch.Format == "" {
		arch.Format = ModelFormat
	}
	if err := arch.Validate(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	js, err := json.Marshal(arch)
	if err != nil {
		return fmt.Errorf("%s: encoding the architecture: %w", path, err)
	}
	md := map[string]string{"format": "pt"}
	for k, v := range meta {
		md[k] = v
	}
	md[ArchitectureKey] = string(js)
	return safetensors.WriteFile(path, weights, md)
}

// ReadModel reads a model file and decodes its architecture. Errors name
// the file; a file that is not a valid safetensors file wraps ErrFormat,
// and one without a usable architecture says so.
func ReadModel(path string) (*Architecture, *safetensors.File, error) {
	f, err := safetensors.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading model: %w", err)
	}
	arch, err := ParseArchitecture(f.Metadata)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return arch, f, nil
}

// ParseArchitecture decodes and validates the architecture stored in a
// safetensors file's metadata.
func ParseArchitecture(meta map[string]string) (*Architecture, error) {
	js, ok := meta[ArchitectureKey]
	if !ok {
		return nil, fmt.Errorf("not a fathom model: the metadata has no %q entry (a plain safetensors file holds weights only)", ArchitectureKey)
	}
	dec := json.NewDecoder(strings.NewReader(js))
	dec.DisallowUnknownFields()
	var a Architecture
	if err := dec.Decode(&a); err != nil {
		return nil, fmt.Errorf("architecture JSON: %w", err)
	}
	if err := a.Validate(); err != nil {
		return nil, err
	}
	return &a, nil
}
