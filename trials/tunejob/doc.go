// Package tunejob is `fathom tune` for the project's two kinds of
// config: it tells a fathom train config (model:) from a fathom ml fit
// config (pipeline:), builds the trials.Target that runs a trial of
// either — the config with the trial's `--set` overrides, trained as
// `fathom train` or `fathom ml fit` would train it alone — and runs the
// search with trials.Search. Package trials knows no trainer; this
// package is where the search meets train/job and ml/mljob.
//
//	err := tunejob.Search(ctx, "examples/iris.yaml", tunejob.Options{
//		SearchOptions: trials.SearchOptions{Grid: []string{"optimizer.lr=0.1,0.01"}, Stdout: os.Stdout, Stderr: os.Stderr},
//	})
package tunejob
