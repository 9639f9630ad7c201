package envserver

import (
	"fmt"
	"os"
	"time"
)

// Reclaiming abandoned episodes. A client that dies without deleting its
// episodes would hold their slots forever, and after MaxEpisodes of them
// every create is refused. When a create finds the server full, it first
// reclaims the episodes no client has touched for Config.EpisodeIdle and
// those a decision timeout closed (their client stopped answering); a
// reclaimed episode is stopped, forgotten (its id then gets 404) and its
// directory removed once its run has ended, unless Keep.

// DefaultEpisodeIdle is the default of Config.EpisodeIdle.
const DefaultEpisodeIdle = 30 * time.Minute

// now is the server's clock (Config.Now, else the wall clock).
func (s *Server) now() time.Time {
	if s.cfg.Now != nil {
		return s.cfg.Now()
	}
	return time.Now()
}

// touch records that a client used e now.
func (e *episode) touch(now time.Time) {
	e.mu.Lock()
	e.touched = now
	e.mu.Unlock()
}

// abandoned says why e may be reclaimed at now, or "".
func (e *episode) abandoned(now time.Time, idle time.Duration) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.timedOut:
		return "its client stopped answering (" + e.reason + ")"
	case now.Sub(e.touched) >= idle:
		return fmt.Sprintf("no request touched it for %v", idle)
	}
	return ""
}

// reclaim frees the slots of abandoned episodes; it returns how many.
func (s *Server) reclaim() int {
	now := s.now()
	s.mu.Lock()
	var gone []*episode
	for id, e := range s.eps {
		if why := e.abandoned(now, s.cfg.EpisodeIdle); why != "" {
			delete(s.eps, id)
			gone = append(gone, e)
			e.stop("reclaimed: " + why)
		}
	}
	s.mu.Unlock()
	for _, e := range gone {
		e.mu.Lock()
		e.reclaimed = true
		ended := e.state == StateDone
		e.mu.Unlock()
		if ended && !s.cfg.Keep { // else the run's goroutine removes it (ended)
			os.RemoveAll(e.dir)
		}
	}
	return len(gone)
}

// ended is called by the run's goroutine after finish: a reclaimed
// episode's directory is removed here if reclaim found it still running.
func (s *Server) ended(e *episode) {
	e.mu.Lock()
	gone := e.reclaimed
	e.mu.Unlock()
	if gone && !s.cfg.Keep {
		os.RemoveAll(e.dir)
	}
}
