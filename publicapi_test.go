package hds_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPublicPackagesExposeNoInternalTypes holds the README's promise that
// handler, middleware and client are usable on their own: their exported
// functions, methods, types, fields and declared variable types name only
// the standard library, ulule/limiter and hds's public packages, never an
// internal one.
func TestPublicPackagesExposeNoInternalTypes(t *testing.T) {
	for _, dir := range []string{"handler", "middleware", "client"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		fset := token.NewFileSet()
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
			require.NoError(t, err, name)
			for _, bad := range internalUses(f) {
				assert.Fail(t, "an exported declaration names an internal package",
					"%s: %s", fset.Position(bad.Pos()), bad.what)
			}
		}
	}
}

type internalUse struct {
	ast.Node
	what string
}

// internalUses lists the internal package selectors (envelope.X) in the
// exported API of f.
func internalUses(f *ast.File) []internalUse {
	internal := map[string]string{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if !strings.Contains(path, "/internal/") {
			continue
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		internal[name] = path
	}
	var out []internalUse
	check := func(n ast.Node, decl string) {
		if n == nil {
			return
		}
		ast.Inspect(n, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && internal[id.Name] != "" {
					out = append(out, internalUse{sel, decl + " uses " + internal[id.Name] + "." + sel.Sel.Name})
				}
			}
			return true
		})
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || (d.Recv != nil && !exportedRecv(d.Recv)) {
				continue
			}
			check(d.Type, d.Name.Name)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						checkExportedType(s.Type, s.Name.Name, check)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							check(s.Type, n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

// checkExportedType checks a type's exported fields and methods only.
func checkExportedType(t ast.Expr, name string, check func(ast.Node, string)) {
	var fields *ast.FieldList
	switch t := t.(type) {
	case *ast.StructType:
		fields = t.Fields
	case *ast.InterfaceType:
		fields = t.Methods
	default:
		check(t, name)
		return
	}
	for _, f := range fields.List {
		if len(f.Names) == 0 { // embedded
			check(f.Type, name)
			continue
		}
		for _, n := range f.Names {
			if n.IsExported() {
				check(f.Type, name+"."+n.Name)
			}
		}
	}
}

// exportedRecv reports whether a method's receiver type is exported.
func exportedRecv(recv *ast.FieldList) bool {
	t := recv.List[0].Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	if idx, ok := t.(*ast.IndexExpr); ok {
		t = idx.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}
