package mljob

// The stage and model types a config can name register themselves from
// the init functions of their packages (ml.RegisterStage,
// ml.RegisterModel); this file — and only this file in the module's
// non-test code — imports those packages for their registrations, so that
// `fathom ml`, `fathom bench ml` and every config know every type. A new
// algorithm package joins the list here.
//
// The evaluators of package eval are made by eval.New; init registers
// each of its types with ml.RegisterEvaluator, so that configs find them
// through the same registry as any other evaluator.
import (
	"github.com/fathom-ml/fathom/ml"
	_ "github.com/fathom-ml/fathom/ml/bayes"   // NaiveBayes
	_ "github.com/fathom-ml/fathom/ml/cluster" // KMeans, ClusteringEvaluator
	_ "github.com/fathom-ml/fathom/ml/decomp"  // PCA
	"github.com/fathom-ml/fathom/ml/eval"
	_ "github.com/fathom-ml/fathom/ml/feature"   // StringIndexer, VectorAssembler, StandardScaler, ...
	_ "github.com/fathom-ml/fathom/ml/glm"       // GeneralizedLinearRegression
	_ "github.com/fathom-ml/fathom/ml/linear"    // LinearRegression, LogisticRegression, LinearSVC
	_ "github.com/fathom-ml/fathom/ml/mlp"       // MultilayerPerceptronClassifier
	_ "github.com/fathom-ml/fathom/ml/recommend" // ALS
	_ "github.com/fathom-ml/fathom/ml/tune"      // CrossValidatorModel, TrainValidationSplitModel
)

func init() {
	for _, typ := range eval.Types() {
		ml.RegisterEvaluator(typ, func() ml.Evaluator {
			e, err := eval.New(typ)
			if err != nil {
				panic(err) // eval.Types lists only what eval.New makes
			}
			return e
		})
	}
}
