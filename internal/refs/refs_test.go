package refs

import (
	"reflect"
	"strings"
	"testing"
)

func lit(s string) Part { return Part{Literal: s} }

func ref(coll, cl, name, text string) Part {
	return Part{Ref: &Ref{Collection: coll, Cluster: cl, Name: name, Text: text}}
}

func TestParse(t *testing.T) {
	long := strings.Repeat("a", 129)
	tests := []struct {
		name string
		in   string
		want []Part
	}{
		{"empty", "", nil},
		{"plain", "hello", []Part{lit("hello")}},
		{"same cluster", "${host}", []Part{ref("", "", "host", "${host}")}},
		{"other cluster", "${db/host}", []Part{ref("", "db", "host", "${db/host}")}},
		{"other collection", "${prod/db/host}", []Part{ref("prod", "db", "host", "${prod/db/host}")}},
		{"in text", "postgres://${db/user}:${db/password}@${db/host}/app", []Part{
			lit("postgres://"), ref("", "db", "user", "${db/user}"), lit(":"),
			ref("", "db", "password", "${db/password}"), lit("@"),
			ref("", "db", "host", "${db/host}"), lit("/app")}},
		{"percent-decoded", "${my%20coll/k%7D/a%25b}", []Part{ref("my coll", "k}", "a%b", "${my%20coll/k%7D/a%25b}")}},
		{"plus stays", "${a+b}", []Part{ref("", "", "a+b", "${a+b}")}},
		{"escaped", "$${host}", []Part{lit("${host}")}},
		{"escaped then ref", "$${a}${b}", []Part{lit("${a}"), ref("", "", "b", "${b}")}},
		{"three dollars", "$$${a}", []Part{lit("$${a}")}},
		{"lone dollars", "$ $$ a$", []Part{lit("$ $$ a$")}},
		{"no closing brace", "${host", []Part{lit("${host")}},
		{"empty name", "${}", []Part{lit("${}")}},
		{"empty segment", "${db//host}", []Part{lit("${db//host}")}},
		{"empty leading segment", "${/host}", []Part{lit("${/host}")}},
		{"four names", "${a/b/c/d}", []Part{lit("${a/b/c/d}")}},
		{"leading space", "${ host}", []Part{lit("${ host}")}},
		{"trailing space", "${host }", []Part{lit("${host }")}},
		{"dot", "${.}", []Part{lit("${.}")}},
		{"dot dot", "${a/..}", []Part{lit("${a/..}")}},
		{"control", "${a\tb}", []Part{lit("${a\tb}")}},
		{"encoded control", "${a%09b}", []Part{lit("${a%09b}")}},
		{"encoded slash", "${a%2Fb}", []Part{lit("${a%2Fb}")}},
		{"bad escape", "${a%zz}", []Part{lit("${a%zz}")}},
		{"bad utf-8", "${a%ff}", []Part{lit("${a%ff}")}},
		{"too long", "${" + long + "}", []Part{lit("${" + long + "}")}},
		{"bad then good", "${ x}${y}", []Part{lit("${ x}"), ref("", "", "y", "${y}")}},
		{"brace in name", "${a${b}", []Part{ref("", "", "a${b", "${a${b}")}},
		{"unicode", "${héllo}", []Part{ref("", "", "héllo", "${héllo}")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Parse(tt.in)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Parse(%q) = %s, want %s", tt.in, show(got), show(tt.want))
			}
			wantHas := false
			for _, p := range tt.want {
				wantHas = wantHas || p.Ref != nil
			}
			if h := Has(tt.in); h != wantHas {
				t.Fatalf("Has(%q) = %v, want %v", tt.in, h, wantHas)
			}
		})
	}
}

func show(ps []Part) string {
	var b strings.Builder
	for _, p := range ps {
		if p.Ref != nil {
			b.WriteString("[ref " + p.Ref.Collection + "|" + p.Ref.Cluster + "|" + p.Ref.Name + " " + p.Ref.Text + "]")
		} else {
			b.WriteString("[lit " + p.Literal + "]")
		}
	}
	return b.String()
}

// FuzzParse checks that Parse never panics, that Has agrees with it, and
// that the parts spell the input again (references as written, literal
// ${ as the $${ it came from, when it did).
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "${a}", "$${a}", "x${db/host}y", "${a/b/c/d}", "${%zz}", "$$${a}", "${a${b}}", "${"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parts := Parse(s)
		has := false
		var b strings.Builder
		for i, p := range parts {
			if p.Ref != nil {
				has = true
				if p.Ref.Name == "" || !strings.HasPrefix(p.Ref.Text, "${") || !strings.HasSuffix(p.Ref.Text, "}") {
					t.Fatalf("bad reference %+v", p.Ref)
				}
				b.WriteString(p.Ref.Text)
				continue
			}
			if p.Literal == "" || (i > 0 && parts[i-1].Ref == nil) {
				t.Fatalf("literal parts not merged: %s", show(parts))
			}
			b.WriteString(p.Literal)
		}
		if has != Has(s) {
			t.Fatalf("Has(%q) = %v, Parse found references: %v", s, !has, has)
		}
		// Without $${, the parts spell s again exactly.
		if !strings.Contains(s, "$${") && b.String() != s {
			t.Fatalf("parts of %q spell %q", s, b.String())
		}
		// Parsing the references' text alone finds them again.
		for _, p := range parts {
			if p.Ref != nil {
				again := Parse(p.Ref.Text)
				if len(again) != 1 || again[0].Ref == nil || *again[0].Ref != *p.Ref {
					t.Fatalf("reference %q does not parse alone: %s", p.Ref.Text, show(again))
				}
			}
		}
	})
}
