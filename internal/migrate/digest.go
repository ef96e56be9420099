package migrate

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"

	"github.com/lcctl/lcctl/internal/validate"
)

// docDigest is the SHA-256 of a document's JSON data (see digester): two
// documents have the same digest exactly when they hold the same data,
// unless SHA-256 collides.
type docDigest [sha256.Size]byte

// digester hashes a document's JSON data model as a prefix-free stream:
// per value its kind, then a scalar's text, an object's member count and
// each key and value, or an array's item count and items, every string
// preceded by its length. It reads exactly what a value-by-value
// comparison of the intended tree with the decoded rewritten text reads
// (kinds, scalar texts, member keys in order, items; null carries no
// text), so the verifier can let go of the intended tree before the
// rewritten text is decoded: on 124,000 entries the two trees alive
// together were migrate's peak of memory (docs/performance.md).
type digester struct {
	h   hash.Hash
	buf []byte
}

func newDigester() *digester {
	return &digester{h: sha256.New(), buf: make([]byte, 0, 64<<10)}
}

func (d *digester) flush() {
	d.h.Write(d.buf)
	d.buf = d.buf[:0]
}

func (d *digester) head(k validate.Kind, n int) {
	if len(d.buf) > cap(d.buf)-2*binary.MaxVarintLen64 {
		d.flush()
	}
	d.buf = append(d.buf, byte(k))
	d.buf = binary.AppendUvarint(d.buf, uint64(n))
}

func (d *digester) text(s string) {
	d.buf = binary.AppendUvarint(d.buf, uint64(len(s)))
	if len(d.buf)+len(s) > cap(d.buf) {
		d.flush()
		if len(s) > cap(d.buf) {
			d.h.Write([]byte(s))
			return
		}
	}
	d.buf = append(d.buf, s...)
}

func (d *digester) sum() docDigest {
	d.flush()
	var out docDigest
	d.h.Sum(out[:0])
	return out
}

// digest returns the digest of the intended document n.
func (n *node) digest() docDigest {
	d := newDigester()
	var walk func(n *node)
	walk = func(n *node) {
		switch n.kind {
		case validate.KindNull:
			d.head(n.kind, 0)
		case validate.KindObject:
			d.head(n.kind, len(n.members))
			for _, m := range n.members {
				d.text(m.key)
				walk(m.value())
			}
		case validate.KindArray:
			d.head(n.kind, len(n.items))
			for _, it := range n.items {
				walk(it)
			}
		default:
			d.head(n.kind, 0)
			d.text(n.text)
		}
	}
	walk(n)
	return d.sum()
}

// valueDigest returns the digest of the decoded document v, the same
// stream as node.digest.
func valueDigest(v *validate.Value) docDigest {
	d := newDigester()
	var walk func(v *validate.Value)
	walk = func(v *validate.Value) {
		switch v.Kind {
		case validate.KindNull:
			d.head(v.Kind, 0)
		case validate.KindObject:
			d.head(v.Kind, len(v.Members))
			for i := range v.Members {
				d.text(v.Members[i].Key)
				walk(v.Members[i].Value)
			}
		case validate.KindArray:
			d.head(v.Kind, len(v.Items()))
			for _, it := range v.Items() {
				walk(it)
			}
		default:
			d.head(v.Kind, 0)
			d.text(v.Text)
		}
	}
	walk(v)
	return d.sum()
}
