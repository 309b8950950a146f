//! `TGE`: effect and safety consistency.

pub(crate) mod names;
