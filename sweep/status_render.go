package sweep

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Render writes the status for people: the counts, one line per model,
// and the money spent and, by estimate, still to spend.
func (st *Status) Render(w io.Writer) error {
	fmt.Fprintf(w, "experiment %s (%s), from %s\n", short(st.ExperimentID), st.Benchmark, strings.Join(st.Sources, ", "))
	fmt.Fprintf(w, "cases: %d planned, %d done, %d failed, %d not started\n", st.Total, st.Done, st.Failed, st.NotStarted)
	if len(st.Models) == 1 && st.Models[0].Model == "" {
		// Built-in controllers or scripted agents only: no model, no money.
		_, err := fmt.Fprintln(w, "no model calls: the experiment runs no model-backed controller or agents")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "model\tplanned\tdone\tfailed\tnot started\tcalls\tcached calls\tspent USD\tremaining USD (estimate)")
	for _, m := range st.Models {
		label := m.Model
		if label == "" {
			label = "(no model)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n", label, m.Planned, m.Done, m.Failed, m.NotStarted,
			m.Calls, m.CachedCalls, usd(m.SpentUSD), usd(m.RemainingUSD))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	bound := "estimate"
	if st.Bound {
		bound = "upper bound"
	}
	discarded := ""
	if st.Discarded > 0 {
		discarded = fmt.Sprintf(" (of which $%s on %d discarded attempts: runs that failed, were killed, were handed back or ran twice, see %s)", usd(st.DiscardedUSD), st.Discarded, FileAttempts)
	}
	_, err := fmt.Fprintf(w, "spent: $%s%s; remaining: $%s (%s; cached replies cost nothing)\n", usd(st.SpentUSD), discarded, usd(st.RemainingUSD), bound)
	if err == nil && st.Unfinished > 0 {
		_, err = fmt.Fprintf(w, "not ended: %d model-backed case runs in flight or left by a killed run, $%s so far (not in spent yet: a run's cost counts when it ends, a killed run's when sweep run is run again in its directory)\n",
			st.Unfinished, usd(st.UnfinishedUSD))
	}
	return err
}
