package sweep

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/coordbench/coordbench/internal/opterr"
)

// WriteCosts writes the cost files of the finished cases of s in dir
// (Costs.Write) and prints their totals to w, per model and in all, if
// the experiment has models.
func (s *Suite) WriteCosts(w io.Writer, dir string) error {
	if len(s.Experiment.ModelList()) == 0 {
		return nil // no model, no cost: no cost files
	}
	costs, err := s.ReadCosts(dir)
	if err != nil {
		return err
	}
	files, err := costs.Write(dir)
	if err != nil {
		return err
	}
	for _, m := range append(slices.Clone(costs.Models), "") {
		n, u, v := costs.ModelTotal(m)
		label := m
		if m == "" {
			label = "total"
		}
		in := strconv.FormatInt(u.InputTokens, 10)
		if u.PromptCachedInputTokens > 0 {
			in += fmt.Sprintf(" (%d prompt-cached)", u.PromptCachedInputTokens)
		}
		fmt.Fprintf(w, "cost %s: $%s for %d cases, %d calls (%s input, %d output tokens); %d cached calls, free\n",
			label, usd(v), n, u.Calls, in, u.OutputTokens, u.CachedCalls)
		if dn, du, dv := costs.DiscardedTotal(m); dn > 0 {
			fmt.Fprintf(w, "  and $%s on %d discarded attempts (%d calls): $%s spent in all\n", usd(dv), dn, du.Calls, usd(v+dv))
		}
	}
	fmt.Fprintf(w, "%-10s %s (and %s, %s, %s)\n", "cost:", files[0], filepath.Base(files[1]), filepath.Base(files[2]), filepath.Base(files[3]))
	return nil
}

// Refusal prints to w which cases the cost limit kept from starting and
// returns the error that ends the run (it points at the option
// "CostLimit", opterr.SeeText).
func (b *Budget) Refusal(w io.Writer) error {
	ids := b.NotStarted()
	n := fmt.Sprintf("%d cases", len(ids))
	if len(ids) == 1 {
		n = "1 case"
	}
	fmt.Fprintf(w, "cost limit: %s not started:\n", n)
	for _, id := range ids[:min(len(ids), 20)] {
		fmt.Fprintf(w, "  %s\n", id)
	}
	if len(ids) > 20 {
		fmt.Fprintf(w, "  … and %d more\n", len(ids)-20)
	}
	return fmt.Errorf("cost limit $%s reached: $%s spent so far, %s not started; rerun with a higher limit to resume%s",
		usd(b.Limit), usd(b.Spent()), n, opterr.SeeText([]string{"CostLimit"}))
}
