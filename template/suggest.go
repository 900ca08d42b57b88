package template

import (
	"slices"
	"strings"
)

// nearest returns up to n candidates close to q: within an edit distance
// of a third of q's length (at least 2), or containing q (so "otp" finds
// every OTP template), closest first.
func nearest(q string, candidates []string, n int) []string {
	if len(q) > 40 {
		q = q[:40] // slugs are short; this bounds the work on junk
	}
	q = strings.ToLower(q)
	q = strings.NewReplacer(" ", "-", "_", "-").Replace(q)
	limit := max(2, len(q)/3)
	type scored struct {
		s string
		d int
	}
	var found []scored
	seen := make(map[string]bool, len(candidates))
	for _, c := range candidates {
		if seen[c] {
			continue
		}
		seen[c] = true
		d := distance(q, strings.ReplaceAll(c, "_", "-"))
		if d <= limit || len(q) >= 3 && strings.Contains(c, q) {
			found = append(found, scored{c, d})
		}
	}
	slices.SortFunc(found, func(a, b scored) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(a.s, b.s)
	})
	out := make([]string, 0, n)
	for _, f := range found[:min(n, len(found))] {
		out = append(out, f.s)
	}
	return out
}

// distance is the Levenshtein distance between a and b, in bytes (slugs
// are ASCII).
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
