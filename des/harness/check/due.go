package check

import (
	"slices"

	"github.com/coordbench/coordbench/des/factory"
)

// dueTerms is what fixes an instance's due dates: the instance's slack,
// every product's slack and route base times, and an order book's
// orders.
type dueTerms struct {
	slack    float64
	products []productDue
	orders   []factory.Order
}

type productDue struct {
	id    string
	slack float64
	times []float64
}

func dueTermsOf(in *factory.Instance) dueTerms {
	d := dueTerms{slack: in.DueSlack, orders: in.Arrivals.Orders}
	for _, p := range in.Products {
		pd := productDue{id: p.ID, slack: p.Slack}
		for _, op := range p.Route {
			pd.times = append(pd.times, op.Time)
		}
		d.products = append(d.products, pd)
	}
	return d
}

func (d dueTerms) equal(e dueTerms) bool {
	return d.slack == e.slack && slices.EqualFunc(d.products, e.products, func(a, b productDue) bool {
		return a.id == b.id && a.slack == b.slack && slices.Equal(a.times, b.times)
	}) && slices.Equal(d.orders, e.orders)
}

// checkReportedDues holds an instance.json that bears the name of a
// reported instance to that instance's due dates (its slack, products'
// slack and base times, order book): the trace's due dates are checked
// against instance.json, and instance_sha256 binds instance.json to the
// manifest, but a rewritten instance.json with a rewritten manifest would
// carry any due dates. The reported instance is the embedded definition
// (factory.BuiltinSource); other instances (files, gen:) have no
// reference but their own file.
func checkReportedDues(in *factory.Instance, add func(check, format string, args ...any)) {
	src, err := factory.BuiltinSource(in.Name)
	if err != nil {
		return // not a reported instance
	}
	ref, err := factory.DefaultSizeLimits().Parse(in.Name+".yaml", src)
	if err != nil {
		add(ckDue, "the reported instance %s does not load: %v", in.Name, err)
		return
	}
	if !dueTermsOf(in).equal(dueTermsOf(ref)) {
		add(ckDue, "instance.json is named %s, but its due dates (due_slack, products' slack or base times, orders) are not the reported instance's", in.Name)
	}
}
