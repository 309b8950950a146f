//! `TGN`: names and descriptions. A model picks a tool by its name and description and fills
//! arguments by theirs: both must be valid for every provider, distinct, and say enough.
//!
//! [`words`] splits identifiers and prose into the words these rules compare.

pub(crate) mod words;
