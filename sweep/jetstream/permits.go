package jetstream

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"golang.org/x/time/rate"
)

// Permit timing: the coordinator answers a request within permitWait
// (granted, or "retry"); a permit is a lease of leaseTTL that its holder
// renews every leaseTTL/3 while the model call runs, so the permits of a
// killed worker come back within leaseTTL.
//
// A grant starts as a lease of only firstLeaseTTL: its holder confirms it
// (a renewal) as soon as the grant reaches it, which makes it a lease of
// leaseTTL. A grant that reaches nobody (the request timed out at the
// worker just before, or the worker died) thus comes back within
// firstLeaseTTL, not after leaseTTL. firstLeaseTTL is above the holder's
// renewal interval (leaseTTL/3), so that a confirmation lost on the way
// (a core NATS publish) is made up by the holder's next renewal before
// the lease lapses under a call still running. (A worker of an earlier
// version, which does not confirm, does not ask for the short first
// lease: permitRequest.Confirms.)
const (
	permitWait    = 10 * time.Second
	leaseTTL      = 30 * time.Second
	firstLeaseTTL = leaseTTL/3 + 5*time.Second
	permitTimeout = permitWait + 10*time.Second
	// maxPermitWaiters bounds the requests waiting at once (each waits in
	// a goroutine, and anyone who can publish on the NATS server can
	// ask); beyond it a request is told to come back after busyPause.
	maxPermitWaiters = 4096
	busyPause        = time.Second
)

type permitRequest struct {
	Endpoint string `json:"endpoint"`
	// Confirms: the asker confirms a grant as soon as it receives it, so
	// the grant may start as a lease of firstLeaseTTL. A worker of an
	// earlier version does not say so, and gets leaseTTL at once.
	Confirms bool `json:"confirms,omitempty"`
}

type permitReply struct {
	Lease string `json:"lease,omitempty"` // granted; "" and Retry: ask again
	Retry bool   `json:"retry,omitempty"`
	Busy  bool   `json:"busy,omitempty"` // with Retry: too many waiting, pause first
	None  bool   `json:"none,omitempty"` // no global limit for this endpoint
}

type leaseMsg struct {
	Leases []string `json:"leases"`
}

// PermitServer is the coordinator's side: one concurrency semaphore and
// one rate limiter (burst 1, as package llm's) per endpoint, handed out
// as leases over NATS request/reply. The limits are exact without clock
// synchronisation between machines: one process holds them.
type PermitServer struct {
	n      names
	limits map[string]*endpointPermits
	subs   []*nats.Subscription

	mu      sync.Mutex
	leases  map[string]*lease
	wait    int // requests waiting for a permit
	maxWait int // maxPermitWaiters (a field for the tests)
	closed  bool
	ctx     context.Context // ended by Close: requests waiting give up
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	// granted counts permits handed out (for tests and status).
	granted uint64
}

type endpointPermits struct {
	sem     chan struct{}
	limiter *rate.Limiter // nil: no rpm limit
}

type lease struct {
	ep      *endpointPermits
	expires time.Time
}

// StartPermits serves permits for the experiment's limits on nc.
func StartPermits(nc *nats.Conn, id string, limits []EndpointLimit) (*PermitServer, error) {
	n, err := namesOf(id)
	if err != nil {
		return nil, err
	}
	p := &PermitServer{n: n, limits: map[string]*endpointPermits{}, leases: map[string]*lease{}, maxWait: maxPermitWaiters}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	for _, l := range limits {
		ep := &endpointPermits{sem: make(chan struct{}, l.Concurrency)}
		if l.RPM > 0 {
			ep.limiter = rate.NewLimiter(rate.Limit(l.RPM/60), 1)
		}
		p.limits[l.Endpoint] = ep
	}
	acq, err := nc.Subscribe(n.permitSubject("acquire"), p.onAcquire)
	if err != nil {
		return nil, err
	}
	rel, err := nc.Subscribe(n.permitSubject("release"), p.onRelease)
	if err != nil {
		acq.Unsubscribe()
		return nil, err
	}
	ren, err := nc.Subscribe(n.permitSubject("renew"), p.onRenew)
	if err != nil {
		acq.Unsubscribe()
		rel.Unsubscribe()
		return nil, err
	}
	p.subs = []*nats.Subscription{acq, rel, ren}
	// The server has the subscriptions once this returns: a request made
	// right after StartPermits, on another connection, finds a responder.
	if err := nc.Flush(); err != nil {
		for _, s := range p.subs {
			s.Unsubscribe()
		}
		return nil, err
	}
	p.wg.Go(p.reap)
	return p, nil
}

// Close stops serving permits; requests still waiting get no answer
// (their askers retry, and find no coordinator).
func (p *PermitServer) Close() {
	for _, s := range p.subs {
		s.Unsubscribe()
	}
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cancel()
	p.wg.Wait()
}

// Granted is how many permits were handed out.
func (p *PermitServer) Granted() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.granted
}

func (p *PermitServer) onAcquire(m *nats.Msg) {
	var req permitRequest
	if err := decode(m.Data, &req); err != nil || m.Reply == "" {
		return
	}
	ep := p.limits[req.Endpoint]
	if ep == nil {
		m.Respond(encode(permitReply{None: true}))
		return
	}
	// Each request waits in its own goroutine (nats.go delivers one
	// subscription's messages in order).
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	if p.wait >= p.maxWait {
		m.Respond(encode(permitReply{Retry: true, Busy: true}))
		return
	}
	p.wait++
	p.wg.Go(func() {
		defer func() {
			p.mu.Lock()
			p.wait--
			p.mu.Unlock()
		}()
		ctx, cancel := context.WithTimeout(p.ctx, permitWait)
		defer cancel()
		select {
		case ep.sem <- struct{}{}:
		case <-ctx.Done():
			if p.ctx.Err() == nil {
				m.Respond(encode(permitReply{Retry: true}))
			}
			return
		}
		if ep.limiter != nil {
			if err := ep.limiter.Wait(ctx); err != nil {
				<-ep.sem
				if p.ctx.Err() == nil {
					m.Respond(encode(permitReply{Retry: true}))
				}
				return
			}
		}
		// A lease is a random id, known only to the holder: another worker
		// cannot release or renew it (they share one NATS user).
		id := rand.Text()
		p.mu.Lock()
		p.granted++
		ttl := leaseTTL
		if req.Confirms {
			ttl = firstLeaseTTL
		}
		p.leases[id] = &lease{ep: ep, expires: time.Now().Add(ttl)}
		p.mu.Unlock()
		if err := m.Respond(encode(permitReply{Lease: id})); err != nil {
			p.release(id)
		}
	})
}

func (p *PermitServer) onRelease(m *nats.Msg) {
	var l leaseMsg
	if decode(m.Data, &l) != nil {
		return
	}
	for _, id := range l.Leases {
		p.release(id)
	}
}

func (p *PermitServer) onRenew(m *nats.Msg) {
	var l leaseMsg
	if decode(m.Data, &l) != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, id := range l.Leases {
		if ls := p.leases[id]; ls != nil {
			ls.expires = time.Now().Add(leaseTTL)
		}
	}
}

func (p *PermitServer) release(id string) {
	p.mu.Lock()
	ls := p.leases[id]
	delete(p.leases, id)
	p.mu.Unlock()
	if ls != nil {
		<-ls.ep.sem
	}
}

// reap takes back leases that were not renewed (their holder died).
func (p *PermitServer) reap() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case now := <-t.C:
			p.reapAt(now)
		}
	}
}

// reapAt takes back the leases expired at now (the tests pass a time of
// their choosing).
func (p *PermitServer) reapAt(now time.Time) {
	var expired []string
	p.mu.Lock()
	for id, ls := range p.leases {
		if now.After(ls.expires) {
			expired = append(expired, id)
		}
	}
	p.mu.Unlock()
	for _, id := range expired {
		p.release(id)
	}
}

// PermitClient is the workers' side: an llm.Limiter that asks the
// coordinator for a permit before every model attempt.
type PermitClient struct {
	nc *nats.Conn
	n  names

	mu   sync.Mutex
	held map[string]bool
	done chan struct{}
	wg   sync.WaitGroup
}

// NewPermitClient asks for permits of experiment id on nc; Close it.
func NewPermitClient(nc *nats.Conn, id string) (*PermitClient, error) {
	n, err := namesOf(id)
	if err != nil {
		return nil, err
	}
	c := &PermitClient{nc: nc, n: n, held: map[string]bool{}, done: make(chan struct{})}
	c.wg.Go(c.renew)
	return c, nil
}

// Acquire implements llm.Limiter.
func (c *PermitClient) Acquire(ctx context.Context, endpoint string) (func(), error) {
	req := encode(permitRequest{Endpoint: endpoint, Confirms: true})
	for {
		rctx, cancel := context.WithTimeout(ctx, permitTimeout)
		m, err := c.nc.RequestWithContext(rctx, c.n.permitSubject("acquire"), req)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) {
				continue
			}
			return nil, fmt.Errorf("permit from the sweep coordinator: %w", err)
		}
		var rep permitReply
		if err := decode(m.Data, &rep); err != nil {
			return nil, fmt.Errorf("permit from the sweep coordinator: %w", err)
		}
		switch {
		case rep.None:
			return func() {}, nil
		case rep.Lease != "":
			c.mu.Lock()
			c.held[rep.Lease] = true
			c.mu.Unlock()
			// Confirm the grant at once: until then it is a lease of
			// firstLeaseTTL only (the renewals make up for a lost one).
			c.nc.Publish(c.n.permitSubject("renew"), encode(leaseMsg{Leases: []string{rep.Lease}}))
			var once sync.Once
			return func() {
				once.Do(func() {
					c.mu.Lock()
					delete(c.held, rep.Lease)
					c.mu.Unlock()
					c.nc.Publish(c.n.permitSubject("release"), encode(leaseMsg{Leases: []string{rep.Lease}}))
				})
			}, nil
		}
		if rep.Busy {
			select {
			case <-ctx.Done():
			case <-time.After(busyPause):
			}
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

// renew keeps the held leases alive (Acquire confirms each new one at
// once; this renews them every leaseTTL/3 from then on).
func (c *PermitClient) renew() {
	t := time.NewTicker(leaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
			c.mu.Lock()
			var ids []string
			for id := range c.held {
				ids = append(ids, id)
			}
			c.mu.Unlock()
			if len(ids) > 0 {
				c.nc.Publish(c.n.permitSubject("renew"), encode(leaseMsg{Leases: ids}))
			}
		}
	}
}

// Close stops renewing leases.
func (c *PermitClient) Close() {
	close(c.done)
	c.wg.Wait()
}
