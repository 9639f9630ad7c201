package report

import (
	"fmt"
	"math"
	"strconv"
)

// The statistic columns shared by every paired-differences table (between
// paradigms, between protocols, between two suites), with the marks that
// keep a reader from over-reading them: rows on fewer than FewPairs pairs,
// zero-width intervals, and Holm's correction over the table's rows.

// pairedHead are the statistic columns of a displayed paired table.
var pairedHead = []string{"n", "mean A − B", "95% t interval", "95% bootstrap", "≠ 0", "p", "Holm ≠ 0"}

// unequalHead is the column, after n, of a table some of whose rows left
// pairs out because the two sides did not complete the same work
// (pairedHeadFor, unequalNote).
const unequalHead = "unequal work"

// unequalCSV is the CSV column of those pairs (every row, 0 when none).
const unequalCSV = "unequal_work"

// pairedHeadFor is pairedHead, with the unequal-work column after n when
// unequal.
func pairedHeadFor(unequal bool) []string {
	if !unequal {
		return pairedHead
	}
	return append([]string{pairedHead[0], unequalHead}, pairedHead[1:]...)
}

// pairedLeft are the text columns (≠ 0, Holm ≠ 0) among the statistic
// columns that start at column off.
func pairedLeft(off int, unequal bool) []int {
	if unequal {
		off++
	}
	return []int{off + 4, off + 6}
}

// pairedCSVHead are the statistic columns of the paired tables' CSV
// (after each table's own columns up to sd_diff).
var pairedCSVHead = []string{"p", "holm_p", "holm_excludes_0", "few_pairs", "zero_width"}

// Marks in the n and interval cells; pairedNotes explains those used.
const (
	fewMark  = "†"
	zeroMark = "‡"
)

// pairedCells are the statistic cells of one row: st and its Holm-adjusted
// p-value holm, the numbers with d decimals; with the unequal-work column
// (show) after n, the pairs the row left out (blank for none).
func pairedCells(st PairedStats, holm float64, d int, unequal int, show bool) []Cell {
	iv := func(v Interval) string {
		if math.IsNaN(v.Lo) {
			return "–"
		}
		s := "[" + fnum(v.Lo, d) + ", " + fnum(v.Hi, d) + "]"
		if st.ZeroWidth() {
			s += " " + zeroMark
		}
		return s
	}
	n := strconv.Itoa(st.N)
	if st.Few() {
		n += " " + fewMark
	}
	mark, hmark := "", ""
	if st.Distinguishable() {
		mark = "yes"
	}
	if holmDistinguishable(st, holm) {
		hmark = "yes"
	}
	cells := []Cell{{Text: n}}
	if show {
		u := ""
		if unequal > 0 {
			u = strconv.Itoa(unequal) + " " + incompleteMark
		}
		cells = append(cells, Cell{Text: u})
	}
	return append(cells, Cell{Text: fnum(st.Mean, d)}, Cell{Text: iv(st.T)}, Cell{Text: iv(st.Boot)}, Cell{Text: mark}, Cell{Text: pText(st.P)}, Cell{Text: hmark})
}

// unequalNote explains the unequal-work column of a table, rows of whose
// rows left pairs out.
func unequalNote(rows int) string {
	return fmt.Sprintf("%s unequal work: the pairs a row leaves out of its statistics because the two sides did not complete the same work "+
		"(one episode incomplete, status not done, while the other finished, or a different G_cj); %d rows leave some out. The rule holds for every metric "+
		"but G_cj and the robustness ones: elsewhere a shorter makespan, less tardiness or less energy can mean less work done. "+
		"With fewer than 2 pairs left a row has no interval.", incompleteMark, rows)
}

// holmDistinguishable: the raw mark survives Holm's correction.
func holmDistinguishable(st PairedStats, holm float64) bool {
	return st.Distinguishable() && holm < 1-Level
}

// pText is a p-value for a table: three decimals, "< 0.001" below.
func pText(p float64) string {
	switch {
	case math.IsNaN(p):
		return "–"
	case p < 0.001:
		return "< 0.001"
	}
	return fnum(p, 3)
}

// pairedCSV are the pairedCSVHead cells of one row.
func pairedCSV(st PairedStats, holm float64) []string {
	return []string{fcsv(st.P), fcsv(holm), strconv.FormatBool(holmDistinguishable(st, holm)),
		strconv.FormatBool(st.Few()), strconv.FormatBool(st.ZeroWidth())}
}

// pairedNotes are the notes under a table of these rows: Holm's family,
// and the marks the rows use.
func pairedNotes(stats []PairedStats) []string {
	m, few, zero := 0, 0, 0
	for i := range stats {
		st := &stats[i]
		if !math.IsNaN(st.P) {
			m++
		}
		if st.Few() {
			few++
		}
		if st.ZeroWidth() {
			zero++
		}
	}
	var out []string
	if m > 1 {
		out = append(out, fmt.Sprintf("p: the paired t test's two-sided p-value. Holm ≠ 0: the ≠ 0 mark that survives Holm's step-down correction over the %d comparisons of this table "+
			"(family-wise error rate %.0f%%); with this many comparisons about %.1f raw marks are expected by chance alone.", m, 100*(1-Level), float64(m)*(1-Level)))
	}
	if few > 0 {
		out = append(out, fmt.Sprintf("%s %d rows rest on fewer than %d pairs: their intervals are rough (t(0.975, n−1) ≥ 2.78, few distinct bootstrap resamples); run more seeds before reading them.", fewMark, few, FewPairs))
	}
	if zero > 0 {
		out = append(out, fmt.Sprintf("%s %d intervals have zero width: every pair differed by the same amount (a count that moves in lockstep, say); the interval then claims a certainty the seeds cannot give.", zeroMark, zero))
	}
	return out
}
