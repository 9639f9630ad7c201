package llm

import (
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// endpoint is the state shared by every Client of one Endpoints with the
// same base URL: the concurrency semaphore, the optional rate limiter, the
// HTTP transport (connection pool) and the Stats.
type endpoint struct {
	baseURL     string
	concurrency int
	rpm         float64
	sem         chan struct{}
	limiter     *rate.Limiter // nil: unlimited
	http        *http.Client
	stats       Stats
	breaker     breaker
}

// Endpoints owns the per-endpoint state that clients of one base URL
// share: the concurrency limit, the rate limiter, the connection pool and
// the Stats. A program creates one (per command, per sweep worker) and
// passes it in Config.Endpoints to every Client that must share the
// limits; a Client whose Config.Endpoints is nil gets state of its own.
// There is no process-global registry: two owners never see each other's
// limits, so a test server on a reused port starts clean. Safe for
// concurrent use.
type Endpoints struct {
	mu sync.Mutex
	m  map[string]*endpoint
}

// NewEndpoints returns an empty owner of endpoint state.
func NewEndpoints() *Endpoints { return &Endpoints{m: make(map[string]*endpoint)} }

// endpointFor returns the endpoint state for cfg.BaseURL: the shared one
// of cfg.Endpoints (created on first use), or a private one when
// cfg.Endpoints is nil. The first Client of an owner for a base URL fixes
// its Concurrency and RPM; a later Client asking for different limits is
// an error rather than a silent change.
func endpointFor(cfg Config) (*endpoint, error) {
	r := cfg.Endpoints
	if r == nil {
		return newEndpoint(cfg)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if ep := r.m[cfg.BaseURL]; ep != nil {
		if ep.concurrency != cfg.Concurrency || ep.rpm != cfg.RPM {
			return nil, fmt.Errorf("llm: config: endpoint %s already has concurrency %d and rpm %g; a second client asked for concurrency %d and rpm %g (limits are per endpoint: use the same values)",
				cfg.BaseURL, ep.concurrency, ep.rpm, cfg.Concurrency, cfg.RPM)
		}
		return ep, nil
	}
	ep, err := newEndpoint(cfg)
	if err != nil {
		return nil, err
	}
	r.m[cfg.BaseURL] = ep
	return ep, nil
}

// newEndpoint is the state of a new endpoint; a stub URL's connection
// pool is a transport that calls the stub's handler (stub.go).
func newEndpoint(cfg Config) (*endpoint, error) {
	var tr http.RoundTripper = newTransport(cfg.Concurrency)
	if IsStubURL(cfg.BaseURL) {
		h, err := stubHandler(cfg)
		if err != nil {
			return nil, err
		}
		tr = handlerTransport{h}
	}
	ep := &endpoint{
		baseURL:     cfg.BaseURL,
		concurrency: cfg.Concurrency,
		rpm:         cfg.RPM,
		sem:         make(chan struct{}, cfg.Concurrency),
		http:        &http.Client{Transport: tr},
		breaker:     breaker{threshold: cfg.BreakerThreshold, cooldown: cfg.BreakerCooldown},
	}
	if cfg.RPM > 0 {
		ep.limiter = rate.NewLimiter(rate.Limit(cfg.RPM/60), 1)
	}
	return ep, nil
}

func newTransport(concurrency int) *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          max(100, concurrency),
		MaxIdleConnsPerHost:   concurrency, // keep one warm connection per slot
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: 1 * time.Second,
	}
}
