package report

// distinct collects values in the order first seen, each once, in O(1)
// per value: the report's inputs may hold many distinct names.
type distinct[T comparable] struct {
	list []T
	seen map[T]bool
}

// add appends x unless it was added before.
func (d *distinct[T]) add(x T) {
	if d.seen == nil {
		d.seen = map[T]bool{}
	}
	if !d.seen[x] {
		d.seen[x] = true
		d.list = append(d.list, x)
	}
}
