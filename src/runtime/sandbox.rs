//! The process sandbox as an embedding program sees it: what this kernel offers
//! ([`probe`]), the protections a result names ([`Protection`]), the command executor
//! (to run it against another kernel's features, or with another shim), and the exec shim's
//! entry point for a program that is its own shim ([`run_shim`] when `argv[1]` is
//! [`SHIM_ARG`]).

pub use super::exec::command::CommandExecutor;
#[cfg(feature = "mcp")]
pub use super::exec::mcp::{UpstreamSandbox, connect};
pub use super::exec::sandbox::probe::{
    CgroupSupport, KernelFeatures, NamespaceSupport, PidsController, probe,
};
pub use super::exec::sandbox::walk::{Found, walk};
pub use super::exec::sandbox::{Protection, SCOPE_ABI, SHIM_ARG, run_shim};
