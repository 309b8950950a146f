//! The handler side of a generated crate: one typed handler trait per `exec: {handler: rust}`
//! tool, one generic adapter to the runtime's `ToolHandler`, the `Tools` builder that binds
//! them to the embedded bundle, and the error it returns.

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
    /// `<Tool>Handler`.
    pub handler: String,
    /// `<Tool>Tool`, the [`adapter_items`] side of the tool.
    pub adapter: String,
    /// The builder method (snake case).
    pub method: String,
    /// The tool's description, for docs.
    pub description: String,
}

/// Adds the trait and adapter of one handler tool.
pub fn handler_items(space: &mut TypeSpace, t: &HandlerTool) {
    let name = &t.name;
    let args = ident::ident(&t.args);
    let result = ident::ident(&t.result);
    let handler = ident::ident(&t.handler);
    let adapter = ident::ident(&t.adapter);
    let trait_doc = format!(" Implements the `{name}` tool (`exec: {{handler: rust}}`).");
    let first_line = t.description.lines().next().unwrap_or("").to_owned();
    let summary = format!(" {first_line}");
    let call_doc = " Runs one call. The arguments already passed schema validation, the tool's `validate` rules and the permission decision.";
    space.items.insert(
        (Section::Handlers, t.handler.clone()),
        quote! {
            #[doc = #trait_doc]
            #[doc = ""]
            #[doc = #summary]
            pub trait #handler: ::std::marker::Send + ::std::marker::Sync + 'static {
                #[doc = #call_doc]
                fn call(
                    &self,
                    ctx: ::toolgate::runtime::extend::HandlerContext,
                    args: #args,
                ) -> impl ::std::future::Future<Output = ::std::result::Result<#result, ::toolgate::runtime::extend::HandlerError>> + ::std::marker::Send;
            }
        },
    );
    let tool_doc = format!(" The `{name}` tool for [`Adapter`].");
    space.items.insert(
        (Section::Handlers, t.adapter.clone()),
        quote! {
            #[doc = #tool_doc]
            struct #adapter<H>(H);

            impl<H: #handler> TypedTool for #adapter<H> {
                type Args = #args;
                type Output = #result;
                const NAME: &'static str = #name;

                fn run(
                    &self,
                    ctx: ::toolgate::runtime::extend::HandlerContext,
                    args: #args,
                ) -> impl ::std::future::Future<Output = ::std::result::Result<#result, ::toolgate::runtime::extend::HandlerError>> + ::std::marker::Send {
                    #handler::call(&self.0, ctx, args)
                }
            }
        },
    );
}

/// Adds the one adapter every handler tool goes through: arguments that do not deserialize
/// are `INVALID_ARGUMENTS`, the result becomes `HandlerOutput::structured`.
pub fn adapter_items(space: &mut TypeSpace) {
    space.items.insert(
        (Section::Handlers, "Adapter".into()),
        quote! {
            #[doc = " A handler tool's types and name, so that one [`Adapter`] serves them all."]
            trait TypedTool: ::std::marker::Send + ::std::marker::Sync + 'static {
                type Args: ::serde::de::DeserializeOwned;
                type Output: ::serde::Serialize;
                const NAME: &'static str;

                fn run(
                    &self,
                    ctx: ::toolgate::runtime::extend::HandlerContext,
                    args: Self::Args,
                ) -> impl ::std::future::Future<Output = ::std::result::Result<Self::Output, ::toolgate::runtime::extend::HandlerError>> + ::std::marker::Send;
            }

            #[doc = " Adapts a typed handler to the runtime's untyped [`::toolgate::runtime::extend::ToolHandler`]."]
            struct Adapter<T>(T);

            impl<T: TypedTool> ::toolgate::runtime::extend::ToolHandler for Adapter<T> {
                fn call<'a>(
                    &'a self,
                    ctx: ::toolgate::runtime::extend::HandlerContext,
                    args: ::serde_json::Value,
                ) -> ::toolgate::runtime::extend::HandlerFuture<'a> {
                    ::std::boxed::Box::pin(async move {
                        let args: T::Args = match ::serde_json::from_value(args) {
                            ::std::result::Result::Ok(a) => a,
                            ::std::result::Result::Err(e) => {
                                return ::std::result::Result::Err(::toolgate::runtime::extend::HandlerError::new(
                                    ::toolgate::ir::ErrorType::InvalidArguments,
                                    ::std::format!("the arguments of `{}` do not match its parameters: {}", T::NAME, e),
                                ));
                            }
                        };
                        let result = self.0.run(ctx, args).await?;
                        match ::serde_json::to_value(&result) {
                            ::std::result::Result::Ok(v) => ::std::result::Result::Ok(::toolgate::runtime::extend::HandlerOutput::structured(v)),
                            ::std::result::Result::Err(e) => ::std::result::Result::Err(::toolgate::runtime::extend::HandlerError::new(
                                ::toolgate::ir::ErrorType::RuntimeException,
                                ::std::format!("the result of `{}` cannot be serialized: {}", T::NAME, e),
                            )),
                        }
                    })
                }
            }
        },
    );
}

/// Adds `Tools`, `ToolsBuilder` and `ToolsError`.
pub fn builder_items(space: &mut TypeSpace, tools: &[HandlerTool]) {
    let fields = tools.iter().map(|t| {
        let m = ident::ident(&t.method);
        quote!(#m: ::std::option::Option<::std::sync::Arc<dyn ::toolgate::runtime::extend::ToolHandler>>,)
    });
    let methods = tools.iter().map(|t| {
        let m = ident::ident(&t.method);
        let handler = ident::ident(&t.handler);
        let adapter = ident::ident(&t.adapter);
        let doc = format!(" Binds the handler of the `{}` tool.", t.name);
        quote! {
            #[doc = #doc]
            pub fn #m(mut self, handler: impl #handler) -> Self {
                self.#m = ::std::option::Option::Some(::std::sync::Arc::new(Adapter(#adapter(handler))));
                self
            }
        }
    });
    let binds = tools.iter().map(|t| {
        let m = ident::ident(&t.method);
        let name = &t.name;
        quote! {
            if let ::std::option::Option::Some(h) = self.#m {
                bindings.bind(#name, h)?;
            }
        }
    });
    let binding = if tools.is_empty() {
        quote!(let bindings = ::toolgate::runtime::HandlerBindings::new(bundle);)
    } else {
        quote!(let mut bindings = ::toolgate::runtime::HandlerBindings::new(bundle);)
    };
    space.items.insert(
        (Section::Builder, "Tools".into()),
        quote! {
            #[doc = " The tools of this crate: the embedded bundle and a builder for its handlers."]
            #[derive(::std::clone::Clone, ::std::marker::Copy, ::std::fmt::Debug, ::std::default::Default)]
            pub struct Tools;

            impl Tools {
                #[doc = " A builder that binds one typed handler per `handler: rust` tool."]
                pub fn builder() -> ToolsBuilder {
                    ToolsBuilder::default()
                }

                #[doc = " The embedded bundle, parsed and its content hash verified."]
                pub fn bundle() -> ::std::result::Result<::toolgate::ir::Bundle, ::toolgate::ir::BundleError> {
                    ::toolgate::ir::Bundle::from_json(BUNDLE_JSON)
                }
            }

            #[doc = " Binds typed handlers; [`ToolsBuilder::build`] fails when one is missing."]
            #[derive(::std::default::Default)]
            pub struct ToolsBuilder {
                #(#fields)*
            }

            impl ToolsBuilder {
                #(#methods)*

                #[doc = " The bundle with every handler bound, ready for the runtime."]
                pub fn build(self) -> ::std::result::Result<::toolgate::runtime::HandlerBindings, ToolsError> {
                    let bundle = ::toolgate::ir::Bundle::from_json(BUNDLE_JSON)?;
                    #binding
                    #(#binds)*
                    bindings.check_complete()?;
                    ::std::result::Result::Ok(bindings)
                }
            }

            #[doc = " Why [`ToolsBuilder::build`] failed."]
            #[derive(::std::fmt::Debug)]
            #[non_exhaustive]
            pub enum ToolsError {
                #[doc = " The embedded bundle does not load (a toolgate version mismatch)."]
                Bundle(::toolgate::ir::BundleError),
                #[doc = " A handler could not be bound, or one is missing."]
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
