package proto

import "maps"

// Tally counts one agent's (or one round's, or the run's) tool use.
type Tally struct {
	Calls         map[string]int `json:"calls"`           // calls by tool name, rejected ones included
	Errors        int            `json:"errors"`          // rejected calls (error results)
	MessagesSent  int            `json:"messages_sent"`   // successful send_message / broadcast_message
	BytesSent     int64          `json:"bytes_sent"`      // content bytes of successful sends, broadcasts and file writes
	Writes        int            `json:"writes"`          // successful write_file / delete_file
	Reads         int            `json:"reads"`           // executed receive_messages, list_files, read_file
	Received      int            `json:"received"`        // messages delivered by receive_messages, plus read_file hits
	ReadsOfOthers int            `json:"reads_of_others"` // sfs: read_file hits on an entry last modified by another agent
	M             int            `json:"m"`               // contribution to the published code's m (see Counts.D)
}

func (t *Tally) call(tool string) {
	if t.Calls == nil {
		t.Calls = map[string]int{}
	}
	t.Calls[tool]++
}

func (t *Tally) add(o *Tally) {
	for k, v := range o.Calls {
		if t.Calls == nil {
			t.Calls = map[string]int{}
		}
		t.Calls[k] += v
	}
	t.Errors += o.Errors
	t.MessagesSent += o.MessagesSent
	t.BytesSent += o.BytesSent
	t.Writes += o.Writes
	t.Reads += o.Reads
	t.Received += o.Received
	t.ReadsOfOthers += o.ReadsOfOthers
	t.M += o.M
}

func (t Tally) clone() Tally {
	t.Calls = maps.Clone(t.Calls)
	return t
}

// Counts is the accounting of all ended rounds.
type Counts struct {
	Protocol Protocol
	N        int
	Rounds   int     // rounds ended
	Total    Tally   // whole run
	ByAgent  []Tally // index = agent id
	ByRound  []Tally // index = round (ByRound[0] is empty)
}

// density returns m / (N(N-1)), 0 when N = 1.
func density(m, n int) float64 {
	if n <= 1 {
		return 0
	}
	return float64(m) / float64(n*(n-1))
}

// D is the communication density as the published code counts it:
// m / (N(N-1)) with m = Total.M, i.e. successful send_message calls (p2p),
// broadcast_message calls (broadcast), or, for sfs, the number of keys in
// each round's final snapshot last modified in that round, summed over
// rounds.
func (c Counts) D() float64 { return density(c.Total.M, c.N) }

// DReads is the paper's sfs density: successful reads of entries written by
// another agent, over N(N-1). It is 0 for the other protocols.
func (c Counts) DReads() float64 { return density(c.Total.ReadsOfOthers, c.N) }

// Counts returns the accounting of all ended rounds (calls of an open round
// are added when it ends).
func (s *Store) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	ended := s.round
	if s.open {
		ended--
	}
	c := Counts{Protocol: s.proto, N: s.n, Rounds: ended, Total: s.total.clone()}
	for _, t := range s.byAgent {
		c.ByAgent = append(c.ByAgent, t.clone())
	}
	for _, t := range s.byRound[:ended+1] {
		c.ByRound = append(c.ByRound, t.clone())
	}
	return c
}
