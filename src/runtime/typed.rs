//! Typed handlers: what a generated crate's handler traits run through. The arguments are
//! deserialized into the tool's `Args` type (a mismatch is INVALID_ARGUMENTS, naming the tool),
//! and the handler's typed result is serialized as the call's structured result (a failure is
//! RUNTIME_EXCEPTION). A generated crate declares one [`TypedTool`] per `handler: rust` tool and
//! binds the program's [`TypedHandler`]s with [`typed`].

use std::future::Future;
use std::marker::PhantomData;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::ir::ErrorType;
use crate::runtime::handler::{
    HandlerContext, HandlerError, HandlerFuture, HandlerOutput, ToolHandler,
};

/// A `handler: rust` tool's name and types, as a generated crate declares them.
pub trait TypedTool: Send + Sync + 'static {
    /// The tool's name, as the model calls it.
    const NAME: &'static str;
    /// Its arguments.
    type Args: DeserializeOwned + Send + 'static;
    /// Its result.
    type Output: Serialize + Send + 'static;
}

/// Runs calls of the tool `T` with typed arguments and result: what an embedding program
/// implements for each `handler: rust` tool of a generated crate. The arguments already passed
/// schema validation, the tool's `validate` rules and the permission decision.
pub trait TypedHandler<T: TypedTool>: Send + Sync + 'static {
    /// Runs one call.
    fn call(
        &self,
        ctx: HandlerContext,
        args: T::Args,
    ) -> impl Future<Output = Result<T::Output, HandlerError>> + Send;
}

/// A [`TypedHandler`] as the runtime's untyped [`ToolHandler`] (see [`typed`]).
pub struct Typed<T, H> {
    handler: H,
    tool: PhantomData<fn() -> T>,
}

impl<T, H> std::fmt::Debug for Typed<T, H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Typed").finish_non_exhaustive()
    }
}

/// The runtime's handler for the typed `handler` of tool `T`.
pub fn typed<T: TypedTool, H: TypedHandler<T>>(handler: H) -> Typed<T, H> {
    Typed {
        handler,
        tool: PhantomData,
    }
}

impl<T: TypedTool, H: TypedHandler<T>> ToolHandler for Typed<T, H> {
    fn call<'a>(&'a self, ctx: HandlerContext, args: serde_json::Value) -> HandlerFuture<'a> {
        Box::pin(async move {
            let args: T::Args = serde_json::from_value(args).map_err(|e| {
                HandlerError::new(
                    ErrorType::InvalidArguments,
                    format!(
                        "the arguments of `{}` do not match its parameters: {e}",
                        T::NAME
                    ),
                )
            })?;
            let result = self.handler.call(ctx, args).await?;
            serde_json::to_value(&result)
                .map(HandlerOutput::structured)
                .map_err(|e| {
                    HandlerError::new(
                        ErrorType::RuntimeException,
                        format!("the result of `{}` cannot be serialized: {e}", T::NAME),
                    )
                })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct Args {
        n: u64,
    }

    enum Double {}

    impl TypedTool for Double {
        const NAME: &'static str = "double";
        type Args = Args;
        type Output = u64;
    }

    struct Doubler;

    impl TypedHandler<Double> for Doubler {
        async fn call(&self, _ctx: HandlerContext, args: Args) -> Result<u64, HandlerError> {
            Ok(args.n * 2)
        }
    }

    fn ctx() -> HandlerContext {
        HandlerContext {
            call_id: "c".into(),
            session_id: "s".into(),
            tool: "double".into(),
            idempotency_key: "k".into(),
            attempt: 1,
            workspace: std::path::PathBuf::from("."),
            cancel: tokio_util::sync::CancellationToken::new(),
        }
    }

    #[tokio::test]
    async fn typed_arguments_in_a_structured_result_out() {
        let h = typed::<Double, _>(Doubler);
        let out = h.call(ctx(), serde_json::json!({"n": 21})).await.unwrap();
        assert_eq!(out, HandlerOutput::structured(serde_json::json!(42)));
        let e = h
            .call(ctx(), serde_json::json!({"n": -1}))
            .await
            .unwrap_err();
        assert_eq!(e.error_type, ErrorType::InvalidArguments);
        assert!(
            e.message.contains("the arguments of `double` do not match"),
            "{}",
            e.message
        );
    }
}
