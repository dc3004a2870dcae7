package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Sentinel errors of the package.
var (
	// ErrNotFound is returned by Get when no live item has the namespace
	// and key (never stored, deleted, or expired).
	ErrNotFound = errors.New("store: item not found")
	// ErrInvalid is wrapped by the errors of calls with a namespace, key,
	// value or filter that no Store accepts; the error says which and why.
	ErrInvalid = errors.New("store: invalid argument")
)

// Store keeps JSON objects under a namespace and key. Implementations are
// safe for concurrent use; every method fails with ctx's error once ctx
// ends.
type Store interface {
	// Put stores it.Value (nil stores an empty object) under it.Namespace
	// and it.Key, replacing the item there. Created is kept from the item
	// replaced, if it was live; Updated is now; it.TTL > 0 makes the item
	// expire TTL after now (and after each read), zero never. it.Created,
	// it.Updated and it.Expires are ignored.
	Put(ctx context.Context, it Item) error
	// Get returns the live item under ns and key, refreshing its expiry
	// when it has a TTL, or an error wrapping ErrNotFound.
	Get(ctx context.Context, ns []string, key string) (Item, error)
	// Delete removes the item under ns and key; deleting what is not
	// there is not an error.
	Delete(ctx context.Context, ns []string, key string) error
	// Search returns the live items whose namespace starts with prefix
	// (nil or empty: every namespace) and whose value matches q.Filter,
	// most recently updated first (then by namespace and key), skipping
	// q.Offset and returning at most q.Limit of them. It refreshes the
	// expiry of the items it returns.
	Search(ctx context.Context, prefix []string, q Query) ([]Item, error)
	// ListNamespaces returns the namespaces that hold live items, as
	// NamespaceQuery.Select describes.
	ListNamespaces(ctx context.Context, q NamespaceQuery) ([][]string, error)
	// Sweep removes the items that have expired and returns how many.
	// Expired items are invisible without it; it only frees their room.
	Sweep(ctx context.Context) (int, error)
}

// Item is a value in a Store with its place and times.
type Item struct {
	Namespace []string
	Key       string
	// Value is the item's JSON object as encoding/json decodes it:
	// numbers are float64, objects map[string]any.
	Value map[string]any
	// Created is when the key was first put (since it was last deleted or
	// expired), Updated when it was last put.
	Created, Updated time.Time
	// TTL is how long the item lives after its last write or read; zero:
	// for ever.
	TTL time.Duration
	// Expires is when the item expires unless read or put again; zero
	// when TTL is zero.
	Expires time.Time
}

// Query selects the items of a Search.
type Query struct {
	// Filter keeps the items whose value has each of its top-level fields
	// equal to the one given, compared as JSON values (1 equals 1.0, an
	// object equals an object with the same fields). nil or empty keeps
	// every item. A field name may not hold a double quote or backslash.
	Filter map[string]any
	// Limit is the most items returned; zero or less means 10 (LangGraph's
	// default).
	Limit int
	// Offset is how many matching items to skip; zero or less none.
	Offset int
}

// NamespaceQuery selects the namespaces of ListNamespaces.
type NamespaceQuery struct {
	// Prefix and Suffix keep the namespaces that start (end) with them;
	// nil keeps all. In both, "*" matches any one label.
	Prefix, Suffix []string
	// MaxDepth, when above zero, cuts longer namespaces to their first
	// MaxDepth labels (duplicates then appear once).
	MaxDepth int
	// Limit is the most namespaces returned; zero or less means 100.
	Limit int
	// Offset is how many namespaces to skip; zero or less none.
	Offset int
}

// Select applies q to all, the namespaces that hold live items (in any
// order, each once): it keeps those matching Prefix and Suffix, cuts them
// to MaxDepth, removes duplicates, sorts them label by label and returns
// the page Offset and Limit say.
func (q NamespaceQuery) Select(all [][]string) [][]string {
	var out [][]string
	for _, ns := range all {
		if !labelsMatch(ns, q.Prefix, false) || !labelsMatch(ns, q.Suffix, true) {
			continue
		}
		if q.MaxDepth > 0 && len(ns) > q.MaxDepth {
			ns = ns[:q.MaxDepth]
		}
		out = append(out, ns)
	}
	slices.SortFunc(out, slices.Compare)
	out = slices.CompactFunc(out, slices.Equal)
	return page(out, q.Offset, q.Limit, 100)
}

// labelsMatch reports whether ns starts (atEnd: ends) with pat, "*"
// matching any label.
func labelsMatch(ns, pat []string, atEnd bool) bool {
	if len(pat) > len(ns) {
		return false
	}
	if atEnd {
		ns = ns[len(ns)-len(pat):]
	}
	for i, p := range pat {
		if p != "*" && p != ns[i] {
			return false
		}
	}
	return true
}

// page returns items[offset:offset+limit], limit <= 0 meaning def.
func page[T any](items []T, offset, limit, def int) []T {
	if limit <= 0 {
		limit = def
	}
	offset = max(offset, 0)
	if offset >= len(items) {
		return nil
	}
	return items[offset:min(len(items), offset+limit)]
}

// sep joins the labels of a namespace in its text form; labels may not
// hold it, nor any other control character.
const sep = "\x1f"

// NamespaceText checks ns and returns its text form, the labels joined by
// the unit separator (U+001F). A namespace needs at least one label, and
// a label may be neither empty nor hold a control character (U+0000 to
// U+001F). The text forms of namespaces sort as the namespaces do, label
// by label.
func NamespaceText(ns []string) (string, error) {
	if len(ns) == 0 {
		return "", fmt.Errorf("%w: a namespace needs at least one label", ErrInvalid)
	}
	for i, l := range ns {
		if l == "" {
			return "", fmt.Errorf("%w: namespace %q: label %d is empty", ErrInvalid, ns, i+1)
		}
		if strings.IndexFunc(l, func(r rune) bool { return r < 0x20 }) >= 0 {
			return "", fmt.Errorf("%w: namespace %q: label %d holds a control character", ErrInvalid, ns, i+1)
		}
	}
	return strings.Join(ns, sep), nil
}

// ParseNamespace returns the namespace of a text form NamespaceText made.
func ParseNamespace(text string) []string { return strings.Split(text, sep) }

// PrefixRange returns the range [lo, hi) of text forms (compared byte by
// byte) of the namespaces that start with prefix; an empty prefix gives
// "", "" meaning every namespace.
func PrefixRange(prefix []string) (lo, hi string, err error) {
	if len(prefix) == 0 {
		return "", "", nil
	}
	lo, err = NamespaceText(prefix)
	// The prefix itself, or it followed by sep (0x1f) and more; the next
	// byte a label may hold is 0x20.
	return lo, lo + "\x20", err
}

// CheckKey reports an empty key.
func CheckKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: an item's key may not be empty", ErrInvalid)
	}
	return nil
}

// EncodeValue returns the JSON text a Store keeps for v: an empty object
// for nil, without HTML escaping, map keys sorted.
func EncodeValue(v map[string]any) ([]byte, error) {
	if v == nil {
		return []byte("{}"), nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("%w: the value is not JSON: %v", ErrInvalid, err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// DecodeValue reads the JSON text of an item's value.
func DecodeValue(text []byte) (map[string]any, error) {
	var v map[string]any
	if err := json.Unmarshal(text, &v); err != nil {
		return nil, fmt.Errorf("store: a stored value is not a JSON object: %w", err)
	}
	if v == nil {
		v = map[string]any{}
	}
	return v, nil
}

// Canonical returns a filter value as its JSON text and as encoding/json
// decodes that text (nil, bool, float64, string, []any or map[string]any),
// so that stores compare JSON values rather than Go values. It also
// checks the field name.
func Canonical(field string, v any) (text []byte, decoded any, err error) {
	if field == "" || strings.ContainsAny(field, `"\`) {
		return nil, nil, fmt.Errorf("%w: filter field %q: a field name may be neither empty nor hold a double quote or backslash", ErrInvalid, field)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, nil, fmt.Errorf("%w: filter field %q: the value is not JSON: %v", ErrInvalid, field, err)
	}
	text = bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	if err := json.Unmarshal(text, &decoded); err != nil {
		return nil, nil, err
	}
	// Re-encode what was decoded, so that 1.0 and 1 read alike.
	b.Reset()
	if err := enc.Encode(decoded); err != nil {
		return nil, nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), decoded, nil
}

// Row is an item as a database store writes it: the namespace's text
// (NamespaceText), the value's JSON (EncodeValue), and times in Unix
// nanoseconds; Expires is 0 for an item without a TTL.
type Row struct {
	NS, Key, Value    string
	Now, Expires, TTL int64
}

// RowOf checks it (namespace, key, value) and returns it as the Row a Put
// at now writes.
func RowOf(it Item, now time.Time) (Row, error) {
	ns, err := NamespaceText(it.Namespace)
	if err != nil {
		return Row{}, err
	}
	if err := CheckKey(it.Key); err != nil {
		return Row{}, err
	}
	val, err := EncodeValue(it.Value)
	if err != nil {
		return Row{}, err
	}
	r := Row{NS: ns, Key: it.Key, Value: string(val), Now: now.UnixNano(), TTL: int64(max(it.TTL, 0))}
	if r.TTL > 0 {
		r.Expires = r.Now + r.TTL
	}
	return r, nil
}
