package queue

// This file is the tasks files that unit jobs name: each version of a
// plan's tasks file is stored once in statgraph_files, under its hash,
// and a job carries only the hash, so that a job's size does not grow
// with the plan (a job carried the whole file before: a 10,000-task plan
// put megabytes into every job).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// fileHash is the name of a tasks file's version in statgraph_files: the
// hex SHA-256 of its bytes.
func fileHash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// storedFiles remembers the versions a coordinator has stored, so that
// the units enqueued between two saves of the tasks file send it once.
// It is safe for concurrent use.
type storedFiles struct {
	mu   sync.Mutex
	have map[string]bool
}

// store stores data in statgraph_files (once per version) and returns its
// hash. It commits on its own, before the job naming the hash is
// inserted: a version stored for a job whose transaction then rolls back
// is kept, and used by the next attempt.
func (s *storedFiles) store(ctx context.Context, pool *pgxpool.Pool, data []byte) (string, error) {
	h := fileHash(data)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.have[h] {
		return h, nil
	}
	if _, err := pool.Exec(ctx, `INSERT INTO statgraph_files (hash, data) VALUES ($1, $2) ON CONFLICT DO NOTHING`, h, data); err != nil {
		return "", fmt.Errorf("queue: store the tasks file: %w", err)
	}
	if s.have == nil {
		s.have = map[string]bool{}
	}
	s.have[h] = true
	return h, nil
}

// fileCacheSize bounds how many versions of tasks files a worker keeps in
// memory.
const fileCacheSize = 8

// fileCache keeps the versions of tasks files a worker has read, so that
// the units of one plan version read it from Postgres once. It is safe
// for concurrent use.
type fileCache struct {
	mu sync.Mutex
	m  map[string][]byte
}

// errNoFile is load's error for a hash statgraph_files does not have.
var errNoFile = errors.New("queue: the job's tasks file is not in statgraph_files")

// load returns the version hash of a tasks file, from memory or from
// statgraph_files (checked against its hash).
func (c *fileCache) load(ctx context.Context, pool *pgxpool.Pool, hash string) ([]byte, error) {
	c.mu.Lock()
	data, ok := c.m[hash]
	c.mu.Unlock()
	if ok {
		return data, nil
	}
	err := pool.QueryRow(ctx, `SELECT data FROM statgraph_files WHERE hash = $1`, hash).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w (hash %s)", errNoFile, hash)
	}
	if err != nil {
		return nil, fmt.Errorf("queue: read the job's tasks file: %w", err)
	}
	if fileHash(data) != hash {
		return nil, fmt.Errorf("queue: the tasks file %s in statgraph_files does not match its hash; the row is corrupt", hash)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= fileCacheSize || c.m == nil {
		c.m = map[string][]byte{} // versions of a plan follow each other: the old ones are done
	}
	c.m[hash] = data
	return data, nil
}
