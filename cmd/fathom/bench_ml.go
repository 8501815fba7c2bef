package main

import (
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/mljob"
)

// benchMLRecipe is one `fathom bench ml` algorithm: a registered stage
// type and its params (YAML, decoded strictly over its defaults), set as
// the scikit-learn peer (shared/anchors/python/job5_sklearn.py) is.
type benchMLRecipe struct {
	stage  string
	params string
	peer   string
	// cOne sets regParam to 1/n for the n training rows: scikit-learn's
	// C = 1 (sklearn sums the loss, Spark averages it, so C is Spark's
	// regParam = 1/(C·n)).
	cOne bool
}

var benchMLRecipes = map[string]benchMLRecipe{
	"logreg": {"LogisticRegression",
		"{family: multinomial, maxIter: 100, standardization: false, tol: 1e-12}",
		"LogisticRegression(multi_class='multinomial', solver='lbfgs', max_iter=100, C=1.0)", true},
	"gnb": {"NaiveBayes", "{modelType: gaussian}", "GaussianNB()", false},
	"linsvc": {"LinearSVC",
		"{loss: squared_hinge, maxIter: 100, standardization: false, tol: 1e-12}",
		"LinearSVC(C=1, squared hinge, one-vs-rest, max_iter=1000)", true},
	"mlp": {"MultilayerPerceptronClassifier", "{layers: [784, 100, 10], maxIter: 100, precision: float32}",
		"MLPClassifier(hidden_layer_sizes=(100,), solver='lbfgs', max_iter=100)", false},
	"kmeans": {"KMeans", "{k: 10, maxIter: 100}",
		"KMeans(n_clusters=10, n_init=1, max_iter=100, algorithm='lloyd')", false},
	"pca": {"PCA", "{k: 50}", "PCA(n_components=50, svd_solver='randomized')", false},
}

// benchMLResult is the line of `fathom bench ml --json`.
type benchMLResult struct {
	Algo         string  `json:"algo"`
	Stage        string  `json:"stage"`
	Params       string  `json:"params"`
	TrainRows    int     `json:"train_rows"`
	TestRows     int     `json:"test_rows"`
	Threads      int     `json:"threads"`
	FitSeconds   float64 `json:"fit_seconds"`
	Iterations   int     `json:"iterations,omitempty"`
	TestAccuracy float64 `json:"test_accuracy,omitempty"`
	Skipped      bool    `json:"skipped,omitempty"`
	Reason       string  `json:"reason,omitempty"`

	// Inertia (kmeans) is the fitted model's sum of squared distances.
	Inertia float64 `json:"inertia,omitempty"`
	// ExplainedVarianceRatioSum (pca) is the variance the components keep.
	ExplainedVarianceRatioSum float64 `json:"explained_variance_ratio_sum,omitempty"`
}

func init() {
	var rows, threads int
	var sets []string
	var centers string
	cmd := &cobra.Command{
		Use:   "ml ALGO",
		Short: "Time a classic-ML fit on Fashion-MNIST (" + strings.Join(benchMLAlgos(), ", ") + ")",
		Long: `Fits a registered estimator on the Fashion-MNIST training set (60 000 × 784,
pixels/255 as a features vector) with the settings of the scikit-learn peer
(../shared/anchors/python/job5_sklearn.py), then scores it on the 10 000 test
rows. Prints fit_seconds (Fit alone), iterations (when the model reports
them) and test_accuracy. ALGO is one of:

` + benchMLHelp() + `
--param overrides a param (key=value, YAML value); --rows fits on the first N
training rows. kmeans and pca are unsupervised: they print inertia or
explained_variance_ratio_sum instead of test_accuracy; --init-centers FILE
(k rows of 784 numbers, comma- or space-separated) starts kmeans from given
centers. scripts/compare-ml.sh and scripts/compare-ml-part2.sh run them
against the peer.`,
		Example: `  fathom bench ml logreg --json
  fathom bench ml mlp --param maxIter=10 --rows 10000`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if centers != "" {
				c, err := readCenters(centers)
				if err != nil {
					return err
				}
				sets = append(sets, c...)
			}
			return runBenchML(args[0], rows, threads, sets)
		},
	}
	cmd.Flags().IntVar(&rows, "rows", 0, "fit on the first N training rows (0: all)")
	cmd.Flags().IntVar(&threads, "threads", 0, "GOMAXPROCS for the run (0: all cores)")
	cmd.Flags().StringArrayVar(&sets, "param", nil, "override a param: key=value (repeatable)")
	cmd.Flags().StringVar(&centers, "init-centers", "", "kmeans: start from the centers in FILE (one per line)")
	benchCmd.AddCommand(cmd)
}

func benchMLAlgos() []string { return slices.Sorted(maps.Keys(benchMLRecipes)) }

func benchMLHelp() string {
	var b strings.Builder
	for _, k := range benchMLAlgos() {
		r := benchMLRecipes[k]
		reg := ""
		if r.cOne {
			reg = " regParam 1/rows"
		}
		fmt.Fprintf(&b, "  %-7s %s %s%s\n          (peer: %s)\n", k, r.stage, r.params, reg, r.peer)
	}
	return b.String()
}

// fashionFrame returns the first rows rows (all for 0) of a Fashion-MNIST
// table as a frame (ml.TableFrame).
func fashionFrame(t *data.Table, rows int) (*data.Frame, error) {
	f, err := ml.TableFrame(t)
	if err != nil || rows <= 0 || rows >= f.Len() {
		return f, err
	}
	return f.Slice(0, rows), nil
}

func runBenchML(algo string, rows, threads int, sets []string) error {
	r, ok := benchMLRecipes[algo]
	if !ok {
		return fmt.Errorf("bench ml: unknown algorithm %q (want one of %s)", algo, strings.Join(benchMLAlgos(), ", "))
	}
	if threads > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads))
	}
	res := benchMLResult{Algo: algo, Stage: r.stage, Params: r.params, Threads: runtime.GOMAXPROCS(0)}
	st, err := mljob.NewStage(r.stage, r.params)
	if err != nil {
		return fmt.Errorf("bench ml %s: %w", algo, err)
	}
	if err := mljob.SetParams(st, sets); err != nil {
		return fmt.Errorf("bench ml %s: %w", algo, err)
	}
	est, ok := st.(ml.Estimator)
	if !ok {
		return fmt.Errorf("bench ml %s: %s is not an estimator", algo, r.stage)
	}
	if reason := fashionMNISTMissing(); reason != "" {
		res.Skipped, res.Reason = true, reason
		if jsonOut {
			return printJSON(res)
		}
		fmt.Fprintln(os.Stderr, "bench ml: skipped:", reason)
		return nil
	}
	trainT, err := data.LoadFashionMNIST("train")
	if err != nil {
		return fmt.Errorf("bench ml %s: %w", algo, err)
	}
	testT, err := data.LoadFashionMNIST("t10k")
	if err != nil {
		return fmt.Errorf("bench ml %s: %w", algo, err)
	}
	train, err := fashionFrame(trainT, rows)
	if err != nil {
		return fmt.Errorf("bench ml %s: %w", algo, err)
	}
	test, err := fashionFrame(testT, 0)
	if err != nil {
		return fmt.Errorf("bench ml %s: %w", algo, err)
	}
	res.TrainRows, res.TestRows = train.Len(), test.Len()
	if r.cOne && !slices.ContainsFunc(sets, func(s string) bool { return strings.HasPrefix(s, "regParam=") }) {
		reg := fmt.Sprintf("regParam=%v", 1/float64(train.Len()))
		if err := mljob.SetParams(st, []string{reg}); err != nil {
			return fmt.Errorf("bench ml %s: %w", algo, err)
		}
		res.Params = strings.TrimSuffix(res.Params, "}") + ", " + strings.Replace(reg, "=", ": ", 1) + "}"
	}
	start := time.Now()
	m, err := est.Fit(ml.Local(train))
	if err != nil {
		return fmt.Errorf("bench ml %s: %w", algo, err)
	}
	res.FitSeconds = time.Since(start).Seconds()
	res.Iterations = mljob.Iterations(m)
	if done, err := unsupervisedResult(m, &res); done || err != nil {
		if err != nil {
			return fmt.Errorf("bench ml %s: %w", algo, err)
		}
		if jsonOut {
			return printJSON(res)
		}
		fmt.Printf("%s (%s): fit %.3f s on %d rows, %d iterations, inertia %.6g, explained variance ratio sum %.6g, %d threads\n",
			algo, r.stage, res.FitSeconds, res.TrainRows, res.Iterations, res.Inertia, res.ExplainedVarianceRatioSum, res.Threads)
		return nil
	}
	out, err := m.Transform(test)
	if err != nil {
		return fmt.Errorf("bench ml %s: %w", algo, err)
	}
	if res.TestAccuracy, err = accuracy(out); err != nil {
		return fmt.Errorf("bench ml %s: %w", algo, err)
	}
	if jsonOut {
		return printJSON(res)
	}
	it := ""
	if res.Iterations > 0 {
		it = fmt.Sprintf(", %d iterations", res.Iterations)
	}
	fmt.Printf("%s (%s): fit %.3f s on %d rows%s, test accuracy %.4f, %d threads\n",
		algo, r.stage, res.FitSeconds, res.TrainRows, it, res.TestAccuracy, res.Threads)
	return nil
}

// accuracy is the fraction of rows whose prediction equals the label.
func accuracy(f *data.Frame) (float64, error) {
	p, err := ml.Numbers(f, ml.PredictionCol)
	if err != nil {
		return 0, err
	}
	y, err := ml.Numbers(f, ml.LabelCol)
	if err != nil {
		return 0, err
	}
	right := 0
	for i := range p {
		if p[i] == y[i] {
			right++
		}
	}
	return float64(right) / float64(max(len(p), 1)), nil
}

// checkRecipe builds the recipe's stage (its params decoded strictly).
func checkRecipe(r benchMLRecipe) error {
	st, err := mljob.NewStage(r.stage, r.params)
	if err != nil {
		return err
	}
	if _, ok := st.(ml.Estimator); !ok {
		return fmt.Errorf("%s is not an estimator", r.stage)
	}
	return nil
}
