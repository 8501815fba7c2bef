package data

import (
	"bytes"
	_ "embed"
)

// irisCSV is Fisher's Iris data set (R. A. Fisher, "The use of multiple
// measurements in taxonomic problems", Annals of Eugenics 7(2), 1936), 150
// rows of sepal and petal length and width in cm, 50 of each species. It is the
// version with Fisher's published values for rows 35 and 38, as shipped by
// scikit-learn (sklearn/datasets/data/iris.csv), converted to a named header
// and species names.
//
//go:embed iris.csv
var irisCSV []byte

// IrisCSV returns a copy of the embedded Iris data as CSV text, with the header
// sepal_length,sepal_width,petal_length,petal_width,species.
func IrisCSV() []byte { return bytes.Clone(irisCSV) }

// Iris returns Fisher's Iris data set, embedded in the binary: 150 rows, four
// features (sepal_length, sepal_width, petal_length, petal_width, in cm) and
// the species as class labels (setosa, versicolor, virginica; 50 rows each).
func Iris() (*Table, error) {
	return ParseCSV(bytes.NewReader(irisCSV), "iris.csv", CSVOptions{Label: "species"})
}
