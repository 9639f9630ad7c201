package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness/check"
)

func desValidateCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "validate DIR",
		Short: "Re-check a run directory, or every case of a suite, from its artifacts alone",
		Long: `Re-check a run directory without running the simulator: replay
trace.jsonl against instance.json and verify the plant's physical rules
(one job per machine, route order, capable cells, buffer capacities, nothing
processed while a machine is down, power levels, ...), recompute every metric
and compare it with metrics.json, and cross-check decisions.jsonl,
messages.jsonl and manifest.json. Exit 0 only if every check holds. A
run that is not a result (status aborted: its model or external runner
failed; status interrupted: the user stopped it) is checked like any
other, and reported as such instead of "all checks hold".

Given a des suite directory (one holding suite.json), it checks every
case of cases/<id>/ the same way, one line per case and a total; the
failed cases (failed/<id>/) are not results and are counted, not checked.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, w := args[0], cmd.OutOrStdout()
			switch check.SuiteKind(dir) {
			case "des":
				return validateSuite(w, dir, asJSON)
			case "silo":
				return fmt.Errorf("%s is a silo suite directory: des validate checks des runs and des suites (their cases/<id>/)", dir)
			}
			rep, err := check.Dir(dir)
			if err != nil {
				return err
			}
			if err := printReport(w, asJSON, rep, func() {
				for _, p := range rep.Problems {
					fmt.Fprintln(w, p)
				}
				s := rep.Stats
				if note, ok := notAResult[factory.Status(s.Status)]; ok {
					fmt.Fprintln(w, note)
				}
				fmt.Fprintf(w, "%s seed %d: %d records, %d jobs (%d completed), %d decisions, %d messages: ",
					s.Instance, s.Seed, s.Records, s.Jobs, s.Completed, s.Decisions, s.Messages)
			}); err != nil {
				return err
			}
			if !rep.OK() {
				return fmt.Errorf("%s: %d problem(s)", dir, len(rep.Problems))
			}
			if !asJSON {
				fmt.Fprintln(w, verdict(rep))
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON (for a suite: dir, cases (one run report each) and failed)")
	return c
}

// validateSuite checks every case of the des suite directory dir: its
// problems, then one line per case, then the total.
func validateSuite(w io.Writer, dir string, asJSON bool) error {
	rep, err := check.Suite(dir)
	if err != nil {
		return err
	}
	if err := printReport(w, asJSON, rep, func() {
		for _, c := range rep.Cases {
			for _, p := range c.Problems {
				fmt.Fprintf(w, "%s: %s\n", c.Dir, p)
			}
			fmt.Fprintf(w, "%s: %s\n", c.Dir, verdict(c))
		}
		fmt.Fprintf(w, "%s: %d cases checked, %d with problems; %d failed cases (failed/) not checked\n",
			dir, len(rep.Cases), len(rep.Cases)-countOK(rep.Cases), rep.Failed)
	}); err != nil {
		return err
	}
	if !rep.OK() {
		return fmt.Errorf("%s: %d problem(s) in %d of its %d cases", dir, rep.Problems(), len(rep.Cases)-countOK(rep.Cases), len(rep.Cases))
	}
	return nil
}

// verdict is the last word on a run's check.
func verdict(rep *check.Report) string {
	switch {
	case !rep.OK():
		return fmt.Sprintf("%d problem(s)", len(rep.Problems))
	case notAResult[factory.Status(rep.Stats.Status)] != "":
		return fmt.Sprintf("the artifacts are consistent, but the run is not a result (status %s)", rep.Stats.Status)
	}
	return "all checks hold"
}

// countOK is the number of reports without problems.
func countOK(reps []*check.Report) int {
	n := 0
	for _, r := range reps {
		if r.OK() {
			n++
		}
	}
	return n
}

// printReport writes rep to w as indented JSON if asJSON, else as text.
func printReport(w io.Writer, asJSON bool, rep any, text func()) error {
	if !asJSON {
		text()
		return nil
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// notAResult says why a run of each of these statuses is not a result:
// des validate checks its artifacts like any other's, and says so.
var notAResult = map[factory.Status]string{
	factory.Interrupted: "the run was interrupted (status interrupted): the user stopped it before its end; its metrics describe the state it had reached",
	factory.Aborted: "the run was aborted (status aborted): its controller could not play it to its end (a model that did not answer, " +
		"an external runner that failed; the run's error says which); its metrics describe the state it had reached and score nothing",
}
