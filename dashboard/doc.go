// Package dashboard serves the live web page of a job: its curves, its
// throughput, its workers, its config and machine, pushed to the browser as
// server-sent events while the job runs.
//
// A Board holds what a job has reported so far: one RunInfo, every Epoch,
// the Step points (downsampled to a bounded number, see Options.MaxSteps),
// the Worker of each rank, the Trial rows of a hyperparameter search
// (`fathom tune`: a table and a scatter of the metric by trial on the
// page), and how the run ended. Its methods are safe for
// concurrent use and cheap enough to call from a training loop's hooks.
// A Server binds a Board to an address:
//
//	srv, err := dashboard.Listen(dashboard.Options{}) // 127.0.0.1, a free port
//	if err != nil {
//		return err
//	}
//	defer srv.Close()
//	fmt.Fprintln(os.Stderr, "dashboard:", srv.URL())
//	b := srv.Board()
//	b.SetInfo(dashboard.RunInfo{Title: "iris", Epochs: 60, Machine: dashboard.LocalMachine()})
//	b.AddStep(dashboard.Step{Step: 1, Epoch: 1, Loss: 1.1, LR: 0.01})
//	b.AddEpoch(dashboard.Epoch{Epoch: 1, Steps: 7, Train: map[string]float64{"loss": 1.0}})
//	b.Finish(nil)
//
// The server answers GET and HEAD only: / (the page, with its scripts and
// the vendored uPlot charting library embedded in the binary, so it works
// offline), /events (server-sent events: everything since the start on
// connect, then live) and /api/state (a JSON snapshot). It binds to
// loopback unless told another address; then Options.Token is required
// from every request (Authorization: Bearer, or ?token= once, which sets
// a cookie), compared in constant time and never logged.
//
// A finished run replays from its directory: WriteState saves a board's
// State (runlog.DashboardFile), LoadRun reads a run back through
// runlog.ReadRun (the state, else the epochs of its metrics.csv:
// MetricsState) and RunsHandler serves one run or several to compare.
//
// The package knows nothing of the trainer: train/job turns the trainer's
// hooks into these plain events.
package dashboard
