package llm

import (
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// endpoint is the per-process state shared by every Client with the same
// base URL: the concurrency semaphore, the optional rate limiter, the HTTP
// transport (connection pool) and the Stats.
type endpoint struct {
	baseURL     string
	concurrency int
	rpm         float64
	sem         chan struct{}
	limiter     *rate.Limiter // nil: unlimited
	http        *http.Client
	stats       Stats
}

var endpoints = struct {
	sync.Mutex
	m map[string]*endpoint
}{m: make(map[string]*endpoint)}

// endpointFor returns the shared endpoint for cfg.BaseURL, creating it on
// first use. The first Client for a base URL fixes its Concurrency and RPM;
// a later Client asking for different limits is an error rather than a
// silent change.
func endpointFor(cfg Config) (*endpoint, error) {
	endpoints.Lock()
	defer endpoints.Unlock()
	if ep := endpoints.m[cfg.BaseURL]; ep != nil {
		if ep.concurrency != cfg.Concurrency || ep.rpm != cfg.RPM {
			return nil, fmt.Errorf("llm: config: endpoint %s already has concurrency %d and rpm %g in this process; a second client asked for concurrency %d and rpm %g (limits are per endpoint: use the same values)",
				cfg.BaseURL, ep.concurrency, ep.rpm, cfg.Concurrency, cfg.RPM)
		}
		return ep, nil
	}
	ep := &endpoint{
		baseURL:     cfg.BaseURL,
		concurrency: cfg.Concurrency,
		rpm:         cfg.RPM,
		sem:         make(chan struct{}, cfg.Concurrency),
		http:        &http.Client{Transport: newTransport(cfg.Concurrency)},
	}
	if cfg.RPM > 0 {
		ep.limiter = rate.NewLimiter(rate.Limit(cfg.RPM/60), 1)
	}
	endpoints.m[cfg.BaseURL] = ep
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
