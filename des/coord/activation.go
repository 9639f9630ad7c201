package coord

import (
	"errors"
	"fmt"
	"slices"
)

// Selective activation (the bid_invitations switch): a bid round
// announces its work item to the k best-placed candidate cells only, so
// fewer cells are activated and fewer announce/bid/decline messages are
// sent. The cut is the harness's, made by a fixed rule over figures the
// payload shows, and it is recorded whole in every invited cell's
// contract (Contract.Invitation), so that `des validate` can re-check it.
// docs/paradigms.md, "Communication efficiency", describes it.

// MaxBidInvitations bounds bid_invitations: far above any plant's cell
// count, so the bound never cuts a round short.
const MaxBidInvitations = 1 << 20

// Invitation is a bid round's cut under bid_invitations: the candidate
// cells in rank order, the first K of them invited (all of them when
// there are no more than K).
type Invitation struct {
	K       int       `json:"k"`
	Ranking []Invitee `json:"ranking"`
}

// Invitee is one candidate cell of a bid round with the figures it was
// ranked by. The rank is: cells that have not declined an earlier
// announcement of this work item first, then cells with a free inbound
// slot, then the least Score, then the plant's cell order.
type Invitee struct {
	Cell    string `json:"cell"`
	Invited bool   `json:"invited"`
	// Declined: the cell declined an earlier announcement of this work
	// item (a re-announcement asks the others first).
	Declined  bool `json:"declined,omitempty"`
	FreeSlots int  `json:"free_slots"`
	// Score is backlog + proc_time + transport_time, each as the cell's
	// own payload shows it (observation.cell.backlog, contract.proc_time,
	// contract.transport_time), rounded to 0.01: the nominal time until
	// the cell would finish the item, its machines taken as one.
	Score float64 `json:"score"`

	index int // the cell's index
}

// inviteState is a work item's bid-invitation state (itemState.inv).
type inviteState struct {
	cleared  bool   // declined was cleared for this item (at its first cut)
	ranked   bool   // the current round's candidates were cut
	declined []bool // by cell: declined an announcement of this item
	inv      Invitation
}

// next is s emptied for a new work item, keeping its storage.
func (s *inviteState) next() inviteState {
	return inviteState{declined: s.declined, inv: Invitation{Ranking: s.inv.Ranking[:0]}}
}

// validateInvitations checks bid_invitations.
func (m AuthorityMode) validateInvitations() error {
	switch k := m.BidInvitations; {
	case k < 0 || k > MaxBidInvitations:
		return fmt.Errorf("bid_invitations must be between 0 (every candidate cell) and %d (got %d)", MaxBidInvitations, k)
	case k > 0 && !m.MediatedBidRoundEnabled:
		return errors.New("bid_invitations has no effect without a bid round: set mediated_bid_round_enabled (routing heterarchical_cnp, or hierarchical and holonic_hybrid with area bid rounds) or leave bid_invitations out")
	}
	return nil
}

// invitees returns the cells the current bid round announces to: every
// candidate, or under bid_invitations the k best-placed, cut once per
// round (it.candidates becomes the invited cells, in cell order).
func (in *Interpreter) invitees() []int {
	it := &in.item
	k := it.mode.BidInvitations
	if k <= 0 || it.inv.ranked {
		return it.candidates
	}
	it.inv.ranked = true
	if !it.inv.cleared {
		it.inv.declined = reuse(it.inv.declined, len(in.eng.P.Cells))
		it.inv.cleared = true
	}
	p := in.eng.P
	from := in.eng.JobLocation(it.job)
	r := it.inv.inv.Ranking[:0]
	for _, c := range it.candidates {
		ci := in.cellInfo(c)
		score := round2(round2(ci.Backlog) + round2(p.ProcTime(c, it.op, in.work.Base)) + p.TransportTime(from, c))
		r = append(r, Invitee{Cell: p.Cells[c].ID, Declined: it.inv.declined[c], FreeSlots: ci.FreeSlots, Score: score, index: c})
	}
	slices.SortStableFunc(r, compareInvitees) // candidates come in cell order: ties keep it
	it.candidates = it.candidates[:0]
	for i := range r {
		if i < k {
			r[i].Invited = true
			it.candidates = append(it.candidates, r[i].index)
		}
	}
	slices.Sort(it.candidates) // announced in cell order, as without a cut
	it.inv.inv = Invitation{K: k, Ranking: r}
	return it.candidates
}

// compareInvitees orders candidates by the invitation rank (Invitee).
func compareInvitees(a, b Invitee) int {
	switch {
	case a.Declined != b.Declined:
		return boolRank(a.Declined)
	case (a.FreeSlots > 0) != (b.FreeSlots > 0):
		return boolRank(a.FreeSlots <= 0)
	case a.Score < b.Score:
		return -1
	case a.Score > b.Score:
		return 1
	}
	return 0
}

// boolRank is -1 when the first of two differing flags is false, else 1.
func boolRank(firstSet bool) int {
	if firstSet {
		return 1
	}
	return -1
}

// invitation is the current round's cut for the bid views' contracts (nil
// without bid_invitations).
func (in *Interpreter) invitation() *Invitation {
	if in.item.mode.BidInvitations <= 0 {
		return nil
	}
	return &in.item.inv.inv
}

// noteDecline remembers that cell c declined the item's announcement,
// for the rank of a re-announcement.
func (in *Interpreter) noteDecline(c int) {
	if it := &in.item; it.mode.BidInvitations > 0 && it.inv.cleared {
		it.inv.declined[c] = true
	}
}
