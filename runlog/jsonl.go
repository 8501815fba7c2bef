package runlog

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// WriteJSONLine writes r as one line of JSON (metrics that do not apply
// are left out, as JSON has no NaN).
func WriteJSONLine(w io.Writer, r Epoch) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// AppendJSONLine appends r as one line to the JSON lines file at path,
// creating it if needed: a log that survives a crash up to the last
// finished epoch.
func AppendJSONLine(path string, r Epoch) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if err := WriteJSONLine(f, r); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

// ReadJSONLines reads the records of a JSON lines file written by
// AppendJSONLine or WriteJSONLine.
func ReadJSONLines(r io.Reader) ([]Epoch, error) {
	var out []Epoch
	dec := json.NewDecoder(r)
	for dec.More() {
		var e Epoch
		if err := dec.Decode(&e); err != nil {
			return out, fmt.Errorf("record %d: %w", len(out)+1, err)
		}
		out = append(out, e)
	}
	return out, nil
}
