package execute

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// The root of the module, from this package's directory.
const moduleRoot = "../.."

// modulePath is the module's import path: imports under it are read from
// the tree.
const modulePath = "github.com/sparkplug-io/sparkplug"

// eventRow is a row of the Events table of docs/operations.md.
type eventRow struct {
	reason, typ, object, when string
}

// readmeEvents parses the table of docs/operations.md's "## Events" section:
// | `reason` | type | on which object | when |.
func readmeEvents(t *testing.T) map[string]eventRow {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(moduleRoot, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	start := strings.Index(text, "\n## Events\n")
	if start < 0 {
		t.Fatal(`docs/operations.md has no "## Events" section`)
	}
	section := text[start+1:]
	if end := strings.Index(section[1:], "\n#"); end >= 0 {
		section = section[:end+1]
	}
	if !strings.Contains(section, "| reason | type | on which object | when |") {
		t.Fatal("docs/operations.md's Events section has no table | reason | type | on which object | when |")
	}
	rows := map[string]eventRow{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) != 6 {
			t.Errorf("docs/operations.md Events row %q: want | `reason` | type | on which object | when |", line)
			continue
		}
		r := eventRow{reason: strings.Trim(strings.TrimSpace(cells[1]), "`"), typ: strings.TrimSpace(cells[2]),
			object: strings.TrimSpace(cells[3]), when: strings.TrimSpace(cells[4])}
		if _, dup := rows[r.reason]; dup {
			t.Errorf("docs/operations.md's Events table lists %s twice", r.reason)
		}
		if r.typ != corev1.EventTypeNormal && r.typ != corev1.EventTypeWarning {
			t.Errorf("docs/operations.md Events row %s: type %q, want Normal or Warning", r.reason, r.typ)
		}
		if r.object == "" || r.when == "" {
			t.Errorf("docs/operations.md Events row %s does not say on which object and when", r.reason)
		}
		rows[r.reason] = r
	}
	if len(rows) == 0 {
		t.Fatal("docs/operations.md's Events table has no rows")
	}
	return rows
}

// Every Event reason the code records, here or in any other package, has
// a row in docs/operations.md's Events table, with its type; and every row is a
// reason the code records.
func TestReadmeListsEveryEventReason(t *testing.T) {
	rows := readmeEvents(t)
	recorded := recordedEvents(t)
	if len(recorded) == 0 {
		t.Fatal("found no Event recorded in the code")
	}
	for reason, where := range recorded {
		row, ok := rows[reason]
		if !ok {
			t.Errorf("%s records Events with reason %s, which docs/operations.md's Events table lacks", where.at, reason)
			continue
		}
		for typ, at := range where.types {
			if row.typ != typ {
				t.Errorf("%s records %s as %s; docs/operations.md's Events table says %s", at, reason, typ, row.typ)
			}
		}
	}
	for reason := range rows {
		if _, ok := recorded[reason]; !ok {
			t.Errorf("docs/operations.md's Events table lists %s, which no code records", reason)
		}
	}
	// The states' Events get their type from stateEventType.
	for s, reason := range eventReasons {
		if row, ok := rows[reason]; ok && row.typ != stateEventType(s) {
			t.Errorf("state %s: docs/operations.md says %s is %s, stateEventType says %s", s, reason, row.typ, stateEventType(s))
		}
	}
}

// recording is where a reason is first recorded, and each type the code
// says it is recorded with, where.
type recording struct {
	at    string
	types map[string]string
}

// recordedEvents finds every call that records an Event in the module's
// non-test Go files (plugin/, cmd/): a Core's event(wf, type, reason,
// message), and record.EventRecorder's Event, Eventf and AnnotatedEventf.
// It reads the reason argument as far as a reader of the code could: a
// string literal, a constant, a local variable set from those, or an
// index into a map literal of them. A reason it cannot follow is an
// error: the table could not be checked.
func recordedEvents(t *testing.T) map[string]recording {
	t.Helper()
	pkgs := parseModule(t)
	out := map[string]recording{}
	for _, p := range pkgs {
		for _, f := range p.files {
			imports := fileImports(f.ast)
			ast.Inspect(f.ast, func(n ast.Node) bool {
				fn, ok := n.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					return true
				}
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					typeArg, reasonArg, ok := eventArgs(call)
					if !ok {
						return true
					}
					at := relative(f.fset.Position(call.Pos()).String())
					if id, isIdent := call.Args[reasonArg].(*ast.Ident); isIdent && isParam(fn, id.Name) {
						return true // a wrapper forwarding its caller's reason
					}
					r := resolver{pkgs: pkgs, pkg: p, imports: imports, fn: fn}
					reasons, ok := r.strings(call.Args[reasonArg])
					if !ok || len(reasons) == 0 {
						t.Errorf("%s: cannot tell the reason of the Event recorded here; record it with a constant or a literal", at)
						return true
					}
					types, _ := r.strings(call.Args[typeArg])
					if len(reasons) > 1 {
						types = nil // which type goes with which reason is the code's to say
					}
					for _, reason := range reasons {
						rec, seen := out[reason]
						if !seen {
							rec = recording{at: at, types: map[string]string{}}
						}
						for _, typ := range types {
							if _, ok := rec.types[typ]; !ok {
								rec.types[typ] = at
							}
						}
						out[reason] = rec
					}
					return true
				})
				return false
			})
		}
	}
	return out
}

// eventArgs are the positions of the type and reason arguments of a call
// that records an Event.
func eventArgs(call *ast.CallExpr) (typ, reason int, ok bool) {
	sel, isSel := call.Fun.(*ast.SelectorExpr)
	if !isSel {
		return 0, 0, false
	}
	switch n := len(call.Args); sel.Sel.Name {
	case "event", "Event":
		return 1, 2, n == 4
	case "Eventf":
		return 1, 2, n >= 4
	case "AnnotatedEventf":
		return 2, 3, n >= 5
	}
	return 0, 0, false
}

func isParam(fn *ast.FuncDecl, name string) bool {
	for _, field := range fn.Type.Params.List {
		for _, n := range field.Names {
			if n.Name == name {
				return true
			}
		}
	}
	return false
}

// relative is a position with its path from the module's root.
func relative(pos string) string {
	return strings.TrimPrefix(filepath.ToSlash(pos), moduleRoot+"/")
}

// goPackage is one directory's non-test Go files, with its package-level
// string constants and variables.
type goPackage struct {
	dir    string // relative to the module root, slash-separated
	files  []goFile
	consts map[string]ast.Expr
	vars   map[string]ast.Expr
}

type goFile struct {
	fset *token.FileSet
	ast  *ast.File
}

func parseModule(t *testing.T) map[string]*goPackage {
	t.Helper()
	pkgs := map[string]*goPackage{}
	fset := token.NewFileSet()
	for _, top := range []string{"plugin", "cmd"} {
		err := filepath.WalkDir(filepath.Join(moduleRoot, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(moduleRoot, filepath.Dir(path))
			dir := filepath.ToSlash(rel)
			p := pkgs[dir]
			if p == nil {
				p = &goPackage{dir: dir, consts: map[string]ast.Expr{}, vars: map[string]ast.Expr{}}
				pkgs[dir] = p
			}
			p.files = append(p.files, goFile{fset: fset, ast: f})
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || (gd.Tok != token.CONST && gd.Tok != token.VAR) {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if i >= len(vs.Values) {
							continue
						}
						if gd.Tok == token.CONST {
							p.consts[name.Name] = vs.Values[i]
						} else {
							p.vars[name.Name] = vs.Values[i]
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return pkgs
}

// fileImports maps each import's name in a file to its path.
func fileImports(f *ast.File) map[string]string {
	m := map[string]string{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		m[name] = path
	}
	return m
}

// resolver follows an expression to the strings it can hold.
type resolver struct {
	pkgs    map[string]*goPackage
	pkg     *goPackage
	imports map[string]string
	fn      *ast.FuncDecl
	depth   int
}

func (r resolver) strings(e ast.Expr) ([]string, bool) {
	if r.depth > 8 {
		return nil, false
	}
	r.depth++
	switch e := e.(type) {
	case *ast.BasicLit:
		s, err := strconv.Unquote(e.Value)
		return []string{s}, err == nil && e.Kind == token.STRING
	case *ast.ParenExpr:
		return r.strings(e.X)
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		if !ok {
			return nil, false
		}
		path := r.imports[x.Name]
		switch {
		case path == "k8s.io/api/core/v1" && e.Sel.Name == "EventTypeNormal":
			return []string{corev1.EventTypeNormal}, true
		case path == "k8s.io/api/core/v1" && e.Sel.Name == "EventTypeWarning":
			return []string{corev1.EventTypeWarning}, true
		}
		dir, ok := strings.CutPrefix(path, modulePath+"/")
		if p := r.pkgs[dir]; ok && p != nil {
			if v, ok := p.consts[e.Sel.Name]; ok {
				return resolver{pkgs: r.pkgs, pkg: p, imports: r.imports, depth: r.depth}.strings(v)
			}
		}
		return nil, false
	case *ast.Ident:
		if r.fn != nil {
			if vals, found := r.local(e.Name); found {
				return r.all(vals)
			}
		}
		if v, ok := r.pkg.consts[e.Name]; ok {
			return r.strings(v)
		}
		return nil, false
	case *ast.IndexExpr:
		// A map literal of strings, indexed: any of its values.
		id, ok := e.X.(*ast.Ident)
		if !ok {
			return nil, false
		}
		lit, ok := r.pkg.vars[id.Name].(*ast.CompositeLit)
		if !ok {
			return nil, false
		}
		var vals []ast.Expr
		for _, el := range lit.Elts {
			kv, ok := el.(*ast.KeyValueExpr)
			if !ok {
				return nil, false
			}
			vals = append(vals, kv.Value)
		}
		return r.all(vals)
	}
	return nil, false
}

// all resolves every expression; empty strings (a variable's zero value,
// which the code then does not record) are left out.
func (r resolver) all(es []ast.Expr) ([]string, bool) {
	var out []string
	for _, v := range es {
		ss, ok := r.strings(v)
		if !ok {
			return nil, false
		}
		for _, s := range ss {
			if s != "" && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out, true
}

// local finds what the enclosing function assigns to a local variable:
// the values of its := and = assignments and var declarations.
func (r resolver) local(name string) (vals []ast.Expr, found bool) {
	ast.Inspect(r.fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, lhs := range n.Lhs {
				id, ok := lhs.(*ast.Ident)
				if !ok || id.Name != name {
					continue
				}
				found = true
				switch {
				case len(n.Rhs) == len(n.Lhs):
					vals = append(vals, n.Rhs[i])
				case len(n.Rhs) == 1 && i == 0:
					vals = append(vals, n.Rhs[0]) // v, ok := m[k]
				default:
					vals = append(vals, &ast.BadExpr{})
				}
			}
		case *ast.ValueSpec:
			for i, id := range n.Names {
				if id.Name != name {
					continue
				}
				found = true
				if i < len(n.Values) {
					vals = append(vals, n.Values[i])
				}
			}
		}
		return true
	})
	return vals, found
}
