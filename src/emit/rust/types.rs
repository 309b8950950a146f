//! JSON Schema → Rust types: the argument and result structs of each tool and every named type
//! they need (nested objects, string enums, `$defs`).
//!
//! Mapping: `string`/`integer`/`number`/`boolean`/`null` → `String`/`i64`/`f64`/`bool`/`()`;
//! a string `enum` → an enum; an object with properties (or closed) → a struct named
//! `<Parent><Field>`, `#[serde(deny_unknown_fields)]` when `additionalProperties: false`; an object
//! with a typed `additionalProperties` → `BTreeMap<String, T>`; other objects → a JSON map; an
//! array → `Vec<T>`; `[T, "null"]` or `anyOf` with a null branch → `Option<T>`; a local `$ref`
//! → the definition's type (boxed where it recurses); anything else → `serde_json::Value` with
//! a doc note. Optional fields are `Option<T>` with `#[serde(default, skip_serializing_if)]`.
//!
//! Every keyword the Rust type does not capture (bounds, patterns, formats, defaults…) is carried
//! into the derived schema with `#[schemars(extend(…))]`, so the `schemars` schema of a
//! generated type accepts exactly what the contract's schema accepts.

use std::collections::{BTreeMap, HashMap};

use proc_macro2::TokenStream;
use quote::quote;
use serde_json::{Map, Value};

use crate::emit::EmitError;
use crate::emit::rewrite;
use crate::emit::rust::ident::{self, Case, Namespace};
pub use crate::emit::rust::tokens::{RustType, doc_attrs, json_tokens};

/// Where an item goes in the generated file (items are emitted in this order, then by name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Section {
    /// Argument/result structs and the types they use.
    Types,
    /// Handler traits and their adapters.
    Handlers,
    /// The builder.
    Builder,
}

/// A schema mapped to a Rust type.
struct Mapped {
    ty: RustType,
    /// Whether `ty` is already an `Option` that accepts `null`.
    nullable: bool,
    /// Keywords the type does not capture, for `#[schemars(extend)]`.
    residual: Map<String, Value>,
    /// A doc note for approximations.
    note: Option<String>,
}

/// Keywords that never reach `extend`: documentation, identifiers and private keywords.
fn is_documentation(key: &str) -> bool {
    matches!(
        key,
        "description"
            | "title"
            | "$comment"
            | "$schema"
            | "$id"
            | "$defs"
            | "definitions"
            | "examples"
    ) || key.starts_with("x-")
}

/// The schema of one tool being mapped.
pub struct ToolCx<'a> {
    /// The tool's Pascal name (`ReadFile`).
    pub pascal: String,
    /// Names the schema `$ref`s are resolved in (`read_file/args`), so equal pointers of two
    /// schemas never share a type.
    pub scope: String,
    /// The root schema `$ref`s resolve against.
    pub root: &'a Value,
}

/// Every generated item, keyed by section and name, and the names taken.
pub struct TypeSpace {
    /// The items.
    pub items: BTreeMap<(Section, String), TokenStream>,
    /// Type names taken in the crate.
    pub names: Namespace,
    defs: HashMap<(String, String), String>,
    in_progress: Vec<(String, String)>,
    /// Subschemas being mapped, one inside the other (what [`MAX_TYPE_DEPTH`] bounds).
    depth: usize,
}

/// Deepest nesting of subschemas the emitter maps, `$ref`s followed. A schema as the loader
/// reads it (64 YAML levels) stays far within it; a chain of definitions each naming the next
/// does not, and mapping recurses once per level: past this, `build` stops with
/// [`EmitError::TooDeep`] instead of overflowing its thread's stack.
pub const MAX_TYPE_DEPTH: usize = 64;

impl TypeSpace {
    /// An empty space with the given names reserved.
    pub fn new(reserved: &[String]) -> Self {
        let mut names = Namespace::new(Case::Pascal);
        for r in reserved {
            names.reserve(r);
        }
        TypeSpace {
            items: BTreeMap::new(),
            names,
            defs: HashMap::new(),
            in_progress: Vec::new(),
            depth: 0,
        }
    }

    /// Emits the struct for an object schema under a fixed name (`<Tool>Args`); returns its type.
    pub fn root_struct(
        &mut self,
        cx: &ToolCx<'_>,
        name: &str,
        base: &str,
        schema: &Value,
    ) -> Result<RustType, EmitError> {
        let obj = schema.as_object().cloned().unwrap_or_default();
        self.struct_item(cx, name, base, &obj)?;
        Ok(RustType::Named(name.to_owned()))
    }

    /// Maps a result schema: a struct when it is an object with properties, else an alias.
    pub fn root_alias(
        &mut self,
        cx: &ToolCx<'_>,
        name: &str,
        schema: Option<&Value>,
    ) -> Result<(), EmitError> {
        let Some(schema) = schema else {
            let n = ident::ident(name);
            self.items.insert(
                (Section::Types, name.to_owned()),
                quote! {
                    #[doc = " The tool declares no `result` schema: any JSON value."]
                    pub type #n = ::serde_json::Value;
                },
            );
            return Ok(());
        };
        if schema.as_object().is_some_and(is_struct_like) {
            // Its types are named like the arguments' (`<Tool><Field>`), with `Result` only to
            // tell apart two of one name.
            let base = cx.pascal.clone();
            self.root_struct(cx, name, &base, schema)?;
            return Ok(());
        }
        let m = self.map(cx, schema, name)?;
        let n = ident::ident(name);
        let ty = m.ty.tokens();
        let tool = cx
            .scope
            .split_once('/')
            .map_or(cx.scope.as_str(), |(t, _)| t);
        let text =
            description(schema).unwrap_or_else(|| format!("The result of the `{tool}` tool."));
        let doc = doc_attrs(Some(&text), m.note.as_deref());
        self.items.insert(
            (Section::Types, name.to_owned()),
            quote! { #doc pub type #n = #ty; },
        );
        Ok(())
    }

    /// The name of a named type: its schema's `title` when it has a free one, else the first
    /// free of the hint's alternatives (`a|b`), else the first numbered.
    fn claim(&mut self, obj: &Map<String, Value>, hint: &str) -> String {
        let title = obj
            .get("title")
            .and_then(Value::as_str)
            .map(ident::pascal)
            .filter(|t| t != "Value");
        let alternatives: Vec<&str> = hint.split('|').collect();
        for candidate in title
            .as_deref()
            .into_iter()
            .chain(alternatives.iter().copied())
        {
            if !self.names.is_taken(candidate) {
                return self.names.claim(candidate);
            }
        }
        self.names
            .claim(alternatives.first().copied().unwrap_or("Value"))
    }

    fn struct_item(
        &mut self,
        cx: &ToolCx<'_>,
        name: &str,
        base: &str,
        obj: &Map<String, Value>,
    ) -> Result<(), EmitError> {
        let props = obj
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let required: Vec<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let closed = obj.get("additionalProperties") == Some(&Value::Bool(false));
        let mut field_names = Namespace::new(Case::Snake);
        let mut fields = Vec::new();
        let mut override_required = false;
        for (key, sub) in &props {
            let fname = field_names.claim(&ident::snake(key));
            // The short path first (`<Tool><Field>`), then the full one (`<Tool>Result<Field>`)
            // when the short one is taken.
            let field = ident::pascal(key);
            let hint = if name == base {
                format!("{base}{field}")
            } else {
                format!("{base}{field}|{name}{field}")
            };
            let m = self.map(cx, sub, &hint)?;
            let is_required = required.contains(&key.as_str());
            let mut attrs = Vec::new();
            if fname != *key {
                attrs.push(quote!(#[serde(rename = #key)]));
            }
            let ty = if is_required {
                override_required |= m.nullable;
                m.ty.clone()
            } else if m.nullable {
                attrs.push(quote!(#[serde(default, skip_serializing_if = "::std::option::Option::is_none")]));
                m.ty.clone()
            } else {
                let with = m.ty.text();
                attrs.push(quote!(#[serde(default, skip_serializing_if = "::std::option::Option::is_none")]));
                attrs.push(quote!(#[schemars(with = #with)]));
                RustType::Option(Box::new(m.ty.clone()))
            };
            if let Some(ext) = extend_attr(&m.residual, cx.root) {
                attrs.push(ext);
            }
            let mut note = m.note.clone();
            if let Some(d) = sub.get("default") {
                let text = format!("Default: `{}`.", compact(d));
                note = Some(match note {
                    Some(n) => format!("{n}\n\n{text}"),
                    None => text,
                });
            }
            // Every public item is documented: the property's description, else its name.
            let text = description(sub).unwrap_or_else(|| format!("The `{key}` property."));
            let doc = doc_attrs(Some(&text), note.as_deref());
            let fi = ident::ident(&fname);
            let ty = ty.tokens();
            fields.push(quote! { #doc #(#attrs)* pub #fi: #ty, });
        }
        let mut container = Vec::new();
        if closed {
            container.push(quote!(#[serde(deny_unknown_fields)]));
        }
        let mut residual: Map<String, Value> = obj
            .iter()
            .filter(|(k, _)| {
                !is_documentation(k) && !matches!(k.as_str(), "type" | "properties" | "required")
            })
            .filter(|(k, v)| !(k.as_str() == "additionalProperties" && **v == Value::Bool(false)))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if obj.get("type").and_then(Value::as_str) != Some("object")
            && let Some(t) = obj.get("type")
        {
            residual.insert("type".into(), t.clone());
        }
        if override_required {
            residual.insert(
                "required".into(),
                Value::Array(
                    required
                        .iter()
                        .map(|r| Value::String((*r).to_owned()))
                        .collect(),
                ),
            );
        }
        if let Some(ext) = extend_attr(&residual, cx.root) {
            container.push(ext);
        }
        let text = description_of(obj).unwrap_or_else(|| {
            let (tool, side) = cx.scope.split_once('/').unwrap_or((&cx.scope, "args"));
            match side {
                "result" if name == format!("{}Result", cx.pascal) => {
                    format!("The result of the `{tool}` tool.")
                }
                "result" => format!("Part of the result of the `{tool}` tool."),
                _ if name == format!("{}Args", cx.pascal) => {
                    format!("The arguments of the `{tool}` tool.")
                }
                _ => format!("Part of the arguments of the `{tool}` tool."),
            }
        });
        let doc = doc_attrs(Some(&text), None);
        let n = ident::ident(name);
        self.items.insert(
            (Section::Types, name.to_owned()),
            quote! {
                #doc
                #[derive(::std::clone::Clone, ::std::fmt::Debug, ::std::cmp::PartialEq, ::serde::Serialize, ::serde::Deserialize, ::schemars::JsonSchema)]
                #(#container)*
                pub struct #n {
                    #(#fields)*
                }
            },
        );
        Ok(())
    }

    fn enum_item(&mut self, name: &str, values: &[String], doc: Option<&str>) {
        let mut variants = Namespace::new(Case::Pascal);
        let vs = values.iter().map(|v| {
            let vi = ident::ident(&variants.claim(&ident::pascal(v)));
            let vdoc = format!(" `{v}`.");
            quote! { #[doc = #vdoc] #[serde(rename = #v)] #vi, }
        });
        let vs: Vec<TokenStream> = vs.collect();
        let listed = values
            .iter()
            .map(|v| format!("`{v}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let fallback = format!("One of {listed}.");
        let doc = doc_attrs(Some(doc.unwrap_or(&fallback)), None);
        let n = ident::ident(name);
        self.items.insert(
            (Section::Types, name.to_owned()),
            quote! {
                #doc
                #[derive(::std::clone::Clone, ::std::marker::Copy, ::std::fmt::Debug, ::std::cmp::PartialEq, ::std::cmp::Eq, ::std::hash::Hash, ::serde::Serialize, ::serde::Deserialize, ::schemars::JsonSchema)]
                #[allow(clippy::enum_variant_names)]
                pub enum #n {
                    #(#vs)*
                }
            },
        );
    }

    /// Maps one subschema, refusing past [`MAX_TYPE_DEPTH`] levels of them.
    fn map(&mut self, cx: &ToolCx<'_>, schema: &Value, hint: &str) -> Result<Mapped, EmitError> {
        if self.depth >= MAX_TYPE_DEPTH {
            return Err(EmitError::TooDeep {
                scope: cx.scope.clone(),
                limit: MAX_TYPE_DEPTH,
            });
        }
        self.depth += 1;
        let out = self.map_node(cx, schema, hint);
        self.depth -= 1;
        out
    }

    fn map_node(
        &mut self,
        cx: &ToolCx<'_>,
        schema: &Value,
        hint: &str,
    ) -> Result<Mapped, EmitError> {
        let obj = match schema {
            Value::Bool(true) => return Ok(plain(RustType::Value, Map::new())),
            Value::Object(obj) => obj,
            other => {
                let mut residual = Map::new();
                if *other == Value::Bool(false) {
                    residual.insert("not".into(), Value::Object(Map::new()));
                }
                return Ok(any(residual, "a schema that accepts nothing"));
            }
        };
        let residual_without = |consumed: &[&str]| -> Map<String, Value> {
            obj.iter()
                .filter(|(k, _)| !is_documentation(k) && !consumed.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        // A local reference.
        if let Some(Value::String(reference)) = obj.get("$ref")
            && let Some(ptr) = reference.strip_prefix('#')
        {
            let Some(target) = cx.root.pointer(ptr) else {
                return Ok(any(residual_without(&[]), "an unresolved `$ref`"));
            };
            let key = (cx.scope.clone(), reference.clone());
            if let Some(t) = target
                .as_object()
                .filter(|t| is_struct_like(t) || string_enum(t).is_some())
            {
                let recursive = self.in_progress.contains(&key);
                let name = match self.defs.get(&key) {
                    Some(n) => n.clone(),
                    None => {
                        let seg = ptr.rsplit('/').next().unwrap_or("Def");
                        let name =
                            self.names
                                .claim(&format!("{}{}", cx.pascal, ident::pascal(seg)));
                        self.defs.insert(key.clone(), name.clone());
                        self.in_progress.push(key.clone());
                        if let Some(values) = string_enum(t) {
                            self.enum_item(&name, &values, description_of(t).as_deref());
                        } else {
                            self.struct_item(cx, &name, &name, t)?;
                        }
                        self.in_progress.retain(|k| *k != key);
                        name
                    }
                };
                let ty = RustType::Named(name);
                let ty = if recursive {
                    RustType::Boxed(Box::new(ty))
                } else {
                    ty
                };
                return Ok(plain(ty, residual_without(&["$ref"])));
            }
            if self.in_progress.contains(&key) {
                return Ok(any(residual_without(&[]), "a recursive `$ref`"));
            }
            let mut merged = target.as_object().cloned().unwrap_or_default();
            for (k, v) in obj {
                if k != "$ref" {
                    merged.insert(k.clone(), v.clone());
                }
            }
            self.in_progress.push(key.clone());
            let out = self.map(cx, &Value::Object(merged), hint);
            self.in_progress.retain(|k| *k != key);
            return out;
        }
        let types = rewrite::types_of(obj);
        // `[T, "null"]`.
        if obj.get("type").is_some_and(Value::is_array)
            && types.len() == 2
            && types.contains(&"null")
        {
            let inner_type = types
                .iter()
                .find(|t| **t != "null")
                .copied()
                .unwrap_or("null");
            let mut inner = obj.clone();
            inner.insert("type".into(), Value::String(inner_type.to_owned()));
            if let Some(Value::Array(values)) = inner.get_mut("enum") {
                values.retain(|v| !v.is_null());
            }
            return self.nullable(cx, &Value::Object(inner), hint, obj);
        }
        // `anyOf: [T, {type: null}]`.
        if let Some(Value::Array(branches)) = obj.get("anyOf")
            && branches.len() == 2
            && !obj.contains_key("type")
            && let Some(null_at) = branches.iter().position(|b| {
                b.get("type") == Some(&Value::String("null".into()))
                    && b.as_object().is_some_and(|o| o.len() == 1)
            })
        {
            let mut inner = branches[1 - null_at]
                .as_object()
                .cloned()
                .unwrap_or_default();
            for (k, v) in obj {
                if k != "anyOf" && !inner.contains_key(k) {
                    inner.insert(k.clone(), v.clone());
                }
            }
            return self.nullable(cx, &Value::Object(inner), hint, obj);
        }
        if let Some(values) = string_enum(obj) {
            let name = self.claim(obj, hint);
            self.enum_item(&name, &values, None);
            return Ok(plain(
                RustType::Named(name),
                residual_without(&["type", "enum"]),
            ));
        }
        if obj.contains_key("enum")
            || obj.contains_key("const")
            || obj.contains_key("anyOf")
            || obj.contains_key("oneOf")
            || obj.contains_key("allOf")
            || obj.contains_key("not")
        {
            return Ok(any(residual_without(&[]), "a union or constant"));
        }
        let single = match obj.get("type") {
            Some(Value::String(t)) => t.as_str(),
            Some(_) => return Ok(any(residual_without(&[]), "several types")),
            None => return Ok(any(residual_without(&[]), "an untyped schema")),
        };
        let scalar = |ty| Ok(plain(ty, residual_without(&["type"])));
        match single {
            "string" => scalar(RustType::String),
            "integer" if non_negative(obj) => scalar(RustType::Unsigned),
            "integer" => scalar(RustType::Integer),
            "number" => scalar(RustType::Number),
            "boolean" => scalar(RustType::Bool),
            "null" => scalar(RustType::Unit),
            "array" => match obj.get("items") {
                Some(items @ (Value::Object(_) | Value::Bool(_))) => {
                    let m = self.map(cx, items, &derive(hint, singular))?;
                    let consumed: &[&str] = if m.residual.is_empty() && !m.nullable {
                        &["type", "items"]
                    } else {
                        &["type"]
                    };
                    Ok(Mapped {
                        ty: RustType::Vec(Box::new(unbox(m.ty))),
                        nullable: false,
                        residual: residual_without(consumed),
                        note: m.note,
                    })
                }
                _ => scalar(RustType::Vec(Box::new(RustType::Value))),
            },
            "object" => {
                if is_struct_like(obj) {
                    let name = self.claim(obj, hint);
                    self.struct_item(cx, &name, &name, obj)?;
                    return Ok(plain(RustType::Named(name), Map::new()));
                }
                match obj.get("additionalProperties") {
                    Some(ap @ Value::Object(_)) => {
                        let m = self.map(cx, ap, &derive(hint, |h| format!("{h}Value")))?;
                        let consumed: &[&str] = if m.residual.is_empty() && !m.nullable {
                            &["type", "additionalProperties"]
                        } else {
                            &["type"]
                        };
                        Ok(Mapped {
                            ty: RustType::Map(Box::new(unbox(m.ty))),
                            nullable: false,
                            residual: residual_without(consumed),
                            note: m.note,
                        })
                    }
                    _ => scalar(RustType::JsonMap),
                }
            }
            _ => Ok(any(residual_without(&[]), "an unknown type")),
        }
    }

    fn nullable(
        &mut self,
        cx: &ToolCx<'_>,
        inner: &Value,
        hint: &str,
        outer: &Map<String, Value>,
    ) -> Result<Mapped, EmitError> {
        let m = self.map(cx, inner, hint)?;
        if m.nullable || m.residual.contains_key("enum") || m.residual.contains_key("const") {
            // A residual `enum`/`const` beside `Option` would reject `null`: keep the whole schema.
            let residual = outer
                .iter()
                .filter(|(k, _)| !is_documentation(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            return Ok(any(residual, "a nullable constant"));
        }
        Ok(Mapped {
            ty: RustType::Option(Box::new(m.ty)),
            nullable: true,
            residual: m.residual,
            note: m.note,
        })
    }
}

/// A collection already gives a recursive type its indirection.
fn unbox(ty: RustType) -> RustType {
    match ty {
        RustType::Boxed(inner) => *inner,
        other => other,
    }
}

fn plain(ty: RustType, residual: Map<String, Value>) -> Mapped {
    Mapped {
        ty,
        nullable: false,
        residual,
        note: None,
    }
}

fn any(residual: Map<String, Value>, what: &str) -> Mapped {
    Mapped {
        ty: RustType::Value,
        nullable: false,
        residual,
        note: Some(format!(
            "Any JSON value in Rust: toolgate maps {what} to `serde_json::Value`; the schema still applies."
        )),
    }
}

/// Whether an object schema becomes a struct: it has properties or is closed.
fn is_struct_like(obj: &Map<String, Value>) -> bool {
    rewrite::types_of(obj) == ["object"]
        && (obj
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| !p.is_empty())
            || obj.get("additionalProperties") == Some(&Value::Bool(false)))
}

/// The values of a string enum (`type` absent or `string`), deduplicated.
fn string_enum(obj: &Map<String, Value>) -> Option<Vec<String>> {
    let values = obj.get("enum")?.as_array()?;
    let types = rewrite::types_of(obj);
    if !(types.is_empty() || types == ["string"]) || values.is_empty() {
        return None;
    }
    let mut out: Vec<String> = Vec::new();
    for v in values {
        let s = v.as_str()?.to_owned();
        if !out.contains(&s) {
            out.push(s);
        }
    }
    Some(out)
}

fn description(schema: &Value) -> Option<String> {
    schema.as_object().and_then(description_of)
}

fn description_of(obj: &Map<String, Value>) -> Option<String> {
    obj.get("description")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// `#[schemars(extend("k" = v, …))]` for residual keywords, with local `$ref`s inlined (the
/// derived schema has its own `$defs`).
fn extend_attr(residual: &Map<String, Value>, root: &Value) -> Option<TokenStream> {
    if residual.is_empty() {
        return None;
    }
    let inlined = if residual.values().any(contains_ref) {
        // Inline against the tool's definitions, with the residual as the schema node itself so
        // that every keyword is walked as what it is.
        let mut node = residual.clone();
        for k in ["$defs", "definitions"] {
            if let Some(d) = root.get(k) {
                node.insert(k.into(), d.clone());
            }
        }
        let mut node = Value::Object(node);
        rewrite::inline_refs(&mut node);
        node.as_object().cloned().unwrap_or_default()
    } else {
        residual.clone()
    };
    let pairs = residual.keys().map(|k| {
        let v = json_tokens(inlined.get(k).unwrap_or(&Value::Null));
        quote!(#k = #v)
    });
    Some(quote!(#[schemars(extend(#(#pairs),*))]))
}

fn contains_ref(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.contains_key("$ref") || m.values().any(contains_ref),
        Value::Array(a) => a.iter().any(contains_ref),
        _ => false,
    }
}

/// Applies `f` to each alternative of a hint (`a|b`).
fn derive(hint: &str, f: impl Fn(&str) -> String) -> String {
    hint.split('|').map(f).collect::<Vec<_>>().join("|")
}

/// The name of one element of an array named `plural`: `Items` → `Item`, `Entries` → `Entry`,
/// `Legs` → `Leg`; a name that does not look plural gets `Item`.
fn singular(plural: &str) -> String {
    if let Some(stem) = plural.strip_suffix("ies") {
        format!("{stem}y")
    } else if plural.ends_with("ss") || plural.ends_with("us") || !plural.ends_with('s') {
        format!("{plural}Item")
    } else {
        plural[..plural.len() - 1].to_owned()
    }
}

/// Whether an integer schema's `minimum` (or `exclusiveMinimum`) rules out negative values.
fn non_negative(obj: &Map<String, Value>) -> bool {
    let at_least = |k: &str, bound: f64| {
        obj.get(k)
            .and_then(Value::as_f64)
            .is_some_and(|m| m >= bound)
    };
    at_least("minimum", 0.0) || at_least("exclusiveMinimum", -1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_elements_are_named_in_the_singular() {
        assert_eq!(singular("LookupOrderItems"), "LookupOrderItem");
        assert_eq!(singular("ListDirEntries"), "ListDirEntry");
        assert_eq!(singular("PlanRouteLegs"), "PlanRouteLeg");
        assert_eq!(singular("ShippingAddress"), "ShippingAddressItem");
        assert_eq!(singular("OrderStatus"), "OrderStatusItem");
        assert_eq!(singular("Data"), "DataItem");
        assert_eq!(derive("AItems|ABItems", singular), "AItem|ABItem");
    }

    /// Array definitions `d0`…`d{count}` (not struct-like, so each `$ref` is followed in
    /// place), each `levels` `items` deep around a reference to the next, named from `p`.
    fn chained_arrays(count: usize, levels: usize) -> Value {
        let mut defs = Map::new();
        for i in 0..=count {
            let mut body = if i < count {
                serde_json::json!({"$ref": format!("#/$defs/d{}", i + 1)})
            } else {
                serde_json::json!({"type": "string"})
            };
            for _ in 0..levels {
                body = serde_json::json!({"type": "array", "items": body});
            }
            defs.insert(format!("d{i}"), body);
        }
        serde_json::json!({"type": "object", "properties": {"p": {"$ref": "#/$defs/d0"}}, "$defs": defs})
    }

    fn map_args(schema: &Value) -> Result<RustType, EmitError> {
        let mut space = TypeSpace::new(&["DeepArgs".into()]);
        let cx = ToolCx {
            pascal: "Deep".into(),
            scope: "deep/args".into(),
            root: schema,
        };
        space.root_struct(&cx, "DeepArgs", "Deep", schema)
    }

    /// 100 definitions of 30 levels each, followed, would be 3,000 levels of `map`: it
    /// overflowed the 2 MiB stack `build` maps on. It is refused at the limit, on such a stack.
    #[test]
    fn a_chain_of_definitions_past_the_depth_limit_is_an_error() {
        let schema = chained_arrays(100, 30);
        let got = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || map_args(&schema).map(|_| ()).map_err(|e| e.to_string()))
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(
            got,
            Err(format!(
                "rust: the schema `deep/args` nests deeper than {MAX_TYPE_DEPTH} subschemas once \
                 its `$ref`s are followed; flatten the chain of definitions"
            ))
        );
        // Within the limit, the same shape maps.
        assert!(map_args(&chained_arrays(2, 10)).is_ok());
    }

    fn names(space: &TypeSpace) -> Vec<String> {
        space.items.keys().map(|(_, n)| n.clone()).collect()
    }

    #[test]
    fn types_are_named_by_title_then_by_the_shortest_free_path() {
        let status = serde_json::json!({"type": "string", "enum": ["open", "closed"]});
        let args = serde_json::json!({"type": "object", "properties": {
            "status": status,
            "lines": {"type": "array", "items": {"title": "order line", "type": "object",
                "properties": {"sku": {"type": "string"}}}},
        }});
        let result = serde_json::json!({"type": "object", "properties": {
            "status": status,
            "items": {"type": "array", "items": {"type": "object",
                "properties": {"sku": {"type": "string"}}}},
        }});
        let mut space = TypeSpace::new(&["LookupOrderArgs".into(), "LookupOrderResult".into()]);
        let cx = |scope: &str, root| ToolCx {
            pascal: "LookupOrder".into(),
            scope: scope.into(),
            root,
        };
        space
            .root_struct(
                &cx("lookup_order/args", &args),
                "LookupOrderArgs",
                "LookupOrder",
                &args,
            )
            .unwrap();
        space
            .root_alias(
                &cx("lookup_order/result", &result),
                "LookupOrderResult",
                Some(&result),
            )
            .unwrap();
        assert_eq!(
            names(&space),
            [
                "LookupOrderArgs",
                "LookupOrderItem",
                "LookupOrderResult",
                "LookupOrderResultStatus",
                "LookupOrderStatus",
                "OrderLine",
            ]
        );
    }

    #[test]
    fn a_non_negative_minimum_makes_an_unsigned_integer() {
        let obj = |v: Value| v.as_object().cloned().unwrap();
        assert!(non_negative(&obj(serde_json::json!({"minimum": 0}))));
        assert!(non_negative(&obj(serde_json::json!({"minimum": 1}))));
        assert!(non_negative(&obj(
            serde_json::json!({"exclusiveMinimum": -1})
        )));
        assert!(!non_negative(&obj(serde_json::json!({"minimum": -1}))));
        assert!(!non_negative(&obj(serde_json::json!({}))));
    }
}
