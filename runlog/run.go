package runlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxRunFileBytes bounds the files ReadRun reads: a DashboardFile holds a
// bounded number of step points and a metrics file one line an epoch, so
// anything larger is not one of them.
const maxRunFileBytes = 256 << 20

// A Run is what a finished (or interrupted) run's directory holds, read
// back by ReadRun.
type Run struct {
	// Name names the run after its directory (RunName).
	Name string
	// MetricsPath is the metrics file read ("" without one), Metrics its
	// rows.
	MetricsPath string
	Metrics     MetricsLog
	// DashboardPath is the dashboard state read ("" without one) and
	// Dashboard its bytes: package dashboard's State as JSON, which
	// holds the steps as well as the epochs.
	DashboardPath string
	Dashboard     []byte
}

// ReadRun reads a run: path is a run directory (its DashboardFile and its
// MetricsFile, whichever it has; at least one), or one of those files (a
// file named *.json is a dashboard state, any other a metrics file).
// This is the one reader of run directories: the dashboard's replay and
// compare read runs through it.
func ReadRun(path string) (*Run, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	run := &Run{Name: RunName(path)}
	if !st.IsDir() {
		if strings.HasSuffix(path, ".json") {
			run.DashboardPath = path
		} else {
			run.MetricsPath = path
		}
	} else {
		for _, f := range []struct {
			name string
			to   *string
		}{{DashboardFile, &run.DashboardPath}, {MetricsFile, &run.MetricsPath}} {
			p := filepath.Join(path, f.name)
			if _, err := os.Stat(p); err == nil {
				*f.to = p
			} else if !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
		}
		if run.DashboardPath == "" && run.MetricsPath == "" {
			return nil, fmt.Errorf("%s: no %s or %s: not a run directory", path, DashboardFile, MetricsFile)
		}
	}
	if run.DashboardPath != "" {
		if run.Dashboard, err = readBounded(run.DashboardPath); err != nil {
			return nil, err
		}
	}
	if run.MetricsPath != "" {
		data, err := readBounded(run.MetricsPath)
		if err != nil {
			return nil, err
		}
		if run.Metrics, err = ReadMetricsCSV(bytes.NewReader(data)); err != nil {
			return nil, fmt.Errorf("%s: %w", run.MetricsPath, err)
		}
	}
	return run, nil
}

// RunName names a run after its directory: path's base name, or that of
// the directory holding the file path.
func RunName(path string) string {
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		path = filepath.Dir(path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	return filepath.Base(abs)
}

func readBounded(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRunFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(data) > maxRunFileBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB: not a run's file", file, maxRunFileBytes>>20)
	}
	return data, nil
}
