package control

import "github.com/statgraph/statgraph/tasks"

// Plan returns the plan the Control works on, for the tests (no program
// needs it).
func (c *Control) Plan() tasks.Plan { return c.plan }
