package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness/check"
)

func desValidateCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "validate DIR",
		Short: "Re-check a run directory from its artifacts alone",
		Long: `Re-check a run directory without running the simulator: replay
trace.jsonl against instance.json and verify the plant's physical rules
(one job per machine, route order, capable cells, buffer capacities, nothing
processed while a machine is down, power levels, ...), recompute every metric
and compare it with metrics.json, and cross-check decisions.jsonl,
messages.jsonl and manifest.json. Exit 0 only if every check holds. A
run that is not a result (status aborted: its model or external runner
failed; status interrupted: the user stopped it) is checked like any
other, and reported as such instead of "all checks hold".`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := check.Dir(args[0])
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				if err := enc.Encode(rep); err != nil {
					return err
				}
			} else {
				for _, p := range rep.Problems {
					fmt.Fprintln(w, p)
				}
				s := rep.Stats
				if note, ok := notAResult[factory.Status(s.Status)]; ok {
					fmt.Fprintln(w, note)
				}
				fmt.Fprintf(w, "%s seed %d: %d records, %d jobs (%d completed), %d decisions, %d messages: ",
					s.Instance, s.Seed, s.Records, s.Jobs, s.Completed, s.Decisions, s.Messages)
			}
			if !rep.OK() {
				return fmt.Errorf("%s: %d problem(s)", args[0], len(rep.Problems))
			}
			if !asJSON {
				if _, ok := notAResult[factory.Status(rep.Stats.Status)]; ok {
					fmt.Fprintf(w, "the artifacts are consistent, but the run is not a result (status %s)\n", rep.Stats.Status)
				} else {
					fmt.Fprintln(w, "all checks hold")
				}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return c
}

// notAResult says why a run of each of these statuses is not a result:
// des validate checks its artifacts like any other's, and says so.
var notAResult = map[factory.Status]string{
	factory.Interrupted: "the run was interrupted (status interrupted): the user stopped it before its end; its metrics describe the state it had reached",
	factory.Aborted: "the run was aborted (status aborted): its controller could not play it to its end (a model that did not answer, " +
		"an external runner that failed; the run's error says which); its metrics describe the state it had reached and score nothing",
}
