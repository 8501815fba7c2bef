//go:build ignore

// Command generate writes linear.csv, the data of
// examples/linear-regression.yaml: 200 rows of two features drawn uniformly
// from [-2, 2] and the target y = 3·x1 − 2·x2 + 1 + ε, with ε normal of
// standard deviation 0.1, from a fixed seed (so the file is reproducible).
//
//	go run examples/data/generate.go
package main

import (
	"bufio"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
)

func main() {
	_, self, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(self), "linear.csv")
	r := rand.New(rand.NewPCG(2024, 7))
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "x1,x2,y")
	for range 200 {
		x1, x2 := 4*r.Float64()-2, 4*r.Float64()-2
		y := 3*x1 - 2*x2 + 1 + 0.1*r.NormFloat64()
		fmt.Fprintf(w, "%.4f,%.4f,%.4f\n", x1, x2, y)
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}
