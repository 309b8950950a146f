//! `TGV`: provider compatibility.
