package control

// Poll runs one comparison of c's watcher: what it does every Poll
// interval and on every kick (Tasks, then an EventTask per changed unit).
func Poll(c *Control) { c.hub.compare() }
