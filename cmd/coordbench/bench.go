package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/policy"
)

func desBenchCmd() *cobra.Command {
	var instance, paradigm, controller string
	var episodes, hold, events int
	var decisions, byRole bool
	var lim *plantLimits
	c := &cobra.Command{
		Use:   "bench",
		Short: "Measure the simulator's own throughput (JSON)",
		Long: `Measure the simulator's own throughput and print it as JSON.

  --instance NAME --episodes K   full episodes with a built-in controller,
                                 trace written to memory (episodes/s,
                                 events/s, decisions/s), on one core
  --instance NAME --by-role      the same episodes' decision steps split
                                 by role level: plant steps and local
                                 (area and cell) steps, wall time each
  --hold N --events M            the classic hold model: N pending events,
                                 exponential increments, M events processed`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			if hold > 0 {
				if events <= 0 {
					return fmt.Errorf("--hold needs --events M > 0")
				}
				return enc.Encode(harness.MeasureHold(hold, events))
			}
			p, mode, err := loadCase(instance, paradigm, lim)
			if err != nil {
				return err
			}
			if _, err := policy.New(controller, 1); err != nil {
				return err
			}
			newCtrl := func(seed uint64) coord.Controller {
				c, _ := policy.New(controller, seed)
				return c
			}
			if byRole {
				rc, err := harness.MeasureRoles(cmd.Context(), p, mode, newCtrl, episodes, harness.RoleOptions{})
				if err != nil {
					return err
				}
				return enc.Encode(rc)
			}
			return enc.Encode(harness.MeasureEpisodes(cmd.Context(), p, mode, newCtrl, episodes, decisions))
		},
	}
	f := c.Flags()
	f.StringVar(&instance, "instance", "A5C12-1", "instance to run")
	f.StringVar(&paradigm, "paradigm", "centralized", "paradigm")
	f.StringVar(&controller, "controller", "rule", "built-in controller")
	f.IntVar(&episodes, "episodes", 200, "episodes to run")
	f.BoolVar(&decisions, "decisions", false, "also write the decision log (payloads as JSON) to memory")
	f.BoolVar(&byRole, "by-role", false, "split the decision steps' cost by role level (plant, local), without artifacts")
	f.IntVar(&hold, "hold", 0, "run the hold model with this many pending events instead")
	f.IntVar(&events, "events", 1000000, "events to process in the hold model")
	lim = addPlantLimits(f)
	return c
}
