package runlog

// The files of a run directory (a training job's output.dir, an ml fit's
// or a tuning's output directory). Every writer and reader of a run's
// files takes their names from here.
const (
	// MetricsFile holds one row per finished epoch (MetricsCSV, appended
	// as the epochs finish).
	MetricsFile = "metrics.csv"
	// DashboardFile holds everything the job's dashboard board held (its
	// state as JSON, written by package dashboard): what `fathom dashboard
	// RUN_DIR` replays, steps included.
	DashboardFile = "dashboard.json"
	// CurvesFile holds the learning curves (runlog/plot.Curves).
	CurvesFile = "curves.png"
	// ModelFile is the trained model (a safetensors model file).
	ModelFile = "model.safetensors"
	// CheckpointFile is the training checkpoint a run resumes from.
	CheckpointFile = "checkpoint.safetensors"
	// FitResultFile holds an ml fit's result: its metrics, fit time,
	// rows and tuning results as JSON.
	FitResultFile = "metrics.json"
	// TrialsTableFile, TrialsLogFile and TrialsPlotFile are a
	// hyperparameter search's results: the table as CSV, one JSON line
	// per trial, and their scatter (runlog/plot.Scatter).
	TrialsTableFile = "trials.csv"
	TrialsLogFile   = "trials.jsonl"
	TrialsPlotFile  = "trials.png"
)
