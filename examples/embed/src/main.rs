//! A support desk that embeds toolgate's runtime: the typed tools come from the generated crate
//! `support-tools` (`generated/rust`, written by `toolgate build`), the handlers below implement
//! them against an in-memory order ledger, and a scripted model's calls go through the governed
//! runtime — schema and CEL validation, the refund permission rules, a support lead who answers
//! approvals — before any handler runs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::json;
use support_tools::{
    Handlers, LookupOrder, LookupOrderArgs, LookupOrderItem, LookupOrderResult, LookupOrderStatus,
    RefundOrder, RefundOrderArgs, RefundOrderResult,
};
use tokio_util::sync::CancellationToken;
use toolgate::ir::ErrorType;
use toolgate::runtime::extend::{
    ApprovalFuture, ApprovalOutcome, ApprovalRequest, Approver, HandlerContext, HandlerError,
    TypedHandler,
};
use toolgate::runtime::{RuntimeBuilder, Session, ToolCall, ToolResult, ToolRuntime};

/// One order as the ledger keeps it.
#[derive(Clone, Debug)]
struct Order {
    customer: String,
    status: LookupOrderStatus,
    items: Vec<LookupOrderItem>,
    total_cents: u64,
    refunded_cents: u64,
}

/// The shop's books: orders by id, and every refund paid by the idempotency key of the call
/// that paid it.
#[derive(Debug, Default)]
struct Ledger {
    orders: HashMap<String, Order>,
    refunds: HashMap<String, RefundOrderResult>,
    refunds_paid: u32,
}

/// The handlers of both tools: cheap to clone, so each tool gets its own handle on one ledger.
#[derive(Clone, Debug, Default)]
struct OrderDesk {
    ledger: Arc<Mutex<Ledger>>,
}

impl OrderDesk {
    /// A desk with two orders to work on.
    fn with_sample_orders() -> Self {
        let item = |sku: &str, quantity| LookupOrderItem {
            sku: sku.to_owned(),
            quantity,
        };
        let mut ledger = Ledger::default();
        ledger.orders.insert(
            "ORD-1001".to_owned(),
            Order {
                customer: "Ada Lovelace".to_owned(),
                status: LookupOrderStatus::Delivered,
                items: vec![item("MUG-0001", 2)],
                total_cents: 2400,
                refunded_cents: 0,
            },
        );
        ledger.orders.insert(
            "ORD-1002".to_owned(),
            Order {
                customer: "Grace Hopper".to_owned(),
                status: LookupOrderStatus::Shipped,
                items: vec![item("KBD-0042", 1), item("CBL-0007", 2)],
                total_cents: 12900,
                refunded_cents: 0,
            },
        );
        OrderDesk {
            ledger: Arc::new(Mutex::new(ledger)),
        }
    }

    /// The ledger, locked for one handler call.
    fn ledger(&self) -> Result<MutexGuard<'_, Ledger>, HandlerError> {
        // A poisoned lock means a handler panicked halfway through a booking: report it rather
        // than trust books that may be half-written.
        self.ledger.lock().map_err(|_| {
            HandlerError::new(
                ErrorType::RuntimeException,
                "the order ledger is unavailable",
            )
        })
    }
}

/// The error for an order id the ledger does not know.
fn no_such_order(order_id: &str) -> HandlerError {
    HandlerError::new(
        ErrorType::ResourceNotFound,
        format!("there is no order {order_id}"),
    )
}

impl TypedHandler<LookupOrder> for OrderDesk {
    async fn call(
        &self,
        _ctx: HandlerContext,
        args: LookupOrderArgs,
    ) -> Result<LookupOrderResult, HandlerError> {
        let ledger = self.ledger()?;
        let order = ledger
            .orders
            .get(&args.order_id)
            .ok_or_else(|| no_such_order(&args.order_id))?;
        Ok(LookupOrderResult {
            order_id: args.order_id,
            customer: order.customer.clone(),
            status: order.status,
            items: order.items.clone(),
            total_cents: order.total_cents,
            refunded_cents: order.refunded_cents,
        })
    }
}

impl TypedHandler<RefundOrder> for OrderDesk {
    async fn call(
        &self,
        ctx: HandlerContext,
        args: RefundOrderArgs,
    ) -> Result<RefundOrderResult, HandlerError> {
        let mut ledger = self.ledger()?;
        // The key stays the same when the runtime retries or recovers this call: a refund already
        // paid under it is reported again, never paid twice.
        if let Some(paid) = ledger.refunds.get(&ctx.idempotency_key) {
            return Ok(paid.clone());
        }
        let order = ledger
            .orders
            .get_mut(&args.order_id)
            .ok_or_else(|| no_such_order(&args.order_id))?;
        // The contract cannot see the books, so the handler is what keeps refunds within what
        // was paid; the error type tells the model to look the order up again.
        let refundable = order.total_cents - order.refunded_cents;
        if args.amount_cents > refundable {
            return Err(HandlerError::new(
                ErrorType::PreconditionFailed,
                format!(
                    "{} has {refundable} cents left to refund, not {}",
                    args.order_id, args.amount_cents
                ),
            ));
        }
        order.refunded_cents += args.amount_cents;
        let remaining_cents = order.total_cents - order.refunded_cents;
        ledger.refunds_paid += 1;
        let refund = RefundOrderResult {
            refund_id: format!("R-{:04}", ledger.refunds_paid),
            order_id: args.order_id,
            refunded_cents: args.amount_cents,
            remaining_cents,
        };
        ledger.refunds.insert(ctx.idempotency_key, refund.clone());
        Ok(refund)
    }
}

/// The support lead who answers the `lead-approves` rule's asks: refunds up to 100.00.
#[derive(Debug)]
struct SupportLead;

/// The largest refund the lead approves without looking into it, in cents.
const LEAD_LIMIT_CENTS: u64 = 10_000;

impl Approver for SupportLead {
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a> {
        Box::pin(async move {
            // The arguments arrive as canonical JSON; reading them through the generated type
            // means the lead decides on the same fields the handler will get.
            let outcome = match serde_json::from_str::<RefundOrderArgs>(&request.arguments) {
                Ok(refund) if refund.amount_cents <= LEAD_LIMIT_CENTS => ApprovalOutcome::AllowOnce,
                Ok(_) => ApprovalOutcome::Deny {
                    reason: Some("Above what I approve; I will look into it myself.".to_owned()),
                },
                Err(_) => ApprovalOutcome::Deny {
                    reason: Some("I cannot read this request.".to_owned()),
                },
            };
            println!(
                "   [support lead asked about {} {}: {}]",
                request.call_id,
                request.arguments,
                outcome.as_str()
            );
            outcome
        })
    }
}

/// Runs one model turn and prints, for each call, what the model reads and the typed result.
async fn turn(
    runtime: &ToolRuntime,
    session: &Session,
    title: &str,
    calls: Vec<ToolCall>,
) -> Result<(), toolgate::runtime::EngineError> {
    println!(
        "== {title} (session {}, context {})",
        session.id(),
        session.context()
    );
    for c in &calls {
        println!("-> {} {} {}", c.call_id, c.name, c.arguments);
    }
    let results = runtime
        .execute(calls, session, CancellationToken::new())
        .await?;
    for r in &results {
        print_result(r);
    }
    println!();
    Ok(())
}

/// Prints what the model reads of one result, then the structured result as the generated type.
fn print_result(r: &ToolResult) {
    println!("<- {} reads:", r.call_id());
    for line in r.projection().text.lines() {
        println!("   | {line}");
    }
    match r.structured() {
        Some(value) => println!("   structured: {value}"),
        None => println!("   structured: none"),
    }
    // The harness's own view: the same result as the generated types.
    let Some(value) = r.structured().cloned() else {
        return;
    };
    let typed = match r.tool() {
        "lookup_order" => serde_json::from_value::<LookupOrderResult>(value).map(|o| {
            format!(
                "{} for {} ({:?}): {} cents paid, {} refunded",
                o.order_id, o.customer, o.status, o.total_cents, o.refunded_cents
            )
        }),
        "refund_order" => serde_json::from_value::<RefundOrderResult>(value).map(|refund| {
            format!(
                "{} paid {} cents back on {}, {} cents left",
                refund.refund_id, refund.refunded_cents, refund.order_id, refund.remaining_cents
            )
        }),
        _ => return,
    };
    match typed {
        Ok(text) => println!("   typed: {text}"),
        Err(e) => println!("   typed: does not match the generated type: {e}"),
    }
}

/// A call as the model would send it.
fn call(id: &str, tool: &str, arguments: serde_json::Value) -> ToolCall {
    ToolCall::new(id, tool, arguments)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let desk = OrderDesk::with_sample_orders();
    // One handler per `handler: rust` tool: leaving one out does not compile.
    let bindings = Handlers {
        lookup_order: desk.clone(),
        refund_order: desk,
    }
    .bind()?;
    // The project folder (toolgate.yaml's `workspace` and `state_dir` are relative to it): the
    // folder the harness is started in.
    let runtime = RuntimeBuilder::from_bindings(bindings, std::env::current_dir()?)
        .approver(SupportLead)
        .build()?;

    let chat = Session::new("desk-1", "support");
    turn(
        &runtime,
        &chat,
        "turn 1: the model guesses the id format",
        vec![call("c1", "lookup_order", json!({"order_id": "1001"}))],
    )
    .await?;
    turn(
        &runtime,
        &chat,
        "turn 2: it fixes the id",
        vec![call("c2", "lookup_order", json!({"order_id": "ORD-1001"}))],
    )
    .await?;
    turn(
        &runtime,
        &chat,
        "turn 3: refunds",
        vec![
            call(
                "c3",
                "refund_order",
                json!({"order_id": "ORD-1002", "amount_cents": 80000, "reason": "not_received"}),
            ),
            call(
                "c4",
                "refund_order",
                json!({"order_id": "ORD-1001", "amount_cents": 1500, "reason": "damaged"}),
            ),
            call(
                "c5",
                "refund_order",
                json!({"order_id": "ORD-1002", "amount_cents": 4000, "reason": "late"}),
            ),
            call(
                "c6",
                "refund_order",
                json!({"order_id": "ORD-1001", "amount_cents": 1500, "reason": "damaged"}),
            ),
            call(
                "c7",
                "refund_order",
                json!({"order_id": "ORD-1002", "amount_cents": 500, "reason": "other"}),
            ),
        ],
    )
    .await?;

    // The overnight batch has nobody to ask: the same kind of refund is refused, not queued.
    let batch = Session::new("batch-1", "batch");
    turn(
        &runtime,
        &batch,
        "turn 4: the overnight batch",
        vec![call(
            "c8",
            "refund_order",
            json!({"order_id": "ORD-1002", "amount_cents": 3000, "reason": "late"}),
        )],
    )
    .await?;
    Ok(())
}
