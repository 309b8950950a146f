//! The handler side of a generated crate: one type per `exec: {handler: rust}` tool naming its
//! arguments and result for toolgate's `TypedHandler`, the `Handlers` struct with one field per
//! tool (so a missing handler does not compile), and the error binding returns. The plumbing —
//! deserializing arguments, serializing results, the runtime's untyped handler — is toolgate's
//! (`toolgate::runtime::extend::typed`).

use proc_macro2::TokenStream;
use quote::quote;

use crate::emit::rust::ident;
use crate::emit::rust::types::{Section, TypeSpace};

/// Names one handler tool's generated items use.
pub struct HandlerTool {
    /// The tool name (as the model calls it).
    pub name: String,
    /// `<Tool>Args`.
    pub args: String,
    /// `<Tool>Result`.
    pub result: String,
    /// `<Tool>`: the type that names the tool (`TypedHandler<Tool>`).
    pub marker: String,
    /// The field of `Handlers` (snake case).
    pub field: String,
    /// The tool's description, for docs.
    pub description: String,
}

/// Adds the type naming one handler tool, with its [`TypedTool`] impl.
///
/// [`TypedTool`]: crate::runtime::extend::TypedTool
pub fn handler_items(space: &mut TypeSpace, t: &HandlerTool) {
    let name = &t.name;
    let args = ident::ident(&t.args);
    let result = ident::ident(&t.result);
    let marker = ident::ident(&t.marker);
    let first_line = t.description.lines().next().unwrap_or("").to_owned();
    let doc = format!(
        " The `{name}` tool (`exec: {{handler: rust}}`): implement `TypedHandler<{}>` to run it, and put the implementation in [`Handlers`].",
        t.marker
    );
    let summary = format!(" {first_line}");
    space.items.insert(
        (Section::Handlers, t.marker.clone()),
        quote! {
            #[doc = #doc]
            #[doc = ""]
            #[doc = #summary]
            #[derive(::std::clone::Clone, ::std::marker::Copy, ::std::fmt::Debug)]
            pub enum #marker {}

            impl ::toolgate::runtime::extend::TypedTool for #marker {
                const NAME: &'static str = #name;
                type Args = #args;
                type Output = #result;
            }
        },
    );
}

/// Adds `Tools`, `Handlers` and `ToolsError`.
pub fn builder_items(space: &mut TypeSpace, tools: &[HandlerTool]) {
    let params: Vec<syn::Ident> = tools
        .iter()
        .map(|t| ident::ident(&format!("{}Handler", t.marker)))
        .collect();
    let fields = tools.iter().zip(&params).map(|(t, p)| {
        let f = ident::ident(&t.field);
        let doc = format!(" Runs the `{}` tool.", t.name);
        quote!(#[doc = #doc] pub #f: #p,)
    });
    let bounds = tools.iter().zip(&params).map(|(t, p)| {
        let m = ident::ident(&t.marker);
        quote!(#p: ::toolgate::runtime::extend::TypedHandler<#m>)
    });
    let binds = tools.iter().map(|t| {
        let f = ident::ident(&t.field);
        let m = ident::ident(&t.marker);
        quote! {
            bindings.bind(
                <#m as ::toolgate::runtime::extend::TypedTool>::NAME,
                ::std::sync::Arc::new(::toolgate::runtime::extend::typed::<#m, _>(self.#f)),
            )?;
        }
    });
    let generics = if tools.is_empty() {
        quote!()
    } else {
        quote!(<#(#params),*>)
    };
    let impl_generics = if tools.is_empty() {
        quote!()
    } else {
        quote!(<#(#bounds),*>)
    };
    let binding = if tools.is_empty() {
        quote!(let bindings = ::toolgate::runtime::HandlerBindings::new(bundle);)
    } else {
        quote!(let mut bindings = ::toolgate::runtime::HandlerBindings::new(bundle);)
    };
    space.items.insert(
        (Section::Builder, "Tools".into()),
        quote! {
            #[doc = " The tools of this crate: the embedded bundle."]
            #[derive(::std::clone::Clone, ::std::marker::Copy, ::std::fmt::Debug, ::std::default::Default)]
            pub struct Tools;

            impl Tools {
                #[doc = " The embedded bundle, parsed and its content hash verified."]
                pub fn bundle() -> ::std::result::Result<::toolgate::ir::Bundle, ::toolgate::ir::BundleError> {
                    ::toolgate::ir::Bundle::from_json(BUNDLE_JSON)
                }

                #[doc = " Reads a provider's replies for these tools and writes its result messages: a reply in, the calls run by the runtime (the typed [`Handlers`] among them), the messages to append out (`ProviderAdapter::run`)."]
                pub fn provider(provider: ::toolgate::runtime::Provider) -> ::std::result::Result<::toolgate::runtime::ProviderAdapter, ::toolgate::ir::BundleError> {
                    let bundle = Self::bundle()?;
                    ::std::result::Result::Ok(::toolgate::runtime::ProviderAdapter::for_names(
                        provider,
                        bundle.tools.iter().map(|t| t.name.as_str()),
                    ))
                }
            }

            #[doc = " One handler per `handler: rust` tool: leaving one out does not compile."]
            #[derive(::std::clone::Clone, ::std::fmt::Debug, ::std::default::Default)]
            pub struct Handlers #generics {
                #(#fields)*
            }

            impl #impl_generics Handlers #generics {
                #[doc = " The embedded bundle with every handler bound, ready for the runtime (`RuntimeBuilder::from_bindings`)."]
                pub fn bind(self) -> ::std::result::Result<::toolgate::runtime::HandlerBindings, ToolsError> {
                    let bundle = ::toolgate::ir::Bundle::from_json(BUNDLE_JSON)?;
                    #binding
                    #(#binds)*
                    bindings.check_complete()?;
                    ::std::result::Result::Ok(bindings)
                }
            }

            #[doc = " Why [`Handlers::bind`] failed."]
            #[derive(::std::fmt::Debug)]
            #[non_exhaustive]
            pub enum ToolsError {
                #[doc = " The embedded bundle does not load (a toolgate version mismatch)."]
                Bundle(::toolgate::ir::BundleError),
                #[doc = " A handler could not be bound (the bundle and this code disagree)."]
                Bind(::toolgate::runtime::BindError),
            }

            impl ::std::fmt::Display for ToolsError {
                fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                    match self {
                        ToolsError::Bundle(e) => ::std::fmt::Display::fmt(e, f),
                        ToolsError::Bind(e) => ::std::fmt::Display::fmt(e, f),
                    }
                }
            }

            impl ::std::error::Error for ToolsError {
                fn source(&self) -> ::std::option::Option<&(dyn ::std::error::Error + 'static)> {
                    match self {
                        ToolsError::Bundle(e) => ::std::option::Option::Some(e),
                        ToolsError::Bind(e) => ::std::option::Option::Some(e),
                    }
                }
            }

            impl ::std::convert::From<::toolgate::ir::BundleError> for ToolsError {
                fn from(e: ::toolgate::ir::BundleError) -> Self {
                    ToolsError::Bundle(e)
                }
            }

            impl ::std::convert::From<::toolgate::runtime::BindError> for ToolsError {
                fn from(e: ::toolgate::runtime::BindError) -> Self {
                    ToolsError::Bind(e)
                }
            }
        },
    );
}

/// The constant holding the bundle's JSON.
pub fn bundle_const(source: TokenStream) -> TokenStream {
    quote! {
        #[doc = " The resolved contracts this crate was generated from (`bundle.json`)."]
        pub const BUNDLE_JSON: &str = #source;
    }
}
