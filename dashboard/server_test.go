package dashboard

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// sse reads server-sent events from a stream.
type sse struct {
	r *bufio.Reader
}

type sseEvent struct{ name, data string }

// next returns the next event, skipping comments.
func (s *sse) next() (sseEvent, error) {
	var e sseEvent
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return e, err
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
			if e.name != "" || e.data != "" {
				return e, nil
			}
		case strings.HasPrefix(line, "event: "):
			e.name = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			e.data += line[len("data: "):]
		}
	}
}

// openEvents connects to url's /events for at most 10 s.
func openEvents(t *testing.T, url string) *sse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", url+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("/events: %s, %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	return &sse{bufio.NewReader(resp.Body)}
}

// tally counts what a stream delivered.
type tally struct {
	info, epochs, done int
	steps              []float64
}

// readUntil reads events into tl until stop says so (at most 1000 events).
func readUntil(t *testing.T, s *sse, tl *tally, stop func(*tally) bool) {
	t.Helper()
	for i := 0; i < 1000 && !stop(tl); i++ {
		e, err := s.next()
		if err != nil {
			t.Fatalf("after %+v: %v", *tl, err)
		}
		switch e.name {
		case "reset":
			*tl = tally{}
		case "info":
			tl.info++
		case "epoch":
			tl.epochs++
		case "done":
			tl.done++
		case "steps":
			var cols map[string][]float64
			if err := json.Unmarshal([]byte(e.data), &cols); err != nil {
				t.Fatalf("steps event: %v", err)
			}
			tl.steps = append(tl.steps, cols["step"]...)
		}
	}
	if !stop(tl) {
		t.Fatalf("stream ended early: %+v", *tl)
	}
}

func TestEventsReplayThenLive(t *testing.T) {
	b := NewBoard(0)
	b.SetInfo(RunInfo{Title: "test", Epochs: 2})
	for i := 1; i <= 10; i++ {
		b.AddStep(Step{Step: i, Epoch: 1, Loss: 1 / float64(i)})
	}
	b.AddEpoch(Epoch{Epoch: 1, Steps: 10, Train: map[string]float64{"loss": 0.3}})
	srv := httptest.NewServer(Handler(b, HandlerOptions{Throttle: time.Millisecond}))
	t.Cleanup(srv.Close) // after the streams' cleanups close them

	// Two clients: both get everything so far.
	s1, s2 := openEvents(t, srv.URL), openEvents(t, srv.URL)
	var t1, t2 tally
	replayed := func(tl *tally) bool { return tl.info == 1 && tl.epochs == 1 && len(tl.steps) == 10 }
	readUntil(t, s1, &t1, replayed)
	readUntil(t, s2, &t2, replayed)

	// Then what comes, live, and the end.
	for i := 11; i <= 20; i++ {
		b.AddStep(Step{Step: i, Epoch: 2, Loss: 1 / float64(i)})
	}
	b.AddEpoch(Epoch{Epoch: 2, Steps: 20, Train: map[string]float64{"loss": 0.1}})
	b.Finish(nil)
	finished := func(tl *tally) bool { return tl.done == 1 }
	readUntil(t, s1, &t1, finished)
	readUntil(t, s2, &t2, finished)
	for _, tl := range []tally{t1, t2} {
		if tl.epochs != 2 || len(tl.steps) != 20 {
			t.Errorf("got %d epochs, %d steps; want 2 and 20", tl.epochs, len(tl.steps))
		}
		for i, s := range tl.steps {
			if s != float64(i+1) {
				t.Fatalf("step %d is %g: want each step once, in order", i, s)
			}
		}
	}

	// A client that comes after the end gets the whole run.
	var t3 tally
	readUntil(t, openEvents(t, srv.URL), &t3, finished)
	if t3.info != 1 || t3.epochs != 2 || len(t3.steps) != 20 {
		t.Errorf("late client: %+v", t3)
	}
}

// TestEventsBounded: a long run replays at most MaxSteps points, in
// events of bounded size.
func TestEventsBounded(t *testing.T) {
	const max, steps = 1000, 100000
	b := NewBoard(max)
	for i := 1; i <= steps; i++ {
		b.AddStep(Step{Step: i, Loss: 1})
	}
	b.Finish(nil)
	srv := httptest.NewServer(Handler(b, HandlerOptions{}))
	t.Cleanup(srv.Close)
	var tl tally
	readUntil(t, openEvents(t, srv.URL), &tl, func(tl *tally) bool { return tl.done == 1 })
	if len(tl.steps) > max || len(tl.steps) < max/2 || tl.steps[len(tl.steps)-1] != steps {
		t.Errorf("replayed %d points ending at step %g; want %d..%d ending at %d", len(tl.steps), tl.steps[len(tl.steps)-1], max/2, max, steps)
	}
}

func get(t *testing.T, method, url string, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return resp
}

func TestReadOnly(t *testing.T) {
	srv, err := Listen(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, path := range []string{"", "api/state", "events", "app.js"} {
		for _, m := range []string{"POST", "PUT", "DELETE", "PATCH"} {
			if r := get(t, m, srv.URL()+path, nil); r.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("%s /%s: %s, want 405", m, path, r.Status)
			}
		}
	}
}

func TestPageAndAssets(t *testing.T) {
	srv, err := Listen(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") {
		t.Errorf("URL %s: want loopback by default", srv.URL())
	}
	for _, test := range []struct{ path, ctype, has string }{
		{"", "text/html", "app.js"},
		{"app.js", "javascript", "EventSource"},
		{"vendor/uPlot.iife.min.js", "javascript", "uPlot"},
		{"vendor/uPlot.min.css", "text/css", ".uplot"},
		{"api/state", "application/json", `"steps":{"step":[]`},
	} {
		resp, err := http.Get(srv.URL() + test.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Type"), test.ctype) || !strings.Contains(string(body), test.has) {
			t.Errorf("/%s: %s %q, body has %q: %v", test.path, resp.Status, resp.Header.Get("Content-Type"), test.has, strings.Contains(string(body), test.has))
		}
	}
	// DNS rebinding: another site's name for this address is refused.
	if r := get(t, "GET", srv.URL(), map[string]string{"Host": "attacker.example:80"}); r.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Host: %s, want 403", r.Status)
	}
	if r := get(t, "GET", srv.URL(), map[string]string{"Host": "localhost"}); r.StatusCode != 200 {
		t.Errorf("Host localhost: %s, want 200", r.Status)
	}
}

func TestTokenBeyondLoopback(t *testing.T) {
	if _, err := Listen(Options{Addr: "0.0.0.0:0"}); !errors.Is(err, ErrNoToken) {
		t.Fatalf("every interface without a token: %v, want ErrNoToken", err)
	}
	const token = "s3cret-token"
	srv, err := Listen(Options{Addr: "0.0.0.0:0", Token: token})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if strings.Contains(srv.URL(), token) {
		t.Errorf("URL %s shows the token", srv.URL())
	}
	port := srv.Addr().String()[strings.LastIndex(srv.Addr().String(), ":")+1:]
	base := fmt.Sprintf("http://127.0.0.1:%s/", port)
	for _, test := range []struct {
		name   string
		path   string
		header map[string]string
		want   int
	}{
		{"none", "api/state", nil, 401},
		{"none, events", "events", nil, 401},
		{"none, page", "", nil, 401},
		{"wrong bearer", "api/state", map[string]string{"Authorization": "Bearer nope"}, 401},
		{"prefix of it", "api/state", map[string]string{"Authorization": "Bearer s3cret"}, 401},
		{"wrong query", "api/state?token=nope", nil, 401},
		{"wrong cookie", "api/state", map[string]string{"Cookie": tokenCookie + "=nope"}, 401},
		{"bearer", "api/state", map[string]string{"Authorization": "Bearer " + token}, 200},
		{"query", "?token=" + token, nil, 200},
		{"cookie", "api/state", map[string]string{"Cookie": tokenCookie + "=" + token}, 200},
		{"post with token", "api/state", map[string]string{"Authorization": "Bearer " + token}, 405},
	} {
		method := "GET"
		if strings.HasPrefix(test.name, "post") {
			method = "POST"
		}
		r := get(t, method, base+test.path, test.header)
		if r.StatusCode != test.want {
			t.Errorf("%s: %s, want %d", test.name, r.Status, test.want)
		}
		if test.name == "query" {
			var ok bool
			for _, c := range r.Cookies() {
				ok = ok || (c.Name == tokenCookie && c.HttpOnly && c.SameSite == http.SameSiteStrictMode)
			}
			if !ok {
				t.Errorf("a token in the query sets no HttpOnly, SameSite=Strict cookie: %v", r.Cookies())
			}
		}
	}
}

// TestCloseEndsStreams: Close returns promptly with a stream open.
func TestCloseEndsStreams(t *testing.T) {
	srv, err := Listen(Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := openEvents(t, strings.TrimSuffix(srv.URL(), "/"))
	if e, err := s.next(); err != nil || e.name != "reset" {
		t.Fatalf("first event %+v, %v; want reset", e, err)
	}
	start := time.Now()
	if err := srv.Close(); err != nil {
		t.Error(err)
	}
	if d := time.Since(start); d > 900*time.Millisecond {
		t.Errorf("Close took %v with a stream open", d)
	}
}

func TestEventStreamsBounded(t *testing.T) {
	srv := httptest.NewServer(Handler(NewBoard(0), HandlerOptions{MaxStreams: 2}))
	t.Cleanup(srv.Close)
	openEvents(t, srv.URL)
	openEvents(t, srv.URL)
	if r := get(t, "GET", srv.URL+"/events", nil); r.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a third stream: %s, want 503", r.Status)
	}
	if r := get(t, "GET", srv.URL+"/api/state", nil); r.StatusCode != 200 {
		t.Errorf("the state with the streams full: %s", r.Status)
	}
}
