package main

import (
	"encoding/json"
	"fmt"
	"os"
)

// printJSON writes v as one JSON line on stdout.
func printJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(os.Stdout, "%s\n", b)
	return err
}
