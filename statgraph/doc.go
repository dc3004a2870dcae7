// Package statgraph is a typed state graph: nodes that read and update a
// state of the user's own type S, edges and conditional edges between them,
// run in super-steps.
package statgraph
