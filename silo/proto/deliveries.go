package proto

// Deliveries: the contents an agent has read, kept for content-aware
// failure analysis (silo/round's labels).

// Pos is a point in one agent's sequence of calls: just before its call
// number Call (0-based, counted within its turn) of round Round. Positions
// compare by round, then call.
type Pos struct {
	Round, Call int
}

// Before reports whether p comes before q, or is q.
func (p Pos) Before(q Pos) bool {
	return p.Round < q.Round || p.Round == q.Round && p.Call <= q.Call
}

// Delivery is one content an agent read: a message or broadcast returned by
// receive_messages, the version returned by a read_file hit, or a proposal
// of the consensus helper the agent was told of (ConsensusNews).
type Delivery struct {
	Round int    // round of the read
	Tool  string // ToolReceive, ToolReadFile or ToolPropose
	From  int    // the author: the sender, or the file's last writer
	// At is where in the reader's calls the content became available: after
	// the call that returned it (Call = its sequence + 1), or, told by
	// ConsensusNews, before the reader's next call.
	At Pos
	// Written is where in the author's calls the content was written: the
	// send, broadcast, write_file or propose_answer call. What the author
	// could have put in it is what was available to it there (Pos.Before).
	Written Pos
	// Text is what the agent read: a message's text; for a file, a string
	// content's text, any other content as its JSON.
	Text string
	// Seen is the author's provenance set when it wrote the content (sorted
	// shard indices): the most the content can carry.
	Seen []int
}

// delivery is a Delivery as kept in memory: references to the message or
// file version, no copies.
type delivery struct {
	round int
	after int // calls of the reader's turn executed before the content was available
	msg   *message
	file  *fileEntry
	prop  *proposal
}

// Deliveries returns every content agent read, in the order it read them
// (the reads of all rounds so far, nothing after a submission, since a
// submitted agent makes no more calls).
func (s *Store) Deliveries(agent int) []Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	if agent < 0 || agent >= s.n {
		return nil
	}
	got := s.agents[agent].got
	out := make([]Delivery, 0, len(got))
	for _, d := range got {
		if d.msg != nil {
			out = append(out, Delivery{Round: d.round, Tool: ToolReceive, From: d.msg.sender, At: Pos{d.round, d.after},
				Written: Pos{d.msg.round, d.msg.seq}, Text: d.msg.content, Seen: d.msg.prov.list()})
			continue
		}
		if d.prop != nil {
			out = append(out, Delivery{Round: d.round, Tool: ToolPropose, From: d.prop.proposer, At: Pos{d.round, d.after},
				Written: Pos{d.prop.round, d.prop.seq}, Text: d.prop.text, Seen: d.prop.prov.list()})
			continue
		}
		text, ok := jsonString(d.file.content)
		if !ok {
			text = string(d.file.content)
		}
		out = append(out, Delivery{Round: d.round, Tool: ToolReadFile, From: d.file.modifiedBy, At: Pos{d.round, d.after},
			Written: Pos{d.file.round, d.file.seq}, Text: text, Seen: d.file.prov.list()})
	}
	return out
}
