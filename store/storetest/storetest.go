// Package storetest is the conformance suite of the entity engine. Every driver runs
// all of it: Run takes a function that opens a fresh, empty driver. RunDriver checks
// the Driver and Tx contract below the engine, and RunSeam the module seam (Module,
// Tx.SQL) with a module of its own; capabilities (auth, quality, …) have their own
// suites beside their code. It depends on no capability.
package storetest

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/schema"
	"github.com/meridian-catalog/meridian/store"
)

// Open returns a fresh, empty driver for one test. The test owns it and closes it.
type Open func(t *testing.T) store.Driver

// Run runs every engine behaviour against the driver open returns.
func Run(t *testing.T, open Open) {
	tests := []struct {
		name string
		run  func(t *testing.T, f *Fixture)
	}{
		{"CreateAssignsIDVersionAndQuotedFQN", testCreate},
		{"CreateRejectsBadInput", testCreateRejects},
		{"ListPagesWithCursorsBothWays", testListPaging},
		{"ListFiltersByParentAndIncludesDeleted", testListFilters},
		{"FieldsAreReturnedOnlyWhenRequested", testFields},
		{"PatchBumpsMinorVersionAndDescribesChange", testPatchVersions},
		{"BreakingColumnChangeBumpsMajorVersion", testMajorVersion},
		{"PatchRejectsImmutableAndInvalid", testPatchRejects},
		{"IfMatchMustBeCurrent", testIfMatch},
		{"PutCreatesThenMergesWithOpenMetadataRules", testPutMerge},
		{"SoftDeleteNeedsRecursiveForChildrenAndRestoreBringsThemBack", testDeleteRestore},
		{"HardDeleteRemovesEverything", testHardDelete},
		{"VersionsAreNewestFirstSnapshots", testVersionHistory},
		{"FollowersChangeWithoutNewVersion", testFollowers},
		{"OutboxRecordsOneEventPerWrite", testOutbox},
		{"DispatcherDeliversInOrderAndResumes", testDispatcher},
		{"ABlockedConsumerDelaysNoWriteAndNoOtherConsumer", testSlowConsumer},
		{"ConsumersYieldToABurstOfWritesForAtMostYield", testConsumersYieldToABurst},
		{"EventsReadWithoutTheirEntityAreTheSameEvents", testEventsWithoutEntity},
		{"AChooserGetsEntitiesOnceItWantsThem", testAChooserGetsEntitiesOnceItWantsThem},
		{"AnEventKeepsItsEntityAsWritten", testAnEventKeepsItsEntityAsWritten},
		{"RetentionPrunesOnlyWhatEveryConsumerHandled", testRetention},
		{"SecretsAreSealedAtRestAndMaskedButForGrantedBots", testSecretsAreSealedAndMasked},
		{"MaskedSecretsSentBackKeepTheirValueForEveryVerb", testMaskedSecretsSentBackKeepTheirValue},
		{"LookalikeAndDamagedSecretsNeverBreakReadsOrWrites", testLookalikeAndDamagedSecretsNeverBreakReads},
		{"SecretsCannotBeCopiedOutOrProbedByPatch", testSecretsCannotBeCopiedOutByPatch},
		{"ConcurrentPatchesNeverLoseAnUpdate", testConcurrentPatches},
		{"SearchRanksNameThenDisplayNameThenDescriptionThenColumns", testSearchRanking},
		{"SearchSplitsWordsAndMatchesPrefixes", testSearchWords},
		{"SearchOrdersEqualScoresByFQN", testSearchStableOrder},
		{"SearchWithoutWordsPagesEveryKindInFQNOrder", testSearchWithoutWords},
		{"SearchKindsSelectWhatIsSearched", testSearchKinds},
		{"SearchFiltersByTerms", testSearchFilters},
		{"SearchAggregatesEveryMatchInTheStore", testSearchAggregations},
		{"SearchExcludesDeletedUnlessAsked", testSearchDeleted},
		{"SearchSeesAWriteAsSoonAsItReturns", testSearchAfterWrite},
		{"AHitsSourceIsTheEntityAsWritten", testAHitsSourceIsTheEntityAsWritten},
		{"SearchPagesWithFromAndSize", testSearchPaging},
		{"OnlyPrivilegedCallersChangePrivilegedFields", testPrivilegedFields},
		{"LineageEdgesAddUpdateWalkAndDelete", testLineage},
		{"LineageWalkSurvivesCyclesAndListsNodesOnce", testLineageCycleAndWidth},
		{"LineageNeedsEditOnBothEnds", testLineageNeedsEditOnBothEnds},
		{"SeedingTestDefinitionsTwiceIsANoOp", testSeedTestDefinitions},
		{"TestCasesAreCheckedAgainstTheirDefinition", testTestCaseRules},
		{"SearchIndexIsRebuiltWhenOutOfDate", testReindex},
		{"OwnersAreUpToFiveUsersOrOneGroupTeam", testOwnerRules},
		{"ReviewersAreOneTeamOrUsers", testReviewerRules},
		{"DataProductsNeedADomain", testDataProductsNeedDomain},
		{"DisabledAndMutuallyExclusiveTagsAreRefused", testTagRules},
		{"TeamMembershipIsOneRelationSeenFromBothSides", testTeamMembership},
		{"ReferencesAreIDsNamesOrReferenceObjects", testReferenceForms},
		{"PersonaUsersAreOneRelationWithUsersPersonas", testPersonaUsers},
		{"MembersOfAnOwningTeamAreOwners", testTeamOwnersMembersMayEdit},
		{"OnlyTheSystemChangesSystemTestDefinitions", testSystemTestDefinitions},
		{"ImmutableAndPrivilegedFieldsHoldForEveryVerb", testImmutableAndPrivilegedFieldsHoldForEveryVerb},
		{"ConcurrentEditsLoseNothing", testConcurrentEditsLoseNothing},
		{"RolesAreStoredAsNamesAndAnsweredAsReferences", testRolesAreStoredAsNamesAndAnsweredAsReferences},
		{"BulkWritesEachEntityAsIfSentAlone", testBulkWritesEachEntityAsIfSentAlone},
		{"BulkIsBounded", testBulkIsBounded},
		{"BulkPreparationsLeaveTheWriterACPU", testBulkPreparationsLeaveTheWriterACPU},
		{"BulkWithAnEndedContextWritesNothing", testBulkWithAnEndedContextWritesNothing},
		{"BulkSeesItsOwnEarlierWrites", testBulkSeesItsOwnEarlierWrites},
		{"ACreatesAnswerIsTheCallersOwn", testACreatesAnswerIsTheCallersOwn},
		{"CreatesRacingTheirParentsDeletionLeaveNoOrphan", testCreatesRacingTheirParentsDeletionLeaveNoOrphan},
		{"ConcurrentWritesCommitAlone", testConcurrentWritesCommitAlone},
		{"DocumentLimitsHoldForEveryVerb", testDocumentLimitsHoldForEveryVerb},
		{"PatchStopsWhenTheCallerGivesUp", testPatchStopsWhenTheCallerGivesUp},
		{"SearchBoundsHoldOnTheDriver", testSearchBoundsHoldOnTheDriver},
		{"ConcurrentChangeWithoutIfMatchIs409", testConcurrentChangeWithoutIfMatchIs409},
		{"TableTypeDefaultsToRegular", testTableTypeDefaultsToRegular},
		{"AnFQNWithANULNamesNoEntity", testFQNWithNUL},
		{"CachedReadsAreNeverStale", testCachedReadsAreNeverStale},
		{"CachedReadsMaskSecretsPerCaller", testCachedReadsMaskSecretsPerCaller},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, newFixture(t, open))
		})
	}
}

// Fixture is one engine over a fresh driver, with helpers to build a catalog.
type Fixture struct {
	T      *testing.T
	Ctx    context.Context
	Driver store.Driver
	E      *store.Entities
	Admin  *meridian.Principal
	clock  atomic.Int64 // the fake clock's epoch ms; the engine calls Now concurrently
	open   Open
	valid  store.Validator
}

func newFixture(t *testing.T, open Open) *Fixture {
	d := open(t)
	v, err := schema.New()
	if err != nil {
		t.Fatalf("schema: %v", err)
	}
	f := &Fixture{T: t, Ctx: context.Background(), Driver: d,
		Admin: &meridian.Principal{Name: "admin", Roles: []string{meridian.RoleAdmin}},
		open:  open, valid: v}
	f.clock.Store(1_700_000_000_000)
	f.E = store.New(store.Config{Driver: d, Registry: meridian.DefaultRegistry(), Validator: v,
		Sealer: rot13{}, Now: func() time.Time { return time.UnixMilli(f.clock.Add(1)) }})
	return f
}

// rot13 is a reversible stand-in sealer: the suite checks that the engine seals
// secrets, not how strong the cipher is (auth.Sealer has its own tests).
type rot13 struct{}

func (rot13) Seal(s string) (string, error) { return "enc:rot13:" + rot(s), nil }
func (rot13) Open(s string) (string, error) {
	if !strings.HasPrefix(s, "enc:rot13:") {
		return "", meridian.Errorf(meridian.EInternal, "not sealed")
	}
	return rot(s[len("enc:rot13:"):]), nil
}

func rot(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = 'a' + (c-'a'+13)%26
		case c >= 'A' && c <= 'Z':
			b[i] = 'A' + (c-'A'+13)%26
		}
	}
	return string(b)
}

// Doc parses a JSON object literal.
func (f *Fixture) Doc(s string) meridian.Entity {
	f.T.Helper()
	var e meridian.Entity
	if err := json.Unmarshal([]byte(s), &e); err != nil {
		f.T.Fatalf("bad test JSON %s: %v", s, err)
	}
	return e
}

// Create creates an entity as admin and fails the test on error.
func (f *Fixture) Create(kind, body string) meridian.Entity {
	f.T.Helper()
	res, err := f.E.Create(f.Ctx, f.Admin, kind, f.Doc(body))
	if err != nil {
		f.T.Fatalf("create %s %s: %v", kind, body, err)
	}
	return res.Entity
}

// Patch applies a JSON Patch as admin and fails the test on error.
func (f *Fixture) Patch(kind, id, patch string) meridian.Entity {
	f.T.Helper()
	res, err := f.E.Patch(f.Ctx, f.Admin, kind, store.ByID(id), []byte(patch), "")
	if err != nil {
		f.T.Fatalf("patch %s %s: %v", kind, patch, err)
	}
	return res.Entity
}

// Get reads an entity as admin with fields and include.
func (f *Fixture) Get(kind, id, fields string, include store.Include) meridian.Entity {
	f.T.Helper()
	e, err := f.E.Get(f.Ctx, f.Admin, kind, store.ByID(id), store.GetOptions{Fields: fields, Include: include})
	if err != nil {
		f.T.Fatalf("get %s %s: %v", kind, id, err)
	}
	return e
}

// Hierarchy creates service svc, database svc.db and schema svc.db.sch.
func (f *Fixture) Hierarchy() (svc, db, sch meridian.Entity) {
	svc = f.Create("databaseService", `{"name":"svc","serviceType":"Mysql"}`)
	db = f.Create("database", `{"name":"db","service":"svc"}`)
	sch = f.Create("databaseSchema", `{"name":"sch","database":"svc.db"}`)
	return
}

// Table creates a table under svc.db.sch with the given columns JSON.
func (f *Fixture) Table(name, columns string) meridian.Entity {
	f.T.Helper()
	return f.Create("table", `{"name":"`+name+`","databaseSchema":"svc.db.sch","columns":`+columns+`}`)
}

// WantCode fails the test unless err carries the code.
func WantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := meridian.ErrorCode(err); got != code {
		t.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}

// WantMessage fails the test unless err has the message.
func WantMessage(t *testing.T, err error, msg string) {
	t.Helper()
	if got := meridian.ErrorMessage(err); got != msg {
		t.Fatalf("error message = %q, want %q", got, msg)
	}
}

func num(v any) float64 { f, _ := v.(float64); return f }

func changes(t *testing.T, e meridian.Entity) map[string][]map[string]any {
	t.Helper()
	cd, ok := e["changeDescription"].(map[string]any)
	if !ok {
		t.Fatalf("no changeDescription in %v", e)
	}
	out := map[string][]map[string]any{}
	for _, k := range []string{"fieldsAdded", "fieldsUpdated", "fieldsDeleted"} {
		for _, c := range cd[k].([]any) {
			out[k] = append(out[k], c.(map[string]any))
		}
	}
	out["previousVersion"] = []map[string]any{{"v": cd["previousVersion"]}}
	return out
}
