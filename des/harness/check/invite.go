package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
)

// The invitation check: under a paradigm (or an adaptive paradigm's mode)
// with bid_invitations k > 0, a bid round announces its work item to the
// k best-placed candidate cells only, and every invited cell's payload
// records the cut (contract.invitation, docs/paradigms.md). From
// decisions.jsonl, messages.jsonl and the instance alone, the check
// re-derives the candidates (the capable cells, of the announcing area if
// an area announces, less those that rejected the item), re-ranks them by
// the documented rule from the recorded figures, compares the invited
// cells' figures with their own payloads, and requires the bidders and the
// announcements of the step to be exactly the invited cells. Under k = 0
// no payload may carry a cut.

// ckInvite is the check id.
const ckInvite = "invitation"

// bidLine is what the invitation check reads of a bid decision.
type bidLine struct {
	line    int
	Step    int    `json:"step"`
	AgentID string `json:"agent_id"`
	Payload struct {
		Observation struct {
			Cell *struct {
				FreeSlots int     `json:"free_slots"`
				Backlog   float64 `json:"backlog"`
			} `json:"cell"`
		} `json:"observation"`
		Context struct {
			WorkItem *struct {
				Job    int    `json:"job"`
				Op     int    `json:"op"`
				OpType string `json:"op_type"`
			} `json:"work_item"`
			Authority *struct {
				Mode string `json:"mode_id"`
			} `json:"authority"`
			Contract *struct {
				From          string          `json:"from"`
				Round         int             `json:"round"`
				ProcTime      float64         `json:"proc_time"`
				TransportTime float64         `json:"transport_time"`
				Rejected      []string        `json:"rejected"`
				Invitation    json.RawMessage `json:"invitation"`
			} `json:"contract"`
		} `json:"context"`
		Options []struct {
			Action string `json:"action"`
		} `json:"options"`
	} `json:"payload"`
	Action int `json:"action"`
}

// invitation is a recorded cut (coord.Invitation).
type invitation struct {
	K       int       `json:"k"`
	Ranking []invitee `json:"ranking"`
}

// invitee is one ranked candidate (coord.Invitee).
type invitee struct {
	Cell      string  `json:"cell"`
	Invited   bool    `json:"invited"`
	Declined  bool    `json:"declined"`
	FreeSlots int     `json:"free_slots"`
	Score     float64 `json:"score"`
}

// itemKey names a work item: a job's operation.
type itemKey struct{ job, op int }

// inviteCheck collects the bid decisions and announcements of a run.
type inviteCheck struct {
	k         map[string]int // bid_invitations by mode id (manifestFile.invitations)
	cuts      bool           // some mode has bid_invitations > 0
	stray     int            // under no such mode: the first line recording a cut
	bids      []bidLine
	announced map[int][]string // receivers of announce messages, by step
	bad       error            // the first line that could not be read
}

func newInviteCheck(k map[string]int) *inviteCheck {
	ic := &inviteCheck{k: k, announced: map[int][]string{}}
	for _, n := range k {
		ic.cuts = ic.cuts || n > 0
	}
	return ic
}

// audit reads decisions.jsonl line `line` if it is a bid decision. When
// no mode cuts, a line only must not record a cut: the key, unquoted,
// can only be the contract's (a quote inside a string is escaped).
func (ic *inviteCheck) audit(line int, b []byte) {
	if !ic.cuts {
		if ic.stray == 0 && bytes.Contains(b, []byte(`"invitation":`)) {
			ic.stray = line
		}
		return
	}
	if !bytes.Contains(b, []byte(`"kind":"bid"`)) {
		return
	}
	var l bidLine
	if err := json.Unmarshal(b, &l); err != nil {
		if ic.bad == nil {
			ic.bad = fmt.Errorf("decisions.jsonl:%d: %v", line, err)
		}
		return
	}
	l.line = line
	ic.bids = append(ic.bids, l)
}

// message reads a messages.jsonl line if it is an announcement.
func (ic *inviteCheck) message(b []byte) {
	if !ic.cuts || !bytes.Contains(b, []byte(`"announce"`)) {
		return
	}
	var m struct {
		Step     int    `json:"step"`
		Type     string `json:"type"`
		Receiver string `json:"receiver"`
	}
	if json.Unmarshal(b, &m) == nil && m.Type == "announce" {
		ic.announced[m.Step] = append(ic.announced[m.Step], m.Receiver)
	}
}

// check runs the invitation check; own is the paradigm's own id, the
// mode of a payload without an authority.
func (ic *inviteCheck) check(p *plantModel, own string, add func(check, format string, args ...any)) {
	if ic.bad != nil {
		add(ckInvite, "%v", ic.bad)
		return
	}
	if ic.stray > 0 {
		add(ckInvite, "decisions.jsonl:%d: a payload records a bid invitation, yet no mode of paradigm %q has bid_invitations", ic.stray, own)
		return
	}
	declinedBefore := map[itemKey]map[string]bool{} // cells that declined an announcement of the item
	for start := 0; start < len(ic.bids); {
		end := start + 1
		for end < len(ic.bids) && ic.bids[end].Step == ic.bids[start].Step {
			end++
		}
		step := ic.bids[start:end:end]
		ic.checkStep(p, own, step, declinedBefore, add)
		for i := range step {
			l := &step[i]
			w := l.Payload.Context.WorkItem
			if w == nil || l.Action < 0 || l.Action >= len(l.Payload.Options) || l.Payload.Options[l.Action].Action != "decline" {
				continue
			}
			key := itemKey{w.Job, w.Op}
			if declinedBefore[key] == nil {
				declinedBefore[key] = map[string]bool{}
			}
			declinedBefore[key][strings.TrimPrefix(l.AgentID, "cell:")] = true
		}
		start = end
	}
}

// checkStep checks the bid decisions of one step.
func (ic *inviteCheck) checkStep(p *plantModel, own string, step []bidLine,
	declinedBefore map[itemKey]map[string]bool, add func(check, format string, args ...any)) {
	first := &step[0]
	ctx := &first.Payload.Context
	mode := own
	if ctx.Authority != nil {
		mode = ctx.Authority.Mode
	}
	want := ic.k[mode]
	where := fmt.Sprintf("decisions.jsonl:%d (step %d)", first.line, first.Step)
	var inv *invitation
	for i := range step {
		ct := step[i].Payload.Context.Contract
		if ct == nil || step[i].Payload.Context.WorkItem == nil {
			add(ckInvite, "decisions.jsonl:%d: a bid decision with no contract or work item", step[i].line)
			return
		}
		var got *invitation
		if len(ct.Invitation) > 0 {
			got = new(invitation)
			if err := json.Unmarshal(ct.Invitation, got); err != nil {
				add(ckInvite, "decisions.jsonl:%d: invitation: %v", step[i].line, err)
				return
			}
		}
		if i > 0 && ((got == nil) != (inv == nil) || got != nil && (got.K != inv.K || !slices.Equal(got.Ranking, inv.Ranking))) {
			add(ckInvite, "%s: the bid decisions of one round record different invitations", where)
			return
		}
		inv = got
	}
	if inv == nil {
		if want > 0 {
			add(ckInvite, "%s: mode %q announces to %d cells, but the bid payloads record no invitation", where, mode, want)
		}
		return
	}
	if inv.K != want {
		add(ckInvite, "%s: the invitation says k = %d; mode %q has bid_invitations %d", where, inv.K, mode, want)
		return
	}
	// The candidates: capable cells (of the announcing area), less those
	// that rejected the item.
	area := strings.TrimPrefix(ctx.Contract.From, "area:")
	var cands []string
	for _, c := range p.cells {
		if c.caps[ctx.WorkItem.OpType] > 0 && (ctx.Contract.From == "plant" || c.area == area) &&
			!slices.Contains(ctx.Contract.Rejected, c.id) {
			cands = append(cands, c.id)
		}
	}
	var ranked []string
	for _, r := range inv.Ranking {
		ranked = append(ranked, r.Cell)
	}
	if sorted := slices.Sorted(slices.Values(ranked)); !slices.Equal(sorted, slices.Sorted(slices.Values(cands))) {
		add(ckInvite, "%s: the invitation ranks %v; the candidates of job %d op %d are %v", where, ranked,
			ctx.WorkItem.Job, ctx.WorkItem.Op, cands)
		return
	}
	before := declinedBefore[itemKey{ctx.WorkItem.Job, ctx.WorkItem.Op}]
	var invited []string
	for i, r := range inv.Ranking {
		if r.Invited != (i < inv.K) {
			add(ckInvite, "%s: %s is ranked %d of %d with k = %d, yet invited is %v", where, r.Cell, i+1, len(inv.Ranking), inv.K, r.Invited)
		}
		if r.Invited {
			invited = append(invited, "cell:"+r.Cell)
		}
		if r.Declined && !before[r.Cell] {
			add(ckInvite, "%s: %s is marked as having declined job %d op %d before, and never did", where, r.Cell, ctx.WorkItem.Job, ctx.WorkItem.Op)
		}
		if i > 0 && rankAfter(&inv.Ranking[i-1], &r, p.cellIdx) {
			add(ckInvite, "%s: %s is ranked after %s against the rule (declined, free slot, score, cell order)", where, inv.Ranking[i-1].Cell, r.Cell)
		}
	}
	var bidders []string
	for i := range step {
		l := &step[i]
		bidders = append(bidders, l.AgentID)
		cell := strings.TrimPrefix(l.AgentID, "cell:")
		j := slices.IndexFunc(inv.Ranking, func(r invitee) bool { return r.Cell == cell })
		if j < 0 || l.Payload.Observation.Cell == nil {
			continue // reported below: not invited
		}
		r, o, ct := inv.Ranking[j], l.Payload.Observation.Cell, l.Payload.Context.Contract
		if score := round2(o.Backlog + ct.ProcTime + ct.TransportTime); r.FreeSlots != o.FreeSlots || r.Score != score {
			add(ckInvite, "decisions.jsonl:%d: %s is ranked with free_slots %d, score %v; its payload gives %d and %v",
				l.line, cell, r.FreeSlots, r.Score, o.FreeSlots, score)
		}
	}
	slices.Sort(bidders)
	slices.Sort(invited)
	if !slices.Equal(bidders, invited) {
		add(ckInvite, "%s: the invited cells are %v; the cells that decided the bid are %v", where, invited, bidders)
	}
	announced := slices.Sorted(slices.Values(ic.announced[first.Step]))
	if !slices.Equal(announced, invited) {
		add(ckInvite, "%s: the invited cells are %v; messages.jsonl announces the item to %v", where, invited, announced)
	}
}

// rankAfter reports whether candidate a must rank after candidate b: the
// rule of docs/paradigms.md (cells that declined the item before last,
// then those without a free slot, then by score, then by the instance's
// cell order, which is the plant's).
func rankAfter(a, b *invitee, cellIdx map[string]int) bool {
	switch {
	case a.Declined != b.Declined:
		return a.Declined
	case (a.FreeSlots > 0) != (b.FreeSlots > 0):
		return a.FreeSlots <= 0
	case a.Score != b.Score:
		return a.Score > b.Score
	}
	return cellIdx[a.Cell] > cellIdx[b.Cell]
}

// invitations gives the bid_invitations of the manifest's paradigm and
// of its adaptive modes by mode id (the built-ins have none).
func (man *manifestFile) invitations() map[string]int {
	k := map[string]int{man.Paradigm.ID: man.Paradigm.Invite}
	if a := man.Paradigm.Adaptive; a != nil {
		for _, m := range a.Modes {
			k[m.ID] = m.Invite
		}
	}
	return k
}

// round2 rounds as the payload's figures are rounded (0.01).
func round2(x float64) float64 { return math.Round(x*100) / 100 }
