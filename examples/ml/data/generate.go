//go:build ignore

// Generate writes the small synthetic data sets of the examples/ml
// configs, deterministically (a fixed PCG seed): go generate ./examples/ml/...
//
//	housing.csv   400 rows: size, rooms, age, distance → price (linear, noisy)
//	documents.csv 300 rows: counts of 6 words → topic (sports, politics, science)
//	claims.csv    500 rows: age, exposure, urban → claims (Poisson, log link)
//	transactions.csv 400 rows: amount, hour, distance, velocity → fraud 0/1
//	ratings.csv   about 900 rows: user, item, rating 1..5 (a rank-3 model, noisy)
package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
)

func main() {
	r := rand.New(rand.NewPCG(2026, 10))
	write("housing.csv", "size,rooms,age,distance,price", 400, func() string {
		size := 50 + r.Float64()*150
		rooms := float64(1 + r.IntN(6))
		age := r.Float64() * 80
		dist := r.Float64() * 30
		price := 40 + 1.8*size + 12*rooms - 0.6*age - 2.5*dist + r.NormFloat64()*15
		return fmt.Sprintf("%.2f,%g,%.1f,%.2f,%.2f", size, rooms, age, dist, price)
	})
	topics := []string{"sports", "politics", "science"}
	rates := [][]float64{{6, 1, 0.5, 3, 0.5, 1}, {1, 5, 2, 0.5, 1, 3}, {0.5, 1, 5, 1, 4, 1}}
	write("documents.csv", "w_game,w_vote,w_data,w_team,w_study,w_law,topic", 300, func() string {
		k := r.IntN(3)
		var cells []string
		for _, lam := range rates[k] {
			cells = append(cells, fmt.Sprint(poisson(r, lam)))
		}
		return strings.Join(cells, ",") + "," + topics[k]
	})
	write("claims.csv", "age,exposure,urban,claims", 500, func() string {
		age := 18 + r.Float64()*60
		exposure := 0.2 + r.Float64()*0.8
		urban := float64(r.IntN(2))
		mu := math.Exp(-1.2 + 0.015*(50-age) + 1.1*exposure + 0.5*urban)
		return fmt.Sprintf("%.1f,%.3f,%g,%d", age, exposure, urban, poisson(r, mu))
	})
	write("transactions.csv", "amount,hour,distance,velocity,fraud", 400, func() string {
		fraud := r.Float64() < 0.3
		amount, hour, dist, vel := 40+r.NormFloat64()*20, 8+r.Float64()*12, r.Float64()*20, r.Float64()*3
		if fraud {
			amount, hour, dist, vel = 80+r.NormFloat64()*45, r.Float64()*24, 4+r.Float64()*40, 1+r.Float64()*4
		}
		f := 0
		if fraud {
			f = 1
		}
		return fmt.Sprintf("%.2f,%.1f,%.2f,%.2f,%d", math.Abs(amount), hour, dist, vel, f)
	})
	// Ratings from their own generator, so that the sets above stay as
	// they were.
	rr := rand.New(rand.NewPCG(2026, 11))
	const rank = 3
	factor := func() []float64 {
		f := make([]float64, rank)
		for i := range f {
			f[i] = rr.NormFloat64() * 0.9
		}
		return f
	}
	users, items := make([][]float64, 60), make([][]float64, 40)
	for i := range users {
		users[i] = factor()
	}
	for i := range items {
		items[i] = factor()
	}
	var rows []string
	for u := range users {
		for i := range items {
			if rr.Float64() < 0.38 {
				v := 3.2 + rr.NormFloat64()*0.4
				for j := range rank {
					v += users[u][j] * items[i][j]
				}
				rows = append(rows, fmt.Sprintf("%d,%d,%g", 101+u, 7*i, math.Max(1, math.Min(5, math.Round(v)))))
			}
		}
	}
	rr.Shuffle(len(rows), func(a, b int) { rows[a], rows[b] = rows[b], rows[a] })
	next := 0
	write("ratings.csv", "user,item,rating", len(rows), func() string { next++; return rows[next-1] })
}

// poisson draws from Poisson(lam) by Knuth's method (small lam).
func poisson(r *rand.Rand, lam float64) int {
	l, k, p := math.Exp(-lam), 0, 1.0
	for {
		p *= r.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

func write(name, header string, n int, row func() string) {
	var b strings.Builder
	b.WriteString(header + "\n")
	for range n {
		b.WriteString(row() + "\n")
	}
	if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
