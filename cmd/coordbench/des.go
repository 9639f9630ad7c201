package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/extctl"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/des/llmctl"
	"github.com/coordbench/coordbench/des/policy"
)

func desCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "des",
		Short: "The event-driven scheduling benchmark (DESBench)",
	}
	c.AddCommand(desRunCmd(), desSuiteCmd(), desCaseCmd(), desValidateCmd(), desRescoreCmd(), desInstanceCmd(), desListCmd(), desBenchCmd(), desCheckControllerCmd(), desServeCmd(), desServeSocketCmd(), desShowCmd())
	return c
}

// loadPlant resolves an instance reference within the --plant-limit
// limits and compiles it.
func loadPlant(ref string, lim *plantLimits) (*factory.Plant, error) {
	in, err := lim.lim.Resolve(ref)
	if err != nil {
		return nil, err
	}
	return factory.Compile(in), nil
}

// loadCase resolves the instance and the built-in paradigm of a case.
func loadCase(instance, paradigm string, lim *plantLimits) (*factory.Plant, coord.AuthorityMode, error) {
	p, err := loadPlant(instance, lim)
	if err != nil {
		return nil, coord.AuthorityMode{}, err
	}
	mode, err := new(coord.Paradigms).Lookup(paradigm)
	return p, mode, err
}

func desRunCmd() *cobra.Command {
	var instance, paradigm, controller, out string
	var files []string
	var seed uint64
	var force bool
	var lf llmFlags
	var lim *plantLimits
	c := &cobra.Command{
		Use:   "run",
		Short: "Run one episode and write its artifacts",
		Long: `Run one episode (instance × paradigm × controller × seed) and write
metrics.json, trace.jsonl, decisions.jsonl, messages.jsonl, manifest.json
and instance.json into --out. A truncated episode is a result, not an
error: the exit code is 0 and metrics.json says why it stopped. An LLM
controller whose model calls of one role fail (endpoint unreachable, key
rejected, quota, replay-cache miss) --max-model-failures times in a row is
not a result: the run stops with status aborted, its artifacts are written, and
the exit code is 1. Model calls being retried are reported on stderr.

The run is written into a temporary directory next to --out and renamed
to --out when it ends, so --out never holds a partial run. An --out that
exists and is not empty is refused; --force replaces it. On Ctrl-C the
episode stops before its next decision with status interrupted, its
artifacts are written as usual (des validate re-checks them and says the
run was interrupted), and the exit code is 1; a second Ctrl-C abandons
the run and leaves --out untouched.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			lf.retries = cmd.ErrOrStderr()
			paradigms, err := paradigmSet(files)
			if err != nil {
				return err
			}
			instance, paradigm, controller = canon(instance, instanceNames()...), canon(paradigm, paradigmNames(paradigms)...), canon(controller, controllerNames()...)
			si, err := harness.LoadSuiteInstance(instance, lim.lim)
			if err != nil {
				return err
			}
			p := factory.Compile(si.Inst)
			mode, err := paradigms.Lookup(paradigm)
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("seed") {
				seed = p.Inst.Seeds.Test[0]
			}
			if err := lf.onlyWith(controller == "llm", "--controller is not llm"); err != nil {
				return err
			}
			if out == "" {
				out = filepath.Join("runs", runName(cmd, si.Token, mode.ID, controller, &lf, seed))
			}
			ro, err := newRunOut(out, force)
			if err != nil {
				return err
			}
			ctx, done := interruptibleRun(cmd)
			defer done()
			ctrl, closeCtrl, err := externalController(cmd, &lf, controller, p, mode, seed, ro.tmp)
			if err != nil {
				ro.discard()
				return err
			}
			return runEpisode(cmd, ctx, harness.Episode{Plant: p, Seed: seed, Mode: mode, Controller: ctrl, Stop: ctx.Done()}, ro, closeCtrl)
		},
	}
	f := c.Flags()
	f.StringVar(&instance, "instance", "A5C12-1", "reported instance name, instance file, or gen:A<areas>C<cells>")
	f.StringVar(&paradigm, "paradigm", "centralized", "coordination paradigm (authority mode id)")
	f.StringVar(&controller, "controller", "rule", "controller: "+strings.Join(policy.Names(), ", ")+", or llm (see the --llm-* flags)")
	f.Var((*seedValue)(&seed), "seed", "episode seed (default: the instance's first test seed)")
	f.StringVar(&out, "out", "", "output directory (default runs/<instance>_<paradigm>_<controller>[_<model>]_s<seed>); refused if it exists and is not empty, unless --force")
	f.BoolVar(&force, "force", false, "replace an existing --out")
	f.StringArrayVar(&files, "paradigm-file", nil, "add a custom paradigm from a YAML file (repeatable); name it with --paradigm")
	lim = addPlantLimits(f)
	lf.register(f)
	registerExternal(c)
	return withTracing(c)
}

// runName is the default directory name of a des run: everything that
// tells two runs apart, as in a suite's case id (harness.CaseID) but
// joined by single underscores: instance, paradigm, controller, for an
// LLM controller its models, framework and non-default reply parsing, and
// the seed.
func runName(cmd *cobra.Command, instanceToken, paradigm, controller string, lf *llmFlags, seed uint64) string {
	model := ""
	if command, _ := cmd.Flags().GetString("controller-command"); command != "" {
		controller = extctl.Name
	} else if controller == "llm" {
		parsing := lf.replyParsing
		if parsing == llmctl.ParsingPublished {
			parsing = ""
		}
		model = "_" + harness.ModelToken(lf.spec.Model, lf.framework, parsing)
	}
	return fmt.Sprintf("%s_%s_%s%s_s%d", instanceToken, paradigm, controller, model, seed)
}

// paradigmSet is the set of paradigms a command names ids from: the
// built-ins and the custom ones of --paradigm-file.
func paradigmSet(files []string) (*coord.Paradigms, error) {
	set := new(coord.Paradigms)
	for _, f := range files {
		if _, err := set.AddFile(f); err != nil {
			return nil, fmt.Errorf("--paradigm-file: %w", err)
		}
	}
	return set, nil
}

// runEpisode runs one episode into ro's temporary directory, closes its
// controller (closeCtrl, which may write there too), moves the directory
// into place and prints the metrics. An episode its controller aborted (a
// model that could not answer) or that was interrupted is kept and
// printed too, then its error is returned.
func runEpisode(cmd *cobra.Command, ctx context.Context, ep harness.Episode, ro *runOut, closeCtrl func() error) error {
	res, err := harness.RunToDir(ctx, ep, ro.tmp)
	if cerr := closeCtrl(); err == nil {
		err = cerr
	}
	if err != nil && res.Metrics.Status == "" { // the episode did not run: nothing to keep
		ro.discard()
		return err
	}
	if errors.Is(err, harness.ErrArtifacts) { // a full or read-only disk: the directory is incomplete
		ro.discard()
		// The error names the files where they were to go: the temporary
		// directory is gone.
		return fmt.Errorf("%w, so none was moved into --out %s (free space or give another --out, then rerun): %s",
			harness.ErrArtifacts, ro.out, strings.NewReplacer(ro.tmp, ro.out, filepath.Clean(ro.tmp), filepath.Clean(ro.out)).Replace(err.Error()))
	}
	if merr := ro.commit(); merr != nil {
		return errors.Join(err, merr)
	}
	printMetrics(cmd.OutOrStdout(), res.Metrics)
	fmt.Fprintf(cmd.OutOrStdout(), "artifacts: %s\n", ro.out)
	if errors.Is(err, harness.ErrInterrupted) {
		return fmt.Errorf("interrupted: the episode stopped after %d decisions; its artifacts, marked status interrupted, are in %s", res.Metrics.GDs, ro.out)
	}
	return err
}

func printMetrics(w io.Writer, m harness.Metrics) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s  %s  %s  seed %d  status %s\n", m.Instance, m.Paradigm, m.Controller, m.Seed, m.Status)
	fmt.Fprintf(tw, "effectiveness\tG_mk %.1f\tG_td %.1f\tG_cj %d\n", m.GMk, m.GTd, m.GCj)
	fmt.Fprintf(tw, "constraints\tG_vc %d\tG_eo %.4f\tG_ed %.1f\tG_en %.3f\n", m.GVc, m.GEo, m.GEd, m.GEn)
	fmt.Fprintf(tw, "coordination\tG_ds %d\tG_cm %d\tG_fb %d\tG_llm %d\n", m.GDs, m.GCm, m.GFb, m.GLlm)
	fmt.Fprintf(tw, "robustness\tG_tr %d\tG_dj %d\tG_ut %.1f\tG_do %d\n", m.GTr, m.GDj, m.GUt, m.GDo)
	tw.Flush()
}

func desInstanceCmd() *cobra.Command {
	var asJSON bool
	var seed uint64
	var lim *plantLimits
	c := &cobra.Command{
		Use:   "instance NAME|FILE|gen:A<n>C<m>",
		Short: "Show a fully resolved instance",
		Long: `Show a fully resolved instance: topology, capabilities, buffer
capacities, machines, products, power figures and caps, with every default
filled in, and the jobs (arrival and due times) one seed draws.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := loadPlant(canon(args[0], instanceNames()...), lim)
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("seed") {
				seed = p.Inst.Seeds.Test[0]
			}
			jobs := p.Jobs(seed)
			w := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(struct {
					Instance *factory.Instance `json:"instance"`
					Seed     uint64            `json:"seed"`
					Jobs     []factory.JobSpec `json:"jobs"`
				}{p.Inst, seed, jobs})
			}
			in := p.Inst
			fmt.Fprintf(w, "%s: %s\n%s\n", in.Name, in.Profile, strings.TrimSpace(in.Description))
			fmt.Fprintf(w, "areas %d, cells %d, machines %d, products %d, jobs %d (seed %d)\n",
				len(p.Areas), len(p.Cells), p.Machines, len(p.Products), len(jobs), seed)
			fmt.Fprintf(w, "power cap %.1f kW, WIP cap %d, horizon %g × %g s\n", p.CapKW(), in.WIPCap, in.Horizon, in.TimeUnitS)
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "area\tcell\tmachines\tbuffer\tdispatch\tcapabilities")
			for _, a := range in.Areas {
				for _, cs := range a.Cells {
					var caps []string
					for _, op := range p.Ops {
						if f, ok := cs.Capabilities[op]; ok {
							caps = append(caps, fmt.Sprintf("%s×%g", op, f))
						}
					}
					fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", a.ID, cs.ID, cs.Machines, cs.Buffer, cs.Dispatch, strings.Join(caps, " "))
				}
			}
			tw.Flush()
			fmt.Fprintln(w, "(use --json for everything, including the jobs)")
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the resolved instance and its jobs as JSON")
	c.Flags().Var((*seedValue)(&seed), "seed", "seed whose jobs to list (default: the first test seed)")
	lim = addPlantLimits(c.Flags())
	return c
}

func desListCmd() *cobra.Command {
	var files []string
	c := &cobra.Command{
		Use:   "list",
		Short: "List reported instances, paradigms and built-in controllers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			paradigms, err := paradigmSet(files)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "INSTANCE\tPROFILE\tAREAS\tCELLS\tJOBS\tTEST SEEDS\tDEV SEEDS")
			for _, name := range factory.BuiltinNames() {
				in, err := factory.Resolve(name)
				if err != nil {
					return err
				}
				cells := 0
				for _, a := range in.Areas {
					cells += len(a.Cells)
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\n", in.Name, in.Profile, len(in.Areas), cells,
					in.Arrivals.Jobs+len(in.Arrivals.Orders), len(in.Seeds.Test), len(in.Seeds.Dev))
			}
			tw.Flush()
			fmt.Fprintln(w)
			tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "PARADIGM\tROUTING\tCELL CONTRACT\tAREA REROUTE\tPLANT REROUTE\tBID ROUND")
			for _, m := range paradigms.List() {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%v\t%v\n", m.ID, m.RoutingAuthorityMode, m.CellContractActions,
					m.AreaLocalRerouteEnabled, m.PlantRerouteRequired, m.MediatedBidRoundEnabled)
			}
			tw.Flush()
			for _, m := range paradigms.List() {
				if sum := m.Summary(); sum != "" {
					fmt.Fprintf(w, "%s is adaptive: %s (docs/paradigms.md)\n", m.ID, sum)
				}
			}
			fmt.Fprintf(w, "\nCONTROLLERS: %s\n", strings.Join(policy.Names(), ", "))
			return nil
		},
	}
	c.Flags().StringArrayVar(&files, "paradigm-file", nil, "also list a custom paradigm from a YAML file (repeatable)")
	return c
}
