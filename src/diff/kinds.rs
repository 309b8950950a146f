//! The change kinds `toolgate diff` reports: each has an id (`TGD001`, like a lint code), a
//! name, a class (what `--fail-on` selects) and a level for each of the three callers a change
//! reaches — models holding a cached tool list, harness code compiled against the generated
//! crate (as a semver bump), and sessions recorded in a journal that are replayed.

use std::fmt;

use serde::Serialize;

/// What a change means for `--fail-on`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// Callers keep working and nothing new is let through.
    Compatible,
    /// The new contracts let through something the old ones stopped.
    Widening,
    /// Some caller stops working.
    Breaking,
}

/// What a change does to models or to recorded sessions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Impact {
    /// Nothing they do changes.
    None,
    /// They keep working, but what they see or get differs.
    Changed,
    /// Calls they make (or made) are refused or behave differently.
    Breaking,
}

/// The semver bump a change needs in the generated crate (and the contracts' `version`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bump {
    /// No bump.
    None,
    /// A patch release.
    Patch,
    /// A minor release.
    Minor,
    /// A major release.
    Major,
}

impl Class {
    /// The spelling in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Compatible => "compatible",
            Class::Widening => "widening",
            Class::Breaking => "breaking",
        }
    }
}

impl Impact {
    /// The spelling in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Impact::None => "none",
            Impact::Changed => "changed",
            Impact::Breaking => "breaking",
        }
    }
}

impl Bump {
    /// The spelling in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Bump::None => "none",
            Bump::Patch => "patch",
            Bump::Minor => "minor",
            Bump::Major => "major",
        }
    }
}

impl fmt::Display for Bump {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a change kind is and whom it reaches.
#[derive(Clone, Copy, Debug)]
pub struct KindMeta {
    /// `TGD001`.
    pub id: &'static str,
    /// `tool-removed`.
    pub name: &'static str,
    /// What `--fail-on` selects it by.
    pub class: Class,
    /// Models holding a cached tool list.
    pub models: Impact,
    /// Harness code compiled against the generated crate.
    pub harness: Bump,
    /// Sessions recorded in a journal, replayed.
    pub sessions: Impact,
    /// One line: what it reports.
    pub purpose: &'static str,
    /// Why it matters to each caller, and what to do.
    pub explanation: &'static str,
}

macro_rules! kinds {
    ($( $variant:ident = $id:literal $name:literal $class:ident
        models $m:ident harness $h:ident sessions $s:ident
        purpose $purpose:literal explain $explain:literal ; )+) => {
        /// A kind of contract change.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        #[serde(into = "&'static str")]
        pub enum ChangeKind { $( #[doc = $purpose] $variant ),+ }

        impl ChangeKind {
            /// Every kind, in id order.
            pub const ALL: &'static [ChangeKind] = &[$(ChangeKind::$variant),+];

            /// What the kind is and whom it reaches.
            pub fn meta(self) -> KindMeta {
                match self { $(ChangeKind::$variant => KindMeta {
                    id: $id, name: $name, class: Class::$class, models: Impact::$m,
                    harness: Bump::$h, sessions: Impact::$s, purpose: $purpose,
                    explanation: $explain,
                }),+ }
            }
        }
    };
}

impl From<ChangeKind> for &'static str {
    fn from(k: ChangeKind) -> &'static str {
        k.meta().id
    }
}

impl ChangeKind {
    /// Finds a kind by id (`TGD001`, any case) or name (`tool-removed`).
    pub fn find(key: &str) -> Option<ChangeKind> {
        ChangeKind::ALL.iter().copied().find(|k| {
            let m = k.meta();
            m.id.eq_ignore_ascii_case(key) || m.name == key
        })
    }

    /// The id.
    pub fn id(self) -> &'static str {
        self.meta().id
    }
}

kinds! {
    ToolRemoved = "TGD001" "tool-removed" Breaking
        models Breaking harness Major sessions Breaking
        purpose "A tool is gone and no tool keeps its name as an alias."
        explain "Models with a cached tool list still call it and get UNKNOWN_TOOL; the generated crate loses its type and constant; recorded sessions cannot be replayed. Keep the tool under `deprecated:` for a release, or give its successor `aliases: [old_name]`.";
    ToolRenamedWithAlias = "TGD002" "tool-renamed" Compatible
        models None harness Major sessions None
        purpose "A tool has a new name and keeps the old one as an alias."
        explain "Calls by the old name still reach the tool (the runtime maps the alias and the trace records it), so models and recorded sessions keep working; the generated crate's names change, which is a major release for harness code.";
    ToolRenamed = "TGD003" "tool-renamed-without-alias" Breaking
        models Breaking harness Major sessions Breaking
        purpose "A tool was removed and one with the same parameters added under another name, without an alias."
        explain "It looks like a rename, but nothing maps the old name: every caller that uses it fails. Add `aliases: [old_name]` to the new tool.";
    ToolAdded = "TGD004" "tool-added" Compatible
        models Changed harness Minor sessions None
        purpose "A tool is new."
        explain "Models see one more tool (a cached list does not); harness code gets new items (a minor release). A toolset that now serves it is reported as a widening on its own.";
    ToolDeprecated = "TGD005" "tool-deprecated" Compatible
        models Changed harness Patch sessions None
        purpose "A tool was marked `deprecated`."
        explain "The description models read now says what to use instead; nothing stops working.";
    EffectRaised = "TGD006" "effect-raised" Breaking
        models Changed harness Patch sessions Breaking
        purpose "A tool's effect moved up the lattice (e.g. read_only → local_write)."
        explain "Calls that ran unattended may now need an approval, and a replay of a recorded session meets prompts it never had. Declare the truth, and bump the tool's `version`.";
    EffectLowered = "TGD007" "effect-lowered" Widening
        models None harness Patch sessions Changed
        purpose "A tool's effect moved down the lattice (e.g. destructive → local_write)."
        explain "The effect decides default permissions, approvals and scheduling: a lower effect lets calls run that were asked about or serialized before. Check it is the truth.";
    IdempotencyWeakened = "TGD008" "idempotency-weakened" Breaking
        models None harness Patch sessions Breaking
        purpose "Repeating a call is now less safe (e.g. idempotent → non_idempotent)."
        explain "Retries and replays that were automatic now stop or need evidence: a recorded session replayed against the new contract behaves differently.";
    IdempotencyStrengthened = "TGD009" "idempotency-strengthened" Widening
        models None harness Patch sessions Changed
        purpose "Repeating a call is now declared safer (e.g. non_idempotent → idempotent)."
        explain "The runtime will now retry and replay calls it refused to repeat before: make sure a second run really has no further effect.";
    RequiredParameterAdded = "TGD010" "required-parameter-added" Breaking
        models Breaking harness Major sessions Breaking
        purpose "A new parameter is required."
        explain "Every call written for the old contract misses it and is refused. Make it optional with a `default`, or bump the version.";
    OptionalParameterAdded = "TGD011" "optional-parameter-added" Compatible
        models Changed harness Minor sessions None
        purpose "A new optional parameter."
        explain "Old calls stay valid; the generated argument struct gains a field (a minor release when it is an Option).";
    ParameterRemoved = "TGD012" "parameter-removed" Breaking
        models Breaking harness Major sessions Breaking
        purpose "A parameter is gone."
        explain "Calls that pass it are refused when the object is closed (and silently lose it when open); harness code that sets it no longer compiles.";
    ParameterRetyped = "TGD013" "parameter-retyped" Breaking
        models Breaking harness Major sessions Breaking
        purpose "A parameter's type changed."
        explain "Calls that pass the old type are refused; the generated field's type changes.";
    ParameterMadeRequired = "TGD014" "parameter-made-required" Breaking
        models Breaking harness Major sessions Breaking
        purpose "An optional parameter became required."
        explain "Calls that left it out are refused; the generated field is no longer an Option.";
    ParameterMadeOptional = "TGD015" "parameter-made-optional" Compatible
        models None harness Major sessions None
        purpose "A required parameter became optional."
        explain "Every old call stays valid, but the generated field becomes an Option: harness code that set it directly no longer compiles.";
    EnumNarrowed = "TGD016" "enum-narrowed" Breaking
        models Breaking harness Major sessions Breaking
        purpose "An enum lost values."
        explain "Calls that use a removed value are refused; the generated enum loses variants.";
    EnumWidened = "TGD017" "enum-widened" Widening
        models Changed harness Major sessions None
        purpose "An enum gained values."
        explain "Calls may now pass values the tool did not accept before (a validation relaxed); the generated enum gains variants, which breaks exhaustive matches.";
    BoundsTightened = "TGD018" "bounds-tightened" Breaking
        models Breaking harness Patch sessions Breaking
        purpose "A bound got stricter (minimum, maximum, lengths, items, pattern, format)."
        explain "Calls that were valid may now be refused.";
    BoundsLoosened = "TGD019" "bounds-loosened" Widening
        models Changed harness Patch sessions None
        purpose "A bound got looser or went away."
        explain "The tool now accepts arguments the old contract refused (a validation relaxed): check the tool handles them and that no permission relied on the bound.";
    DefaultChanged = "TGD020" "default-changed" Breaking
        models Changed harness Patch sessions Breaking
        purpose "A parameter's default changed."
        explain "Calls that leave the parameter out now do something else: a replayed session gets different results while every call still validates.";
    ObjectClosed = "TGD021" "object-closed" Breaking
        models Breaking harness Major sessions Breaking
        purpose "An object no longer accepts unknown properties (additionalProperties: false)."
        explain "Calls with extra keys, accepted before, are refused.";
    ObjectOpened = "TGD022" "object-opened" Widening
        models Changed harness Patch sessions None
        purpose "An object now accepts unknown properties."
        explain "Arguments the old contract refused now reach the tool (a validation relaxed).";
    ResultFieldRemoved = "TGD023" "result-field-removed" Breaking
        models Changed harness Major sessions Breaking
        purpose "A field of the structured result is gone."
        explain "Harness code reading it no longer compiles; recorded results no longer match the result schema.";
    ResultFieldRetyped = "TGD024" "result-field-retyped" Breaking
        models Changed harness Major sessions Breaking
        purpose "A field of the structured result changed type."
        explain "Harness code reading it no longer compiles; recorded results no longer match.";
    ResultFieldMadeOptional = "TGD025" "result-field-made-optional" Breaking
        models None harness Major sessions None
        purpose "A result field is no longer always present."
        explain "The generated field becomes an Option: harness code that read it directly no longer compiles.";
    ResultFieldAdded = "TGD026" "result-field-added" Compatible
        models Changed harness Minor sessions Changed
        purpose "The structured result has a new field."
        explain "Models and harnesses see more; recorded results lack it.";
    TimeoutShortened = "TGD027" "timeout-shortened" Breaking
        models None harness Patch sessions Breaking
        purpose "A tool's timeout is shorter."
        explain "Calls that finished before may now time out.";
    TimeoutLengthened = "TGD028" "timeout-lengthened" Compatible
        models None harness Patch sessions Changed
        purpose "A tool's timeout is longer."
        explain "Calls may hold a slot longer; nothing that worked stops working.";
    RetryChanged = "TGD029" "retry-changed" Compatible
        models None harness Patch sessions Changed
        purpose "A tool's retry policy changed (attempts, retried error types, backoff, budget)."
        explain "A replayed session may see more or fewer attempts, and so different results for transient failures.";
    OutputLimitLowered = "TGD030" "output-limit-lowered" Compatible
        models Changed harness Patch sessions Changed
        purpose "Models read less of the output (max_bytes, max_lines or the artifact threshold went down)."
        explain "What models read is cut earlier (nothing is lost: the rest is kept as an artifact).";
    OutputLimitRaised = "TGD031" "output-limit-raised" Compatible
        models Changed harness Patch sessions Changed
        purpose "Models read more of the output."
        explain "Each call costs more of the context window.";
    SandboxProfileChanged = "TGD032" "sandbox-profile-changed" Breaking
        models None harness Patch sessions Breaking
        purpose "A tool runs under another sandbox profile (or none)."
        explain "What the tool can read, write and reach changes: a replayed session may fail where it worked, or reach what it could not. A profile that restricts less is reported as a widening too.";
    SandboxRestrictionRemoved = "TGD033" "sandbox-restriction-removed" Widening
        models None harness None sessions Changed
        purpose "A sandbox profile restricts less (more roots readable or writable, network on, a limit raised or gone)."
        explain "Every tool under the profile can now do what it could not: review it like a permission change.";
    PermissionWidened = "TGD034" "permission-widened" Widening
        models None harness None sessions Changed
        purpose "A call the old contract denied or asked about is now asked about or allowed (shown with a witness call)."
        explain "Found by evaluating the old and the new permission rules on the same calls: both versions' permission examples, arguments generated from the schemas and from the literals and globs the rules mention, and (with --replay) every call a journal recorded. The witness is one call whose decision went down. When no witness is found nothing is proven: the search is not exhaustive.";
    PermissionNarrowed = "TGD035" "permission-narrowed" Breaking
        models Changed harness None sessions Breaking
        purpose "A call the old contract allowed is now asked about or denied (shown with a witness call)."
        explain "Sessions that ran unattended meet approvals or refusals.";
    ValidationRelaxed = "TGD036" "validation-relaxed" Widening
        models Changed harness None sessions None
        purpose "A call the old schema or `validate:` rules refused now validates (shown with a witness call)."
        explain "Arguments the tool never saw before now reach it.";
    ProtectRemoved = "TGD037" "protect-removed" Widening
        models None harness None sessions Changed
        purpose "A protected path of toolgate.yaml is no longer protected (an entry removed or an exception added)."
        explain "Tools may now read or write files the project kept from them; protection is decided before every permission rule.";
    ProtectAdded = "TGD038" "protect-added" Breaking
        models Changed harness None sessions Breaking
        purpose "More paths are protected."
        explain "Calls on those paths are now refused, whatever the rules say.";
    ToolsetGainedTool = "TGD039" "toolset-gained-tool" Widening
        models Changed harness Minor sessions None
        purpose "A toolset serves a tool it did not."
        explain "Every agent served that toolset can now call the tool.";
    ToolsetLostTool = "TGD040" "toolset-lost-tool" Breaking
        models Breaking harness Minor sessions Breaking
        purpose "A toolset no longer serves a tool."
        explain "Agents served that toolset can no longer call it.";
    ContextAskLoosened = "TGD041" "context-ask-loosened" Widening
        models None harness None sessions Changed
        purpose "A context's no-answer rule got looser (`ask: deny` → `prompt`, a longer approval timeout)."
        explain "Calls that were refused in that context can now run after an approval.";
    ContextAskTightened = "TGD042" "context-ask-tightened" Breaking
        models None harness None sessions Breaking
        purpose "A context's no-answer rule got stricter, or a context is gone."
        explain "Calls that could be approved are now refused in that context.";
    DescriptionChanged = "TGD043" "description-changed" Compatible
        models Changed harness Patch sessions None
        purpose "What models read about a tool or a parameter changed."
        explain "Models choose tools and fill arguments from descriptions: a changed description changes behaviour without a schema change.";
    ExecChanged = "TGD044" "exec-changed" Compatible
        models None harness Patch sessions Changed
        purpose "How a tool runs changed (builtin, command, handler)."
        explain "The same call may now do something else: a replayed session may get different results.";
    VersionBumpMissing = "TGD045" "version-bump-missing" Breaking
        models None harness Major sessions None
        purpose "A change needs a version bump that the contracts do not have."
        explain "A breaking change to a tool needs its `version` raised; the contracts' `version` in toolgate.yaml (the generated crate's) needs the semver bump the changes call for. `toolgate diff` says which bump.";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_sequential_and_findable() {
        for (i, k) in ChangeKind::ALL.iter().enumerate() {
            assert_eq!(k.id(), format!("TGD{:03}", i + 1));
            assert_eq!(ChangeKind::find(k.meta().name), Some(*k));
            assert_eq!(ChangeKind::find(&k.id().to_lowercase()), Some(*k));
        }
    }
}
