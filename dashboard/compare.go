package dashboard

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
)

// A Run is a named board: one of the runs `fathom dashboard` replays.
type Run struct {
	Name  string
	Board *Board
}

// RunState is one run in /api/runs: its name, the path of its own page,
// and its state.
type RunState struct {
	Name  string `json:"name"`
	Page  string `json:"page"`
	State State  `json:"state"`
}

// RunsHandler serves runs for replay: with one run, its page as Handler
// does; with several, a page at / that overlays their curves and lists
// them (/api/runs has their states), each run's own page at /runs/N/
// (N from 0, in the order given).
func RunsHandler(runs []Run, o HandlerOptions) http.Handler {
	if len(runs) == 1 {
		return Handler(runs[0].Board, o)
	}
	static, _ := fs.Sub(assets, "assets")
	files := http.FileServerFS(static)
	mux := http.NewServeMux()
	muxes := make([]http.Handler, len(runs))
	for i, r := range runs {
		ro := o
		muxes[i] = http.StripPrefix(fmt.Sprintf("/runs/%d", i), boardMux(r.Board, &ro))
	}
	mux.HandleFunc("/runs/", func(w http.ResponseWriter, r *http.Request) {
		rest := strings.TrimPrefix(r.URL.Path, "/runs/")
		num, _, slash := strings.Cut(rest, "/")
		i, err := strconv.Atoi(num)
		if err != nil || i < 0 || i >= len(runs) || strconv.Itoa(i) != num {
			http.NotFound(w, r)
			return
		}
		if !slash { // the page's relative links need the slash
			http.Redirect(w, r, "/runs/"+num+"/", http.StatusMovedPermanently)
			return
		}
		muxes[i].ServeHTTP(w, r)
	})
	mux.HandleFunc("/api/runs", func(w http.ResponseWriter, r *http.Request) {
		out := make([]RunState, len(runs))
		for i, run := range runs {
			out[i] = RunState{Name: run.Name, Page: fmt.Sprintf("runs/%d/", i), State: run.Board.Snapshot()}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/compare.html"
		files.ServeHTTP(w, r2)
	})
	mux.Handle("/", files)
	mux.HandleFunc("/favicon.ico", noIcon)
	return guard(mux, o)
}
