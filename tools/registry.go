// Package tools holds Meridian's MCP tools, independent of the transport. A tool is a
// definition (name, title, description, input and output schemas, annotations, whether
// it writes) and a handler that calls the same engine functions REST calls. The
// framework does the rest once, for every tool: argument aliases and coercion,
// validation with hints, description and SQL trimming, the result budget, opaque
// cursors, read-only refusal and the mapping of meridian error codes to a statusCode
// and a hint. rpc/ puts the tools on the wire with mark3labs/mcp-go.
//
// # Adding a tool
//
// Write one function in the category file (discover.go, inspect.go, govern.go,
// knowledge.go, metrics.go, …) that returns a *Tool, and add it to builders in
// registry.go:
//
//	func getTestDefinitions(env *Env) *Tool {
//		return &Tool{
//			Name: "get_test_definitions", Title: "Get test definitions",
//			Description: "…",
//			Input:  Object(Props{"entityType": Enum("…", "TABLE", "COLUMN"), "cursor": Cursor()}),
//			Output: OpenObject("…", Props{"data": Array("…", OpenObject("", nil))}),
//			Handler: func(ctx context.Context, p *meridian.Principal, a Args) (any, error) {
//				… env.Entities.List(ctx, p, "testDefinition", …) …
//			},
//		}
//	}
//
// Set Write (and Destructive, Idempotent) to describe what the tool does; the four MCP
// annotations are derived from them and always set explicitly. The tools/list golden
// file (tools/testdata/tools_list.json, regenerate with go test ./tools -update) and the
// schema portability check fail until the new tool is described properly.
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"runtime/debug"
	"sort"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/graph"
	"github.com/meridian-catalog/meridian/graph/shapes"
	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store"
)

// DefaultBudget is the default result budget in characters of the JSON text.
const DefaultBudget = 80000

// minBudget is the smallest budget accepted; tools need room for one row.
const minBudget = 4000

// Tool is one MCP tool.
type Tool struct {
	// Name is the tool name: 1–128 characters of [A-Za-z0-9_.-].
	Name string
	// Title is the human-readable name clients show.
	Title string
	// Description tells the model when and how to use the tool.
	Description string
	// Input is the arguments' object schema (see Object).
	Input Schema
	// Output is the structuredContent object schema.
	Output Schema
	// Write marks a tool that changes the catalog: it is hidden and refused (403) in
	// read-only mode and for tokens scoped to metadata:read.
	Write bool
	// Destructive marks a write that may overwrite or remove existing data.
	Destructive bool
	// Idempotent marks a tool whose repeated calls with the same arguments have no
	// further effect. Read tools are idempotent.
	Idempotent bool
	// Aliases maps extra accepted argument names to schema names, beside the shared
	// aliases (entity_type, limit, …).
	Aliases map[string]string
	// Handler runs the tool. It returns a value that marshals to a JSON object, or an
	// error (a *meridian.Error, optionally wrapped with withHint).
	Handler Handler
}

// Handler runs a tool for the calling principal with bound arguments.
type Handler func(ctx context.Context, p *meridian.Principal, args Args) (any, error)

// Annotations are the four MCP tool hints, always all set.
type Annotations struct {
	ReadOnly, Destructive, Idempotent, OpenWorld bool
}

// Annotations returns the tool's hints: readOnly unless it writes, destructive and
// idempotent as declared (a read tool is idempotent and never destructive), and
// openWorld false: every tool works on the catalog only.
func (t *Tool) Annotations() Annotations {
	if !t.Write {
		return Annotations{ReadOnly: true, Idempotent: true}
	}
	return Annotations{Destructive: t.Destructive, Idempotent: t.Idempotent}
}

// SchemaSource gives a kind's raw JSON Schema; schema.Validator implements it.
type SchemaSource interface {
	Schema(kind string) (json.RawMessage, bool)
}

// Config wires the tools.
type Config struct {
	// Entities is the entity engine.
	Entities *store.Entities
	// Search answers the typed searches of every mode (keyword, vector, hybrid); nil
	// means Entities, which answers keyword searches only.
	Search search.Service
	// Schemas gives kind schemas (patch_entity's field hints). It may be nil.
	Schemas SchemaSource
	// Budget bounds a result's JSON text in characters; 0 means DefaultBudget.
	Budget int
	// ReadOnly hides and refuses every write tool, whoever calls.
	ReadOnly bool
	// Logger receives internal errors; nil discards them.
	Logger *slog.Logger
	// Graph answers the knowledge-graph tools; nil makes them answer that the graph is
	// not configured.
	Graph *graph.Service
	// Shapes runs shacl_validate; nil makes it answer that the graph is not configured.
	Shapes *shapes.Validator
}

// Env is what tool builders get: the engine and the limits.
type Env struct {
	Entities *store.Entities
	Search   search.Service
	Schemas  SchemaSource
	Budget   int
	Logger   *slog.Logger
	Graph    *graph.Service
	Shapes   *shapes.Validator
}

// Registry returns the kind registry.
func (e *Env) Registry() *meridian.Registry { return e.Entities.Registry() }

// builders are the constructors of every tool, by category file. A new tool is added
// here.
var builders = []func(*Env) *Tool{
	// discover.go
	searchMetadata,
	// semantic.go
	semanticSearch, searchCompanyContext, findContext, nlqSearch,
	// inspect.go
	getEntityDetails,
	// context.go
	getCompanyContext, getAssetContext, getPersonaContext, getUserContext,
	// lineage.go
	getEntityLineage, createLineage, rootCauseAnalysis,
	// quality.go
	getTestDefinitions, createTestCase,
	// govern.go
	createClassification, createTag, createDomain, createDataProduct, patchEntity, updateEntity,
	// knowledge.go
	createGlossary, createGlossaryTerm,
	// knowledge_ctx.go
	createContextMemory, createArticle, getKnowledgeContent,
	// metrics.go
	createMetric,
	// graph.go
	sparqlQuery, entityNeighborhood, findByTag, ontologyDescribe,
	// graph_shacl.go
	shaclValidate,
}

// detailSections are the optional sections of get_entity_details by include name.
var detailSections = map[string]DetailSection{
	"lineage": lineageSection,
	"quality": qualitySection,
}

// Set is the built tool set. It is safe for concurrent use.
type Set struct {
	env      *Env
	readOnly bool
	tools    []*Tool
	byName   map[string]*Tool
}

// ErrUnknownTool is returned by Call for a name no tool has; transports answer it as a
// protocol error (JSON-RPC -32602), not as a tool result.
var ErrUnknownTool = errors.New("unknown tool")

var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// New builds every tool of builders and checks the definitions.
func New(c Config) (*Set, error) {
	if c.Entities == nil {
		return nil, errors.New("tools: Entities is required")
	}
	budget := c.Budget
	if budget == 0 {
		budget = DefaultBudget
	}
	if budget < minBudget {
		return nil, fmt.Errorf("tools: budget %d is below the minimum of %d characters", budget, minBudget)
	}
	log := c.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	srch := c.Search
	if srch == nil {
		srch = c.Entities
	}
	env := &Env{Entities: c.Entities, Search: srch, Schemas: c.Schemas, Budget: budget, Logger: log, Graph: c.Graph, Shapes: c.Shapes}
	s := &Set{env: env, readOnly: c.ReadOnly, byName: map[string]*Tool{}}
	for _, b := range builders {
		t := b(env)
		if err := check(t); err != nil {
			return nil, err
		}
		if _, dup := s.byName[t.Name]; dup {
			return nil, fmt.Errorf("tools: %s is listed twice", t.Name)
		}
		s.byName[t.Name] = t
		s.tools = append(s.tools, t)
	}
	sort.Slice(s.tools, func(i, j int) bool { return s.tools[i].Name < s.tools[j].Name })
	return s, nil
}

// check enforces the parts of the contract a definition can get wrong.
func check(t *Tool) error {
	switch {
	case !toolNameRE.MatchString(t.Name):
		return fmt.Errorf("tools: invalid tool name %q", t.Name)
	case t.Title == "" || t.Description == "":
		return fmt.Errorf("tools: %s needs a title and a description", t.Name)
	case t.Input.typ() != "object" || t.Output.typ() != "object":
		return fmt.Errorf("tools: %s needs object input and output schemas", t.Name)
	case t.Handler == nil:
		return fmt.Errorf("tools: %s has no handler", t.Name)
	}
	if errs := Portability(t.Input); len(errs) > 0 {
		return fmt.Errorf("tools: %s input schema: %v", t.Name, errs[0])
	}
	if errs := Portability(t.Output); len(errs) > 0 {
		return fmt.Errorf("tools: %s output schema: %v", t.Name, errs[0])
	}
	return nil
}

// Env returns the environment the tools were built with.
func (s *Set) Env() *Env { return s.env }

// ReadOnly reports whether the set refuses every write tool.
func (s *Set) ReadOnly() bool { return s.readOnly }

// Tools returns every tool, sorted by name.
func (s *Set) Tools() []*Tool { return append([]*Tool(nil), s.tools...) }

// Lookup returns the tool with this name.
func (s *Set) Lookup(name string) (*Tool, bool) {
	t, ok := s.byName[name]
	return t, ok
}

// CanWrite reports whether write tools are open to the principal: not in read-only
// mode, and not for a token scoped to metadata:read only.
func (s *Set) CanWrite(p *meridian.Principal) bool { return !s.readOnly && !p.ReadOnly() }

// Visible returns the tools a principal may see: every tool, or the read tools only
// when writes are closed to it.
func (s *Set) Visible(p *meridian.Principal) []*Tool {
	if s.CanWrite(p) {
		return s.Tools()
	}
	var out []*Tool
	for _, t := range s.tools {
		if !t.Write {
			out = append(out, t)
		}
	}
	return out
}

// Result is a shaped tool result: on success the structured object and the same JSON
// as text; on failure IsError, the statusCode and a JSON text {error, statusCode, hint}
// with no structured content.
type Result struct {
	Structured map[string]any
	Text       string
	IsError    bool
	StatusCode int
}

// Call runs a tool for p. A write tool is refused with 403 when writes are closed to p,
// even though it is not listed then: a client that calls it anyway learns why. Every
// failure is a Result with IsError, except an unknown name (ErrUnknownTool).
func (s *Set) Call(ctx context.Context, p *meridian.Principal, name string, raw map[string]any) (res Result, err error) {
	t, ok := s.byName[name]
	if !ok {
		return Result{}, fmt.Errorf("%w: %s", ErrUnknownTool, name)
	}
	defer func() {
		if r := recover(); r != nil {
			s.env.Logger.ErrorContext(ctx, "tool panicked", slog.String("tool", name),
				slog.Any("panic", r), slog.String("stack", string(debug.Stack())))
			res, err = errorResult(meridian.Errorf(meridian.EInternal, "internal error")), nil
		}
	}()
	if p == nil {
		return errorResult(withHint(meridian.Errorf(meridian.EUnauthorized, "Not authenticated"),
			"Send a Bearer token (a bot token or a personal access token)")), nil
	}
	if t.Write && !s.CanWrite(p) {
		why := fmt.Sprintf("the token of %s is scoped to %s", p.Name, meridian.ScopeRead)
		if s.readOnly {
			why = "this server runs in read-only mode"
		}
		return errorResult(withHint(meridian.Errorf(meridian.EForbidden, "Tool %s changes metadata and %s", name, why),
			"Only the read tools are available here; use a token with the metadata:write scope on a server not started with --read-only")), nil
	}
	args, err := t.bind(raw)
	if err != nil {
		return errorResult(err), nil
	}
	v, err := t.Handler(ctx, p, args)
	if err != nil {
		if meridian.ErrorCode(err) == meridian.EInternal {
			s.env.Logger.ErrorContext(ctx, "tool failed", slog.String("tool", name), slog.String("error", err.Error()))
		}
		return errorResult(err), nil
	}
	return s.shape(t, v), nil
}
