package storage

import (
	"bytes"
	"sync/atomic"
)

// btree is an in-memory B+tree of (key, TID) entries, ordered by key
// (bytes.Compare) then TID, so duplicate keys are allowed and every entry
// is unique. Leaves are linked left to right for range scans. Deletion
// removes entries without rebalancing (nodes may become empty; separators
// stay valid lower bounds), as PostgreSQL's B-tree also never merges pages
// on delete (it deletes whole empty pages in VACUUM).
//
// A btree is not safe for concurrent use; index guards it with an LWLock.
// nbytes alone may be read without it.
type btree struct {
	root   *btNode
	count  int
	height int // levels from the root to the leaves, 1 for a lone leaf
	// nbytes is key bytes + per-entry overhead (btEntryCost), for
	// IndexShape: written under the index's lock
	nbytes atomic.Int64
}

const (
	btMaxEntries = 128
	btEntryCost  = 16 // on-disk-ish overhead per entry (TID + item pointer)
)

type btEntry struct {
	key []byte
	tid TID
}

type btNode struct {
	leaf     bool
	entries  []btEntry // leaf: data entries; internal: separators (len(children)-1)
	children []*btNode
	next     *btNode // leaves only
}

func compareEntry(key []byte, tid TID, e *btEntry) int {
	if c := bytes.Compare(key, e.key); c != 0 {
		return c
	}
	return tidCompare(tid, e.tid)
}

func newBtree() *btree { return &btree{root: &btNode{leaf: true}, height: 1} }

// childFor returns the index of the child of internal node n that may hold
// (key, tid): the number of separators ≤ it.
func (n *btNode) childFor(key []byte, tid TID) int {
	lo, hi := 0, len(n.entries)
	for lo < hi {
		m := (lo + hi) / 2
		if compareEntry(key, tid, &n.entries[m]) >= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// lowerBound is the first position in leaf n with entry ≥ (key, tid).
func (n *btNode) lowerBound(key []byte, tid TID) int {
	lo, hi := 0, len(n.entries)
	for lo < hi {
		m := (lo + hi) / 2
		if compareEntry(key, tid, &n.entries[m]) > 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// seek returns the leaf and position of the first entry ≥ (key, tid).
func (t *btree) seek(key []byte, tid TID) (*btNode, int) {
	n := t.root
	for !n.leaf {
		n = n.children[n.childFor(key, tid)]
	}
	return n, n.lowerBound(key, tid)
}

// first returns the leftmost leaf.
func (t *btree) first() *btNode {
	n := t.root
	for !n.leaf {
		n = n.children[0]
	}
	return n
}

// insert adds (key, tid); the key is copied. Returns false if present.
func (t *btree) insert(key []byte, tid TID) bool {
	sep, right, ok := t.insertAt(t.root, key, tid)
	if !ok {
		return false
	}
	if right != nil {
		t.root = &btNode{entries: []btEntry{sep}, children: []*btNode{t.root, right}}
		t.height++
	}
	t.count++
	t.nbytes.Add(int64(len(key) + btEntryCost))
	return true
}

func (t *btree) insertAt(n *btNode, key []byte, tid TID) (sep btEntry, right *btNode, ok bool) {
	if n.leaf {
		i := n.lowerBound(key, tid)
		if i < len(n.entries) && compareEntry(key, tid, &n.entries[i]) == 0 {
			return btEntry{}, nil, false
		}
		e := btEntry{key: append([]byte(nil), key...), tid: tid}
		n.entries = append(n.entries, btEntry{})
		copy(n.entries[i+1:], n.entries[i:])
		n.entries[i] = e
		if len(n.entries) <= btMaxEntries {
			return btEntry{}, nil, true
		}
		half := len(n.entries) / 2
		r := &btNode{leaf: true, entries: make([]btEntry, len(n.entries)-half, btMaxEntries+1), next: n.next}
		copy(r.entries, n.entries[half:])
		clear(n.entries[half:])
		n.entries = n.entries[:half]
		n.next = r
		return r.entries[0], r, true
	}
	ci := n.childFor(key, tid)
	sep, right, ok = t.insertAt(n.children[ci], key, tid)
	if !ok || right == nil {
		return btEntry{}, nil, ok
	}
	n.entries = append(n.entries, btEntry{})
	copy(n.entries[ci+1:], n.entries[ci:])
	n.entries[ci] = sep
	n.children = append(n.children, nil)
	copy(n.children[ci+2:], n.children[ci+1:])
	n.children[ci+1] = right
	if len(n.children) <= btMaxEntries {
		return btEntry{}, nil, true
	}
	// split internal node: children [0,half) stay, [half,..) move; the
	// separator between them moves up.
	half := len(n.children) / 2
	r := &btNode{
		entries:  append(make([]btEntry, 0, btMaxEntries), n.entries[half:]...),
		children: append(make([]*btNode, 0, btMaxEntries+1), n.children[half:]...),
	}
	up := n.entries[half-1]
	clear(n.entries[half-1:])
	n.entries = n.entries[:half-1]
	clear(n.children[half:])
	n.children = n.children[:half]
	return up, r, true
}

// delete removes (key, tid); false if absent.
func (t *btree) delete(key []byte, tid TID) bool {
	n, i := t.seek(key, tid)
	for n != nil && i >= len(n.entries) {
		n, i = n.next, 0
	}
	if n == nil || compareEntry(key, tid, &n.entries[i]) != 0 {
		return false
	}
	t.removeAt(n, i)
	return true
}

func (t *btree) removeAt(n *btNode, i int) {
	t.nbytes.Add(-int64(len(n.entries[i].key) + btEntryCost))
	copy(n.entries[i:], n.entries[i+1:])
	n.entries[len(n.entries)-1] = btEntry{}
	n.entries = n.entries[:len(n.entries)-1]
	t.count--
}

// ascend calls fn for entries from the first ≥ (key, tid) (or the very
// first if key is nil) while fn returns true. It returns the nodes it
// visited (pg_statio's index block hits).
func (t *btree) ascend(key []byte, tid TID, fn func(e *btEntry) bool) (visited int) {
	var n *btNode
	i := 0
	if key == nil {
		n = t.first()
	} else {
		n, i = t.seek(key, tid)
	}
	visited = t.height - 1 // the inner nodes above the first leaf
	for n != nil {
		visited++
		for ; i < len(n.entries); i++ {
			if !fn(&n.entries[i]) {
				return visited
			}
		}
		n, i = n.next, 0
	}
	return visited
}

// build makes a tree from entries sorted in (key, tid) order, packing
// leaves (bulk load, for Open).
func buildBtree(entries []btEntry) *btree {
	t := &btree{count: len(entries), height: 1}
	if len(entries) == 0 {
		t.root = &btNode{leaf: true}
		return t
	}
	per := btMaxEntries * 3 / 4
	var level []*btNode
	var mins []btEntry
	var prev *btNode
	for i := 0; i < len(entries); i += per {
		j := min(i+per, len(entries))
		n := &btNode{leaf: true, entries: make([]btEntry, j-i, btMaxEntries+1)}
		copy(n.entries, entries[i:j])
		for _, e := range n.entries {
			t.nbytes.Add(int64(len(e.key) + btEntryCost))
		}
		if prev != nil {
			prev.next = n
		}
		prev = n
		level = append(level, n)
		mins = append(mins, n.entries[0])
	}
	for len(level) > 1 {
		var up []*btNode
		var upMins []btEntry
		for i := 0; i < len(level); i += per {
			j := min(i+per, len(level))
			n := &btNode{
				children: append(make([]*btNode, 0, btMaxEntries+1), level[i:j]...),
				entries:  append(make([]btEntry, 0, btMaxEntries), mins[i+1:j]...),
			}
			up = append(up, n)
			upMins = append(upMins, mins[i])
		}
		level, mins = up, upMins
		t.height++
	}
	t.root = level[0]
	return t
}

// descend calls fn for entries from the last ≤ (key, tid) (or the very
// last if key is nil) backwards while fn returns true. Leaves have no
// back links, so it walks down from the root, children right to left. It
// returns the nodes it visited.
func (t *btree) descend(key []byte, tid TID, fn func(e *btEntry) bool) (visited int) {
	descendNode(t.root, key, tid, key != nil, fn, &visited)
	return visited
}

// descendNode visits n's entries ≤ (key, tid) backwards (all of them
// when bounded is false); false: fn stopped the walk.
func descendNode(n *btNode, key []byte, tid TID, bounded bool, fn func(e *btEntry) bool, visited *int) bool {
	*visited++
	if n.leaf {
		i := len(n.entries) - 1
		if bounded {
			j := n.lowerBound(key, tid)
			if j < len(n.entries) && compareEntry(key, tid, &n.entries[j]) == 0 {
				j++
			}
			i = j - 1
		}
		for ; i >= 0; i-- {
			if !fn(&n.entries[i]) {
				return false
			}
		}
		return true
	}
	ci := len(n.children) - 1
	if bounded {
		ci = n.childFor(key, tid)
	}
	for c := ci; c >= 0; c-- {
		// children left of ci hold only entries below the separator ≤ key
		if !descendNode(n.children[c], key, tid, bounded && c == ci, fn, visited) {
			return false
		}
	}
	return true
}

// load fills an empty tree with entries, which must be in ascending
// order without repeats, bottom-up as an index build writes its pages
// (buildBtree), with the keys copied into one block. It reports false,
// changing nothing, if the tree is not empty or the entries are out of
// order.
func (t *btree) load(entries []IndexEntry) bool {
	if t.count != 0 || len(entries) == 0 {
		return false
	}
	size := 0
	for i := range entries {
		if i > 0 {
			prev := &btEntry{key: entries[i-1].Key, tid: entries[i-1].TID}
			if compareEntry(entries[i].Key, entries[i].TID, prev) <= 0 {
				return false
			}
		}
		size += len(entries[i].Key)
	}
	keys := make([]byte, 0, size)
	es := make([]btEntry, len(entries))
	for i, e := range entries {
		k := len(keys)
		keys = append(keys, e.Key...)
		es[i] = btEntry{key: keys[k:len(keys):len(keys)], tid: e.TID}
	}
	built := buildBtree(es)
	t.root, t.count = built.root, built.count
	t.nbytes.Add(built.nbytes.Load())
	return true
}
