package metrics

import (
	"fmt"
	"strings"
)

// Task says what a model predicts, which picks the default loss and the
// metrics reported.
type Task int

const (
	// Classification predicts a class: the model outputs one logit per
	// class, targets are class indices, and accuracy is reported.
	Classification Task = iota
	// Regression predicts a number: the model outputs one value, targets
	// are numbers, and the root-mean-square error is reported.
	Regression
)

func (t Task) String() string {
	switch t {
	case Classification:
		return "classification"
	case Regression:
		return "regression"
	}
	return fmt.Sprintf("Task(%d)", int(t))
}

// ParseTask maps "classification" and "regression" to a Task.
func ParseTask(s string) (Task, error) {
	switch strings.ToLower(s) {
	case "classification", "classify", "class":
		return Classification, nil
	case "regression", "regress":
		return Regression, nil
	}
	return 0, fmt.Errorf("unknown task %q (want classification or regression)", s)
}

// Headline returns the name of the task's main metric: "accuracy" for
// classification, "rmse" for regression.
func (t Task) Headline() string {
	if t == Regression {
		return "rmse"
	}
	return "accuracy"
}
