package scap

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/nightshift-dev/nightshift/internal/readfile"
	"github.com/nightshift-dev/nightshift/rules"
)

// XCCDF12Namespace is the XML namespace of XCCDF 1.2, the rule language of
// SCAP source datastreams.
const XCCDF12Namespace = "http://checklists.nist.gov/xccdf/1.2"

// MaxSize is the largest datastream accepted, in bytes. SSG's
// ssg-debian12-ds.xml is about 10 MB.
const MaxSize = 256 << 20

// Errors of datastream loading; each is wrapped with the file name.
var (
	// ErrInvalid: the input is not a readable SCAP source datastream
	// with an XCCDF 1.2 benchmark.
	ErrInvalid = errors.New("invalid scap datastream")
	// ErrUnknownProfile: no profile has the given id.
	ErrUnknownProfile = errors.New("unknown xccdf profile")
	// ErrUnknownRule: no rule has the given id.
	ErrUnknownRule = errors.New("unknown xccdf rule")
	// ErrTooLarge: the datastream is larger than MaxSize (or than the
	// limit a reader of a file on a host was given).
	ErrTooLarge = errors.New("scap datastream too large")
)

// Datastream is the XCCDF 1.2 benchmark of an SCAP source datastream (or of
// a bare XCCDF 1.2 file): its rules, values and profiles. It is immutable
// and safe for concurrent use.
type Datastream struct {
	name      string
	benchmark string
	rules     []Rule
	ruleIndex map[string]int // full and short id → index
	values    map[string]scapValue
	profiles  []scapProfile
	// scopes are the rules' FileScopes by full id (scope.go).
	scopes map[string]FileScope
}

// Rule is one XCCDF rule as the datastream defines it. Title,
// Description and Rationale are plain text; a value reference in them
// (xccdf:sub) reads as the value's default (see Datastream.Resolve for a
// profile's values).
type Rule struct {
	// ID is the full id (xccdf_org.ssgproject.content_rule_sshd_set_keepalive);
	// ShortID the part after "_rule_" (sshd_set_keepalive).
	ID, ShortID string
	Severity    string
	Title       string
	Description string
	Rationale   string
	// Values are the full ids of the XCCDF values the rule's checks export,
	// in document order.
	Values []string
	// FixSystems are the fix systems the rule ships fixes for
	// ("urn:xccdf:fix:script:sh" for bash).
	FixSystems []string
	// Selected is the rule's default selection (outside any profile).
	Selected bool

	desc, rationale, title richText
	ovalDefs               []string          // the OVAL definitions its checks name
	exports                map[string]string // OVAL external variable -> XCCDF value it is exported from
}

// HasBashFix reports whether the rule ships a shell remediation.
func (r Rule) HasBashFix() bool {
	return slices.Contains(r.FixSystems, "urn:xccdf:fix:script:sh")
}

// Profile is an XCCDF profile with its selections and values resolved
// (including the profiles it extends).
type Profile struct {
	ID, ShortID string
	Title       string
	Description string
	// Rules are the full ids of the selected rules, in document order.
	Rules []string
	// Values maps a value's full id to its value in this profile, for every
	// value of the benchmark (the default where the profile sets none).
	Values map[string]string
}

type scapValue struct {
	id, title string
	def       string
	selectors map[string]string
}

type scapProfile struct {
	id, title, extends string
	desc               richText
	selects            []xccdfSelect
	refines            []xccdfRefine
	sets               []xccdfSet
}

// ShortID returns the part of a full XCCDF id after its kind marker
// ("_rule_", "_profile_", "_value_"): sshd_set_keepalive for
// xccdf_org.ssgproject.content_rule_sshd_set_keepalive. Other ids are
// returned unchanged.
func ShortID(id string) string {
	if !strings.HasPrefix(id, "xccdf_") {
		return id
	}
	for _, kind := range []string{"_rule_", "_profile_", "_value_", "_group_"} {
		if i := strings.Index(id, kind); i >= 0 {
			return id[i+len(kind):]
		}
	}
	return id
}

// Load reads an SCAP source datastream (or an XCCDF 1.2 file) from
// path. Errors match ErrInvalid, or ErrTooLarge beyond MaxSize,
// and name the file.
func Load(path string) (*Datastream, error) {
	f, err := readfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("scap: load datastream: %w", err)
	}
	defer f.Close()
	return Parse(f, path)
}

// Parse reads a datastream from r; name is used in errors.
func Parse(r io.Reader, name string) (*Datastream, error) {
	lr := &io.LimitedReader{R: r, N: MaxSize + 1}
	d := &Datastream{name: name, ruleIndex: map[string]int{}, values: map[string]scapValue{}}
	dec := xml.NewDecoder(lr)
	dec.Strict = true
	benchmarks := 0
	oval := map[string]ovalNode{}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			if lr.N <= 0 {
				return nil, fmt.Errorf("scap: datastream %s: larger than %d bytes: %w", name, MaxSize, ErrTooLarge)
			}
			return nil, fmt.Errorf("scap: datastream %s: %w: %v", name, ErrInvalid, err)
		}
		se, ok := tok.(xml.StartElement)
		if ok && isOVAL(se) {
			var n ovalNode
			if err := dec.DecodeElement(&n, &se); err != nil {
				return nil, fmt.Errorf("scap: datastream %s: %w: oval %s: %v", name, ErrInvalid, attrOf(se, "id"), err)
			}
			oval[n.attr("id")] = n
			continue
		}
		if !ok || se.Name.Space != XCCDF12Namespace {
			continue
		}
		switch se.Name.Local {
		case "Benchmark":
			benchmarks++
			if benchmarks > 1 {
				return nil, fmt.Errorf("scap: datastream %s: %w: more than one xccdf benchmark", name, ErrInvalid)
			}
			d.benchmark = attr(se, "id")
		case "Rule":
			var x xccdfRule
			if err := dec.DecodeElement(&x, &se); err != nil {
				return nil, fmt.Errorf("scap: datastream %s: %w: rule: %v", name, ErrInvalid, err)
			}
			if err := d.addRule(x); err != nil {
				return nil, err
			}
		case "Value":
			var x xccdfValue
			if err := dec.DecodeElement(&x, &se); err != nil {
				return nil, fmt.Errorf("scap: datastream %s: %w: value: %v", name, ErrInvalid, err)
			}
			d.addValue(x)
		case "Profile":
			var x xccdfProfile
			if err := dec.DecodeElement(&x, &se); err != nil {
				return nil, fmt.Errorf("scap: datastream %s: %w: profile: %v", name, ErrInvalid, err)
			}
			if x.ID == "" {
				return nil, fmt.Errorf("scap: datastream %s: %w: profile without id", name, ErrInvalid)
			}
			d.profiles = append(d.profiles, scapProfile{id: x.ID, title: x.Title.plain(nil), extends: x.Extends,
				desc: x.Description, selects: x.Selects, refines: x.Refines, sets: x.Sets})
		}
	}
	if benchmarks == 0 {
		return nil, fmt.Errorf("scap: datastream %s: %w: no xccdf 1.2 benchmark", name, ErrInvalid)
	}
	if len(d.rules) == 0 {
		return nil, fmt.Errorf("scap: datastream %s: %w", name, rules.ErrNoRules)
	}
	defs := map[string][]string{}
	for _, r := range d.rules {
		if len(r.ovalDefs) > 0 {
			defs[r.ID] = r.ovalDefs
		}
	}
	d.scopes = deriveScopes(defs, oval)
	for _, r := range d.rules {
		fs, ok := d.scopes[r.ID]
		if !ok {
			continue
		}
		for _, c := range deriveValueChecks(r.ovalDefs, oval, func(v string) []string { return d.valueCandidates(r.exports[v]) }) {
			fs.Keys = append(fs.Keys, c.Key())
		}
		slices.Sort(fs.Keys)
		fs.Keys = slices.Compact(fs.Keys)
		d.scopes[r.ID] = fs
	}
	return d, nil
}

func (d *Datastream) addRule(x xccdfRule) error {
	if x.ID == "" {
		return fmt.Errorf("scap: datastream %s: %w: rule without id", d.name, ErrInvalid)
	}
	if _, dup := d.ruleIndex[x.ID]; dup {
		return fmt.Errorf("scap: datastream %s: rule %s: %w", d.name, x.ID, rules.ErrDuplicateID)
	}
	r := Rule{ID: x.ID, ShortID: ShortID(x.ID), Severity: x.Severity, Selected: x.Selected != "false" && x.Selected != "0",
		title: x.Title, desc: x.Description, rationale: x.Rationale}
	for _, c := range x.Checks {
		for _, ref := range c.Refs {
			if c.System == OVALNamespace && ref.Name != "" {
				r.ovalDefs = append(r.ovalDefs, ref.Name)
			}
		}
		for _, e := range c.Exports {
			if e.ValueID != "" && !slices.Contains(r.Values, e.ValueID) {
				r.Values = append(r.Values, e.ValueID)
			}
			if e.ValueID != "" && e.Name != "" {
				if r.exports == nil {
					r.exports = map[string]string{}
				}
				r.exports[e.Name] = e.ValueID
			}
		}
	}
	for _, f := range x.Fixes {
		if f.System != "" && !slices.Contains(r.FixSystems, f.System) {
			r.FixSystems = append(r.FixSystems, f.System)
		}
	}
	d.ruleIndex[x.ID] = len(d.rules)
	if _, taken := d.ruleIndex[r.ShortID]; !taken {
		d.ruleIndex[r.ShortID] = len(d.rules)
	}
	d.rules = append(d.rules, r)
	return nil
}

func (d *Datastream) addValue(x xccdfValue) {
	v := scapValue{id: x.ID, title: x.Title.plain(nil), selectors: map[string]string{}}
	for _, val := range x.Values {
		if val.Selector == "" {
			v.def = val.Text
		} else {
			v.selectors[val.Selector] = val.Text
		}
	}
	d.values[x.ID] = v
}

// Benchmark returns the XCCDF benchmark's id.
func (d *Datastream) Benchmark() string { return d.benchmark }

// Len returns the number of rules.
func (d *Datastream) Len() int { return len(d.rules) }

// RuleIDs returns the full ids of all rules in document order.
func (d *Datastream) RuleIDs() []string {
	ids := make([]string, len(d.rules))
	for i, r := range d.rules {
		ids[i] = r.ID
	}
	return ids
}

// Rule returns the rule with the given full or short id, its text read with
// the values' defaults.
func (d *Datastream) Rule(id string) (Rule, error) {
	return d.rule(id, nil)
}

func (d *Datastream) rule(id string, values map[string]string) (Rule, error) {
	i, ok := d.ruleIndex[id]
	if !ok {
		return Rule{}, fmt.Errorf("scap: datastream %s: %w %q", d.name, ErrUnknownRule, id)
	}
	r := d.rules[i]
	if values == nil {
		values = d.defaults()
	}
	r.Title = r.title.plain(values)
	r.Description = r.desc.plain(values)
	r.Rationale = r.rationale.plain(values)
	r.Values = slices.Clone(r.Values)
	r.FixSystems = slices.Clone(r.FixSystems)
	return r, nil
}

func (d *Datastream) defaults() map[string]string {
	m := make(map[string]string, len(d.values))
	for id, v := range d.values {
		m[id] = v.def
	}
	return m
}

// ProfileIDs returns the full ids of the profiles in document order.
func (d *Datastream) ProfileIDs() []string {
	ids := make([]string, len(d.profiles))
	for i, p := range d.profiles {
		ids[i] = p.id
	}
	return ids
}

// Profile returns the profile with the given full or short id ("standard"),
// its selections and values resolved through the profiles it extends. A
// refine-value naming an unknown selector keeps the default, as OpenSCAP does.
func (d *Datastream) Profile(id string) (Profile, error) {
	chain, err := d.profileChain(id)
	if err != nil {
		return Profile{}, err
	}
	p := chain[len(chain)-1]
	out := Profile{ID: p.id, ShortID: ShortID(p.id), Title: p.title, Values: d.defaults()}
	selected := map[string]bool{}
	for _, r := range d.rules {
		selected[r.ID] = r.Selected
	}
	for _, q := range chain { // base first, so the extending profile wins
		for _, s := range q.selects {
			selected[s.IDRef] = s.Selected == "true" || s.Selected == "1"
		}
		for _, rv := range q.refines {
			if v, ok := d.values[rv.IDRef]; ok {
				if val, ok := v.selectors[rv.Selector]; ok {
					out.Values[rv.IDRef] = val
				}
			}
		}
		for _, sv := range q.sets {
			out.Values[sv.IDRef] = sv.Text
		}
	}
	out.Description = p.desc.plain(out.Values)
	for _, r := range d.rules {
		if selected[r.ID] {
			out.Rules = append(out.Rules, r.ID)
		}
	}
	return out, nil
}

// profileChain returns the profile and the profiles it extends, base first.
func (d *Datastream) profileChain(id string) ([]scapProfile, error) {
	if id == "" {
		return nil, fmt.Errorf("scap: datastream %s: %w: no profile given", d.name, ErrUnknownProfile)
	}
	var chain []scapProfile
	for cur := id; cur != ""; {
		p, ok := d.findProfile(cur)
		if !ok {
			if len(chain) == 0 {
				return nil, fmt.Errorf("scap: datastream %s: %w %q", d.name, ErrUnknownProfile, id)
			}
			return nil, fmt.Errorf("scap: datastream %s: profile %s extends %w %q", d.name, chain[0].id, ErrUnknownProfile, cur)
		}
		if slices.ContainsFunc(chain, func(q scapProfile) bool { return q.id == p.id }) || len(chain) > 32 {
			return nil, fmt.Errorf("scap: datastream %s: %w: profile %s extends itself", d.name, ErrInvalid, p.id)
		}
		chain = append(chain, p)
		cur = p.extends
	}
	slices.Reverse(chain)
	return chain, nil
}

func (d *Datastream) findProfile(id string) (scapProfile, bool) {
	for _, p := range d.profiles {
		if p.id == id {
			return p, true
		}
	}
	for _, p := range d.profiles {
		if ShortID(p.id) == id {
			return p, true
		}
	}
	return scapProfile{}, false
}

func attr(se xml.StartElement, local string) string {
	for _, a := range se.Attr {
		if a.Name.Local == local && a.Name.Space == "" {
			return a.Value
		}
	}
	return ""
}

// The XML shapes decoded with encoding/xml; field tags without a namespace
// match the xccdf elements whatever their prefix.
type xccdfRule struct {
	ID          string   `xml:"id,attr"`
	Selected    string   `xml:"selected,attr"`
	Severity    string   `xml:"severity,attr"`
	Title       richText `xml:"title"`
	Description richText `xml:"description"`
	Rationale   richText `xml:"rationale"`
	Checks      []struct {
		System  string `xml:"system,attr"`
		Exports []struct {
			ValueID string `xml:"value-id,attr"`
			Name    string `xml:"export-name,attr"`
		} `xml:"check-export"`
		Refs []struct {
			Name string `xml:"name,attr"`
		} `xml:"check-content-ref"`
	} `xml:"check"`
	Fixes []struct {
		System string `xml:"system,attr"`
	} `xml:"fix"`
}

type xccdfValue struct {
	ID     string   `xml:"id,attr"`
	Title  richText `xml:"title"`
	Values []struct {
		Selector string `xml:"selector,attr"`
		Text     string `xml:",chardata"`
	} `xml:"value"`
}

type xccdfProfile struct {
	ID          string        `xml:"id,attr"`
	Extends     string        `xml:"extends,attr"`
	Title       richText      `xml:"title"`
	Description richText      `xml:"description"`
	Selects     []xccdfSelect `xml:"select"`
	Refines     []xccdfRefine `xml:"refine-value"`
	Sets        []xccdfSet    `xml:"set-value"`
}

type xccdfSelect struct {
	IDRef    string `xml:"idref,attr"`
	Selected string `xml:"selected,attr"`
}

type xccdfRefine struct {
	IDRef    string `xml:"idref,attr"`
	Selector string `xml:"selector,attr"`
}

type xccdfSet struct {
	IDRef string `xml:"idref,attr"`
	Text  string `xml:",chardata"`
}
