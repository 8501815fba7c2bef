package dashboard

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

//go:embed assets
var assets embed.FS

// ErrNoToken is returned by Listen for an address beyond loopback without
// a token.
var ErrNoToken = errors.New("dashboard: a token is required to serve beyond loopback")

// Options configure a Server.
type Options struct {
	// Addr is the address to bind, host:port; "" means 127.0.0.1 on a
	// free port. A host that is not loopback (":8080" is every interface)
	// requires Token.
	Addr string
	// Token, when set, is required from every request: "Authorization:
	// Bearer TOKEN", or "?token=TOKEN", which also sets a cookie for the
	// page's later requests.
	Token string
	// MaxSteps bounds the step points kept (DefaultMaxSteps when 0).
	MaxSteps int
	// Board is the board to serve; nil makes a new one.
	Board *Board
}

// A Server serves a Board over HTTP until Close.
type Server struct {
	board *Board
	ln    net.Listener
	http  *http.Server
	url   string

	closing   chan struct{}
	closeOnce sync.Once
}

// Listen binds the address of o and serves a board on it in the
// background.
func Listen(o Options) (*Server, error) {
	b := o.Board
	if b == nil {
		b = NewBoard(o.MaxSteps)
	}
	return listen(o, b, func(ho HandlerOptions) http.Handler { return Handler(b, ho) })
}

// ListenRuns serves finished runs for replay (`fathom dashboard`): one
// run's page at / as a live job's; several runs overlaid on a page that
// compares them at /, each run's own page at /runs/N/.
func ListenRuns(o Options, runs []Run) (*Server, error) {
	if len(runs) == 0 {
		return nil, errors.New("dashboard: no runs to serve")
	}
	return listen(o, runs[0].Board, func(ho HandlerOptions) http.Handler { return RunsHandler(runs, ho) })
}

// listen binds o's address and serves the handler h makes on it.
func listen(o Options, b *Board, h func(HandlerOptions) http.Handler) (*Server, error) {
	addr := o.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	ta := ln.Addr().(*net.TCPAddr)
	loopback := ta.IP.IsLoopback()
	if !loopback && o.Token == "" {
		ln.Close()
		return nil, fmt.Errorf("%w (%s)", ErrNoToken, addr)
	}
	s := &Server{board: b, ln: ln, closing: make(chan struct{})}
	s.url = "http://" + net.JoinHostPort(urlHost(ta.IP), fmt.Sprint(ta.Port)) + "/"
	s.http = &http.Server{Handler: h(HandlerOptions{Token: o.Token, Loopback: loopback, closing: s.closing}),
		ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	go s.http.Serve(ln)
	return s, nil
}

// urlHost is the host the page's address names: the bound IP, or this
// machine's name when bound to every interface.
func urlHost(ip net.IP) string {
	if !ip.IsUnspecified() {
		return ip.String()
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "127.0.0.1"
}

// Board returns the board the server serves.
func (s *Server) Board() *Board { return s.board }

// URL returns the page's address (without any token).
func (s *Server) URL() string { return s.url }

// Addr returns the bound address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Close ends the event streams and stops the server, waiting up to a
// second for requests in flight.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { close(s.closing) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.http.Shutdown(ctx); err != nil {
		return s.http.Close()
	}
	return nil
}

// HandlerOptions configure Handler.
type HandlerOptions struct {
	// Token, when set, is required from every request.
	Token string
	// Loopback restricts the Host header to loopback names (localhost,
	// 127.0.0.1, [::1]), which keeps other web sites from reading the page
	// through DNS rebinding.
	Loopback bool
	// Throttle is the shortest time between two writes to an event
	// stream (default 100 ms); events in between are sent together.
	Throttle time.Duration
	// MaxStreams bounds the event streams open at once (default 32);
	// more are refused with 503.
	MaxStreams int

	closing <-chan struct{}
}

// Handler returns the dashboard's HTTP handler for b: read-only (GET and
// HEAD), with the token check of o.
func Handler(b *Board, o HandlerOptions) http.Handler {
	return guard(boardMux(b, &o), o)
}

// boardMux serves one board: the page, /api/state and /events. It sets
// o's defaults.
func boardMux(b *Board, o *HandlerOptions) *http.ServeMux {
	if o.Throttle <= 0 {
		o.Throttle = 100 * time.Millisecond
	}
	if o.MaxStreams <= 0 {
		o.MaxStreams = 32
	}
	streams := make(chan struct{}, o.MaxStreams)
	static, _ := fs.Sub(assets, "assets")
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServerFS(static))
	mux.HandleFunc("/favicon.ico", noIcon)
	mux.HandleFunc("/api/state", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		json.NewEncoder(w).Encode(b.Snapshot())
	})
	mux.HandleFunc("/events", func(w http.ResponseWriter, r *http.Request) {
		select {
		case streams <- struct{}{}:
			defer func() { <-streams }()
			serveEvents(w, r, b, *o)
		default:
			http.Error(w, "too many event streams", http.StatusServiceUnavailable)
		}
	})
	return mux
}

// noIcon answers a browser's request for /favicon.ico (made for pages
// without an icon link, such as an error page) with no content rather
// than a 404 in its console.
func noIcon(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }

// guard wraps a dashboard handler in what every request passes: GET or
// HEAD only, a loopback Host on loopback, the token when one is set, and
// headers that keep the page from being framed or sniffed.
func guard(next http.Handler, o HandlerOptions) http.Handler {
	var want [32]byte
	if o.Token != "" {
		want = sha256.Sum256([]byte(o.Token))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "read-only", http.StatusMethodNotAllowed)
			return
		}
		if o.Loopback && !loopbackHost(r.Host) {
			http.Error(w, "unexpected Host", http.StatusForbidden)
			return
		}
		if o.Token != "" {
			got, fromQuery := requestToken(r)
			sum := sha256.Sum256([]byte(got))
			if got == "" || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
				h.Set("WWW-Authenticate", `Bearer realm="fathom dashboard"`)
				http.Error(w, "token required", http.StatusUnauthorized)
				return
			}
			if fromQuery {
				http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: got, Path: "/", HttpOnly: true,
					SameSite: http.SameSiteStrictMode})
			}
		}
		next.ServeHTTP(w, r)
	})
}

const tokenCookie = "fathom_dashboard_token"

// requestToken returns the token a request presents and whether it came
// in the query string.
func requestToken(r *http.Request) (string, bool) {
	if a := r.Header.Get("Authorization"); a != "" {
		if t, ok := strings.CutPrefix(a, "Bearer "); ok {
			return strings.TrimSpace(t), false
		}
	}
	if t := r.URL.Query().Get("token"); t != "" {
		return t, true
	}
	if c, err := r.Cookie(tokenCookie); err == nil {
		return c.Value, false
	}
	return "", false
}

// loopbackHost reports whether a Host header names this machine by a
// loopback name.
func loopbackHost(host string) bool {
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	h = strings.Trim(h, "[]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// heartbeat is how often an idle event stream gets a comment line, which
// finds closed connections and keeps proxies from timing out.
const heartbeat = 15 * time.Second

// writeTimeout bounds one write to an event stream.
const writeTimeout = 30 * time.Second

// serveEvents streams the board as server-sent events: "reset" first (a
// reconnecting page starts over), then everything so far, then what
// comes, at most one write per throttle interval.
func serveEvents(w http.ResponseWriter, r *http.Request, b *Board, o HandlerOptions) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	if _, err := fmt.Fprint(w, "retry: 2000\nevent: reset\ndata: {}\n\n"); err != nil {
		return
	}
	// A reader that stops reading frees its stream within writeTimeout.
	rc := http.NewResponseController(w)
	c := newCursor()
	beat := time.NewTicker(heartbeat)
	defer beat.Stop()
	ctx := r.Context()
	for {
		changed := b.wait()
		rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		for _, e := range b.news(&c) {
			if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.name, e.data); err != nil {
				return
			}
		}
		fl.Flush()
		select {
		case <-changed:
		case <-beat.C:
			rc.SetWriteDeadline(time.Now().Add(writeTimeout))
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil {
				return
			}
			fl.Flush()
			continue
		case <-ctx.Done():
			return
		case <-o.closing:
			return
		}
		select { // gather what comes within the throttle interval
		case <-time.After(o.Throttle):
		case <-ctx.Done():
			return
		case <-o.closing:
			return
		}
	}
}
