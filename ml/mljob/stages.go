package mljob

// The stage, model and evaluator types a config can name register
// themselves from the init functions of their packages (ml.RegisterStage,
// ml.RegisterModel, ml.RegisterEvaluator); this file — and only this file
// in the module's non-test code — imports those packages for their
// registrations, so that `fathom ml`, `fathom bench ml` and every config
// know every type. A new algorithm package joins the list here.
import (
	_ "github.com/fathom-ml/fathom/ml/bayes"     // NaiveBayes
	_ "github.com/fathom-ml/fathom/ml/cluster"   // KMeans, ClusteringEvaluator
	_ "github.com/fathom-ml/fathom/ml/decomp"    // PCA
	_ "github.com/fathom-ml/fathom/ml/eval"      // BinaryClassificationEvaluator, MulticlassClassificationEvaluator, RegressionEvaluator
	_ "github.com/fathom-ml/fathom/ml/feature"   // StringIndexer, VectorAssembler, StandardScaler, ...
	_ "github.com/fathom-ml/fathom/ml/glm"       // GeneralizedLinearRegression
	_ "github.com/fathom-ml/fathom/ml/linear"    // LinearRegression, LogisticRegression, LinearSVC
	_ "github.com/fathom-ml/fathom/ml/mlp"       // MultilayerPerceptronClassifier
	_ "github.com/fathom-ml/fathom/ml/recommend" // ALS
	_ "github.com/fathom-ml/fathom/ml/tune"      // CrossValidatorModel, TrainValidationSplitModel
)
