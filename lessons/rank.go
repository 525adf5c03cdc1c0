package lessons

import "sort"

// record is a stored lesson with its insertion order (SQLite's row id).
type record struct {
	Lesson
	seq int64
}

// rank is the one ranking of lessons, used by every Store: it orders the
// candidates (all of q's rule) as Store describes, keeps the best copy of
// each text with the number of copies, and applies the limit.
func rank(cands []record, q Query) []Lesson {
	sort.SliceStable(cands, func(i, j int) bool { return better(cands[i], cands[j], q) })
	seen := map[string]int{}
	for _, c := range cands {
		seen[c.Text]++
	}
	limit := limitOf(q)
	var out []Lesson
	for _, c := range cands {
		n, ok := seen[c.Text]
		if !ok {
			continue // a worse copy of a text already taken
		}
		delete(seen, c.Text)
		if limit >= 0 && len(out) == limit {
			break
		}
		l := c.Lesson
		l.Seen = n
		out = append(out, l)
	}
	return out
}

// better reports whether a ranks before b.
func better(a, b record, q Query) bool {
	if ma, mb := match(a.Lesson, q), match(b.Lesson, q); ma != mb {
		return ma > mb
	}
	if wa, wb := a.Kind == Worked, b.Kind == Worked; wa != wb {
		return wa
	}
	if ta, tb := a.At.UnixNano(), b.At.UnixNano(); ta != tb {
		return ta > tb
	}
	return a.seq > b.seq
}
