//! Binds a typed handler to the `greet` contract compiled by build.rs, then calls it through the
//! untyped interface the runtime uses.

// A binary uses only part of the generated API (e.g. not `Tools::bundle`).
#[allow(dead_code)]
mod tools {
    include!(concat!(env!("OUT_DIR"), "/tools.rs"));
}

use toolgate::runtime::extend::{HandlerContext, HandlerError, TypedHandler};
use tools::{Greet, GreetArgs, GreetResult, Handlers};

struct Greeter;

impl TypedHandler<Greet> for Greeter {
    async fn call(
        &self,
        _ctx: HandlerContext,
        args: GreetArgs,
    ) -> Result<GreetResult, HandlerError> {
        let greeting = format!("Hello, {}!", args.name);
        Ok(GreetResult {
            greeting: if args.shout == Some(true) {
                greeting.to_uppercase()
            } else {
                greeting
            },
        })
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let bindings = Handlers { greet: Greeter }.bind()?;
    let handler = bindings.handler("greet").ok_or("greet is not bound")?;
    let ctx = HandlerContext {
        call_id: "call-1".into(),
        session_id: "session-1".into(),
        tool: "greet".into(),
        idempotency_key: "call-1".into(),
        attempt: 1,
        workspace: std::env::current_dir()?,
        cancel: tokio_util::sync::CancellationToken::new(),
    };
    let out = handler
        .call(ctx, serde_json::json!({"name": "Ada", "shout": true}))
        .await?;
    println!("{}", serde_json::to_string(&out.structured)?);
    Ok(())
}
