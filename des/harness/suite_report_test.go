package harness_test

import (
	"os"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/harness"
)

// TestLegendMatchesMetricsDoc: the legend under the aggregate tables gives
// each metric the direction and unit docs/metrics.md gives it.
func TestLegendMatchesMetricsDoc(t *testing.T) {
	doc, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(line, "| `G_") {
			continue
		}
		cells := strings.Split(line, " | ")
		rows[strings.Trim(cells[0], "| `")] = cells
	}
	if len(rows) != len(harness.SuiteMetrics()) {
		t.Fatalf("docs/metrics.md defines %d metrics, the suite %d", len(rows), len(harness.SuiteMetrics()))
	}
	for _, m := range harness.SuiteMetrics() {
		c := rows[m.Key]
		if len(c) < 5 || c[1] != m.Family || c[2] != m.Arrow() || c[3] != m.Unit {
			t.Errorf("%s: docs/metrics.md says %q, the legend: family %s, better %s, unit %s", m.Key, c, m.Family, m.Arrow(), m.Unit)
		}
	}
}
