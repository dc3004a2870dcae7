// Package fsutil holds the few file-system operations statgraph needs to
// get right once: replacing a file atomically and durably (WriteFile), or
// only atomically for a cache (WriteCache), creating one only when it
// does not exist yet, complete or not at all (WriteNew), copying a
// regular file without following a symbolic link at either end
// (CopyFile), flock locks (Flock) and telling whether a process still
// runs (ProcessAlive).
//
// Code that replaces, copies or locks a file calls these rather than
// writing its own temporary-file-and-rename or flock loop.
package fsutil
