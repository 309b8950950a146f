//! Token helpers for generated code: [`RustType`] (a type as tokens and as the text a
//! `#[schemars(with = "…")]` needs), `#[doc]` attributes, and JSON values as `json!` literals.

use proc_macro2::TokenStream;
use quote::quote;
use serde_json::Value;

use crate::emit::rust::ident;

/// A Rust type, renderable as tokens and as the text a `#[schemars(with = "…")]` needs.
#[derive(Clone, Debug)]
pub enum RustType {
    /// A generated type.
    Named(String),
    /// `::std::string::String`.
    String,
    /// `i64`.
    Integer,
    /// `u64` (an integer whose `minimum` is 0 or more).
    Unsigned,
    /// `f64`.
    Number,
    /// `bool`.
    Bool,
    /// `()`.
    Unit,
    /// `::serde_json::Value`.
    Value,
    /// `::serde_json::Map<String, Value>`.
    JsonMap,
    /// `::std::vec::Vec<T>`.
    Vec(Box<RustType>),
    /// `::std::collections::BTreeMap<String, T>`.
    Map(Box<RustType>),
    /// `::std::option::Option<T>`.
    Option(Box<RustType>),
    /// `::std::boxed::Box<T>`.
    Boxed(Box<RustType>),
}

impl RustType {
    /// The type's tokens.
    pub fn tokens(&self) -> TokenStream {
        match self {
            RustType::Named(n) => {
                let i = ident::ident(n);
                quote!(#i)
            }
            RustType::String => quote!(::std::string::String),
            RustType::Integer => quote!(i64),
            RustType::Unsigned => quote!(u64),
            RustType::Number => quote!(f64),
            RustType::Bool => quote!(bool),
            RustType::Unit => quote!(()),
            RustType::Value => quote!(::serde_json::Value),
            RustType::JsonMap => {
                quote!(::serde_json::Map<::std::string::String, ::serde_json::Value>)
            }
            RustType::Vec(t) => {
                let t = t.tokens();
                quote!(::std::vec::Vec<#t>)
            }
            RustType::Map(t) => {
                let t = t.tokens();
                quote!(::std::collections::BTreeMap<::std::string::String, #t>)
            }
            RustType::Option(t) => {
                let t = t.tokens();
                quote!(::std::option::Option<#t>)
            }
            RustType::Boxed(t) => {
                let t = t.tokens();
                quote!(::std::boxed::Box<#t>)
            }
        }
    }

    /// The type as source text.
    pub fn text(&self) -> String {
        match self {
            RustType::Named(n) => n.clone(),
            RustType::String => "::std::string::String".into(),
            RustType::Integer => "i64".into(),
            RustType::Unsigned => "u64".into(),
            RustType::Number => "f64".into(),
            RustType::Bool => "bool".into(),
            RustType::Unit => "()".into(),
            RustType::Value => "::serde_json::Value".into(),
            RustType::JsonMap => {
                "::serde_json::Map<::std::string::String, ::serde_json::Value>".into()
            }
            RustType::Vec(t) => format!("::std::vec::Vec<{}>", t.text()),
            RustType::Map(t) => format!(
                "::std::collections::BTreeMap<::std::string::String, {}>",
                t.text()
            ),
            RustType::Option(t) => format!("::std::option::Option<{}>", t.text()),
            RustType::Boxed(t) => format!("::std::boxed::Box<{}>", t.text()),
        }
    }
}

/// `#[doc]` attributes, one per line with a leading space, from a description and a note.
pub fn doc_attrs(text: Option<&str>, note: Option<&str>) -> TokenStream {
    let mut lines: Vec<String> = Vec::new();
    if let Some(t) = text {
        lines.extend(t.lines().map(str::to_owned));
    }
    if let Some(n) = note {
        if !lines.is_empty() {
            lines.push(String::new());
        }
        lines.extend(n.lines().map(str::to_owned));
    }
    let attrs = lines.iter().map(|l| {
        let l = if l.is_empty() {
            String::new()
        } else {
            format!(" {l}")
        };
        quote!(#[doc = #l])
    });
    quote!(#(#attrs)*)
}

/// A JSON value as `json!` literal syntax.
pub fn json_tokens(v: &Value) -> TokenStream {
    match v {
        Value::Null => quote!(null),
        Value::Bool(b) => quote!(#b),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                let lit = proc_macro2::Literal::u64_unsuffixed(i.unsigned_abs());
                if i < 0 { quote!(-#lit) } else { quote!(#lit) }
            } else if let Some(u) = n.as_u64() {
                let lit = proc_macro2::Literal::u64_unsuffixed(u);
                quote!(#lit)
            } else {
                let f = n.as_f64().unwrap_or(0.0);
                let lit = proc_macro2::Literal::f64_unsuffixed(f.abs());
                if f < 0.0 { quote!(-#lit) } else { quote!(#lit) }
            }
        }
        Value::String(s) => quote!(#s),
        Value::Array(items) => {
            let items = items.iter().map(json_tokens);
            quote!([#(#items),*])
        }
        Value::Object(map) => {
            let pairs = map.iter().map(|(k, v)| {
                let v = json_tokens(v);
                quote!(#k: #v)
            });
            quote!({#(#pairs),*})
        }
    }
}
