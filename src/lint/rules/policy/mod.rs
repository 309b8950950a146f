//! `TGP`: runtime policy completeness.

pub mod unused_suppression;
