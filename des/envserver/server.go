// Package envserver hosts DESBench episodes over HTTP: a client creates an
// episode (instance, paradigm, seed), polls its pending decision payload,
// posts one action index per active agent, and reads the metrics and
// artifacts when it ends. It mirrors the semantics of the process protocol
// of package extctl (docs/external.md); docs/http-server.md and
// docs/openapi.yaml describe the API.
package envserver

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/netutil"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
)

// Defaults of Config.
const (
	DefaultMaxEpisodes     = 64
	DefaultMaxBody         = 1 << 20
	DefaultDecisionTimeout = 10 * time.Minute
	DefaultLongPoll        = 30 * time.Second
	DefaultBodyTimeout     = 30 * time.Second
	DefaultWriteTimeout    = 30 * time.Second
	DefaultMaxConns        = 256
	DefaultMaxBatch        = 64
)

// Fixed timeouts of HTTPServer: the request line and headers, and an idle
// keep-alive connection.
const (
	HeaderTimeout = 10 * time.Second
	IdleTimeout   = 2 * time.Minute
)

// Config configures a Server.
type Config struct {
	// DataDir holds one artifact directory per episode (required).
	DataDir string
	// Keep keeps an episode's directory after DELETE and Close.
	Keep bool
	// Token, if set, is required as "Authorization: Bearer TOKEN".
	Token string
	// MaxEpisodes bounds the episodes held at once (running or ended
	// but not deleted).
	MaxEpisodes int
	// MaxBody bounds request bodies, in bytes.
	MaxBody int64
	// DecisionTimeout bounds the wait for each decision's actions. When
	// it passes, the episode is closed: that decision and every later one
	// fall back (as a runner timeout does in the process protocol).
	DecisionTimeout time.Duration
	// LongPoll bounds GET .../decision?wait=1.
	LongPoll time.Duration
	// BodyTimeout bounds the reading of a request body, from the end of
	// the headers.
	BodyTimeout time.Duration
	// WriteTimeout bounds each write of a response (deadline.go): a
	// client that stops reading has its connection closed once a write
	// makes no progress for this long.
	WriteTimeout time.Duration
	// MaxConns bounds the connections open at once (Listener); more wait
	// in the listen queue, unaccepted.
	MaxConns int
	// MaxBatch bounds the items of one /v1/batch/* request.
	MaxBatch int
	// Paradigms are the paradigms episodes may name (nil: the built-ins).
	Paradigms *coord.Paradigms
	// EpisodeIdle is how long an episode no request touches is held
	// while the server is full: a create that finds MaxEpisodes held
	// first reclaims such episodes, and those a decision timeout closed
	// (reclaim.go).
	EpisodeIdle time.Duration
	// Now is the clock of EpisodeIdle (nil: the wall clock); tests set it.
	Now func() time.Time
	// PlantLimits bound the instances clients may create (nil:
	// ServerPlantLimits()); no request can raise them.
	PlantLimits *factory.SizeLimits
	// ArtifactBudget bounds the bytes of each episode's streamed
	// artifacts, in bytes (budget.go; 0: DefaultArtifactBudget).
	ArtifactBudget int64
	// Builtins are the controllers that answer the agents a client does
	// not play (CreateRequest.Others; policy.Builtins() in des serve). Nil:
	// none, and a create with "play" is refused.
	Builtins harness.Builtins
}

// Server hosts episodes. Use Handler to serve it and Close to stop it.
type Server struct {
	cfg Config
	mu  sync.Mutex
	eps map[string]*episode
	// closed: Close has begun; creates are refused.
	closed bool
	wg     sync.WaitGroup
}

// New returns a server; DataDir is created if needed.
func New(cfg Config) (*Server, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("envserver: no data directory")
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, err
	}
	if cfg.MaxEpisodes <= 0 {
		cfg.MaxEpisodes = DefaultMaxEpisodes
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.DecisionTimeout <= 0 {
		cfg.DecisionTimeout = DefaultDecisionTimeout
	}
	if cfg.LongPoll <= 0 {
		cfg.LongPoll = DefaultLongPoll
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = DefaultBodyTimeout
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = DefaultMaxBatch
	}
	if cfg.EpisodeIdle <= 0 {
		cfg.EpisodeIdle = DefaultEpisodeIdle
	}
	if cfg.PlantLimits == nil {
		lim := ServerPlantLimits()
		cfg.PlantLimits = &lim
	}
	if cfg.ArtifactBudget <= 0 {
		cfg.ArtifactBudget = DefaultArtifactBudget
	}
	return &Server{cfg: cfg, eps: map[string]*episode{}}, nil
}

// HTTPServer returns an http.Server for Handler with the timeouts the
// API needs: headers within HeaderTimeout, bodies within BodyTimeout
// (set per request, so that long polls are not cut), each write of a
// response within WriteTimeout (set per write, for the same reason),
// idle connections closed after IdleTimeout. Serve it on Listener(ln).
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{Handler: s.Handler(), ReadHeaderTimeout: HeaderTimeout, IdleTimeout: IdleTimeout}
}

// Listener bounds the connections accepted from ln to MaxConns at once.
func (s *Server) Listener(ln net.Listener) net.Listener {
	return netutil.LimitListener(ln, s.cfg.MaxConns)
}

// ServerPlantLimits are the default size limits of the instances
// clients may create: well below the CLI's (factory.DefaultSizeLimits),
// as one request costs the server an episode's memory and time, yet
// above the largest plant of the scaling studies (gen:A64C256, 853
// jobs). des serve raises them with --plant-limit; no request can.
func ServerPlantLimits() factory.SizeLimits {
	lim := factory.DefaultSizeLimits()
	lim.Areas, lim.Cells, lim.Machines, lim.Jobs = 64, 256, 2048, 5000
	lim.Raise = "des serve --plant-limit %s=%d"
	return lim
}

// artifacts are the files GET .../artifacts/{name} serves.
var artifacts = []string{harness.FileMetrics, harness.FileTrace, harness.FileDecisions,
	harness.FileMessages, harness.FileManifest, harness.FileInstance, harness.FileTiming}

// Handler returns the HTTP API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/health", s.health)
	mux.HandleFunc("POST /v1/episodes", s.create)
	mux.HandleFunc("GET /v1/episodes", s.list)
	mux.HandleFunc("GET /v1/episodes/{id}", s.status)
	mux.HandleFunc("DELETE /v1/episodes/{id}", s.delete)
	mux.HandleFunc("GET /v1/episodes/{id}/decision", s.decision)
	mux.HandleFunc("POST /v1/episodes/{id}/actions", s.actions)
	mux.HandleFunc("GET /v1/episodes/{id}/artifacts/{name}", s.artifact)
	mux.HandleFunc("POST /v1/batch/create", s.batchCreate)
	mux.HandleFunc("POST /v1/batch/step", s.batchStep)
	mux.HandleFunc("POST /v1/batch/delete", s.batchDelete)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such endpoint: "+r.Method+" "+r.URL.Path)
	})
	return s.writeDeadline(s.bodyDeadline(s.auth(mux)))
}

// bodyDeadline gives a request with a body BodyTimeout to send it; readBody
// lifts the deadline once the body is read. Without it a client could hold
// a connection forever by sending its body a byte at a time.
func (s *Server) bodyDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 {
			http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout))
		}
		next.ServeHTTP(w, r)
	})
}

// auth requires the bearer token, when one is set. It looks at the
// headers only: a refused request's body is never read, and its
// connection is closed after the answer.
func (s *Server) auth(next http.Handler) http.Handler {
	if s.cfg.Token == "" {
		return next
	}
	want := []byte("Bearer " + s.cfg.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="coordbench"`)
			// Close rather than drain: net/http would otherwise read up to
			// 256 KiB of the body, before and after answering.
			w.Header().Set("Connection", "close")
			http.NewResponseController(w).SetReadDeadline(time.Now())
			writeError(w, http.StatusUnauthorized, "missing or wrong bearer token")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Close stops every episode (each ends before its next decision, status
// interrupted), waits for them to end and, unless Keep, removes their
// directories.
func (s *Server) Close() {
	s.mu.Lock()
	eps := make([]*episode, 0, len(s.eps))
	for _, e := range s.eps {
		eps = append(eps, e)
	}
	s.eps = map[string]*episode{}
	s.closed = true
	s.mu.Unlock()
	for _, e := range eps {
		e.stop("server shutting down")
	}
	s.wg.Wait()
	if !s.cfg.Keep {
		for _, e := range eps {
			os.RemoveAll(e.dir)
		}
	}
}

// CreateRequest is the body of POST /v1/episodes.
type CreateRequest struct {
	Instance string `json:"instance"`
	Paradigm string `json:"paradigm"`
	// Seed defaults to the instance's first test seed.
	Seed *uint64 `json:"seed"`
	// Progress asks for the plant-wide tally (Progress) with every
	// decision and in the status: a learning environment's reward. It is
	// more than the payloads show their agents (realized completions and
	// tardiness plant-wide), so a controller being scored should not ask
	// for it.
	Progress bool `json:"progress,omitempty"`
	// Play, if set, lists the agents the client plays (agent ids of the
	// episode's Status.Agents); the server answers every other agent with
	// the built-in controller Others (default DefaultOthers), and a
	// decision without a played agent never reaches the client. Absent
	// (nil): the client plays every agent; empty: none, and the server
	// plays the whole episode.
	Play   []string `json:"play"`
	Others string   `json:"others,omitempty"`
}

// Status describes an episode (POST /v1/episodes, GET /v1/episodes/{id}).
type Status struct {
	ID       string `json:"id"`
	Instance string `json:"instance"`
	Paradigm string `json:"paradigm"`
	Seed     uint64 `json:"seed"`
	State    string `json:"status"`
	// Reason says why the episode was closed or stopped early (DELETE, a
	// decision timeout, a reclaim, Close, a spent artifact budget).
	Reason string `json:"reason,omitempty"`
	// PendingStep is the step waiting for actions, if any.
	PendingStep *int `json:"pending_step,omitempty"`
	Decisions   int  `json:"decisions"`
	Answered    int  `json:"answered"`
	// Agents are the agent ids the paradigm may activate on this plant,
	// in a fixed order: plant, then areas, then cells, as the instance
	// lists them, then the mode_selector of a paradigm whose modes an
	// agent selects (agentIDs).
	Agents []string `json:"agents"`
	// Played are the agents the client plays (CreateRequest.Play), in the
	// order of Agents, and Others the built-in controller that answers the
	// rest; both are empty when the client plays every agent, and Played
	// alone when it plays none.
	Played []string `json:"played,omitempty"`
	Others string   `json:"others,omitempty"`
	// Offer lists, for a paradigm whose modes an agent selects, the mode
	// ids of the selector's options, in option order.
	Offer []string `json:"offer,omitempty"`
	// Layout lists the plant's areas and their cells, in instance order
	// (the order of the plant observation's areas and of an area's cells).
	Layout []AreaLayout `json:"layout"`
	// Progress is the tally at the pending decision, or at the end.
	Progress *Progress `json:"progress,omitempty"`
	// Metrics is metrics.json, once the episode is done.
	Metrics *harness.Metrics `json:"metrics,omitempty"`
	Error   string           `json:"error,omitempty"`
}

func (e *episode) status() Status {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := Status{ID: e.id, Instance: e.instance, Paradigm: e.paradigm, Seed: e.seed, State: e.state,
		Reason: e.reason, Decisions: e.decisions, Answered: e.answered, Agents: e.agents, Played: e.played, Others: e.others,
		Offer: e.offer, Layout: e.layout}
	if e.pend != nil {
		step := e.pend.step
		st.PendingStep = &step
		st.Progress = e.shown(e.pend.progress)
	}
	if e.state == StateDone {
		st.Progress = e.shown(e.final)
	}
	if e.result != nil {
		m := e.result.Metrics
		st.Metrics = &m
	}
	if e.runErr != nil {
		st.Error = e.runErr.Error()
	}
	return st
}

func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	n := len(s.eps)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "episodes": n, "max_episodes": s.cfg.MaxEpisodes, "max_batch": s.cfg.MaxBatch,
		"payload_version": coord.PayloadVersion, "version": harness.Version()})
}

// readBody reads a bounded body within the body deadline, then lifts the
// deadline (so that the connection's idle reads and a waiting handler are
// not cut by it); it writes the error itself.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		var ne net.Error
		switch {
		case errors.As(err, &mbe):
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body larger than %d bytes", s.cfg.MaxBody))
		case errors.As(err, &ne) && ne.Timeout():
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusRequestTimeout, fmt.Sprintf("the body did not arrive within %v", s.cfg.BodyTimeout))
		default:
			writeError(w, http.StatusBadRequest, "cannot read the body: "+err.Error())
		}
		return nil, false
	}
	http.NewResponseController(w).SetReadDeadline(time.Time{})
	return b, true
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	b, ok := s.readBody(w, r)
	if !ok {
		return
	}
	var req CreateRequest
	if err := json.Unmarshal(b, &req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON: "+err.Error())
		return
	}
	e, aerr := s.start(req)
	if aerr != nil {
		writeError(w, aerr.code, aerr.msg)
		return
	}
	writeJSON(w, http.StatusCreated, e.status())
}

// start creates an episode and starts its run.
func (s *Server) start(req CreateRequest) (*episode, *apiError) {
	// Only reported instances and generated ones: never a server-side file.
	if !strings.HasPrefix(req.Instance, "gen:") && !slices.Contains(factory.BuiltinNames(), req.Instance) {
		return nil, &apiError{code: http.StatusBadRequest, msg: fmt.Sprintf("unknown instance %q (a reported instance: %s; or gen:A<areas>C<cells>)",
			req.Instance, strings.Join(factory.BuiltinNames(), ", "))}
	}
	if req.Paradigm == "" {
		return nil, &apiError{code: http.StatusBadRequest, msg: `no "paradigm"`}
	}
	mode, err := s.cfg.Paradigms.Lookup(req.Paradigm)
	if err != nil {
		return nil, &apiError{code: http.StatusBadRequest, msg: err.Error()}
	}
	tooMany := &apiError{code: http.StatusTooManyRequests, msg: fmt.Sprintf("%d episodes held already (the maximum); DELETE some", s.cfg.MaxEpisodes)}
	if s.full() && (s.reclaim() == 0 || s.full()) {
		return nil, tooMany
	}
	in, err := s.cfg.PlantLimits.Resolve(req.Instance)
	if err != nil {
		return nil, &apiError{code: http.StatusBadRequest, msg: err.Error()}
	}
	plant := factory.Compile(in)
	seed := uint64(0)
	if req.Seed != nil {
		seed = *req.Seed
	} else if len(in.Seeds.Test) > 0 {
		seed = in.Seeds.Test[0]
	}
	agents := agentIDs(plant, mode)
	pl, aerr := s.resolvePlay(&req, agents, seed)
	if aerr != nil {
		return nil, aerr
	}
	var rb [12]byte
	rand.Read(rb[:])
	id := hex.EncodeToString(rb[:])

	s.mu.Lock()
	if s.closed { // a create racing Close would start an episode nobody waits for
		s.mu.Unlock()
		return nil, &apiError{code: http.StatusServiceUnavailable, msg: "the server is shutting down"}
	}
	if len(s.eps) >= s.cfg.MaxEpisodes { // checked again: others may have been created meanwhile
		s.mu.Unlock()
		return nil, tooMany
	}
	e := newEpisode(id, in.Name, mode.ID, seed, filepath.Join(s.cfg.DataDir, id), s.cfg.DecisionTimeout, agents)
	e.layout, e.showProgress, e.offer = layout(plant), req.Progress, offeredModes(mode)
	e.touched = s.now()
	var ctrl coord.Controller = controller{e}
	if pl != nil {
		e.played, e.others = pl.played, pl.others.Name()
		ctrl = newPlayController(e, pl)
	}
	s.eps[id] = e
	s.wg.Add(1)
	s.mu.Unlock()

	b := &budget{limit: s.cfg.ArtifactBudget}
	b.over = func(name string) { e.overBudget(b, name) }
	go func() {
		defer s.wg.Done()
		// The run outlives the request that created it: DELETE, the
		// decision timeout, the artifact budget and Close end it,
		// through the episode.
		res, err := harness.RunToDir(context.Background(), harness.Episode{Plant: plant, Seed: seed, Mode: mode,
			Controller: ctrl, Observer: e.tally, Stop: e.stopCh, Wrap: b.wrap}, e.dir)
		e.finish(res, err)
		s.ended(e)
	}()
	return e, nil
}

// full reports whether MaxEpisodes are held, so that a create is refused
// before its plant is built.
func (s *Server) full() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.eps) >= s.cfg.MaxEpisodes
}

func (s *Server) list(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	eps := make([]*episode, 0, len(s.eps))
	for _, e := range s.eps {
		eps = append(eps, e)
	}
	s.mu.Unlock()
	out := make([]Status, 0, len(eps))
	for _, e := range eps {
		out = append(out, e.status())
	}
	slices.SortFunc(out, func(a, b Status) int { return strings.Compare(a.ID, b.ID) })
	writeJSON(w, http.StatusOK, map[string]any{"episodes": out})
}

// lookup finds the episode of the path; it writes the 404 itself.
func (s *Server) lookup(w http.ResponseWriter, r *http.Request) *episode {
	id := r.PathValue("id")
	e := s.get(id)
	if e == nil {
		writeError(w, http.StatusNotFound, noEpisode(id))
	}
	return e
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	if e := s.lookup(w, r); e != nil {
		writeJSON(w, http.StatusOK, e.status())
	}
}

// Done is what GET .../decision answers once the episode has ended.
type Done struct {
	Done   bool   `json:"done"`
	Status string `json:"status"` // metrics.json "status"
}

func (s *Server) decision(w http.ResponseWriter, r *http.Request) {
	e := s.lookup(w, r)
	if e == nil {
		return
	}
	wait := r.URL.Query().Get("wait")
	var deadline time.Time
	if wait != "" && wait != "0" && wait != "false" {
		deadline = time.Now().Add(s.cfg.LongPoll)
	}
	n, ok := e.next(r.Context(), -1, deadline)
	switch {
	case !ok:
		w.WriteHeader(http.StatusNoContent)
	case n.done:
		writeJSON(w, http.StatusOK, Done{Done: true, Status: n.status})
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write(n.payload)
	}
}

func (s *Server) actions(w http.ResponseWriter, r *http.Request) {
	e := s.lookup(w, r)
	if e == nil {
		return
	}
	b, ok := s.readBody(w, r)
	if !ok {
		return
	}
	resp, aerr := e.submit(b)
	if aerr != nil {
		writeJSON(w, aerr.code, map[string]any{"error": aerr.msg, "consumed": aerr.consumed})
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) artifact(w http.ResponseWriter, r *http.Request) {
	e := s.lookup(w, r)
	if e == nil {
		return
	}
	name := r.PathValue("name")
	if !slices.Contains(artifacts, name) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no artifact %q (one of %s)", name, strings.Join(artifacts, ", ")))
		return
	}
	e.mu.Lock()
	state := e.state
	e.mu.Unlock()
	if state != StateDone {
		writeError(w, http.StatusConflict, "the episode is "+state+": artifacts are ready once it is done")
		return
	}
	f, err := os.Open(filepath.Join(e.dir, name))
	if err != nil {
		writeError(w, http.StatusNotFound, "artifact not written: "+name)
		return
	}
	defer f.Close()
	ct := "application/json"
	if strings.HasSuffix(name, ".jsonl") {
		ct = "application/x-ndjson"
	}
	w.Header().Set("Content-Type", ct)
	io.Copy(w, f)
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request) {
	e := s.lookup(w, r)
	if e == nil {
		return
	}
	if st, ok := s.remove(r.Context(), e); ok {
		writeJSON(w, http.StatusOK, st)
	}
}

// remove stops e, waits for its end (or ctx's), frees it and returns its
// final status; ok is false when ctx ended first.
func (s *Server) remove(ctx context.Context, e *episode) (st Status, ok bool) {
	e.stop("closed by the client")
	select {
	case <-e.doneCh:
	case <-ctx.Done():
		return Status{}, false
	}
	st = e.status()
	s.mu.Lock()
	if s.eps[e.id] == e {
		delete(s.eps, e.id)
	}
	s.mu.Unlock()
	if !s.cfg.Keep {
		os.RemoveAll(e.dir)
	}
	return st, true
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

// noEpisode is the error for an id the server does not hold; an empty id
// is named as such, never shown blank.
func noEpisode(id string) string {
	if id == "" {
		return `no episode id given ("id" is empty)`
	}
	return fmt.Sprintf("no episode %q (never created, deleted, or reclaimed after it was abandoned)", id)
}
