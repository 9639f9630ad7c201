// Package httplimit puts the limits every HTTP listener of coordbench
// needs on a net/http server: the request line and headers within a
// header timeout, a request body within a body timeout (from the end of
// the headers, lifted once the body is read, so that a handler that
// waits long is not cut), a bounded body, the answer written within a
// write timeout from its first byte, idle keep-alive connections closed,
// a bound on the connections open at once, and, when a check is set, the
// request refused on its headers before any byte of its body is read.
//
// Without them a client holds a connection (and a goroutine) forever by
// sending its body a byte at a time, or by not reading the answer, and
// enough such clients exhaust the process.
//
//	cfg := httplimit.Config{MaxBody: 16 << 20, Authorized: httplimit.Bearer(token)}
//	srv := httplimit.Server(handler, cfg)
//	go srv.Serve(httplimit.Listener(ln, cfg))
package httplimit

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
)

// Defaults of Config.
const (
	DefaultHeaderTimeout = 10 * time.Second
	DefaultBodyTimeout   = 30 * time.Second
	DefaultWriteTimeout  = 30 * time.Second
	DefaultIdleTimeout   = 2 * time.Minute
	DefaultMaxConns      = 256
	DefaultMaxBody       = 1 << 20
)

// Config are the limits of one listener; a zero field takes its default.
type Config struct {
	HeaderTimeout time.Duration
	// BodyTimeout bounds the reading of a request body, from the end of
	// the headers.
	BodyTimeout time.Duration
	// WriteTimeout bounds the writing of an answer, from its first byte
	// (a handler may take as long as it needs before).
	WriteTimeout time.Duration
	IdleTimeout  time.Duration
	// MaxConns bounds the connections open at once (Listener); more wait
	// in the listen queue, unaccepted.
	MaxConns int
	// MaxBody bounds a request body, in bytes: a handler reading more
	// gets an *http.MaxBytesError.
	MaxBody int64
	// Authorized, if set, is asked about each request's headers before
	// its body is read: a request it refuses is answered 401, and its
	// connection closed, its body unread.
	Authorized func(*http.Request) bool
	// Realm names the server in the WWW-Authenticate header of a 401.
	Realm string
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.HeaderTimeout, DefaultHeaderTimeout)
	def(&c.BodyTimeout, DefaultBodyTimeout)
	def(&c.WriteTimeout, DefaultWriteTimeout)
	def(&c.IdleTimeout, DefaultIdleTimeout)
	if c.MaxConns <= 0 {
		c.MaxConns = DefaultMaxConns
	}
	if c.MaxBody <= 0 {
		c.MaxBody = DefaultMaxBody
	}
	if c.Realm == "" {
		c.Realm = "coordbench"
	}
	return c
}

// Server returns an http.Server that serves h within cfg's limits. Serve
// it on Listener(ln, cfg).
func Server(h http.Handler, cfg Config) *http.Server {
	cfg = cfg.withDefaults()
	return &http.Server{Handler: Handler(h, cfg), ReadHeaderTimeout: cfg.HeaderTimeout, IdleTimeout: cfg.IdleTimeout}
}

// Listener bounds the connections accepted from ln to cfg.MaxConns at
// once.
func Listener(ln net.Listener, cfg Config) net.Listener {
	return netutil.LimitListener(ln, cfg.withDefaults().MaxConns)
}

// Handler is h within cfg's per-request limits (Server uses it; a server
// of its own, such as one a test starts, may too).
func Handler(h http.Handler, cfg Config) http.Handler {
	cfg = cfg.withDefaults()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if cfg.Authorized != nil && !cfg.Authorized(r) {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf("Bearer realm=%q", cfg.Realm))
			// Close rather than drain: net/http would otherwise read up to
			// 256 KiB of the body, before and after answering.
			w.Header().Set("Connection", "close")
			rc.SetReadDeadline(time.Now())
			rc.SetWriteDeadline(time.Now().Add(cfg.WriteTimeout))
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		if r.ContentLength != 0 {
			rc.SetReadDeadline(time.Now().Add(cfg.BodyTimeout))
			r.Body = &body{ReadCloser: http.MaxBytesReader(w, r.Body, cfg.MaxBody), rc: rc}
		}
		h.ServeHTTP(&writer{ResponseWriter: w, rc: rc, timeout: cfg.WriteTimeout}, r)
	})
}

// body lifts the body's read deadline once the body is read to its end
// (so that the connection's next request is not cut by it).
type body struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) && !b.done {
		b.done = true
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// writer sets the write deadline at the answer's first byte.
type writer struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	started bool
}

func (w *writer) start() {
	if !w.started {
		w.started = true
		w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
	}
}

func (w *writer) WriteHeader(code int) {
	w.start()
	w.ResponseWriter.WriteHeader(code)
}

func (w *writer) Write(p []byte) (int, error) {
	w.start()
	return w.ResponseWriter.Write(p)
}

// Flush implements http.Flusher.
func (w *writer) Flush() {
	w.start()
	w.rc.Flush()
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Bearer is the check of "Authorization: Bearer TOKEN", in constant time
// in the token's content. An empty token refuses every request.
func Bearer(token string) func(*http.Request) bool {
	want := []byte("Bearer " + token)
	return func(r *http.Request) bool {
		return token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) == 1
	}
}
