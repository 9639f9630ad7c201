package envsock

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/harness"
)

// Ops of a request frame.
const (
	OpOpen  = 1
	OpStep  = 2
	OpClose = 3
	OpBench = 4
	OpCPU   = 5
)

// Defaults of Config.
const (
	DefaultMaxEnvs     = 256
	DefaultMaxSessions = 16
	DefaultMaxFrame    = 1 << 20
	DefaultMaxReply    = 64 << 20
	DefaultIdleTimeout = 10 * time.Minute
	// MaxWorkers bounds Config.Workers.
	MaxWorkers = 1024
)

// Config configures a Server.
type Config struct {
	// Paradigms are the paradigms sessions may name (nil: the built-ins).
	Paradigms *coord.Paradigms
	// MaxEnvs bounds the episodes of one session.
	MaxEnvs int
	// MaxSessions bounds the connections served at once; more wait,
	// unaccepted.
	MaxSessions int
	// MaxFrame bounds a request frame, in bytes.
	MaxFrame int
	// MaxReply bounds the fixed part of a step's reply, in bytes.
	MaxReply int
	// IdleTimeout closes a session (and ends its episodes) that sends no
	// request, or reads none of its replies, for this long.
	IdleTimeout time.Duration
	// Builtins are the controllers that answer the agents a client does
	// not play (OpenRequest.Others; policy.Builtins() in des
	// serve-socket). Nil: a client must play every agent.
	Builtins harness.Builtins
	// Workers is the number of goroutines that advance the episodes of
	// one step in parallel (default 1: on a small machine the learner's
	// process needs the other processors, and a pipelined client keeps the
	// server busy by stepping one group while it works on another).
	Workers int
}

// Validate checks c and fills in its defaults.
func (c *Config) Validate() error {
	if c.MaxEnvs < 0 || c.MaxSessions < 0 || c.MaxFrame < 0 || c.MaxReply < 0 || c.IdleTimeout < 0 || c.Workers < 0 {
		return errors.New("envsock: negative limit")
	}
	if c.MaxEnvs == 0 {
		c.MaxEnvs = DefaultMaxEnvs
	}
	if c.MaxSessions == 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	if c.MaxFrame == 0 {
		c.MaxFrame = DefaultMaxFrame
	}
	if c.MaxReply == 0 {
		c.MaxReply = DefaultMaxReply
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.Workers == 0 {
		c.Workers = 1
	}
	if c.Workers > MaxWorkers {
		return fmt.Errorf("envsock: %d workers per session, more than %d", c.Workers, MaxWorkers)
	}
	return nil
}

// Server serves sessions on a listener (a unix socket in des serve-socket).
type Server struct {
	cfg   Config
	slots chan struct{} // one per session being served

	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
	wg     sync.WaitGroup
}

// New returns a server for cfg.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, slots: make(chan struct{}, cfg.MaxSessions), conns: map[net.Conn]bool{}}, nil
}

// Serve accepts connections on ln until ln is closed or Close is called;
// each is one session.
func (s *Server) Serve(ln net.Listener) error {
	for {
		s.slots <- struct{}{}
		c, err := ln.Accept()
		if err != nil {
			<-s.slots
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			<-s.slots
			return nil
		}
		s.conns[c] = true
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			defer func() { <-s.slots }()
			s.serveConn(c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

// Close closes every connection and waits until their episodes have
// ended. The listener is the caller's to close.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// serveConn serves one session until the peer closes, a frame is
// malformed, or the session stays idle past IdleTimeout.
func (s *Server) serveConn(c net.Conn) {
	defer c.Close()
	sess := &session{cfg: &s.cfg}
	defer sess.close()
	r := bufio.NewReaderSize(c, 64<<10)
	w := bufio.NewWriterSize(c, 64<<10)
	var hdr [4]byte
	var req, out []byte
	for {
		// A client that sends nothing, or reads no reply (a pipelined
		// one may have many on their way), for IdleTimeout loses its
		// session, and its place goes to the next.
		c.SetDeadline(time.Now().Add(s.cfg.IdleTimeout))
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return
		}
		n := int(binary.LittleEndian.Uint32(hdr[:]))
		if n < 1 || n > s.cfg.MaxFrame {
			writeFrame(w, 1, fmt.Appendf(nil, "a frame of %d bytes: want 1 to %d", n, s.cfg.MaxFrame))
			w.Flush()
			return
		}
		req = grow(req, n)
		if _, err := io.ReadFull(r, req); err != nil {
			return
		}
		var err error
		var broken bool
		out, err, broken = s.handleSafely(sess, req[0], req[1:], out)
		switch {
		case err != nil:
			writeFrame(w, 1, []byte(err.Error()))
		case sess.sendFD: // the shared region's descriptor goes with this reply
			sess.sendFD = false
			if w.Flush() != nil || sendWithFile(c, out, sess.shm.file) != nil {
				return
			}
			continue
		default:
			writeFrame(w, 0, out)
		}
		if w.Flush() != nil || broken {
			return
		}
	}
}

// handleSafely is handle, with a panic (a bug of this package) turned into
// an error reply; broken then says that the session must end, its state
// being unknown.
func (s *Server) handleSafely(sess *session, op byte, body, dst []byte) (out []byte, err error, broken bool) {
	defer func() {
		if r := recover(); r != nil {
			out, err, broken = nil, fmt.Errorf("internal error: %v; the session is closed", r), true
		}
	}()
	out, err = s.handle(sess, op, body, dst)
	return out, err, false
}

// handle answers one request; dst is reused for the reply.
func (s *Server) handle(sess *session, op byte, body, dst []byte) ([]byte, error) {
	switch op {
	case OpOpen:
		var req OpenRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return nil, fmt.Errorf("open: invalid JSON: %v", err)
		}
		rep, err := sess.openEpisodes(&req)
		if err != nil {
			return nil, fmt.Errorf("open: %w", err)
		}
		return json.Marshal(rep)
	case OpStep:
		out, err := sess.step(body, dst)
		if err != nil {
			return nil, fmt.Errorf("step: %w", err)
		}
		return out, nil
	case OpClose:
		sess.end()
		return dst[:0], nil
	case OpBench:
		var req BenchRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return nil, fmt.Errorf("bench: invalid JSON: %v", err)
		}
		rep, err := Bench(&s.cfg, &req)
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		return json.Marshal(rep)
	case OpCPU:
		return fmt.Appendf(dst[:0], `{"cpu_nanos":%d}`, ProcessCPU()), nil
	}
	return nil, fmt.Errorf("unknown op %d", op)
}

func writeFrame(w *bufio.Writer, status byte, body []byte) {
	var hdr [8]byte
	binary.LittleEndian.PutUint32(hdr[:], uint32(len(body)))
	hdr[4] = status
	w.Write(hdr[:])
	w.Write(body)
}

// sendWithFile writes an ok frame of body with f's descriptor as
// ancillary data (SCM_RIGHTS) on its first byte.
func sendWithFile(c net.Conn, body []byte, f *os.File) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return fmt.Errorf("shared memory needs a unix socket connection")
	}
	frame := make([]byte, 8, 8+len(body))
	binary.LittleEndian.PutUint32(frame, uint32(len(body)))
	frame = append(frame, body...)
	oob := rightsOf(f)
	n, _, err := uc.WriteMsgUnix(frame, oob, nil)
	if err != nil {
		return err
	}
	if n < len(frame) { // the descriptor went with the first part
		_, err = uc.Write(frame[n:])
	}
	return err
}

func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}
