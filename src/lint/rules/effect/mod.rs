//! `TGE`: effect and safety consistency.
