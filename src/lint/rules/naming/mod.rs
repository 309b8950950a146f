//! `TGN`: names and descriptions.
