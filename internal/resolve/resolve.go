// Package resolve resolves the references between records that
// internal/refs parses, store-independent behind a Reader, within the
// bounds of the contract: the depth, the text of one value, the resolved
// text of one answer (docs/api.md#references-between-records).
package resolve

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/hds-go/hds/internal/jsonstr"
	"github.com/hds-go/hds/internal/refs"
	"github.com/hds-go/hds/store"
)

// Resolving references (docs/api.md#references-between-records): with
// resolve=true an answer shows every reference of a STRING value (or of a
// []STRING element) replaced by the referenced record's current value as
// text. What that costs is bounded by what is stored, not by what
// references multiply:
//
//   - each record a reference reaches is read (with its cluster, through a
//     Reader) and resolved at most once per Resolver, and its text reused;
//   - the depth is counted before each step, on an explicit stack (never
//     a recursion whose depth a user controls), so a chain of any length
//     costs at most MaxDepth+1 reads before "too deep";
//   - a text stops growing as soon as it would pass MaxValueBytes ("too
//     large", naming the reference);
//   - the resolved text of the whole answer is counted, record by record,
//     against Options.MaxBytes ("too large", naming the record).

// MaxDepth is the longest chain of references that resolves: a chain of
// 10 references resolves, an 11th is too deep.
const MaxDepth = 10

// MaxValueBytes bounds the resolved text of one value: a record's text,
// or one element of a []STRING (1 MiB).
const MaxValueBytes = 1 << 20

// DefaultMaxResolvedBytes is the default bound of the resolved text of a
// whole answer (limits.max_resolved_bytes, 16 MiB).
const DefaultMaxResolvedBytes = 16 << 20

// The reasons of an unresolved reference, as Error gives them.
const (
	ReasonNotFound = "not found"
	ReasonCycle    = "cycle"
	ReasonTooDeep  = "too deep"
	ReasonTooLarge = "too large"
)

// Error is a value of the answer that cannot be resolved: the record of
// the answer, the first of its references (as written) that could not be
// resolved, and why. Ref is empty when the answer as a whole passed
// Options.MaxBytes at Record.
type Error struct {
	Record string
	Ref    string
	Reason string
}

// Error returns the details of the answer: record NAME: ${REF}: REASON, or
// record NAME: REASON without a reference.
func (e *Error) Error() string {
	if e.Ref == "" {
		return "record " + e.Record + ": " + e.Reason
	}
	return "record " + e.Record + ": " + e.Ref + ": " + e.Reason
}

// Reader reads, for one caller, what references reach in one project.
type Reader interface {
	// Cluster returns every record of the cluster collection/cluster of
	// the project, as the caller may read them; found is false when there
	// is no such cluster or it is out of the caller's reach. An error is a
	// failure of the store, which fails the answer.
	Cluster(ctx context.Context, collection, cluster string) (recs []*store.Record, found bool, err error)
	// Open returns the plain canonical value of the credential record r.
	Open(r *store.Record) (json.RawMessage, error)
}

// Options are the choices of one answer.
type Options struct {
	// Reveal shows the values that pulled in a credential; without it
	// they are masked (each element of a []STRING on its own).
	Reveal bool
	// MaxBytes bounds the resolved text of the whole answer; 0 is
	// DefaultMaxResolvedBytes.
	MaxBytes int64
}

// Revealed is a credential record whose value an answer revealed through
// a reference, with the collection and cluster that hold it.
type Revealed struct {
	Collection string
	Cluster    string
	Record     *store.Record
}

// key names a cluster of the project: its collection and name.
type key struct{ collection, cluster string }

// The states of a node.
const (
	unseen uint8 = iota
	visiting
	done
)

// elem is the resolved text of a STRING value or of one element of a
// []STRING, and whether it pulled in a credential's value.
type elem struct {
	text string
	cred bool
}

// node is a record a Resolver has met: resolved at most once.
type node struct {
	rec   *store.Record
	k     key
	state uint8
	// strs reports a STRING or []STRING record, whose elems are resolved;
	// any other record yields text as it is.
	strs  bool
	array bool
	elems []elem
	// text is the text a reference to the record yields; textSet reports
	// it is built (a []STRING's compact JSON is built when a reference
	// needs it).
	text    string
	textSet bool
	// cred reports that the text pulled in a credential's value.
	cred bool
	// height is the length of the longest chain of references below.
	height int
	// targets are the records its references reached.
	targets []*node
	// answered: the record is one of the answer's, resolved as such.
	answered bool
}

// Resolver resolves the values of one answer. It is not safe for
// concurrent use.
type Resolver struct {
	ctx    context.Context
	rd     Reader
	home   key
	reveal bool
	max    int64
	spent  int64
	// clusters holds the records of each cluster read, by name; nil for
	// a cluster that is not there or out of reach.
	clusters map[key]map[string]*store.Record
	// nodes holds every record met, by id.
	nodes   map[string]*node
	answers []*node
}

// New returns a Resolver for answers in the cluster collection/cluster,
// reading through rd.
func New(ctx context.Context, rd Reader, collection, cluster string, o Options) *Resolver {
	m := o.MaxBytes
	if m <= 0 {
		m = DefaultMaxResolvedBytes
	}
	return &Resolver{ctx: ctx, rd: rd, home: key{collection, cluster}, reveal: o.Reveal, max: m,
		clusters: map[key]map[string]*store.Record{}, nodes: map[string]*node{}}
}

// Seed gives the Resolver the records of the answer's own cluster, read
// whole already, so that references into it read nothing more.
func (rv *Resolver) Seed(recs []*store.Record) {
	rv.clusters[rv.home] = byName(recs)
}

func byName(recs []*store.Record) map[string]*store.Record {
	m := make(map[string]*store.Record, len(recs))
	for _, r := range recs {
		m[r.Name] = r
	}
	return m
}

// HoldsReference reports whether r's value may change when resolved: a
// STRING or []STRING holding ${. Only such values are resolved, counted
// and shown resolved; any other value is answered as it is.
func HoldsReference(r *store.Record) bool {
	return (r.Type == store.String || r.Type == store.ArrayOf(store.String)) && strings.Contains(string(r.Value), "${")
}

// Resolve resolves the records of the answer, in its order, all records
// of the answer's cluster: those holding references are resolved and their
// resolved text counted against Options.MaxBytes. The first value that
// does not resolve ends it with an *Error; a failure of the store is
// returned as it is. Nothing is shown before Resolve succeeded.
func (rv *Resolver) Resolve(recs []*store.Record) error {
	for _, r := range recs {
		if !HoldsReference(r) {
			continue
		}
		n := rv.node(r, rv.home)
		if n.state == unseen {
			if err := rv.walk(n); err != nil {
				return err
			}
		}
		if !n.answered {
			n.answered = true
			rv.answers = append(rv.answers, n)
			for _, e := range n.elems {
				rv.spent += int64(len(e.text))
			}
			if rv.spent > rv.max {
				return &Error{Record: r.Name, Reason: ReasonTooLarge}
			}
		}
	}
	return nil
}

// node returns the node of r, a record of cluster k, made on first use.
func (rv *Resolver) node(r *store.Record, k key) *node {
	if n, ok := rv.nodes[r.ID]; ok {
		return n
	}
	n := &node{rec: r, k: k, strs: r.Type == store.String || r.Type == store.ArrayOf(store.String)}
	n.array = r.Type == store.ArrayOf(store.String)
	rv.nodes[r.ID] = n
	return n
}

// lookup returns the record ref names, relative to the cluster k that
// holds the reference, and the cluster it is in; nil when there is none
// the caller may read. It reads each cluster once.
func (rv *Resolver) lookup(k key, ref *refs.Ref) (*store.Record, key, error) {
	if ref.Cluster != "" {
		k.cluster = ref.Cluster
	}
	if ref.Collection != "" {
		k.collection = ref.Collection
	}
	recs, ok := rv.clusters[k]
	if !ok {
		got, found, err := rv.rd.Cluster(rv.ctx, k.collection, k.cluster)
		if err != nil {
			return nil, k, err
		}
		if found {
			recs = byName(got)
		}
		rv.clusters[k] = recs
	}
	return recs[ref.Name], k, nil
}

// frame is a STRING or []STRING record being resolved: the element and
// the part of it that comes next, and its text so far.
type frame struct {
	n     *node
	depth int
	// strs are the record's strings: one for a STRING, the elements of a
	// []STRING; elem is the one being resolved, parts its parts.
	strs  []string
	elem  int
	parts []refs.Part
	part  int
	b     []byte
	cred  bool
	// last is the last reference of the element met, for a text that
	// grows too large in literal text.
	last *refs.Ref
}

// start begins the element i of f.
func (f *frame) start(i int) {
	f.elem, f.part, f.b, f.cred, f.last = i, 0, f.b[:0], false, nil
	f.parts = refs.Parse(f.strs[i])
}

// walk resolves the STRING or []STRING record n, and every record it
// reaches that is not resolved yet, on an explicit stack.
func (rv *Resolver) walk(n *node) error {
	stack := make([]*frame, 0, MaxDepth+1)
	push := func(n *node, depth int) error {
		f, err := rv.open(n, depth)
		if err == nil && f != nil {
			stack = append(stack, f)
		}
		return err
	}
	if err := push(n, 0); err != nil {
		return err
	}
	fail := func(reason string) error {
		bottom := stack[0]
		ref := bottom.last
		if bottom.part < len(bottom.parts) && bottom.parts[bottom.part].Ref != nil {
			ref = bottom.parts[bottom.part].Ref
		}
		if ref == nil {
			ref = firstRef(bottom.parts[bottom.part:])
		}
		e := &Error{Record: bottom.n.rec.Name, Reason: reason}
		if ref != nil {
			e.Ref = ref.Text
		}
		return e
	}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		if f.part == len(f.parts) {
			// The element is resolved.
			f.n.elems = append(f.n.elems, elem{text: string(f.b), cred: f.cred})
			f.n.cred = f.n.cred || f.cred
			if f.elem+1 < len(f.strs) {
				f.start(f.elem + 1)
				continue
			}
			f.n.state = done
			if !f.n.array {
				f.n.text, f.n.textSet = f.n.elems[0].text, true
			}
			stack = stack[:len(stack)-1]
			continue
		}
		p := f.parts[f.part]
		if p.Ref == nil {
			if len(f.b)+len(p.Literal) > MaxValueBytes {
				return fail(ReasonTooLarge)
			}
			f.b = append(f.b, p.Literal...)
			f.part++
			continue
		}
		// A reference: the depth is counted before the step.
		if f.depth+1 > MaxDepth {
			return fail(ReasonTooDeep)
		}
		r, tk, err := rv.lookup(f.n.k, p.Ref)
		if err != nil {
			return err
		}
		if r == nil {
			return fail(ReasonNotFound)
		}
		t := rv.node(r, tk)
		switch t.state {
		case visiting:
			return fail(ReasonCycle)
		case unseen:
			if t.strs {
				t.state = visiting
				if err := push(t, f.depth+1); err != nil {
					return err
				}
				continue
			}
			if err := rv.leaf(t); err != nil {
				return err
			}
		}
		if f.depth+1+t.height > MaxDepth {
			return fail(ReasonTooDeep)
		}
		text, ok, err := rv.textOf(t)
		if err != nil {
			return err
		}
		if !ok || len(f.b)+len(text) > MaxValueBytes {
			return fail(ReasonTooLarge)
		}
		f.b = append(f.b, text...)
		f.cred = f.cred || t.cred
		f.n.height = max(f.n.height, t.height+1)
		f.n.targets = append(f.n.targets, t)
		f.last = p.Ref
		f.part++
	}
	return nil
}

// firstRef returns the first reference of parts, or nil.
func firstRef(parts []refs.Part) *refs.Ref {
	for _, p := range parts {
		if p.Ref != nil {
			return p.Ref
		}
	}
	return nil
}

// open starts resolving the STRING or []STRING record n at depth: its
// frame, or nil for an empty []STRING, resolved at once.
func (rv *Resolver) open(n *node, depth int) (*frame, error) {
	n.state = visiting
	f := &frame{n: n, depth: depth}
	if n.array {
		if err := json.Unmarshal(n.rec.Value, &f.strs); err != nil {
			return nil, err
		}
		n.elems = make([]elem, 0, len(f.strs))
		if len(f.strs) == 0 {
			n.state = done
			return nil, nil
		}
	} else {
		var s string
		if err := json.Unmarshal(n.rec.Value, &s); err != nil {
			return nil, err
		}
		f.strs = []string{s}
	}
	f.start(0)
	return f, nil
}

// leaf resolves a record whose value is not scanned for references: its
// canonical text; a credential's opened (its text is never scanned).
func (rv *Resolver) leaf(n *node) error {
	v := n.rec.Value
	if n.rec.Type.IsCredential() {
		var err error
		if v, err = rv.rd.Open(n.rec); err != nil {
			return err
		}
		n.cred = true
	}
	t, err := Text(n.rec.Type, v)
	if err != nil {
		return err
	}
	n.text, n.textSet, n.state = t, true, done
	return nil
}

// textOf returns the text a reference to the resolved record n yields:
// for a []STRING, the compact JSON of its resolved elements, built once.
// ok is false when that text would pass MaxValueBytes.
func (rv *Resolver) textOf(n *node) (string, bool, error) {
	if n.textSet {
		return n.text, len(n.text) <= MaxValueBytes, nil
	}
	b := []byte{'['}
	for i, e := range n.elems {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.Append(b, e.text)
		if len(b)+1 > MaxValueBytes {
			return "", false, nil
		}
	}
	n.text, n.textSet = string(append(b, ']')), true
	return n.text, true, nil
}

// Shown returns r as the answer shows it, after Resolve: r itself when its
// value holds no reference, else a copy whose value is resolved, masked
// where it pulled in a credential unless Options.Reveal.
func (rv *Resolver) Shown(r *store.Record) *store.Record {
	n, ok := rv.nodes[r.ID]
	if !ok || !n.answered || !HoldsReference(r) {
		return r
	}
	out := *r
	if !n.array {
		out.Value = rv.visible(nil, n.elems[0])
		return &out
	}
	b := []byte{'['}
	for i, e := range n.elems {
		if i > 0 {
			b = append(b, ',')
		}
		b = rv.visible(b, e)
	}
	out.Value = append(b, ']')
	return &out
}

// visible appends the JSON string of a resolved text as the answer shows
// it: masked when it pulled in a credential, unless reveal.
func (rv *Resolver) visible(b []byte, e elem) []byte {
	if e.cred && !rv.reveal {
		return append(b, `"********"`...)
	}
	return jsonstr.Append(b, e.text)
}

// Used returns every record the answer was built from, in id order: the
// records of the answer that hold references, and every record they
// reached.
func (rv *Resolver) Used() []*store.Record {
	out := make([]*store.Record, 0, len(rv.nodes))
	for _, n := range rv.nodes {
		out = append(out, n.rec)
	}
	slices.SortFunc(out, func(a, b *store.Record) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Revealed returns the credential records whose values the answer took in
// through references, each once, in the order the answer first reached
// them; none without Options.Reveal (their values were masked).
func (rv *Resolver) Revealed() []Revealed {
	if !rv.reveal {
		return nil
	}
	var out []Revealed
	seen := map[*node]bool{}
	var stack []*node
	for _, a := range rv.answers {
		stack = append(stack[:0], a)
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for i := len(n.targets) - 1; i >= 0; i-- {
				t := n.targets[i]
				if seen[t] {
					continue
				}
				seen[t] = true
				if t.rec.Type.IsCredential() {
					out = append(out, Revealed{Collection: t.k.collection, Cluster: t.k.cluster, Record: t.rec})
				}
				stack = append(stack, t)
			}
		}
	}
	return out
}

// Reach records, without resolving it, every record r's references reach
// within MaxDepth steps, so that Used counts them (a record the
// environment file skips still makes its cluster's tag). Nothing it meets
// fails; a failure of the store does.
func (rv *Resolver) Reach(r *store.Record) error {
	if !HoldsReference(r) {
		return nil
	}
	type step struct {
		n     *node
		depth int
	}
	seen := map[*node]bool{}
	start := rv.node(r, rv.home)
	seen[start] = true
	stack := []step{{start, 0}}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if s.depth >= MaxDepth || !s.n.strs {
			continue
		}
		for _, str := range stringsOf(s.n.rec) {
			for _, p := range refs.Parse(str) {
				if p.Ref == nil {
					continue
				}
				t, tk, err := rv.lookup(s.n.k, p.Ref)
				if err != nil {
					return err
				}
				if t == nil {
					continue
				}
				tn := rv.node(t, tk)
				if !seen[tn] {
					seen[tn] = true
					stack = append(stack, step{tn, s.depth + 1})
				}
			}
		}
	}
	return nil
}

// stringsOf returns the strings of a STRING or []STRING record's value;
// none when it does not decode.
func stringsOf(r *store.Record) []string {
	if r.Type == store.String {
		var s string
		if json.Unmarshal(r.Value, &s) != nil {
			return nil
		}
		return []string{s}
	}
	var elems []string
	if json.Unmarshal(r.Value, &elems) != nil {
		return nil
	}
	return elems
}
