//go:build !race

package statgraph_test

// raceBuild is true in a build with the race detector, whose bookkeeping
// changes allocation figures.
const raceBuild = false
