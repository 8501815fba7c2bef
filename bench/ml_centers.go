package bench

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ReadCenters reads k-means starting centers, one per line, numbers
// separated by commas or spaces, as MLOptions.Params settings of k and
// initialCenters (`fathom bench ml kmeans --init-centers FILE`).
func ReadCenters(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--init-centers: %w", err)
	}
	defer f.Close()
	var rows []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	width := -1
	for line := 1; sc.Scan(); line++ {
		fields := strings.FieldsFunc(sc.Text(), func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
		if len(fields) == 0 {
			continue
		}
		for i, s := range fields {
			if _, err := strconv.ParseFloat(s, 64); err != nil {
				return nil, fmt.Errorf("--init-centers %s: line %d, field %d: %q is not a number", path, line, i+1, s)
			}
		}
		if width >= 0 && len(fields) != width {
			return nil, fmt.Errorf("--init-centers %s: line %d has %d numbers, the lines before %d", path, line, len(fields), width)
		}
		width = len(fields)
		rows = append(rows, "["+strings.Join(fields, ",")+"]")
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--init-centers %s: %w", path, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("--init-centers %s: no centers", path)
	}
	return []string{"k=" + strconv.Itoa(len(rows)), "initialCenters=[" + strings.Join(rows, ",") + "]"}, nil
}
