package llm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/coordbench/coordbench/internal/opterr"
)

// StubScheme starts a base URL that names a stub model played in this
// process: "stub:POLICY", or "stub:POLICY?OPTION=VALUE&…" (for instance
// stub:generic?seed=3). Such a client sends its requests to the stub's
// http.Handler through an http.RoundTripper that calls it: no listener,
// no port, nothing to start by hand.
const StubScheme = "stub:"

// Stubs are the stub models that "stub:" base URLs can name. This package
// plays none of its own: a program passes its list in Config.Stubs (or
// Options.Stubs); stubmodel.Policies is one.
type Stubs interface {
	// NewStub returns a fresh handler of the chat-completions protocol
	// for the stub model name with the given options (the URL's query).
	// An unknown name or option is an error that lists the known ones.
	NewStub(name string, options url.Values) (http.Handler, error)
}

// stubNameRE is a stub policy's name.
var stubNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// maxStubURL bounds a stub base URL's length.
const maxStubURL = 512

// IsStubURL reports whether base names an in-process stub model
// ("stub:…").
func IsStubURL(base string) bool { return strings.HasPrefix(strings.TrimSpace(base), StubScheme) }

// parseStubURL checks a "stub:NAME[?QUERY]" base URL and returns the
// policy's name, its options and the URL in normal form (the options
// sorted by name).
func parseStubURL(raw string) (name string, options url.Values, norm string, err error) {
	raw = strings.TrimSpace(raw)
	bad := func(format string, a ...any) (string, url.Values, string, error) {
		return "", nil, "", configError("BaseURL", format, a...)
	}
	if len(raw) > maxStubURL {
		return bad("stub URL longer than %d bytes", maxStubURL)
	}
	rest := strings.TrimPrefix(raw, StubScheme)
	name, query, _ := strings.Cut(rest, "?")
	if !stubNameRE.MatchString(name) {
		return bad("%q: want stub:POLICY (lower-case letters, digits, '-' and '_'), e.g. stub:generic or stub:builtin", raw)
	}
	options, err = url.ParseQuery(query)
	if err != nil {
		return bad("%q: the options after '?' do not parse (want stub:POLICY?seed=N)", raw)
	}
	norm = StubScheme + name
	if q := options.Encode(); q != "" {
		norm += "?" + q
	}
	return name, options, norm, nil
}

// NormalizeBaseURL checks a base URL as New does and returns it in the
// form clients key their endpoints and cache entries by: an http(s) API
// root without a trailing slash, or a stub URL with its options sorted.
// It reads no key and resolves no stub name.
func NormalizeBaseURL(raw string) (string, error) { return normalizeBaseURL(raw) }

// stubHandler resolves a stub base URL to the handler that plays it.
func stubHandler(cfg Config) (http.Handler, error) {
	name, options, _, err := parseStubURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	if cfg.Stubs == nil {
		return nil, configErr(&opterr.Error{Option: "BaseURL", See: []string{"Stubs"},
			Err: fmt.Errorf("%s names a stub model, but this program plays none (Config.Stubs is nil)", cfg.BaseURL)})
	}
	h, err := cfg.Stubs.NewStub(name, options)
	if err != nil {
		return nil, configError("BaseURL", "%v", err)
	}
	return h, nil
}

// stubBase is the URL openai-go builds a stub's requests on. The request
// never leaves the process (handlerTransport), so the host is a reserved
// name that resolves nowhere.
const stubBase = "http://stub.invalid/v1"

// handlerTransport is an http.RoundTripper that serves each request with
// an http.Handler in the calling goroutine.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (res *http.Response, err error) {
	if req.Body != nil {
		defer req.Body.Close()
	}
	w := &stubResponse{header: http.Header{}}
	func() {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("stub model failed: %v", p)
			}
		}()
		sreq := req.Clone(req.Context())
		if sreq.Body == nil {
			sreq.Body = http.NoBody
		}
		t.h.ServeHTTP(w, sreq)
	}()
	if err != nil {
		return nil, err
	}
	if err := req.Context().Err(); err != nil && !w.wrote {
		return nil, err
	}
	if w.over {
		return nil, errors.New("stub model's response exceeds the response size limit")
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	body := w.body.Bytes()
	return &http.Response{
		Status: fmt.Sprintf("%d %s", w.status, http.StatusText(w.status)), StatusCode: w.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.header, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)),
		Request: req,
	}, nil
}

// stubResponse is the http.ResponseWriter a stub's handler writes to.
type stubResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
	wrote  bool
	over   bool
}

func (w *stubResponse) Header() http.Header { return w.header }

func (w *stubResponse) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
}

func (w *stubResponse) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.body.Len()+len(p) > MaxResponseBytes {
		w.over = true
		return 0, errors.New("response too large")
	}
	return w.body.Write(p)
}
