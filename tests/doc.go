// Package tests holds the end-to-end tests of statgraph: TestMain builds
// the statgraph binary once, and the tests run it as a user would, on real
// git repositories, with real agent CLIs or scripts standing in for them,
// in the real bubblewrap sandbox, and, for the scale-out suite (build tag
// "scale"), on a real PostgreSQL with worker processes killed part way.
// They also check the documentation: README.md's size, the links in it and
// in docs/, and that every command and flag is documented (docs_test.go).
// tests/bench holds the workload programs and tests/durability the kill
// tests of the library's checkpoints.
package tests
