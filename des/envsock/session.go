package envsock

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/envcore"
	"github.com/coordbench/coordbench/des/factory"
)

// OpenRequest is the body of OpOpen.
type OpenRequest struct {
	Instance string `json:"instance"`
	Paradigm string `json:"paradigm"`
	// N is the number of slots (episodes stepped together).
	N int `json:"n"`
	// Reward, if set, are the reward weights (python/coordbench_env's
	// Reward); without, every reward of the reply is 0.
	Reward map[string]float64 `json:"reward,omitempty"`
	// Payloads adds each pending decision's payload (docs/payload.md) to
	// the reply's tail, as the HTTP transport sends it.
	Payloads bool `json:"payloads,omitempty"`
	// SharedMemory asks for the fixed part of every step's reply in
	// memory shared with the client: the reply to OpOpen then carries the
	// descriptor of a file to map (SCM_RIGHTS) and OpenReply.SharedMemory
	// its size, and a step's reply frame holds only the tail.
	SharedMemory bool `json:"shared_memory,omitempty"`
	// Play, if set, lists the agents the client plays, as over HTTP
	// (docs/http-server.md, "Playing some agents"): the reply's per-agent
	// arrays hold those only, a decision without one of them never reaches
	// the client, and the built-in controller Others (default "rule")
	// answers the rest, seeded with the episode's seed. An empty list
	// plays none: the server plays each episode to its end at its reset.
	Play   []string `json:"play"`
	Others string   `json:"others,omitempty"`
}

// OpenReply answers OpOpen: the agents of every slot, in the order of the
// reply's per-agent arrays, with their action counts and vector lengths.
type OpenReply struct {
	Instance string `json:"instance"`
	Paradigm string `json:"paradigm"`
	N        int    `json:"n"`
	// Agents are the agents of the reply's arrays: the played ones when
	// the request names some (Played lists them too, and Others who
	// answers the rest).
	Agents  []string             `json:"agents"`
	Played  []string             `json:"played,omitempty"`
	Others  string               `json:"others,omitempty"`
	Layout  []envcore.AreaLayout `json:"layout"`
	Offer   []string             `json:"offer"`
	Actions []int                `json:"actions"`
	Lengths []int                `json:"lengths"`
	// SharedMemory is the size of the shared region holding the fixed
	// part of the step replies (0: they come in the frames); when asked
	// for and not granted, SharedMemoryError says why.
	SharedMemory      int    `json:"shared_memory,omitempty"`
	SharedMemoryError string `json:"shared_memory_error,omitempty"`
}

// session is one connection's vector of slots. It is used by the
// connection's goroutine only (its slots' goroutines take turns with it).
type session struct {
	cfg      *Config
	open     bool
	instance string
	plant    *factory.Plant
	mode     coord.AuthorityMode
	agents   []string
	index    map[string]int
	shapes   []envcore.Shape
	obsOff   []int // per agent, its vector's offset in a slot's
	maskOff  []int // per agent, its mask's offset in a slot's
	maxLen   int
	weights  *Weights
	payloads bool
	played   map[string]bool // the agents the client plays; nil: every agent
	others   string          // the built-in controller of the rest (with played)
	lay      replyLayout
	reply    []byte       // the fixed part of the step reply, written by the slots
	shm      *sharedReply // where reply lives when shared with the client (else nil)
	sendFD   bool         // the reply to OpOpen passes shm's descriptor
	slots    []*slot
}

func (s *session) openEpisodes(req *OpenRequest) (*OpenReply, error) {
	s.close()
	c := s.cfg
	if req.N < 1 || req.N > c.MaxEnvs {
		return nil, fmt.Errorf(`"n" is %d: want 1 to %d (the server's limit of episodes per session)`, req.N, c.MaxEnvs)
	}
	// Only reported instances and generated ones: never a server-side file.
	if !strings.HasPrefix(req.Instance, "gen:") && !slices.Contains(factory.BuiltinNames(), req.Instance) {
		return nil, fmt.Errorf("unknown instance %q (a reported instance: %s; or gen:A<areas>C<cells>)",
			envcore.Trunc(req.Instance, 64), strings.Join(factory.BuiltinNames(), ", "))
	}
	if req.Paradigm == "" {
		return nil, fmt.Errorf(`no "paradigm"`)
	}
	mode, err := c.Paradigms.Lookup(req.Paradigm)
	if err != nil {
		return nil, err
	}
	in, err := factory.DefaultSizeLimits().Resolve(req.Instance)
	if err != nil {
		return nil, err
	}
	var w *Weights
	if req.Reward != nil {
		if w, err = NewWeights(req.Reward); err != nil {
			return nil, err
		}
	}
	plant := factory.Compile(in)
	agents := envcore.AgentIDs(plant, mode)
	playedList, others, err := envcore.ResolvePlay(req.Play, req.Others, agents, c.Builtins)
	if err != nil {
		return nil, err
	}
	var played map[string]bool
	if req.Play != nil {
		agents, played = playedList, make(map[string]bool, len(playedList))
		for _, id := range playedList {
			played[id] = true
		}
	}
	layout, offer := envcore.Layout(plant), envcore.OfferedModes(mode)
	out := &OpenReply{Instance: in.Name, Paradigm: mode.ID, N: req.N, Agents: agents, Layout: layout, Offer: offer, Others: others,
		Actions: []int{}, Lengths: []int{}}
	if played != nil {
		out.Played = agents
	}
	*s = session{cfg: c, instance: in.Name, plant: plant, mode: mode, agents: agents, index: map[string]int{},
		weights: w, payloads: req.Payloads, played: played, others: others}
	lv, m := 0, 0
	for i, id := range agents {
		sh, err := envcore.NewShape(id, layout, offer)
		if err != nil {
			return nil, err
		}
		s.index[id] = i
		s.shapes = append(s.shapes, sh)
		s.obsOff, s.maskOff = append(s.obsOff, lv), append(s.maskOff, m)
		lv, m = lv+sh.Length, m+sh.Actions
		s.maxLen = max(s.maxLen, sh.Length)
		out.Actions, out.Lengths = append(out.Actions, sh.Actions), append(out.Lengths, sh.Length)
	}
	s.lay = newReplyLayout(req.N, len(agents), lv, m)
	if s.lay.fixed > c.MaxReply {
		return nil, fmt.Errorf("a reply for %d episodes of %s would take %d bytes, more than the server's maximum %d; use fewer", req.N, in.Name, s.lay.fixed, c.MaxReply)
	}
	if req.SharedMemory {
		if shm, err := newSharedReply(s.lay.fixed); err != nil {
			out.SharedMemoryError = err.Error()
		} else {
			s.shm, s.sendFD, s.reply = shm, true, shm.mem
			out.SharedMemory = s.lay.fixed
		}
	}
	if s.reply == nil {
		s.reply = make([]byte, s.lay.fixed)
	}
	for i := range req.N {
		s.slots = append(s.slots, newSlot(s, i))
	}
	for _, sl := range s.slots {
		sl.idle()
	}
	s.open = true
	return out, nil
}

// tail is the JSON part of a step's reply.
type tail struct {
	Ended    []*endNote    `json:"ended,omitempty"`
	Problems []problemNote `json:"problems,omitempty"`
	Payloads []payloadNote `json:"payloads,omitempty"`
	Errors   []errorNote   `json:"errors,omitempty"`
}

type payloadNote struct {
	Env      int             `json:"env"`
	Decision json.RawMessage `json:"decision"`
}

type errorNote struct {
	Env   int    `json:"env"`
	Error string `json:"error"`
}

// step plays one step request (OpStep) and returns the reply: the fixed
// part, then the tail.
func (s *session) step(body []byte, dst []byte) ([]byte, error) {
	if !s.open {
		return nil, fmt.Errorf("no episodes: open the session first")
	}
	l := &s.lay
	if len(body) != l.requestSize() {
		return nil, fmt.Errorf("a step request for %d episodes of %d agents has %d bytes, not %d", l.n, l.a, len(body), l.requestSize())
	}
	seeds, acts, cmds := body[:8*l.n], body[8*l.n:8*l.n+4*l.n*l.a], body[8*l.n+4*l.n*l.a:]
	for i, c := range cmds {
		switch c {
		case CmdNone, CmdReset, CmdSkip:
		case CmdAct:
			if !s.slots[i].running {
				return nil, fmt.Errorf("episode %d has no pending decision to act on (start one first)", i)
			}
		default:
			return nil, fmt.Errorf("episode %d: unknown command %d", i, c)
		}
	}
	// The slots advance in parallel, each on one worker: a share of the
	// slots per worker, the session goroutine taking the first.
	w := min(s.cfg.Workers, l.n)
	var wg sync.WaitGroup
	for k := 1; k < w; k++ {
		wg.Go(func() { s.advance(k, w, seeds, acts, cmds) })
	}
	s.advance(0, w, seeds, acts, cmds)
	wg.Wait()
	var t tail
	for i, c := range cmds {
		if c == CmdNone || c == CmdSkip {
			continue
		}
		sl := s.slots[i]
		if sl.end != nil {
			t.Ended = append(t.Ended, sl.end)
		}
		if c == CmdAct {
			t.Problems = append(t.Problems, sl.problems...)
		}
		if sl.payload != nil {
			t.Payloads = append(t.Payloads, payloadNote{i, sl.payload})
		}
		if sl.err != "" {
			t.Errors = append(t.Errors, errorNote{i, sl.err})
		}
	}
	dst = dst[:0]
	if s.shm == nil { // else the client reads the fixed part where the slots wrote it
		dst = append(dst, s.reply...)
	}
	var tb []byte
	if t.Ended != nil || t.Problems != nil || t.Payloads != nil || t.Errors != nil {
		var err error
		if tb, err = json.Marshal(&t); err != nil {
			return nil, err
		}
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(tb)))
	return append(dst, tb...), nil
}

// advance plays the commands of the slots k, k+w, k+2w, …
func (s *session) advance(k, w int, seeds, acts, cmds []byte) {
	l := &s.lay
	for i := k; i < l.n; i += w {
		sl := s.slots[i]
		switch cmds[i] {
		case CmdNone:
			sl.idle()
			sl.clearNotes()
		case CmdAct:
			for a := range sl.acts {
				sl.acts[a] = int32(binary.LittleEndian.Uint32(acts[4*(i*l.a+a):]))
			}
			sl.act()
		case CmdReset:
			sl.start(binary.LittleEndian.Uint64(seeds[8*i:]))
		}
	}
}

// end abandons every running episode; the slots stay, idle, for the
// next resets.
func (s *session) end() {
	for _, sl := range s.slots {
		sl.abandon()
		sl.idle()
		sl.clearNotes()
	}
}

// close abandons every running episode and forgets the slots.
func (s *session) close() {
	for _, sl := range s.slots {
		sl.abandon()
	}
	s.open = false
	s.shm.release()
	s.shm, s.sendFD, s.reply = nil, false, nil
}
