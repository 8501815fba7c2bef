// Package trials is the hyperparameter search behind `fathom tune`: it
// expands a search space into trials, runs them concurrently, stops weak
// ones early, and writes the results. It knows no trainer: a trial is run
// by an Objective (package trials/tunejob wires `fathom train` and `fathom ml fit`
// configs into one), which makes the package testable without training.
//
// # Space
//
// A Space holds grid axes (ParseGrid: "key=v1,v2,...", every combination,
// the last axis fastest) and random axes (ParseRandom: "key=dist(...)",
// drawn N times from a PCG stream seeded by Space.Seed; draw i depends
// on the seed and i alone). Keys are a config's dotted keys, values YAML
// text: a Trial is a list of `--set` overrides.
//
// # Running
//
// Run starts Options.Parallel workers that take trials from a queue
// (package comm/workqueue) until it is empty: workqueue.Local serves one
// process; Shared serves every process of a distributed job (`fathom run
// -n N`, several hosts), joined with package comm/join: its work queue
// over the job's store hands out the next trial to whichever worker asks
// first, so fast workers never wait for slow ones, and results are set
// under per-trial keys that rank 0 collects. A trial's result depends only
// on its params: the runner shares nothing between trials but the queue.
//
//	j, err := join.FromEnv(ctx, join.Options{Group: true, Store: true})
//	...
//	o := trials.Options{Trials: list, Objective: obj, Rank: j.Rank()}
//	if j.Distributed() {
//		sh := trials.NewShared(j.Store, len(list))
//		o.Queue = sh.Queue()
//	}
//	mine, err := trials.Run(ctx, o)
//
// # Early stopping
//
// ASHA is asynchronous successive halving (Li, Jamieson, Rostamizadeh,
// Gonina, Ben-tzur, Hardt, Recht, Talwalkar: "A System for Massively
// Parallel Hyperparameter Tuning", MLSys 2020) in the stopping form that
// Ray Tune's ASHAScheduler uses: rungs at MinEpochs·Eta^k epochs; a trial
// reaching a rung records its metric and continues only when the metric
// is in the best 1/Eta of those recorded at the rung so far (Promote). No
// trial waits at a rung. With a Shared search the rungs live in the store, so
// every process compares against every trial.
//
// # Results
//
// WriteCSV and WriteJSONL write the table (trial, params, metric, epochs,
// status, seconds, rank, extra figures, error); WritePlot draws the metric
// by trial and against each numeric key (package runlog/plot);
// Best picks the best completed trial.
//
// # Search
//
// Search is a whole `fathom tune`: it expands the space of its
// SearchOptions, builds the Target (the metric, its direction, the
// epochs and the Objective), joins the job when the environment names
// several processes (through package comm/join; every process then takes
// trials from one Shared queue), shows the trials on a
// dashboard board, runs them, and on rank 0 writes trials.csv,
// trials.jsonl, trials.png, best.safetensors (brought from the process
// that trained it) and summary.json (Summary).
package trials
