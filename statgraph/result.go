package statgraph

// Result is the outcome of a run that WithResult reports.
type Result[S any] struct {
	State S
}

func (r *run[S]) result(s S) Result[S] { return Result[S]{State: s} }
