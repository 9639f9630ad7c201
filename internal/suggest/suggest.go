// Package suggest finds the names a user probably meant when they typed
// one that does not exist (a flag, a subcommand, a field of a file).
package suggest

// maxName bounds the names compared: a longer one is nobody's typo, and
// the distance is quadratic in the lengths.
const maxName = 256

// Distance is the Levenshtein distance of two short names.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Closest returns the names of known nearest to name, in known's order:
// those at the smallest distance, if it is below half of name's length
// plus one (a suggestion must be closer than a guess), else none.
func Closest(name string, known []string) []string {
	if len(name) > maxName {
		return nil
	}
	var best []string
	bestD := len(name)/2 + 1
	for _, k := range known {
		if len(k) > maxName {
			continue
		}
		switch d := Distance(name, k); {
		case d < bestD:
			best, bestD = []string{k}, d
		case d == bestD && best != nil:
			best = append(best, k)
		}
	}
	return best
}
