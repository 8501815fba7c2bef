package job

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fathom-ml/fathom/modelfile"
)

// ErrDataChanged says the data a config loads is not the data a model was
// trained on: scoring the model on its "test split" could score it on its
// own training rows.
var ErrDataChanged = errors.New("the data differs from the data the model was trained on")

// UseTrainedSplit sets the config's split settings (split seed, test and
// validation fractions, stratification) to those a model recorded, so
// that LoadData holds out the rows the model never saw. It returns a note
// for each setting that changed, e.g. "data.split_seed 1 (the config says 0)".
func (c *Config) UseTrainedSplit(td *modelfile.TrainingData) []string {
	d := &c.Data
	var notes []string
	note := func(key string, model, config any) {
		if fmt.Sprint(model) != fmt.Sprint(config) {
			notes = append(notes, fmt.Sprintf("data.%s %v (the config says %v)", key, model, config))
		}
	}
	seed := c.Seed
	if d.SplitSeed != nil {
		seed = *d.SplitSeed
	}
	note("split_seed", td.SplitSeed, seed)
	d.SplitSeed = &td.SplitSeed
	if d.Test == "" {
		test := 0.2
		if d.TestFraction != nil {
			test = *d.TestFraction
		}
		note("test", td.Test, test)
		d.TestFraction = &td.Test
	}
	note("validation", td.Validation, d.Validation)
	d.Validation = td.Validation
	if d.Stratify != nil {
		note("stratify", td.Stratify, *d.Stratify)
	}
	d.Stratify = &td.Stratify
	return notes
}

// CheckTrainedOn compares the training data a config loaded (got, from
// Splits.TrainedOn) with what the model recorded (want): an error wrapping
// ErrDataChanged names every difference when the training rows'
// fingerprints differ.
func CheckTrainedOn(want, got *modelfile.TrainingData) error {
	if want.TrainSHA256 == got.TrainSHA256 {
		return nil
	}
	var diffs []string
	diff := func(what string, w, g any) {
		if fmt.Sprint(w) != fmt.Sprint(g) {
			diffs = append(diffs, fmt.Sprintf("%s: trained on %v, now %v", what, w, g))
		}
	}
	diff("data.source", want.Source, got.Source)
	diff("data.train", want.Path, got.Path)
	diff("data.test", want.TestPath, got.TestPath)
	diff("data.split_seed", want.SplitSeed, got.SplitSeed)
	diff("data.test_fraction", want.Test, got.Test)
	diff("data.validation", want.Validation, got.Validation)
	diff("data.stratify", want.Stratify, got.Stratify)
	diff("training rows", want.TrainRows, got.TrainRows)
	why := ""
	if len(diffs) == 0 {
		why = " (the data's content changed)"
	}
	diffs = append(diffs, fmt.Sprintf("the training rows' SHA-256: trained on %.12s…, now %.12s…%s",
		want.TrainSHA256, got.TrainSHA256, why))
	return fmt.Errorf("%w: %s", ErrDataChanged, strings.Join(diffs, "; "))
}
