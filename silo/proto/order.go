package proto

// The order in which one round's messages reach their receivers
// (Options.MessageOrder, docs/silo-protocols.md).

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
)

// MessageOrder chooses the order of one round's messages and broadcasts
// in what receive_messages returns (rounds always come in order).
type MessageOrder string

const (
	// OrderRandom is the published order, seeded (Options.OrderSeed): P2P
	// messages of a round in a random order (the published code sorts
	// their files by random uuid names); broadcasts of a round by sender
	// id compared as text followed by "_" (its file names,
	// "{round}_{sender}_{uuid}": sender 10 before sender 1 before sender
	// 2), one sender's broadcasts of the round in a random order.
	OrderRandom MessageOrder = "random"
	// OrderFixed is (sender id, send sequence) within a round, numeric
	// ids: the order before issue 27, and the Store's when Options.
	// MessageOrder is empty (a random order needs the run's seed, which
	// only the caller knows).
	OrderFixed MessageOrder = "fixed"
)

// ParseMessageOrder checks an order name; "" is the published default,
// OrderRandom.
func ParseMessageOrder(s string) (MessageOrder, error) {
	switch MessageOrder(s) {
	case "", OrderRandom:
		return OrderRandom, nil
	case OrderFixed:
		return OrderFixed, nil
	}
	return "", fmt.Errorf("message order %q: want random (published, seeded) or fixed (sender id, send sequence)", s)
}

// MessageOrder returns the run's message order (the default filled in).
func (s *Store) MessageOrder() MessageOrder { return s.opts.MessageOrder }

// orderStream separates the message-order stream from other uses of a
// seed (the PCG's second word, mixed with the round).
const orderStream = 0x9e3779b97f4a7c15

// arrange puts msgs, one round's new messages in the fixed order (agent
// id, then call order), into the delivery order of o. OrderRandom draws
// from a PCG seeded with (seed, round), so a run and its replay deliver
// alike whatever order the agents' calls arrived in.
func arrange(msgs []*message, p Protocol, o MessageOrder, seed uint64, round int) {
	if o != OrderRandom || len(msgs) < 2 {
		return
	}
	rng := rand.New(rand.NewPCG(seed, orderStream^uint64(round)))
	rng.Shuffle(len(msgs), func(i, j int) { msgs[i], msgs[j] = msgs[j], msgs[i] })
	if p == Broadcast {
		slices.SortStableFunc(msgs, func(a, b *message) int {
			ka, kb := strconv.Itoa(a.sender)+"_", strconv.Itoa(b.sender)+"_"
			switch {
			case ka < kb:
				return -1
			case ka > kb:
				return 1
			}
			return 0
		})
	}
}
