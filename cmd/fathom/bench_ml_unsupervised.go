package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/cluster"
	"github.com/fathom-ml/fathom/ml/decomp"
)

// unsupervisedResult fills res from a clustering or decomposition model
// (inertia, explained variance) and reports whether m was one.
func unsupervisedResult(m ml.Model, res *benchMLResult) (bool, error) {
	switch m := m.(type) {
	case *cluster.KMeansModel:
		res.Inertia = m.TrainingCost
		return true, nil
	case *decomp.PCAModel:
		s := 0.0
		for _, v := range m.ExplainedVariance {
			s += v
		}
		res.ExplainedVarianceRatioSum = s
		return true, nil
	}
	return false, nil
}

// readCenters reads k-means starting centers, one per line, numbers
// separated by commas or spaces, as --param settings of k and
// initialCenters.
func readCenters(path string) ([]string, error) {
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
