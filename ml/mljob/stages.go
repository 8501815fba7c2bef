package mljob

// The stage, model and evaluator types a config can name register
// themselves from the init functions of their packages (ml.RegisterStage,
// ml.RegisterModel, ml.RegisterEvaluator). This file — and only this file
// in the module's non-test code — imports those packages, for their
// registrations: `fathom ml`, `fathom bench ml` and every config then know
// every type. A new algorithm package joins the list here.
import (
	_ "github.com/fathom-ml/fathom/ml/tune" // CrossValidatorModel, TrainValidationSplitModel
)

// The algorithm packages (ml/feature, ml/eval, ml/linear, ml/bayes,
// ml/glm, ml/mlp) join the import list above when they are merged.
